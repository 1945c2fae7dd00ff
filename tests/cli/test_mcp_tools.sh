#!/usr/bin/env bash
# test_mcp_tools.sh - drive the real `intentgate mcp tools pending|accept`
# on pin files written the way the gateway writes them (core/ig_pins.h),
# in a directory whose path has spaces: what pending shows (the whole
# definition, invisible and non-ASCII characters escaped, never raw), what
# accept records, and every refusal (exit 1 or 2, one line on stderr).
#
#   test_mcp_tools.sh PATH/TO/intentgate
set -u
ig=$1
tmp=$(mktemp -d "/tmp/ig mcp tools XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

expect_status() { # WANT NAME CMD...
    local want=$1 name=$2 got
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else
        bad "$name: exit $got, want $want; stderr: $(head -c 300 "$tmp/err")"
    fi
}

expect_err_line() { # NAME REGEX: stderr is one line matching REGEX
    local lines
    lines=$(wc -l <"$tmp/err")
    if [ "$lines" -eq 1 ] && grep -qE "$2" "$tmp/err"; then ok; else
        bad "$1: stderr not one line matching /$2/: $(cat "$tmp/err")"
    fi
}

expect_out() { # NAME FIXED-STRING: stdout holds it (any case)
    if grep -qiF -- "$2" "$tmp/out"; then ok; else
        bad "$1: stdout lacks '$2': $(head -c 600 "$tmp/out")"
    fi
}

pins="$tmp/pins file.jsonl"
at=2026-12-02T10:00:00Z

# A tool definition, its canonical text and hash (intentgate canon/hash).
def() { # NAME DESCRIPTION-JSON-STRING
    printf '{"name":"%s","description":%s,"inputSchema":{"type":"object"}}' \
        "$1" "$2" >"$tmp/def.json"
    canon=$("$ig" canon "$tmp/def.json")
    hash=$("$ig" hash "$tmp/def.json")
}
pinned_line() { # KEY HASH
    printf '{"at":"%s","event":"pinned","hash":"%s","key":"%s"}\n' \
        "$at" "$2" "$1"
}
changed_line() { # KEY (uses canon, hash)
    printf '{"at":"%s","definition":%s,"event":"changed","hash":"%s","key":"%s"}\n' \
        "$at" "$canon" "$hash" "$1"
}

def search '"Search the code."'
h1=$hash
# ESC, a right-to-left override, a zero-width space and DEL: the model
# reads them; the admin must see them
def search '"Search.\u001b[8mhidden\u001b[0m \u202e\u200b\u007f é"'
h2=$hash
{
    pinned_line gh/search "$h1"
    changed_line gh/search
} >"$pins"
chmod 600 "$pins"

# -- pending
expect_status 0 "pending" "$ig" mcp tools pending --pins "$pins"
expect_out "pending key" "gh/search"
expect_out "pending pinned" "pinned: $h1"
expect_out "pending new" "new:    $h2"
expect_out "pending escapes ESC" '\u001b[8mhidden\u001b[0m'
expect_out "pending escapes bidi" '\u202e\u200b\u007f \u00e9'
if LC_ALL=C grep -q $'[\x1b\x7f\x80-\xff]' "$tmp/out"; then
    bad "pending printed a raw control or non-ASCII byte"; else ok; fi
expect_status 0 "pending --json" "$ig" mcp tools pending --json --pins "$pins"
if python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
assert len(a) == 1 and a[0]["key"] == "gh/search", a
assert a[0]["pinned"] == sys.argv[2] and a[0]["hash"] == sys.argv[3], a
assert "\u202e" in a[0]["definition"]["description"], a
assert a[0]["seen_at"] == "2026-12-02T10:00:00Z", a
' "$tmp/out" "$h1" "$h2"; then ok; else bad "pending --json content"; fi

# -- accept
expect_status 2 "accept bad hash" "$ig" mcp tools accept --pins "$pins" \
    gh/search sha256:ABC
expect_err_line "accept bad hash" 'sha256:ABC is not a hash'
expect_status 2 "accept bad key" "$ig" mcp tools accept --pins "$pins" \
    "gh search" "$h2"
expect_err_line "accept bad key" 'is not a tool key'
expect_status 1 "accept not pending" "$ig" mcp tools accept --pins "$pins" \
    gh/search "$h1"
expect_err_line "accept not pending" "is not pending for gh/search; pending: $h2"
expect_status 1 "accept unknown tool" "$ig" mcp tools accept --pins "$pins" \
    gh/other "$h2"
expect_err_line "accept unknown tool" 'no tool gh/other'
size=$(stat -c %s "$pins")
expect_status 0 "accept" "$ig" mcp tools accept --pins "$pins" gh/search "$h2"
me=$(id -un)
if [ "$(cat "$tmp/out")" = "accepted $h2 for gh/search (by $me)" ]; then ok
else bad "accept printed $(cat "$tmp/out")"; fi
if tail -n 1 "$pins" | grep -qE "^\{\"at\":\"[0-9T:-]+Z\",\"by\":\"$me\",\"event\":\"accepted\",\"hash\":\"$h2\",\"key\":\"gh/search\"\}$"
then ok; else bad "accepted line: $(tail -n 1 "$pins")"; fi
[ "$(stat -c %s "$pins")" -gt "$size" ] && ok || bad "accept wrote nothing"
expect_status 0 "pending after accept" "$ig" mcp tools pending --pins "$pins"
if [ "$(cat "$tmp/out")" = "no pending changes" ]; then ok; else
    bad "pending after accept: $(cat "$tmp/out")"; fi
expect_status 0 "pending --json empty" "$ig" mcp tools pending --pins "$pins" --json
[ "$(cat "$tmp/out")" = "[]" ] && ok || bad "empty --json: $(cat "$tmp/out")"
expect_status 1 "accept twice" "$ig" mcp tools accept --pins "$pins" \
    gh/search "$h2"
expect_err_line "accept twice" 'nothing is pending for gh/search'

# -- a torn last line is ignored, then cut by accept
def search '"Third."'
changed_line gh/search >>"$pins"
printf '{"at":"%s","by":"mallory","event":"acc' "$at" >>"$pins"
expect_status 0 "pending with a torn line" "$ig" mcp tools pending --pins "$pins"
expect_out "pending with a torn line" "new:    $hash"
expect_status 0 "accept cuts the torn line" "$ig" mcp tools accept \
    --pins "$pins" gh/search "$hash"
if grep -q mallory "$pins"; then bad "torn line left in place"; else ok; fi
if [ "$(tail -c 1 "$pins" | od -An -c | tr -d ' ')" = '\n' ]; then ok; else
    bad "pin file does not end with a newline"; fi

# -- a hand-edited file is refused, naming the line
cp "$pins" "$tmp/good"
printf '{"at":"%s","by":"root","event":"accepted","hash":"%s","key":"gh/search"}\n' \
    "$at" "$h1" >>"$pins"
n=$(wc -l <"$pins")
expect_status 1 "edited accept" "$ig" mcp tools pending --pins "$pins"
expect_err_line "edited accept" "line $n: accepted .* not pending"
cp "$tmp/good" "$pins"
sed -i '2s/Search/Starch/' "$pins"
expect_status 1 "edited definition" "$ig" mcp tools pending --pins "$pins"
expect_err_line "edited definition" 'line 2: "hash" is not the definition'
cp "$tmp/good" "$pins"
sed -i '1s/^/ /' "$pins"
expect_status 1 "not canonical" "$ig" mcp tools pending --pins "$pins"
expect_err_line "not canonical" 'line 1: not canonical'
cp "$tmp/good" "$pins"
chmod 666 "$pins"
expect_status 1 "world-writable" "$ig" mcp tools pending --pins "$pins"
expect_err_line "world-writable" 'written by group or others'
chmod 600 "$pins"

# -- a missing pin file is an error, never created
expect_status 1 "missing file" "$ig" mcp tools pending --pins "$tmp/nope"
expect_err_line "missing file" "no pin file at $tmp/nope"
[ -e "$tmp/nope" ] && bad "a pin file was created" || ok

# -- usage
expect_status 2 "no --pins" "$ig" mcp tools pending
expect_err_line "no --pins" 'missing --pins FILE'
expect_status 2 "unknown verb" "$ig" mcp tools frob --pins "$pins"
expect_err_line "unknown verb" "unknown command 'frob'"
expect_status 2 "accept one arg" "$ig" mcp tools accept --pins "$pins" gh/search
expect_err_line "accept one arg" 'accept needs KEY and HASH'
expect_status 2 "pending extra arg" "$ig" mcp tools pending --pins "$pins" x
expect_err_line "pending extra arg" 'unexpected argument x'
expect_status 2 "--json on accept" "$ig" mcp tools accept --json --pins "$pins" a/b "$h1"
expect_status 2 "mcp alone" "$ig" mcp
expect_err_line "mcp alone" 'unknown or missing subcommand'
expect_status 0 "tools --help" "$ig" mcp tools --help
if grep -q "^usage: intentgate mcp tools pending" "$tmp/out"; then ok; else
    bad "mcp tools --help"; fi

echo "mcp tools: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
