"""test_witness_client.py - the witness client inside the real `intentgate
serve`: [witness ID] sections, checkpoints submitted per C2SP tlog-witness,
cosignatures stored and served with /v1/audit/checkpoint, the witness
metrics, and hostile witnesses that never stall a decision.

Most witnesses are fakes (fake_witness.py: http.server on loopback
threads). An honest fake checks what it is sent as a real witness does -
the old size against its state (409 with the size it has), the
consistency proof with its own RFC 6962 code - and cosigns with Ed25519
through openssl (an implementation independent of ours). The hostile ones answer garbage, a
100 MB body, nothing at all, lies in a 409, 5xx, 429, 403, a cosignature by
another key, or a valid-looking one for another checkpoint, a timestamp
0, a redirect. Two real `intentgate witness serve` witnesses cosign beside
each other, their lines checked with openssl, and one down for a while
catches up from the state it kept.

    INTENTGATE_BIN=build/release/cli/intentgate \\
        python3 tests/integration/test_witness_client.py
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests, wait_until  # noqa: E402
from fake_witness import (BIG, DASH, Ed25519Key, FakeWitness,  # noqa: E402
                          cosig_key_id, vkey_of)
from test_audit_pdp import ed25519_ok  # noqa: E402


# ---- the PDP ----

def metrics(srv):
    st, text, _ = srv.call("GET", "/metrics", raw_response=True)
    assert st == 200, text
    out = {}
    for line in text.decode().split("\n"):
        m = re.match(r'^(intentgate_witness_\w+)\{([^}]*)\} (\d+)$', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            key = (m.group(1), labels["witness"], labels.get("reason"))
            out[key] = int(m.group(3))
    return out


def witness_events(srv):
    out = []
    for line in srv.log().split("\n"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("event", "").startswith("witness."):
            out.append(rec)
    return out


def checkpoint(srv):
    st, body, _ = srv.call("GET", "/v1/audit/checkpoint",
                           srv.env["INTENTGATE_AUDITOR_TOKEN"],
                           raw_response=True)
    assert st == 200, body
    return body.decode()


def checkpoint_size(note):
    return int(note.split("\n")[1])


def section(w, timeout_ms=2000, retry_ms=100):
    return ("[witness %s]\nurl = %s\nkey = %s\ntimeout_ms = %d\n"
            "retry_ms = %d\n" % (w.id, w.url, w.vkey, timeout_ms, retry_ms))


def restart_with(srv, sections, audit_lines="checkpoint_every = 5\n",
                 clock=False, between=None):
    """Stop srv (a dev server), give its config the witness sections (in
    place of any it had) and audit_lines, call between() and start it
    again."""
    srv.stop()
    if between is not None:
        between()
    conf = os.path.join(srv.data, "intentgate.conf")
    with open(conf) as f:
        text = f.read()
    text = text.split("\n[witness ", 1)[0].rstrip("\n") + "\n"
    if audit_lines and audit_lines not in text:
        text = text.replace("[audit]\n", "[audit]\n" + audit_lines)
    with open(conf, "w") as f:
        f.write(text + "".join("\n" + s for s in sections))
    return Server.dev(tmp=srv.tmp, clock=clock)


def grow(srv, n, tag):
    """n intents (each adds audit leaves: checkpoints follow)."""
    for i in range(n):
        st, body, _ = srv.submit("payments.refund", "orders/%s-%d" % (tag, i),
                                 {"amount": 1})
        assert st in (200, 201), body


def finish(srv):
    rc = srv.stop()
    log = srv.log()
    srv.cleanup()
    if rc != 0 or "Sanitizer" in log or "runtime error" in log:
        raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))


# The hostile witnesses: mode -> (event logged, failure reason counted).
HOSTILE = {
    "garbage": ("witness.bad_answer", "bad_answer"),
    "huge": ("witness.bad_answer", "bad_answer"),
    "slow": ("witness.unreachable", "timeout"),
    "lie_big": ("witness.conflict", "conflict"),
    "lie_unsigned": ("witness.conflict", "conflict"),
    "err500": ("witness.unreachable", "unreachable"),
    "toomany": ("witness.unreachable", "unreachable"),
    "refuse403": ("witness.refused", "refused"),
    "conflict_plain": ("witness.refused", "refused"),
    "otherkey": ("witness.bad_answer", "bad_answer"),
    "wrongcp": ("witness.bad_answer", "bad_answer"),
    "ts_zero": ("witness.bad_answer", "bad_answer"),
    "redirect": ("witness.bad_answer", "bad_answer"),
    "closed": ("witness.unreachable", "unreachable"),
}


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


class Hostile(unittest.TestCase):
    """Twelve hostile witnesses and one honest one on one PDP."""

    @classmethod
    def setUpClass(cls):
        srv = Server.dev(clock=True)
        cls.tmp = srv.tmp
        cls.fakes = {m: FakeWitness(cls.tmp, m, m) for m in HOSTILE}
        cls.fakes["otherkey"].other = Ed25519Key(cls.tmp)
        cls.fakes["closed"].url = "http://127.0.0.1:%d/w" % closed_port()
        cls.honest = FakeWitness(cls.tmp, "honest", "honest")
        # where the redirect points: an honest witness nobody may reach
        cls.target = FakeWitness(cls.tmp, "target", "honest",
                                 key=cls.fakes["redirect"].key)
        cls.fakes["redirect"].redirect_to = cls.target.url
        # stuck: never answers, and would wait 10 minutes: the stop must
        # cut it.
        cls.stuck = FakeWitness(cls.tmp, "stuck", "slow")
        sections = [section(f, timeout_ms=500 if m == "slow" else 2000)
                    for m, f in cls.fakes.items()]
        sections.append(section(cls.honest))
        sections.append(section(cls.stuck, timeout_ms=600000))
        cls.srv = restart_with(srv, sections, clock=True)

    @classmethod
    def tearDownClass(cls):
        try:
            finish(cls.srv)
        finally:
            for f in list(cls.fakes.values()) + [cls.honest, cls.stuck,
                                                 cls.target]:
                f.close()

    def test_1_decisions_stay_fast_while_witnesses_misbehave(self):
        grow(self.srv, 6, "warm")
        wait_until(lambda: self.stuck.count() >= 1 and
                   self.fakes["slow"].count() >= 1,
                   "the slow witnesses to hold a request")
        for i in range(20):
            t = time.monotonic()
            st, body, _ = self.srv.submit("payments.refund", "orders/f%d" % i,
                                          {"amount": 1})
            self.assertIn(st, (200, 201), body)
            self.assertLess(time.monotonic() - t, 2.0,
                            "a decision waited on a witness")

    def test_2_each_hostile_answer_is_named_counted_and_stores_nothing(self):
        grow(self.srv, 6, "hostile")
        for mode, (event, reason) in HOSTILE.items():
            wid = self.fakes[mode].id
            wait_until(lambda: any(e["event"] == event and e["witness"] == wid
                                   for e in witness_events(self.srv)),
                       "%s from %s" % (event, wid))
            m = metrics(self.srv)
            self.assertGreaterEqual(
                m[("intentgate_witness_failures_total", wid, reason)], 1, wid)
            self.assertEqual(
                m[("intentgate_witness_cosigned_size", wid, None)], 0, wid)
            self.assertGreater(
                m[("intentgate_witness_lag_leaves", wid, None)], 0, wid)
        note = checkpoint(self.srv)
        for f in self.fakes.values():
            self.assertNotIn(" %s " % f.name, note, f.id)
        self.assertEqual(self.target.count(), 0, "a redirect was followed")
        # Every failure is an event of its witness with a reason: no line
        # holds the body of the huge answer.
        for e in witness_events(self.srv):
            self.assertLess(len(json.dumps(e)), 2000)

    def stored(self, size):
        """1 when size is a checkpoint this log signed."""
        st, _, _ = self.srv.call(
            "GET", "/v1/audit/proof/consistency?old=%d&new=%d" % (size, size),
            self.srv.env["INTENTGATE_AUDITOR_TOKEN"], raw_response=True)
        self.assertIn(st, (200, 404))
        return st == 200

    def test_3_lies_are_not_followed(self):
        # A 409 naming a size this log never signed (or one beyond it) is
        # a conflict, not a resend from that size.
        for mode in ("lie_big", "lie_unsigned"):
            f = self.fakes[mode]
            wait_until(lambda: f.count() >= 3, "three requests of " + mode)
        with self.fakes["lie_big"].lock:
            olds = [r[0] for r in self.fakes["lie_big"].requests]
        self.assertNotIn(BIG, olds)
        f = self.fakes["lie_unsigned"]
        with f.lock:
            reqs = list(f.requests)
        lies = {size - 1 for _, _, size in reqs
                if size > 1 and not self.stored(size - 1)}
        self.assertTrue(lies, reqs)
        self.assertFalse(lies & {old for old, _, _ in reqs}, reqs)

    def test_4_the_honest_witness_cosigns_beside_them(self):
        grow(self.srv, 6, "honest")
        wid = self.honest.id

        def caught_up():
            # The metric first: the PDP stores a cosignature before it
            # moves the metric, so a note read after the metric shows
            # size S carries the line. (Read the other way round, the
            # witness could cosign between the two reads: a note without
            # the line, and a metric that says it is there.)
            m = metrics(self.srv)
            note = checkpoint(self.srv)
            return m[("intentgate_witness_cosigned_size", wid, None)] == \
                checkpoint_size(note) and note
        note = wait_until(caught_up, "the honest witness to catch up")
        lines = [x for x in note.split("\n") if x.startswith(DASH + " ")]
        self.assertEqual(len([x for x in lines if self.honest.name in x]), 1)
        self.assertEqual(metrics(self.srv)[
            ("intentgate_witness_lag_leaves", wid, None)], 0)
        self.assertTrue(any(e["event"] == "witness.cosigned" and
                            e["witness"] == wid
                            for e in witness_events(self.srv)))

    def test_5_lag_seconds_grows_for_the_hostile(self):
        grow(self.srv, 6, "lag")
        self.srv.advance(1000)
        wid = self.fakes["err500"].id
        wait_until(lambda: metrics(self.srv)[
            ("intentgate_witness_lag_seconds", wid, None)] >= 1000,
            "lag_seconds of a failing witness past the clock's jump")


    def test_9_stop_cuts_a_request_in_flight(self):
        # stuck holds a request it would wait 10 minutes for.
        wait_until(lambda: self.stuck.count() >= 1, "a request to stuck")
        t = time.monotonic()
        self.assertEqual(self.srv.stop(), 0)
        self.assertLess(time.monotonic() - t, 5.0, "the stop waited")
        self.assertIn('"server.stopped"', self.srv.log())


class CatchUp(unittest.TestCase):
    """A witness down for a while catches up; 409s are followed."""

    def setUp(self):
        self.srv = Server.dev()
        self.fakes = []

    def tearDown(self):
        try:
            finish(self.srv)
        finally:
            for f in self.fakes:
                f.close()

    def fake(self, wid, mode, key=None):
        f = FakeWitness(self.srv.tmp, wid, mode, key)
        self.fakes.append(f)
        return f

    def cosigned(self, f):
        return metrics(self.srv).get(
            ("intentgate_witness_cosigned_size", f.id, None))

    def wait_caught_up(self, f):
        def done():
            note = checkpoint(self.srv)
            size = checkpoint_size(note)
            return size > 0 and self.cosigned(f) == size and \
                f.name in note and note
        return wait_until(done, "%s to cosign the latest checkpoint" % f.id,
                          timeout=30)

    def test_down_then_up_catches_up(self):
        a = self.fake("a", "down")
        self.srv = restart_with(self.srv, [section(a)])
        grow(self.srv, 8, "down")
        wait_until(lambda: metrics(self.srv).get(
            ("intentgate_witness_failures_total", "a", "unreachable"), 0) >= 2,
            "retries of the witness that is down")
        self.assertGreater(metrics(self.srv)[
            ("intentgate_witness_lag_leaves", "a", None)], 0)
        a.mode = "honest"
        note = self.wait_caught_up(a)
        self.assertEqual(metrics(self.srv)[
            ("intentgate_witness_lag_leaves", "a", None)], 0)
        self.assertEqual(metrics(self.srv)[
            ("intentgate_witness_lag_seconds", "a", None)], 0)
        # The served note: the log's signature, then the cosignature.
        text, _, sigs = note.partition("\n\n")
        sig_lines = sigs.rstrip("\n").split("\n")
        self.assertEqual(len(sig_lines), 2, note)
        self.assertIn(a.name, sig_lines[1])

    def test_409_from_the_witness_size_with_a_proof(self):
        # a cosigns up to some size S; then b, with a's state but no
        # cosignature stored, is asked from 0, says S, and gets S -> new
        # with a consistency proof it checks.
        a = self.fake("a", "honest")
        b = self.fake("b", "honest")
        self.srv = restart_with(self.srv, [section(a)])
        grow(self.srv, 6, "a")
        self.wait_caught_up(a)

        def take_state():
            b.size, b.root = a.size, a.root
        self.srv = restart_with(self.srv, [section(b)], between=take_state)
        s = a.size  # a gets nothing more: its state is final
        grow(self.srv, 6, "b")
        self.wait_caught_up(b)
        with b.lock:
            reqs = list(b.requests)
        self.assertEqual(reqs[0][0], 0, reqs)
        resent = [r for r in reqs if r[0] == s and r[2] > s]
        self.assertTrue(resent, reqs)
        self.assertGreater(resent[0][1], 0, "no consistency proof")

    def test_witness_that_lost_its_state_is_resent_from_0(self):
        a = self.fake("a", "honest")
        self.srv = restart_with(self.srv, [section(a)])
        grow(self.srv, 6, "a")
        self.wait_caught_up(a)
        mark = []

        def forget():
            mark.append((a.count(), a.size))
            a.size, a.root = 0, None  # it forgot us
        self.srv = restart_with(self.srv, [section(a)], between=forget)
        grow(self.srv, 6, "again")
        self.wait_caught_up(a)
        n, s = mark[0]
        with a.lock:
            olds = [r[0] for r in a.requests[n:]]
        # what the PDP remembered, then the resend after "0\n"
        self.assertEqual(olds[:2], [s, 0], olds)


class RealWitnessProc:
    """`intentgate witness serve` on a fixed loopback port, for the log
    whose vkey is log_vkey."""

    def __init__(self, tmp, wid, log_vkey):
        self.id = wid
        self.name = "witness.test/" + wid
        self.dir = tempfile.mkdtemp(prefix="wit-", dir=tmp)
        subprocess.run([BIN, "keygen", "--out", self.dir], check=True,
                       capture_output=True)
        self.port = closed_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.conf = os.path.join(self.dir, "witness.conf")
        with open(self.conf, "w") as f:
            f.write("[witness]\nname = %s\nkey = signing.key\n"
                    "listen = 127.0.0.1:%d\ndatabase = state.db\n"
                    "rate = 1000\n\n[log %s]\nkey = %s\n"
                    % (self.name, self.port, log_vkey.split("+")[0],
                       log_vkey))
        self.vkey = subprocess.run(
            [BIN, "witness", "vkey", "--config", self.conf], check=True,
            capture_output=True, text=True).stdout.strip()
        self.proc = None
        self.start()

    def start(self):
        self.log_path = os.path.join(self.dir, "witness.log")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [BIN, "witness", "serve", "--config", self.conf],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=log)
        wait_until(lambda: '"witness.started"' in open(self.log_path).read()
                   or self.proc.poll() is not None, "the witness to start")
        if self.proc.poll() is not None:
            raise AssertionError("witness exited: " +
                                 open(self.log_path).read())

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=15)
        return self.proc.returncode if self.proc else 0

    def state_size(self):
        out = subprocess.run([BIN, "witness", "show", "--config", self.conf],
                             check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "log":
                return rec.get("size")
        return None


def cosig_line_ok(line, text, vkey):
    """line ("— name base64") is vkey's cosignature/v1 of text, checked
    here with openssl; returns its timestamp."""
    name, kid, b64 = vkey.split("+", 2)
    pk = base64.b64decode(b64)[1:]
    m = re.fullmatch(DASH + r" (\S+) (\S+)", line)
    assert m and m.group(1) == name, line
    raw = base64.b64decode(m.group(2), validate=True)
    assert len(raw) == 76, len(raw)
    assert raw[:4].hex() == kid == cosig_key_id(name, pk).hex()
    ts = int.from_bytes(raw[4:12], "big")
    assert 0 < ts < 2 ** 63
    msg = b"cosignature/v1\ntime %d\n" % ts + text.encode()
    assert ed25519_ok(pk, msg, raw[12:]), "bad cosignature"
    assert not ed25519_ok(pk, msg.replace(b"time", b"tim3"), raw[12:])
    return ts


class RealWitness(unittest.TestCase):
    """The PDP with two `intentgate witness serve` witnesses: both cosign,
    the served lines verify with openssl, and a witness restarted after
    being down keeps its state and catches up."""

    def setUp(self):
        self.srv = Server.dev()
        log_vkey = self.srv.env["INTENTGATE_AUDIT_KEY"]
        self.ws = [RealWitnessProc(self.srv.tmp, "real%d" % i, log_vkey)
                   for i in (1, 2)]
        self.srv = restart_with(self.srv, [section(w) for w in self.ws])

    def tearDown(self):
        try:
            for w in self.ws:  # before finish() removes their directories
                with open(w.log_path) as f:
                    log = f.read()
                self.assertEqual(w.stop(), 0, log)
                self.assertNotIn("Sanitizer", log)
        finally:
            finish(self.srv)

    def wait_all(self):
        def done():
            m = metrics(self.srv)  # first: see caught_up in Hostile
            note = checkpoint(self.srv)
            size = checkpoint_size(note)
            return all(m[("intentgate_witness_cosigned_size", w.id, None)]
                       == size for w in self.ws) and note
        return wait_until(done, "both witnesses to cosign the latest",
                          timeout=30)

    def test_both_cosign_and_the_lines_verify(self):
        grow(self.srv, 8, "real")
        note = self.wait_all()
        text, _, sigs = note.partition("\n\n")
        lines = sigs.rstrip("\n").split("\n")
        self.assertEqual(len(lines), 3, note)  # the log's, then by name
        self.assertEqual([x.split(" ")[1] for x in lines[1:]],
                         sorted(w.name for w in self.ws))
        # An inclusion proof carries the checkpoint with its cosignatures.
        st, proof, _ = self.srv.call(
            "GET", "/v1/audit/proof/inclusion?index=0&size=%d"
            % checkpoint_size(note), self.srv.env["INTENTGATE_AUDITOR_TOKEN"],
            raw_response=True)
        self.assertEqual(st, 200, proof)
        self.assertTrue(proof.decode().endswith(note), proof)
        # The audit log says whom this PDP asks (config.loaded).
        loaded = [e for e in self.srv.audit_events()
                  if e["type"] == "config.loaded"][-1]
        self.assertEqual(loaded["audit"]["witnesses"],
                         [{"id": w.id, "url": w.url, "key": w.vkey}
                          for w in self.ws])
        for w, line in zip(sorted(self.ws, key=lambda w: w.name), lines[1:]):
            cosig_line_ok(line, text + "\n", w.vkey)
            self.assertGreaterEqual(w.state_size(), checkpoint_size(note))

    def test_a_witness_down_for_a_while_catches_up(self):
        grow(self.srv, 6, "before")
        self.wait_all()
        down = self.ws[0]
        down.stop()
        grow(self.srv, 12, "during")
        wait_until(lambda: metrics(self.srv).get(
            ("intentgate_witness_failures_total", down.id, "unreachable"),
            0) >= 1, "a failed attempt while it is down")
        self.assertGreater(metrics(self.srv)[
            ("intentgate_witness_lag_leaves", down.id, None)], 0)
        kept = down.state_size()
        self.assertGreater(kept, 0)
        down.start()
        note = self.wait_all()
        self.assertGreaterEqual(down.state_size(), checkpoint_size(note))
        # It went on from the state it kept: no 409 made the PDP resend.
        self.assertNotIn('"witness.conflict"', self.srv.log())


class Config(unittest.TestCase):
    """[witness] is checked at start, naming file and line."""

    def refused(self, text, want):
        from harness import BIN
        tmp = tempfile.mkdtemp(prefix="ig-cfg-")
        try:
            conf = os.path.join(tmp, "ig.conf")
            with open(conf, "w") as f:
                f.write("database = ig.db\nsigning_key = k\n"
                        "policy_dir = p\n" + text)
            r = subprocess.run([BIN, "serve", "--config", conf],
                               capture_output=True, text=True, timeout=30)
            self.assertNotEqual(r.returncode, 0, r.stderr)
            self.assertIn(want, r.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_bad_witness_sections(self):
        pk = bytes(range(32))
        vk = vkey_of("w.example/w1", pk)
        self.refused("[witness w1]\nurl = http://127.0.0.1:1\n",
                     "witness w1 needs key")
        self.refused("[witness w1]\nkey = %s\n" % vk, "witness w1 needs url")
        self.refused("[witness w1]\nurl = ftp://x\nkey = %s\n" % vk,
                     "url must be http:// or https://")
        self.refused("[witness w1]\nurl = http://x\nkey = nope\n",
                     "key must be a witness vkey")
        self.refused("[witness w1]\nurl = http://x\nkey = %s\n"
                     % vk.replace("+BA", "+AQ"), "type 1, want 4")
        self.refused("[witness w1]\nurl = http://x\nkey = %s\n" % vk,
                     "needs [audit] key")


class LogIsNoWitness(unittest.TestCase):
    def test_the_audit_key_is_refused_as_a_witness(self):
        srv = Server.dev()
        try:
            pk = base64.b64decode(
                srv.env["INTENTGATE_AUDIT_KEY"].split("+", 2)[2])[1:]
            srv.stop()
            me = FakeWitness(srv.tmp, "self", "honest")
            me.vkey = vkey_of("witness.test/self", pk)
            conf = os.path.join(srv.data, "intentgate.conf")
            with open(conf, "a") as f:
                f.write("\n" + section(me))
            me.close()
            r = subprocess.run([BIN, "serve", "--config", conf],
                               capture_output=True, text=True, timeout=60)
            self.assertNotEqual(r.returncode, 0, r.stderr)
            self.assertIn("a log cannot witness itself", r.stderr)
        finally:
            srv.stop()
            srv.cleanup()


if __name__ == "__main__":
    run_tests()
