#!/usr/bin/env bash
# bench_witness.sh - cosignatures per second from `intentgate witness serve`,
# durably (its state is committed with synchronous=FULL before it answers).
#
#   tests/bench/bench_witness.sh [BUILD_DIR] [CHECKPOINTS]
#
# Starts a witness on a free loopback port with its own key and state in a
# fresh directory, configured for 9 bench logs, then runs
# BUILD_DIR/tests/bench_witness (tests/bench/bench_witness.c) against it:
#   1. one log: each request waits for the one before (old = the last
#      size): the latency of one add-checkpoint and the rate one log gets
#   2. 8 logs at once: the witness's throughput
# Each request carries a consistency proof and a signed checkpoint the
# witness verifies; every answer's cosignature is checked.
set -euo pipefail
build=${1:-build/release}
n=${2:-500}
ig=$build/cli/intentgate
bench=$build/tests/bench_witness
for f in "$ig" "$bench"; do
    [ -x "$f" ] || { echo "missing $f: build $build first" >&2; exit 2; }
done
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$ig" keygen --out "$tmp/keys" >/dev/null
cat >"$tmp/witness.conf" <<CONF
[witness]
name = bench.example/witness
key = $tmp/keys/signing.key
listen = 127.0.0.1:0
database = $tmp/state.db
rate = 100000

CONF
"$bench" config 9 >>"$tmp/witness.conf"
vkey=$("$ig" witness vkey --config "$tmp/witness.conf")
"$ig" witness serve --config "$tmp/witness.conf" 2>"$tmp/log" &
pid=$!
for _ in $(seq 1 500); do
    port=$(grep -o '"port": *[0-9]*' "$tmp/log" | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
    sleep 0.02
done
[ -n "$port" ] || { echo "the witness did not start" >&2; cat "$tmp/log" >&2; exit 1; }
url=http://127.0.0.1:$port
echo "== one log, $n checkpoints in turn"
"$bench" run "$url" "$vkey" 0 1 "$n"
echo "== 8 logs at once, $n checkpoints each"
"$bench" run "$url" "$vkey" 1 8 "$n"
