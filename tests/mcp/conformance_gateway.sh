#!/usr/bin/env bash
# tests/mcp/conformance_gateway.sh BUILD_DIR - the ctest
# executor.mcp_conformance_gateway: the MCP conformance suite against the
# executor's MCP gateway rather than an upstream. tests/integration/
# mcp_stack.py --proxy runs a PDP (a policy that ALLOWs every `mcp.`
# action), our fixture over HTTP (--profile conformance) registered with
# "names": "bare" (the suite calls fixed tool and prompt names), the
# executor, and a test-only proxy on 127.0.0.1 that adds the agent's
# bearer token (the suite sends none) and passes everything else through
# as it came, Host and Origin included. The suite runs against the
# proxy's /mcp with tests/mcp/gateway-expected-failures.yml: the
# scenarios the gateway refuses by design, each with its reason. Results
# are kept in BUILD_DIR/tests/mcp-conformance-gateway/ (summary.txt, one
# checks.json a scenario, stack.log). Exit 0 only when exactly the
# baselined scenarios fail.
#
# The binaries are INTENTGATE_BIN and INTENTGATE_EXECUTOR_BIN (ctest sets
# them), else BUILD_DIR/cli/intentgate and
# BUILD_DIR/executor/intentgate-executor.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: conformance_gateway.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 1
out=$build/tests/mcp-conformance-gateway
rm -rf "$out"
mkdir -p "$out" || exit 1
export INTENTGATE_BIN=${INTENTGATE_BIN:-$build/cli/intentgate}
export INTENTGATE_EXECUTOR_BIN=${INTENTGATE_EXECUTOR_BIN:-$build/executor/intentgate-executor}

# The stack prints the proxy's URL once everything answers, and holds it
# up until its stdin ends (then it stops the executor, checks its log and
# cleans up).
coproc STACK { exec python3 "$here/../integration/mcp_stack.py" --proxy \
    2>"$out/stack.log"; }
# shellcheck disable=SC2153 # STACK_PID is set by coproc
stack_pid=$STACK_PID
stack_in=${STACK[1]}
stop_stack() {
    exec {stack_in}>&-
    wait "$stack_pid"
}
trap 'kill -TERM "$stack_pid" 2>/dev/null; wait "$stack_pid" 2>/dev/null' EXIT
line=
read -r -t 120 line <&"${STACK[0]}"
case $line in
MCP_GATEWAY_URL=http://127.0.0.1:*) ;;
*)
    echo "FAIL: the gateway stack did not start: '$line'" >&2
    tail -50 "$out/stack.log" >&2
    exit 1
    ;;
esac
"$here/conformance.sh" "${line#MCP_GATEWAY_URL=}" "$out" \
    "$here/gateway-expected-failures.yml"
rc=$?
stop_stack
src=$?
trap - EXIT
if [ $src -ne 0 ]; then
    echo "FAIL: the gateway stack ended with $src (executor log:" \
        "sanitizer report, a leaked secret, or a bad exit)" >&2
    tail -50 "$out/stack.log" >&2
    exit 1
fi
exit $rc
