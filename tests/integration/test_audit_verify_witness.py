"""test_audit_verify_witness.py - `intentgate audit verify --witness VKEY
--witness-quorum K` on a real log (issue 18).

A dev PDP logs two runs (test_audit_cli.Log: two or more checkpoints); the
log is exported (leaves and checkpoints as JSONL). The witnesses here are
keys held by the test: their cosignatures (c2sp.org/tlog-cosignature,
cosignature/v1) are written with the RFC 8032 reference code of
test_audit_cli.py, independently of the C library, and appended to the
checkpoints' notes as the PDP appends the lines it gets.

  Quorum    both witnesses on the latest checkpoint: exit 0, each reported
            as cosigned with its time and view; one missing: exit 4 with
            the default quorum (all), 0 with --witness-quorum 1; a witness
            that only cosigned an older checkpoint is missing, its view
            that older size; a line twice counts once; a bare copy of the
            latest (--checkpoints, --anchor) does not hide the lines of
            another; lines stored in the database's cosignatures table
            (as the PDP stores them) are read with the notes.
  Forgery   a witness's line moved from another checkpoint, a changed
            timestamp, a 77-byte signature, a timestamp of 2^63: INVALID,
            exit 1, whatever the quorum. A line under the witness's name
            with the key id its key has as a log key (0x01) is not its
            cosignature: ignored (missing).
  Usage     quorum 0, over the number of witnesses, without --witness; a
            log key (type 01) or garbage as --witness; the log's own key as
            a witness key (type 04); a witness named
            twice; more than the limit: exit 2 with one line. A file of
            vkeys (comments, blank lines) names several.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_audit_verify_witness.py
"""
import base64
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run_tests  # noqa: E402
import test_audit_cli  # noqa: E402
from test_audit_cli import (Log, ed25519_public, ed25519_sign, ig,  # noqa: E402
                            tamper_copy)

DASH = "\u2014"


def witness_key_id(name, pk, typ=0x04):
    return hashlib.sha256(name.encode() + b"\n" + bytes([typ]) +
                          pk).digest()[:4]


class TestWitness:
    """A witness key held by the test."""

    def __init__(self, name):
        self.name = name
        self.seed = os.urandom(32)
        self.pk = ed25519_public(self.seed)
        self.vkey = "%s+%s+%s" % (name, witness_key_id(name, self.pk).hex(),
                                  base64.b64encode(b"\x04" + self.pk).decode())

    def cosign(self, note, ts, key_type=0x04, raw_ts=None):
        """The cosignature line (with its newline) of note's text."""
        text = note[:note.rindex("\n\n") + 1]
        msg = ("cosignature/v1\ntime %d\n" % ts).encode() + text.encode()
        sig = ed25519_sign(self.seed, msg)
        blob = (witness_key_id(self.name, self.pk, key_type) +
                (raw_ts if raw_ts is not None else ts).to_bytes(8, "big") +
                sig)
        return "%s %s %s\n" % (DASH, self.name,
                               base64.b64encode(blob).decode())


def line_with(line, blob_fn):
    """line with its signature bytes changed by blob_fn."""
    head, _, b64 = line.rstrip("\n").rpartition(" ")
    return "%s %s\n" % (head, base64.b64encode(
        blob_fn(base64.b64decode(b64))).decode())


