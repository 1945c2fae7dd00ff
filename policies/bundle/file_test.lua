-- file_test.lua - cases for file.lua (file.write, file.read).
local CWD = "/home/dev/proj"

local function write(path, cwd)
  return { action = "file.write", resource = path,
           params = { path = path, content_bytes = 12 },
           context = { cwd = cwd, tool_name = "Write" } }
end

local function read(path)
  return { action = "file.read", resource = path, params = { path = path },
           context = { cwd = CWD } }
end

-- The intent as re-evaluated after one approval by a member of group.
local function approved_by(intent, group)
  intent.approval = { approval_id = "a-1", groups = { group }, quorum = 1,
                      approvals = { { approver = "alice", groups = { group },
                                      comment = "", at = 0 } } }
  return intent
end

local function blocked(name, intent, reason)
  return { name = name, intent = intent, expect = "BLOCK",
           reasons = { reason } }
end

local function outside(name, intent)
  return { name = name, intent = intent, expect = "ESCALATE",
           reasons = { "PATH_OUTSIDE_PROJECT" } }
end

return {
  { name = "relative path", intent = write("src/main.c"), expect = "ALLOW" },
  { name = "dot-relative path", intent = write("./README.md"),
    expect = "ALLOW" },
  { name = "absolute path below cwd", intent = write(CWD .. "/src/a.c", CWD),
    expect = "ALLOW" },
  { name = "cwd with a trailing slash",
    intent = write(CWD .. "/a.c", CWD .. "/"), expect = "ALLOW" },
  { name = ".gitignore is not .git", intent = write(".gitignore"),
    expect = "ALLOW" },
  { name = "read inside the project", intent = read(CWD .. "/Makefile"),
    expect = "ALLOW" },
  outside("absolute path without cwd", write("/home/dev/proj/a.c")),
  outside("absolute path elsewhere", write("/tmp/x.sh", CWD)),
  outside("a sibling with the same prefix", write("/home/dev/project2/a",
                                                   CWD)),
  outside("the cwd itself", write(CWD, CWD)),
  outside("cwd is the root", write("/usr/bin/ls", "/")),
  outside("relative cwd", write("/proj/a.c", "proj")),
  outside("home directory", write("~/notes.txt", CWD)),
  outside("approved by the wrong group",
          approved_by(write("/tmp/x", CWD), "finance")),
  { name = "approved by security", intent = approved_by(write("/tmp/x", CWD),
                                                        "security"),
    expect = "ALLOW" },
  blocked("parent traversal", write("../other/a.c", CWD), "PATH_TRAVERSAL"),
  blocked("traversal below cwd", write(CWD .. "/../../etc/x", CWD),
          "PATH_TRAVERSAL"),
  blocked("traversal at the end", write("src/..", CWD), "PATH_TRAVERSAL"),
  blocked(".env", write(CWD .. "/.env", CWD), "SENSITIVE_PATH"),
  blocked(".env.local", write("config/.env.local"), "SENSITIVE_PATH"),
  blocked(".ENV in capitals", write("config/.ENV"), "SENSITIVE_PATH"),
  blocked(".envrc", write(".envrc"), "SENSITIVE_PATH"),
  blocked(".git/config", write(".git/config"), "SENSITIVE_PATH"),
  blocked(".git hooks below cwd", write(CWD .. "/.git/hooks/pre-commit", CWD),
          "SENSITIVE_PATH"),
  blocked("a pem key", write("certs/server.pem"), "SENSITIVE_PATH"),
  blocked("id_rsa", write("keys/id_rsa"), "SENSITIVE_PATH"),
  blocked("id_ed25519.pub", write("id_ed25519.pub"), "SENSITIVE_PATH"),
  blocked("/etc", write("/etc/passwd", "/"), "SENSITIVE_PATH"),
  blocked("~/.ssh", write("~/.ssh/authorized_keys"), "SENSITIVE_PATH"),
  blocked(".ssh by absolute path", write("/home/dev/.ssh/config", "/home/dev"),
          "SENSITIVE_PATH"),
  blocked("Claude Code settings", write(CWD .. "/.claude/settings.json", CWD),
          "SENSITIVE_PATH"),
  blocked("approval does not lift a sensitive path",
          approved_by(write("/etc/hosts", CWD), "security"), "SENSITIVE_PATH"),
  blocked("read .env", read(CWD .. "/.env"), "SENSITIVE_PATH"),
  blocked("empty path", write(""), "INVALID_PARAMS"),
  blocked("path not a string", write(7), "INVALID_PARAMS"),
  { name = "other file actions are not this policy's",
    intent = { action = "file.delete", resource = "a.c" },
    expect = "BLOCK", reasons = { "NO_POLICY_MATCHED" } },
}
