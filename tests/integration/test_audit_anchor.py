"""test_audit_anchor.py - the audit log's history is anchored outside the
database (issue 12, item 4).

The PDP runs as an operator would install it: the database in a state
directory (var/lib/intentgate), the config in etc/intentgate, the keys in a
credentials directory of their own (run/credentials/intentgate-pdp.service,
as systemd's LoadCredential= gives them). Two such layouts are used: one
under this build tree (inside the clone) and one under /var/lib or /srv
when they are writable (else a second one under the build tree); never
/tmp.

The attacker can write the SQLite file but holds neither the audit key nor
the anchor file beside it:

  Rewrite   drop the triggers, delete the checkpoints above size N, rewrite
            later events, recompute audit_tiles: the PDP refuses to start
            (the tree no longer extends the anchor) and so never signs the
            rewritten tree; `audit verify --anchor` fails; an edited event
            without the recomputation is refused naming the checkpoint
            (these logs are shorter than one tile of 256 leaves: the unit
            tests name the leaf and the tile in longer ones), a tile past
            the log naming the tile.
  Forged    a leaf appended after the last checkpoint: `audit verify` exits
            3 (unsigned) once it is older than checkpoint_interval plus the
            margin; the PDP refuses to start (it was added after a clean
            shutdown) instead of signing it.
  Anchor    the anchor file: 0600, rewritten at every checkpoint, equal to
            the newest checkpoint; restarts of an untampered database work;
            a database restored from an older backup (shorter than the
            anchor) and a missing anchor are refused with a clear message
            until the operator adopts (--adopt-audit-anchor); a key in a
            directory the PDP cannot write needs [audit] anchor.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_audit_anchor.py
"""
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, layout_roots, run_tests  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.path.join(HERE, "..", "..", "policies", "bundle")
NAME = "anchor.test.example/audit"
INTERVAL = 3600  # checkpoint_interval: checkpoints come by count and at stop


# ---- RFC 6962, written from the spec ----

def leaf_hash(b):
    return hashlib.sha256(b"\x00" + b).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def all_tiles(leaves):
    """Every full C2SP tile: {(level, idx): 256 hashes}, as the PDP stores."""
    out = {}
    level, row = 0, list(leaves)
    while len(row) >= 256:
        full = len(row) // 256
        for i in range(full):
            out[(level, i)] = b"".join(row[256 * i:256 * (i + 1)])
        row = [mth(row[256 * i:256 * (i + 1)]) for i in range(full)]
        level += 1
    return out


def mth(hashes):
    if len(hashes) == 1:
        return hashes[0]
    k = 1
    while k * 2 < len(hashes):
        k *= 2
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def note_size_root(note):
    lines = note.split("\n")
    return int(lines[1]), base64.b64decode(lines[2])


def sha256_hex(s):
    return hashlib.sha256(s.encode()).hexdigest()


def ig(*args):
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True,
                       timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


