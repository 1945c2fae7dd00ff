#!/usr/bin/env bash
# scripts/check-tests.sh BUILD_DIR - every registered test has a label and
# a timeout, no test is disabled, and the tests that need a tool beyond the
# build (node, chromium, curl, git, a PostgreSQL server) are registered: a
# test that cannot fail the run by hanging or by being left out is refused
# before the suite starts. (Those tests are always registered; without
# their tool they fail.) The PostgreSQL variants of the integration suites
# (NAME.pg) must say IG_TEST_STORE=postgresql, their SQLite originals
# IG_TEST_STORE=sqlite: a variant that ran on the other store would pass
# without testing it. (Other tests labelled pg, e.g. cmocka ones, make
# their own databases on IG_TEST_PG_URL.)
set -euo pipefail
build=${1:?usage: scripts/check-tests.sh BUILD_DIR}
(cd "$build" && ctest --show-only=json-v1) | python3 -c '
import json, sys
EXPECTED = ("ui.browser", "audit.interop", "cli.approvals", "agent.examples",
            "cli.git", "executor.git_gateway", "executor.git_upstream",
            "executor.mcp_fixture", "executor.mcp_conformance_fixture",
            "executor.mcp_gateway", "executor.mcp_conformance_gateway",
            "executor.mcp_bridge", "executor.mcp_attack", "pdp.replicas",
            "witness.integration", "witness.client", "witness.client.pg",
            "witness.replicas", "witness.e2e", "witness.e2e.pg",
            "witness.verify", "witness.attack", "policy.cover",
            "policy.coverage")
# The suites that run on both stores (tests/CMakeLists.txt ig_store_test).
BOTH_STORES = ("pdp.integration", "pdp.redeem_integration", "pdp.limits",
               "pdp.refusals_integration", "approval.integration",
               "audit.pdp_integration", "agent.submit", "agent.examples",
               "hook.integration", "pdp.trace_integration",
               "policy.replay", "pdp.shadow_integration",
               "policy.tools_attack")
EXPECTED += BOTH_STORES + tuple(n + ".pg" for n in BOTH_STORES)
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
    env = p.get("ENVIRONMENT") or []
    want = None
    if t["name"].endswith(".pg"):
        want = "IG_TEST_STORE=postgresql"
    elif t["name"] + ".pg" in names:
        want = "IG_TEST_STORE=sqlite"
    if want and want not in env:
        bad.append("%s does not set %s" % (t["name"], want))
for b in bad:
    print("check-tests: " + b, file=sys.stderr)
if bad or not tests:
    sys.exit(1)
print("tests ok: %d registered, each with a label and a timeout" % len(tests))
'
