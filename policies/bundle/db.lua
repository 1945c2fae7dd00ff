-- db.lua - db.write: production writes need two DBAs.
--
--   resource not a string                     -> BLOCK INVALID_PARAMS
--   resource not in canonical form            -> BLOCK NON_CANONICAL_RESOURCE
--   resource "prod" or starting with "prod/" (any case)
--                                             -> ESCALATE to "dba",
--                                                quorum 2
--   any other resource                        -> ALLOW
--
-- Canonical form (resource_canonical): no whitespace at the edge of a
-- "/"-separated segment, no invisible (format) or control character, valid
-- UTF-8, no empty, "." or ".." segment. Anything else could be trimmed,
-- stripped or resolved into "prod/..." by whatever runs the write after
-- this policy compared it: " prod/x", "\u{200b}prod/x", "./prod/x".

return function(intent)
  if intent.action ~= "db.write" then
    return nil
  end
  local resource = intent.resource
  if type(resource) ~= "string" then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "resource must name the database object"}
  end
  local canonical, _, why = resource_canonical(resource)
  if not canonical then
    return BLOCK{reason = "NON_CANONICAL_RESOURCE",
                 message = "resource is not in canonical form: " .. why}
  end
  local lower = resource:lower()
  if lower == "prod" or starts_with(lower, "prod/") then
    if approved(intent, "dba") then -- two DBAs approved this exact write
      return ALLOW
    end
    return ESCALATE{approvers = {"dba"}, quorum = 2,
                    reason = "PRODUCTION_WRITE"}
  end
  return ALLOW
end