class Install:
    """One PDP installed as an operator would: keys in a credentials
    directory, the database in a state directory, the config in etc."""

    def __init__(self, base, anchor_line=None):
        # Under the clone's build tree (which is under /tmp only when the
        # clone is) or a system directory: never a bare /tmp directory.
        self.root = tempfile.mkdtemp(prefix="ig-anchor-it-", dir=base)
        self.etc = os.path.join(self.root, "etc", "intentgate")
        self.state = os.path.join(self.root, "var", "lib", "intentgate")
        self.cred = os.path.join(self.root, "run", "credentials",
                                 "intentgate-pdp.service")
        for d in (self.etc, self.state, self.cred):
            os.makedirs(d, mode=0o700)
        shutil.copytree(BUNDLE, os.path.join(self.etc, "policies"))
        self.db = os.path.join(self.state, "intentgate.db")
        self.audit_key = os.path.join(self.cred, "audit.key")
        self.anchor = self.audit_key + ".checkpoint"  # the default
        self.keygen("signing.key")
        self.keygen("audit.key")
        self.tokens = {k: "igt_" + base64.urlsafe_b64encode(
            os.urandom(24)).decode().rstrip("=") for k in
            ("agent", "executor", "auditor")}
        self.env = {"INTENTGATE_AGENT_TOKEN": self.tokens["agent"],
                    "INTENTGATE_EXECUTOR_TOKEN": self.tokens["executor"],
                    "INTENTGATE_AUDITOR_TOKEN": self.tokens["auditor"]}
        self.conf = os.path.join(self.etc, "intentgate.conf")
        self.write_conf(anchor_line)
        self.vkey = None
        self.runs = 0

    def keygen(self, name):
        tmp = os.path.join(self.root, "keygen-" + name)
        r = subprocess.run([BIN, "keygen", "--out", tmp],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        os.rename(os.path.join(tmp, "signing.key"),
                  os.path.join(self.cred, name))
        shutil.rmtree(tmp)

    def write_conf(self, anchor_line=None, every=5):
        text = (
            "listen = 127.0.0.1:0\n"
            "database = %s\n"
            "signing_key = %s/signing.key\n"
            "policy_dir = %s/policies\n"
            "synchronous = full\n"
            "\n[agent anchor-agent]\ntenant = t\ntoken_sha256 = %s\n"
            "\n[executor anchor-executor]\nactions = payments.\n"
            "token_sha256 = %s\n"
            "\n[auditor anchor-auditor]\ntoken_sha256 = %s\n"
            "\n[audit]\nname = %s\nkey = %s\n"
            "checkpoint_every = %d\ncheckpoint_interval = %d\n"
            % (self.db, self.cred, self.etc, sha256_hex(self.tokens["agent"]),
               sha256_hex(self.tokens["executor"]),
               sha256_hex(self.tokens["auditor"]), NAME, self.audit_key,
               every, INTERVAL))
        if anchor_line:
            text += anchor_line + "\n"
        with open(self.conf, "w") as f:
            f.write(text)

    def start(self, *extra):
        """The running server, or an AssertionError with the log."""
        self.runs += 1
        tmp = os.path.join(self.root, "run-%d" % self.runs)
        os.mkdir(tmp)
        if extra:
            srv = start_custom(self.conf, tmp, self.env, extra)
        else:
            srv = Server.custom(self.conf, tmp, self.env)
        m = re.search(r'"audit_key":\s*"([^"]+)"', srv.log())
        assert m, srv.log()
        self.vkey = m.group(1)
        return srv

    def refused(self, *extra):
        """Start expecting a refusal: returns stderr. Fails if it serves."""
        p = subprocess.Popen([BIN, "serve", "--config", self.conf] +
                             list(extra), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        err = b""
        deadline = time.time() + 120
        while time.time() < deadline:
            line = p.stderr.readline()
            if not line:
                break
            err += line
            if b'"server.started"' in line:
                p.send_signal(signal.SIGTERM)
                rest = p.communicate(timeout=60)[1]
                raise AssertionError("the PDP started and served:\n" +
                                     (err + rest).decode())
        rc = p.wait(timeout=60)
        p.stderr.close()
        if rc == 0:
            raise AssertionError("exit 0:\n" + err.decode())
        # The JSON log lines, then one line saying why.
        lines = [l for l in err.decode().splitlines()
                 if not l.startswith("{")]
        assert len(lines) == 1, err.decode()
        assert lines[0].startswith("intentgate serve: "), lines
        return lines[0]

    def lifecycle(self, srv, tag, n=3):
        for i in range(n):
            st, body, _ = srv.submit("payments.refund",
                                     "orders/%s-%d" % (tag, i),
                                     {"amount": 10 + i, "currency": "EUR"})
            assert st == 201, body

    def run_once(self, tag, n=3, *extra):
        srv = self.start(*extra)
        try:
            self.lifecycle(srv, tag, n)
        finally:
            finish(srv)
        return srv

    def connect(self):
        return sqlite3.connect(self.db)

    def events(self):
        con = self.connect()
        try:
            return [r[0] for r in con.execute(
                "SELECT event FROM audit_events ORDER BY seq")]
        finally:
            con.close()

    def checkpoints(self):
        con = self.connect()
        try:
            return con.execute("SELECT size, note FROM checkpoints ORDER BY "
                               "size").fetchall()
        finally:
            con.close()

    def verify(self, *extra):
        return ig("audit", "verify", "--db", self.db, "--key", self.vkey,
                  *extra)

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def start_custom(conf, tmp, env, extra):
    """Server.custom with extra arguments after --config."""
    log_path = os.path.join(tmp, "server.log")
    log = open(log_path, "ab")
    proc = subprocess.Popen([BIN, "serve", "--config", conf] + list(extra),
                            stdout=subprocess.PIPE, stderr=log,
                            stdin=subprocess.DEVNULL)
    log.close()
    deadline = time.time() + 60
    port = None
    while time.time() < deadline and port is None:
        if proc.poll() is not None:
            raise AssertionError("server exited: " + open(log_path).read())
        with open(log_path) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("event") == "server.started":
                    port = rec["port"]
        time.sleep(0.05)
    if port is None:
        raise AssertionError("server did not start: " + open(log_path).read())
    env = dict(env)
    env["INTENTGATE_URL"] = "http://127.0.0.1:%d" % port
    srv = Server(proc, tmp, env, log_path)
    srv.wait_healthy()
    return srv


def finish(srv):
    rc = srv.stop()
    log = srv.log()
    if rc != 0 or "Sanitizer" in log or "runtime error" in log:
        raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))


