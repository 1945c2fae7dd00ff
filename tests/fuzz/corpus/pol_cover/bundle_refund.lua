-- refund.lua - payments.refund: small refunds pass, larger ones need
-- finance, the largest never go through an agent.
--
--   0 < params.amount <= 100     -> ALLOW
--   100 < params.amount <= 1000  -> ESCALATE to "finance"; ALLOW once
--                                   finance approved (intent.approval)
--   params.amount > 1000         -> BLOCK AMOUNT_OVER_LIMIT
--   amount missing, not a number, zero or negative
--                                -> BLOCK INVALID_PARAMS

local AUTO_LIMIT = 100
local APPROVAL_LIMIT = 1000

return function(intent)
  if intent.action ~= "payments.refund" then
    return nil
  end
  local amount = type(intent.params) == "table" and intent.params.amount
  if math.type(amount) == nil or amount ~= amount or amount <= 0 then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "params.amount must be a positive number"}
  end
  if amount <= AUTO_LIMIT then
    return ALLOW
  end
  if amount <= APPROVAL_LIMIT then
    if approved(intent, "finance") then
      return ALLOW -- re-evaluated after finance approved this exact intent
    end
    return ESCALATE{approvers = {"finance"}, reason = "REFUND_NEEDS_APPROVAL"}
  end
  return BLOCK{reason = "AMOUNT_OVER_LIMIT",
               message = "refunds over 1000 are not made by agents"}
end
