#!/usr/bin/env bash
# bench_hook.sh - what Claude Code waits for on each tool call: the wall
# time of one `intentgate hook claude-code`, end to end, against a real PDP.
#
#   tests/bench/bench_hook.sh [BUILD_DIR] [RUNS]
#
# Starts `intentgate serve` on a free port with its own data dir, as
# bench_pdp.sh does (synchronous=FULL: the PDP answers after the intent and
# its decision are durable; grants signed), then times RUNS calls of each
# (bench_hook: median, p90, p99 of the wall time, one call after another):
#   1. `intentgate hook --help`: starting the process the hook runs in,
#      nothing else
#   2. the hook with a mapping file that answers Bash itself ("allow"):
#      start, read stdin and the mapping file, parse and map; no network
#   3. the hook on tests/hook/bash_ls.json (Bash `ls -la` in the project)
#      asking the PDP: ALLOW by the example bundle, durable
# Every timed run must exit 0 with the expected decision, or the
# benchmark fails. The difference 3 - 2 is the PDP round trip as the
# hook sees it (connect, POST, commit with fsync, answer).
set -euo pipefail
build=${1:-build/release}
runs=${2:-200}
ig=$build/cli/intentgate
bench=$build/tests/bench_hook
src=$(cd "$(dirname "$0")/../.." && pwd)
for f in "$ig" "$bench"; do
    [ -x "$f" ] || { echo "missing $f: build $build first" >&2; exit 2; }
done
ig=$(cd "$(dirname "$ig")" && pwd)/intentgate

tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$tmp"' EXIT
"$ig" keygen --out "$tmp/keys" >/dev/null
mkdir "$tmp/policies"
cp "$src/policies/bundle/"*.lua "$tmp/policies/"
agent="igt_bench_agent_$RANDOM$RANDOM"
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
cat >"$tmp/ig.conf" <<CONF
listen = 127.0.0.1:0
database = ig.db
signing_key = keys/signing.key
policy_dir = policies
threads = 2
synchronous = full
[policy]
quota_per_minute = 100000000
project_roots = /home/dev/proj
[agent claude]
tenant = bench
token_sha256 = $(h "$agent")
[executor local]
actions = shell., file., http., mcp.
token_sha256 = $(h "igt_bench_exec_$RANDOM$RANDOM")
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

event=$src/tests/hook/bash_ls.json
printf '{"tools": {"Bash": "allow"}}\n' >"$tmp/fixed.json"
export INTENTGATE_URL="http://127.0.0.1:$port" INTENTGATE_TOKEN="$agent"
unset INTENTGATE_HOOK_MAPPINGS
allow='"permissionDecision":"allow"'
echo "== 1. intentgate hook --help (process start)"
"$bench" "$runs" /dev/null usage -- "$ig" hook --help
echo "== 2. hook, fixed answer from the mapping file (no PDP)"
"$bench" "$runs" "$event" "$allow" -- "$ig" hook claude-code \
    --mappings "$tmp/fixed.json"
echo "== 3. hook asking the PDP (ALLOW, durable)"
"$bench" "$runs" "$event" "$allow" -- "$ig" hook claude-code
