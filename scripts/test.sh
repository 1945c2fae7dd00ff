#!/usr/bin/env bash
# scripts/test.sh - build and run every test intentgate has.
#
#   1. style: clang-format 14 check, banned-function check
#   2. clang libFuzzer targets (JSON reader, tokens, the PDP intake path,
#      the executor's params check and execute body, the approval pages'
#      form decoder, Slack click signatures and payloads, the audit log's
#      signed notes and tlog proofs, the Claude Code hook's input, the
#      policy helpers that read an agent's strings, client addresses behind
#      X-Forwarded-For),
#      each run briefly (IG_FUZZ_SECONDS, default 20) by
#      scripts/run-fuzzers.sh: a crash, a missing target or corpus fails
#      the run (tests/ci/test_run_fuzzers.sh proves it with planted ones)
#   3. Debug build with ASan+UBSan, the whole ctest suite (first
#      scripts/check-tests.sh: every test has a label and a timeout, none
#      is disabled, and the tests that need node, chromium or curl are
#      registered)
#   4. release build with warnings as errors, the same checks and the
#      whole ctest suite again (its summary is the last thing printed);
#      scripts/check-cycles.py: no two product files depend on each other
#      in a cycle (tests/ci/test_check_cycles.sh proves it finds one)
#
# Both ctest runs share one throwaway PostgreSQL cluster
# (scripts/pg-cluster.sh, started before the first build, stopped when the
# script exits, whether a step failed or not): the suites registered a
# second time with the suffix .pg (label pg) run against it, each server
# on a fresh database of the cluster whose URL is IG_TEST_PG_URL.
#
# ctest runs through scripts/run-ctest.sh: a failed test fails the run, and
# so does a test ctest reports as not run - skipped (its SKIP_RETURN_CODE,
# 77: a Python suite with a skipped case), disabled or missing
# (tests/ci/test_ctest_gate.sh proves it with a planted ctest project).
#
# Installs the missing Debian packages first, then the Node packages of the
# browser test and of the MCP tests as tests/browser/package-lock.json and
# tests/mcp/package-lock.json pin them (npm ci): nothing is downloaded once
# ctest starts. Build trees live in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh

ig_install_packages "${IG_RUNTIME_PACKAGES[@]}" "${IG_TEST_PACKAGES[@]}"
ig_install_browser_modules tests/browser
ig_install_mcp_modules tests/mcp
jobs=$(nproc)
fuzz_seconds=${IG_FUZZ_SECONDS:-20}

echo "== style"
scripts/check-style.sh

echo "== fuzz targets (${fuzz_seconds}s each)"
CC=clang cmake -S . -B build/fuzz -DIG_FUZZ=ON -DIG_WERROR=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz -j"$jobs" --target fuzz_json fuzz_token fuzz_intake fuzz_params \
    fuzz_verify fuzz_form fuzz_slack fuzz_note fuzz_proof fuzz_hook fuzz_scrub \
    fuzz_spool fuzz_polhelpers fuzz_xff fuzz_leaf fuzz_ini fuzz_http_answer \
    fuzz_git_pkt fuzz_pins fuzz_mcp_rpc fuzz_sse fuzz_witness fuzz_witness_add \
    fuzz_pol_cover fuzz_replay_row >/dev/null
scripts/run-fuzzers.sh build/fuzz/tests tests/fuzz/corpus "$fuzz_seconds" \
    json token intake params verify form slack note proof hook scrub spool \
    polhelpers xff leaf ini http_answer git_pkt pins mcp_rpc sse witness \
    witness_add pol_cover replay_row

echo "== PostgreSQL for the .pg tests"
pg_dir=$(mktemp -d /tmp/ig-pg.XXXXXX)
trap 'scripts/pg-cluster.sh stop "$pg_dir" >/dev/null || true' EXIT
trap 'exit 1' INT TERM HUP
IG_TEST_PG_URL=$(scripts/pg-cluster.sh start "$pg_dir")
export IG_TEST_PG_URL
echo "IG_TEST_PG_URL=$IG_TEST_PG_URL"

echo "== ASan+UBSan build and tests"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DIG_SANITIZE=ON \
    -DIG_WERROR=ON -DIG_BENCH=OFF -DIG_TEST_CLOCK=ON >/dev/null
cmake --build build/asan -j"$jobs" >/dev/null
scripts/check-tests.sh build/asan
scripts/run-ctest.sh build/asan -j"$jobs"

echo "== release build (warnings are errors) and tests"
cmake -S . -B build/ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIG_WERROR=ON \
    -DIG_TEST_CLOCK=ON >/dev/null
cmake --build build/ci -j"$jobs" >/dev/null
python3 scripts/check-cycles.py build/ci
scripts/check-tests.sh build/ci
scripts/run-ctest.sh build/ci -j"$jobs"
