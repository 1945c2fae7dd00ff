-- mcp_fs.lua - mcp.fs.TOOL: the reference filesystem MCP server
-- (@modelcontextprotocol/server-filesystem) registered as "fs" at the
-- executor's MCP gateway (docs/mcp.md), its path tools naming "/path" as
-- their resource in the registry ("tools": {"read_text_file": {"resource":
-- "/path"}, ...}).
--
--   a ".." component in the resource            -> BLOCK PATH_TRAVERSAL
--   a read: read_text_file, read_file, read_media_file,
--   read_multiple_files, list_directory, list_directory_with_sizes,
--   directory_tree, search_files, get_file_info, list_allowed_directories
--                                                -> ALLOW
--   a write: write_file, edit_file, create_directory, move_file
--                                                -> ESCALATE to "security"
--                                                   (MCP_FS_WRITE);
--                                                   ALLOW once approved
--   any other mcp.fs tool                        -> ESCALATE to "security"
--                                                   (MCP_TOOL_NOT_ALLOWLISTED)
--
-- What the server may touch at all is set by the operator, not here: its
-- directories on its command line and the sandbox's binds (the gateway
-- never passes the agent's roots on). This file decides which of those
-- touches need a human. The resource is the path the agent named; the
-- server resolves it (symlinks included) within its directories.

local READS = {
  read_text_file = true, read_file = true, read_media_file = true,
  read_multiple_files = true, list_directory = true,
  list_directory_with_sizes = true, directory_tree = true,
  search_files = true, get_file_info = true,
  list_allowed_directories = true,
}
local WRITES = {
  write_file = true, edit_file = true, create_directory = true,
  move_file = true,
}

-- 1 when path has a ".." component.
local function dotdot(path)
  local start = 1
  while true do
    local i = string.find(path, "/", start, true)
    local part = path:sub(start, (i or 0) - 1)
    if part == ".." then
      return true
    end
    if not i then
      return false
    end
    start = i + 1
  end
end

return function(intent)
  if not starts_with(intent.action, "mcp.fs.") then
    return nil
  end
  if type(intent.resource) == "string" and dotdot(intent.resource) then
    return BLOCK{reason = "PATH_TRAVERSAL"}
  end
  local tool = intent.action:sub(8)
  if READS[tool] then
    return ALLOW
  end
  if approved(intent, "security") then
    return ALLOW
  end
  if WRITES[tool] then
    return ESCALATE{approvers = {"security"}, reason = "MCP_FS_WRITE"}
  end
  return ESCALATE{approvers = {"security"},
                  reason = "MCP_TOOL_NOT_ALLOWLISTED"}
end