class VerifyWitness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.log = Log()
        cls.work = tempfile.mkdtemp(prefix="ig-verify-witness-")
        cls.leaves = os.path.join(cls.work, "leaves.jsonl")
        cps = os.path.join(cls.work, "cps.jsonl")
        rc, out, err = ig("audit", "export", "--db", cls.log.db, "--format",
                          "jsonl", "--checkpoints-out", cps)
        assert rc == 0, err
        with open(cls.leaves, "w") as f:
            f.write(out)
        with open(cps) as f:
            cls.cps = [json.loads(line) for line in f]
        assert len(cls.cps) >= 2, cls.cps
        cls.w1 = TestWitness("w1.verify.example")
        cls.w2 = TestWitness("w2.verify.example")
        cls.w3 = TestWitness("w3.verify.example")
        cls.now = int(time.time())
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls.log.cleanup()
        shutil.rmtree(cls.work, ignore_errors=True)

    @property
    def first(self):
        return self.cps[0]

    @property
    def last(self):
        return self.cps[-1]

    def run_verify(self, extra_lines, *args):
        """verify --leaves/--checkpoints with extra_lines ({size: text})
        appended to those checkpoints' notes."""
        VerifyWitness.n += 1
        path = os.path.join(self.work, "cps-%d.jsonl" % self.n)
        with open(path, "w") as f:
            for c in self.cps:
                f.write(json.dumps({"size": c["size"], "note": c["note"] +
                                    extra_lines.get(c["size"], "")}) + "\n")
        return ig("audit", "verify", "--leaves", self.leaves, "--checkpoints",
                  path, "--key", self.log.key, *args)

    def named(self, *ws):
        out = []
        for w in ws:
            out += ["--witness", w.vkey]
        return out

    def witness_line(self, out, w):
        for m in re.finditer(r"^witness:\s+(\S+) (.*)$", out, re.M):
            if m.group(1) == "+".join(w.vkey.split("+")[:2]):
                return m.group(2)
        self.fail("no witness line for %s:\n%s" % (w.name, out))

    # ---- the quorum ----

    def test_both_cosigned(self):
        lines = {self.last["size"]: self.w1.cosign(self.last["note"],
                                                   self.now) +
                 self.w2.cosign(self.last["note"], self.now + 1)}
        rc, out, err = self.run_verify(lines, *self.named(self.w1, self.w2))
        self.assertEqual(rc, 0, out + err)
        t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.now + 1))
        line = self.witness_line(out, self.w2)
        self.assertEqual(line, "cosigned (%s); its view: size %d (cosigned "
                         "%s)" % (t, self.last["size"], t), out)
        self.assertIn("witnesses:   2 of 2 cosigned the latest checkpoint "
                      "(size %d); quorum 2 met" % self.last["size"], out)
        self.assertIn("result:      ok", out)

    def test_one_missing(self):
        lines = {self.last["size"]: self.w1.cosign(self.last["note"],
                                                   self.now),
                 self.first["size"]: self.w2.cosign(self.first["note"],
                                                    self.now - 60)}
        rc, out, err = self.run_verify(lines, *self.named(self.w1, self.w2))
        self.assertEqual(rc, 4, out + err)
        line = self.witness_line(out, self.w2)
        self.assertTrue(line.startswith("missing; its view: size %d "
                                        % self.first["size"]), line)
        self.assertIn("QUORUM NOT MET", out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("quorum not met: 1 of the 2", err)
        rc, out, err = self.run_verify(lines, *self.named(self.w1, self.w2),
                                       "--witness-quorum", "1")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("quorum 1 met", out)

    def test_never_cosigned(self):
        rc, out, err = self.run_verify({}, *self.named(self.w3))
        self.assertEqual(rc, 4, out + err)
        self.assertEqual(self.witness_line(out, self.w3),
                         "missing; its view: none (no valid cosignature)")

    def test_a_line_twice_counts_once(self):
        line = self.w1.cosign(self.last["note"], self.now)
        rc, out, err = self.run_verify({self.last["size"]: line + line},
                                       *self.named(self.w1, self.w2))
        self.assertEqual(rc, 4, out + err)
        self.assertIn("1 of 2 cosigned", out)

    def test_other_witnesses_lines_ignored(self):
        lines = {self.last["size"]: self.w3.cosign(self.last["note"],
                                                   self.now) +
                 self.w1.cosign(self.last["note"], self.now)}
        rc, out, err = self.run_verify(lines, *self.named(self.w1))
        self.assertEqual(rc, 0, out + err)

    def test_log_type_key_id_is_not_a_cosignature(self):
        # Signed by w1's key over the right message, under w1's name, but
        # with the key id the key has as a note key (0x01).
        lines = {self.last["size"]: self.w1.cosign(self.last["note"],
                                                   self.now, key_type=0x01)}
        rc, out, err = self.run_verify(lines, *self.named(self.w1))
        self.assertEqual(rc, 4, out + err)
        self.assertTrue(self.witness_line(out, self.w1).startswith("missing"))

    def test_a_bare_copy_does_not_hide_cosignatures(self):
        # The latest checkpoint twice, with w1's line and bare (an anchor
        # file, a reviewer's kept copy), in either order: w1 counts.
        line = self.w1.cosign(self.last["note"], self.now)
        for order in ((True, False), (False, True)):
            path = os.path.join(self.work, "bare-%d.jsonl" % order[0])
            with open(path, "w") as f:
                for c in self.cps[:-1]:
                    f.write(json.dumps(c) + "\n")
                for cosigned in order:
                    f.write(json.dumps({"size": self.last["size"],
                                        "note": self.last["note"] +
                                        (line if cosigned else "")}) + "\n")
            rc, out, err = ig("audit", "verify", "--leaves", self.leaves,
                              "--checkpoints", path, "--key", self.log.key,
                              *self.named(self.w1))
            self.assertEqual(rc, 0, out + err)
        anchor = os.path.join(self.work, "anchor")
        with open(anchor, "w") as f:
            f.write(self.last["note"])
        rc, out, err = self.run_verify({self.last["size"]: line},
                                       *self.named(self.w1), "--anchor",
                                       anchor)
        self.assertEqual(rc, 0, out + err)

    def test_database_cosignatures(self):
        # The PDP stores each cosignature line beside its checkpoint; the
        # offline reader appends them to the notes.
        db = os.path.join(self.work, "cosigned.db")
        con = tamper_copy(self.log.db, db)
        for w, size, note in ((self.w1, self.last["size"], self.last["note"]),
                              (self.w2, self.last["size"], self.last["note"]),
                              (self.w3, self.first["size"],
                               self.first["note"])):
            con.execute("INSERT INTO cosignatures (size, witness, line, "
                        "created_at) VALUES (?, ?, ?, ?)",
                        (size, w.name, w.cosign(note, self.now), self.now))
        con.commit()
        con.close()
        rc, out, err = ig("audit", "verify", "--db", db, "--key", self.log.key,
                          *self.named(self.w1, self.w2, self.w3),
                          "--witness-quorum", "2")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("2 of 3 cosigned the latest checkpoint", out)
        self.assertIn("its view: size %d " % self.first["size"],
                      self.witness_line(out, self.w3))
        rc, out, err = ig("audit", "verify", "--db", db, "--key", self.log.key,
                          *self.named(self.w1, self.w2, self.w3))
        self.assertEqual(rc, 4, out + err)

    def test_quorum_wins_over_unsigned(self):
        # Without the latest checkpoint the newest leaves are unsigned; a
        # day later that alone is exit 3, with the quorum short too 4.
        path = os.path.join(self.work, "short.jsonl")
        with open(path, "w") as f:
            for c in self.cps[:-1]:
                f.write(json.dumps(c) + "\n")
        prev = self.cps[-2]
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                           time.gmtime(self.now + 86400))
        base = ["audit", "verify", "--leaves", self.leaves, "--checkpoints",
                path, "--key", self.log.key, "--at", at]
        rc, out, err = ig(*base)
        self.assertEqual(rc, 3, out + err)
        rc, out, err = ig(*base, *self.named(self.w1))
        self.assertEqual(rc, 4, out + err)
        self.assertIn("(size %d)" % prev["size"], out)

    # ---- forgeries ----

    def assert_invalid(self, lines, size, *args):
        rc, out, err = self.run_verify(lines, *args)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("INVALID cosignature on size %d" % size, out)
        self.assertIn("result:      FAILED bad_cosignature", out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("invalid cosignature by the witness", err)
        return out

    def test_line_moved_from_another_checkpoint(self):
        moved = self.w2.cosign(self.first["note"], self.now)
        lines = {self.last["size"]: self.w1.cosign(self.last["note"],
                                                   self.now) + moved}
        out = self.assert_invalid(lines, self.last["size"],
                                  *self.named(self.w1, self.w2),
                                  "--witness-quorum", "1")
        self.assertTrue(self.witness_line(out, self.w2).startswith("INVALID"))

    def test_forged_on_an_older_checkpoint(self):
        # The latest is fine; a broken line on an older one is evidence too.
        bad = line_with(self.w1.cosign(self.first["note"], self.now),
                        lambda b: b[:-1] + bytes([b[-1] ^ 1]))
        lines = {self.last["size"]: self.w1.cosign(self.last["note"],
                                                   self.now),
                 self.first["size"]: bad}
        self.assert_invalid(lines, self.first["size"], *self.named(self.w1))

    def test_changed_timestamp(self):
        good = self.w1.cosign(self.last["note"], self.now)
        bad = line_with(good, lambda b: b[:11] + bytes([b[11] ^ 1]) + b[12:])
        self.assert_invalid({self.last["size"]: bad}, self.last["size"],
                            *self.named(self.w1))

    def test_77_byte_signature(self):
        bad = line_with(self.w1.cosign(self.last["note"], self.now),
                        lambda b: b + b"\0")
        self.assert_invalid({self.last["size"]: bad}, self.last["size"],
                            *self.named(self.w1))

    def test_timestamp_over_2_63(self):
        bad = self.w1.cosign(self.last["note"], 2 ** 63, raw_ts=2 ** 63)
        self.assert_invalid({self.last["size"]: bad}, self.last["size"],
                            *self.named(self.w1))

    # ---- usage ----

    def usage(self, *args):
        rc, out, err = self.run_verify({}, *args)
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        return err

    def test_usage_errors(self):
        w = self.named(self.w1, self.w2)
        self.assertIn("--witness-quorum", self.usage(*w, "--witness-quorum",
                                                     "0"))
        self.assertIn("only 2 witnesses", self.usage(*w, "--witness-quorum",
                                                     "3"))
        self.assertIn("needs --witness", self.usage("--witness-quorum", "1"))
        self.assertIn("--witness", self.usage("--witness", self.log.key))
        self.assertIn("--witness", self.usage("--witness", "garbage"))
        self.assertIn("named twice", self.usage(*w, "--witness",
                                                self.w1.vkey))
        # The log's own key as a witness key (type 04): the log vouching
        # for itself is no witness.
        seed = test_audit_cli.audit_secret_seed(self.log.data)
        own = TestWitness("own.verify.example")
        own.seed, own.pk = seed, ed25519_public(seed)
        own.vkey = "%s+%s+%s" % (own.name,
                                 witness_key_id(own.name, own.pk).hex(),
                                 base64.b64encode(b"\x04" + own.pk).decode())
        lines = {self.last["size"]: own.cosign(self.last["note"], self.now)}
        rc, out, err = self.run_verify(lines, *self.named(own))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("the log's own key", err)
        many = []
        for i in range(33):
            many += ["--witness", TestWitness("m%d.example" % i).vkey]
        self.assertIn("at most 32", self.usage(*many))

    def test_witness_file(self):
        path = os.path.join(self.work, "witnesses.txt")
        with open(path, "w") as f:
            f.write("# the witnesses compliance trusts\n\n%s\n  %s  \n"
                    % (self.w1.vkey, self.w2.vkey))
        lines = {self.last["size"]: self.w1.cosign(self.last["note"],
                                                   self.now) +
                 self.w2.cosign(self.last["note"], self.now)}
        rc, out, err = self.run_verify(lines, "--witness", path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("2 of 2 cosigned", out)
        with open(path, "a") as f:
            f.write("not a key\n")
        err = self.usage("--witness", path)
        self.assertIn(path + ":5:", err)


if __name__ == "__main__":
    run_tests()
