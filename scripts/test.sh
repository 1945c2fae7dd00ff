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
#      scripts/check-tests.sh: every test has a label and a timeout)
#   4. release build with warnings as errors, the whole ctest suite again
#      (its summary is the last thing printed)
#
# Installs the missing Debian packages first. Build trees live in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh

ig_install_packages "${IG_RUNTIME_PACKAGES[@]}" "${IG_TEST_PACKAGES[@]}"
jobs=$(nproc)
fuzz_seconds=${IG_FUZZ_SECONDS:-20}

echo "== style"
scripts/check-style.sh

echo "== fuzz targets (${fuzz_seconds}s each)"
CC=clang cmake -S . -B build/fuzz -DIG_FUZZ=ON -DIG_WERROR=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz -j"$jobs" --target fuzz_json fuzz_token fuzz_intake fuzz_params \
    fuzz_verify fuzz_form fuzz_slack fuzz_note fuzz_proof fuzz_hook fuzz_scrub \
    fuzz_spool fuzz_polhelpers fuzz_xff fuzz_leaf >/dev/null
scripts/run-fuzzers.sh build/fuzz/tests tests/fuzz/corpus "$fuzz_seconds" \
    json token intake params verify form slack note proof hook scrub spool \
    polhelpers xff leaf

echo "== ASan+UBSan build and tests"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DIG_SANITIZE=ON \
    -DIG_WERROR=ON -DIG_BENCH=OFF -DIG_TEST_CLOCK=ON >/dev/null
cmake --build build/asan -j"$jobs" >/dev/null
scripts/check-tests.sh build/asan
(cd build/asan && ctest --output-on-failure -j"$jobs")

echo "== release build (warnings are errors) and tests"
cmake -S . -B build/ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIG_WERROR=ON \
    -DIG_TEST_CLOCK=ON >/dev/null
cmake --build build/ci -j"$jobs" >/dev/null
(cd build/ci && ctest --output-on-failure -j"$jobs")
