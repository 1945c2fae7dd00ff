-- http_test.lua - cases for http.lua (http.request).
local function get(url)
  return { action = "http.request", resource = url,
           params = { method = "GET" } }
end

local function blocked(name, url, reason)
  return { name = name, intent = get(url), expect = "BLOCK",
           reasons = {reason} }
end

return {
  { name = "allowlisted host", intent = get("https://api.github.com/repos"),
    expect = "ALLOW" },
  { name = "allowlisted, upper case, port",
    intent = get("HTTPS://API.Stripe.com:443/v1/refunds"), expect = "ALLOW" },
  { name = "allowlisted, trailing dot",
    intent = get("https://registry.npmjs.org./left-pad"), expect = "ALLOW" },
  { name = "userinfo does not fool the host",
    intent = get("https://api.github.com@evil.example/x"),
    expect = "ESCALATE", reasons = {"HOST_NOT_ALLOWLISTED"} },
  { name = "unknown host", intent = get("https://example.com/"),
    expect = "ESCALATE", reasons = {"HOST_NOT_ALLOWLISTED"} },
  { name = "look-alike host", intent = get("https://api.github.com.evil.io/"),
    expect = "ESCALATE", reasons = {"HOST_NOT_ALLOWLISTED"} },
  { name = "public IP", intent = get("http://8.8.8.8/"),
    expect = "ESCALATE", reasons = {"HOST_NOT_ALLOWLISTED"} },
  blocked("10/8", "http://10.1.2.3/", "PRIVATE_ADDRESS"),
  blocked("172.16/12", "http://172.31.255.1:8080/", "PRIVATE_ADDRESS"),
  blocked("192.168/16", "https://192.168.0.1/admin", "PRIVATE_ADDRESS"),
  blocked("loopback", "http://127.0.0.1/", "PRIVATE_ADDRESS"),
  blocked("metadata address", "http://169.254.169.254/latest/meta-data/",
          "PRIVATE_ADDRESS"),
  blocked("metadata name", "http://metadata.google.internal/computeMetadata",
          "PRIVATE_ADDRESS"),
  blocked("metadata name, trailing dot", "http://metadata.google.internal./",
          "PRIVATE_ADDRESS"),
  blocked("localhost", "http://LocalHost:3000/", "PRIVATE_ADDRESS"),
  blocked("localhost subdomain", "http://db.localhost/", "PRIVATE_ADDRESS"),
  blocked("IPv6 loopback", "http://[::1]:8080/", "PRIVATE_ADDRESS"),
  blocked("IPv6 unique local", "http://[fd00:ec2::254]/", "PRIVATE_ADDRESS"),
  blocked("IPv6 link-local", "http://[fe80::1]/", "PRIVATE_ADDRESS"),
  blocked("IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]/",
          "PRIVATE_ADDRESS"),
  blocked("decimal IPv4", "http://2130706433/", "INVALID_URL"),
  blocked("octal IPv4", "http://0177.0.0.1/", "INVALID_URL"),
  blocked("short IPv4", "http://127.1/", "INVALID_URL"),
  blocked("percent-encoded host", "http://%31%32%37.0.0.1/", "INVALID_URL"),
  blocked("backslash trick", "http://api.github.com\\@evil.io/",
          "INVALID_URL"),
  blocked("not a URL", "api.github.com/repos", "INVALID_URL"),
  blocked("empty host", "https:///path", "INVALID_URL"),
  blocked("bad port", "https://api.github.com:99999/", "INVALID_URL"),
  blocked("space", "https://api.github.com/a b", "INVALID_URL"),
  blocked("file scheme", "file://localhost/etc/passwd", "SCHEME_NOT_ALLOWED"),
  blocked("ftp scheme", "ftp://api.github.com/", "SCHEME_NOT_ALLOWED"),
  blocked("gopher scheme", "gopher://127.0.0.1:6379/_",
          "SCHEME_NOT_ALLOWED"),
}
