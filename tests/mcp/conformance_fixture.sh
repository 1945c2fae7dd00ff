#!/usr/bin/env bash
# tests/mcp/conformance_fixture.sh BUILD_DIR - the ctest
# executor.mcp_conformance_fixture: our upstream fixture
# (tests/integration/mcp_fixture.py http --profile conformance, on a free
# loopback port) under the MCP conformance suite, directly (no gateway),
# against tests/mcp/fixture-expected-failures.yml. The results are kept in
# BUILD_DIR/tests/mcp-conformance-fixture/ (summary.txt, one checks.json a
# scenario). Exit 0 only when exactly the baselined scenarios fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: conformance_fixture.sh BUILD_DIR" >&2; exit 2; }
out=$(cd "$1" && pwd)/tests/mcp-conformance-fixture
rm -rf "$out"
mkdir -p "$out" || exit 1

# The fixture prints its URL once listening: read it from the coprocess.
coproc FIX { exec python3 "$here/../integration/mcp_fixture.py" http \
    --port 0 --profile conformance 2>"$out/fixture.log"; }
# shellcheck disable=SC2153 # FIX_PID is set by coproc
fix_pid=$FIX_PID
trap 'kill -TERM "$fix_pid" 2>/dev/null; wait "$fix_pid" 2>/dev/null' EXIT
line=
read -r -t 20 line <&"${FIX[0]}"
case $line in
MCP_FIXTURE_URL=http://127.0.0.1:*) ;;
*)
    echo "FAIL: the fixture did not start: '$line'" >&2
    cat "$out/fixture.log" >&2
    exit 1
    ;;
esac
"$here/conformance.sh" "${line#MCP_FIXTURE_URL=}" "$out" \
    "$here/fixture-expected-failures.yml"
