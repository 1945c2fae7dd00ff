#!/usr/bin/env bash
# scripts/run-fuzzers.sh - run libFuzzer targets briefly; fail on the first
# that crashes, is missing, or has no seed corpus.
#
#   scripts/run-fuzzers.sh BIN_DIR CORPUS_ROOT SECONDS NAME...
#
# Runs BIN_DIR/fuzz_NAME for SECONDS on a copy of CORPUS_ROOT/NAME (the
# seeds stay untouched), prints its executed-units line, and on a non-zero
# status prints the end of its output (the sanitizer report and the
# crashing input's file) and exits 1. The status is the fuzzer's own, read
# before any filter runs: a pipeline with `|| true` once hid every crash.
# A crashing input is written by libFuzzer to the current directory.
# tests/ci/test_run_fuzzers.sh checks this script with planted fuzzers.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 BIN_DIR CORPUS_ROOT SECONDS NAME..." >&2; exit 2; }
bin=$1 seeds=$2 seconds=$3
shift 3
for t in "$@"; do
    fuzzer=$bin/fuzz_$t
    if [ ! -x "$fuzzer" ]; then
        echo "fuzz_$t: missing ($fuzzer is not built)" >&2
        exit 1
    fi
    if [ ! -d "$seeds/$t" ] || [ -z "$(ls -A "$seeds/$t")" ]; then
        echo "fuzz_$t: no seed corpus in $seeds/$t" >&2
        exit 1
    fi
    work=$(mktemp -d)
    cp "$seeds/$t"/* "$work"/
    status=0
    "$fuzzer" -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 \
        "$work" >"$work.log" 2>&1 || status=$?
    grep -E '^stat::number_of_executed_units' "$work.log" | sed "s/^/fuzz_$t: /" || true
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$work.log" >&2
        echo "fuzz_$t failed (status $status)" >&2
        rm -rf "$work" "$work.log"
        exit 1
    fi
    rm -rf "$work" "$work.log"
done
