"""test_store_copy.py - moving house: `intentgate store copy` from a dev
PDP's SQLite store into PostgreSQL, then `intentgate audit ... --db URL`
on the copy.

A real `intentgate serve --dev` (SQLite) logs a lifecycle and enough
intents for the tree to have full tiles, and is stopped twice (a
checkpoint at each stop). Then:

  RoundTrip  the copy holds every table's rows, exactly as stored;
             `audit verify --db URL` accepts it with the same checkpoints
             and the same latest tree as the SQLite file (and the anchor
             file); export, show and proof read the same from both; the
             identity sequences go on after the copied keys; events still
             queued are reported, not verified.
  Refusals   a non-empty target, a target no server answers for, a URL
             with a password, a missing source and a source a PDP has
             open: each one line on stderr, nothing copied.
  Tampering  an event edited in the copy (the immutability trigger dropped,
             as an attacker holding the database would) fails verification.
  Serve      a PDP started on the copy with the same audit key and anchor
             serves its intents, and its log still verifies.
  Cosignatures  witnesses' cosignatures (made here, C2SP cosignature/v1
             with Ed25519) of the SQLite store's checkpoints are copied
             row for row, and `audit export --checkpoints-out` gives each
             checkpoint with its cosignature lines, the same from both.

The PostgreSQL server is IG_TEST_PG_URL (a base URL whose user may CREATE
DATABASE, scripts/pg-cluster.sh); each test makes its own databases, and
drops them at exit. Without IG_TEST_PG_URL every test fails: none skips.

    IG_TEST_PG_URL=postgresql://postgres@127.0.0.1:54329/postgres \\
    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_store_copy.py
"""
import atexit
import base64
import hashlib
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg  # noqa: E402
from harness import Server, run_tests  # noqa: E402
from test_audit_cli import (finish, ig, lifecycle,  # noqa: E402
                            prepare_audit, read_env)

# More leaves than one full tile (256), so the copy's tiles are read too.
EXTRA_INTENTS = 300
TABLES = ("intents", "decisions", "grants", "redemptions", "outcomes",
          "approvals", "votes", "resolutions", "audit_events", "audit_tiles",
          "checkpoints", "cosignatures", "counter_counts")
WITNESSES = ("w1.example/copy", "w2.example/copy")
COSIG_TIME = 1760000000


def witness_key_id(name, pk):
    """C2SP tlog-cosignature: SHA-256(name || 0x0A || 0x04 || key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n\x04" + pk).digest()[:4]


def cosignature(note, name, sk, ts):
    """name's cosignature/v1 line of a signed checkpoint note."""
    from cryptography.hazmat.primitives import serialization
    text = note[:note.index("\n\n") + 1].encode()
    pk = sk.public_key().public_bytes(serialization.Encoding.Raw,
                                      serialization.PublicFormat.Raw)
    msg = b"cosignature/v1\ntime %d\n" % ts + text
    sig = witness_key_id(name, pk) + ts.to_bytes(8, "big") + sk.sign(msg)
    return "\u2014 %s %s\n" % (name, base64.b64encode(sig).decode())


def check_cosignature(note, line, name, sk):
    """line is name's valid cosignature of note's text (raises if not)."""
    from cryptography.hazmat.primitives import serialization
    text = note[:note.index("\n\n") + 1].encode()
    pk = sk.public_key().public_bytes(serialization.Encoding.Raw,
                                      serialization.PublicFormat.Raw)
    dash, who, b64 = line.rstrip("\n").split(" ")
    assert dash == "\u2014" and who == name, line
    sig = base64.b64decode(b64)
    assert len(sig) == 76 and sig[:4] == witness_key_id(name, pk), line
    ts = int.from_bytes(sig[4:12], "big")
    sk.public_key().verify(sig[12:], b"cosignature/v1\ntime %d\n" % ts +
                           text)


def psql(url, sql):
    """Run sql on url; its rows, one string per row (columns by |)."""
    return [line for line in pg.psql(url, sql).split("\n") if line]


def new_database():
    """A fresh, empty database; its URL. Dropped at exit."""
    return pg.create_database("ig_copy")


