-- mcp_test.lua - cases for mcp.lua (mcp.*).
local function call(action, params)
  return { action = action, resource = "mcp__jira__create_issue",
           params = params or { title = "x" },
           context = { tool_name = "mcp__jira__create_issue" } }
end

-- The intent as re-evaluated after one approval by a member of group.
local function approved_by(intent, group)
  intent.approval = { approval_id = "a-1", groups = { group }, quorum = 1,
                      approvals = { { approver = "alice", groups = { group },
                                      comment = "", at = 0 } } }
  return intent
end

return {
  { name = "an MCP tool escalates", intent = call("mcp.jira.create_issue"),
    expect = "ESCALATE", reasons = { "MCP_TOOL_NOT_ALLOWLISTED" } },
  { name = "a read-looking tool escalates too (empty allowlist)",
    intent = call("mcp.jira.get_issue", { number = 1 }),
    expect = "ESCALATE", reasons = { "MCP_TOOL_NOT_ALLOWLISTED" } },
  { name = "approved by security",
    intent = approved_by(call("mcp.jira.create_issue"), "security"),
    expect = "ALLOW" },
  { name = "approved by the wrong group",
    intent = approved_by(call("mcp.jira.create_issue"), "finance"),
    expect = "ESCALATE", reasons = { "MCP_TOOL_NOT_ALLOWLISTED" } },
  { name = "not an MCP action", intent = call("mcpx.jira.get_issue"),
    expect = "BLOCK", reasons = { "NO_POLICY_MATCHED" } },
}
