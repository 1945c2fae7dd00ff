#!/usr/bin/env bash
# tests/interop/interop.sh - ctest audit.interop: the C library writes a
# signed log (audit_sample), an independent Node.js verifier
# (verify_checkpoint.mjs) must accept it, and must refuse it with one byte
# of the checkpoint, the proof or the leaf changed, or another log's key.
# Witness cosignatures (c2sp.org/tlog-cosignature) both ways: the C
# library's must satisfy Node's check (and fail it when moved, changed or
# missing), Node's must satisfy the C library's, and both must write the
# same bytes for the C2SP document's example checkpoint.
#   interop.sh AUDIT_SAMPLE NODE VERIFY_CHECKPOINT_MJS
# NODE missing fails the test with one line naming it.
set -euo pipefail
sample=$1 node=$2 script=$3
if ! command -v "$node" >/dev/null 2>&1; then
    echo "FAIL: audit.interop needs node ($node), which is not installed" \
        "(scripts/deps.sh installs it)" >&2
    exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

mkdir -p "$dir/other"
"$sample" "$dir"
"$sample" "$dir/other"

pass() { # description, args...
    local what=$1; shift
    if out=$("$node" "$script" "$@"); then
        echo "ok   $what: $out"
    else
        echo "FAIL $what (should verify): $out"; fails=$((fails + 1))
    fi
}
refuse() {
    local what=$1; shift
    if out=$("$node" "$script" "$@"); then
        echo "FAIL $what (should be refused): $out"; fails=$((fails + 1))
    else
        echo "ok   $what refused: $out"
    fi
}
# Copy $1 to $2 with the byte at offset $3 replaced by character $4.
poke() {
    cp "$1" "$2"
    printf '%s' "$4" | dd of="$2" bs=1 seek="$3" conv=notrunc status=none
}

pass "checkpoint" "$dir/vkey" "$dir/checkpoint"
pass "checkpoint + proof" "$dir/vkey" "$dir/checkpoint" \
    "$dir/proof.tlog-proof" "$dir/leaf"
pass "checkpoint from stdin" "$dir/vkey" - < "$dir/checkpoint"

# One byte of the checkpoint changed: in the size, the root, the origin.
size_off=$(($(head -n1 "$dir/checkpoint" | wc -c)))
poke "$dir/checkpoint" "$dir/cp-size" "$size_off" 9
refuse "checkpoint with its size changed" "$dir/vkey" "$dir/cp-size"
root_off=$((size_off + $(sed -n 2p "$dir/checkpoint" | wc -c) + 5))
orig=$(dd if="$dir/checkpoint" bs=1 skip="$root_off" count=1 status=none)
repl=A; [ "$orig" = A ] && repl=B
poke "$dir/checkpoint" "$dir/cp-root" "$root_off" "$repl"
refuse "checkpoint with one root byte changed" "$dir/vkey" "$dir/cp-root"
poke "$dir/checkpoint" "$dir/cp-origin" 0 X
refuse "checkpoint with its origin changed" "$dir/vkey" "$dir/cp-origin"
# The signature's last base64 digit before the padding.
sig_off=$(($(wc -c < "$dir/checkpoint") - 4))
orig=$(dd if="$dir/checkpoint" bs=1 skip="$sig_off" count=1 status=none)
repl=A; [ "$orig" = A ] && repl=Q
poke "$dir/checkpoint" "$dir/cp-sig" "$sig_off" "$repl"
refuse "checkpoint with its signature changed" "$dir/vkey" "$dir/cp-sig"
refuse "checkpoint with another log's key" "$dir/other/vkey" "$dir/checkpoint"

# The proof and the leaf.
poke "$dir/leaf" "$dir/leaf-bad" 2 X
refuse "proof of a changed leaf" "$dir/vkey" "$dir/checkpoint" \
    "$dir/proof.tlog-proof" "$dir/leaf-bad"
hash_off=$(($(head -n2 "$dir/proof.tlog-proof" | wc -c) + 3))
orig=$(dd if="$dir/proof.tlog-proof" bs=1 skip="$hash_off" count=1 status=none)
repl=A; [ "$orig" = A ] && repl=B
poke "$dir/proof.tlog-proof" "$dir/proof-bad" "$hash_off" "$repl"
refuse "proof with one hash byte changed" "$dir/vkey" "$dir/checkpoint" \
    "$dir/proof-bad" "$dir/leaf"
sed 's/^index 5$/index 4/' "$dir/proof.tlog-proof" > "$dir/proof-idx"
refuse "proof with another index" "$dir/vkey" "$dir/checkpoint" \
    "$dir/proof-idx" "$dir/leaf"
refuse "proof against another log's checkpoint" "$dir/vkey" \
    "$dir/other/checkpoint" "$dir/proof.tlog-proof" "$dir/leaf"

# ---- witness cosignatures ----
w="--witness $dir/w1.vkey --witness $dir/w2.vkey"
cp="$dir/checkpoint.cosigned"
pass "cosigned checkpoint, quorum 2 of 2" "$dir/vkey" "$cp" $w
pass "cosigned checkpoint + proof, quorum 2" "$dir/vkey" "$cp" \
    "$dir/proof.tlog-proof" "$dir/leaf" $w
pass "one witness named, the other's line ignored" "$dir/vkey" "$cp" \
    --witness "$dir/w2.vkey"
