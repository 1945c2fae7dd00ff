-- git.lua - git.push: agents push to their own branches only.
--
--   params holding anything but refs           -> BLOCK INVALID_PARAMS
--   params.refs missing, empty, not an array of strings
--                                              -> BLOCK INVALID_PARAMS
--   a ref git would not take as a plain name   -> BLOCK INVALID_REF
--   every ref under refs/heads/agent/          -> ALLOW
--   refs/heads/main or refs/heads/master       -> BLOCK PROTECTED_BRANCH
--   a ref under refs/tags/                     -> ESCALATE to "release"
--   any other ref                              -> BLOCK REF_NOT_ALLOWED
-- The strictest answer over all refs wins.
--
-- A plain name passes git_ref_valid (the rules of `git check-ref-format`:
-- no ":" that would make it a refspec, no "*" glob, no "..", "//", "@{",
-- "~", "^", "?", "[", "\", space or control byte -- NUL and newline
-- included, wherever they are --, no component starting with "." or
-- ending in ".lock", no trailing "." or "/") and clean_text (no invisible
-- or ill-formed characters), and holds no "+" (a forced update) and no
-- component starting with "-" (an option). The executor builds the
-- refspec itself; a param this policy does not read could change what it
-- does, so none is accepted.

local PROTECTED = {
  ["refs/heads/main"] = true,
  ["refs/heads/master"] = true,
}
local KNOWN_PARAMS = { refs = true }
local AGENT = "refs/heads/agent/"
local TAGS = "refs/tags/"

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

return function(intent)
  if intent.action ~= "git.push" then
    return nil
  end
  local params = intent.params
  local refs = type(params) == "table" and params.refs or nil
  if type(refs) ~= "table" or #refs == 0 then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "params.refs must be a non-empty array of refs"}
  end
  for key in pairs(params) do
    if not KNOWN_PARAMS[key] then
      return BLOCK{reason = "INVALID_PARAMS",
                   message = "params may hold only refs, not "
                     .. tostring(key)}
    end
  end
  local protected, other, tags = false, false, false
  for i, ref in ipairs(refs) do
    if type(ref) ~= "string" then
      return BLOCK{reason = "INVALID_PARAMS",
                   message = "params.refs must hold ref name strings"}
    end
    local why = bad_ref(ref)
    if why then
      return BLOCK{reason = "INVALID_REF",
                   message = "ref " .. i .. " is not a plain ref name: " .. why}
    end
    if PROTECTED[ref] then
      protected = true
    elseif starts_with(ref, TAGS) then
      tags = true
    elseif not starts_with(ref, AGENT) then
      other = true
    end
  end
  if protected then
    return BLOCK{reason = "PROTECTED_BRANCH",
                 message = "pushing to main or master needs a human"}
  end
  if other then
    return BLOCK{reason = "REF_NOT_ALLOWED",
                 message = "agents push only to refs/heads/agent/*"}
  end
  if tags then
    if approved(intent, "release") then
      return ALLOW
    end
    return ESCALATE{approvers = {"release"}, reason = "TAG_PUSH"}
  end
  return ALLOW
end
