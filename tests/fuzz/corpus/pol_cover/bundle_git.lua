-- git.lua - git.push and git.fetch through the executor's git gateway:
-- agents push to and delete their own branches only; reads are allowed.
--
-- git.push (resource = the repository alias; params.refs = the refs the
-- push creates or updates, params.delete = the refs it deletes):
--   params holding anything but refs and delete -> BLOCK INVALID_PARAMS
--   refs or delete present and not an array of strings, both absent or
--   empty, more than MAX_REFS names in all, or a name in both lists
--                                              -> BLOCK INVALID_PARAMS
--   a name git would not take as a plain ref   -> BLOCK INVALID_REF
--   refs/heads/main or refs/heads/master, pushed or deleted
--                                              -> BLOCK PROTECTED_BRANCH
--   a pushed or deleted ref outside refs/heads/agent/ and refs/tags/
--                                              -> BLOCK REF_NOT_ALLOWED
--   a deleted tag                              -> ESCALATE to "release"
--                                                 (TAG_DELETE)
--   a pushed tag                               -> ESCALATE to "release"
--                                                 (TAG_PUSH)
--   every ref under refs/heads/agent/          -> ALLOW
-- The strictest answer over all names wins (BLOCK PROTECTED_BRANCH, then
-- REF_NOT_ALLOWED, then ESCALATE); an escalation is ALLOWed once
-- "release" approved it.
--
-- git.fetch (clone, fetch, ls-remote; resource = the alias): params absent
-- or {} -> ALLOW; any param -> BLOCK INVALID_PARAMS (the executor reads
-- none, and one it might read one day must be judged first).
--
-- A plain name passes git_ref_valid (the rules of `git check-ref-format`:
-- no ":" that would make it a refspec, no "*" glob, no "..", "//", "@{",
-- "~", "^", "?", "[", "\", space or control byte -- NUL and newline
-- included, wherever they are --, no component starting with "." or
-- ending in ".lock", no trailing "." or "/") and clean_text (no invisible
-- or ill-formed characters), and holds no "+" (a forced update) and no
-- component starting with "-" (an option). The executor builds the
-- refspec itself and compares the pushed commands with these lists; a
-- param this policy does not read could change what it does, so none is
-- accepted.

local PROTECTED = {
  ["refs/heads/main"] = true,
  ["refs/heads/master"] = true,
}
local KNOWN_PARAMS = { refs = true, delete = true }
local AGENT = "refs/heads/agent/"
local TAGS = "refs/tags/"
-- Names in one push, refs and delete together: more than a push of one
-- task needs, few enough to check within the instruction budget.
local MAX_REFS = 256

-- Nil when ref is a plain ref name, else why not.
local function bad_ref(ref)
  local ok, why = git_ref_valid(ref)
  if not ok then
    return why
  end
  local clean, _, detail = clean_text(ref)
  if not clean then
    return detail
  end
  if string.find(ref, "+", 1, true) then
    return "a '+' (a forced update)"
  end
  if ref:byte(1) == 45 or string.find(ref, "/-", 1, true) then
    return "a component starting with '-'"
  end
  return nil
end

-- The number of names in list (nil: absent, 0), or nil and why when it is
-- not an array (a JSON object or null, a string, a table with other keys).
local function list_size(list, what)
  if list == nil then
    return 0
  end
  if type(list) ~= "table" then
    return nil, what .. " must be an array of ref names"
  end
  local n, keys = #list, 0
  if n > MAX_REFS then
    return nil, what .. " holds more than " .. MAX_REFS .. " names"
  end
  for key in pairs(list) do
    keys = keys + 1
    if math.type(key) ~= "integer" or key < 1 or key > n or keys > n then
      return nil, what .. " must be an array of ref names"
    end
  end
  return n
end

-- Check every name of list (what: "refs" or "delete"); nil or a verdict.
local function check_names(list, what, seen)
  for i = 1, #list do
    local ref = list[i]
    if type(ref) ~= "string" then
      return BLOCK{reason = "INVALID_PARAMS",
                   message = "params." .. what .. " must hold ref name strings"}
    end
    local why = bad_ref(ref)
    if why then
      return BLOCK{reason = "INVALID_REF",
                   message = what .. " " .. i .. " is not a plain ref name: "
                     .. why}
    end
    if seen[ref] and seen[ref] ~= what then
      return BLOCK{reason = "INVALID_PARAMS",
                   message = "a ref is both in params.refs and params.delete"}
    end
    seen[ref] = what
  end
  return nil
end

-- The shape of a push's params; returns refs, delete or nil and a verdict.
local function push_lists(params)
  if type(params) ~= "table" then
    return nil, nil, BLOCK{reason = "INVALID_PARAMS",
                           message = "params must hold refs or delete"}
  end
  for key in pairs(params) do
    if not KNOWN_PARAMS[key] then
      return nil, nil, BLOCK{reason = "INVALID_PARAMS",
                             message = "params may hold only refs and "
                               .. "delete, not " .. tostring(key)}
    end
  end
  local nr, why = list_size(params.refs, "params.refs")
  local nd, why_d = list_size(params.delete, "params.delete")
  why = why or why_d
  if not why and nr + nd == 0 then
    why = "params.refs or params.delete must name a ref"
  elseif not why and nr + nd > MAX_REFS then
    why = "a push names at most " .. MAX_REFS .. " refs"
  end
  if why then
    return nil, nil, BLOCK{reason = "INVALID_PARAMS", message = why}
  end
  return params.refs or {}, params.delete or {}
end

-- What one name asks for: "protected", "other", "tag" or nil (an agent
-- branch).
local function kind(ref, deleting)
  if PROTECTED[ref] then
    return "protected"
  elseif starts_with(ref, TAGS) then
    return deleting and "tag_delete" or "tag"
  elseif not starts_with(ref, AGENT) then
    return "other"
  end
  return nil
end

local function push(intent)
  local refs, delete, verdict = push_lists(intent.params)
  if verdict then
    return verdict
  end
  local seen = {}
  verdict = check_names(refs, "refs", seen) or
            check_names(delete, "delete", seen)
  if verdict then
    return verdict
  end
  local found = {}
  for i = 1, #refs do
    found[kind(refs[i], false) or "agent"] = true
  end
  for i = 1, #delete do
    found[kind(delete[i], true) or "agent"] = true
  end
  if found.protected then
    return BLOCK{reason = "PROTECTED_BRANCH",
                 message = "pushing to or deleting main or master needs a "
                   .. "human"}
  end
  if found.other then
    return BLOCK{reason = "REF_NOT_ALLOWED",
                 message = "agents push to and delete only refs/heads/agent/*"}
  end
  if (found.tag or found.tag_delete) and not approved(intent, "release") then
    return ESCALATE{approvers = {"release"},
                    reason = found.tag_delete and "TAG_DELETE" or "TAG_PUSH"}
  end
  return ALLOW
end

local function fetch(intent)
  local params = intent.params
  if params == nil then
    return ALLOW
  end
  if type(params) ~= "table" or next(params) ~= nil then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "git.fetch takes no params"}
  end
  return ALLOW
end

return function(intent)
  if intent.action == "git.push" then
    return push(intent)
  elseif intent.action == "git.fetch" then
    return fetch(intent)
  end
  return nil
end
