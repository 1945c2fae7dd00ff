-- mcp_fs_test.lua - cases for mcp_fs.lua (mcp.fs.*).
local function call(tool, path)
  return { action = "mcp.fs." .. tool, resource = path,
           params = { path = path } }
end

local function approved_by(intent, group)
  intent.approval = { approval_id = "a-1", groups = { group }, quorum = 1,
                      approvals = { { approver = "alice", groups = { group },
                                      comment = "", at = 0 } } }
  return intent
end

return {
  { name = "a read is allowed", intent = call("read_text_file", "/data/a.txt"),
    expect = "ALLOW" },
  { name = "listing is allowed",
    intent = call("list_directory", "/data"), expect = "ALLOW" },
  { name = "a write waits for security",
    intent = call("write_file", "/data/a.txt"),
    expect = "ESCALATE", reasons = { "MCP_FS_WRITE" } },
  { name = "a write approved by security",
    intent = approved_by(call("write_file", "/data/a.txt"), "security"),
    expect = "ALLOW" },
  { name = "dot-dot is blocked, read or write",
    intent = call("read_text_file", "/data/../etc/shadow"),
    expect = "BLOCK", reasons = { "PATH_TRAVERSAL" } },
  { name = "a trailing dot-dot is blocked",
    intent = call("list_directory", "/data/.."),
    expect = "BLOCK", reasons = { "PATH_TRAVERSAL" } },
  { name = "dot-dot inside a name is not a component",
    intent = call("read_text_file", "/data/a..b"), expect = "ALLOW" },
  { name = "an unknown fs tool waits",
    intent = call("chmod", "/data/a"),
    expect = "ESCALATE", reasons = { "MCP_TOOL_NOT_ALLOWLISTED" } },
}
