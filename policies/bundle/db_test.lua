-- db_test.lua - cases for db.lua (db.write).
local function write(resource)
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

return {
  { name = "staging write", intent = write("staging/orders"),
    expect = "ALLOW" },
  { name = "no prefix", intent = write("orders"), expect = "ALLOW" },
  { name = "prod look-alike", intent = write("production-copy/orders"),
    expect = "ALLOW" },
  { name = "prod write needs two DBAs", intent = write("prod/orders"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "prod with one DBA approval", intent = approvals(write("prod/o"), 1),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "prod with two DBA approvals",
    intent = approvals(write("prod/o"), 2), expect = "ALLOW" },
  { name = "prod in capitals", intent = write("PROD/orders"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "resource not a string", intent = write(7),
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
}
