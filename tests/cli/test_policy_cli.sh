#!/usr/bin/env bash
# tests/cli/test_policy_cli.sh - `intentgate policy test` exit statuses:
# 0 when every case passes, 1 when a case fails, 2 for bad usage or a
# bundle that does not load (with one line on stderr naming file and line);
# --settings gives the bundle its `config` as the server's [policy] does.
#   test_policy_cli.sh INTENTGATE
set -u
ig=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

expect() { # expect STATUS DESCRIPTION CMD...
    local want=$1 what=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $what: exit $got, want $want" >&2
        sed 's/^/  | /' "$tmp/out" "$tmp/err" >&2
        fails=$((fails + 1))
    else
        echo "ok   $what"
    fi
}

mkdir "$tmp/good" "$tmp/failing" "$tmp/broken" "$tmp/untested"
cat >"$tmp/good/p.lua" <<'LUA'
return function(intent)
  if intent.action == "a" then return ALLOW end
  return BLOCK{reason = "NOT_A"}
end
LUA
cat >"$tmp/good/p_test.lua" <<'LUA'
return {
  { name = "a", intent = { action = "a" }, expect = "ALLOW" },
  { name = "b", intent = { action = "b" }, expect = "BLOCK",
    reasons = { "NOT_A" } },
}
LUA
cp "$tmp/good/p.lua" "$tmp/failing/p.lua"
cat >"$tmp/failing/p_test.lua" <<'LUA'
return {
  { name = "a", intent = { action = "a" }, expect = "ALLOW" },
  { name = "wrong on purpose", intent = { action = "b" }, expect = "ALLOW" },
}
LUA
printf 'return function(intent)\n  if then\nend\n' >"$tmp/broken/p.lua"
cp "$tmp/good/p.lua" "$tmp/untested/p.lua"

expect 0 "passing bundle" "$ig" policy test "$tmp/good"
grep -q '^2 passed, 0 failed$' "$tmp/out" || {
    echo "FAIL passing bundle: no summary line" >&2
    fails=$((fails + 1))
}
expect 1 "failing case exits 1" "$ig" policy test "$tmp/failing"
grep -q '^FAIL p_test.lua: wrong on purpose: expected ALLOW, got BLOCK' \
    "$tmp/out" || {
    echo "FAIL failing bundle: no FAIL line" >&2
    fails=$((fails + 1))
}
expect 2 "syntax error exits 2" "$ig" policy test "$tmp/broken"
grep -q 'p.lua:2:' "$tmp/err" || {
    echo "FAIL syntax error: stderr does not name p.lua:2" >&2
    fails=$((fails + 1))
}
expect 2 "bundle without tests exits 2" "$ig" policy test "$tmp/untested"
expect 2 "missing dir exits 2" "$ig" policy test "$tmp/nonexistent"
expect 2 "no arguments exits 2" "$ig" policy
expect 2 "unknown subcommand exits 2" "$ig" policy run "$tmp/good"
expect 0 "--help" "$ig" policy --help
grep -q '^  test ' "$tmp/out" || {
    echo "FAIL --help: the test subcommand is not listed" >&2
    fails=$((fails + 1))
}
expect 0 "test --help" "$ig" policy test --help
grep -q 'usage: intentgate policy test DIR' "$tmp/out" || {
    echo "FAIL test --help: no usage line" >&2
    fails=$((fails + 1))
}
# --settings: the bundle sees the object as `config`, as the server runs
# the tests with its own [policy] settings.
mkdir "$tmp/cfg"
cat >"$tmp/cfg/p.lua" <<'LUA'
return function(intent)
  if config.limit ~= nil and intent.params.n > config.limit then
    return BLOCK{reason = "OVER_LIMIT"}
  end
  return ALLOW
end
LUA
cat >"$tmp/cfg/p_test.lua" <<'LUA'
return {
  { name = "over the configured limit", expect = "BLOCK",
    intent = { action = "a", params = { n = 5 } } },
}
LUA
printf '{"limit": 3}' >"$tmp/limit.json"
printf '[3]' >"$tmp/array.json"
printf '{"limit": ' >"$tmp/cut.json"
expect 1 "no settings: config.limit is nil" "$ig" policy test "$tmp/cfg"
expect 0 "--settings gives config" "$ig" policy test "$tmp/cfg" \
    --settings "$tmp/limit.json"
expect 0 "--settings with --coverage" "$ig" policy test "$tmp/cfg" \
    --settings "$tmp/limit.json" --coverage
grep -q '^  not run: 5$' "$tmp/out" || { # line 3 ran: config seen
    echo "FAIL --settings --coverage: the configured branch not run" >&2
    sed 's/^/  | /' "$tmp/out" >&2
    fails=$((fails + 1))
}
expect 2 "--settings not an object" "$ig" policy test "$tmp/cfg" \
    --settings "$tmp/array.json"
grep -q 'must be a JSON object' "$tmp/err" || {
    echo "FAIL --settings array: message does not say why" >&2
    fails=$((fails + 1))
}
expect 2 "--settings not JSON" "$ig" policy test "$tmp/cfg" \
    --settings "$tmp/cut.json"
expect 2 "--settings missing file" "$ig" policy test "$tmp/cfg" \
    --settings "$tmp/nope.json"
expect 2 "--settings without a file" "$ig" policy test "$tmp/cfg" --settings
expect 2 "--settings and --config" "$ig" policy test "$tmp/cfg" \
    --settings "$tmp/limit.json" --config "$tmp/limit.json"
grep -q 'use one' "$tmp/err" || {
    echo "FAIL --settings and --config: message does not say why" >&2
    fails=$((fails + 1))
}
expect 2 "--config missing file" "$ig" policy test "$tmp/cfg" \
    --config "$tmp/nope.conf"
grep -q '^intentgate policy test: --config' "$tmp/err" || {
    echo "FAIL --config missing: no one-line error naming --config" >&2
    sed 's/^/  | /' "$tmp/err" >&2
    fails=$((fails + 1))
}
[ "$fails" -eq 0 ] || exit 1
