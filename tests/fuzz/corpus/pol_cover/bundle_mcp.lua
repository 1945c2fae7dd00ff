-- mcp.lua - mcp.SERVER.TOOL: MCP tool calls (Claude Code's mcp__SERVER__TOOL
-- through `intentgate hook claude-code`, or the executor's MCP gateway at
-- /mcp, docs/mcp.md; both lowercase the names). The gateway also submits
-- mcp.SERVER:resources.read (resource: the URI) and mcp.SERVER:prompts.get.
--
--   action on READ_ONLY                       -> ALLOW
--   mcp.fs.* and mcp.github.*                 -> left to mcp_fs.lua and
--                                                mcp_github.lua
--   any other mcp.* action                    -> ESCALATE to "security"
--                                                (MCP_TOOL_NOT_ALLOWLISTED);
--                                                ALLOW once approved
-- READ_ONLY starts empty: an MCP tool can do anything its server can, and
-- only its operator knows which are read-only. Add exact actions, e.g.
--   ["mcp.github.get_issue"] = true,
--   ["mcp.filesystem.read_file"] = true,
--   ["mcp.fs:resources.read"] = true,

local READ_ONLY = {
}

-- Servers with a file of their own (mcp_fs.lua, mcp_github.lua).
local OWN_FILE = { "mcp.fs.", "mcp.github." }

return function(intent)
  if not starts_with(intent.action, "mcp.") then
    return nil
  end
  for _, p in ipairs(OWN_FILE) do
    if starts_with(intent.action, p) then
      return nil
    end
  end
  if READ_ONLY[intent.action] then
    return ALLOW
  end
  if approved(intent, "security") then
    return ALLOW
  end
  return ESCALATE{approvers = {"security"},
                  reason = "MCP_TOOL_NOT_ALLOWLISTED"}
end