def tamper(db):
    """A connection to db with every immutability trigger dropped."""
    con = sqlite3.connect(db)
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE "
                               "type = 'trigger'").fetchall():
        if name.endswith("_no_update") or name.endswith("_no_delete"):
            con.execute('DROP TRIGGER "%s"' % name)
    return con


def rewrite_tiles(con):
    """Recompute audit_tiles from audit_events, as the attacker does."""
    evs = [r[0] for r in con.execute(
        "SELECT event FROM audit_events ORDER BY seq")]
    con.execute("DELETE FROM audit_tiles")
    con.executemany("INSERT INTO audit_tiles (level, idx, hashes) VALUES "
                    "(?, ?, ?)",
                    [(lv, i, h) for (lv, i), h in
                     all_tiles([leaf_hash(e.encode()) for e in evs]).items()])


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Base(unittest.TestCase):
    base = None

    def setUp(self):
        self.inst = Install(self.base or layout_roots()[0])

    def tearDown(self):
        self.inst.cleanup()

    def two_runs(self):
        """Two runs: checkpoints at 5, 10, ... and at each stop."""
        self.inst.run_once("a", 3)
        first = self.inst.checkpoints()
        self.inst.run_once("b", 4)
        return first


class Rewrite(Base):
    def test_rewritten_history_is_refused_and_never_signed(self):
        inst = self.inst
        first = self.two_runs()
        n1 = first[-1][0]  # the first run's last checkpoint
        cps = inst.checkpoints()
        top, top_note = cps[-1]
        self.assertGreater(top, n1 + 3)
        with open(inst.anchor) as f:
            self.assertEqual(f.read(), top_note)
        # The attack: with write access to the database only.
        con = tamper(inst.db)
        con.execute("DELETE FROM checkpoints WHERE size > ?", (n1,))
        rows = con.execute("SELECT seq, event FROM audit_events WHERE seq > ? "
                           "ORDER BY seq", (n1,)).fetchall()
        edited = 0
        for seq, ev in rows:
            if '"amount":1' in ev:
                con.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                            (ev.replace('"amount":1', '"amount":9'), seq))
                edited += 1
        self.assertGreater(edited, 0)
        rewrite_tiles(con)
        con.commit()
        con.close()
        # Self-consistent: the database alone would verify (unsigned tail).
        before = inst.verify()
        self.assertIn("leaf hashes:", before[1])
        # The PDP refuses to start, naming the anchor, and signs nothing.
        err = inst.refused()
        self.assertIn("anchor", err)
        self.assertIn(inst.anchor, err)
        self.assertIn("size %d" % top, err)
        self.assertEqual([c[0] for c in inst.checkpoints()],
                         [c[0] for c in cps if c[0] <= n1])
        with open(inst.anchor) as f:
            self.assertEqual(f.read(), top_note)  # untouched
        # The verifier, given the anchor, names the rewrite.
        rc, out, err = inst.verify("--anchor", inst.anchor)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("FAILED root_mismatch at %d" % top, out)
        self.assertIn("anchor", err)
        # And with time passed, the unsigned rewritten tail fails too.
        rc, out, err = inst.verify("--at", iso(time.time() + 7200),
                                   "--checkpoint-interval", "60")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("unsigned", out)

    def test_edited_event_refused_naming_its_checkpoint(self):
        inst = self.inst
        self.two_runs()
        con = tamper(inst.db)
        seq = con.execute("SELECT min(seq) FROM audit_events WHERE event "
                          "LIKE '%\"amount\":11%'").fetchone()[0]
        con.execute("UPDATE audit_events SET event = replace(event, "
                    "'\"amount\":11', '\"amount\":99') WHERE seq = ?", (seq,))
        con.commit()
        con.close()
        size = min(s for s, _ in inst.checkpoints() if s >= seq)
        err = inst.refused()
        self.assertIn("the signed checkpoint of size %d is not the root" % size,
                      err)

    def test_tile_past_the_log_refused_naming_it(self):
        inst = self.inst
        self.two_runs()
        con = tamper(inst.db)
        con.execute("INSERT INTO audit_tiles VALUES (0, 0, zeroblob(8192))")
        con.commit()
        con.close()
        err = inst.refused()
        self.assertIn("audit_tiles holds tile/0/000, past the log", err)

    def test_rewritten_checkpoint_row_refused(self):
        """A stored checkpoint whose root is not the tree's: refused at
        open (not only logged)."""
        inst = self.inst
        self.two_runs()
        cps = inst.checkpoints()
        size, note = cps[0]
        lines = note.split("\n")
        lines[2] = base64.b64encode(os.urandom(32)).decode()
        con = tamper(inst.db)
        con.execute("UPDATE checkpoints SET note = ? WHERE size = ?",
                    ("\n".join(lines), size))
        con.commit()
        con.close()
        err = inst.refused()
        self.assertIn("checkpoint of size %d" % size, err)


