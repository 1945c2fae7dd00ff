#!/usr/bin/env bash
# bench_pdp.sh - decisions per second and latency of `intentgate serve` on
# the ALLOW path of the example bundle, over loopback with keep-alive.
#
#   tests/bench/bench_pdp.sh [BUILD_DIR] [SECONDS]
#
# Starts the server on a free port with its own data dir (synchronous=FULL:
# every reply waits for its records to be durable; grants signed), then
# runs the loadgen on the same machine:
#   1. open loop at 500 requests/s: the latency of a quiet server
#   2. closed loop, 64 connections: the most ALLOW decisions per second,
#      and the server's CPU per decision by thread (writer, HTTP workers,
#      WAL checkpointer) - the figure another load on the machine disturbs
#      least
#   3. open loop at 5,000 requests/s: latency from each request's
#      scheduled send time (p50/p99)
#   4. when wrk is installed (Debian: wrk), wrk with
#      tests/bench/wrk_intents.lua on the same path, then wrk on /healthz,
#      and the ratio of the two: figures that compare with other servers
# and prints the server's peak RSS. Each request is a distinct
# payments.refund of 42 (ALLOW) with a unique idempotency key.
#
# IG_BENCH_WITNESSES=N (set, even to 0): the audit log is signed, a
# checkpoint every 1,000 leaves, and N `intentgate witness serve` on
# loopback cosign each one (the PDP's [witness] client): compare N=0 with
# N=2 for what witnesses cost the decisions. The witnesses' cosigned sizes
# are printed at the end.
#
# IG_BENCH_SHADOW=1: a shadow bundle (shadow_policy_dir) that is a copy of
# the example bundle, so every decision is evaluated a second time on the
# shadow thread: compare decisions/s with and without it (run the script
# twice, e.g. IG_BENCH_SHADOW=0 then 1). The shadow's counters are printed
# at the end (evaluated, dropped: a full queue).
set -euo pipefail
build=${1:-build/release}
secs=${2:-10}
ig=$build/cli/intentgate
loadgen=$build/tests/loadgen
for f in "$ig" "$loadgen"; do
    [ -x "$f" ] || { echo "missing $f: build $build first" >&2; exit 2; }
done

tmp=$(mktemp -d)
wpids=()
trap 'kill "$pid" "${wpids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ig" keygen --out "$tmp/keys" >/dev/null
extra=
if [ -n "${IG_BENCH_WITNESSES+set}" ]; then
    "$ig" keygen --out "$tmp/keys/audit" >/dev/null
    vkey=$(python3 - "$tmp/keys/audit/signing.pub" <<'PY'
import base64, hashlib, sys
pk = base64.urlsafe_b64decode(open(sys.argv[1]).read().strip()[len("k4.public."):] + "==")
name = b"bench.example/audit"
kid = hashlib.sha256(name + b"\n\x01" + pk).digest()[:4]
print("%s+%s+%s" % (name.decode(), kid.hex(), base64.b64encode(b"\x01" + pk).decode()))
PY
)
    extra="[audit]
name = bench.example/audit
key = keys/audit/signing.key
checkpoint_every = 1000
"
    for i in $(seq 1 "$IG_BENCH_WITNESSES"); do
        mkdir -p "$tmp/w$i"
        "$ig" keygen --out "$tmp/w$i/keys" >/dev/null
        cat >"$tmp/w$i/witness.conf" <<WCONF
[witness]
name = bench.example/w$i
key = $tmp/w$i/keys/signing.key
listen = 127.0.0.1:0
database = $tmp/w$i/state.db
rate = 1000
[log bench.example/audit]
key = $vkey
WCONF
        "$ig" witness serve --config "$tmp/w$i/witness.conf" 2>"$tmp/w$i/log" &
        wpids+=($!)
        wport=
        for _ in $(seq 100); do
            wport=$(grep -o '"port": *[0-9]*' "$tmp/w$i/log" | grep -o '[0-9]*$' || true)
            [ -n "$wport" ] && break
            sleep 0.1
        done
        [ -n "$wport" ] || { cat "$tmp/w$i/log" >&2; exit 1; }
        extra="$extra[witness w$i]
url = http://127.0.0.1:$wport
key = $("$ig" witness vkey --config "$tmp/w$i/witness.conf")
retry_ms = 1000
"
    done
fi
mkdir "$tmp/policies"
cp "$(dirname "$0")/../../policies/bundle/"*.lua "$tmp/policies/"
top=
if [ "${IG_BENCH_SHADOW:-0}" = 1 ]; then
    mkdir "$tmp/shadow"
    cp "$(dirname "$0")/../../policies/bundle/"*.lua "$tmp/shadow/"
    top="shadow_policy_dir = shadow"
