#!/usr/bin/env bash
# bench_audit_verify.sh - how fast `intentgate audit verify --db` checks a
# large audit log on one core.
#
#   tests/bench/bench_audit_verify.sh BUILD_DIR [N]     (N default 1000000)
#
# Builds a database of N leaves (about 400 bytes each, a signed checkpoint
# every 10,000) with BUILD_DIR/tests/bench_audit_gen, which appends through
# the PDP store's real path, then times `intentgate audit verify --db`
# pinned to one CPU (taskset, when present) and prints leaves/s, then the
# time the PDP's open-time check of the same log takes. The target is
# >= 1,000,000 leaves/s (issue 14). Per leaf, verify reads one event row,
# hashes it, adds about one node hash, and reads its time; the stored
# tree is read as one 8 KiB tile row per 256 leaves. Use a RelWithDebInfo build without
# sanitizers for figures. The database is kept in $BENCH_DIR (default: a
# temporary directory, removed at exit) so a second run can reuse it with
# BENCH_REUSE=1.
set -euo pipefail
build=${1:?usage: bench_audit_verify.sh BUILD_DIR [N]}
n=${2:-1000000}
ig=$build/cli/intentgate
gen=$build/tests/bench_audit_gen
[ -x "$ig" ] || { echo "no $ig" >&2; exit 2; }
[ -x "$gen" ] || { echo "no $gen (configure with IG_BENCH=ON)" >&2; exit 2; }

if [ -n "${BENCH_DIR:-}" ]; then
    dir=$BENCH_DIR
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi
db=$dir/audit-$n.db
key=$dir/audit-$n.key

if [ "${BENCH_REUSE:-0}" != 1 ] || [ ! -f "$db" ]; then
    rm -f "$db" "$db-wal" "$db-shm" "$key"
    echo "generating $n leaves into $db ..."
    "$gen" "$db" "$n" "$key"
fi
echo "database: $(du -h "$db" | cut -f1), $(sqlite3 "$db" \
    'SELECT count(*) FROM checkpoints' 2>/dev/null || echo '?') checkpoints"

pin=()
if command -v taskset >/dev/null; then
    pin=(taskset -c 0)
fi
# One run to warm the page cache, then the timed runs; the figure is the
# median of the three (issue 14), the best is printed too.
"${pin[@]}" "$ig" audit verify --db "$db" --key "$key" >/dev/null
rates=()
for run in 1 2 3; do
    t0=$(date +%s.%N)
    "${pin[@]}" "$ig" audit verify --db "$db" --key "$key" >"$dir/out"
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    rate=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
    echo "run $run: $secs s, $rate leaves/s"
    rates+=("$rate")
done
cat "$dir/out"
mapfile -t sorted < <(printf '%s\n' "${rates[@]}" | sort -n)
echo "median: ${sorted[1]} leaves/s, best: ${sorted[2]} (target >= 1000000)"
# What every PDP start costs before it serves: the open-time check of the
# whole log (every leaf and subtree recomputed from the events).
"${pin[@]}" "$gen" --open "$db"
