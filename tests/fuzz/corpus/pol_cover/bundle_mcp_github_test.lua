-- mcp_github_test.lua - cases for mcp_github.lua (mcp.github.*).
local function call(tool)
  return { action = "mcp.github." .. tool, resource = "mcp://github/" .. tool,
           params = { owner = "acme", repo = "app" } }
end

local function approved_by(intent, group)
  intent.approval = { approval_id = "a-1", groups = { group }, quorum = 1,
                      approvals = { { approver = "alice", groups = { group },
                                      comment = "", at = 0 } } }
  return intent
end

return {
  { name = "get_issue is a read", intent = call("get_issue"),
    expect = "ALLOW" },
  { name = "search_code is a read", intent = call("search_code"),
    expect = "ALLOW" },
  { name = "list_pull_requests is a read", intent = call("list_pull_requests"),
    expect = "ALLOW" },
  { name = "create_issue waits for security", intent = call("create_issue"),
    expect = "ESCALATE", reasons = { "MCP_GITHUB_WRITE" } },
  { name = "create_issue approved by security",
    intent = approved_by(call("create_issue"), "security"), expect = "ALLOW" },
  { name = "a merge waits for release", intent = call("merge_pull_request"),
    expect = "ESCALATE", reasons = { "MCP_GITHUB_RELEASE" } },
  { name = "a merge approved by security is not enough",
    intent = approved_by(call("merge_pull_request"), "security"),
    expect = "ESCALATE", reasons = { "MCP_GITHUB_RELEASE" } },
  { name = "a merge approved by release",
    intent = approved_by(call("merge_pull_request"), "release"),
    expect = "ALLOW" },
  { name = "delete_branch waits for release", intent = call("delete_branch"),
    expect = "ESCALATE", reasons = { "MCP_GITHUB_RELEASE" } },
  { name = "a name that only looks like a read",
    intent = call("getx_issue"),
    expect = "ESCALATE", reasons = { "MCP_GITHUB_WRITE" } },
}
