-- http.lua - http.request: the resource is the URL the agent wants to call.
--
--   unparseable URL                         -> BLOCK INVALID_URL
--   scheme other than http or https         -> BLOCK SCHEME_NOT_ALLOWED
--   host is a literal private, loopback, link-local or metadata address,
--   or localhost, or a cloud metadata name  -> BLOCK PRIVATE_ADDRESS
--   host on ALLOWED_HOSTS                   -> ALLOW
--   any other host                          -> ESCALATE to "security"
-- Names are not resolved here: a name that resolves to a private address
-- must be refused where the connection is made.

local ALLOWED_HOSTS = {
  ["api.github.com"] = true,
  ["api.stripe.com"] = true,
  ["registry.npmjs.org"] = true,
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
  if url.scheme ~= "http" and url.scheme ~= "https" then
    return BLOCK{reason = "SCHEME_NOT_ALLOWED",
                 message = "only http and https requests are allowed"}
  end
  local host = url.host
  if ends_with(host, ".") then
    host = host:sub(1, -2)
  end
  if ip_is_private(host) or METADATA_NAMES[host] then
    return BLOCK{reason = "PRIVATE_ADDRESS",
                 message = "requests to internal addresses are refused"}
  end
  if ALLOWED_HOSTS[host] then
    return ALLOW
  end
  if approved(intent, "security") then
    return ALLOW
  end
  return ESCALATE{approvers = {"security"}, reason = "HOST_NOT_ALLOWLISTED"}
end
