-- quota.lua - every action: at most config.quota_per_minute intents per
-- principal per minute (600 when not configured).
--
--   more than the quota in the last 60 s -> BLOCK QUOTA_EXCEEDED
--   otherwise                            -> no opinion
-- Every evaluated intent counts, including ones another policy blocks.

local LIMIT = config.quota_per_minute or 600
if math.type(LIMIT) ~= "integer" or LIMIT < 1 then
  error("config.quota_per_minute must be a positive integer")
end

return function(intent)
  local hits = count("intents:" .. intent.principal, 60)
  if hits > LIMIT then
    return BLOCK{reason = "QUOTA_EXCEEDED",
                 message = "too many intents from this principal this minute"}
  end
  return nil
end
