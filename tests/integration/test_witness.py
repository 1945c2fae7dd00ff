"""test_witness.py - `intentgate witness serve`, the real binary over HTTP,
witnessing the checkpoints of a real PDP (`intentgate serve` with an [audit]
key; its notes from GET /v1/audit/checkpoint and its checkpoints table, its
proofs from GET /v1/audit/proof/consistency).

Played as a hostile log or client:

  Extension  the first checkpoint (old 0) and consistent extensions are
             cosigned: the answer is one cosignature/v1 line, checked here
             (key id, timestamp, Ed25519 over "cosignature/v1\\ntime T\\n" +
             the checkpoint text), and GET /<sha256(origin)>/checkpoint
             serves the note with that very line.
  Conflict   a stale old size is 409 with the size, text/x.tlog.size.
  Rollback   a smaller checkpoint from the cosigned size is refused (400)
             and kept as evidence; `witness show` lists it.
  Fork       a second PDP with the SAME audit key on another database signs
             another history: its checkpoint at the cosigned size (422,
             fork) and its extension with its own valid proof (422,
             inconsistent) are refused and kept as evidence.
  Refusals   an unknown origin 404, a log key the witness does not trust
             403, garbage 400, a huge body 413 (declared and chunked),
             too many requests 429 with Retry-After; each a line of text.
  Restart    kill -9 right after a 200: the restarted witness has the new
             size (the state was committed before the answer).
  Layout     the state under this build tree and under /var/lib (or /srv),
             the key in a credentials directory, as docs/witness.md says.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_witness.py
"""
import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests, wait_until  # noqa: E402
from harness import layout_roots  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.path.join(HERE, "..", "..", "policies", "bundle")
LOG_NAME = "witness.test.example/audit"
WITNESS_NAME = "witness.test.example/w1"
REQ_MAX = 32 + 63 * 45 + 1 + 65536  # AUDIT_WITNESS_REQ_MAX
DASH = "\u2014 "


def sha256_hex(s):
    return hashlib.sha256(s.encode()).hexdigest()


def ig(*args):
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True,
                       timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


def keygen(dest):
    """A k4.secret at dest (mode 0600), from `intentgate keygen`."""
    tmp = dest + ".keygen"
    rc, _, err = ig("keygen", "--out", tmp)
    assert rc == 0, err
    os.rename(os.path.join(tmp, "signing.key"), dest)
    shutil.rmtree(tmp)


# ---- verifying a cosignature, from the spec (c2sp.org/tlog-cosignature) --

def ed25519_verify(pk, sig, msg):
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
        from cryptography.exceptions import InvalidSignature
    except ImportError:
        return openssl_verify(pk, sig, msg)
    try:
        ed25519.Ed25519PublicKey.from_public_bytes(pk).verify(sig, msg)
        return True
    except InvalidSignature:
        return False


def openssl_verify(pk, sig, msg):
    d = tempfile.mkdtemp(prefix="ig-witness-ossl-", dir=os.getcwd())
    try:
        der = bytes.fromhex("302a300506032b6570032100") + pk
        pem = ("-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n"
               % base64.b64encode(der).decode())
        for name, data in (("pk.pem", pem.encode()), ("sig", sig),
                           ("msg", msg)):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        p = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin",
                            "-inkey", os.path.join(d, "pk.pem"), "-rawin",
                            "-in", os.path.join(d, "msg"), "-sigfile",
                            os.path.join(d, "sig")], capture_output=True)
        return p.returncode == 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def parse_vkey(vkey):
    name, key_id, b64 = vkey.split("+", 2)
    raw = base64.b64decode(b64)
    return name, bytes.fromhex(key_id), raw[0], raw[1:]


def check_cosignature(line, text, vkey, now):
    """line: '— name base64\\n' by vkey over text, stamped about now."""
    name, key_id, typ, pk = parse_vkey(vkey)
    assert typ == 4, typ
    assert key_id == hashlib.sha256(name.encode() + b"\n\x04" + pk).digest()[:4]
    assert line.startswith(DASH + name + " ") and line.endswith("\n"), line
    sig = base64.b64decode(line[len(DASH + name + " "):-1], validate=True)
    assert len(sig) == 76, len(sig)
    assert sig[:4] == key_id
    ts = struct.unpack(">Q", sig[4:12])[0]
    assert abs(ts - now) < 600, (ts, now)
    msg = ("cosignature/v1\ntime %d\n" % ts).encode() + text.encode()
    assert ed25519_verify(pk, sig[12:], msg), "the cosignature does not verify"
    return ts


