"""witness_add_seeds.py - write the seed corpus of fuzz_witness_add
(tests/fuzz/corpus/witness_add/): add-checkpoint requests signed by the
fuzz log's fixed key (Ed25519 seed 32 x 0x4c, name fuzz.example/log), from
the specs (c2sp.org/tlog-witness, signed-note, RFC 6962), with Python's
`cryptography`. Run once; the seeds are committed.

    python3 tests/fuzz/witness_add_seeds.py tests/fuzz/corpus/witness_add
"""
import base64
import hashlib
import os
import sys

from cryptography.hazmat.primitives.asymmetric import ed25519

NAME = "fuzz.example/log"
KEY = ed25519.Ed25519PrivateKey.from_private_bytes(b"\x4c" * 32)
PK = KEY.public_key().public_bytes_raw()
KEY_ID = hashlib.sha256(NAME.encode() + b"\n\x01" + PK).digest()[:4]
WITNESS = ed25519.Ed25519PrivateKey.from_private_bytes(b"\x57" * 32)


def leaf(b):
    return hashlib.sha256(b"\x00" + b).digest()


def node(l, r):
    return hashlib.sha256(b"\x01" + l + r).digest()


def mth(h):
    if not h:
        return hashlib.sha256(b"").digest()
    if len(h) == 1:
        return h[0]
    k = 1
    while k * 2 < len(h):
        k *= 2
    return node(mth(h[:k]), mth(h[k:]))


def subproof(m, h, b):
    n = len(h)
    if m == n:
        return [] if b else [mth(h)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return subproof(m, h[:k], b) + [mth(h[k:])]
    return subproof(m - k, h[k:], False) + [mth(h[:k])]


def proof(m, h):
    return [] if m == 0 or m >= len(h) else subproof(m, h, True)


def note(size, hashes, extra=""):
    text = "%s\n%d\n%s\n" % (NAME, size,
                             base64.b64encode(mth(hashes[:size])).decode())
    sig = KEY_ID + KEY.sign(text.encode())
    return text + "\n\u2014 %s %s\n" % (NAME, base64.b64encode(sig).decode()) \
        + extra


def request(old, size, hashes, extra=""):
    p = "".join(base64.b64encode(x).decode() + "\n"
                for x in proof(old, hashes[:size]))
    return ("old %d\n%s\n" % (old, p) + note(size, hashes, extra)).encode()


def main(out):
    a = [leaf(b"a%d" % i) for i in range(40)]
    b = [leaf(b"b%d" % i) for i in range(40)]
    forged = "\u2014 fuzz.example/witness %s\n" % base64.b64encode(
        b"\0" * 76).decode()
    seeds = {
        "empty": request(0, 0, a),
        "first": request(0, 3, a),
        "extend": request(3, 7, a),
        "extend_far": request(7, 33, a),
        "same": request(33, 33, a),
        "fork": request(33, 33, b),
        "inconsistent": request(33, 39, b),
        "rollback": request(33, 5, a),
        "stale": request(3, 39, a),
        "extra_lines": request(33, 40, a, forged),
    }
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