class Store:
    """A dev PDP's SQLite store after two runs: a lifecycle and
    EXTRA_INTENTS more intents, a checkpoint signed at each stop."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="ig-copy-")
        # The source is SQLite, whatever store the suite runs on.
        self.db = os.path.join(self.tmp, "data", "intentgate.db")
        try:
            srv = Server.dev(tmp=self.tmp, database=self.db)
            self.data = srv.data
            finish(srv)
            self.key = prepare_audit(self.data)
            srv = Server.dev(tmp=self.tmp, database=self.db)
            try:
                self.ids = lifecycle(srv, "a")
                for i in range(EXTRA_INTENTS):
                    st, body, _ = srv.submit("payments.refund",
                                             "orders/x-%d" % i,
                                             {"amount": 1, "currency": "EUR"})
                    assert st == 201, body
            finally:
                finish(srv)
            srv = Server.dev(tmp=self.tmp, database=self.db)
            try:
                lifecycle(srv, "b")
            finally:
                finish(srv)
        except BaseException:
            self.cleanup()
            raise
        self.env = read_env(self.data)
        self.anchor = os.path.join(self.data, "keys", "audit.key.checkpoint")
        self.cosign()

    def cosign(self):
        """Both witnesses cosign the first checkpoint, the first witness
        the last one too: rows as a PDP stores them (store_cosig_put)."""
        from cryptography.hazmat.primitives.asymmetric import ed25519
        self.witness_keys = {w: ed25519.Ed25519PrivateKey.generate()
                             for w in WITNESSES}
        con = sqlite3.connect(self.db)
        try:
            sizes = [r[0] for r in con.execute(
                "SELECT size FROM checkpoints ORDER BY size")]
            assert len(sizes) >= 2, sizes
            self.cosigned = {sizes[0]: WITNESSES, sizes[-1]: WITNESSES[:1]}
            for size, names in self.cosigned.items():
                (note,) = con.execute("SELECT note FROM checkpoints WHERE"
                                      " size = ?", (size,)).fetchone()
                for w in reversed(names):  # read back by name, not order
                    con.execute("INSERT INTO cosignatures VALUES (?, ?, ?,"
                                " ?)", (size, w, cosignature(
                                    note, w, self.witness_keys[w],
                                    COSIG_TIME + size), COSIG_TIME))
            con.commit()
        finally:
            con.close()

    def rows(self, table):
        con = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True)
        try:
            return con.execute("SELECT count(*) FROM %s" % table).fetchone()[0]
        finally:
            con.close()

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def copy_to(store, url):
    return ig("store", "copy", "--from", store.db, "--to", url)


def verify_lines(out):
    """verify's report without the lines that name where it read from."""
    return [line for line in out.splitlines()
            if not line.startswith(("leaf hashes:", "anchor:"))]


_store = []


def shared_store():
    """The one Store of this run (made by the first class that needs it,
    removed at exit). Tests that change a PDP's files work on a copy."""
    if not _store:
        _store.append(Store())
        atexit.register(_store[0].cleanup)
    return _store[0]


class Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        pg.base_url()
        cls.store = shared_store()
        cls.url = new_database()
        rc, cls.copy_out, err = copy_to(cls.store, cls.url)
        if rc != 0:
            raise AssertionError("store copy failed: %s%s" %
                                 (cls.copy_out, err))

    def one_line_refusal(self, rc, out, err, want):
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(want, err)


