#!/usr/bin/env bash
# test_check_cycles.sh - scripts/check-cycles.py finds a planted cycle:
# two objects that call each other fail it (and are named), the same files
# with the back-edge removed pass, a build without objects fails.
#
#   tests/ci/test_check_cycles.sh [REPO_DIR]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
check=$repo/scripts/check-cycles.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/low" "$tmp/src/high" "$tmp/src/tests" "$tmp/build"
fails=0

plant() { # plant BACK_EDGE(0|1): low/a.c, high/b.c, tests/t.c
    cat >"$tmp/src/high/b.c" <<'C'
int a_low(int x);
int b_high(int x);
int b_high(int x) { return a_low(x) + 1; }
C
    if [ "$1" = 1 ]; then
        printf 'int b_high(int x);\nint a_low(int x);\n%s\n' \
            'int a_low(int x) { return x > 0 ? b_high(x - 1) : 0; }' \
            >"$tmp/src/low/a.c"
    else
        printf 'int a_low(int x);\nint a_low(int x) { return x; }\n' \
            >"$tmp/src/low/a.c"
    fi
    # A test calling both is not product code: it never makes a cycle.
    printf 'int a_low(int);\nint b_high(int);\n%s\n' \
        'int t(void); int t(void) { return a_low(1) + b_high(1); }' \
        >"$tmp/src/tests/t.c"
    {
        echo "["
        sep=""
        for f in low/a.c high/b.c tests/t.c; do
            o="$tmp/build/${f//\//_}.o"
            cc -c "$tmp/src/$f" -o "$o" || exit 2
            printf '%s{"directory":"%s","file":"%s","command":"cc -c %s -o %s"}\n' \
                "$sep" "$tmp/build" "$tmp/src/$f" "$tmp/src/$f" "$o"
            sep=","
        done
        echo "]"
    } >"$tmp/build/compile_commands.json"
}

expect() { # expect ok|fail DESCRIPTION [GREP]
    python3 "$check" "$tmp/build" "$tmp/src" >"$tmp/out" 2>&1
    got=$?
    if { [ "$1" = ok ] && [ $got -eq 0 ]; } ||
        { [ "$1" = fail ] && [ $got -ne 0 ] &&
            { [ -z "${3:-}" ] || grep -q -- "$3" "$tmp/out"; }; }; then
        echo "ok   $2"
    else
        echo "FAIL $2 (status $got)"
        sed 's/^/     /' "$tmp/out"
        fails=$((fails + 1))
    fi
}

plant 1
expect fail "a planted cycle fails and is named" "low/a.c -> high/b.c"
plant 0
expect ok "without the back-edge it passes"
rm -f "$tmp/build"/*.o
expect fail "objects missing fail" "missing"
echo '[]' >"$tmp/build/compile_commands.json"
expect fail "no product files fail" "no product files"
exit $((fails > 0))
