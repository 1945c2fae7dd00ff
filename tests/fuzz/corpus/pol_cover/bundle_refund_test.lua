-- refund_test.lua - cases for refund.lua (payments.refund).
-- The intent as re-evaluated after one approval by a member of group.
local function approved_by(intent, group)
  intent.approval = { approval_id = "a-1", groups = { group }, quorum = 1,
                      approvals = { { approver = "alice", groups = { group },
                                      comment = "", at = 0 } } }
  return intent
end

local function refund(amount)
  return { action = "payments.refund", resource = "orders/ord_1",
           params = { amount = amount, currency = "EUR" } }
end

return {
  { name = "small refund", intent = refund(42.5), expect = "ALLOW" },
  { name = "exactly 100", intent = refund(100), expect = "ALLOW" },
  { name = "one cent", intent = refund(0.01), expect = "ALLOW" },
  { name = "just over 100", intent = refund(100.01),
    expect = "ESCALATE", reasons = {"REFUND_NEEDS_APPROVAL"} },
  { name = "exactly 1000", intent = refund(1000),
    expect = "ESCALATE", reasons = {"REFUND_NEEDS_APPROVAL"} },
  { name = "approved by finance", intent = approved_by(refund(500), "finance"),
    expect = "ALLOW" },
  { name = "approved by the wrong group",
    intent = approved_by(refund(500), "security"),
    expect = "ESCALATE", reasons = {"REFUND_NEEDS_APPROVAL"} },
  { name = "approval does not lift the limit",
    intent = approved_by(refund(5000), "finance"),
    expect = "BLOCK", reasons = {"AMOUNT_OVER_LIMIT"} },
  { name = "over 1000", intent = refund(1000.5),
    expect = "BLOCK", reasons = {"AMOUNT_OVER_LIMIT"} },
  { name = "huge", intent = refund(1e12),
    expect = "BLOCK", reasons = {"AMOUNT_OVER_LIMIT"} },
  { name = "zero", intent = refund(0),
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
  { name = "negative", intent = refund(-5),
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
  { name = "string amount", intent = refund("50"),
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
  { name = "null amount", intent = refund(null),
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
  { name = "missing amount",
    intent = { action = "payments.refund", params = { currency = "EUR" } },
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
  { name = "params not an object",
    intent = { action = "payments.refund", params = {1, 2} },
    expect = "BLOCK", reasons = {"INVALID_PARAMS"} },
}