class RoundTrip(Fixture):
    def test_every_table_is_copied_row_for_row(self):
        for table in TABLES:
            n = self.store.rows(table)
            self.assertRegex(self.copy_out, r"(?m)^%s +%d rows$" % (table, n))
            self.assertEqual(psql(self.url, "SELECT count(*) FROM %s" % table),
                             [str(n)], table)
        self.assertGreater(self.store.rows("audit_tiles"), 0)
        self.assertIn("read under its exclusive lock", self.copy_out)
        # Exactly as stored: the events' bytes, the tiles' bytes.
        con = sqlite3.connect(self.store.db)
        want = [(str(s), e) for s, e in con.execute(
            "SELECT seq, event FROM audit_events ORDER BY seq")]
        tiles = ["%d|%d|%s" % (lv, ix, h.hex()) for lv, ix, h in con.execute(
            "SELECT level, idx, hashes FROM audit_tiles ORDER BY level, idx")]
        con.close()
        got = psql(self.url, "SELECT seq || '|' || encode(convert_to(event,"
                   " 'UTF8'), 'hex') FROM audit_events ORDER BY seq")
        self.assertEqual(got, ["%s|%s" % (s, e.encode().hex())
                               for s, e in want])
        self.assertEqual(psql(self.url, "SELECT level || '|' || idx || '|' ||"
                              " encode(hashes, 'hex') FROM audit_tiles"
                              " ORDER BY level, idx"), tiles)

    def test_verify_accepts_the_copy_with_the_same_checkpoints(self):
        key = self.store.key
        rc, sq, err = ig("audit", "verify", "--db", self.store.db, "--key",
                         key, "--anchor", self.store.anchor)
        self.assertEqual(rc, 0, sq + err)
        rc, pg, err = ig("audit", "verify", "--db", self.url, "--key", key,
                         "--anchor", self.store.anchor)
        self.assertEqual(rc, 0, pg + err)
        self.assertEqual(verify_lines(pg), verify_lines(sq))
        self.assertIn("result:      ok", pg)
        m = re.search(r"leaf hashes: (\d+) compared", pg)
        self.assertIsNotNone(m, pg)
        self.assertGreater(int(m.group(1)), 0, pg)

    def test_export_show_proof_read_the_same(self):
        cases = [("audit", "export", "--db", "{db}"),
                 ("audit", "show", self.store.ids["allow"], "--db", "{db}"),
                 ("audit", "proof", "3", "--db", "{db}"),
                 ("audit", "proof", "290", "--db", "{db}")]
        for case in cases:
            outs = []
            for db in (self.store.db, self.url):
                args = [a.format(db=db) for a in case]
                rc, out, err = ig(*args)
                self.assertEqual(rc, 0, " ".join(args) + out + err)
                outs.append(out)
            self.assertEqual(outs[0], outs[1], case)

    def test_identity_sequences_go_on_after_the_copied_keys(self):
        for table in ("intents", "decisions", "votes"):
            top = psql(self.url, "SELECT coalesce(max(seq), 0) FROM %s" %
                       table)[0]
            nxt = psql(self.url, "SELECT nextval(pg_get_serial_sequence("
                       "'%s', 'seq'))" % table)[0]
            self.assertEqual(int(nxt), int(top) + 1, table)

    def test_queued_events_are_reported_not_verified(self):
        url = new_database()
        rc, out, err = copy_to(self.store, url)
        self.assertEqual(rc, 0, out + err)
        psql(url, "INSERT INTO audit_queue (event) VALUES ('{\"a\":1}'),"
             " ('{\"a\":2}')")
        rc, out, err = ig("audit", "verify", "--db", url, "--key",
                          self.store.key)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("queued:      2 events queued, not yet sequenced", out)
        self.assertIn("leaves:      %d" % self.store.rows("audit_events"),
                      out)


