#!/usr/bin/env bash
# test_ctest_gate.sh - the test step of CI cannot lie: scripts/run-ctest.sh
# and scripts/check-tests.sh, run against a planted ctest project, must
# fail on a skipped test (a Python suite with a skipped case, through the
# real tests/integration/harness.py, and a bare SKIP_RETURN_CODE), on a
# missing tool (the real ui.browser, audit.interop and cli.approvals
# scripts without chromium, node, curl: one line naming it), on a suite
# meant for PostgreSQL without IG_TEST_PG_URL (through the real harness.py:
# it fails, naming the variable, rather than skip), on a failed or missing
# test, on a test past its timeout, on no test at all, on a test left
# unregistered (a tool's, or a .pg variant), and on a .pg variant that does
# not say IG_TEST_STORE=postgresql (it would run on SQLite); and
# pass only when every test ran and passed.
#
#   tests/ci/test_ctest_gate.sh [REPO_DIR]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/empty-path"

cat >"$tmp/src/suite.py" <<'PY'
"""A planted Python suite: KIND (argv) says which tests it holds."""
import sys
import unittest

sys.path.insert(0, sys.argv[1])
KIND = sys.argv[2]
del sys.argv[1:]
from harness import run_tests  # noqa: E402


class Planted(unittest.TestCase):
    def test_runs(self):
        self.assertTrue(True)

    def test_other(self):
        if KIND == "skip":
            self.skipTest("planted skip")
        if KIND == "fail":
            self.fail("planted failure")


if __name__ == "__main__":
    run_tests()
PY

# The tests of one planted project, by PLANT: what each case adds to the
# ones that pass. Every test gets a label, a timeout and the suite's
# SKIP_RETURN_CODE, as tests/CMakeLists.txt gives them.
cat >"$tmp/src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(planted NONE)
enable_testing()
set(R "$repo")
add_test(NAME pass COMMAND sh -c "exit 0")
add_test(NAME py.pass COMMAND python3 \${CMAKE_SOURCE_DIR}/suite.py
         \${R}/tests/integration pass)
if(NOT PLANT STREQUAL "unregistered")
  foreach(t ui.browser audit.interop cli.approvals cli.git
            executor.git_gateway executor.git_upstream executor.mcp_fixture
            executor.mcp_conformance_fixture executor.mcp_gateway
            executor.mcp_conformance_gateway executor.mcp_bridge
            executor.mcp_attack witness.integration witness.verify
            witness.attack policy.cover policy.coverage)
    add_test(NAME \${t} COMMAND sh -c "exit 0")
  endforeach()
endif()
# The suites that run on both stores, and their .pg variants.
set(both pdp.integration pdp.redeem_integration pdp.limits
    pdp.refusals_integration approval.integration audit.pdp_integration
    agent.submit agent.examples hook.integration witness.client witness.e2e
    pdp.trace_integration policy.replay pdp.shadow_integration
    policy.tools_attack)
foreach(t \${both})
  add_test(NAME \${t} COMMAND sh -c "exit 0")
  set_tests_properties(\${t} PROPERTIES ENVIRONMENT IG_TEST_STORE=sqlite)
  if(NOT (PLANT STREQUAL "unregistered_pg" AND t STREQUAL "pdp.limits"))
    add_test(NAME \${t}.pg COMMAND sh -c "exit 0")
    if(NOT (PLANT STREQUAL "pg_on_sqlite" AND t STREQUAL "agent.submit"))
      set_tests_properties(\${t}.pg PROPERTIES
        ENVIRONMENT IG_TEST_STORE=postgresql)
    endif()
  endif()
endforeach()
foreach(t pdp.replicas witness.replicas)
  add_test(NAME \${t} COMMAND sh -c "exit 0")
  set_tests_properties(\${t} PROPERTIES ENVIRONMENT IG_TEST_STORE=postgresql)
endforeach()
if(PLANT STREQUAL "py_skip")
  add_test(NAME py.skip COMMAND python3 \${CMAKE_SOURCE_DIR}/suite.py
           \${R}/tests/integration skip)
elseif(PLANT STREQUAL "py_fail")
  add_test(NAME py.fail COMMAND python3 \${CMAKE_SOURCE_DIR}/suite.py
           \${R}/tests/integration fail)
elseif(PLANT STREQUAL "pg_no_url")
  add_test(NAME py.pg COMMAND env -u IG_TEST_PG_URL python3
           \${CMAKE_SOURCE_DIR}/suite.py \${R}/tests/integration pass)
  set_tests_properties(py.pg PROPERTIES ENVIRONMENT IG_TEST_STORE=postgresql)
elseif(PLANT STREQUAL "skip_code")
  add_test(NAME skip77 COMMAND sh -c "echo cannot run here; exit 77")
elseif(PLANT STREQUAL "no_node")
  add_test(NAME interop.no_node COMMAND \${R}/tests/interop/interop.sh
           /bin/true \${CMAKE_SOURCE_DIR}/absent/node x.mjs)