fi
agent="igt_bench_agent_$RANDOM$RANDOM"
exec_tok="igt_bench_exec_$RANDOM$RANDOM"
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
cat >"$tmp/ig.conf" <<CONF
listen = 127.0.0.1:0
database = ig.db
signing_key = keys/signing.key
policy_dir = policies
$top
threads = 2
synchronous = full
[policy]
quota_per_minute = 100000000
[agent bench]
tenant = bench
token_sha256 = $(h "$agent")
[executor bench-exec]
actions = payments.
token_sha256 = $(h "$exec_tok")
$extra
CONF
"$ig" serve --config "$tmp/ig.conf" 2>"$tmp/server.log" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(grep -o '"port":[0-9]*' "$tmp/server.log" | head -1 | cut -d: -f2 || true)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { cat "$tmp/server.log" >&2; exit 1; }

body='{"action":"payments.refund","resource":"orders/{{SEQ}}","params":{"amount":42,"currency":"EUR","order_id":"o-{{SEQ}}"},"context":{"requested_by":"bench","ticket":"B-1"},"idempotency_key":"bench-{{SEQ}}"}'
run() {
    "$loadgen" --url "http://127.0.0.1:$port/v1/intents" --method POST \
        --header "Authorization: Bearer $agent" \
        --header "Content-Type: application/json" \
        --body "$body" --expect-status 201 "$@"
}
# The server's CPU seconds by thread name (utime + stime, from /proc).
cpu_by_thread() {
    local tck t
    tck=$(getconf CLK_TCK)
    for t in /proc/"$pid"/task/*; do
        printf '%s %s\n' "$(cat "$t/comm")" \
            "$(cut -d')' -f2 "$t/stat" | awk '{print $12 + $13}')"
    done | awk -v tck="$tck" '{s[$1] += $2} END {for (k in s)
        printf "%s=%.2f ", k, s[k] / tck}'
}
allowed() {
    curl -s "http://127.0.0.1:$port/metrics" |
        sed -n 's/^intentgate_decisions_total{decision="ALLOW"} //p'
}
# First, while the server is fresh: after the loaded rows its WAL copier
# is still catching up and adds a few hundred microseconds.
echo "== open loop at 500/s, 8 connections, ${secs}s"
run --connections 8 --duration "$secs" --warmup 1 --rate 500 \
    --seq-start 200000000
echo "== closed loop, 64 connections, ${secs}s (ALLOW, durable, signed)"
cpu0=$(cpu_by_thread)
n0=$(allowed)
run --connections 64 --duration "$secs" --warmup 2
n1=$(allowed)
cpu1=$(cpu_by_thread)
# CPU per decision: a figure the machine's other load disturbs far less
# than decisions/s does.
python3 - "$cpu0" "$cpu1" "$((n1 - n0))" <<'PY'
import sys
a = dict(kv.split("=") for kv in sys.argv[1].split())
b = dict(kv.split("=") for kv in sys.argv[2].split())
n = int(sys.argv[3])
d = {k: float(b[k]) - float(a.get(k, 0)) for k in b}
print("  server cpu  %.1f us/decision (%d decisions); by thread: %s" % (
    sum(d.values()) * 1e6 / max(n, 1), n,
    ", ".join("%s %.1f" % (k, v * 1e6 / max(n, 1))
              for k, v in sorted(d.items(), key=lambda kv: -kv[1]) if v > 0)))
PY
echo "== open loop at 5000/s, 64 connections, ${secs}s"
run --connections 64 --duration "$secs" --warmup 2 --rate 5000 \
    --seq-start 100000000
if command -v wrk >/dev/null 2>&1; then
    wrk_out=$tmp/wrk.txt
    echo "== wrk POST /v1/intents, 2 threads, 64 connections, ${secs}s"
    IG_AGENT_TOKEN=$agent wrk -t2 -c64 -d"${secs}s" \
        -s "$(dirname "$0")/wrk_intents.lua" \
        "http://127.0.0.1:$port/v1/intents" | tee "$wrk_out"
    echo "== wrk GET /healthz, 2 threads, 64 connections, ${secs}s"
    wrk -t2 -c64 -d"${secs}s" "http://127.0.0.1:$port/healthz" |
        tee -a "$wrk_out"
    awk '/^Requests\/sec/ {r[n++] = $2} END {if (n == 2 && r[1] > 0)
        printf "  decisions/s over /healthz requests/s: %.3f\n", r[0] / r[1]}' \
        "$wrk_out"
else
    echo "== wrk not installed (Debian: apt-get install wrk): its rows skipped"
fi
echo "== server"
grep -E 'VmHWM|VmRSS' "/proc/$pid/status"
curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null |
    grep -E '^intentgate_(shadow_(evaluations|dropped|errors|disagreements)_total|witness_(cosigned_size|lag_leaves|failures_total)|decisions_total|store_commit_(seconds_(sum|count)|writes_total)|policy_eval_seconds_(sum|count))' || true
