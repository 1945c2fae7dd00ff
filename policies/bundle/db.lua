-- db.lua - db.write: production writes need two DBAs.
--
--   resource starting with "prod/" (any case) -> ESCALATE to "dba",
--                                                quorum 2
--   any other resource                        -> ALLOW
--   resource not a string                     -> BLOCK INVALID_PARAMS

return function(intent)
  if intent.action ~= "db.write" then
    return nil
  end
  local resource = intent.resource
  if type(resource) ~= "string" then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "resource must name the database object"}
  end
  if starts_with(resource:lower(), "prod/") then
    if approved(intent, "dba") then -- two DBAs approved this exact write
      return ALLOW
    end
    return ESCALATE{approvers = {"dba"}, quorum = 2,
                    reason = "PRODUCTION_WRITE"}
  end
  return ALLOW
end