def note_text(note):
    return note[:note.index("\n\n") + 1]


def note_size(note):
    return int(note.split("\n")[1])


# ---- a PDP with a signed audit log ----

class Pdp:
    """`intentgate serve` installed under root with the audit key at
    audit_key (shared by a forking PDP), a checkpoint at every leaf."""

    def __init__(self, root, tag, audit_key):
        self.dir = os.path.join(root, "pdp-" + tag)
        os.makedirs(self.dir, mode=0o700)
        shutil.copytree(BUNDLE, os.path.join(self.dir, "policies"))
        keygen(os.path.join(self.dir, "signing.key"))
        self.tokens = {k: "igt_" + base64.urlsafe_b64encode(
            os.urandom(24)).decode().rstrip("=") for k in
            ("agent", "auditor")}
        conf = os.path.join(self.dir, "intentgate.conf")
        with open(conf, "w") as f:
            f.write(
                "listen = 127.0.0.1:0\ndatabase = %s/intentgate.db\n"
                "signing_key = %s/signing.key\npolicy_dir = %s/policies\n"
                "\n[agent a]\ntenant = t\ntoken_sha256 = %s\n"
                "\n[auditor r]\ntoken_sha256 = %s\n"
                "\n[audit]\nname = %s\nkey = %s\nanchor = %s/anchor\n"
                "checkpoint_every = 1\ncheckpoint_interval = 3600\n"
                % (self.dir, self.dir, self.dir,
                   sha256_hex(self.tokens["agent"]),
                   sha256_hex(self.tokens["auditor"]), LOG_NAME, audit_key,
                   self.dir))
        run = os.path.join(self.dir, "run")
        os.mkdir(run)
        self.srv = Server.custom(conf, run, {
            "INTENTGATE_AGENT_TOKEN": self.tokens["agent"]})
        m = re.search(r'"audit_key":\s*"([^"]+)"', self.srv.log())
        assert m, self.srv.log()
        self.vkey = m.group(1)
        self.n = 0

    def grow(self, intents=1):
        """Submit intents and wait for the checkpoint of the whole log."""
        for _ in range(intents):
            self.n += 1
            st, body, _ = self.srv.submit(
                "payments.refund", "orders/%d-%s" % (self.n, os.urandom(4)
                                                     .hex()),
                {"amount": self.n, "currency": "EUR"})
            assert st == 201, body
        want = self.srv.leaf_count()
        return wait_until(lambda: self.latest_if(want),
                          "the checkpoint of %d leaves" % want)

    def latest_if(self, size):
        note = self.latest()
        return note if note_size(note) >= size else None

    def latest(self):
        st, body, _ = self.srv.call("GET", "/v1/audit/checkpoint",
                                    self.tokens["auditor"])
        assert st == 200, body
        return body.decode() if isinstance(body, bytes) else body

    def note_at(self, size):
        rows = self.srv.rows("SELECT note FROM checkpoints WHERE size = %d"
                             % size)
        assert rows, "no checkpoint of size %d" % size
        return rows[0]["note"]

    def sizes(self):
        return [r["size"] for r in
                self.srv.rows("SELECT size FROM checkpoints WHERE size > 0")]

    def proof(self, old, new):
        if old == 0 or old == new:
            return []
        st, body, _ = self.srv.call(
            "GET", "/v1/audit/proof/consistency?old=%d&new=%d" % (old, new),
            self.tokens["auditor"])
        assert st == 200, body
        lines = body.decode().split("\n")
        assert lines[0] == "intentgate.org/consistency-proof@v1", lines
        return [l for l in lines[3:] if l]

    def stop(self):
        self.srv.stop()


def request(old, proof, note):
    return ("old %d\n" % old + "".join(p + "\n" for p in proof) + "\n" +
            note).encode()


# ---- the witness ----

