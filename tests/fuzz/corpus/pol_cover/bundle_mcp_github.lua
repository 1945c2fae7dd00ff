-- mcp_github.lua - mcp.github.TOOL: a GitHub-style MCP server registered
-- as "github" at the executor's MCP gateway (docs/mcp.md), or reached as
-- mcp__github__TOOL through the Claude Code hook.
--
--   a read: get_*, list_*, search_*              -> ALLOW
--   merge_pull_request, or delete_* / *_delete   -> ESCALATE to "release"
--                                                   (MCP_GITHUB_RELEASE)
--   any other tool (create_*, update_*, push_files, add_*, ...: it
--   changes something someone else sees)         -> ESCALATE to "security"
--                                                   (MCP_GITHUB_WRITE)
--   approved by the group asked                  -> ALLOW
--
-- The tool name is all this reads: a server whose "get_" tool writes is
-- mis-described, and pinned definitions (docs/mcp.md) stop its
-- description from changing behind the operator's back. Narrow reads to
-- some repositories by naming the argument as the resource in the
-- registry ("tools": {"get_issue": {"resource": "/repo"}}) and checking
-- intent.resource here.

local function prefixed(tool, list)
  for _, p in ipairs(list) do
    if starts_with(tool, p) then
      return true
    end
  end
  return false
end

return function(intent)
  if not starts_with(intent.action, "mcp.github.") then
    return nil
  end
  local tool = intent.action:sub(12)
  if prefixed(tool, { "get_", "list_", "search_" }) then
    return ALLOW
  end
  if tool == "merge_pull_request" or starts_with(tool, "delete_") or
     string.find(tool, "_delete", 1, true) then
    if approved(intent, "release") then
      return ALLOW
    end
    return ESCALATE{approvers = {"release"}, reason = "MCP_GITHUB_RELEASE"}
  end
  if approved(intent, "security") then
    return ALLOW
  end
  return ESCALATE{approvers = {"security"}, reason = "MCP_GITHUB_WRITE"}
end
