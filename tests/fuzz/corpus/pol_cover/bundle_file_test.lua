-- file_test.lua - cases for file.lua (file.write, file.read).
--
-- file.lua reads config.project_roots, and the PDP runs these tests with
-- its own [policy] settings before it takes the bundle, so the cases
-- depend on the setting:
--   - always: the cases that hold under any roots (blocks, relative and ~
--     paths, approvals, forged context on paths no root can hold);
--   - unset (`intentgate policy test`): every absolute path escalates;
--   - exactly FIXTURE (tests/unit/test_policy_bundle.c loads the bundle with it):
--     the ALLOW branch, each root, the edges of "strictly below", and a
--     forged context.cwd that changes nothing;
--   - any other value (an operator's): the cases that hold always.
local FIXTURE = "/home/dev/proj, /srv/app/"
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

local function allowed(name, intent)
  return { name = name, intent = intent, expect = "ALLOW" }
end

local function blocked(name, intent, reason)
  return { name = name, intent = intent, expect = "BLOCK",
           reasons = { reason } }
end

local function outside(name, intent)
  return { name = name, intent = intent, expect = "ESCALATE",
           reasons = { "PATH_OUTSIDE_PROJECT" } }
end

local cases = {
  -- Relative and home paths mean nothing without a directory the agent
  -- cannot choose: asked about, whatever the context says.
  outside("relative path", write("src/main.c", CWD)),
  -- A "." or empty component is never below a root, whatever the roots.
  outside("a ./ component, any roots", read("/tmp/./x")),
  outside("an empty component, any roots", read("/tmp//x")),
  outside("dot-relative path", write("./README.md", CWD)),
  outside("relative path with context.cwd = /", write("a.c", "/")),
  outside("home directory", write("~/notes.txt", CWD)),
  outside("another user's home", write("~root/x", CWD)),
  outside("approved by the wrong group",
          approved_by(write("src/a.c", CWD), "finance")),
  allowed("relative path approved by security",
          approved_by(write("src/a.c", CWD), "security")),
  allowed("home path approved by security",
          approved_by(write("~/notes.txt"), "security")),
  -- Blocks hold under any roots, approved or not.
  blocked("parent traversal", write("../other/a.c", CWD), "PATH_TRAVERSAL"),
  blocked("traversal below a root", write(CWD .. "/../../etc/x", CWD),
          "PATH_TRAVERSAL"),
  blocked("traversal at the end", write("src/..", CWD), "PATH_TRAVERSAL"),
  blocked("traversal in the middle", write("/srv/app/a/../../../root/x"),
          "PATH_TRAVERSAL"),
  blocked(".env", write(CWD .. "/.env", CWD), "SENSITIVE_PATH"),
  blocked(".env.local", write("config/.env.local"), "SENSITIVE_PATH"),
  blocked(".ENV in capitals", write("config/.ENV"), "SENSITIVE_PATH"),
  blocked(".envrc", write(".envrc"), "SENSITIVE_PATH"),
  blocked(".git/config", write(".git/config"), "SENSITIVE_PATH"),
  blocked(".git hooks below a root", write(CWD .. "/.git/hooks/pre-commit",
                                           CWD), "SENSITIVE_PATH"),
  blocked(".GIT in capitals", write(CWD .. "/.GIT/config"), "SENSITIVE_PATH"),
  blocked("a pem key", write("certs/server.pem"), "SENSITIVE_PATH"),
  blocked("id_rsa", write("keys/id_rsa"), "SENSITIVE_PATH"),
  blocked("id_ed25519.pub", write("id_ed25519.pub"), "SENSITIVE_PATH"),
  blocked("/etc", write("/etc/passwd", "/"), "SENSITIVE_PATH"),
  blocked("/etc itself", write("/etc", "/"), "SENSITIVE_PATH"),
  blocked("~/.ssh", write("~/.ssh/authorized_keys"), "SENSITIVE_PATH"),
  blocked(".ssh by absolute path", write("/home/dev/.ssh/config", "/home/dev"),
          "SENSITIVE_PATH"),
  blocked(".aws", write("/home/dev/.aws/credentials"), "SENSITIVE_PATH"),
  blocked(".gnupg", write("/home/dev/.gnupg/x"), "SENSITIVE_PATH"),
  blocked("Claude Code settings", write(CWD .. "/.claude/settings.json", CWD),
          "SENSITIVE_PATH"),
  blocked("Claude Code MCP servers", write(CWD .. "/.mcp.json", CWD),
          "SENSITIVE_PATH"),
  blocked("approval does not lift a sensitive path",
          approved_by(write("/etc/hosts", CWD), "security"), "SENSITIVE_PATH"),
  blocked("approval does not lift a traversal",
          approved_by(write("../x", CWD), "security"), "PATH_TRAVERSAL"),
  blocked("read .env", read(CWD .. "/.env"), "SENSITIVE_PATH"),
  blocked("empty path", write(""), "INVALID_PARAMS"),
  blocked("path not a string", write(7), "INVALID_PARAMS"),
  blocked("NUL in the path", write(CWD .. "/a\0/../../.bashrc"),
          "INVALID_PARAMS"),
  blocked("NUL at the end", write(CWD .. "/a.c\0"), "INVALID_PARAMS"),
  blocked("newline in the path", write(CWD .. "/a\n.c"), "INVALID_PARAMS"),
  blocked("escape in the path", write(CWD .. "/\27[2Ja.c"), "INVALID_PARAMS"),
  -- Invisible characters: some file systems drop them (HFS+ ignores
  -- U+200C in ".g\u{200c}it"), and they hide a name from the checks.
  blocked("a zero-width space before .env", write(CWD .. "/\u{200b}.env"),
          "NON_CANONICAL_RESOURCE"),
  blocked("a zero-width non-joiner in .git",
          write(CWD .. "/.g\u{200c}it/config"), "NON_CANONICAL_RESOURCE"),
  blocked("a byte order mark", write("\u{feff}/etc/passwd"),
          "NON_CANONICAL_RESOURCE"),
  blocked("a bidi override", write(CWD .. "/\u{202e}cod.exe"),
          "NON_CANONICAL_RESOURCE"),
  blocked("a C1 control", write(CWD .. "/a\u{9b}.c"), "NON_CANONICAL_RESOURCE"),
  blocked("invisible and approved",
          approved_by(write(CWD .. "/.g\u{200c}it/config"), "security"),
          "NON_CANONICAL_RESOURCE"),
  -- Some systems trim a name's edges (Windows drops a trailing space).
  { name = "a space ending a component", intent = write(CWD .. "/.git /x"),
    expect = "ESCALATE", reasons = { "NON_CANONICAL_RESOURCE" } },
  { name = "a space starting a component", intent = write(CWD .. "/ a.c"),
    expect = "ESCALATE", reasons = { "NON_CANONICAL_RESOURCE" } },
  { name = "a no-break space ending the path",
    intent = write(CWD .. "/a.c\u{a0}"),
    expect = "ESCALATE", reasons = { "NON_CANONICAL_RESOURCE" } },
  allowed("edge spaces, approved by security",
          approved_by(write(CWD .. "/ a.c"), "security")),
  blocked("params.path differs from the resource",
          { action = "file.write", resource = CWD .. "/a.c",
            params = { path = "/home/dev/.bashrc" } }, "INVALID_PARAMS"),
  { name = "other file actions are not this policy's",
    intent = { action = "file.delete", resource = "a.c" },
    expect = "BLOCK", reasons = { "NO_POLICY_MATCHED" } },
}

local function add(list)
  for _, c in ipairs(list) do
    cases[#cases + 1] = c
  end
end

if config.project_roots == nil then
  -- No roots: every absolute path is asked about, whatever cwd claims.
  add{
    outside("below the session's cwd", write(CWD .. "/src/a.c", CWD)),
    outside("read below the cwd", read(CWD .. "/Makefile")),
    outside("forged cwd = home", write("/home/user/.bashrc", "/home/user")),
    outside("forged cwd = /", write("/usr/bin/ls", "/")),
    outside("no context at all", { action = "file.write",
                                   resource = CWD .. "/a.c" }),
    allowed("approved by security", approved_by(write("/tmp/x", CWD),
                                                "security")),
  }
elseif config.project_roots == FIXTURE then
  add{
    allowed("below the first root", write(CWD .. "/src/a.c", CWD)),
    allowed("a file directly in a root", write(CWD .. "/Makefile")),
    allowed("below the second root (trailing / in the setting)",
            write("/srv/app/main.go")),
    allowed("read below a root", read(CWD .. "/Makefile")),
    allowed(".gitignore is not .git", write(CWD .. "/.gitignore")),
    allowed("a dotfile that is not ..", write(CWD .. "/..hidden")),
    allowed("UTF-8 and inner spaces", write(CWD .. "/caf\u{e9} menu.txt")),
    allowed("no context at all", { action = "file.write",
                                   resource = CWD .. "/a.c" }),
    -- context.cwd is the agent's: it changes nothing either way.
    allowed("below a root, context.cwd elsewhere", write(CWD .. "/a.c",
                                                         "/tmp")),
    allowed("below a root, context.cwd = /", write(CWD .. "/a.c", "/")),
    allowed("below a root, context not an object",
            { action = "file.write", resource = CWD .. "/a.c",
              context = { "x" } }),
    outside("forged cwd = home", write("/home/dev/.bashrc", "/home/dev")),
    outside("forged cwd = another home", write("/home/user/.bashrc",
                                               "/home/user")),
    outside("forged cwd = /", write("/usr/bin/ls", "/")),
    outside("forged cwd = the parent of a root",
            write("/home/dev/notes.txt", "/home/dev")),
    outside("forged cwd with a trailing slash",
            write("/tmp/x.sh", "/tmp/")),
    outside("a root itself", write(CWD)),
    outside("a root with a trailing slash", write(CWD .. "/")),
    outside("a root with /. ", write(CWD .. "/.")),
    outside("a sibling with the same prefix", write("/home/dev/project2/a",
                                                     CWD)),
    outside("a prefix of a root", write("/home/dev/pro")),
    outside("a root in capitals", write("/HOME/dev/proj/a.c")),
    outside("a double slash", write(CWD .. "//a.c")),
    outside("a double slash before the root", write("//home/dev/proj/a.c")),
    outside("a ./ component", write(CWD .. "/./a.c")),
    outside("a trailing slash", write(CWD .. "/src/")),
    outside("relative spelling of a root", write("home/dev/proj/a.c", "/")),
    outside("home spelling", write("~/proj/a.c", "/home/dev")),
    outside("elsewhere", write("/tmp/x.sh", CWD)),
    allowed("elsewhere, approved by security",
            approved_by(write("/tmp/x.sh", CWD), "security")),
  }
end

return cases
