-- file.lua - file.write and file.read (Claude Code's Write, Edit,
-- MultiEdit, NotebookEdit through `intentgate hook claude-code`; Read
-- when a mapping file maps it): agents work inside the project
-- directories the operator configured.
--
--   resource not a non-empty string, or holding a control character, or
--   params.path present and not the resource -> BLOCK INVALID_PARAMS
--   a ".." path component                     -> BLOCK PATH_TRAVERSAL
--   an invisible (format) character, a C1 control or invalid UTF-8
--   (clean_text; HFS+ drops U+200C, so ".g\u{200c}it" is ".git")
--                                             -> BLOCK
--                                                NON_CANONICAL_RESOURCE
--   a sensitive path: a component .git, .ssh, .gnupg, .aws, .claude or
--   .mcp.json (Claude Code's own settings, hooks and MCP servers), a
--   component starting with .env, ending with .pem, or starting with
--   id_rsa, id_dsa, id_ecdsa, id_ed25519 (any case); /etc or below
--                                             -> BLOCK SENSITIVE_PATH
--   whitespace starting or ending a component (" a.c", ".git /x": some
--   systems trim it)                          -> ESCALATE to "security"
--                                                (NON_CANONICAL_RESOURCE);
--                                                ALLOW once approved
--   an absolute path strictly below one of config.project_roots, without
--   empty or "." components                   -> ALLOW
--   anything else: a relative path, ~/..., a path elsewhere, a root
--   itself, "/a//b", "/a/./b"                 -> ESCALATE to "security"
--                                                (PATH_OUTSIDE_PROJECT);
--                                                ALLOW once approved
--
-- The decision uses only the resource (the path) and the operator's
-- settings. intent.context (cwd, tool name, ...) is whatever the agent's
-- side sent -- a compromised agent sends cwd=/home/user and writes
-- ~/.bashrc -- so it is never read here. A relative path has no meaning
-- without a directory the agent cannot choose, so it is asked about.
--
-- config.project_roots (the PDP config's [policy] section) is a
-- comma-separated list of absolute directories, e.g.
--   project_roots = /home/dev/proj, /srv/app
-- Each must be absolute, not "/", without empty, "." or ".." components or
-- control characters (a trailing "/" is dropped); anything else stops the
-- bundle from loading. Unset or empty: no path is below a root, so every
-- path that is not blocked escalates.
--
-- Paths are compared as text: symlinks are not resolved (a symlink inside
-- a root that points elsewhere is followed by whoever writes), and the
-- comparison is case-sensitive.

local SENSITIVE_PARTS = {
  [".git"] = true, [".ssh"] = true, [".gnupg"] = true, [".aws"] = true,
  [".claude"] = true, [".mcp.json"] = true,
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

local function has_control(s)
  for i = 1, #s do
    local b = s:byte(i)
    if b < 32 or b == 127 then
      return true
    end
  end
  return false
end

-- Absolute, and no component after the leading "" is "", "." or "..".
local function canonical(path, parts)
  if path:byte(1) ~= 47 then -- "/"
    return false
  end
  for i = 2, #parts do
    local p = parts[i]
    if p == "" or p == "." or p == ".." then
      return false
    end
  end
  return true
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

local function trim(s)
  local i, j = 1, #s
  while i <= j and (s:byte(i) == 32 or s:byte(i) == 9) do
    i = i + 1
  end
  while j >= i and (s:byte(j) == 32 or s:byte(j) == 9) do
    j = j - 1
  end
  return s:sub(i, j)
end

-- config.project_roots as a list of "ROOT/" prefixes; raises on a bad
-- setting so the bundle does not load with roots it cannot honour.
local function project_roots(setting)
  if setting == nil or setting == "" then
    return {}
  end
  if type(setting) ~= "string" then
    error("config.project_roots must be absolute directories separated "
          .. "by commas")
  end
  local out = {}
  local start = 1
  while true do
    local comma = string.find(setting, ",", start, true)
    local root = trim(setting:sub(start, comma and comma - 1 or #setting))
    while #root > 1 and ends_with(root, "/") do
      root = root:sub(1, #root - 1)
    end
    if root == "/" or has_control(root)
        or not canonical(root, components(root)) then
      error("config.project_roots: entry " .. (#out + 1) .. " (\"" .. root
            .. "\") must be an absolute directory other than /, without "
            .. "empty, . or .. components")
    end
    out[#out + 1] = root .. "/"
    if not comma then
      return out
    end
    start = comma + 1
  end
end

local ROOTS = project_roots(config.project_roots)

local function below_a_root(path, parts)
  if not canonical(path, parts) then
    return false
  end
  for _, root in ipairs(ROOTS) do
    if starts_with(path, root) then
      return true
    end
  end
  return false
end

return function(intent)
  if intent.action ~= "file.write" and intent.action ~= "file.read" then
    return nil
  end
  local path = intent.resource
  if type(path) ~= "string" or #path == 0 or has_control(path) then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "the resource must be the file's path, without "
                   .. "control characters"}
  end
  local params = intent.params
  if type(params) == "table" and params.path ~= nil
      and params.path ~= path then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "params.path must be the resource"}
  end
  local parts = components(path)
  if has_dotdot(parts) then
    return BLOCK{reason = "PATH_TRAVERSAL",
                 message = "paths with a .. component are refused"}
  end
  local clean, _, detail = clean_text(path)
  if not clean then
    return BLOCK{reason = "NON_CANONICAL_RESOURCE",
                 message = "the path holds " .. detail}
  end
  if sensitive(path, parts) then
    return BLOCK{reason = "SENSITIVE_PATH",
                 message = "refused: " .. path .. " is a sensitive path"}
  end
  local relative = path:byte(1) == 47 and path:sub(2) or path
  local _, code, edge = resource_canonical(relative)
  if code == "EDGE_WHITESPACE" and not approved(intent, "security") then
    return ESCALATE{approvers = {"security"},
                    reason = "NON_CANONICAL_RESOURCE",
                    message = path .. ": " .. edge}
  end
  if below_a_root(path, parts) or approved(intent, "security") then
    return ALLOW
  end
  local why = #ROOTS == 0 and "no project_roots are configured"
    or "not an absolute path below a project root"
  return ESCALATE{approvers = {"security"}, reason = "PATH_OUTSIDE_PROJECT",
                  message = path .. ": " .. why}
end
