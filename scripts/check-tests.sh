#!/usr/bin/env bash
# scripts/check-tests.sh BUILD_DIR - every registered test has a label and
# a timeout, no test is disabled, and the tests that need a tool beyond the
# build (node, chromium, curl) are registered: a test that cannot fail the
# run by hanging or by being left out is refused before the suite starts.
# (Those tests are always registered; without their tool they fail.)
set -euo pipefail
build=${1:?usage: scripts/check-tests.sh BUILD_DIR}
(cd "$build" && ctest --show-only=json-v1) | python3 -c '
import json, sys
EXPECTED = ("ui.browser", "audit.interop", "cli.approvals", "agent.examples",
            "cli.git", "executor.git_gateway", "executor.git_upstream",
            "executor.mcp_fixture", "executor.mcp_conformance_fixture",
            "executor.mcp_gateway", "executor.mcp_conformance_gateway",
            "executor.mcp_bridge", "executor.mcp_attack")
tests = json.load(sys.stdin)["tests"]
names = {t["name"] for t in tests}
bad = ["%s is not registered" % n for n in EXPECTED if n not in names]
for t in tests:
    p = {x["name"]: x["value"] for x in t.get("properties", [])}
    for need in ("LABELS", "TIMEOUT"):
        if not p.get(need):
            bad.append("%s has no %s" % (t["name"], need))
    if p.get("DISABLED"):
        bad.append("%s is disabled" % t["name"])
for b in bad:
    print("check-tests: " + b, file=sys.stderr)
if bad or not tests:
    sys.exit(1)
print("tests ok: %d registered, each with a label and a timeout" % len(tests))
'
