#!/usr/bin/env bash
# scripts/run-ctest.sh BUILD_DIR [CTEST_ARGS...] - ctest as CI runs it: the
# run fails when a test fails, and also when ctest reports any test as not
# run - skipped (the test exited with its SKIP_RETURN_CODE: it could not
# run, e.g. a Python suite with a skipped case), disabled, or its command
# missing - or when no test ran at all. ctest itself exits 0 for skipped
# tests; this reads the outcome of each test from ctest's JUnit report
# (--output-junit), not from its summary text.
set -uo pipefail
build=${1:?usage: scripts/run-ctest.sh BUILD_DIR [CTEST_ARGS...]}
shift
report=$(mktemp)
trap 'rm -f "$report"' EXIT
(cd "$build" && ctest --output-on-failure --output-junit "$report" "$@")
rc=$?
python3 - "$report" "$rc" <<'PY'
import sys
import xml.etree.ElementTree as ET

report, rc = sys.argv[1], int(sys.argv[2])
try:
    cases = list(ET.parse(report).getroot().iter("testcase"))
except (OSError, ET.ParseError) as e:
    print("ctest gate: no JUnit report from ctest (%s)" % e, file=sys.stderr)
    sys.exit(1)
passed = [c for c in cases if c.get("status") == "run"]
failed = [c for c in cases if c.get("status") == "fail"]
notrun = [c for c in cases if c.get("status") not in ("run", "fail")]
for c in notrun:
    why = c.find("skipped")
    print("ctest gate: %s did not run (%s%s): a test that does not run "
          "fails CI" % (c.get("name"), c.get("status"),
                        ": " + why.get("message", "") if why is not None
                        else ""), file=sys.stderr)
print("ctest gate: %d passed, %d failed, %d not run"
      % (len(passed), len(failed), len(notrun)))
sys.exit(0 if rc == 0 and cases and not failed and not notrun else 1)
PY
