#!/usr/bin/env bash
# tests/interop/interop.sh - ctest audit.interop: the C library writes a
# signed log (audit_sample), an independent Node.js verifier
# (verify_checkpoint.mjs) must accept it, and must refuse it with one byte
# of the checkpoint, the proof or the leaf changed, or another log's key.
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

[ "$fails" -eq 0 ] || { echo "$fails interop check(s) failed"; exit 1; }
echo "interop: all checks passed"