refuse "bare checkpoint, witnesses named" "$dir/vkey" "$dir/checkpoint" $w
pass "quorum 1 of 2" "$dir/vkey" "$cp" $w --quorum 1
refuse "quorum 3 of 2" "$dir/vkey" "$cp" $w --quorum 3
refuse "a witness named twice" "$dir/vkey" "$cp" $w --witness "$dir/w1.vkey"
# Only w1's line (twice): w2 is missing, and w1 counts once.
{ cat "$dir/checkpoint"; grep '^— w1\.' "$cp"; grep '^— w1\.' "$cp"; } \
    > "$dir/cp-w1-twice"
refuse "w1's line twice, quorum 2" "$dir/vkey" "$dir/cp-w1-twice" $w
pass "w1's line twice, quorum 1" "$dir/vkey" "$dir/cp-w1-twice" $w --quorum 1
# The witnesses' lines moved to the previous checkpoint: each is a
# cosignature of another text, so a forgery there.
{ cat "$dir/checkpoint.prev"; grep '^— w[12]\.' "$cp"; } > "$dir/cp-moved"
pass "the previous checkpoint itself" "$dir/vkey" "$dir/checkpoint.prev"
refuse "cosignatures moved to the previous checkpoint" "$dir/vkey" \
    "$dir/cp-moved" $w --quorum 1
{ cat "$dir/checkpoint.prev"; grep '^— w1\.' "$cp"; } > "$dir/cp-moved1"
refuse "w1's line moved, w2 not named" "$dir/vkey" "$dir/cp-moved1" \
    --witness "$dir/w1.vkey"
# One bit of w2's timestamp (byte 11 of the signature: base64 digit 14).
line=$(grep '^— w2\.' "$cp")
b64=${line##* }
digit=${b64:14:1}
repl=A; [ "$digit" = A ] && repl=B
{ cat "$dir/checkpoint"; grep '^— w1\.' "$cp"
  echo "${line% *} ${b64:0:14}$repl${b64:15}"; } > "$dir/cp-ts"
refuse "w2's timestamp changed" "$dir/vkey" "$dir/cp-ts" $w --quorum 1
refuse "a witness key given as the log's" "$dir/w1.vkey" "$cp"
refuse "the log's key given as a witness's" "$dir/vkey" "$cp" \
    --witness "$dir/vkey"

# The C library checks what Node wrote, and the other way round.
seed3=$(printf '03%.0s' $(seq 32))
"$node" "$script" --witness-vkey "$seed3" w3.interop.example > "$dir/w3.vkey"
{ cat "$cp"; "$node" "$script" --cosign "$seed3" w3.interop.example \
    1764000003 "$dir/checkpoint"; } > "$dir/cp-w3"
check_c() { # description, expected status, vkey, note
    local out rc=0
    out=$("$sample" --check-cosig "$3" "$4") || rc=$?
    if [ "$rc" -eq "$2" ]; then echo "ok   C: $1: $out"
    else echo "FAIL C: $1 (status $rc, want $2): $out"; fails=$((fails + 1)); fi
}
check_c "a cosignature Node wrote" 0 "$dir/w3.vkey" "$dir/cp-w3"
check_c "a cosignature C wrote" 0 "$dir/w1.vkey" "$cp"
check_c "Node's line on another checkpoint" 1 "$dir/w3.vkey" \
    <(cat "$dir/checkpoint.prev"; grep '^— w3\.' "$dir/cp-w3")
check_c "w2's changed timestamp" 1 "$dir/w2.vkey" "$dir/cp-ts"
pass "Node's own cosignature, 3 witnesses" "$dir/vkey" "$dir/cp-w3" $w \
    --witness "$dir/w3.vkey"

# The C2SP examples (tests/vectors/audit/cosignature.json) read as
# published, and both sides sign the C2SP example checkpoint as the
# example's witness at the example's time with the same bytes (Ed25519
# is deterministic).
vectors=$(dirname "$script")/../vectors/audit/cosignature.json
if out=$("$node" "$script" --vectors "$vectors"); then echo "ok   $out"
else echo "FAIL vectors: $out"; fails=$((fails + 1)); fi
"$node" -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(
    process.argv[1], "utf8")).c2sp_checkpoint_text)' "$vectors" \
    > "$dir/c2sp-text"
seed=$(printf '42%.0s' $(seq 32))
c_line=$("$sample" --cosign "$seed" witness.example.com/w1 1679315147 \
    "$dir/c2sp-text")
n_line=$("$node" "$script" --cosign "$seed" witness.example.com/w1 \
    1679315147 "$dir/c2sp-text")
spec_line=$("$node" -e 'console.log(JSON.parse(require("fs").readFileSync(
    process.argv[1], "utf8")).c2sp_cosig_line)' "$vectors")
if [ -n "$c_line" ] && [ "$c_line" = "$n_line" ]; then
    echo "ok   C and Node cosign the C2SP example alike: $c_line"
else
    echo "FAIL C and Node differ: C '$c_line', Node '$n_line'"
    fails=$((fails + 1))
fi
# Same name and time as the spec's line: the 12-byte head differs only in
# the key id (another key), the timestamp bytes are the spec's.
ts_of() { printf '%s' "${1##* }" | base64 -d | od -An -tx1 -j4 -N8 | tr -d ' \n'; }
if [ "$(ts_of "$c_line")" = "$(ts_of "$spec_line")" ]; then
    echo "ok   the timestamp bytes are the C2SP example's: $(ts_of "$c_line")"
else
    echo "FAIL timestamp bytes $(ts_of "$c_line") vs the C2SP example's" \
        "$(ts_of "$spec_line")"; fails=$((fails + 1))
fi

[ "$fails" -eq 0 ] || { echo "$fails interop check(s) failed"; exit 1; }
echo "interop: all checks passed"
