"""test_witness_attack.py - the witnesses, played against by three attackers.

Network attacker: anyone who can reach `intentgate witness serve` (its
add-checkpoint is open by design):
  WitnessProtocol   replays, rollback and fork races (one 200 per old, never
                    two roots at one size, never back), forks re-signed with
                    the real log key (equal size, bigger with the fork's,
                    the honest or made-up proof) refused and kept as
                    evidence that carries the log's signature, proofs with
                    hashes added/removed/swapped, size 0 with a bad root,
                    extension lines, the served checkpoint signed by the
                    log, replayed old checkpoints not crowding out evidence
  WitnessParser     the old line, proof lines (64 lines, non-canonical
                    base64, padding, CRLF, NUL...), signatures (other key
                    id, another key, the witness's own key and cosignature
                    as the log's, 200 lines, a failing second line),
                    origins (control characters, another origin)
  WitnessMutations  1500 honest requests with random bytes changed: no 5xx,
                    every 200 a text the log signed
  WitnessTwoLogs    one log's key never moves another log
  WitnessRotation   a failing line by the other trusted key refuses a note
  WitnessConfig     a [log] key of the wrong type or id, a readable or
                    symlinked witness key file: refused at start
  WitnessResources  huge declared and sent bodies, slowloris from one
                    address past the global connection limit, kill -9
                    mid-request (the size it holds is never below one it
                    cosigned)
  WitnessRateLimit  X-Forwarded-For, X-Real-IP, Forwarded do not bypass it
Hostile witness, against the PDP's [witness] client:
  PdpWitnessConfig  urls that are not http(s), log keys as witness keys
  HostileWitness    garbage, 100 MB, an endless body, 409 with a size never
                    signed / 2^64-1 / 1 MB, a 409 ping-pong, a redirect, a
                    cosignature for another checkpoint / by another key /
                    under another key id / without the prefix / at time 0
                    or 2^63, a note signature instead: decisions stay fast,
                    nothing is stored, the event is logged, and then an
                    honest answer is stored (the control); a silent witness
                    does not hold the PDP's stop; 120 honest lines with
                    random bytes changed: whatever is stored verifies
  HostileWitnessName  a witness name of HTML on the auditors' page
Operator (holds the audit key and the database), against `audit verify`:
  OperatorFork      on an export: a fork re-signed with the audit key with
                    the honest cosignature lines copied fails quorum 1; a
                    duplicated line, a witness named twice, the right name
                    under another key id, a 0x01 line by the witness key, a
                    time of 2^63, 75/77-byte signatures, a cosignature of
                    another checkpoint, the log's own key as a witness
  OperatorForkDb    the same on the PDP's database, cosignature rows kept

Each test asserts the defence: it fails while the attack succeeds, and
each attack has its honest control. The attackers' checkpoints and
cosignatures are signed here in Python (`cryptography`'s Ed25519) from the
C2SP texts (signed-note, tlog-checkpoint, tlog-cosignature, tlog-witness);
the Merkle math is RFC 6962's.

    INTENTGATE_BIN=build/release/cli/intentgate \
        python3 tests/integration/test_witness_attack.py [Class[.test]]
"""
import base64
import hashlib
import html
import http.client
import http.server
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey, Ed25519PublicKey)
from cryptography.hazmat.primitives.serialization import (
    Encoding, PublicFormat)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.path.join(HERE, "..", "..", "policies", "bundle")
DASH = "\u2014"
ORIGIN = "log.attack.example/audit"
WNAME = "witness.attack.example/w1"
SIZE_CTYPE = "text/x.tlog.size"
EMPTY_ROOT = hashlib.sha256(b"").digest()


# ---- RFC 6962 ----

