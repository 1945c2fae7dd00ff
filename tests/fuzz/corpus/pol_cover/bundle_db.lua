-- db.lua - db.write: production writes need two DBAs.
--
--   resource not a string                     -> BLOCK INVALID_PARAMS
--   resource not in canonical form            -> BLOCK NON_CANONICAL_RESOURCE
--   resource "prod" or starting with "prod/" (any case)
--                                             -> ESCALATE to "dba",
--                                                quorum 2
--                                                (PRODUCTION_WRITE)
--   a database name (the first segment) not made of ASCII letters,
--   digits, "_" and "-"                      -> ESCALATE to "dba",
--                                                quorum 2
--                                                (DATABASE_NAME_NOT_PLAIN)
--   any other resource                        -> ALLOW
--
-- Canonical form (resource_canonical): no whitespace at the edge of a
-- "/"-separated segment, no invisible (format) or control character, valid
-- UTF-8, no empty, "." or ".." segment (nor "%2e", "%2e%2e" and their
-- mixes, which URL resolvers read as dots). Anything else could be
-- trimmed, stripped or resolved into "prod/..." by whatever runs the
-- write after this policy compared it: " prod/x", "\u{200b}prod/x",
-- "./prod/x", "x/%2e%2e/prod".
--
-- Only a plain database name is compared as text: a width- or
-- accent-insensitive collation takes "\u{ff50}\u{ff52}\u{ff4f}\u{ff44}"
-- (fullwidth) or "pr\u{f4}d" for prod, a percent-decoder "%70rod", and
-- "prod.orders" or "prod\\orders" name prod where "." or "\" separates.
-- Such a name is not refused, it is asked about like prod itself.

-- Is the first segment of resource ASCII letters, digits, "_" and "-"?
local byte, find = string.byte, string.find

local function plain_name(resource)
  local slash = find(resource, "/", 1, true)
  local last = slash and slash - 1 or #resource
  local bytes = { byte(resource, 1, last) } -- one call, not one per byte
  for i = 1, last do
    local b = bytes[i]
    local letter = (b >= 65 and b <= 90) or (b >= 97 and b <= 122)
    if not letter and not (b >= 48 and b <= 57) and b ~= 95 and b ~= 45 then
      return false
    end
  end
  return last > 0
end

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
  local reason
  if lower == "prod" or starts_with(lower, "prod/") then
    reason = "PRODUCTION_WRITE"
  elseif not plain_name(resource) then
    reason = "DATABASE_NAME_NOT_PLAIN"
  else
    return ALLOW
  end
  if approved(intent, "dba") then -- two DBAs approved this exact write
    return ALLOW
  end
  return ESCALATE{approvers = {"dba"}, quorum = 2, reason = reason}
end
