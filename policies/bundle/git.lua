-- git.lua - git.push: agents push to their own branches only.
--
--   every ref under refs/heads/agent/        -> ALLOW
--   refs/heads/main or refs/heads/master     -> BLOCK PROTECTED_BRANCH
--   a ref under refs/tags/                   -> ESCALATE to "release"
--   any other ref                            -> BLOCK REF_NOT_ALLOWED
--   params.refs missing, empty, not an array of strings
--                                            -> BLOCK INVALID_PARAMS
-- The strictest answer over all refs wins. A ref containing ".." is never
-- treated as an agent branch or a tag.

local PROTECTED = {
  ["refs/heads/main"] = true,
  ["refs/heads/master"] = true,
}
local AGENT = "refs/heads/agent/"
local TAGS = "refs/tags/"

-- Is ref a name below prefix (something after it, no "..")?
local function under(ref, prefix)
  return starts_with(ref, prefix) and #ref > #prefix
    and not string.find(ref, "..", 1, true)
end

return function(intent)
  if intent.action ~= "git.push" then
    return nil
  end
  local refs = type(intent.params) == "table" and intent.params.refs or nil
  if type(refs) ~= "table" or #refs == 0 then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "params.refs must be a non-empty array of refs"}
  end
  local protected, other, tags = false, false, false
  for _, ref in ipairs(refs) do
    if type(ref) ~= "string" then
      return BLOCK{reason = "INVALID_PARAMS",
                   message = "params.refs must hold ref name strings"}
    end
    if PROTECTED[ref] then
      protected = true
    elseif under(ref, TAGS) then
      tags = true
    elseif not under(ref, AGENT) then
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