def leaf_hash(b):
    return hashlib.sha256(b"\x00" + b).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def split_point(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(hashes):
    if not hashes:
        return EMPTY_ROOT
    if len(hashes) == 1:
        return hashes[0]
    k = split_point(len(hashes))
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def _subproof(m, d, whole):
    n = len(d)
    if m == n:
        return [] if whole else [mth(d)]
    k = split_point(n)
    if m <= k:
        return _subproof(m, d[:k], whole) + [mth(d[k:])]
    return _subproof(m - k, d[k:], False) + [mth(d[:k])]


def consistency_proof(m, hashes):
    """RFC 6962 PROOF(m, D[n]) for 0 < m <= n (empty when m == n)."""
    if m == 0 or m == len(hashes):
        return []
    return _subproof(m, hashes, True)


# ---- keys, notes, cosignatures (C2SP signed-note, tlog-cosignature) ----

def b64(raw):
    return base64.b64encode(raw).decode()


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class Key:
    """An Ed25519 key an attacker (or an honest party) signs with here."""

    def __init__(self, name, seed=None):
        self.name = name
        self.seed = seed or os.urandom(32)
        self.sk = Ed25519PrivateKey.from_private_bytes(self.seed)
        self.pk = self.sk.public_key().public_bytes(Encoding.Raw,
                                                    PublicFormat.Raw)

    def key_id(self, typ, name=None):
        name = self.name if name is None else name
        return hashlib.sha256(name.encode() + b"\n" + bytes([typ]) +
                              self.pk).digest()[:4]

    def vkey(self, typ):
        return "%s+%s+%s" % (self.name, self.key_id(typ).hex(),
                             b64(bytes([typ]) + self.pk))

    def paserk(self):
        return "k4.secret." + b64url(self.seed + self.pk)

    def write_secret(self, path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.paserk() + "\n")

    def sign(self, msg):
        return self.sk.sign(msg)

    def note_line(self, text, typ=0x01, name=None, key_id=None):
        """A signed-note signature line over text (type 0x01 by default)."""
        name = self.name if name is None else name
        kid = self.key_id(typ, name) if key_id is None else key_id
        return "%s %s %s\n" % (DASH, name, b64(kid + self.sign(text.encode())))

    def cosig_line(self, text, ts=None, name=None, key_id=None, msg=None):
        """A cosignature/v1 line over text at ts (default now)."""
        ts = int(time.time()) if ts is None else ts
        name = self.name if name is None else name
        kid = self.key_id(0x04, name) if key_id is None else key_id
        if msg is None:
            msg = ("cosignature/v1\ntime %d\n" % ts).encode() + text.encode()
        raw = kid + ts.to_bytes(8, "big") + self.sign(msg)
        return "%s %s %s\n" % (DASH, name, b64(raw))


def checkpoint_text(origin, size, root, extra=""):
    return "%s\n%d\n%s\n%s" % (origin, size, b64(root), extra)


def cosig_ok(line, text, key):
    """True when line is key's valid cosignature/v1 of text (checked here,
    from the spec, not with our C)."""
    m = re.match("^%s (\\S+) ([A-Za-z0-9+/=]+)\n?$" % DASH, line)
    if not m or m.group(1) != key.name:
        return False
    raw = base64.b64decode(m.group(2))
    if len(raw) != 76 or raw[:4] != key.key_id(0x04):
        return False
    ts = int.from_bytes(raw[4:12], "big")
    if ts == 0 or ts >= 2 ** 63:
        return False
    msg = ("cosignature/v1\ntime %d\n" % ts).encode() + text.encode()
    try:
        Ed25519PublicKey.from_public_bytes(key.pk).verify(raw[12:], msg)
    except InvalidSignature:
        return False
    return True


def log_signed(note, key):
    """True when note (text, blank line, signature lines) carries a valid
    signed-note signature by key (type 0x01, name key.name) over its text
    (checked here, from the spec)."""
    text, sep, sigs = note.rpartition("\n\n")
    if not sep:
        return False
    text += "\n"
    pub = Ed25519PublicKey.from_public_bytes(key.pk)
    for line in sigs.split("\n"):
        m = re.match("^%s (\\S+) ([A-Za-z0-9+/=]+)$" % DASH, line)
        if not m or m.group(1) != key.name:
            continue
        raw = base64.b64decode(m.group(2))
        if len(raw) != 68 or raw[:4] != key.key_id(0x01):
            continue
        try:
            pub.verify(raw[4:], text.encode())
            return True
        except InvalidSignature:
            pass
    return False


class Log:
    """A transparency log an attacker runs with the real log key: leaves,
    signed checkpoints, consistency proofs, add-checkpoint bodies."""

    def __init__(self, key, origin=ORIGIN, leaves=64, tag="honest",
                 prefix_of=None, prefix=0):
        self.key, self.origin = key, origin
        head = prefix_of.hashes[:prefix] if prefix_of else []
        self.hashes = head + [leaf_hash(("%s-%d" % (tag, i)).encode())
                              for i in range(len(head), leaves)]

    def root(self, size):
        return mth(self.hashes[:size])

    def text(self, size, extra=""):
        return checkpoint_text(self.origin, size, self.root(size), extra)

    def note(self, size, extra=""):
        text = self.text(size, extra)
        return text + "\n" + self.key.note_line(text)

    def proof(self, old, size):
        return consistency_proof(old, self.hashes[:size])

    def body(self, old, size, proof=None, note=None):
        proof = self.proof(old, size) if proof is None else proof
        note = self.note(size) if note is None else note
        return ("old %d\n" % old + "".join(b64(h) + "\n" for h in proof) +
                "\n" + note).encode()


# ---- the witness server ----

class Witness:
    """`intentgate witness serve` in its own directory."""

    def __init__(self, logs, rate=1000, name=WNAME, root=None,
                 more_keys=()):
        self.root = root or tempfile.mkdtemp(prefix="ig-wit-attack-")
        self.key = Key(name)
        self.key_path = os.path.join(self.root, "witness.key")
        self.key.write_secret(self.key_path)
        self.db = os.path.join(self.root, "state.db")
        self.conf = os.path.join(self.root, "witness.conf")
        text = ("[witness]\nname = %s\nkey = %s\nlisten = 127.0.0.1:0\n"
                "database = %s\nrate = %d\n" % (name, self.key_path, self.db,
                                                rate))
        for log in logs:
            text += "\n[log %s]\nkey = %s\n" % (
                log.origin, " ".join([log.key.vkey(1)] +
                                     [k.vkey(1) for k in more_keys]))
        with open(self.conf, "w") as f:
            f.write(text)
        self.proc = None
        self.runs = 0
        self.start()

    def start(self):
        self.runs += 1
        self.log_path = os.path.join(self.root, "witness-%d.log" % self.runs)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [BIN, "witness", "serve", "--config", self.conf],
            stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.time() + 30
        self.port = None
        while self.port is None:
            if self.proc.poll() is not None:
                raise AssertionError("witness exited %s: %s" % (
                    self.proc.returncode, self.log()))
            for line in self.log().splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("event") == "witness.started":
                    self.port = int(rec["port"])
                    self.vkey = rec.get("vkey")
            if time.time() > deadline:
                raise AssertionError("witness never started: " + self.log())
            time.sleep(0.02)
        if self.vkey != self.key.vkey(0x04):
            raise AssertionError("witness.started names vkey %r, not %r" %
                                 (self.vkey, self.key.vkey(0x04)))

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def request(self, method, path, body=None, headers=None, timeout=30,
                source="127.0.0.1"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout,
                                          source_address=(source, 0))
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return (resp.status, resp.read(),
                    {k.lower(): v for k, v in resp.getheaders()})
        finally:
            conn.close()

    def add(self, body, **kw):
        return self.request("POST", "/add-checkpoint", body, **kw)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        log = self.log()
        if "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("witness: " + log[-4000:])

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def size(self, log):
        """The size the witness holds for log: asked the documented way
        (old 0 on a checkpoint of size 1 answers 409 with it, or 200 when
        it holds nothing - which then makes it hold 1)."""
        st, body, h = self.add(log.body(0, 1))
        if st == 200:
            return 1
        if st != 409:
            raise AssertionError("asking the size: %d %r" % (st, body))
        return int(body.decode())

    def show(self):
        p = subprocess.run([BIN, "witness", "show", "--config", self.conf],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError("witness show: " + p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines() if line]


def cosig_lines(body):
    text = body.decode("utf-8")
    assert text.endswith("\n"), text
    return [line + "\n" for line in text.split("\n")[:-1]]


class WitnessBase(unittest.TestCase):
    rate = 1000

    def setUp(self):
        self.logkey = Key(ORIGIN)
        self.log = Log(self.logkey)
        self.w = Witness([self.log], rate=self.rate)

    def tearDown(self):
        try:
            self.w.stop()
        finally:
            self.w.cleanup()

    def cosigned(self, old, size, log=None):
        """Submit log's checkpoint of size from old; assert a valid
        cosignature of exactly that text comes back."""
        log = log or self.log
        st, body, h = self.w.add(log.body(old, size))
        self.assertEqual(st, 200, body)
        lines = cosig_lines(body)
        self.assertTrue(any(cosig_ok(l, log.text(size), self.w.key)
                            for l in lines), body)
        return body

    def refused(self, body, codes, what):
        st, got, h = self.w.add(body)
        self.assertNotEqual(st, 200, "%s was cosigned: %r" % (what, got))
        self.assertIn(st, codes, "%s: %d %r" % (what, st, got))
        return st, got, h

    def holds(self, size, log=None):
        """The witness still holds exactly size (and the honest root):
        re-submitting log's size from size is cosigned."""
        log = log or self.log
        self.assertEqual(self.w.size(log), size)
        self.cosigned(size, size, log)


# ---- attacker 2: the network, against the witness ----

class WitnessProtocol(WitnessBase):
    def test_baseline_extension_and_409(self):
        """The honest path the attacks below depart from."""
        self.cosigned(0, 3)
        st, body, h = self.w.add(self.log.body(0, 5))
        self.assertEqual(st, 409, body)
        self.assertEqual(body, b"3\n")
        self.assertTrue(h.get("content-type", "").startswith(SIZE_CTYPE), h)
        self.cosigned(3, 9)
        st, body, h = self.w.request("GET", "/%s/checkpoint" % hashlib.sha256(
            ORIGIN.encode()).hexdigest())
        self.assertEqual(st, 200, body)
        note = body.decode()
        self.assertTrue(note.startswith(self.log.text(9) + "\n"), note)
        self.assertTrue(any(cosig_ok(l, self.log.text(9), self.w.key)
                            for l in cosig_lines(body)), note)

    def test_served_checkpoint_carries_the_log_signature(self):
        """What GET <hash>/checkpoint serves is a checkpoint a monitor can
        check: the log's own signature is on it, beside the witness's."""
        for size in (3, 7, 12, 20):  # several: one signature may lack + /
            self.cosigned(0 if size == 3 else prev, size)
            prev = size
            st, body, _ = self.w.request(
                "GET", "/%s/checkpoint" % hashlib.sha256(
                    ORIGIN.encode()).hexdigest())
            self.assertEqual(st, 200, body)
            self.assertTrue(log_signed(body.decode(), self.logkey),
                            "served without the log's signature:\n%s"
                            % body.decode())

    def test_replayed_old_checkpoints_are_not_cosigned(self):
        self.cosigned(0, 4)
        self.cosigned(4, 8)
        # The size-4 note again, from every old an attacker might try.
        self.refused(self.log.body(4, 4), (409,), "a replay from old 4")
        self.refused(self.log.body(8, 4, proof=[]), (400,),
                     "a replay from old 8 (old > size)")
        self.refused(self.log.body(0, 4), (409,), "a replay from old 0")
        self.holds(8)

    def test_rollback_and_fork_races_cosign_one(self):
        """Concurrent requests from the same old, with different valid
        extensions and a validly signed fork: one wins; the witness never
        cosigns two roots at one size nor goes back."""
        fork = Log(self.logkey, tag="fork", prefix_of=self.log, prefix=4)
        self.assertEqual(fork.root(4), self.log.root(4))
        self.cosigned(0, 4)
        old, won = 4, {}
        for rnd in range(3):
            jobs = []
            for s in range(old + 1, old + 13):
                jobs.append((self.log, s))
                jobs.append((fork, s))
            results = parallel_posts(self.w, [
                lg.body(old, s) for lg, s in jobs])
            wins = [(jobs[i], b) for i, (st, b, _) in enumerate(results)
                    if st == 200]
            self.assertEqual(len(wins), 1, "round %d: %d cosigned from old "
                             "%d: %r" % (rnd, len(wins), old,
                                         [(j[1], b) for j, b in wins]))
            for i, (st, b, _) in enumerate(results):
                self.assertIn(st, (200, 409, 422), b)
            (lg, s), _ = wins[0]
            self.assertNotIn(s, won)
            won[s] = lg.root(s)
            self.assertEqual(self.w.size(lg), s)
            old = s
            if lg is fork:
                break  # the honest log is now a fork for the witness
        # Never back: everything below what it holds is refused.
        winner = fork if fork.root(old) == won[old] else self.log
        for s in range(1, old):
            st, b, _ = self.w.add(winner.body(s, old))
            self.assertEqual(st, 409, b)
            self.refused(winner.body(old, s, proof=[]), (400,),
                         "a smaller size after a bigger one")

    def test_fork_resigned_with_the_log_key_is_refused_and_recorded(self):
        self.cosigned(0, 8)
        fork = Log(self.logkey, tag="fork", prefix_of=self.log, prefix=5)
        # Same size, other root: old = size with a different root.
        self.refused(fork.body(8, 8), (409, 422), "a fork at equal size")
        # Bigger, with the fork's own (valid for the fork) proof.
        self.refused(fork.body(8, 12), (422,), "a fork with its own proof")
        # Bigger, with the honest proof (which fits the honest tree only).
        self.refused(fork.body(8, 12, proof=self.log.proof(8, 12)), (422,),
                     "a fork with the honest proof")
        # Bigger, with made-up hashes of the right count.
        self.refused(fork.body(8, 12, proof=[os.urandom(32) for _ in
                                             self.log.proof(8, 12)]),
                     (422,), "a fork with a forged proof")
        self.holds(8)
        ev = json.dumps(self.w.show())
        self.assertIn(b64(fork.root(12)), ev, "no evidence of the fork")

    def test_fork_evidence_carries_the_log_signature(self):
        """Evidence of a fork is worth something only if it shows the log
        signed the fork: the kept note must carry the log's signature."""
        self.cosigned(0, 8)
        kept = []
        for n in range(4):  # several forks: one signature may lack + /
            fork = Log(self.logkey, tag="fork%d" % n, prefix_of=self.log,
                       prefix=5)
            self.refused(fork.body(8, 8), (409, 422), "a fork at equal size")
            kept.append(fork)
        rows = [r for r in self.w.show() if r.get("kind") == "evidence"]
        for fork in kept:
            mine = [r for r in rows if b64(fork.root(8)) in
                    json.dumps(r)]
            self.assertEqual(len(mine), 1, rows)
            notes = [v for v in mine[0].values() if isinstance(v, str) and
                     v.startswith(fork.text(8))]
            self.assertEqual(len(notes), 1, mine[0])
            self.assertTrue(log_signed(notes[0], self.logkey),
                            "evidence without the log's signature: %r"
                            % notes[0])

    def test_replayed_rollbacks_do_not_crowd_out_fork_evidence(self):
        """Anyone can collect the log's signed checkpoints (a witness's GET
        <hash>/checkpoint serves each latest one: polled once a minute, a
        thousand in a day) and replay them below the witness's size: each
        is refused (400) and may be kept as rollback evidence - but such a
        flood must not leave the witness unable to keep the evidence of a
        real fork afterwards (the evidence cap is 1000 rows per origin).
        The same checkpoint with its signature line repeated is one row."""
        big = Log(self.logkey, leaves=1100)
        top = 1060
        self.cosigned(0, top, big)
        text = big.text(5)
        line = self.logkey.note_line(text)
        for k in (1, 2, 3):
            st, got, _ = self.w.add(
                ("old %d\n\n%s\n%s" % (top, text, line * k)).encode())
            self.assertEqual(st, 400, got)
        rows = [e for e in self.w.show() if b64(big.root(5)) in json.dumps(e)]
        self.assertLessEqual(len(rows), 1, rows)
        hashes = big.hashes
        for size in range(1, top):
            t = checkpoint_text(ORIGIN, size, mth(hashes[:size]))
            st, got, _ = self.w.add(("old %d\n\n%s\n%s" % (
                top, t, self.logkey.note_line(t))).encode())
            self.assertEqual(st, 400, got)
        fork = Log(self.logkey, leaves=1100, tag="fork", prefix_of=big,
                   prefix=1000)
        self.refused(fork.body(top, top), (409, 422), "a fork at equal size")
        ev = json.dumps(self.w.show())
        self.assertTrue(b64(fork.root(top)) in ev, "the fork's evidence was "
                        "not kept after a flood of replayed old checkpoints")
        self.holds(top, big)

    def test_proof_with_hashes_added_or_removed(self):
        """A valid proof with one more hash, one less, two swapped, or
        padded to 63: RFC 9162 consumes exactly the proof; none passes."""
        self.cosigned(0, 6)
        good = self.log.proof(6, 27)
        self.assertGreaterEqual(len(good), 3)
        variants = {
            "one more": good + [os.urandom(32)],
            "a copy of the last": good + good[-1:],
            "one less": good[:-1],
            "two swapped": [good[1], good[0]] + good[2:],
            "padded to 63": good + [os.urandom(32)] * (63 - len(good)),
            "empty": [],
        }
        for what, proof in variants.items():
            self.refused(self.log.body(6, 27, proof=proof), (422,), what)
        # Equal sizes take the empty proof only.
        self.refused(self.log.body(6, 6, proof=[self.log.root(6)]), (422,),
                     "a proof between equal sizes")
        self.holds(6)

    def test_size_zero_with_a_bad_root(self):
        text = checkpoint_text(ORIGIN, 0, os.urandom(32))
        note = text + "\n" + self.logkey.note_line(text)
        self.refused(("old 0\n\n" + note).encode(), (422,),
                     "size 0 with a root that is not SHA-256('')")
        self.refused(self.log.body(0, 3, proof=[os.urandom(32)]), (422,),
                     "a non-empty proof from old 0")
        self.cosigned(0, 2)  # it still holds nothing

    def test_extension_lines_are_never_partly_cosigned(self):
        text = self.log.text(3, extra="ext line one\n")
        note = text + "\n" + self.logkey.note_line(text)
        st, body, _ = self.w.add(("old 0\n\n" + note).encode())
        if st == 200:  # allowed by the spec: then it covers every line
            self.assertTrue(any(cosig_ok(l, text, self.w.key)
                                for l in cosig_lines(body)), body)
            self.assertFalse(any(cosig_ok(l, self.log.text(3), self.w.key)
                                 for l in cosig_lines(body)), body)
        else:
            self.assertIn(st, (400, 422), body)


def parallel_posts(w, bodies):
    out = [None] * len(bodies)
    gate = threading.Barrier(len(bodies))

    def run(i):
        gate.wait()
        try:
            out[i] = w.add(bodies[i], timeout=60)
        except OSError as e:
            out[i] = (0, repr(e).encode(), {})

    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(bodies))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


class WitnessMutations(WitnessBase):
    """Honest requests with random bytes flipped, cut, doubled or put in
    (a fixed seed, so a failure repeats): the witness never fails (5xx)
    nor dies, and every 200 cosigns a checkpoint text the log signed, at
    the size and root of the honest log."""

    def test_mutated_requests(self):
        rng = random.Random(18)
        self.cosigned(0, 2)
        old = 2
        texts = {self.log.text(n) for n in range(1, 65)}
        alphabet = b"\x00\n\r =+/-_\xe2\x80\x94AZaz09\xff"
        seen = {}
        for i in range(1500):
            size = min(64, old + 1 + rng.randrange(4))
            body = bytearray(self.log.body(old, size))
            for _ in range(1 + rng.randrange(3)):
                k = rng.randrange(len(body))
                op = rng.randrange(4)
                if op == 0:
                    body[k] ^= 1 << rng.randrange(8)
                elif op == 1:
                    del body[k:k + 1 + rng.randrange(8)]
                elif op == 2:
                    body[k:k] = body[k:k + rng.randrange(16)]
                else:
                    body[k:k] = bytes([rng.choice(alphabet)])
            st, got, _ = self.w.add(bytes(body))
            self.assertLess(st, 500, "mutation %d: %d %r" % (i, st, got))
            if st == 200:
                ok = [t for t in texts for l in cosig_lines(got)
                      if cosig_ok(l, t, self.w.key)]
                self.assertTrue(ok, "mutation %d cosigned a text the log "
                                "did not sign: %r" % (i, bytes(body)))
                old = int(ok[0].split("\n")[1])
            elif st == 409:
                old = int(got)  # the witness's size: resend from it
            seen[st] = seen.get(st, 0) + 1
            if old == 64:
                break
        self.assertEqual(self.w.proc.poll(), None, self.w.log()[-2000:])
        # Some mutations land in places that do not matter (a signature
        # of another key, the order of nothing): the honest path ran too.
        self.assertGreater(seen.get(200, 0), 0, seen)
        self.assertGreater(seen.get(400, 0), 100, seen)
        held = self.w.size(self.log)
        self.cosigned(held, held)  # the honest root at the size it holds


class WitnessTwoLogs(unittest.TestCase):
    """One witness, two logs: neither log's key speaks for the other."""

    def test_one_log_key_does_not_move_the_other_log(self):
        ka, kb = Key("a.attack.example/log"), Key("b.attack.example/log")
        la, lb = Log(ka, origin=ka.name), Log(kb, origin=kb.name)
        w = Witness([la, lb])
        try:
            st, body, _ = w.add(la.body(0, 4))
            self.assertEqual(st, 200, body)
            st, body, _ = w.add(lb.body(0, 2))
            self.assertEqual(st, 200, body)
            # b's key signing a's origin (under b's name, and under a's).
            for key in (kb, Key(ka.name, seed=kb.seed)):
                text = checkpoint_text(ka.name, 9, os.urandom(32))
                note = text + "\n" + key.note_line(text)
                st, body, _ = w.add(("old 4\n\n" + note).encode())
                self.assertEqual(st, 403, body)
            self.assertEqual(w.size(la), 4)
            self.assertEqual(w.size(lb), 2)
        finally:
            w.stop()
            w.cleanup()


class WitnessRotation(unittest.TestCase):
    """A log with two trusted keys while it rotates: either key signs, and
    a failing line by either trusted key refuses the note, whatever its
    length."""

    def test_a_bad_line_by_the_other_trusted_key(self):
        old_key, new_key = Key(ORIGIN), Key(ORIGIN)
        log = Log(old_key)
        w = Witness([log], more_keys=[new_key])
        try:
            st, body, _ = w.add(log.body(0, 3))
            self.assertEqual(st, 200, body)
            text = log.text(5)
            proof = "".join(b64(h) + "\n" for h in log.proof(3, 5))
            good = new_key.note_line(text)  # the new key alone: fine
            st, body, _ = w.add(("old 3\n" + proof + "\n" + text + "\n" +
                                 good).encode())
            self.assertEqual(st, 200, body)
            text = log.text(8)
            proof = "".join(b64(h) + "\n" for h in log.proof(5, 8))
            bad = [
                new_key.note_line(log.text(7)),  # 68 bytes, wrong text
                "%s %s %s\n" % (DASH, ORIGIN, b64(new_key.key_id(1) +
                                                   os.urandom(200))),
                "%s %s %s\n" % (DASH, ORIGIN, b64(new_key.key_id(1))),
            ]
            for line in bad:
                for order in ((old_key.note_line(text), line),
                              (line, old_key.note_line(text))):
                    st, body, _ = w.add(("old 5\n" + proof + "\n" + text +
                                         "\n" + "".join(order)).encode())
                    self.assertIn(st, (400, 403), "a line of %d bytes: "
                                  "%d %r" % (len(line), st, body))
            self.assertEqual(w.size(log), 5)
        finally:
            w.stop()
            w.cleanup()


class WitnessParser(WitnessBase):
    """Malformed add-checkpoint bodies: never cosigned, the state kept."""

    def setUp(self):
        super().setUp()
        self.cosigned(0, 5)

    def bad(self, body, codes=(400,), what=None):
        if isinstance(body, str):
            body = body.encode()
        self.refused(body, codes, what or repr(body[:80]))

    def proof_lines(self, old=5, size=13):
        return [b64(h) for h in self.log.proof(old, size)]

    def test_old_line(self):
        note = self.log.note(13)
        proof = "".join(p + "\n" for p in self.proof_lines())
        for old in ("005", "+5", "-1", " 5", "5 ", "0x5", "5.0", "",
                    "18446744073709551616", "99999999999999999999999",
                    "-18446744073709551611", "\u0665"):
            self.bad("old %s\n%s\n%s" % (old, proof, note),
                     what="old %r" % old)
        for head in ("Old 5\n", "old  5\n", "old\t5\n", "old 5\r\n",
                     "\nold 5\n", " old 5\n", "old=5\n", "old 5"):
            self.bad(head + proof + "\n" + note, what=repr(head))
        # 2^64 - 1 parses: it is old > size.
        self.bad("old 18446744073709551615\n\n" + note, what="old 2^64-1")
        self.holds(5)

    def test_proof_lines(self):
        note = self.log.note(13)
        good = self.proof_lines()

        def body(lines, sep="\n"):
            return "old 5" + sep + "".join(l + sep for l in lines) + sep + \
                note

        alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
                "0123456789+/"
        # Non-canonical base64: 32 bytes end in a character carrying 4
        # data bits and 2 zero bits; set one of those (the same bytes to a
        # lax decoder).
        c = good[0]
        noncanon = c[:42] + alpha[alpha.index(c[42]) | 1] + "="
        self.assertNotEqual(noncanon, c)
        self.assertEqual(base64.b64decode(noncanon), base64.b64decode(c))
        cases = {
            "64 lines": good + [b64(os.urandom(32))] * (64 - len(good)),
            "non-canonical base64": [noncanon] + good[1:],
            "no padding": [c.rstrip("=")] + good[1:],
            "double padding": [c + "="] + good[1:],
            "url alphabet": ["-" + c[1:]] + good[1:],
            "a short hash": [b64(os.urandom(31))] + good[1:],
            "a long hash": [b64(os.urandom(33))] + good[1:],
            "a space": [" " + c] + good[1:],
            "a trailing space": [c + " "] + good[1:],
            "a NUL": [c[:10] + "\0" + c[11:]] + good[1:],
            "an empty line inside": good[:1] + [""] + good[1:],
        }
        for what, lines in cases.items():
            st, got, _ = self.w.add(body(lines).encode())
            self.assertNotEqual(st, 200, "%s was cosigned" % what)
            # The blank line ends the proof: the rest is read as a note
            # whose "origin" is a hash.
            codes = (404,) if what == "an empty line inside" else (400, 422)
            self.assertIn(st, codes, "%s: %d %r" % (what, st, got))
        self.bad(body(good, "\r\n"), (400,), "CRLF in the request lines")
        self.bad(body(good).replace("\n", "\r\n"), (400, 403), "all CRLF")
        self.holds(5)

    def test_no_separator_or_no_note(self):
        good = "".join(p + "\n" for p in self.proof_lines())
        self.bad("old 5\n" + good + self.log.note(13), what="no blank line")
        self.bad("old 5\n" + good + "\n", what="no note")
        self.bad("", what="empty")
        self.bad("old 5\n", what="only old")
        self.bad("\0" * 100, what="NULs")
        self.bad(("old 5\n" + good + "\n" + self.log.note(13)).replace(
            ORIGIN, ORIGIN + "\0", 1), (400, 403, 404), "NUL in the origin")
        self.holds(5)

    def test_signatures(self):
        key = self.logkey
        text = self.log.text(13)
        proof = "".join(p + "\n" for p in self.proof_lines())

        def post(sigs, codes, what):
            self.bad("old 5\n" + proof + "\n" + text + "\n" + sigs, codes,
                     what)

        other = Key(ORIGIN)  # same name, another key: another key id
        post(other.note_line(text), (403,), "another key by the log's name")
        post(key.note_line(text, key_id=other.key_id(1)), (403,),
             "the log's key under another key id")
        post(other.note_line(text, key_id=key.key_id(1)), (403,),
             "the log's key id, another key's signature")
        post(key.note_line(self.log.text(12)), (403,),
             "a signature of another checkpoint")
        post(key.cosig_line(text, name=ORIGIN, key_id=key.key_id(1)),
             (403, 400), "a cosignature-shaped line as the log's")
        post(key.note_line(text, typ=0x04), (403,),
             "the log's key, type 0x04 key id")
        # Key confusion: the witness's own key, as the log's name.
        wk = Key(ORIGIN, seed=self.w.key.seed)
        post(wk.note_line(text), (403,),
             "the witness's key signing as the log")
        post(self.w.key.cosig_line(text), (403,),
             "the witness's own cosignature as the only signature")
        # 200 signature lines: over the note's limit.
        many = "".join(Key("k%d.example" % i).note_line(text)
                       for i in range(199))
        post(many + key.note_line(text), (400, 403, 413), "200 signatures")
        # The right signature, then one of the log's that fails.
        post(key.note_line(text) + key.note_line(self.log.text(12)),
             (403,), "a second, failing signature by the log's key")
        # 16 unknown signatures and the log's: the spec wants it accepted.
        some = "".join(Key("k%d.example" % i).note_line(text)
                       for i in range(16))
        st, got, _ = self.w.add(("old 5\n" + proof + "\n" + text + "\n" +
                                 some + key.note_line(text)).encode())
        self.assertEqual(st, 200, got)

    def test_origins(self):
        """The log's valid signature on a note naming another origin."""
        proof = "".join(p + "\n" for p in self.proof_lines())
        for origin, codes in (("log.attack.example/aud\x01it",
                               (400, 403, 404)),
                              ("log.attack.example/aud\x7fit",
                               (400, 403, 404)),
                              ("log.attack.example/other", (403, 404)),
                              (ORIGIN + " ", (400, 403, 404)),
                              (ORIGIN.upper(), (403, 404))):
            text = checkpoint_text(origin, 13, self.log.root(13))
            for key in (self.logkey, Key(origin.strip(),
                                         seed=self.logkey.seed)):
                note = text + "\n" + key.note_line(text)
                self.bad("old 5\n" + proof + "\n" + note, codes,
                         repr(origin))
        self.holds(5)


class WitnessConfig(unittest.TestCase):
    """A [log] whose key is not the log's: the witness refuses to start
    (and the same config with the right key starts: the control)."""

    def starts(self, log_section, key_file=None):
        """key_file(root) may replace the witness key file w.key."""
        root = tempfile.mkdtemp(prefix="ig-wit-conf-")
        try:
            wk = Key(WNAME)
            wk.write_secret(os.path.join(root, "w.key"))
            if key_file:
                key_file(root)
            conf = os.path.join(root, "w.conf")
            with open(conf, "w") as f:
                f.write("[witness]\nname = %s\nkey = %s/w.key\n"
                        "listen = 127.0.0.1:0\ndatabase = %s/s.db\n\n%s"
                        % (WNAME, root, root, log_section))
            p = subprocess.Popen([BIN, "witness", "serve", "--config", conf],
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL)
            err = b""
            try:
                for line in iter(p.stderr.readline, b""):
                    err += line
                    if b'"witness.started"' in line:
                        p.send_signal(signal.SIGTERM)
                        p.communicate(timeout=60)
                        return True
                self.assertNotEqual(p.wait(timeout=60), 0, err)
                self.assertRegex(err, rb"w\.(conf|key)")  # names the file
                return False
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                p.stderr.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def test_log_key_checks(self):
        k = Key(ORIGIN)
        self.assertTrue(self.starts("[log %s]\nkey = %s\n"
                                    % (ORIGIN, k.vkey(0x01))))
        self.assertFalse(self.starts("[log %s]\nkey = %s\n"
                                     % (ORIGIN, k.vkey(0x04))))
        self.assertFalse(self.starts("[log other.example/log]\nkey = %s\n"
                                     % k.vkey(0x01)))
        bad_id = k.vkey(0x01).split("+")
        bad_id[1] = "%08x" % (int(bad_id[1], 16) ^ 1)
        self.assertFalse(self.starts("[log %s]\nkey = %s\n"
                                     % (ORIGIN, "+".join(bad_id))))
        self.assertFalse(self.starts(""))  # no [log] at all

    def test_witness_key_file_must_be_private(self):
        good = "[log %s]\nkey = %s\n" % (ORIGIN, Key(ORIGIN).vkey(0x01))

        def readable(root):
            os.chmod(os.path.join(root, "w.key"), 0o644)

        def symlink(root):
            os.rename(os.path.join(root, "w.key"),
                      os.path.join(root, "real.key"))
            os.symlink(os.path.join(root, "real.key"),
                       os.path.join(root, "w.key"))

        def public_half(root):
            os.unlink(os.path.join(root, "w.key"))
            with open(os.path.join(root, "w.key"), "w") as f:
                f.write("k4.public." + b64url(Key(WNAME).pk) + "\n")
            os.chmod(os.path.join(root, "w.key"), 0o600)

        self.assertTrue(self.starts(good))
        for fn in (readable, symlink, public_half):
            self.assertFalse(self.starts(good, fn), fn.__name__)


class WitnessResources(WitnessBase):
    def test_huge_bodies(self):
        self.cosigned(0, 2)
        # A declared length far over the limit: refused before reading.
        conn = socket.create_connection(("127.0.0.1", self.w.port), 10)
        conn.sendall(b"POST /add-checkpoint HTTP/1.1\r\nHost: w\r\n"
                     b"Content-Length: 1000000000000\r\n\r\n")
        conn.settimeout(10)
        try:
            head = conn.recv(4096)
        except ConnectionResetError:
            head = b""  # hung up without reading: fine
        conn.close()
        self.assertTrue(head == b"" or head.startswith(b"HTTP/1.1 413"),
                        head[:200])
        # 8 MB sent for real, chunked (no length): never read into memory
        # to the end, never cosigned.
        body = self.log.body(2, 3) + b"\n" * (8 << 20)
        try:
            st, got, _ = self.w.add(iter([body[i:i + 65536] for i in
                                          range(0, len(body), 65536)]))
            self.assertEqual(st, 413, got[:200])
        except (ConnectionError, OSError):
            pass  # the witness hung up: fine
        self.holds(2)

    def test_slowloris_does_not_starve_others(self):
        """More half-sent requests from one address than the witness takes
        connections in all: the per-address limit keeps room for others."""
        self.cosigned(0, 2)
        socks = []
        try:
            for i in range(300):
                try:
                    s = socket.create_connection(
                        ("127.0.0.1", self.w.port), 5,
                        source_address=("127.0.0.2", 0))
                    s.sendall(b"POST /add-checkpoint HTTP/1.1\r\nHost: w\r\n"
                              b"Content-Length: 50000\r\n\r\nold")
                except OSError:
                    continue  # refused or reset: the limit at work
                socks.append(s)
            self.assertGreater(len(socks), 0)
            t0 = time.monotonic()
            self.cosigned(2, 3)
            st, _, _ = self.w.request("GET", "/healthz", source="127.0.0.3")
            self.assertEqual(st, 200)
            self.assertLess(time.monotonic() - t0, 5.0,
                            "held connections slowed an honest client")
        finally:
            for s in socks:
                s.close()

    def test_kill9_mid_request_keeps_every_cosigned_size(self):
        log = Log(self.logkey, leaves=400)
        w = self.w
        acked = []
        stop = threading.Event()
        lock = threading.Lock()
        state = {"old": 0}

        def worker(k):
            size = 0
            while not stop.is_set():
                with lock:
                    old = state["old"]
                size = max(size + 1, old + 1 + k)
                if size > 400:
                    return
                try:
                    st, body, h = w.add(log.body(old, size), timeout=10)
                except OSError:
                    return
                if st == 200:
                    with lock:
                        acked.append(size)
                        state["old"] = max(state["old"], size)
                elif st == 409:
                    with lock:
                        state["old"] = max(state["old"], int(body))

        ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        wait_until(lambda: len(acked) >= 20, "20 cosignatures", 60)
        w.kill9()
        stop.set()
        for t in ts:
            t.join()
        top = max(acked)
        w.start()
        held = w.size(log)
        self.assertGreaterEqual(held, top, "the witness forgot a size it "
                                "cosigned before kill -9")
        st, body, _ = w.add(log.body(held, held))
        self.assertEqual(st, 200, "the persisted root is not the log's")


class WitnessRateLimit(WitnessBase):
    rate = 1

    def test_forwarded_headers_do_not_bypass_the_rate_limit(self):
        codes = []
        for i in range(12):
            st, _, h = self.w.add(
                b"old 0\n\nnot a note\n",
                headers={"X-Forwarded-For": "203.0.113.%d" % i,
                         "X-Real-IP": "198.51.100.%d" % i,
                         "Forwarded": "for=192.0.2.%d" % i})
            codes.append(st)
            if st == 429:
                self.assertIn("retry-after", h)
        self.assertGreaterEqual(codes.count(429), 6, codes)
        # Another client address is not throttled by the first.
        st, _, _ = self.w.add(b"old 0\n\nnot a note\n", source="127.0.0.9")
        self.assertNotEqual(st, 429)


# ---- attacker 3: a hostile witness, against the PDP ----

def sha256_hex(s):
    return hashlib.sha256(s.encode()).hexdigest()


class FakeWitness:
    """An HTTP server playing a witness; mode says how it answers."""

    def __init__(self, key):
        self.key = key
        self.mode = "honest"
        self.rng = random.Random(18)
        self.hits = {}
        self.texts = []
        self.lock = threading.Lock()
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n).decode("utf-8", "replace")
                with outer.lock:
                    mode = outer.mode
                    outer.hits[mode] = outer.hits.get(mode, 0) + 1
                try:
                    outer.answer(self, mode, body)
                except OSError:
                    pass

        class Quiet(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a client that hung up on a huge answer: expected

        self.httpd = Quiet(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def count(self, mode):
        with self.lock:
            return self.hits.get(mode, 0)

    @staticmethod
    def text_of(body):
        head, _, note = body.partition("\n\n")
        text, _, _ = note.rpartition("\n\n")
        return text + "\n"

    def reply(self, h, status, body, ctype="text/plain", extra=None):
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def answer(self, h, mode, body):
        text = self.text_of(body)
        origin, size, root = text.split("\n")[:3]
        other = checkpoint_text(origin, int(size), os.urandom(32))
        if mode == "honest":
            self.texts.append(text)
            self.reply(h, 200, self.key.cosig_line(text).encode())
        elif mode == "garbage":
            self.reply(h, 200, b"\x00\xff garbage \xe2\x80\x94 x y\n" * 50)
        elif mode == "huge":
            h.send_response(200)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", str(100 << 20))
            h.end_headers()
            line = self.key.cosig_line(text).encode()
            chunk = line * (65536 // len(line))
            for _ in range((100 << 20) // len(chunk)):
                h.wfile.write(chunk)
        elif mode == "endless":
            h.send_response(200)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", "100000")
            h.end_headers()
            for _ in range(600):
                h.wfile.write(b"\xe2")
                h.wfile.flush()
                time.sleep(0.1)
        elif mode == "lie409":
            self.reply(h, 409, b"1000000000000000000\n", SIZE_CTYPE)
        elif mode == "max409":
            self.reply(h, 409, b"18446744073709551615\n", SIZE_CTYPE)
        elif mode == "huge409":
            self.reply(h, 409, b"7" * (1 << 20) + b"\n", SIZE_CTYPE)
        elif mode == "other_checkpoint":
            self.reply(h, 200, self.key.cosig_line(other).encode())
        elif mode == "other_key":
            self.reply(h, 200, Key(self.key.name).cosig_line(text).encode())
        elif mode == "other_key_id":
            self.reply(h, 200, self.key.cosig_line(
                text, key_id=b"\x00\x01\x02\x03").encode())
        elif mode == "note_sig":  # a note signature (0x01 id), not a cosig
            self.reply(h, 200, self.key.note_line(text).encode())
        elif mode == "no_prefix":  # right id, signs the bare text
            self.reply(h, 200, self.key.cosig_line(
                text, msg=text.encode()).encode())
        elif mode == "ts_2_63":
            self.reply(h, 200, self.key.cosig_line(text, ts=2 ** 63).encode())
        elif mode == "silent":  # reads the request, never answers
            time.sleep(120)
        elif mode == "mutate":  # the honest line, bytes changed
            line = bytearray(self.key.cosig_line(text).encode())
            with self.lock:
                for _ in range(1 + self.rng.randrange(3)):
                    k = self.rng.randrange(len(line))
                    op = self.rng.randrange(3)
                    if op == 0:
                        line[k] ^= 1 << self.rng.randrange(8)
                    elif op == 1:
                        del line[k:k + 1 + self.rng.randrange(4)]
                    else:
                        line[k:k] = bytes([self.rng.randrange(256)])
            self.reply(h, 200, bytes(line))
        elif mode == "ts_zero":  # tlog-witness: MUST NOT be zero
            self.reply(h, 200, self.key.cosig_line(text, ts=0).encode())
        elif mode == "loop409":  # always "resend from 1"
            self.reply(h, 409, b"1\n", SIZE_CTYPE)
        elif mode == "redirect":
            self.reply(h, 307, b"", extra={
                "Location": self.redirect_to + "/add-checkpoint"})
        else:
            self.reply(h, 500, b"unknown mode\n")

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class PdpInstall:
    """A PDP with an [audit] log checkpointing every leaf and one
    [witness evil] pointing at a FakeWitness."""

    def __init__(self, witness_url=None, witness_vkey=None, wid="evil",
                 timeout_ms=1500, extra=""):
        self.root = tempfile.mkdtemp(prefix="ig-wit-pdp-")
        self.keys = os.path.join(self.root, "keys")
        os.mkdir(self.keys, 0o700)
        shutil.copytree(BUNDLE, os.path.join(self.root, "policies"))
        self.audit = Key("pdp.attack.example/audit")
        self.audit.write_secret(os.path.join(self.keys, "audit.key"))
        Key("grant").write_secret(os.path.join(self.keys, "signing.key"))
        self.tokens = {k: "igt_" + b64url(os.urandom(24))
                       for k in ("agent", "executor", "auditor")}
        self.env = {"INTENTGATE_AGENT_TOKEN": self.tokens["agent"],
                    "INTENTGATE_EXECUTOR_TOKEN": self.tokens["executor"],
                    "INTENTGATE_AUDITOR_TOKEN": self.tokens["auditor"]}
        self.wid = wid
        self.db = os.path.join(self.root, "intentgate.db")
        self.conf = os.path.join(self.root, "intentgate.conf")
        with open(self.conf, "w") as f:
            f.write(
                "listen = 127.0.0.1:0\ndatabase = %s\n"
                "signing_key = %s/signing.key\npolicy_dir = %s/policies\n"
                "\n[agent a]\ntenant = t\ntoken_sha256 = %s\n"
                "\n[executor e]\nactions = payments.\ntoken_sha256 = %s\n"
                "\n[auditor au]\ntoken_sha256 = %s\n"
                "\n[audit]\nname = %s\nkey = %s/audit.key\n"
                "checkpoint_every = 1\ncheckpoint_interval = 3600\n"
                % (self.db, self.keys, self.root,
                   sha256_hex(self.tokens["agent"]),
                   sha256_hex(self.tokens["executor"]),
                   sha256_hex(self.tokens["auditor"]), self.audit.name,
                   self.keys))
            f.write(extra)
            if witness_url:
                f.write("\n[witness %s]\nurl = %s\nkey = %s\n"
                        "timeout_ms = %d\nretry_ms = 100\n"
                        % (wid, witness_url, witness_vkey, timeout_ms))
        tmp = os.path.join(self.root, "run")
        os.mkdir(tmp)
        self.srv = Server.custom(self.conf, tmp, self.env, database=self.db)

    def decide(self, tag):
        t0 = time.monotonic()
        st, body, _ = self.srv.submit("payments.refund", "orders/%s" % tag,
                                      {"amount": 10, "currency": "EUR"})
        took = time.monotonic() - t0
        assert st == 201, body
        return took

    def cosig_rows(self):
        try:
            return self.srv.rows("SELECT * FROM cosignatures")
        except sqlite3.OperationalError as e:
            raise AssertionError("no cosignatures table: %s" % e)

    def metric(self, name):
        st, text, _ = self.srv.call("GET", "/metrics", raw_response=True)
        m = re.search(rb"^" + re.escape(name.encode()) +
                      rb'\{witness="' + self.wid.encode() +
                      rb'"[^}]*\} (\d+)', text, re.M)
        return int(m.group(1)) if m else None

    def checkpoint(self):
        st, body, _ = self.srv.call("GET", "/v1/audit/checkpoint",
                                    self.tokens["auditor"],
                                    raw_response=True)
        assert st == 200, body
        return body.decode()

    def close(self):
        rc = self.srv.stop()
        log = self.srv.log()
        shutil.rmtree(self.root, ignore_errors=True)
        if rc != 0 or "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("PDP exit %s: %s" % (rc, log[-4000:]))


class PdpWitnessConfig(unittest.TestCase):
    """[witness] sections that would point the PDP's client elsewhere than
    an HTTP witness, or at no witness key: the PDP refuses to start (and
    the same config with a good section starts: the control)."""

    def starts(self, url, vkey, more=""):
        """True when serve starts with this [witness] (and more config
        text; then stopped), False when it exits refusing."""
        root = tempfile.mkdtemp(prefix="ig-wit-pdpconf-")
        try:
            keys = os.path.join(root, "keys")
            os.mkdir(keys, 0o700)
            shutil.copytree(BUNDLE, os.path.join(root, "policies"))
            Key("a.attack.example/audit").write_secret(
                os.path.join(keys, "audit.key"))
            Key("grant").write_secret(os.path.join(keys, "signing.key"))
            conf = os.path.join(root, "intentgate.conf")
            with open(conf, "w") as f:
                f.write("listen = 127.0.0.1:0\ndatabase = %s/ig.db\n"
                        "signing_key = %s/signing.key\n"
                        "policy_dir = %s/policies\n"
                        "\n[agent a]\ntenant = t\ntoken_sha256 = %s\n"
                        "\n[audit]\nname = a.attack.example/audit\n"
                        "key = %s/audit.key\n"
                        "\n[witness w]\nurl = %s\nkey = %s\n%s"
                        % (root, keys, root, "0" * 64, keys, url, vkey,
                           more))
            p = subprocess.Popen([BIN, "serve", "--config", conf],
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL)
            err = b""
            try:
                for line in iter(p.stderr.readline, b""):
                    err += line
                    if b'"server.started"' in line:
                        p.send_signal(signal.SIGTERM)
                        p.communicate(timeout=60)
                        return True
                self.assertNotEqual(p.wait(timeout=60), 0, err)
                return False
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                p.stderr.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def test_refused(self):
        wk = Key("w.attack.example/w")
        self.assertTrue(self.starts("http://127.0.0.1:9", wk.vkey(0x04)))
        for url in ("file:///etc/passwd", "ftp://127.0.0.1/", "gopher://x/",
                    "127.0.0.1:8801", "http://", "dict://127.0.0.1:11211/",
                    "http://127.0.0.1:8801/\x7f"):
            self.assertFalse(self.starts(url, wk.vkey(0x04)), url)
        # A log key (type 01) is no witness key; nor a vkey whose id lies.
        self.assertFalse(self.starts("http://127.0.0.1:9", wk.vkey(0x01)))
        parts = wk.vkey(0x04).split("+")
        parts[1] = "%08x" % (int(parts[1], 16) ^ 1)
        self.assertFalse(self.starts("http://127.0.0.1:9", "+".join(parts)))

    def test_a_second_witness_under_the_first_ones_name(self):
        """A hostile witness that takes an honest one's key name (with its
        own key): its cosignatures would be stored under that name first
        and the honest witness's dropped (first put wins). Refused."""
        honest, other = Key("w.attack.example/w"), Key("w2.attack.example/w")
        thief = Key(honest.name)
        self.assertTrue(self.starts(
            "http://127.0.0.1:9", honest.vkey(0x04),
            "\n[witness w2]\nurl = http://127.0.0.1:10\nkey = %s\n"
            % other.vkey(0x04)))
        self.assertFalse(self.starts(
            "http://127.0.0.1:9", honest.vkey(0x04),
            "\n[witness w2]\nurl = http://127.0.0.1:10\nkey = %s\n"
            % thief.vkey(0x04)))


class HostileWitness(unittest.TestCase):
    def setUp(self):
        self.wkey = Key("evil.attack.example/w")
        self.fake = FakeWitness(self.wkey)
        self.fake.mode = "garbage"
        self.other = FakeWitness(self.wkey)  # the redirect's target
        self.other.mode = "honest"
        self.fake.redirect_to = self.other.url()
        self.pdp = PdpInstall(self.fake.url(), self.wkey.vkey(0x04))

    def tearDown(self):
        try:
            self.pdp.close()
        finally:
            self.fake.close()
            self.other.close()

    def stored_valid(self):
        """The stored cosignature rows, each checked against its
        checkpoint's text (from the checkpoints table) here."""
        rows = self.pdp.cosig_rows()
        for r in rows:
            note = self.pdp.srv.rows("SELECT note FROM checkpoints WHERE "
                                     "size = %d" % int(r["size"]))[0]["note"]
            text = note.partition("\n\n")[0] + "\n"
            self.assertTrue(cosig_ok(r["line"], text, self.wkey), r)
        return rows

    def attack(self, mode, event, hits=3):
        """The witness answers in mode while decisions go on: each stays
        fast, nothing is stored, event is logged; then the witness turns
        honest and a valid cosignature is stored (the control)."""
        self.fake.mode = mode
        slowest = 0.0
        i = 0
        deadline = time.time() + 60
        while self.fake.count(mode) < hits:
            slowest = max(slowest, self.pdp.decide("%s-%d" % (mode, i)))
            i += 1
            self.assertLess(time.time(), deadline, "the PDP never asked")
            time.sleep(0.05)
        for _ in range(5):
            slowest = max(slowest, self.pdp.decide("%s-x%d" % (mode, i)))
            i += 1
        self.assertLess(slowest, 1.0, "a decision took %.2fs" % slowest)
        self.assertEqual(self.pdp.cosig_rows(), [])
        self.assertEqual(self.pdp.metric("intentgate_witness_cosigned_size"),
                         0)
        self.assertNotIn(self.wkey.name, self.pdp.checkpoint())
        events = (event,) if isinstance(event, str) else event
        wait_until(lambda: any('"%s"' % e in self.pdp.srv.log()
                               for e in events),
                   "the PDP to log %s" % " or ".join(events))
        self.assertEqual(self.other.count("honest"), 0,
                         "the PDP followed a redirect")
        # The control: an honest answer is stored and served.
        self.fake.mode = "honest"
        self.pdp.decide("%s-honest" % mode)
        wait_until(self.pdp.cosig_rows, "a cosignature stored", 30)
        self.assertTrue(self.stored_valid())
        wait_until(lambda: (self.pdp.metric(
            "intentgate_witness_cosigned_size") or 0) > 0,
            "the cosigned size metric to move")

    def test_garbage(self):
        self.attack("garbage", "witness.bad_answer")

    def test_mutated_cosignatures(self):
        """Honest cosignature lines with random bytes changed: whatever the
        PDP stores verifies (a change in the base64's padding bits that a
        strict decoder refuses, or nothing, is all that may pass)."""
        self.fake.mode = "mutate"
        i = 0
        while self.fake.count("mutate") < 120:
            self.assertLess(self.pdp.decide("mut-%d" % i), 1.0)
            i += 1
            time.sleep(0.02)
        self.stored_valid()
        self.assertEqual(self.pdp.srv.proc.poll(), None)

    def test_silent_witness_does_not_hold_the_stop(self):
        """A witness that never answers, with a long timeout_ms: SIGTERM
        still stops the PDP promptly (its clients wait on the restart)."""
        self.pdp.close()
        self.fake.mode = "silent"
        self.pdp = PdpInstall(self.fake.url(), self.wkey.vkey(0x04),
                              timeout_ms=120000)
        self.pdp.decide("silent-0")
        wait_until(lambda: self.fake.count("silent") >= 1,
                   "a request to the silent witness")
        self.assertLess(self.pdp.decide("silent-1"), 1.0)
        t0 = time.monotonic()
        rc = self.pdp.srv.stop()
        took = time.monotonic() - t0
        self.assertEqual(rc, 0, self.pdp.srv.log()[-2000:])
        self.assertLess(took, 5.0, "the PDP took %.1fs to stop" % took)

    def test_huge_body(self):
        self.attack("huge", "witness.bad_answer", hits=2)

    def test_endless_body(self):
        self.attack("endless", "witness.unreachable", hits=2)

    def test_409_with_a_size_never_signed(self):
        self.attack("lie409", "witness.conflict")

    def test_409_with_2_64_minus_1(self):
        self.attack("max409", "witness.conflict")

    def test_409_huge(self):
        self.attack("huge409", "witness.bad_answer", hits=2)

    def test_cosignature_for_another_checkpoint(self):
        self.attack("other_checkpoint", "witness.bad_answer")

    def test_cosignature_by_another_key(self):
        self.attack("other_key", "witness.bad_answer")

    def test_cosignature_under_another_key_id(self):
        self.attack("other_key_id", "witness.bad_answer")

    def test_note_signature_instead_of_cosignature(self):
        self.attack("note_sig", "witness.bad_answer")

    def test_signature_without_the_cosignature_prefix(self):
        self.attack("no_prefix", "witness.bad_answer")

    def test_timestamp_2_63(self):
        self.attack("ts_2_63", "witness.bad_answer")

    def test_timestamp_zero(self):
        self.attack("ts_zero", "witness.bad_answer")

    def test_409_ping_pong_is_not_a_tight_loop(self):
        """A witness that always answers "resend from 1": the PDP resends
        once per attempt, then waits retry_ms (100 here), never spins."""
        self.fake.mode = "loop409"
        self.pdp.decide("pingpong-0")
        wait_until(lambda: self.fake.count("loop409") >= 2, "a resend")
        start = self.fake.count("loop409")
        t0 = time.monotonic()
        for i in range(10):
            self.assertLess(self.pdp.decide("pingpong-%d" % (i + 1)), 1.0)
        time.sleep(2.0)  # a rate is measured over time
        rate = (self.fake.count("loop409") - start) / (time.monotonic() - t0)
        self.assertLess(rate, 50, "%.0f requests/s to a witness answering "
                        "409 over and over" % rate)
        self.assertEqual(self.pdp.cosig_rows(), [])
        self.fake.mode = "honest"
        self.pdp.decide("pingpong-honest")
        wait_until(self.pdp.cosig_rows, "a cosignature stored", 30)
        self.assertTrue(self.stored_valid())

    def test_redirect_is_not_followed(self):
        self.attack("redirect", ("witness.refused", "witness.unreachable",
                                 "witness.bad_answer"))


class HostileWitnessName(unittest.TestCase):
    """A witness's operator picks its key name, and the PDP's auditors'
    page shows it: a name is any UTF-8 without spaces, '+' or control
    characters, so "<svg/onload=alert(1)>" is one. The page escapes it."""

    NAME = "<svg/onload=alert(1)>"
    PASSWORD = "correct horse battery staple"

    def test_auditors_page_escapes_the_witness_name(self):
        p = subprocess.run([BIN, "approver", "add", "audit-alice",
                            "--groups", "auditors"], capture_output=True,
                           text=True, input=self.PASSWORD + "\n", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        wkey = Key(self.NAME)
        fake = FakeWitness(wkey)
        try:
            pdp = PdpInstall(fake.url(), wkey.vkey(0x04), wid="w1",
                             extra="\n" + p.stdout)
            try:
                pdp.decide("name-0")
                wait_until(pdp.cosig_rows, "a cosignature stored", 30)
                body = self.audit_page(pdp.srv)
                self.assertNotIn(self.NAME, body)
                self.assertNotIn("<svg", body)
                self.assertIn("svg/onload=alert(1)", body)  # shown, escaped
            finally:
                pdp.close()
        finally:
            fake.close()

    def audit_page(self, srv):
        jar = {}

        def req(method, path, form=None):
            conn = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
            h = {}
            if jar:
                h["Cookie"] = "; ".join("%s=%s" % kv for kv in jar.items())
            data = None
            if form is not None:
                data = urllib.parse.urlencode(form).encode()
                h["Content-Type"] = "application/x-www-form-urlencoded"
            try:
                conn.request(method, path, body=data, headers=h)
                r = conn.getresponse()
                out = r.status, r.read().decode("utf-8", "replace")
                for line in r.msg.get_all("Set-Cookie") or []:
                    k, _, rest = line.partition("=")
                    jar[k] = rest.split(";", 1)[0]
                return out
            finally:
                conn.close()

        st, page = req("GET", "/ui/login")
        m = re.search(r'name="csrf" value="([^"]*)"', page)
        self.assertIsNotNone(m, page[:2000])
        st, _ = req("POST", "/ui/login", {
            "csrf": html.unescape(m.group(1)), "approver": "audit-alice",
            "password": self.PASSWORD})
        self.assertEqual(st, 303)
        st, page = req("GET", "/ui/audit")
        self.assertEqual(st, 200, page[:2000])
        return page


# ---- attacker 1: the operator, against `audit verify` ----

class OperatorFork(unittest.TestCase):
    """An honest log (a real PDP's export) cosigned by witnesses W1 and W2,
    then a fork re-signed with the real audit key."""

    @classmethod
    def setUpClass(cls):
        cls.w1 = Key("w1.attack.example/w")
        cls.w2 = Key("w2.attack.example/w")
        cls.pdp = PdpInstall()
        try:
            for i in range(6):
                cls.pdp.decide("op-%d" % i)
            cls.pdp.srv.stop()
            cls.work = tempfile.mkdtemp(prefix="ig-wit-op-")
            cls.leaves_path = os.path.join(cls.work, "leaves.jsonl")
            cps = os.path.join(cls.work, "cps.jsonl")
            p = subprocess.run([BIN, "audit", "export", "--db", cls.pdp.db,
                                "--format", "jsonl", "--checkpoints-out",
                                cps], capture_output=True, timeout=120)
            assert p.returncode == 0, p.stderr
            with open(cls.leaves_path, "wb") as f:
                f.write(p.stdout)
            cls.leaves = p.stdout.decode().split("\n")[:-1]
            with open(cps) as f:
                cls.cps = [json.loads(line) for line in f]
            assert len(cls.cps) >= 4, cls.cps
        except BaseException:
            shutil.rmtree(cls.pdp.root, ignore_errors=True)
            raise
        cls.audit = cls.pdp.audit
        cls.vkey = cls.audit.vkey(1)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.pdp.root, ignore_errors=True)
        shutil.rmtree(cls.work, ignore_errors=True)

    @staticmethod
    def bare(note):
        """The note up to and including the log's signature line."""
        text, _, sigs = note.partition("\n\n")
        return text + "\n\n" + sigs.split("\n")[0] + "\n"

    @staticmethod
    def text(note):
        return note.partition("\n\n")[0] + "\n"

    def write(self, name, cps, leaves=None):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            for c in cps:
                f.write(json.dumps({"size": c["size"], "note": c["note"]}) +
                        "\n")
        lpath = self.leaves_path
        if leaves is not None:
            lpath = os.path.join(self.work, name + ".leaves")
            with open(lpath, "w") as f:
                f.write("\n".join(leaves) + "\n")
        return lpath, path

    def verify(self, lpath, cpath, *extra):
        p = subprocess.run([BIN, "audit", "verify", "--leaves", lpath,
                            "--checkpoints", cpath, "--key", self.vkey] +
                           list(extra), capture_output=True, text=True,
                           timeout=120)
        return p.returncode, p.stdout + p.stderr

    def quorum(self, *keys, k=1):
        args = []
        for key in keys:
            args += ["--witness", key.vkey(0x04)]
        return args + ["--witness-quorum", str(k)]

    def cosigned(self, cps, *keys):
        out = []
        for c in cps:
            note = self.bare(c["note"])
            for key in keys:
                note += key.cosig_line(self.text(note))
            out.append({"size": c["size"], "note": note})
        return out

    def assert_fails(self, lpath, cpath, *extra):
        """Fails on the witnesses (the quorum, or a bad cosignature by a
        named witness), not on a usage error or anything else."""
        rc, out = self.verify(lpath, cpath, *extra)
        self.assertNotIn(rc, (0, 2), out)
        self.assertRegex(out, r"(?i)quorum[^\n]*not met|bad_cosignature", out)
        return out

    def test_honest_log_meets_the_quorum(self):
        """The control the attacks depart from."""
        cps = self.cosigned(self.cps, self.w1, self.w2)
        lpath, cpath = self.write("honest", cps)
        rc, out = self.verify(lpath, cpath, *self.quorum(self.w1, self.w2,
                                                         k=2))
        self.assertEqual(rc, 0, out)

    def forked(self):
        """The leaves with one event changed after the first checkpoint,
        every checkpoint from there re-signed with the audit key."""
        first = self.cps[0]["size"]
        leaves = list(self.leaves)
        # An intent's amount, above the first checkpoint, below the last.
        i = next(k for k in range(first, len(leaves))
                 if '"amount":10' in leaves[k])
        self.assertLess(i, self.cps[-1]["size"])
        leaves[i] = leaves[i].replace('"amount":10', '"amount":99', 1)
        hashes = [leaf_hash(l.encode()) for l in leaves]
        out = []
        for c in self.cps:
            s = c["size"]
            origin = self.text(c["note"]).split("\n")[0]
            text = checkpoint_text(origin, s, mth(hashes[:s]))
            out.append({"size": s, "note": text + "\n" +
                        self.audit.note_line(text)})
        return leaves, out

    def test_fork_with_copied_cosignatures_fails_quorum_1(self):
        honest = self.cosigned(self.cps, self.w1, self.w2)
        leaves, fork = self.forked()
        # The fork alone verifies with the log key: it is self-consistent.
        lpath, cpath = self.write("fork-bare", fork, leaves)
        rc, out = self.verify(lpath, cpath)
        self.assertEqual(rc, 0, out)
        # With the honest log's cosignature lines copied on.
        for c, h in zip(fork, honest):
            c["note"] += h["note"][len(self.bare(h["note"])):]
        lpath, cpath = self.write("fork", fork, leaves)
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, k=1))
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, self.w2, k=1))

    def test_fork_with_only_the_prefix_cosigned_fails(self):
        """Cosignatures that are valid (the first checkpoint, below the
        edit) do not carry the forked checkpoint it ends on."""
        honest = self.cosigned(self.cps[:1], self.w1)
        leaves, fork = self.forked()
        fork[0] = honest[0]
        lpath, cpath = self.write("fork-prefix", fork, leaves)
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, k=1))

    def test_duplicate_line_counts_once(self):
        cps = self.cosigned(self.cps, self.w1)
        for c in cps:
            c["note"] += c["note"][len(self.bare(c["note"])):]
        lpath, cpath = self.write("dup", cps)
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, self.w2, k=2))
        rc, out = self.verify(lpath, cpath, *self.quorum(self.w1, k=1))
        self.assertEqual(rc, 0, out)

    def test_the_same_witness_named_twice_counts_once(self):
        cps = self.cosigned(self.cps, self.w1)
        lpath, cpath = self.write("twice", cps)
        args = ["--witness", self.w1.vkey(0x04), "--witness",
                self.w1.vkey(0x04), "--witness-quorum", "2"]
        rc, out = self.verify(lpath, cpath, *args)
        self.assertNotEqual(rc, 0, out)
        # The same key under another name is another vkey, not a second
        # witness: its key id differs, so its lines are not w1's.
        alias = Key("alias.attack.example/w", seed=self.w1.seed)
        args = ["--witness", self.w1.vkey(0x04), "--witness",
                alias.vkey(0x04), "--witness-quorum", "2"]
        rc, out = self.verify(lpath, cpath, *args)
        self.assertNotEqual(rc, 0, out)

    def test_witness_options_that_would_weaken_the_check(self):
        cps = self.cosigned(self.cps, self.w1)
        lpath, cpath = self.write("opts", cps)
        for args in (["--witness", self.w1.vkey(0x01), "--witness-quorum",
                      "1"],
                     ["--witness", self.w1.vkey(0x04), "--witness-quorum",
                      "0"],
                     ["--witness", self.w1.vkey(0x04), "--witness-quorum",
                      "2"],
                     ["--witness", self.w1.vkey(0x04), "--witness-quorum",
                      "-1"],
                     ["--witness", self.w1.vkey(0x04), "--witness-quorum",
                      "1x"]):
            rc, out = self.verify(lpath, cpath, *args)
            self.assertEqual(rc, 2, "%r: %s" % (args, out))

    def test_the_log_key_is_no_witness(self):
        """The operator hands the auditor "a witness key" that is the log's
        own key (the same Ed25519 key as type 0x04) and self-cosigns: the
        log vouching for itself is no witness. verify refuses a witness
        key that is one of the log keys it was given."""
        self_w = Key("w.attack.example/w", seed=self.audit.seed)
        cps = self.cosigned(self.cps, self_w)
        lpath, cpath = self.write("self", cps)
        rc, out = self.verify(lpath, cpath, "--witness", self_w.vkey(0x04),
                              "--witness-quorum", "1")
        self.assertNotEqual(rc, 0, out)

    def test_right_name_other_key_id_is_not_counted(self):
        cps = []
        for c in self.cps:
            note = self.bare(c["note"])
            note += self.w1.cosig_line(self.text(note))
            # w1's key signing under w2's name, with w1's key id.
            note += self.w1.cosig_line(self.text(note), name=self.w2.name,
                                       key_id=self.w1.key_id(4))
            cps.append({"size": c["size"], "note": note})
        lpath, cpath = self.write("otherid", cps)
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, self.w2, k=2))

    def test_type_01_line_by_the_witness_key_is_not_counted(self):
        cps = []
        for c in self.cps:
            note = self.bare(c["note"])
            note += self.w1.note_line(self.text(note))  # 0x01 key id
            cps.append({"size": c["size"], "note": note})
        lpath, cpath = self.write("type01", cps)
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, k=1))

    def test_timestamp_2_63_is_invalid(self):
        cps = []
        for c in self.cps:
            note = self.bare(c["note"])
            note += self.w1.cosig_line(self.text(note), ts=2 ** 63)
            cps.append({"size": c["size"], "note": note})
        lpath, cpath = self.write("ts", cps)
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, k=1))

    def test_truncated_and_extended_signatures_are_invalid(self):
        for name, cut in (("75", lambda r: r[:75]),
                          ("77", lambda r: r + b"\0")):
            cps = []
            for c in self.cps:
                note = self.bare(c["note"])
                line = self.w1.cosig_line(self.text(note))
                raw = base64.b64decode(line.split(" ")[2])
                note += "%s %s %s\n" % (DASH, self.w1.name, b64(cut(raw)))
                cps.append({"size": c["size"], "note": note})
            lpath, cpath = self.write("len" + name, cps)
            self.assert_fails(lpath, cpath, *self.quorum(self.w1, k=1))

    def test_cosignature_of_another_checkpoint_is_invalid(self):
        _, fork = self.forked()
        cps = []
        for c, f in zip(self.cps, fork):
            note = self.bare(c["note"])
            note += self.w1.cosig_line(self.text(f["note"]))
            cps.append({"size": c["size"], "note": note})
        lpath, cpath = self.write("othercp", cps)
        self.assert_fails(lpath, cpath, *self.quorum(self.w1, k=1))


