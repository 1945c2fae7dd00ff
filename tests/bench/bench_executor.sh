#!/usr/bin/env bash
# bench_executor.sh - execute round trips/s and p99 of intentgate-executor
# at 32 concurrent (verify + redeem at the PDP + http handler; the outcome
# goes to the PDP just after the answer), what it adds over calling the
# upstream directly, and full cycles/s (intent -> grant -> execute ->
# outcome, durable: 1 / (1/intents + 1/executes)).
#
#   [IG_BENCH_THREADS=32] [IG_BENCH_REPLY_BYTES=0] \
#       tests/bench/bench_executor.sh [BUILD_DIR] [N]
#
# IG_BENCH_THREADS=1 measures what one execute adds with no queueing.
# IG_BENCH_REPLY_BYTES=4096 makes the upstream answer 4 KiB of text, which
# the executor's credential scrubber reads through on every execute.
# Every execute also writes two durable records to the outcome spool.
# Before/after two builds: tests/bench/bench_executor_ab.sh A B 3 10000
# (the median of 3 alternating runs; the machine is shared: say so).
#
# Starts a dev PDP (quota raised) and a dev executor in a temporary dir,
# then runs bench_executor, which serves the no-op upstream itself.
set -euo pipefail
build=${1:-build/release}
n=${2:-20000}
ig=$build/cli/intentgate
ex=$build/executor/intentgate-executor
bench=$build/tests/bench_executor
for f in "$ig" "$ex" "$bench"; do
    [ -x "$f" ] || { echo "missing $f: build $build first" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up=$(free_port)
# Wait until the PDP has printed its settings and dev.env names the same
# URL (the first start's dev.env or output, read before the restart
# replaced them, would send everything to a dead port).
wait_pdp() {
    local url
    for _ in $(seq 200); do
        url=$(grep -s '^INTENTGATE_URL=' "$tmp/pdp.out" || true)
        [ -n "$url" ] && grep -qsx "$url" "$tmp/data/dev.env" && return 0
        sleep 0.05
    done
    echo "the PDP did not start: $(cat "$tmp/pdp.err")" >&2
    exit 1
}
"$ig" serve --dev --data "$tmp/data" --listen 127.0.0.1:0 >"$tmp/pdp.out" 2>"$tmp/pdp.err" &
pids+=($!)
wait_pdp
# Raise the demo quota so the benchmark is not throttled, and restart.
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
sed -i 's/^quota_per_minute = .*/quota_per_minute = 100000000/' "$tmp/data/intentgate.conf"
rm -f "$tmp/pdp.out" # the restart writes it anew
"$ig" serve --dev --data "$tmp/data" --listen 127.0.0.1:0 >"$tmp/pdp.out" 2>"$tmp/pdp.err" &
pids+=($!)
wait_pdp
INTENTGATE_DEV_UPSTREAM=http://127.0.0.1:$up "$ex" serve --dev --pdp-env "$tmp/data/dev.env" \
    --listen 127.0.0.1:0 >"$tmp/ex.out" 2>"$tmp/ex.err" &
pids+=($!)
for _ in $(seq 100); do grep -q INTENTGATE_EXECUTOR_URL "$tmp/ex.out" 2>/dev/null && break; sleep 0.1; done
set -a; . "$tmp/data/dev.env"; . "$tmp/data/executor.env"; set +a
"$bench" --pdp "$INTENTGATE_URL" --agent-token "$INTENTGATE_AGENT_TOKEN" \
    --executor "$INTENTGATE_EXECUTOR_URL" --upstream-port "$up" --n "$n" --threads "${IG_BENCH_THREADS:-32}" \
    --reply-bytes "${IG_BENCH_REPLY_BYTES:-0}"
