-- quota_test.lua - cases for quota.lua (every action) and for intents no
-- policy has an opinion on. The counts follow config.quota_per_minute, so
-- the cases hold whatever quota the bundle is loaded with.
local LIMIT = config.quota_per_minute or 600
local KEY = "intents:test-agent"
local refund = { action = "payments.refund", params = { amount = 5 } }

return {
  { name = "first intent", intent = refund, expect = "ALLOW" },
  { name = "at the quota", intent = refund, expect = "ALLOW",
    counts = { [KEY] = LIMIT } },
  { name = "over quota", intent = refund, expect = "BLOCK",
    reasons = {"QUOTA_EXCEEDED"}, counts = { [KEY] = LIMIT + 1 } },
  { name = "quota is per principal",
    intent = { action = "payments.refund", principal = "agent:other",
               params = { amount = 5 } },
    expect = "ALLOW", counts = { [KEY] = LIMIT * 10 } },
  { name = "over quota beats an escalation",
    intent = { action = "db.write", resource = "prod/t" },
    expect = "BLOCK", reasons = {"QUOTA_EXCEEDED"},
    counts = { [KEY] = LIMIT + 1 } },
  { name = "unknown action", intent = { action = "email.send" },
    expect = "BLOCK", reasons = {"NO_POLICY_MATCHED"} },
  { name = "unknown action over quota", intent = { action = "email.send" },
    expect = "BLOCK", reasons = {"QUOTA_EXCEEDED"},
    counts = { [KEY] = LIMIT + 1 } },
}