class OperatorForkDb(unittest.TestCase):
    """The same attack on the PDP's own database: a real PDP cosigned by an
    (honest, fake) witness through its [witness] client; the operator
    copies the database, edits an event, recomputes the tree, re-signs the
    checkpoints with the audit key and leaves the cosignature rows as they
    are (the offline reader appends them to the forged notes)."""

    @classmethod
    def setUpClass(cls):
        cls.wkey = Key("wdb.attack.example/w")
        cls.fake = FakeWitness(cls.wkey)
        cls.work = tempfile.mkdtemp(prefix="ig-wit-opdb-")
        try:
            cls.pdp = PdpInstall(cls.fake.url(), cls.wkey.vkey(0x04),
                                 wid="honest")
            try:
                for i in range(6):
                    cls.pdp.decide("opdb-%d" % i)
                cls.honest = os.path.join(cls.work, "honest.db")
                wait_until(cls.snapshot, "the latest checkpoint cosigned "
                           "in a snapshot", 60)
            finally:
                cls.pdp.close()
        finally:
            cls.fake.close()
        cls.audit = cls.pdp.audit

    @classmethod
    def snapshot(cls):
        """A consistent copy of the live database whose latest checkpoint
        carries a cosignature; False while it does not."""
        if os.path.exists(cls.honest):
            os.unlink(cls.honest)
        src = sqlite3.connect("file:%s?mode=ro" % cls.pdp.db, uri=True)
        dst = sqlite3.connect(cls.honest)
        try:
            src.backup(dst)
            top = dst.execute(
                "SELECT max(size) FROM checkpoints").fetchone()[0]
            got = dst.execute("SELECT count(*) FROM cosignatures WHERE size = "
                              "?", (top,)).fetchone()[0]
            return top is not None and got > 0
        finally:
            src.close()
            dst.close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def verify(self, db, *extra):
        p = subprocess.run([BIN, "audit", "verify", "--db", db, "--key",
                            self.audit.vkey(1)] + list(extra),
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout + p.stderr

    def quorum(self):
        return ["--witness", self.wkey.vkey(0x04), "--witness-quorum", "1"]

    def test_honest_db_meets_the_quorum(self):
        rc, out = self.verify(self.honest, *self.quorum())
        self.assertEqual(rc, 0, out)

    def test_forked_db_with_its_cosignature_rows_fails(self):
        fork = os.path.join(self.work, "fork.db")
        src = sqlite3.connect(self.honest)
        con = sqlite3.connect(fork)
        src.backup(con)
        src.close()
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE "
                                   "type = 'trigger'").fetchall():
            if name.endswith("_no_update") or name.endswith("_no_delete"):
                con.execute('DROP TRIGGER "%s"' % name)
        rows = con.execute("SELECT seq, event FROM audit_events ORDER BY "
                           "seq").fetchall()
        cps = con.execute("SELECT size, note FROM checkpoints ORDER BY "
                          "size").fetchall()
        first = cps[0][0]
        i = next(k for k in range(first, len(rows))
                 if '"amount":10' in rows[k][1])
        self.assertLess(i, cps[-1][0])
        con.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                    (rows[i][1].replace('"amount":10', '"amount":99', 1),
                     rows[i][0]))
        events = [r[0] for r in con.execute(
            "SELECT event FROM audit_events ORDER BY seq")]
        hashes = [leaf_hash(e.encode()) for e in events]
        con.execute("DELETE FROM audit_tiles")
        level, row = 0, hashes
        while len(row) >= 256:
            full = len(row) // 256
            for t in range(full):
                con.execute("INSERT INTO audit_tiles (level, idx, hashes) "
                            "VALUES (?, ?, ?)",
                            (level, t, b"".join(row[256 * t:256 * t + 256])))
            row = [mth(row[256 * t:256 * t + 256]) for t in range(full)]
            level += 1
        for size, note in cps:
            origin = note.split("\n")[0]
            text = checkpoint_text(origin, size, mth(hashes[:size]))
            con.execute("UPDATE checkpoints SET note = ? WHERE size = ?",
                        (text + "\n" + self.audit.note_line(text), size))
        con.commit()
        n = con.execute("SELECT count(*) FROM cosignatures").fetchone()[0]
        con.close()
        self.assertGreater(n, 0)
        # The fork is self-consistent: the log key alone accepts it.
        rc, out = self.verify(fork)
        self.assertEqual(rc, 0, out)
        rc, out = self.verify(fork, *self.quorum())
        self.assertNotIn(rc, (0, 2), out)
        self.assertRegex(out, r"(?i)quorum[^\n]*not met|bad_cosignature", out)


if __name__ == "__main__":
    run_tests()
