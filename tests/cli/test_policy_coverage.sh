#!/usr/bin/env bash
# tests/cli/test_policy_coverage.sh - `intentgate policy test DIR
# --coverage`: the exact report of a small bundle with a known untested
# branch and a file the instrumenter refuses, the JSON form, exit statuses
# that coverage never changes (a failing case still exits 1, bad flags 2),
# and the example bundle's own coverage (every file instrumented, no case
# deciding differently, lines and branches above the floor we keep).
#   test_policy_coverage.sh INTENTGATE BUNDLE_DIR
set -u
ig=$1
bundle=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL $*" >&2
    fails=$((fails + 1))
}

expect() { # expect STATUS DESCRIPTION CMD...
    local want=$1 what=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, want $want"
        sed 's/^/  | /' "$tmp/out" "$tmp/err" >&2
    else
        echo "ok   $what"
    fi
}

mkdir "$tmp/small" "$tmp/failing"
cat >"$tmp/small/p.lua" <<'LUA'
-- p.lua: "b" is never tested
return function(intent)
  if intent.action == "a" then
    return ALLOW
  elseif intent.action == "b" then
    return BLOCK{reason = "B"}
  end
  return nil
end
LUA
cat >"$tmp/small/p_test.lua" <<'LUA'
return {
  { name = "a", intent = { action = "a" }, expect = "ALLOW" },
  { name = "c", intent = { action = "c" }, expect = "BLOCK" },
}
LUA
printf 'local __igcov = 1\r\nreturn function(i)\r\n  return nil\r\nend\r\n' \
    >"$tmp/small/q.lua"
cp "$tmp/small/p.lua" "$tmp/small/q.lua" "$tmp/failing/"
cat >"$tmp/failing/p_test.lua" <<'LUA'
return {
  { name = "wrong on purpose", intent = { action = "a" }, expect = "BLOCK" },
}
LUA

expect 0 "small bundle with coverage" "$ig" policy test "$tmp/small" --coverage
sed 1d "$tmp/out" >"$tmp/got"
cat >"$tmp/want" <<'OUT'
ok   p_test.lua: a
ok   p_test.lua: c
2 passed, 0 failed
coverage p.lua: lines 4/5 (80%), branches 3/4 (75%)
  not run: 6
  branch not taken: 5 `elseif` true (no case entered it)
coverage q.lua: lines 2/2 (100%), branches not counted (line 1: the source uses the name __igcov)
total: lines 6/7 (85.7%), branches 3/4 (75.0%)
OUT
diff -u "$tmp/want" "$tmp/got" >&2 || fail "small bundle: report differs"

expect 0 "small bundle, JSON" "$ig" policy test "$tmp/small" \
    --coverage-format json
grep -q '^ok   p_test.lua: a$' "$tmp/err" ||
    fail "JSON: the case lines are not on stderr"
python3 - "$tmp/out" <<'PY' || fail "JSON: unexpected document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["failed"] == 0, d
c = d["coverage"]
p, q = c["files"]
assert p["file"] == "p.lua" and p["lines"] == {"run": 4, "total": 5,
                                                 "not_run": [6]}, p
assert p["branches"] == {"taken": 3, "total": 4, "not_taken": [
    {"line": 5, "kind": "elseif", "outcome": True}]}, p
assert q["branches"] is None and "__igcov" in q["branches_note"], q
assert c["total"] == {"lines": {"run": 6, "total": 7},
                      "branches": {"taken": 3, "total": 4}}, c
assert c["mismatches"] == 0
PY

expect 1 "a failing case still exits 1" "$ig" policy test "$tmp/failing" \
    --coverage
grep -q '^FAIL p_test.lua: wrong on purpose' "$tmp/out" ||
    fail "failing bundle: no FAIL line"
grep -q '^total: lines' "$tmp/out" || fail "failing bundle: no report"
expect 2 "bad --coverage-format" "$ig" policy test "$tmp/small" \
    --coverage-format xml
grep -q 'coverage-format' "$tmp/err" || fail "bad format: not named"
expect 2 "--coverage-format without a value" "$ig" policy test "$tmp/small" \
    --coverage-format
expect 2 "unknown flag" "$ig" policy test "$tmp/small" --covrage
expect 2 "two directories" "$ig" policy test "$tmp/small" "$tmp/small"

# The example bundle: same cases as without coverage, every file
# instrumented, and what it reports (policies that depend on settings or
# on load-time self-checks keep a few lines no case can reach).
expect 0 "example bundle" "$ig" policy test "$bundle"
grep -v '^bundle ' "$tmp/out" >"$tmp/plain"
expect 0 "example bundle with coverage" "$ig" policy test "$bundle" --coverage
sed -n '/^coverage /,$p' "$tmp/out" >&2
grep -v '^bundle ' "$tmp/out" | sed '/^coverage /,$d' >"$tmp/covered"
cmp -s "$tmp/plain" "$tmp/covered" ||
    fail "example bundle: the case lines differ under coverage"
grep -q 'branches not counted' "$tmp/out" &&
    fail "example bundle: a file is not instrumented"
grep -q 'decided differently' "$tmp/out" &&
    fail "example bundle: a case decided differently under coverage"
python3 - "$ig" "$bundle" <<'PY' || fail "example bundle: below the floor"
import json, subprocess, sys
out = subprocess.run([sys.argv[1], "policy", "test", sys.argv[2],
                      "--coverage-format", "json"], capture_output=True,
                     text=True, check=True).stdout
t = json.loads(out)["coverage"]["total"]
lines = t["lines"]["run"] / t["lines"]["total"]
branches = t["branches"]["taken"] / t["branches"]["total"]
print("example bundle: lines %.1f%%, branches %.1f%%" % (100 * lines,
                                                          100 * branches))
assert lines >= 0.93 and branches >= 0.93, t
PY
[ "$fails" -eq 0 ] || exit 1
