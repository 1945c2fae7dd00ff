-- db_test.lua - cases for db.lua (db.write).
local function write(resource)
  return { action = "db.write", resource = resource,
           params = { statement = "UPDATE t SET x = 1" } }
end

return {
  { name = "staging write", intent = write("staging/orders"),
    expect = "ALLOW" },
  { name = "no prefix", intent = write("orders"), expect = "ALLOW" },
  { name = "prod look-alike", intent = write("production-copy/orders"),
    expect = "ALLOW" },
  { name = "prod write needs two DBAs", intent = write("prod/orders"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "prod in capitals", intent = write("PROD/orders"),
    expect = "ESCALATE", reasons = {"PRODUCTION_WRITE"} },
  { name = "resource not a string", intent = write(7),
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
}
