-- db_test.lua - cases for db.lua (db.write).
local function write(resource)
  return { action = "db.write", resource = resource,
           params = { statement = "UPDATE t SET x = 1" } }
end

-- The intent as re-evaluated with n approvals from dba members (quorum 2).
local function approvals(intent, n)
  local list = {}
  for i = 1, n do
    list[i] = { approver = "dba" .. i, groups = { "dba" }, comment = "",
                at = 0 }
  end
  intent.approval = { approval_id = "a-2", groups = { "dba" }, quorum = 2,
                      approvals = list }
  return intent
end

-- A write to a resource that is not in canonical form.
local function refused(name, resource)
  return { name = name, intent = write(resource), expect = "BLOCK",
           reasons = {"NON_CANONICAL_RESOURCE"} }
end

return {
  { name = "staging write", intent = write("staging/orders"),
    expect = "ALLOW" },
  { name = "no prefix", intent = write("orders"), expect = "ALLOW" },
  { name = "prod look-alike", intent = write("production-copy/orders"),
    expect = "ALLOW" },
  { name = "UTF-8 letters are canonical, but not a plain database name",
    intent = write("caf\u{e9}/menu"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "prod write needs two DBAs", intent = write("prod/orders"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "prod with one DBA approval", intent = approvals(write("prod/o"), 1),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "prod with two DBA approvals",
    intent = approvals(write("prod/o"), 2), expect = "ALLOW" },
  { name = "prod in capitals", intent = write("PROD/orders"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "prod itself", intent = write("prod"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "Prod itself", intent = write("Prod"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  -- Spellings a database or a proxy may read as prod/ after trimming,
  -- dropping invisible characters or resolving segments.
  refused("a leading space", " prod/orders"),
  refused("a trailing space", "prod/orders "),
  refused("a space before the slash", "prod /orders"),
  refused("a leading no-break space", "\u{a0}prod/orders"),
  refused("an ideographic space", "prod/orders\u{3000}"),
  refused("a zero-width space", "\u{200b}prod/orders"),
  refused("a zero-width joiner inside", "pr\u{200d}od/orders"),
  refused("a soft hyphen", "pr\u{ad}od/orders"),
  refused("a byte order mark", "\u{feff}prod/orders"),
  refused("a word joiner", "prod\u{2060}/orders"),
  refused("a bidi override", "\u{202e}dorp/orders"),
  refused("a tag character", "prod\u{e0041}/orders"),
  refused("a variation selector", "prod\u{fe0f}/orders"),
  refused("a dot segment first", "./prod/orders"),
  refused("a dot segment inside", "staging/./orders"),
  refused("a dot-dot segment", "staging/../prod/orders"),
  refused("a leading slash", "/prod/orders"),
  refused("a double slash", "prod//orders"),
  refused("a trailing slash", "staging/"),
  refused("a tab", "prod\t/orders"),
  refused("a newline", "staging\nprod/orders"),
  refused("a C1 control", "\u{85}prod/orders"),
  refused("a line separator", "staging\u{2028}prod/orders"),
  { name = "resource not a string", intent = write(7),
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
  -- Attacks tried in review (issue 12).
  refused("a trailing dot segment", "staging/."),
  refused("a dot-dot segment last", "staging/.."),
  refused("a percent-encoded dot-dot segment", "staging/%2e%2e/prod/orders"),
  refused("a mixed percent-encoded dot-dot", "staging/.%2E/prod/orders"),
  refused("a percent-encoded dot segment", "%2e/prod/orders"),
  { name = "prod and a trailing slash in capitals", intent = write("PROD/"),
    expect = "BLOCK", reasons = {"NON_CANONICAL_RESOURCE"} },
  { name = "prod in mixed case", intent = write("pRoD/orders"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  -- A database name that is not plain ASCII may be prod to a collation
  -- (width- or accent-insensitive), a percent-decoder or another
  -- separator: the DBAs are asked.
  { name = "fullwidth prod",
    intent = write("\u{ff50}\u{ff52}\u{ff4f}\u{ff44}/orders"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "an accented prod", intent = write("pr\u{f4}d/orders"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "a combining accent", intent = write("pro\u{301}d/orders"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "a backslash separator", intent = write("prod\\orders"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "a trailing backslash", intent = write("prod\\"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "a dotted name", intent = write("prod.orders"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "a percent-encoded letter", intent = write("%70rod/orders"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "a percent-encoded slash", intent = write("prod%2forders"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "a Kelvin sign is not k", intent = write("\u{212a}v/x"),
    expect = "ESCALATE", reasons = {"DATABASE_NAME_NOT_PLAIN"} },
  { name = "UTF-8 below the database name",
    intent = write("staging/caf\u{e9}"), expect = "ALLOW" },
  { name = "two DBAs may approve a name that is not plain",
    intent = approvals(write("pr\u{f4}d/o"), 2), expect = "ALLOW" },
}
