"""fake_witness.py - witnesses for the tests of the PDP's witness client, on
loopback threads (http.server), and the pieces they are made of: RFC 6962
consistency proofs from the spec, Ed25519 through openssl (an
implementation independent of intentgate's), cosignature/v1 lines, and the
add-checkpoint body parsed strictly.

    w = FakeWitness(tmp, "w1", "honest")   # w.url, w.vkey, w.requests
    w.mode = "garbage"                     # see FakeWitness.answer
    w.close()

An honest fake checks what it is sent as a real witness does: the old size
against its state (409 with the size it has, Content-Type
text/x.tlog.size), the consistency proof, then cosigns.
"""
import base64
import hashlib
import http.server
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

DASH = "\u2014"
SIZE_TYPE = "text/x.tlog.size"
BIG = 10 ** 18  # the size a lying witness claims (mode lie_big)


# ---- RFC 6962 consistency proofs, from the spec (RFC 9162 2.1.4.2) ----

def _hash(*parts):
    return hashlib.sha256(b"".join(parts)).digest()


def verify_consistency(n1, n2, r1, r2, proof):
    if n1 == n2:
        return not proof and r1 == r2
    if n1 == 0 or n1 > n2 or not proof:
        return False
    if n1 & (n1 - 1) == 0:  # a power of two: r1 is the proof's first node
        proof = [r1] + proof
    fn, sn = n1 - 1, n2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = _hash(b"\x01", c, fr)
            sr = _hash(b"\x01", c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = _hash(b"\x01", sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == r1 and sr == r2


# ---- Ed25519 through openssl ----

def need_openssl():
    if shutil.which("openssl") is None:
        raise AssertionError("the fake witnesses sign with openssl, which is "
                             "not installed (scripts/deps.sh installs it)")


class Ed25519Key:
    def __init__(self, tmp):
        need_openssl()
        self.dir = tempfile.mkdtemp(prefix="key-", dir=tmp)
        self.pem = os.path.join(self.dir, "k.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519",
                        "-out", self.pem], check=True, capture_output=True)
        der = subprocess.run(["openssl", "pkey", "-in", self.pem, "-pubout",
                              "-outform", "DER"], check=True,
                             capture_output=True).stdout
        self.pk = der[-32:]
        self.lock = threading.Lock()

    def sign(self, msg):
        with self.lock:
            m = os.path.join(self.dir, "msg")
            with open(m, "wb") as f:
                f.write(msg)
            return subprocess.run(
                ["openssl", "pkeyutl", "-sign", "-inkey", self.pem, "-rawin",
                 "-in", m], check=True, capture_output=True).stdout


def cosig_key_id(name, pk):
    return hashlib.sha256(name.encode() + b"\n\x04" + pk).digest()[:4]


def vkey_of(name, pk):
    return "%s+%s+%s" % (name, cosig_key_id(name, pk).hex(),
                         base64.b64encode(b"\x04" + pk).decode())


def cosign(key, name, text, ts=None):
    """The cosignature/v1 line of name's key over checkpoint text."""
    ts = int(time.time()) if ts is None else ts
    msg = b"cosignature/v1\ntime %d\n" % ts + text.encode()
    sig = cosig_key_id(name, key.pk) + ts.to_bytes(8, "big") + key.sign(msg)
    return "%s %s %s\n" % (DASH, name, base64.b64encode(sig).decode())


def parse_request(body):
    """(old, proof hashes, note text, size, root) of an add-checkpoint
    body, strictly; ValueError otherwise."""
    head, sep, note = body.partition(b"\n\n")
    if not sep:
        raise ValueError("no blank line")
    lines = head.decode().split("\n")
    m = re.fullmatch(r"old (0|[1-9][0-9]*)", lines[0])
    if not m:
        raise ValueError("bad old line")
    proof = [base64.b64decode(x, validate=True) for x in lines[1:]]
    if any(len(h) != 32 for h in proof) or len(proof) > 63:
        raise ValueError("bad proof")
    note = note.decode()
    text, sep, _ = note.partition("\n\n")
    if not sep:
        raise ValueError("note without signatures")
    origin, size, root = text.split("\n")
    return int(m.group(1)), proof, text + "\n", int(size), \
        base64.b64decode(root)


# ---- the fake witnesses ----

class FakeWitness:
    """A witness on loopback. mode says how it answers (see answer());
    it may be changed while the PDP runs."""

    def __init__(self, tmp, wid, mode, key=None):
        self.id = wid
        self.name = "witness.test/" + wid
        self.mode = mode
        self.key = key or Ed25519Key(tmp)
        self.vkey = vkey_of(self.name, self.key.pk)
        self.size, self.root = 0, None  # what it last cosigned
        self.requests = []  # (old, proof length, size) of each request
        self.release = threading.Event()  # ends the slow answers
        self.lock = threading.Lock()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                if self.path != "/w/add-checkpoint":
                    self.reply(404, b"no such path\n")
                    return
                fake.answer(self, body)

            def reply(self, status, body, ctype="text/plain"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d/w" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self):
        with self.lock:
            return len(self.requests)

    def answer(self, h, body):
        try:
            old, proof, text, size, root = parse_request(body)
        except (ValueError, UnicodeDecodeError) as e:
            h.reply(400, ("bad request: %s\n" % e).encode())
            return
        with self.lock:
            self.requests.append((old, len(proof), size))
        mode = self.mode
        if mode == "honest":
            self.honest(h, old, proof, text, size, root)
        elif mode == "down":
            h.reply(503, b"down for maintenance\n")
        elif mode == "garbage":
            h.reply(200, b"\x00garbage\xff\n" + DASH.encode() + b" nope\n")
        elif mode == "huge":
            h.send_response(200)
            h.send_header("Content-Length", str(100 * 1024 * 1024))
            h.end_headers()
            chunk = (DASH + " x " + "A" * 1000 + "\n").encode() * 64
            try:
                for _ in range(100 * 1024 * 1024 // len(chunk)):
                    h.wfile.write(chunk)
            except OSError:
                pass  # the PDP hung up: as it should
        elif mode == "slow":
            self.release.wait(120)
        elif mode == "lie_big":
            h.reply(409, b"%d\n" % BIG, SIZE_TYPE)
        elif mode == "lie_unsigned":
            h.reply(409, b"%d\n" % (size - 1), SIZE_TYPE)
        elif mode == "err500":
            h.reply(500, b"internal error\n")
        elif mode == "toomany":
            h.reply(429, b"slow down\n")
        elif mode == "refuse403":
            h.reply(403, b"unknown log\n")
        elif mode == "conflict_plain":
            h.reply(409, b"root mismatch\n")
        elif mode == "otherkey":
            # The configured name, a key that is not the configured one.
            h.reply(200, cosign(self.other, self.name, text).encode())
        elif mode == "ts_zero":
            h.reply(200, cosign(self.key, self.name, text, ts=0).encode())
        elif mode == "redirect":
            h.send_response(307)
            h.send_header("Location", self.redirect_to + "/add-checkpoint")
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif mode == "wrongcp":
            # The right key over another checkpoint (a root one bit off).
            bad = bytearray(root)
            bad[0] ^= 1
            lines = text.split("\n")
            lines[2] = base64.b64encode(bytes(bad)).decode()
            h.reply(200, cosign(self.key, self.name,
                                "\n".join(lines)).encode())
        else:
            h.reply(500, b"unknown mode\n")

    def honest(self, h, old, proof, text, size, root):
        with self.lock:
            if old != self.size:
                h.reply(409, b"%d\n" % self.size, SIZE_TYPE)
                return
            if old > size:
                h.reply(400, b"old > size\n")
                return
            if old == 0:
                ok = not proof
            else:
                ok = verify_consistency(old, size, self.root, root, proof)
            if not ok:
                h.reply(422, b"bad consistency proof\n")
                return
            self.size, self.root = size, root
        h.reply(200, cosign(self.key, self.name, text).encode())
