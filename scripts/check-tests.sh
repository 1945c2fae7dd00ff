#!/usr/bin/env bash
# scripts/check-tests.sh BUILD_DIR - every registered test has a label and
# a timeout, and no test is disabled: a test that cannot fail the run by
# hanging or by being left out is refused before the suite starts.
set -euo pipefail
build=${1:?usage: scripts/check-tests.sh BUILD_DIR}
(cd "$build" && ctest --show-only=json-v1) | python3 -c '
import json, sys
tests = json.load(sys.stdin)["tests"]
bad = []
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
