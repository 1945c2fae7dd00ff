#!/usr/bin/env bash
# bench_pg.sh - durable ALLOW decisions per second and latency with the
# PostgreSQL store: one replica, then two replicas on the same database,
# next to the same run on the SQLite default.
#
#   tests/bench/bench_pg.sh [BUILD_DIR] [SECONDS]
#
# Starts its own PostgreSQL 15 cluster (scripts/pg-cluster.sh --durable:
# fsync on, synchronous_commit = on, full_page_writes on: every reply
# waits for its records to be flushed) in a temporary directory on
# loopback, and for each configuration a fresh database. Every PDP has
# `threads = 2` and the example bundle; the load is the loadgen of
# bench_pdp.sh (each request a distinct payments.refund of 42, ALLOW, with
# a unique idempotency key): first open loop at 1,000 requests/s in all
# for the latency, then closed loop with 64 connections in all (split
# evenly over the replicas, one loadgen per replica, run at once) for the
# most decisions per second. IG_BENCH_THREADS sets the PDPs' `threads`
# (default 2): a replica on PostgreSQL waits on the network, and more
# HTTP threads hide that. Prints per configuration:
# decisions/s (the sum over replicas), p50 and p99, and the server CPU
# per decision. Everything runs on this machine: the replicas, the
# database and the load generators share its cores, so the two-replica
# figure shows the coordination cost, not a scale-out.
set -euo pipefail
build=${1:-build/release}
secs=${2:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
ig=$build/cli/intentgate
loadgen=$build/tests/loadgen
for f in "$ig" "$loadgen"; do
    [ -x "$f" ] || { echo "missing $f: build $build first" >&2; exit 2; }
done

tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    "$root/scripts/pg-cluster.sh" stop "$tmp/pg" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
pgurl=$("$root/scripts/pg-cluster.sh" start "$tmp/pg" --durable)
"$ig" keygen --out "$tmp/keys" >/dev/null
mkdir "$tmp/policies"
cp "$root/policies/bundle/"*.lua "$tmp/policies/"
agent="igt_bench_agent_$RANDOM$RANDOM"
exec_tok="igt_bench_exec_$RANDOM$RANDOM"
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
# conf NAME DATABASE: a config file for one replica.
conf() {
    cat >"$tmp/$1.conf" <<CONF
listen = 127.0.0.1:0
database = $2
signing_key = keys/signing.key
policy_dir = policies
threads = ${IG_BENCH_THREADS:-2}
synchronous = full
[policy]
quota_per_minute = 100000000
[agent bench]
tenant = bench
token_sha256 = $(h "$agent")
[executor bench-exec]
actions = payments.
token_sha256 = $(h "$exec_tok")
CONF
}
# start NAME: start a replica on its config; its port in $tmp/NAME.port.
# (Not in a command substitution: the server would hold its pipe open.)
start() {
    "$ig" serve --config "$tmp/$1.conf" >/dev/null 2>"$tmp/$1.log" &
    pids+=($!)
    local port=
    for _ in $(seq 200); do
        port=$(grep -o '"port":[0-9]*' "$tmp/$1.log" | head -1 | cut -d: -f2 || true)
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || { cat "$tmp/$1.log" >&2; exit 1; }
    echo "$port" >"$tmp/$1.port"
}
stop_all() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}
newdb() {
    psql -q "$pgurl" -c "CREATE DATABASE $1" >/dev/null
    echo "${pgurl%/*}/$1"
}
body='{"action":"payments.refund","resource":"orders/{{SEQ}}","params":{"amount":42,"currency":"EUR","order_id":"o-{{SEQ}}"},"context":{"requested_by":"bench","ticket":"B-1"},"idempotency_key":"bench-{{SEQ}}"}'
# load PORT CONNECTIONS SEQSTART [loadgen args]: one loadgen, JSON out.
load() {
    local port=$1 conns=$2 seq=$3
    shift 3
    "$loadgen" --url "http://127.0.0.1:$port/v1/intents" --method POST \
        --header "Authorization: Bearer $agent" \
        --header "Content-Type: application/json" \
        --body "$body" --expect-status 201 --connections "$conns" \
        --seq-start "$seq" --json "$@"
}
# run LABEL PORT...: the closed and open loops over the given replicas.
run() {
    local label=$1
    shift
    local n=$# i=0 port
    local outs=()
    # The open loop first, while the server is fresh (after the closed
    # loop the sequencer still has its backlog to sign).
    for port in "$@"; do
        load "$port" 16 $((2000000000 + i * 100000000)) --duration "$secs" \
            --warmup 1 --rate $((1000 / n)) >"$tmp/open.$i.json" &
        outs+=($!)
        i=$((i + 1))
    done
    for p in "${outs[@]}"; do wait "$p"; done
    outs=()
    i=0
    for port in "$@"; do
        load "$port" $((64 / n)) $((1000000000 + i * 100000000)) \
            --duration "$secs" --warmup 2 >"$tmp/closed.$i.json" &
        outs+=($!)
        i=$((i + 1))
    done
    for p in "${outs[@]}"; do wait "$p"; done
    python3 - "$label" "$tmp" "$n" <<'PY'
import json, sys
label, tmp, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
closed = [json.load(open("%s/closed.%d.json" % (tmp, i))) for i in range(n)]
opened = [json.load(open("%s/open.%d.json" % (tmp, i))) for i in range(n)]
rate = sum(c["rps"] for c in closed)
errs = sum(c["errors"] + c["unexpected"] for c in closed + opened)
p99c = max(c["latency_ms"]["p99"] for c in closed)
p50o = max(o["latency_ms"]["p50"] for o in opened)
p99o = max(o["latency_ms"]["p99"] for o in opened)
print("%-34s %8.0f decisions/s  closed p99 %6.2f ms | at 1000/s: p50 %5.2f ms"
      " p99 %6.2f ms | errors %d" % (label, rate, p99c, p50o, p99o, errs))
PY
}

echo "== ${secs}s open loop at 1000/s, then ${secs}s closed loop (64 connections); threads = ${IG_BENCH_THREADS:-2}"
conf sqlite ig.db
start sqlite
run "SQLite (synchronous=full)" "$(cat "$tmp/sqlite.port")"
stop_all

conf pg1 "$(newdb bench_one)"
start pg1
run "PostgreSQL, 1 replica" "$(cat "$tmp/pg1.port")"
stop_all

db=$(newdb bench_two)
conf pga "$db"
conf pgb "$db"
start pga
start pgb
run "PostgreSQL, 2 replicas" "$(cat "$tmp/pga.port")" "$(cat "$tmp/pgb.port")"
stop_all
psql -Atq "$pgurl" -c "SHOW synchronous_commit" -c "SHOW fsync" |
    paste -sd' ' | sed 's/^/  postgres: synchronous_commit fsync = /'
