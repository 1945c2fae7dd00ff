"""test_witness_e2e.py - the audit log witnessed end to end (issue 18):
two real witnesses (`intentgate witness serve`), a real PDP with
[witness a] and [witness b], and `intentgate audit verify --witness`.

  Honest    run 1 signs S1 at its stop; run 2's start sends S1 to both
            witnesses (old 0), run 3's sends S2 (old S1 and a consistency
            proof). Witness a is restarted in between (kill -9): it keeps
            its state, so run 3's request from S1 is answered, not refused.
            Witness b is down when run 3 starts: the PDP logs it
            unreachable, goes on deciding, and b catches up once it is
            back. `audit verify --witness A --witness B` (quorum 2) passes
            on the cosigned log and reports each witness's view; a third
            witness that never saw the log makes quorum 3 fail (exit 4).
            The independent Node.js verifier (tests/interop) accepts the
            real witnesses' cosignatures; /ui/audit shows both, valid,
            with their key ids, times and sizes.
  Fork      the operator, with the database and the real audit key,
            rewrites an event between S1 and S2 and re-signs the rewritten
            tree at S2 (a copy of the database as it was before run 3, the
            anchor rewritten to match): the PDP started on it submits the
            fork; both witnesses refuse it (422: another root at the size
            they cosigned) and keep it as evidence (`witness show`), the
            PDP logs witness.refused for both, and `audit verify
            --witness-quorum 1` fails on the fork (exit 4, each witness's
            view still S1); the page shows the fork's checkpoint bare. The
            witnesses' evidence is the fork as the log's key signed it.
            The honest cosignatures of S2 copied onto the fork are
            forgeries there: verify fails (exit 1), Node refuses them, the
            page says INVALID.

  Served    each witness serves the checkpoint it cosigned, as the log
            signed it, with its cosignature (the Node.js verifier agrees);
            404 for a log it does not witness.

test_honest and test_witness_serves_what_it_cosigned run on both stores
(witness.e2e.pg: the PDP on PostgreSQL, `verify --db URL`); test_fork
edits the SQLite file, so SQLite only.

The PDP and the witnesses run in an operator's layout under the build
tree (test_audit_anchor.Install). Everything synchronises on observable
state (log lines, the checkpoint endpoint, `witness show`), never on sleeps.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_witness_e2e.py
"""
import base64
import hashlib
import html
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg  # noqa: E402
from harness import BIN, Server, run_tests, wait_until  # noqa: E402
from harness import layout_roots, log_events  # noqa: E402
from test_audit_anchor import (INTERVAL, NAME, Install, finish, ig,  # noqa: E402
                               leaf_hash, mth, rewrite_tiles, tamper)
from test_audit_cli import PASSWORD, Browser, approver_section  # noqa: E402

from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: E402
    Ed25519PrivateKey)

DASH = "\u2014"
HERE = os.path.dirname(os.path.abspath(__file__))
NODE_VERIFIER = os.path.join(HERE, "..", "interop", "verify_checkpoint.mjs")


# ---- the audit key, as its holder uses it ----

def secret_key(path):
    """The Ed25519 private key of a k4.secret file (64 bytes: seed, pk)."""
    with open(path) as f:
        text = f.read().strip()
    assert text.startswith("k4.secret."), path
    raw = base64.urlsafe_b64decode(text[10:] + "=" * (-len(text[10:]) % 4))
    return Ed25519PrivateKey.from_private_bytes(raw[:32]), raw[32:]


def log_vkey(name, pk):
    kid = hashlib.sha256(name.encode() + b"\n\x01" + pk).digest()[:4]
    return "%s+%s+%s" % (name, kid.hex(),
                         base64.b64encode(b"\x01" + pk).decode())


def sign_checkpoint(key_path, name, size, root):
    """The signed note the log's key holder can make for any tree."""
    sk, pk = secret_key(key_path)
    text = "%s\n%d\n%s\n" % (name, size, base64.b64encode(root).decode())
    kid = hashlib.sha256(name.encode() + b"\n\x01" + pk).digest()[:4]
    sig = sk.sign(text.encode())
    return text + "\n%s %s %s\n" % (DASH, name,
                                    base64.b64encode(kid + sig).decode())


# ---- witnesses ----

