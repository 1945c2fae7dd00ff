#!/usr/bin/env bash
# bench_executor_ab.sh - before/after: executes/s of two builds of the
# executor (and PDP), run alternately A B A B ... so that a drift in the
# machine's speed hits both alike; prints each side's median and the
# median of the pairwise ratios B/A.
#
#   tests/bench/bench_executor_ab.sh BUILD_A BUILD_B [RUNS=7] [N=10000]
#
# Each run is tests/bench/bench_executor.sh BUILD N (32 concurrent;
# IG_BENCH_THREADS and IG_BENCH_REPLY_BYTES pass through). BUILD_A and
# BUILD_B may be build directories of two checkouts, e.g. a worktree of
# the commit before a change:
#   git worktree add /tmp/before HEAD~1 && (cd /tmp/before &&
#     cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release &&
#     cmake --build build/release -j --target intentgate intentgate-executor bench_executor)
#   tests/bench/bench_executor_ab.sh /tmp/before/build/release build/release
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [RUNS] [N]" >&2; exit 2; }
a=$1 b=$2 runs=${3:-7} n=${4:-10000}
here=$(cd "$(dirname "$0")" && pwd)
rate() { # BUILD -> executes/s
    "$here/bench_executor.sh" "$1" "$n" 2>&1 |
        sed -n 's/^executor: execute round trips.*= *\([0-9]*\)\/s.*/\1/p'
}
ra=() rb=()
for i in $(seq "$runs"); do
    x=$(rate "$a"); y=$(rate "$b")
    [ -n "$x" ] && [ -n "$y" ] || { echo "a run failed" >&2; exit 1; }
    ra+=("$x"); rb+=("$y")
    printf 'run %d: A %6d/s  B %6d/s  B/A %.3f\n' "$i" "$x" "$y" \
        "$(python3 -c "print($y / $x)")"
done
python3 - "${ra[*]}" "${rb[*]}" <<'PY'
import statistics, sys
a = [float(v) for v in sys.argv[1].split()]
b = [float(v) for v in sys.argv[2].split()]
r = [y / x for x, y in zip(a, b)]
print("A median %.0f/s  B median %.0f/s  median B/A %.3f  (min %.3f, max %.3f)"
      % (statistics.median(a), statistics.median(b), statistics.median(r),
         min(r), max(r)))
PY