class Witness:
    """`intentgate witness serve` installed as docs/witness.md says: the
    config in etc/, the key in a credentials directory, the state in
    var/lib/."""

    def __init__(self, root, logs, rate=1000, key=None):
        self.root = root
        self.etc = os.path.join(root, "etc", "intentgate-witness")
        self.state = os.path.join(root, "var", "lib", "intentgate-witness")
        self.cred = os.path.join(root, "run", "credentials",
                                 "intentgate-witness.service")
        for d in (self.etc, self.state, self.cred):
            os.makedirs(d, mode=0o700, exist_ok=True)
        self.key = key or os.path.join(self.cred, "witness.key")
        if not os.path.exists(self.key):
            keygen(self.key)
        self.db = os.path.join(self.state, "state.db")
        self.conf = os.path.join(self.etc, "witness.conf")
        text = ("[witness]\nname = %s\nkey = %s\nlisten = 127.0.0.1:0\n"
                "database = %s\nrate = %d\n"
                % (WITNESS_NAME, self.key, self.db, rate))
        for origin, vkey in logs:
            text += "\n[log %s]\nkey = %s\n" % (origin, vkey)
        with open(self.conf, "w") as f:
            f.write(text)
        self.proc = None
        self.runs = 0

    def start(self):
        self.runs += 1
        self.log_path = os.path.join(self.etc, "..", "witness-%d.log"
                                     % self.runs)
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [BIN, "witness", "serve", "--config", self.conf],
            stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        rec = wait_until(self.started, "witness.started", 30)
        self.port = rec["port"]
        self.vkey = rec["vkey"]
        assert self.port > 0
        return self

    def started(self):
        if self.proc.poll() is not None:
            raise AssertionError("the witness exited: " + self.log())
        for line in self.log().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("event") == "witness.started":
                return rec
        return None

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def call(self, method, path, body=None, headers=None, chunks=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            if chunks is not None:
                conn.request(method, path, body=iter(chunks),
                             headers=headers or {}, encode_chunked=True)
            else:
                conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read().decode("utf-8", "replace"), \
                {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()

    def add(self, old, proof, note):
        return self.call("POST", "/add-checkpoint", request(old, proof, note))

    def latest(self, origin):
        return self.call("GET", "/%s/checkpoint" % sha256_hex(origin))

    def stop(self, sig=signal.SIGTERM):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        rc = self.proc.returncode if self.proc is not None else None
        self.proc = None
        return rc

    def show(self):
        rc, out, err = ig("witness", "show", "--config", self.conf)
        assert rc == 0, err
        return [json.loads(l) for l in out.splitlines()]


def assert_text_refusal(t, got, status, needle=None):
    st, body, headers = got
    t.assertEqual(st, status, body)
    t.assertTrue(headers.get("content-type", "").startswith("text/plain"),
                 headers)
    t.assertTrue(body.endswith("\n") and body.count("\n") == 1, repr(body))
    if needle is not None:
        t.assertIn(needle, body)


class WitnessTest(unittest.TestCase):
    def setUp(self):
        self.dirs, self.pdps, self.witnesses = [], [], []

    def tearDown(self):
        for w in self.witnesses:
            w.stop(signal.SIGKILL)
        for p in self.pdps:
            p.stop()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)

    def root(self, base=None):
        d = tempfile.mkdtemp(prefix="ig-witness-it-", dir=base or os.getcwd())
        self.dirs.append(d)
        return d

    def pdp(self, root, tag, audit_key):
        p = Pdp(root, tag, audit_key)
        self.pdps.append(p)
        return p

    def witness(self, root, logs, **kw):
        w = Witness(root, logs, **kw)
        self.witnesses.append(w)
        return w.start()

    def log_and_witness(self, base=None, **kw):
        root = self.root(base)
        os.makedirs(os.path.join(root, "logkeys"), mode=0o700)
        key = os.path.join(root, "logkeys", "audit.key")
        keygen(key)
        a = self.pdp(root, "a", key)
        w = self.witness(os.path.join(root, "w"), [(LOG_NAME, a.vkey)], **kw)
        return root, key, a, w

    def cosign(self, w, a, old, note):
        st, body, headers = w.add(old, a.proof(old, note_size(note)), note)
        self.assertEqual(st, 200, body)
        self.assertTrue(headers["content-type"].startswith("text/plain"))
        check_cosignature(body, note_text(note), w.vkey, time.time())
        return body

    # ---- cases ----

    def test_extensions_cosigned_in_each_layout(self):
        for base in layout_roots():
            with self.subTest(base=base):
                self.extensions(base)

    def extensions(self, base):
        root, _, a, w = self.log_and_witness(base)
        rc, out, err = ig("witness", "vkey", "--config", w.conf)
        self.assertEqual((rc, out), (0, w.vkey + "\n"), err)
        self.assertEqual(oct(os.stat(w.db).st_mode & 0o777), "0o600")
        st, body, _ = w.latest(LOG_NAME)
        self.assertEqual(st, 404, body)
        self.assertEqual(w.call("GET", "/healthz")[:2], (200, "ok\n"))

        n1 = a.grow(2)
        line = self.cosign(w, a, 0, n1)
        st, served, _ = w.latest(LOG_NAME)
        self.assertEqual(st, 200)
        self.assertTrue(served.endswith(line), served)
        self.assertTrue(served.startswith(note_text(n1) + "\n"
                                          + DASH + LOG_NAME + " "), served)
        n2 = a.grow(3)
        self.cosign(w, a, note_size(n1), n2)
        # the same checkpoint again: cosigned again
        self.cosign(w, a, note_size(n2), n2)
        # stale old sizes: 409 with the size, as text/x.tlog.size
        for old in (0, note_size(n1)):
            st, body, headers = w.add(old, a.proof(old, note_size(n2)), n2)
            self.assertEqual((st, body), (409, "%d\n" % note_size(n2)))
            self.assertEqual(headers["content-type"], "text/x.tlog.size")
        shown = w.show()
        self.assertEqual([(r["kind"], r["origin"], r["size"]) for r in shown],
                         [("log", LOG_NAME, note_size(n2))])
        w.stop()
        a.stop()

    def test_rollback_refused_and_kept(self):
        _, _, a, w = self.log_and_witness()
        n1 = a.grow(1)
        self.cosign(w, a, 0, n1)
        n2 = a.grow(2)
        self.cosign(w, a, note_size(n1), n2)
        # the older checkpoint, from the size cosigned: a rollback
        assert_text_refusal(self, w.add(note_size(n2), [], n1), 400)
        # from its own size: told the size
        st, body, _ = w.add(note_size(n1), [], n1)
        self.assertEqual((st, body), (409, "%d\n" % note_size(n2)))
        ev = [r for r in w.show() if r["kind"] == "evidence"]
        self.assertEqual(len(ev), 1, ev)
        self.assertEqual(ev[0]["reason"], "rollback")
        self.assertEqual(note_size(ev[0]["note"]), note_size(n1))
        self.assertEqual(note_size(ev[0]["cosigned"]), note_size(n2))
        self.assertIn('"witness.evidence"', w.log())
        # the witness stayed where it was
        self.cosign(w, a, note_size(n2), a.grow(1))

    def test_fork_with_the_same_key_refused_and_kept(self):
        root, key, a, w = self.log_and_witness()
        a.grow(3)
        # the operator re-signs another history with the real key
        b = self.pdp(root, "b", key)
        self.assertEqual(b.vkey, a.vkey)
        b.grow(3)
        size = max(set(a.sizes()) & set(b.sizes()))
        n1, fork = a.note_at(size), b.note_at(size)
        self.assertNotEqual(note_text(fork), note_text(n1))
        self.cosign(w, a, 0, n1)
        assert_text_refusal(self, w.add(size, [], fork), 422, "fork")
        # its extension, with a proof that is right for its own tree
        ext = b.grow(2)
        assert_text_refusal(
            self, w.add(size, b.proof(size, note_size(ext)), ext), 422,
            "consistency proof")
        # again: refused again, kept once
        assert_text_refusal(self, w.add(size, [], fork), 422)
        ev = [r for r in w.show() if r["kind"] == "evidence"]
        self.assertEqual(sorted(r["reason"] for r in ev),
                         ["fork", "inconsistent"], ev)
        for r in ev:
            self.assertEqual(r["origin"], LOG_NAME)
            self.assertEqual(note_text(r["cosigned"]), note_text(n1))
            self.assertTrue(r["received_at"].endswith("Z"))
        # the evidence cannot be edited
        con = sqlite3.connect(w.db)
        try:
            with self.assertRaises(sqlite3.DatabaseError):
                con.execute("DELETE FROM evidence")
                con.commit()
        finally:
            con.close()
        # the real log goes on being cosigned
        ext = a.grow(1)
        st, body, _ = w.add(size, a.proof(size, note_size(ext)), ext)
        self.assertEqual(st, 200, body)

    def test_refusals(self):
        root, key, a, w = self.log_and_witness()
        n1 = a.grow(1)
        # a witness that trusts another key under the log's name
        other_key = os.path.join(root, "logkeys", "other.key")
        keygen(other_key)
        c = self.pdp(root, "c", other_key)
        w2 = self.witness(os.path.join(root, "w2"), [(LOG_NAME, c.vkey)])
        assert_text_refusal(self, w2.add(0, [], n1), 403, "signature")
        # an origin it does not know
        alien = n1.replace(LOG_NAME, "alien.test.example/log")
        assert_text_refusal(self, w.add(0, [], alien), 404, "unknown log")
        # garbage
        for body in (b"", b"hello", b"old 1\n\n", b"old 01\n\n" +
                     n1.encode(), b"\xff\xfe", b"old 0\n\n" +
                     n1.encode()[:-1], b"\nold 0\n\n" + n1.encode()):
            assert_text_refusal(self, w.call("POST", "/add-checkpoint", body),
                                400)
        # old 0 with a proof
        assert_text_refusal(self, w.add(0, ["A" * 43 + "="], n1), 422)
        # huge: declared, and chunked without a length
        assert_text_refusal(self, w.call("POST", "/add-checkpoint",
                                         b"x" * (REQ_MAX + 1)), 413)
        assert_text_refusal(self, w.call("POST", "/add-checkpoint",
                                         chunks=[b"y" * 65536] * 4), 413)
        # methods and paths
        assert_text_refusal(self, w.call("GET", "/add-checkpoint"), 405)
        assert_text_refusal(self, w.call("GET", "/nope"), 404)
        assert_text_refusal(self, w.call("GET", "/%s/checkpoint"
                                         % sha256_hex("alien")), 404)
        # nothing of this changed the state or left evidence
        self.assertEqual([r["kind"] for r in w.show()], ["log"])
        self.cosign(w, a, 0, n1)

    def test_rate_limit(self):
        _, _, a, w = self.log_and_witness(rate=2)
        got = [w.call("POST", "/add-checkpoint", b"old 0\n\n")
               for _ in range(20)]
        limited = [g for g in got if g[0] == 429]
        self.assertTrue(limited, [g[0] for g in got])
        for st, body, headers in limited:
            self.assertGreaterEqual(int(headers["retry-after"]), 1)
            self.assertEqual(body, "too many requests from this address\n")
        # reads are not limited
        self.assertEqual(w.call("GET", "/healthz")[0], 200)

    def test_kill_after_cosign_keeps_state(self):
        for base in layout_roots():
            with self.subTest(base=base):
                _, _, a, w = self.log_and_witness(base)
                n1 = a.grow(2)
                self.cosign(w, a, 0, n1)
                n2 = a.grow(1)
                self.cosign(w, a, note_size(n1), n2)
                w.stop(signal.SIGKILL)  # right after the 200
                w.start()
                st, body, headers = w.add(0, [], n2)
                self.assertEqual((st, body), (409, "%d\n" % note_size(n2)))
                self.assertEqual(headers["content-type"], "text/x.tlog.size")
                st, served, _ = w.latest(LOG_NAME)
                self.assertEqual(st, 200)
                self.assertTrue(served.startswith(note_text(n2)))
                self.cosign(w, a, note_size(n2), a.grow(1))

    def test_key_and_config_refused(self):
        root = self.root()
        key = os.path.join(root, "audit.key")
        keygen(key)
        a = self.pdp(root, "a", key)
        w = Witness(os.path.join(root, "w"), [(LOG_NAME, a.vkey)])
        os.chmod(w.key, 0o644)
        for sub in ("vkey", "serve"):
            rc, out, err = ig("witness", sub, "--config", w.conf)
            self.assertEqual(rc, 1, err)
            lines = [l for l in err.splitlines() if not l.startswith("{")]
            self.assertEqual(len(lines), 1, err)
            self.assertIn(w.key, lines[0])
        os.chmod(w.key, 0o600)
        with open(w.conf, "a") as f:
            f.write("\n[log other.test.example/log]\nkey = %s\n" % a.vkey)
        rc, _, err = ig("witness", "vkey", "--config", w.conf)
        self.assertEqual(rc, 2, err)
        self.assertRegex(err, r"witness\.conf:\d+: the key is named "
                         + re.escape(LOG_NAME))
        # usage: one line, exit 2
        for args in ((), ("frob",), ("serve",), ("show", "--config"),
                     ("vkey", "--config", w.conf, "--listen", "x")):
            rc, _, err = ig("witness", *args)
            self.assertEqual(rc, 2, (args, err))
            self.assertEqual(err.count("\n"), 1, err)
            self.assertTrue(err.startswith("intentgate witness"), err)
        rc, out, _ = ig("witness", "--help")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("usage: intentgate witness serve"))


if __name__ == "__main__":
    run_tests()