class Witness:
    """One `intentgate witness serve`, its key, config and state under
    root/<id>. The first start listens on a port of the kernel's choice
    (the config's 127.0.0.1:0; the start line names it), restarts on the
    same one (--listen)."""

    def __init__(self, root, wid, log_key):
        self.id = wid
        self.dir = os.path.join(root, "witness-" + wid)
        os.makedirs(self.dir, mode=0o700)
        tmp = os.path.join(self.dir, "keygen")
        r = subprocess.run([BIN, "keygen", "--out", tmp], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        self.key = os.path.join(self.dir, "witness.key")
        os.rename(os.path.join(tmp, "signing.key"), self.key)
        shutil.rmtree(tmp)
        self.name = "witness.test.example/" + wid
        self.port = 0
        self.conf = os.path.join(self.dir, "witness.conf")
        with open(self.conf, "w") as f:
            f.write("[witness]\nname = %s\nkey = %s\nlisten = 127.0.0.1:0\n"
                    "database = %s\nrate = 1000\n\n[log %s]\nkey = %s\n"
                    % (self.name, self.key,
                       os.path.join(self.dir, "state.db"), NAME, log_key))
        r = subprocess.run([BIN, "witness", "vkey", "--config", self.conf],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        self.vkey = r.stdout.strip()
        self.proc = None
        self.runs = 0

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        self.runs += 1
        self.log_path = os.path.join(self.dir, "run-%d.log" % self.runs)
        log = open(self.log_path, "ab")
        args = [BIN, "witness", "serve", "--config", self.conf]
        if self.port:
            args += ["--listen", "127.0.0.1:%d" % self.port]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                     stderr=log, stdin=subprocess.DEVNULL)
        log.close()

        def started():
            if self.proc.poll() is not None:
                raise AssertionError("witness %s exited:\n%s"
                                     % (self.id, self.log()))
            for line in self.log().splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("event") == "witness.started":
                    return rec["port"]
            return None
        port = wait_until(started, "witness %s to start" % self.id, 60)
        assert self.port in (0, port), (self.port, port)
        self.port = port
        return self

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)
        self.proc = None

    def stop(self):
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            rc = self.proc.wait(timeout=60)
            self.proc = None
            assert rc == 0, "witness %s exit %s:\n%s" % (self.id, rc,
                                                         self.log())

    def show(self):
        r = subprocess.run([BIN, "witness", "show", "--config", self.conf],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return [json.loads(l) for l in r.stdout.splitlines() if l.strip()]


class WitnessedInstall(Install):
    """The anchor suite's operator layout, with [witness a] and [witness
    b] (and checkpoints at stops only: checkpoint_every above any run's
    events), so every checkpoint's size is the log's size at a stop."""

    witnesses = ()
    auditor = None  # an [approver] section: audit-alice, group auditors
    pg_url = None  # on PostgreSQL: the one database of every run

    def start(self, *extra):
        """Install.start; on PostgreSQL every run on one database."""
        if not pg.on_postgres():
            return super().start(*extra)
        assert not extra, "PostgreSQL runs take no extra arguments here"
        if self.pg_url is None:
            self.pg_url = pg.database_for(self.root)
        self.runs += 1
        tmp = os.path.join(self.root, "run-%d" % self.runs)
        os.mkdir(tmp)
        srv = Server.custom(self.conf, tmp, self.env, database=self.pg_url)
        m = re.search(r'"audit_key":\s*"([^"]+)"', srv.log())
        assert m, srv.log()
        self.vkey = m.group(1)
        return srv

    @property
    def store(self):
        """What `audit verify --db` takes: the file, or the URL."""
        return self.pg_url or self.db

    def write_conf(self, anchor_line=None, every=1000000):
        super().write_conf(anchor_line, every)
        if pg.on_postgres():
            with open(self.conf) as f:
                text = f.read()
            with open(self.conf, "w") as f:
                f.write(text.replace("checkpoint_interval = %d\n" % INTERVAL,
                                     "checkpoint_interval = 1\n"))
        if WitnessedInstall.auditor is None:
            WitnessedInstall.auditor = approver_section("audit-alice",
                                                        "auditors")
        with open(self.conf, "a") as f:
            f.write("\n" + WitnessedInstall.auditor)
            for w in self.witnesses:
                f.write("\n[witness %s]\nurl = %s\nkey = %s\n"
                        "timeout_ms = 5000\nretry_ms = 100\n"
                        % (w.id, w.url, w.vkey))


def events_of(srv, event, witness=None):
    """srv's log records of event (of that witness when given)."""
    return [r for r in log_events(srv, event)
            if witness is None or r.get("witness") == witness]


def checkpoint(srv):
    """The latest note and its cosignature lines, from the PDP."""
    st, body, _ = srv.call("GET", "/v1/audit/checkpoint",
                           token=srv.env["INTENTGATE_AUDITOR_TOKEN"])
    assert st == 200, body
    return body.decode() if isinstance(body, bytes) else body


def cosigned_by(note, w):
    return any(l.startswith("%s %s " % (DASH, w.name))
               for l in note.splitlines())


def auditor(srv):
    b = Browser(srv)
    r = b.login("audit-alice", PASSWORD)
    assert r.status == 303, r.body
    return b


def audit_page(srv):
    """/ui/audit as an auditor sees it: the <pre id=checkpoint> text and
    {witness id: {field: text}} of its witnesses."""
    r = auditor(srv).get("/ui/audit")
    assert r.status == 200, r.body[:2000]
    m = re.search(r'<pre id="checkpoint">(.*?)</pre>', r.body, re.S)
    note = html.unescape(m.group(1)) if m else None
    ws = {}
    for li in re.findall(r'<li class="witness">(.*?)</li>', r.body, re.S):
        f = {k: html.unescape(re.sub(r"<[^>]*>", "", v)) for k, v in re.findall(
            r'<dd class="witness-([a-z-]+)">(.*?)</dd>', li, re.S)}
        ws[f["id"]] = f
    return note, ws


def size_of(note):
    return int(note.split("\n")[1])


def shown_size(rows):
    """The size a witness's `witness show` gives for this log."""
    for r in rows:
        if r.get("origin") == NAME and "reason" not in r:
            return r.get("size")
    return None


def evidence_of(rows, note):
    """`witness show`'s evidence rows of note (its checkpoint text)."""
    text = note[:note.index("\n\n") + 1]
    return [r for r in rows if "reason" in r and
            r.get("note", "").startswith(text)]


class WitnessE2E(unittest.TestCase):
    def setUp(self):
        base = layout_roots()[0]
        WitnessedInstall.witnesses = ()
        self.inst = WitnessedInstall(base)
        self.srv = self.a = self.b = None
        self.addCleanup(self.clean)  # also when the rest of setUp fails
        _, pk = secret_key(self.inst.audit_key)
        self.log_vkey = log_vkey(NAME, pk)
        self.a = Witness(self.inst.root, "a", self.log_vkey)
        self.b = Witness(self.inst.root, "b", self.log_vkey)
        self.c = Witness(self.inst.root, "c", self.log_vkey)  # never runs
        self.a.start()
        self.b.start()
        WitnessedInstall.witnesses = (self.a, self.b)  # their ports known
        self.inst.write_conf()

    def clean(self):
        if self.srv is not None:
            self.srv.stop()
        for w in (self.a, self.b):
            if w is not None and w.proc is not None:
                w.proc.kill()
                w.proc.wait()
        if self.inst.pg_url is not None:
            pg.drop_database_for(self.inst.root)
        self.inst.cleanup()

    def verify(self, db, *witnesses, quorum=None):
        args = ["audit", "verify", "--db", db, "--key", self.log_vkey]
        for w in witnesses:
            args += ["--witness", w.vkey]
        if quorum is not None:
            args += ["--witness-quorum", str(quorum)]
        return ig(*args)

    def wait_latest_cosigned(self, srv, *ws):
        """The latest checkpoint once cosigned by ws; on PostgreSQL the
        one of every event sequenced so far (a checkpoint a second)."""
        want = srv.leaf_count() if pg.on_postgres() else None

        def done():
            note = checkpoint(srv)
            return ((want is None or size_of(note) == want) and
                    all(cosigned_by(note, w) for w in ws)) and note
        return wait_until(done, "the latest checkpoint cosigned by %s" %
                          ", ".join(w.id for w in ws), 60)

    def witness_line(self, report, w):
        m = re.search(r"^witness:\s+%s\+\S+ (.*)$" % re.escape(w.name),
                      report, re.M)
        self.assertIsNotNone(m, report)
        return m.group(1)

    def node_verify(self, note, *ws, quorum=None):
        """The independent Node.js verifier (tests/interop) on note with
        the witnesses' vkeys: (exit status, its line)."""
        node = shutil.which("node")
        self.assertIsNotNone(node, "this test needs node (scripts/deps.sh "
                             "installs it) for the independent check")
        d = os.path.join(self.inst.root, "node-%d" % len(os.listdir(
            self.inst.root)))
        os.mkdir(d)
        files = {"vkey": self.log_vkey, "note": note}
        args = [node, NODE_VERIFIER, os.path.join(d, "vkey"),
                os.path.join(d, "note")]
        for w in ws:
            files["w-" + w.id] = w.vkey
            args += ["--witness", os.path.join(d, "w-" + w.id)]
        if quorum is not None:
            args += ["--quorum", str(quorum)]
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        p = subprocess.run(args, capture_output=True, text=True, timeout=60)
        if quorum is None:
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.returncode, p.stdout

    def honest_history(self):
        """Runs 1 to 3: S1 and S2 cosigned by both; returns (S1, S2, a
        copy of the database as it was after run 2's stop)."""
        inst = self.inst
        inst.run_once("one", 3)
        # Run 2: on SQLite the start submits S1 (signed at run 1's stop)
        # to both; on PostgreSQL a replica submits what it signs (every
        # second here), not at start.
        self.srv = inst.start()
        if pg.on_postgres():
            inst.lifecycle(self.srv, "two-a", 1)
        s1 = size_of(self.wait_latest_cosigned(self.srv, self.a, self.b))
        inst.lifecycle(self.srv, "two", 3)
        # Witness a is killed (-9) and b stopped before run 2 stops: the
        # checkpoint signed at that stop reaches neither (a clean stop
        # does not wait for a witness that is down).
        self.a.kill()
        self.b.stop()
        finish(self.srv)
        self.srv = None
        fork_db = None
        if not pg.on_postgres():
            fork_db = os.path.join(inst.root, "fork.db")
            shutil.copy(inst.db, fork_db)
        # Witness a restarts: it keeps S1. Witness b stays down.
        self.a.start()
        self.assertEqual(shown_size(self.a.show()), s1)
        self.srv = inst.start()
        if pg.on_postgres():
            inst.lifecycle(self.srv, "three-a", 1)
        s2 = size_of(self.wait_latest_cosigned(self.srv, self.a))
        self.assertGreater(s2, s1)
        wait_until(lambda: events_of(self.srv, "witness.unreachable", "b"),
                   "witness b unreachable", 60)
        self.assertEqual(events_of(self.srv, "witness.refused"), [])
        self.assertEqual(events_of(self.srv, "witness.conflict"), [])
        # Decisions go on while b is down.
        inst.lifecycle(self.srv, "three", 1)
        # b comes back on its port and catches up from S1.
        self.b.start()
        note = self.wait_latest_cosigned(self.srv, self.a, self.b)
        if pg.on_postgres():
            s2 = size_of(note)
        self.assertEqual(size_of(note), s2)  # SQLite: run 2's stop
        self.node_verify(note, self.a, self.b)
        # The auditors' page shows both cosignatures and each witness.
        page, ws = audit_page(self.srv)
        self.assertEqual(page, note)
        self.assertEqual(sorted(ws), ["a", "b"])
        for w in (self.a, self.b):
            f = ws[w.id]
            self.assertEqual(f["name"], w.name)
            self.assertEqual(f["key-id"], w.vkey.split("+")[1])
            self.assertEqual(f["state"], "cosigned (valid)")
            self.assertRegex(f["time"], r"^\d{4}-\d\d-\d\dT")
            self.assertEqual(f["last-size"], str(s2))
        # Its two downloads verify with the witnesses (the checkpoints
        # carry the cosignature lines).
        b = auditor(self.srv)
        for name in ("export", "checkpoints"):
            r = b.get("/ui/audit/%s.jsonl" % name)
            self.assertEqual(r.status, 200, r.body[:500])
            with open(os.path.join(inst.root, "ui-%s.jsonl" % name),
                      "wb") as f:
                f.write(r.raw)
        rc, out, err = ig("audit", "verify", "--leaves",
                          os.path.join(inst.root, "ui-export.jsonl"),
                          "--checkpoints",
                          os.path.join(inst.root, "ui-checkpoints.jsonl"),
                          "--key", self.log_vkey, "--witness", self.a.vkey,
                          "--witness", self.b.vkey)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("2 of 2 cosigned the latest checkpoint (size %d)" % s2,
                      out)
        return s1, s2, fork_db, note

    def honest_verified(self):
        """honest_history, then the checks of the cosigned log while run 3
        serves: verify with the witnesses, offline from an export too."""
        inst = self.inst
        s1, s2, fork_db, note = self.honest_history()
        # The live database verifies with both witnesses: quorum 2.
        rc, out, err = self.verify(inst.store, self.a, self.b)
        self.assertEqual(rc, 0, out + err)
        for w in (self.a, self.b):
            line = self.witness_line(out, w)
            self.assertTrue(line.startswith("cosigned ("), line)
            self.assertIn("its view: size %d" % s2, line)
        self.assertIn("2 of 2 cosigned the latest checkpoint (size %d); "
                      "quorum 2 met" % s2, out)
        # A witness that never saw the log: quorum 3 fails, 2 of 3 passes.
        rc, out, err = self.verify(inst.store, self.a, self.b, self.c)
        self.assertEqual(rc, 4, out + err)
        self.assertIn("missing; its view: none", self.witness_line(out, self.c))
        self.assertIn("QUORUM NOT MET", out)
        rc, out, err = self.verify(inst.store, self.a, self.b, self.c,
                                   quorum=2)
        self.assertEqual(rc, 0, out + err)
        # The export carries the cosignatures: the offline check agrees.
        leaves = os.path.join(inst.root, "leaves.jsonl")
        cps = os.path.join(inst.root, "checkpoints.jsonl")
        rc, out, err = ig("audit", "export", "--db", inst.store, "--format",
                          "jsonl", "--checkpoints-out", cps)
        self.assertEqual(rc, 0, err)
        with open(leaves, "w") as f:
            f.write(out)
        rc, out, err = ig("audit", "verify", "--leaves", leaves,
                          "--checkpoints", cps, "--key", self.log_vkey,
                          "--witness", self.a.vkey, "--witness", self.b.vkey)
        self.assertIn("quorum 2 met", out)
        # Both witnesses stop before run 3 does, so that they still hold
        # S2 when test_fork shows them the fork of S2 (a clean stop would
        # have them cosign run 3's last checkpoint).
        self.a.stop()
        self.b.stop()
        finish(self.srv)
        self.srv = None
        self.a.start()
        self.b.start()
        return s1, s2, fork_db, note

    def test_honest(self):
        self.honest_verified()

    def test_a_clean_stop_is_witnessed(self):
        """A clean stop signs a last checkpoint and waits a moment for the
        witnesses to cosign it: a copy of the database taken after the
        stop verifies with the quorum."""
        inst = self.inst
        srv = inst.run_once("one", 3)
        log = srv.log()
        self.assertIn('"server.stopped"', log)
        self.assertNotIn("witness.stop_unwitnessed", log)
        rc, out, err = self.verify(inst.store, self.a, self.b, quorum=2)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("quorum 2 met", out)

    def test_witness_serves_what_it_cosigned(self):
        """GET <witness>/<hex SHA-256(origin)>/checkpoint: the checkpoint
        as the log signed it, with the witness's cosignature: what a
        monitor checks with the log's key and the witness's, here with
        the independent Node.js verifier."""
        inst = self.inst
        inst.run_once("one", 3)
        self.srv = inst.start()
        if pg.on_postgres():
            inst.lifecycle(self.srv, "two-a", 1)
        note = self.wait_latest_cosigned(self.srv, self.a, self.b)
        path = "/%s/checkpoint" % hashlib.sha256(NAME.encode()).hexdigest()
        for w in (self.a, self.b):
            with urllib.request.urlopen(w.url + path, timeout=30) as r:
                served = r.read().decode()
            self.assertEqual(served.split("\n\n")[0], note.split("\n\n")[0])
            self.assertIn("\n\n%s %s " % (DASH, NAME), served)
            self.assertTrue(cosigned_by(served, w), served)
            self.node_verify(served, w)
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(self.a.url + "/%s/checkpoint" %
                                   hashlib.sha256(b"other").hexdigest(),
                                   timeout=30)
        self.assertEqual(e.exception.code, 404)
        finish(self.srv)
        self.srv = None

    def test_fork(self):
        """SQLite: the operator edits the database file."""
        self.assertFalse(pg.on_postgres(), "run test_honest on PostgreSQL")
        self.fork(*self.honest_verified())

    def fork(self, s1, s2, fork_db, honest_note):
        inst = self.inst
        # The operator rewrites an event between S1 and S2 and re-signs
        # the rewritten tree at S2 with the real audit key.
        con = tamper(fork_db)
        rows = con.execute("SELECT seq, event FROM audit_events ORDER BY "
                           "seq").fetchall()
        self.assertEqual(len(rows), s2)
        edited = False
        for i, (seq, ev) in enumerate(rows):
            if s1 <= i < s2 and '"amount":1' in ev:
                con.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                            (ev.replace('"amount":1', '"amount":7', 1), seq))
                edited = True
                break
        self.assertTrue(edited)
        rewrite_tiles(con)
        evs = [r[0] for r in con.execute(
            "SELECT event FROM audit_events ORDER BY seq")]
        root = mth([leaf_hash(e.encode()) for e in evs])
        fnote = sign_checkpoint(inst.audit_key, NAME, s2, root)
        con.execute("DELETE FROM cosignatures WHERE size = ?", (s2,))
        con.execute("UPDATE checkpoints SET note = ? WHERE size = ?",
                    (fnote, s2))
        con.commit()
        con.close()
        # A PDP on the fork: its own database and anchor, the real key.
        fork_anchor = os.path.join(inst.root, "fork.checkpoint")
        with open(fork_anchor, "w") as f:
            f.write(fnote)
        os.chmod(fork_anchor, 0o600)
        inst.db = fork_db
        inst.write_conf("anchor = %s" % fork_anchor)
        self.srv = inst.start()
        for w in (self.a, self.b):
            wait_until(lambda w=w: events_of(self.srv, "witness.refused",
                                             w.id),
                       "witness %s to refuse the fork" % w.id, 60)
        self.assertEqual(events_of(self.srv, "witness.cosigned"), [])
        for w in (self.a, self.b):
            rows = w.show()
            ev = evidence_of(rows, fnote)
            self.assertTrue(ev, rows)
            # Evidence is the fork as the log's key signed it: the
            # signature line comes with it, or it proves nothing.
            self.assertIn("\n\n%s %s " % (DASH, NAME), ev[0]["note"], ev)
            self.assertEqual(shown_size(rows), s2)  # still the honest S2
            self.assertEqual(evidence_of(rows, honest_note), [])
        # Decisions go on; the page shows the fork's checkpoint bare.
        inst.lifecycle(self.srv, "fork", 1)
        page, ws = audit_page(self.srv)
        self.assertEqual(size_of(page), s2)
        self.assertNotIn("witness.test.example", page)
        for w in (self.a, self.b):
            self.assertEqual(ws[w.id]["state"], "not cosigned")
            self.assertEqual(ws[w.id]["time"], "-")
            self.assertEqual(ws[w.id]["last-size"], str(s1))
        rc, out, err = self.verify(fork_db, self.a, self.b, quorum=1)
        self.assertEqual(rc, 4, out + err)
        for w in (self.a, self.b):
            line = self.witness_line(out, w)
            self.assertTrue(line.startswith("missing"), line)
            self.assertIn("its view: size %d" % s1, line)
        finish(self.srv)
        self.srv = None
        # The honest cosignatures of S2 copied onto the fork's S2 and its
        # latest checkpoint (signed at the stop): forgeries on both.
        latest = inst.checkpoints()[-1][0]
        self.assertGreater(latest, s2)
        con = tamper(fork_db)
        for w in (self.a, self.b):
            line = [l for l in honest_note.splitlines()
                    if l.startswith("%s %s " % (DASH, w.name))][0]
            for size in (s2, latest):
                con.execute("INSERT INTO cosignatures (size, witness, line, "
                            "created_at) VALUES (?, ?, ?, ?)",
                            (size, w.name, line + "\n", int(time.time())))
        con.commit()
        con.close()
        rc, out, err = self.verify(fork_db, self.a, self.b, quorum=1)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("INVALID cosignature on size %d" % latest, out)
        self.assertIn("bad_cosignature", out)
        # The independent verifier refuses them too; the page says INVALID.
        self.srv = inst.start()
        page, ws = audit_page(self.srv)
        self.assertEqual(size_of(page), latest)
        for w in (self.a, self.b):
            self.assertEqual(ws[w.id]["state"], "INVALID cosignature")
        rc, line = self.node_verify(page, self.a, self.b, quorum=1)
        self.assertEqual(rc, 1, line)
        self.assertIn("invalid cosignature", line)
        finish(self.srv)
        self.srv = None


if __name__ == "__main__":
    run_tests()
