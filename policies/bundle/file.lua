-- file.lua - file.write and file.read (Claude Code's Write, Edit,
-- MultiEdit, NotebookEdit through `intentgate hook claude-code`; Read
-- when a mapping file maps it): agents work inside their project.
--
--   a ".." path component                     -> BLOCK PATH_TRAVERSAL
--   a sensitive path: a component .git, .ssh, .gnupg, .aws or .claude
--   (Claude Code's own settings and hooks), a component starting with
--   .env, ending with .pem, or starting with id_rsa, id_dsa, id_ecdsa,
--   id_ed25519 (any case); /etc or below     -> BLOCK SENSITIVE_PATH
--   a relative path (inside the project)      -> ALLOW
--   an absolute path below context.cwd (the session's directory as the
--   hook sent it; not "/")                    -> ALLOW
--   anything else (elsewhere, ~/...)          -> ESCALATE to "security"
--                                                (PATH_OUTSIDE_PROJECT);
--                                                ALLOW once approved
--   resource not a non-empty string           -> BLOCK INVALID_PARAMS
-- The resource is the path. Paths are compared as text: symlinks are not
-- resolved, and context.cwd is trusted as the agent's hook sent it.

local SENSITIVE_PARTS = {
  [".git"] = true, [".ssh"] = true, [".gnupg"] = true, [".aws"] = true,
  [".claude"] = true,
}
local KEY_PREFIXES = { "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519" }

-- The path split at "/" ("/a/b" -> "", "a", "b").
local function components(path)
  local out, start = {}, 1
  while true do
    local i = string.find(path, "/", start, true)
    if not i then
      out[#out + 1] = path:sub(start)
      return out
    end
    out[#out + 1] = path:sub(start, i - 1)
    start = i + 1
  end
end

local function has_dotdot(parts)
  for _, part in ipairs(parts) do
    if part == ".." then
      return true
    end
  end
  return false
end

local function sensitive(path, parts)
  if path == "/etc" or starts_with(path, "/etc/") then
    return true
  end
  for _, part in ipairs(parts) do
    local p = part:lower()
    if SENSITIVE_PARTS[p] or starts_with(p, ".env") or ends_with(p, ".pem") then
      return true
    end
    for _, key in ipairs(KEY_PREFIXES) do
      if starts_with(p, key) then
        return true
      end
    end
  end
  return false
end

-- Is the absolute path below cwd (an absolute directory other than "/")?
local function below(path, cwd)
  if type(cwd) ~= "string" or cwd:byte(1) ~= 47 or has_dotdot(components(cwd))
  then
    return false
  end
  if ends_with(cwd, "/") then
    cwd = cwd:sub(1, #cwd - 1)
  end
  return #cwd > 0 and starts_with(path, cwd .. "/") and #path > #cwd + 1
end

return function(intent)
  if intent.action ~= "file.write" and intent.action ~= "file.read" then
    return nil
  end
  local path = intent.resource
  if type(path) ~= "string" or #path == 0 then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "the resource must be the file's path"}
  end
  local parts = components(path)
  if has_dotdot(parts) then
    return BLOCK{reason = "PATH_TRAVERSAL",
                 message = "paths with a .. component are refused"}
  end
  if sensitive(path, parts) then
    return BLOCK{reason = "SENSITIVE_PATH",
                 message = "refused: " .. path .. " is a sensitive path"}
  end
  local first = path:byte(1)
  if first ~= 47 and first ~= 126 then -- not "/", not "~": relative
    return ALLOW
  end
  local ctx = intent.context
  if first == 47 and type(ctx) == "table" and below(path, ctx.cwd) then
    return ALLOW
  end
  if approved(intent, "security") then
    return ALLOW
  end
  return ESCALATE{approvers = {"security"}, reason = "PATH_OUTSIDE_PROJECT"}
end
