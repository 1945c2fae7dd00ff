-- wrk_intents.lua - POST /v1/intents for wrk, each request a distinct
-- payments.refund of 42 (ALLOW in the example bundle) with its own
-- idempotency key, so every request is a new durable, signed decision.
--
--   IG_AGENT_TOKEN=... wrk -t2 -c64 -d10s -s tests/bench/wrk_intents.lua \
--       http://127.0.0.1:PORT/v1/intents
--
-- tests/bench/bench_pdp.sh runs it this way when wrk is installed
-- (Debian: apt-get install wrk), next to its own load generator, and
-- again against /healthz for the ratio. A reply other than 201 is counted
-- and printed at the end: a figure with errors is not a figure.

local token = os.getenv("IG_AGENT_TOKEN") or error("set IG_AGENT_TOKEN")
local threads = {}
local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("id", counter)
   table.insert(threads, thread)
end

function init(args)
   seq = 0
   unexpected = 0
   prefix = string.format("wrk-%d-%d-", id, os.time())
   wrk.method = "POST"
   wrk.headers["Authorization"] = "Bearer " .. token
   wrk.headers["Content-Type"] = "application/json"
end

function request()
   seq = seq + 1
   local key = prefix .. seq
   local body = string.format(
      '{"action":"payments.refund","resource":"orders/%s",' ..
      '"params":{"amount":42,"currency":"EUR","order_id":"o-%s"},' ..
      '"context":{"requested_by":"bench","ticket":"B-1"},' ..
      '"idempotency_key":"%s"}', key, key, key)
   return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
   if status ~= 201 then
      unexpected = unexpected + 1
   end
end

function done(summary, latency, requests)
   local bad = 0
   for _, t in ipairs(threads) do
      bad = bad + t:get("unexpected")
   end
   io.write(string.format("  status != 201: %d\n", bad))
   io.write(string.format("  p50 %.2f ms  p99 %.2f ms\n",
                          latency:percentile(50) / 1000,
                          latency:percentile(99) / 1000))
end