class Forged(Base):
    def forge(self, when):
        con = tamper(self.inst.db)
        ev = json.dumps({"type": "intent.decided", "time": iso(when),
                         "intent_id": "00000000-0000-4000-8000-000000000000",
                         "decision": "ALLOW"}, separators=(",", ":"),
                        sort_keys=True)
        seq = con.execute("INSERT INTO audit_events (event) VALUES (?)",
                          (ev,)).lastrowid
        rewrite_tiles(con)
        con.commit()
        con.close()
        return seq - 1

    def test_forged_leaf_after_the_last_checkpoint(self):
        inst = self.inst
        self.two_runs()
        rc, out, err = inst.verify()
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("unsigned:", out)
        index = self.forge(time.time() - 3 * 3600)
        rc, out, err = inst.verify()
        self.assertEqual(rc, 3, out + err)
        self.assertIn("unsigned:", out)
        self.assertIn("leaf %d" % index, out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        # The PDP stopped cleanly with everything signed: a leaf added
        # since was not written by it, and it will not sign it.
        err = inst.refused()
        self.assertIn("after the PDP stopped", err)
        self.assertIn("leaf %d" % index, err)
        self.assertEqual(inst.checkpoints()[-1][0], index)

    def test_forged_leaf_dated_in_the_future(self):
        # A time far ahead must not keep a forged leaf "recent" forever.
        inst = self.inst
        self.two_runs()
        index = self.forge(time.time() + 10 * 365 * 86400)
        rc, out, err = inst.verify("--checkpoint-interval", "60")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("leaf %d" % index, out)
        self.assertIn("after the time of the check", out)

    def test_forged_leaf_without_a_time(self):
        inst = self.inst
        self.two_runs()
        con = tamper(inst.db)
        ev = '{"decision":"ALLOW","type":"intent.decided"}'
        seq = con.execute("INSERT INTO audit_events (event) VALUES (?)",
                          (ev,)).lastrowid
        rewrite_tiles(con)
        con.commit()
        con.close()
        rc, out, err = inst.verify("--checkpoint-interval", "60")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("leaf %d has no readable time" % (seq - 1), out)

    def test_recent_unsigned_leaf_is_not_yet_a_failure(self):
        inst = self.inst
        self.two_runs()
        index = self.forge(time.time())
        rc, out, err = inst.verify("--checkpoint-interval", "60")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("unsigned:", out)
        rc, out, err = inst.verify("--checkpoint-interval", "60", "--at",
                                   iso(time.time() + 600))
        self.assertEqual(rc, 3, out + err)
        self.assertIn("leaf %d" % index, out)


class TailRewrite(Base):
    """The unsigned tail rewritten behind a running PDP (events and tiles
    together). The PDP keeps the partial tile at the end of its tree in
    memory and never rereads those rows: the next checkpoint signs the
    tree it wrote, not the rewritten one. So the next start refuses the
    database naming that checkpoint, `audit verify` fails, and the
    rewritten tail is never signed - after a clean stop or a crash."""

    def rewrite_tail(self, signed):
        con = tamper(self.inst.db)
        seq = con.execute("SELECT max(seq) FROM audit_events").fetchone()[0]
        self.assertGreater(seq, signed)
        ev = json.dumps({"type": "intent.decided", "time": iso(time.time()),
                         "intent_id": "00000000-0000-4000-8000-000000000000",
                         "decision": "ALLOW"}, separators=(",", ":"),
                        sort_keys=True)
        con.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                    (ev, seq))
        rewrite_tiles(con)
        con.commit()
        con.close()
        return seq - 1

    def start_tail(self):
        inst = self.inst
        inst.run_once("a", 2)
        signed = inst.checkpoints()[-1][0]
        inst.write_conf(every=100000)
        srv = inst.start()
        inst.lifecycle(srv, "b", 2)
        return srv, signed

    def refused_naming(self, size):
        inst = self.inst
        err = inst.refused()
        self.assertIn("the signed checkpoint of size %d is not the root" %
                      size, err)
        rc, out, err = inst.verify("--anchor", inst.anchor)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("FAILED root_mismatch at %d" % size, out)

    def test_rewritten_tail_is_not_signed_after_a_clean_stop(self):
        inst = self.inst
        srv, signed = self.start_tail()
        index = self.rewrite_tail(signed)
        srv.stop()
        self.assertNotIn("audit.checkpoint_refused", srv.log())
        self.assertEqual(inst.checkpoints()[-1][0], index + 1)
        self.refused_naming(index + 1)

    def test_rewritten_tail_is_not_signed_before_a_crash(self):
        inst = self.inst
        inst.run_once("a", 2)
        signed = inst.checkpoints()[-1][0]
        inst.write_conf(every=4)
        srv = inst.start()
        try:
            inst.lifecycle(srv, "b", 1)
            self.assertEqual(inst.checkpoints()[-1][0], signed)
            self.rewrite_tail(signed)
            # More events until a checkpoint is signed, then a crash.
            for i in range(8):
                if inst.checkpoints()[-1][0] > signed:
                    break
                inst.lifecycle(srv, "c%d" % i, 1)
        finally:
            srv.proc.send_signal(signal.SIGKILL)
            srv.stop()
        sizes = [s for s, _ in inst.checkpoints() if s > signed]
        self.assertTrue(sizes)
        self.refused_naming(min(sizes))


