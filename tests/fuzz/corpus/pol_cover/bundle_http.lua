-- http.lua - http.request: the resource is the URL the agent wants to call.
--
--   unparseable URL                         -> BLOCK INVALID_URL
--   params.url present and not the resource -> BLOCK INVALID_PARAMS
--   scheme other than http or https         -> BLOCK SCHEME_NOT_ALLOWED
--   userinfo (user:pw@ or anything@)        -> BLOCK USERINFO_NOT_ALLOWED
--   host is not a public destination (ip_is_private: every special-purpose
--   address block, IPv4 shorthands, local names, a single label), or a
--   cloud metadata name                     -> BLOCK PRIVATE_ADDRESS
--   host on ALLOWED_HOSTS, with its scheme and port
--                                           -> ALLOW
--   host on ALLOWED_HOSTS, another scheme or port
--                                           -> BLOCK PORT_NOT_ALLOWED
--   any other host                          -> ESCALATE to "security"
-- Names are not resolved here: a name that resolves to a private address
-- must be refused where the connection is made. parse_url refuses what
-- URL parsers read differently (backslashes, percent-encoded hosts,
-- numeric shorthands, spaces and control bytes).

-- host -> { scheme = port } it may be called on. An explicit port must be
-- the listed one (https://api.github.com:443/ passes, :22 does not).
local ALLOWED_HOSTS = {
  ["api.github.com"] = { https = 443 },
  ["api.stripe.com"] = { https = 443 },
  ["registry.npmjs.org"] = { https = 443 },
}

local METADATA_NAMES = {
  ["metadata"] = true,
  ["metadata.google.internal"] = true,
  ["instance-data"] = true,
  ["instance-data.ec2.internal"] = true,
}

return function(intent)
  if intent.action ~= "http.request" then
    return nil
  end
  local url = parse_url(intent.resource)
  if url == nil then
    return BLOCK{reason = "INVALID_URL",
                 message = "resource must be an absolute http(s) URL"}
  end
  local params = intent.params
  if type(params) == "table" and params.url ~= nil
      and params.url ~= intent.resource then
    return BLOCK{reason = "INVALID_PARAMS",
                 message = "params.url must be the resource"}
  end
  if url.scheme ~= "http" and url.scheme ~= "https" then
    return BLOCK{reason = "SCHEME_NOT_ALLOWED",
                 message = "only http and https requests are allowed"}
  end
  if url.userinfo ~= nil then
    return BLOCK{reason = "USERINFO_NOT_ALLOWED",
                 message = "URLs with a user name or password (user@host) "
                   .. "are refused"}
  end
  local host = url.host
  if ends_with(host, ".") then
    host = host:sub(1, -2)
  end
  if ip_is_private(host) or METADATA_NAMES[host] then
    return BLOCK{reason = "PRIVATE_ADDRESS",
                 message = "requests to internal addresses are refused"}
  end
  local origins = ALLOWED_HOSTS[host]
  if origins then
    if origins[url.scheme] == url.port then
      return ALLOW
    end
    local listed = {}
    for scheme, port in pairs(origins) do
      listed[#listed + 1] = scheme .. " on port " .. port
    end
    table.sort(listed)
    return BLOCK{reason = "PORT_NOT_ALLOWED",
                 message = host .. " is allowed only as "
                   .. table.concat(listed, " or ") .. ", not "
                   .. url.scheme .. " on port " .. url.port}
  end
  if approved(intent, "security") then
    return ALLOW
  end
  return ESCALATE{approvers = {"security"}, reason = "HOST_NOT_ALLOWLISTED"}
end