class Refusals(Fixture):
    def test_a_target_with_rows_is_refused(self):
        before = psql(self.url, "SELECT count(*) FROM audit_events")
        rc, out, err = copy_to(self.store, self.url)
        self.one_line_refusal(rc, out, err, "is not empty")
        self.assertEqual(psql(self.url, "SELECT count(*) FROM audit_events"),
                         before)

    def test_a_bad_url_is_refused(self):
        rc, out, err = copy_to(self.store,
                               "postgresql://nobody@127.0.0.1:1/nothing")
        self.one_line_refusal(rc, out, err, "cannot open postgresql://")
        rc, out, err = copy_to(self.store, pg.with_dbname(pg.base_url(),
                                                          "no_such_db_here"))
        self.one_line_refusal(rc, out, err, "does not exist")

    def test_a_password_in_the_url_is_refused(self):
        u = urllib.parse.urlsplit(pg.base_url())
        url = "postgresql://someone:secret@%s%s" % (u.hostname, u.path)
        for args in (("store", "copy", "--from", self.store.db, "--to", url),
                     ("audit", "verify", "--db", url, "--key",
                      self.store.key)):
            rc, out, err = ig(*args)
            self.one_line_refusal(rc, out, err, "PGPASSWORD")
            self.assertNotIn("secret", err)

    def test_bad_arguments(self):
        rc, out, err = ig("store", "copy", "--from", self.store.db)
        self.one_line_refusal(rc, out, err, "--to")
        rc, out, err = ig("store", "copy", "--from", self.url, "--to",
                          self.url)
        self.one_line_refusal(rc, out, err, "SQLite file")
        rc, out, err = ig("store", "copy", "--from", self.store.db, "--to",
                          self.store.db)
        self.one_line_refusal(rc, out, err, "postgresql://")
        rc, out, err = ig("store", "copy", "--from",
                          self.store.db + ".missing", "--to", self.url)
        self.one_line_refusal(rc, out, err, "cannot open")

    def test_a_source_a_pdp_has_open_is_refused(self):
        tmp = tempfile.mkdtemp(prefix="ig-copy-busy-")
        try:
            shutil.copytree(self.store.data, os.path.join(tmp, "data"))
            srv = Server.dev(tmp=tmp, database=os.path.join(
                tmp, "data", "intentgate.db"))
            try:
                url = new_database()
                rc, out, err = ig("store", "copy", "--from",
                                  os.path.join(srv.data, "intentgate.db"),
                                  "--to", url)
                self.one_line_refusal(rc, out, err, "is in use")
                # Refused before the target was touched.
                self.assertEqual(psql(url, "SELECT count(*) FROM pg_tables"
                                      " WHERE schemaname = 'public'"), ["0"])
            finally:
                finish(srv)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class Tampering(Fixture):
    def test_an_edited_event_fails_verification(self):
        url = new_database()
        rc, out, err = copy_to(self.store, url)
        self.assertEqual(rc, 0, out + err)
        # UPDATE is refused by trigger; an attacker with the database
        # drops it first.
        with self.assertRaises(AssertionError):
            psql(url, "UPDATE audit_events SET event = event WHERE seq = 5")
        psql(url, "DROP TRIGGER audit_events_immutable ON audit_events")
        psql(url, "UPDATE audit_events SET event = event || ' ' WHERE"
             " seq = 5")
        rc, out, err = ig("audit", "verify", "--db", url, "--key",
                          self.store.key)
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(out, r"FAILED (leaf_mismatch|root_mismatch) at")
        self.assertEqual(len(err.strip().splitlines()), 1, err)


class Cosignatures(Fixture):
    def test_rows_are_copied_as_stored(self):
        con = sqlite3.connect(self.store.db)
        want = ["%d|%s|%s|%d" % (size, w, line.encode().hex(), at)
                for size, w, line, at in con.execute(
                    "SELECT size, witness, line, created_at FROM"
                    " cosignatures ORDER BY size, witness")]
        con.close()
        self.assertEqual(len(want), 3)
        got = psql(self.url, "SELECT size || '|' || witness || '|' ||"
                   " encode(convert_to(line, 'UTF8'), 'hex') || '|' ||"
                   " created_at FROM cosignatures ORDER BY size, witness"
                   " COLLATE \"C\"")
        self.assertEqual(got, want)

    def test_export_gives_checkpoints_with_their_cosignatures(self):
        outs = []
        for db in (self.store.db, self.url):
            path = os.path.join(self.store.tmp, "ckpts-%d.jsonl" % len(outs))
            rc, out, err = ig("audit", "export", "--db", db,
                              "--checkpoints-out", path)
            self.assertEqual(rc, 0, out + err)
            with open(path, encoding="utf-8") as f:
                outs.append(f.read())
        self.assertEqual(outs[0], outs[1])
        notes = [json.loads(line) for line in outs[0].splitlines() if line]
        seen = 0
        for n in notes:
            names = self.store.cosigned.get(n["size"], ())
            sigs = n["note"][n["note"].index("\n\n") + 2:].splitlines(True)
            # The log's signature, then the witnesses' by name.
            self.assertEqual(len(sigs), 1 + len(names), n)
            for name, line in zip(names, sigs[1:]):
                check_cosignature(n["note"], line, name,
                                  self.store.witness_keys[name])
                seen += 1
        self.assertEqual(seen, 3)