class Anchor(Base):
    def test_anchor_file_mode_and_each_checkpoint(self):
        inst = self.inst
        srv = inst.start()
        try:
            seen = set()
            for i in range(4):
                inst.lifecycle(srv, "m%d" % i, 3)
                deadline = time.time() + 20
                while time.time() < deadline:
                    cps = inst.checkpoints()
                    try:
                        with open(inst.anchor) as f:
                            text = f.read()
                    except FileNotFoundError:
                        text = ""
                    if cps and text == cps[-1][1]:
                        break
                    time.sleep(0.05)
                self.assertTrue(cps)
                self.assertEqual(text, cps[-1][1])
                seen.add(cps[-1][0])
                st = os.stat(inst.anchor)
                self.assertEqual(st.st_mode & 0o777, 0o600)
            self.assertGreaterEqual(len(seen), 2)
        finally:
            finish(srv)
        # At the stop, everything is signed and anchored.
        with open(inst.anchor) as f:
            size, root = note_size_root(f.read())
        evs = inst.events()
        self.assertEqual(size, len(evs))
        self.assertEqual(root, mth([leaf_hash(e.encode()) for e in evs]))
        self.assertEqual([f for f in os.listdir(inst.cred)
                          if f.startswith("audit.key.checkpoint")],
                         ["audit.key.checkpoint"])

    def test_restarts_of_an_untouched_database(self):
        inst = self.inst
        for tag in ("r1", "r2", "r3"):
            srv = inst.run_once(tag, 2)
            log = srv.log()
            self.assertNotIn("checkpoint_refused", log)
            self.assertNotIn('"level":"error"', log.replace(" ", ""))
        rc, out, err = inst.verify("--anchor", inst.anchor)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("anchor:", out)
        self.assertIn("result:      ok", out)

    def test_database_restored_from_an_older_backup(self):
        inst = self.inst
        inst.run_once("a", 3)
        backup = inst.db + ".bak"
        src = inst.connect()
        dst = sqlite3.connect(backup)
        src.backup(dst)
        src.close()
        dst.close()
        inst.run_once("b", 3)
        with open(inst.anchor) as f:
            anchored = note_size_root(f.read())[0]
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(inst.db + suffix):
                os.unlink(inst.db + suffix)
        os.rename(backup, inst.db)
        old = len(inst.events())
        err = inst.refused()
        self.assertIn("older backup", err)
        self.assertIn("--adopt-audit-anchor", err)
        self.assertIn("%d leaves" % old, err)
        self.assertIn("%d" % anchored, err)
        # The operator's explicit decision: take the database as it is.
        srv = inst.start("--adopt-audit-anchor")
        self.assertIn("audit.anchor_adopted", srv.log())
        finish(srv)
        # The signed log itself says where the operator took it over.
        adopted = [json.loads(e) for e in inst.events()
                   if '"audit.anchor_adopted"' in e]
        self.assertEqual(len(adopted), 1, adopted)
        self.assertEqual(adopted[0]["reason"], "shorter")
        self.assertEqual(adopted[0]["previous_size"], anchored)
        rc, out, err = inst.verify("--anchor", inst.anchor)
        self.assertEqual(rc, 0, out + err)
        inst.run_once("c", 1)  # and normal starts again

    def test_missing_anchor_with_checkpoints(self):
        inst = self.inst
        inst.run_once("a", 3)
        os.unlink(inst.anchor)
        err = inst.refused()
        self.assertIn("missing", err)
        self.assertIn("--adopt-audit-anchor", err)
        srv = inst.start("--adopt-audit-anchor")
        self.assertIn("audit.anchor_adopted", srv.log())
        finish(srv)
        self.assertTrue(os.path.exists(inst.anchor))
        inst.run_once("b", 1)

    def test_anchor_directory_must_be_writable(self):
        inst = self.inst
        inst.write_conf("anchor = %s/no-such-dir/audit.checkpoint"
                        % inst.root)
        err = inst.refused()
        self.assertIn("no-such-dir/audit.checkpoint", err)
        self.assertIn("anchor", err)
        # The systemd layout: the key read-only, the anchor in a state
        # directory of its own.
        anchor_dir = os.path.join(inst.root, "var", "lib",
                                  "intentgate-anchor")
        os.makedirs(anchor_dir, mode=0o700)
        inst.anchor = os.path.join(anchor_dir, "audit.checkpoint")
        inst.write_conf("anchor = " + inst.anchor)
        os.chmod(inst.cred, 0o500)
        try:
            inst.run_once("ro", 2)
        finally:
            os.chmod(inst.cred, 0o700)
        self.assertTrue(os.path.exists(inst.anchor))
        self.assertFalse(os.path.exists(inst.audit_key + ".checkpoint"))

    def test_loose_anchor_file_refused(self):
        inst = self.inst
        inst.run_once("a", 1)
        os.chmod(inst.anchor, 0o666)
        err = inst.refused()
        self.assertIn("chmod 600", err)


class SystemLayout(Rewrite):
    """The rewrite attack once more under /var/lib (or /srv)."""
    base = layout_roots()[1]

    test_edited_event_refused_naming_its_index = None
    test_edited_node_refused_naming_its_leaves = None
    test_rewritten_checkpoint_row_refused = None


if __name__ == "__main__":
    run_tests()
