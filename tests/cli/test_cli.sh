#!/usr/bin/env bash
# test_cli.sh - drive the real `intentgate` binary: canon, hash, keygen,
# --help, and every bad-input path (exit status 2, one line on stderr that
# says what and where).
#
#   test_cli.sh PATH/TO/intentgate PATH/TO/tests/vectors
set -u
ig=$1
vectors=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect_status WANT NAME CMD... : run CMD, stdout/stderr to $tmp/out,err
expect_status() {
    local want=$1 name=$2 got
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else
        bad "$name: exit $got, want $want; stderr: $(head -c 300 "$tmp/err")"
    fi
}

# expect_err_line NAME REGEX : stderr is exactly one line matching REGEX
expect_err_line() {
    local lines
    lines=$(wc -l <"$tmp/err")
    if [ "$lines" -eq 1 ] && grep -qE "$2" "$tmp/err"; then ok; else
        bad "$1: stderr not one line matching /$2/: $(cat "$tmp/err")"
    fi
}

# -- canon matches every RFC 8785 vector byte for byte
for f in "$vectors"/jcs/input/*.json; do
    n=$(basename "$f")
    expect_status 0 "canon $n" "$ig" canon "$f"
    if cmp -s "$tmp/out" "$vectors/jcs/output/$n"; then ok; else
        bad "canon $n differs from the expected output"; fi
done

# -- stdin, "-", and no trailing newline
printf '{"b":[1,2.50,-0],"a":"\\u00e9"}' >"$tmp/in.json"
expect_status 0 "canon stdin" "$ig" canon <"$tmp/in.json"
if [ "$(cat "$tmp/out")" = '{"a":"é","b":[1,2.5,0]}' ]; then ok; else
    bad "canon stdin output: $(cat "$tmp/out")"; fi
if [ "$(tail -c 1 "$tmp/out" | od -An -c | tr -d ' ')" = '}' ]; then ok; else
    bad "canon output ends with a newline"; fi
expect_status 0 "canon -" "$ig" canon - <"$tmp/in.json"

# -- hash = sha256 of the canonical bytes
"$ig" canon "$tmp/in.json" >"$tmp/canon.out"
want="sha256:$(sha256sum "$tmp/canon.out" | cut -d' ' -f1)"
expect_status 0 "hash file" "$ig" hash "$tmp/in.json"
if [ "$(cat "$tmp/out")" = "$want" ]; then ok; else
    bad "hash: got $(cat "$tmp/out"), want $want"; fi
expect_status 0 "hash stdin" "$ig" hash <"$tmp/in.json"
if [ "$(cat "$tmp/out")" = "$want" ]; then ok; else bad "hash stdin"; fi
# whitespace and key order do not change the hash
printf '\n{ "a" : "\\u00e9",\n  "b" : [ 1, 2.5e0, 0 ] }\n' >"$tmp/in2.json"
expect_status 0 "hash reformatted" "$ig" hash "$tmp/in2.json"
if [ "$(cat "$tmp/out")" = "$want" ]; then ok; else
    bad "hash of reformatted input differs"; fi
# the agent-safe reference vector's hash
sed -n '/"binding"/,/^  },$/p' "$vectors/agent-safe/agent-safe-intent-v1.json" |
    sed '1s/.*"binding": //; $s/},$/}/' >"$tmp/binding.json"
expect_status 0 "hash agent-safe" "$ig" hash "$tmp/binding.json"
want=$(grep '"intent_hash"' "$vectors/agent-safe/agent-safe-intent-v1.json" |
    cut -d'"' -f4)
if [ "$(cat "$tmp/out")" = "$want" ]; then ok; else
    bad "agent-safe hash: got $(cat "$tmp/out"), want $want"; fi

# -- bad input: status 2, one line naming the problem and where
check_bad() { # NAME INPUT REGEX
    printf '%b' "$2" >"$tmp/bad.json"
    expect_status 2 "$1" "$ig" canon "$tmp/bad.json"
    expect_err_line "$1" "$3"
    expect_status 2 "$1 (hash)" "$ig" hash <"$tmp/bad.json"
}
check_bad "duplicate key" '{"a":1,\n "a":2}' "bad.json:2:[0-9]+: .*duplicate"
check_bad "not json" 'hello' 'bad.json:1:[0-9]+: '
check_bad "empty input" '' 'bad.json:1:[0-9]+: '
check_bad "trailing garbage" '{} {}' 'bad.json:1:[0-9]+: '
check_bad "invalid utf-8" '["\xff"]' 'bad.json:1:[0-9]+: '
check_bad "lone surrogate" '["\\ud800"]' 'bad.json:1:[0-9]+: '
check_bad "NaN" '[NaN]' 'bad.json:1:[0-9]+: '
check_bad "overflow" '[1e400]' 'bad.json:1:[0-9]+: '
deep=$(printf '%.0s[' $(seq 40))
check_bad "too deep" "$deep" 'bad.json:1:[0-9]+: .*(deep|depth|nest)'
head -c 1100000 /dev/zero | tr '\0' ' ' >"$tmp/big.json"
expect_status 2 "too large" "$ig" canon "$tmp/big.json"
expect_err_line "too large" 'larger than'

# -- usage errors
expect_status 1 "missing file" "$ig" canon "$tmp/nonexistent.json"
expect_err_line "missing file" 'cannot open .*nonexistent.json'
expect_status 2 "unknown option" "$ig" canon --frobnicate
expect_err_line "unknown option" 'unknown option --frobnicate'
expect_status 2 "two files" "$ig" hash "$tmp/in.json" "$tmp/in.json"
expect_err_line "two files" 'at most one FILE'
expect_status 2 "no command" "$ig"
expect_status 2 "unknown command" "$ig" frobnicate
expect_err_line "unknown command" "unknown command 'frobnicate'"
for c in canon hash keygen; do
    expect_status 0 "$c --help" "$ig" "$c" --help
    if grep -q "^usage: intentgate $c" "$tmp/out"; then ok; else
        bad "$c --help"; fi
done
expect_status 0 "--help" "$ig" --help

# -- keygen
expect_status 2 "keygen without --out" "$ig" keygen
expect_err_line "keygen without --out" 'missing --out'
expect_status 0 "keygen" "$ig" keygen --out "$tmp/keys"
if grep -qE '^k4\.pid\.[A-Za-z0-9_-]{44}$' "$tmp/out"; then ok; else
    bad "keygen printed $(cat "$tmp/out")"; fi
if [ "$(stat -c %a "$tmp/keys/signing.key")" = 600 ]; then ok; else
    bad "signing.key mode $(stat -c %a "$tmp/keys/signing.key")"; fi
if grep -qE '^k4\.secret\.[A-Za-z0-9_-]{86}$' "$tmp/keys/signing.key"; then
    ok; else bad "signing.key content"; fi
if grep -qE '^k4\.public\.[A-Za-z0-9_-]{43}$' "$tmp/keys/signing.pub"; then
    ok; else bad "signing.pub content"; fi
cp "$tmp/keys/signing.key" "$tmp/key.before"
expect_status 1 "keygen never overwrites" "$ig" keygen --out "$tmp/keys"
expect_err_line "keygen never overwrites" 'exists'
if cmp -s "$tmp/keys/signing.key" "$tmp/key.before"; then ok; else
    bad "keygen changed an existing key"; fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
