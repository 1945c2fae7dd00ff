#!/usr/bin/env bash
# test_run_fuzzers.sh - the fuzz step of CI cannot lie: scripts/run-fuzzers.sh
# with planted fuzzers must fail on a crash, a missing target and a missing
# corpus, and pass only when every target ran clean.
#
#   tests/ci/test_run_fuzzers.sh [REPO_DIR]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
run=$repo/scripts/run-fuzzers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/seeds/good" "$tmp/seeds/crash" "$tmp/seeds/empty"
echo seed >"$tmp/seeds/good/a"
echo seed >"$tmp/seeds/crash/a"
cat >"$tmp/bin/fuzz_good" <<'F'
#!/bin/sh
echo "stat::number_of_executed_units: 42"
exit 0
F
cat >"$tmp/bin/fuzz_crash" <<'F'
#!/bin/sh
echo "==4242==ERROR: AddressSanitizer: heap-buffer-overflow"
echo "SUMMARY: AddressSanitizer: heap-buffer-overflow"
echo "stat::number_of_executed_units: 7"
exit 1
F
cp "$tmp/bin/fuzz_good" "$tmp/bin/fuzz_empty"
chmod +x "$tmp/bin"/*
fails=0
expect() { # expect STATUS-KIND DESCRIPTION ARGS...
    want=$1 what=$2
    shift 2
    (cd "$tmp" && "$run" "$tmp/bin" "$tmp/seeds" 1 "$@") >"$tmp/out" 2>&1
    got=$?
    if { [ "$want" = ok ] && [ $got -eq 0 ]; } ||
        { [ "$want" = fail ] && [ $got -ne 0 ]; }; then
        echo "ok   $what"
    else
        echo "FAIL $what (status $got)"
        sed 's/^/     /' "$tmp/out"
        fails=$((fails + 1))
    fi
}
expect ok "clean targets pass" good good
expect fail "a crashing target fails the run" good crash good
expect fail "a crash is not hidden by the targets after it" crash good
expect fail "a missing target fails the run" good absent
expect fail "a target without seeds fails the run" empty
expect fail "no targets named is a usage error"
(cd "$tmp" && "$run" "$tmp/bin" "$tmp/seeds" 1 crash) >"$tmp/out" 2>&1
if grep -q "SUMMARY: AddressSanitizer" "$tmp/out"; then
    echo "ok   the sanitizer report is shown"
else
    echo "FAIL the sanitizer report is not shown"
    fails=$((fails + 1))
fi
echo "$fails failed"
[ "$fails" -eq 0 ]