class Serve(Fixture):
    def first_checkpoint(self):
        return int(psql(self.url, "SELECT min(size) FROM checkpoints")[0])

    def last_checkpoint(self):
        return int(psql(self.url, "SELECT max(size) FROM checkpoints")[0])

    def test_a_pdp_serves_the_copy(self):
        url = new_database()
        rc, out, err = copy_to(self.store, url)
        self.assertEqual(rc, 0, out + err)
        # The PDP's own directory moved as is (keys, anchor), the config
        # pointing at the database.
        tmp = tempfile.mkdtemp(prefix="ig-copy-serve-")
        self.addCleanup(shutil.rmtree, tmp, True)
        data = os.path.join(tmp, "data")
        shutil.copytree(self.store.data, data)
        os.unlink(os.path.join(data, "intentgate.db"))
        conf = os.path.join(data, "intentgate.conf")
        with open(conf) as f:
            text = f.read()
        text = re.sub(r"(?m)^database = .*$", "database = " + url, text)
        with open(conf, "w") as f:
            f.write(text)
        srv = Server.custom(conf, tmp, self.store.env, database=url)
        try:
            st, body, _ = srv.call("GET", "/v1/intents/%s" %
                                   self.store.ids["allow"],
                                   self.store.env["INTENTGATE_ADMIN_TOKEN"])
            self.assertEqual(st, 200, body)
            self.assertEqual(body["intent_id"], self.store.ids["allow"])
            st, body, _ = srv.submit("payments.refund", "orders/after",
                                     {"amount": 1, "currency": "EUR"})
            self.assertEqual(st, 201, body)
            after = body["intent_id"]
            # The audit endpoints read the log on PostgreSQL, the intent
            # just submitted included (a read waits until it is sequenced).
            auditor = self.store.env["INTENTGATE_AUDITOR_TOKEN"]
            n = self.store.rows("audit_events")
            st, text, headers = srv.call(
                "GET", "/v1/audit/leaves?start=%d&end=%d" % (n, n + 1000),
                auditor, raw_response=True)
            self.assertEqual(st, 200, text)
            self.assertIn(after.encode(), text)
            self.assertGreater(int(headers["X-Audit-Tree-Size"]), n)
            st, text, _ = srv.call("GET", "/v1/audit/leaves?start=0&end=3",
                                   auditor, raw_response=True)
            self.assertEqual(st, 200, text)
            con = sqlite3.connect(self.store.db)
            first = [r[0] for r in con.execute(
                "SELECT event FROM audit_events WHERE seq <= 3 ORDER BY seq")]
            con.close()
            self.assertEqual(text.decode(), "".join(e + "\n" for e in first))
            for path in ("/v1/audit/checkpoint",
                         "/v1/audit/proof/inclusion?index=300",
                         "/v1/audit/proof/consistency?old=%d&new=%d" %
                         (self.first_checkpoint(), self.last_checkpoint())):
                st, text, _ = srv.call("GET", path, auditor,
                                       raw_response=True)
                self.assertEqual(st, 200, path + ": " + text.decode())
        finally:
            finish(srv)
        rc, out, err = ig("audit", "verify", "--db", url, "--key",
                          self.store.key, "--anchor",
                          os.path.join(data, "keys", "audit.key.checkpoint"))
        self.assertEqual(rc, 0, out + err)
        m = re.search(r"(?m)^leaves: +(\d+)$", out)
        self.assertIsNotNone(m, out)
        # The copied leaves, the intent above and what the PDP logs.
        self.assertGreater(int(m.group(1)), self.store.rows("audit_events"))


if __name__ == "__main__":
    run_tests()