elseif(PLANT STREQUAL "no_chromium")
  add_test(NAME browser.no_chromium COMMAND env
           CHROMIUM=\${CMAKE_SOURCE_DIR}/absent/chromium
           bash \${R}/tests/browser/run.sh \${CMAKE_BINARY_DIR})
elseif(PLANT STREQUAL "no_curl")
  add_test(NAME approvals.no_curl COMMAND env PATH=$tmp/empty-path
           /bin/bash \${R}/tests/cli/test_approvals.sh /bin/true)
elseif(PLANT STREQUAL "missing_command")
  add_test(NAME absent COMMAND \${CMAKE_SOURCE_DIR}/absent/program)
elseif(PLANT STREQUAL "timeout")
  add_test(NAME hang COMMAND sh -c "sleep 30")
elseif(PLANT STREQUAL "disabled")
  add_test(NAME off COMMAND sh -c "exit 0")
  set_tests_properties(off PROPERTIES DISABLED ON)
endif()
get_property(all DIRECTORY PROPERTY TESTS)
set_tests_properties(\${all} PROPERTIES LABELS planted TIMEOUT 60
                     SKIP_RETURN_CODE 77)
if(PLANT STREQUAL "timeout")
  set_tests_properties(hang PROPERTIES TIMEOUT 1)
endif()
CMAKE

fails=0
# gate PLANT [CTEST_ARGS...]: configure the planted project, then run
# check-tests.sh and run-ctest.sh on it as scripts/test.sh does; the
# step's status in $got (99: the project did not configure), its output in
# $tmp/out.
gate() {
    local b=$tmp/build-$1
    cmake -S "$tmp/src" -B "$b" -DPLANT="$1" >"$tmp/out" 2>&1 || {
        got=99
        return
    }
    shift
    { "$repo/scripts/check-tests.sh" "$b" &&
        "$repo/scripts/run-ctest.sh" "$b" "$@"; } >"$tmp/out" 2>&1
    got=$?
}
# expect ok|fail DESCRIPTION PLANT [WANT-IN-OUTPUT [CTEST_ARGS...]]
expect() {
    local want=$1 what=$2 plant=$3 needle=${4:-}
    shift 3
    [ $# -gt 0 ] && shift
    gate "$plant" "$@"
    if { [ "$want" = ok ] && [ "$got" -eq 0 ]; } ||
        { [ "$want" = fail ] && [ "$got" -ne 0 ] && [ "$got" -ne 99 ] &&
            { [ -z "$needle" ] || grep -qF -- "$needle" "$tmp/out"; }; }; then
        echo "ok   $what"
    else
        echo "FAIL $what (status $got${needle:+, wanted \"$needle\"})"
        sed 's/^/     /' "$tmp/out"
        fails=$((fails + 1))
    fi
}

# also WANT-IN-OUTPUT: the last step's output holds it too.
also() {
    if ! grep -qF -- "$1" "$tmp/out"; then
        echo "FAIL     ...and its output lacks \"$1\""
        sed 's/^/     /' "$tmp/out"
        fails=$((fails + 1))
    fi
}

expect ok "passing tests pass (a Python suite among them)" all
expect fail "a skipped Python test fails the step" py_skip \
    "py.skip did not run (notrun: SKIP_RETURN_CODE=77)"
expect fail "a test exiting SKIP_RETURN_CODE fails the step" skip_code \
    "skip77 did not run"
expect fail "a failing Python test fails the step" py_fail \
    "1 passed, 1 failed, 0 skipped"
expect fail "a missing node fails the step, naming it" no_node \
    "audit.interop needs node"
also "1 failed, 0 not run" # failed, not skipped
expect fail "a missing chromium fails the step, naming it" no_chromium \
    "ui.browser needs chromium"
also "1 failed, 0 not run"
expect fail "a missing curl fails the step, naming it" no_curl \
    "cli.approvals needs curl"
also "1 failed, 0 not run"
expect fail "a test whose command is missing fails the step" \
    missing_command "absent did not run"
expect fail "a disabled test fails the step" disabled "off is disabled"
expect fail "a test past its timeout fails the step" timeout "1 failed"
expect fail "a test that needs a tool and is not registered fails" \
    unregistered "ui.browser is not registered"
expect fail "a suite on PostgreSQL without IG_TEST_PG_URL fails" pg_no_url \
    "IG_TEST_PG_URL is not set"
also "1 failed, 0 not run" # failed, not skipped
expect fail "a .pg variant that is not registered fails" unregistered_pg \
    "pdp.limits.pg is not registered"
expect fail "a .pg variant that would run on SQLite fails" pg_on_sqlite \
    "agent.submit.pg does not set IG_TEST_STORE=postgresql"
expect fail "no test run at all fails the step" all "0 passed, 0 failed" \
    -R no-such-test
echo "$fails failed"
[ "$fails" -eq 0 ]
