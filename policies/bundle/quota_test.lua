-- quota_test.lua - cases for quota.lua (every action) and for intents no
-- policy has an opinion on.
local refund = { action = "payments.refund", params = { amount = 5 } }

return {
  { name = "under quota", intent = refund, expect = "ALLOW",
    counts = { ["intents:test-agent"] = 600 } },
  { name = "over quota", intent = refund, expect = "BLOCK",
    reasons = {"QUOTA_EXCEEDED"},
    counts = { ["intents:test-agent"] = 601 } },
  { name = "quota is per principal",
    intent = { action = "payments.refund", principal = "agent:other",
               params = { amount = 5 } },
    expect = "ALLOW", counts = { ["intents:test-agent"] = 9999 } },
  { name = "over quota beats an escalation",
    intent = { action = "db.write", resource = "prod/t" },
    expect = "BLOCK", reasons = {"QUOTA_EXCEEDED"},
    counts = { ["intents:test-agent"] = 1000 } },
  { name = "unknown action", intent = { action = "email.send" },
    expect = "BLOCK", reasons = {"NO_POLICY_MATCHED"} },
  { name = "unknown action over quota", intent = { action = "email.send" },
    expect = "BLOCK", reasons = {"QUOTA_EXCEEDED"},
    counts = { ["intents:test-agent"] = 601 } },
}
