"""test_audit_cli.py - `intentgate audit` and the auditors' pages end to end.

A real `intentgate serve --dev` logs a lifecycle (an ALLOW redeemed with an
outcome, an ESCALATE approved over the API, a BLOCK), is stopped (a
checkpoint is signed at shutdown), started again for more events and
stopped again. Then, on its database:

  AuditCli  verify / export + verify --leaves / show / proof + verify-proof
            / consistency pass; every tampering - made with plain SQL on a
            copy, immutability triggers dropped first - fails with its kind;
            usage errors exit 2 with one line.
  AuditUi   /ui/audit for an approver in group `auditors`; 403 for another
            approver; escaping; filters, paging; the export download, which
            verifies.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_audit_cli.py [AuditCli|AuditUi]

Python standard library only: the few Ed25519 signatures the forgeries need
come from the RFC 8032 reference code below. Exits 0 only when every test
passed; the last line reads "N passed, M failed".
"""
import base64
import calendar
import hashlib
import html
import http.client
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests  # noqa: E402

FORM = "application/x-www-form-urlencoded"
XSS = "<script>alert(1)</script>"
CARD = "4111 1111 1111 1111"

# ---- Ed25519, RFC 8032 section 6 (reference code, for test forgeries) ----

_P = 2 ** 255 - 19
_Q = 2 ** 252 + 27742317777372353535851937790883648493


def _inv(x):
    return pow(x, _P - 2, _P)


_D = -121665 * _inv(121666) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _add(a, b):
    A = (a[1] - a[0]) * (b[1] - b[0]) % _P
    B = (a[1] + a[0]) * (b[1] + b[0]) % _P
    C = 2 * a[3] * b[3] * _D % _P
    D = 2 * a[2] * b[2] % _P
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F, G * H, F * G, E * H)


def _mul(s, pt):
    q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            q = _add(q, pt)
        pt = _add(pt, pt)
        s >>= 1
    return q


def _recover_x(y, sign):
    x2 = (y * y - 1) * _inv(_D * y * y + 1)
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P != 0:
        x = x * _SQRT_M1 % _P
    if (x & 1) != sign:
        x = _P - x
    return x


_GY = 4 * _inv(5) % _P
_GX = _recover_x(_GY, 0)
_G = (_GX, _GY, 1, _GX * _GY % _P)


def _compress(pt):
    zi = _inv(pt[2])
    x, y = pt[0] * zi % _P, pt[1] * zi % _P
    return int.to_bytes(y | ((x & 1) << 255), 32, "little")


def _expand(seed):
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    return a, h[32:]


def ed25519_public(seed):
    return _compress(_mul(_expand(seed)[0], _G))


def ed25519_sign(seed, msg):
    a, prefix = _expand(seed)
    pk = _compress(_mul(a, _G))
    r = int.from_bytes(hashlib.sha512(prefix + msg).digest(), "little") % _Q
    big_r = _compress(_mul(r, _G))
    h = int.from_bytes(hashlib.sha512(big_r + pk + msg).digest(),
                       "little") % _Q
    return big_r + int.to_bytes((r + h * a) % _Q, 32, "little")


# ---- C2SP signed notes and RFC 6962 hashes, written independently ----

def key_id(name, pk):
    return hashlib.sha256(name.encode() + b"\n\x01" + pk).digest()[:4]


def verifier_key(name, pk):
    return "%s+%s+%s" % (name, key_id(name, pk).hex(),
                         base64.b64encode(b"\x01" + pk).decode())


def checkpoint_text(origin, size, root):
    return "%s\n%d\n%s\n" % (origin, size, base64.b64encode(root).decode())


def sign_note(text, name, seed):
    sig = ed25519_sign(seed, text.encode())
    pk = ed25519_public(seed)
    return text + "\n\u2014 %s %s\n" % (
        name, base64.b64encode(key_id(name, pk) + sig).decode())


def leaf_hash(b):
    return hashlib.sha256(b"\x00" + b).digest()


def tree_root(hashes):
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    k = 1
    while k * 2 < len(hashes):
        k *= 2
    return hashlib.sha256(b"\x01" + tree_root(hashes[:k]) +
                          tree_root(hashes[k:])).digest()


def consistent(m, n, old_root, new_root, proof):
    """RFC 9162 section 2.1.4.2, written from the RFC."""
    if m == n:
        return not proof and old_root == new_root
    if m & (m - 1) == 0:
        proof = [old_root] + proof
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = hashlib.sha256(b"\x01" + c + fr).digest()
            sr = hashlib.sha256(b"\x01" + c + sr).digest()
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = hashlib.sha256(b"\x01" + sr + c).digest()
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0


def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


# ---- running the PDP and the command ----

def ig(*args, stdin=None):
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True,
                       input=stdin, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


def read_env(data):
    env = {}
    with open(os.path.join(data, "dev.env")) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            env[k] = v
    return env


def finish(srv):
    rc = srv.stop()
    log = srv.log()
    if rc != 0 or "Sanitizer" in log or "runtime error" in log:
        raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))


def audit_secret_seed(data):
    """The seed of the log's signing key, as an operator holding it has it:
    the [audit] key file named in intentgate.conf (a k4.secret PASERK)."""
    path = None
    section = None
    with open(os.path.join(data, "intentgate.conf")) as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line
            elif section == "[audit]" and line.startswith("key"):
                k, _, v = line.partition("=")
                if k.strip() == "key":
                    path = v.strip()
    if path is None:
        return None
    if not os.path.isabs(path):
        path = os.path.join(data, path)
    with open(path) as f:
        paserk = f.read().strip()
    assert paserk.startswith("k4.secret."), paserk[:12]
    return b64url_decode(paserk[len("k4.secret."):])[:32]


def lifecycle(srv, tag):
    """ALLOW + redeem + outcome, ESCALATE approved over the API, BLOCK.
    Returns the intent ids by kind."""
    env = srv.env
    out = {}
    st, body, _ = srv.submit("payments.refund", "orders/%s-1" % tag,
                             {"amount": 10, "currency": "EUR",
                              "card_number": CARD})
    assert st == 201 and body["decision"] == "ALLOW", body
    out["allow"] = body["intent_id"]
    st, red, _ = srv.redeem(body["grant"], body["intent_id"])
    assert st == 200, red
    st, res, _ = srv.call("POST", "/v1/executions/%s/outcome"
                          % body["intent_id"],
                          env["INTENTGATE_EXECUTOR_TOKEN"],
                          {"outcome": "COMPLETED", "detail": {"status": 201}})
    assert st == 200, res
    out["allow_jti"] = red.get("claims", {}).get("jti")

    st, body, _ = srv.submit("payments.refund", "orders/%s-2" % tag,
                             {"amount": 500, "currency": "EUR"})
    assert st == 201 and body["decision"] == "ESCALATE", body
    out["escalate"] = body["intent_id"]
    st, tok, _ = srv.call("POST", "/v1/approver/login", None,
                          {"approver": env["INTENTGATE_APPROVER_ID"],
                           "password": env["INTENTGATE_APPROVER_PASSWORD"]})
    assert st == 200, tok
    st, res, _ = srv.call("POST", "/v1/approvals/%s/votes"
                          % body["approval"]["id"], tok["token"],
                          {"vote": "approve",
                           "intent_hash": body["intent_hash"],
                           "comment": "ok \u2014 refund for %s" % tag})
    assert st == 200, res

    st, body, _ = srv.submit("payments.refund", "=HYPERLINK(\"x\")-%s" % tag,
                             {"amount": 5000})
    assert st == 201 and body["decision"] == "BLOCK", body
    out["block"] = body["intent_id"]
    return out


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def write_secret(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")


AUDIT_NEEDS = {"key": "keys/audit.key", "hmac_key": "keys/audit-hmac.key",
               "redact": "/card_number"}


def prepare_audit(data):
    """Build the [audit] section the signing and redaction cases need, not
    trusting what dev mode happens to write: the checkpoint key file
    (keys/audit.key, an Ed25519 k4.secret PASERK), the HMAC key
    (keys/audit-hmac.key) and `redact = /card_number`. A key file dev mode
    did not write is made here (0600); the section's other keys stay.
    Returns the log's verifier key, computed from its key file. Raises
    when any of it cannot be built."""
    conf = os.path.join(data, "intentgate.conf")
    with open(conf) as f:
        lines = f.read().split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == "[audit]"]
    assert len(starts) <= 1, "two [audit] sections in " + conf
    if not starts:
        lines += ["", "[audit]", "name = intentgate-test.example/audit"]
        starts = [len(lines) - 2]
    end = next((i for i in range(starts[0] + 1, len(lines))
                if lines[i].strip().startswith("[")), len(lines))
    section = [line for line in lines[starts[0] + 1:end] if line.strip() and
               line.partition("=")[0].strip() not in AUDIT_NEEDS]
    names = [line.partition("=")[2].strip() for line in section
             if line.partition("=")[0].strip() == "name"]
    assert len(names) == 1, "[audit] has no name in " + conf
    section += ["%s = %s" % kv for kv in AUDIT_NEEDS.items()]
    lines[starts[0] + 1:end] = section + [""]
    with open(conf, "w") as f:
        f.write("\n".join(lines))
    key = os.path.join(data, AUDIT_NEEDS["key"])
    if not os.path.exists(key):
        seed = os.urandom(32)
        write_secret(key, "k4.secret." + b64url(seed + ed25519_public(seed)))
    hmac_key = os.path.join(data, AUDIT_NEEDS["hmac_key"])
    if not os.path.exists(hmac_key):
        write_secret(hmac_key, b64url(os.urandom(32)))
    seed = audit_secret_seed(data)
    assert seed is not None, "no [audit] key in " + conf
    return verifier_key(names[0], ed25519_public(seed))


class Log:
    """A dev PDP's audit log after two runs (two or more checkpoints), its
    [audit] section built by prepare_audit before the first event."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="ig-audit-")
        try:
            srv = Server.dev(tmp=self.tmp)  # dev mode writes the directory
            self.data = srv.data
            finish(srv)
            self.key = prepare_audit(self.data)
            self.first = self.run_once("a")
            self.second = self.run_once("b")
        except BaseException:
            self.cleanup()
            raise
        self.env = read_env(self.data)
        self.name = self.key.split("+", 1)[0]
        self.db = os.path.join(self.data, "intentgate.db")

    def run_once(self, tag):
        srv = Server.dev(tmp=self.tmp)
        try:
            return lifecycle(srv, tag)
        finally:
            finish(srv)

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def tamper_copy(src, dst):
    """A copy of the database with every immutability trigger dropped."""
    s = sqlite3.connect(src)
    d = sqlite3.connect(dst)
    s.backup(d)
    s.close()
    for (name,) in d.execute("SELECT name FROM sqlite_master WHERE "
                             "type = 'trigger'").fetchall():
        if name.endswith("_no_update") or name.endswith("_no_delete"):
            d.execute('DROP TRIGGER "%s"' % name)
    d.commit()
    return d


class AuditCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.log = Log()
        cls.key = cls.log.key
        cls.db = cls.log.db
        cls.work = tempfile.mkdtemp(prefix="ig-audit-cli-")
        con = sqlite3.connect(cls.db)
        cls.events = [r[0] for r in con.execute(
            "SELECT event FROM audit_events ORDER BY seq")]
        cls.checkpoints = con.execute(
            "SELECT size, note FROM checkpoints ORDER BY size").fetchall()
        con.close()

    @classmethod
    def tearDownClass(cls):
        cls.log.cleanup()
        shutil.rmtree(cls.work, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.work, name)

    def copy(self, name):
        p = self.path(name + ".db")
        if os.path.exists(p):
            os.unlink(p)
        return p, tamper_copy(self.db, p)

    def verify_fails(self, db, kind, index=None, extra=()):
        rc, out, err = ig("audit", "verify", "--db", db, "--key", self.key,
                          *extra)
        self.assertEqual(rc, 1, out + err)
        m = re.search(r"FAILED (\w+) at (\d+)", out)
        self.assertIsNotNone(m, out)
        self.assertEqual(m.group(1), kind, out)
        if index is not None:
            self.assertEqual(int(m.group(2)), index, out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(kind, err)
        return out

    def seq_of(self, con, typ, intent_id):
        for seq, ev in con.execute("SELECT seq, event FROM audit_events "
                                   "ORDER BY seq"):
            e = json.loads(ev)
            if e.get("type") == typ and e.get("intent_id") == intent_id:
                return seq
        self.fail("no %s event for %s" % (typ, intent_id))

    # ---- what passes ----

    def test_the_log_has_checkpoints(self):
        self.assertGreaterEqual(len(self.checkpoints), 2, self.checkpoints)
        self.assertEqual(self.checkpoints[-1][0], len(self.events))

    def test_verify_db(self):
        rc, out, err = ig("audit", "verify", "--db", self.db, "--key",
                          self.key)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("result:      ok", out)
        self.assertIn("leaves:      %d" % len(self.events), out)
        self.assertIn("checked:     %d" % len(self.checkpoints), out)
        self.assertIn("compared with the stored tree", out)

    def test_verify_key_from_a_file_and_the_environment(self):
        kf = self.path("key.txt")
        with open(kf, "w") as f:
            f.write(self.key + "\n")
        self.assertEqual(ig("audit", "verify", "--db", self.db, "--key",
                            kf)[0], 0)
        env = dict(os.environ, INTENTGATE_AUDIT_KEY=self.key)
        p = subprocess.run([BIN, "audit", "verify", "--db", self.db],
                           capture_output=True, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_export_then_verify_offline(self):
        leaves, cps = self.path("leaves.jsonl"), self.path("cps.jsonl")
        rc, out, err = ig("audit", "export", "--db", self.db, "--format",
                          "jsonl", "--checkpoints-out", cps)
        self.assertEqual(rc, 0, err)
        with open(leaves, "w") as f:
            f.write(out)
        lines = out.split("\n")
        self.assertEqual(lines[-1], "")
        self.assertEqual(lines[:-1], self.events)  # byte for byte
        with open(cps) as f:
            got = [json.loads(line) for line in f]
        self.assertEqual([(c["size"], c["note"]) for c in got],
                         [tuple(c) for c in self.checkpoints])
        rc, out, err = ig("audit", "verify", "--leaves", leaves,
                          "--checkpoints", cps, "--key", self.key)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("result:      ok", out)
        # An edited export fails too.
        bad = self.path("leaves-bad.jsonl")
        i = [k for k, e in enumerate(self.events) if '"EUR"' in e][0]
        with open(bad, "w") as f:
            f.write("\n".join(self.events[:i] + [self.events[i].replace(
                '"EUR"', '"USD"')] + self.events[i + 1:]) + "\n")
        rc, out, err = ig("audit", "verify", "--leaves", bad,
                          "--checkpoints", cps, "--key", self.key)
        self.assertEqual(rc, 1, out)
        self.assertIn("root_mismatch", out)

    def test_export_csv(self):
        rc, out, err = ig("audit", "export", "--db", self.db, "--format",
                          "csv")
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith(
            "seq,time,type,intent_id,principal,action,resource,decision,"
            "reasons\r\n"), out[:200])
        import csv
        import io
        rows = list(csv.reader(io.StringIO(out, newline="")))
        self.assertEqual(len(rows), len(self.events) + 1)
        blocked = [r for r in rows if r[3] == self.log.first["block"]]
        self.assertTrue(blocked)
        for r in blocked:  # the resource starts with '=': made text
            self.assertTrue(r[6].startswith("'=HYPERLINK"), r)
            self.assertEqual(r[4], "dev-agent", r)
        decided = [r for r in blocked if r[2] == "intent.decided"]
        self.assertEqual(decided[0][7], "BLOCK")
        self.assertTrue(decided[0][8])

    def test_export_filters(self):
        rc, out, _ = ig("audit", "export", "--db", self.db, "--decision",
                        "BLOCK")
        self.assertEqual(rc, 0)
        ids = {json.loads(line)["intent_id"] for line in out.splitlines()}
        self.assertEqual(ids, {self.log.first["block"],
                               self.log.second["block"]})
        rc, out, _ = ig("audit", "export", "--db", self.db, "--type",
                        "approval.voted", "--format", "csv")
        self.assertEqual(rc, 0)
        self.assertEqual(len(out.strip().split("\r\n")), 3)  # header + 2
        rc, out, _ = ig("audit", "export", "--db", self.db, "--action",
                        "payments.", "--until", "2000-01-01")
        self.assertEqual((rc, out), (0, ""))
        rc, out, _ = ig("audit", "export", "--db", self.db, "--principal",
                        "dev-agent", "--since", "2000-01-01T00:00:00Z")
        self.assertEqual(rc, 0)
        self.assertGreaterEqual(len(out.splitlines()), 12)
        # A filtered export with its checkpoints does not verify.
        cps = self.path("cps-filtered.jsonl")
        rc, out, err = ig("audit", "export", "--db", self.db, "--decision",
                          "ALLOW", "--checkpoints-out", cps)
        self.assertEqual(rc, 0)
        self.assertIn("does not verify", err)
        sub = self.path("sub.jsonl")
        with open(sub, "w") as f:
            f.write(out)
        self.assertEqual(ig("audit", "verify", "--leaves", sub,
                            "--checkpoints", cps, "--key", self.key)[0], 1)

    def test_show_allowed(self):
        rc, out, err = ig("audit", "show", self.log.first["allow"], "--db",
                          self.db)
        self.assertEqual(rc, 0, err)
        for want in ("dev-agent", "payments.refund", "orders/a-1",
                     '"amount": 10', "intent.received", "intent.decided",
                     "ALLOW", "grant.redeemed", "execution.outcome",
                     "COMPLETED", '"status": 201', "policy revision"):
            self.assertIn(want, out)

    def test_show_escalated(self):
        rc, out, err = ig("audit", "show", self.log.first["escalate"],
                          "--db", self.db)
        self.assertEqual(rc, 0, err)
        for want in ("ESCALATE", "approval.voted", "APPROVE by dev-approver",
                     "via api", "refund for a", "approval.resolved",
                     "APPROVED", "grant "):
            self.assertIn(want, out)
        self.assertLess(out.index("ESCALATE"), out.index("APPROVED"))

    def test_show_unknown_intent(self):
        rc, _, err = ig("audit", "show", "00000000-0000-4000-8000-000000000000",
                        "--db", self.db)
        self.assertEqual(rc, 1)
        self.assertIn("no event", err)

    def test_proof_round_trip(self):
        index = len(self.events) // 2
        proof, leaf = self.path("p.txt"), self.path("leaf.json")
        rc, out, err = ig("audit", "proof", index, "--db", self.db,
                          "--leaf-out", leaf)
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("c2sp.org/tlog-proof@v1\nindex %d\n"
                                       % index), out)
        self.assertIn(self.checkpoints[-1][1], out)
        with open(proof, "w") as f:
            f.write(out)
        with open(leaf, "rb") as f:
            self.assertEqual(f.read(), self.events[index].encode())
        rc, out, err = ig("audit", "verify-proof", "--key", self.key,
                          "--proof", proof, "--leaf", leaf)
        self.assertEqual(rc, 0, err)
        self.assertIn("ok: leaf %d" % index, out)
        # Another leaf's bytes, another key, an edited proof: refused.
        other = self.path("other.json")
        with open(other, "w") as f:
            f.write(self.events[index + 1])
        self.assertEqual(ig("audit", "verify-proof", "--key", self.key,
                            "--proof", proof, "--leaf", other)[0], 1)
        seed = os.urandom(32)
        wrong = verifier_key(self.log.name, ed25519_public(seed))
        self.assertEqual(ig("audit", "verify-proof", "--key", wrong,
                            "--proof", proof, "--leaf", leaf)[0], 1)
        # A proof in an earlier checkpoint's tree.
        size0 = self.checkpoints[0][0]
        rc, out, err = ig("audit", "proof", 0, "--db", self.db, "--size",
                          size0)
        self.assertEqual(rc, 0, err)
        self.assertIn(self.checkpoints[0][1], out)

    def test_consistency(self):
        old, new = self.checkpoints[0][0], self.checkpoints[-1][0]
        rc, out, err = ig("audit", "consistency", old, new, "--db", self.db,
                          "--key", self.key)
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertGreaterEqual(len(lines), 1)
        for h in lines:
            self.assertEqual(len(base64.b64decode(h)), 32)
        # The same proof as the PDP's API would give, checked here by hand
        # (RFC 9162 section 2.1.4.2) against the two signed roots.
        roots = {}
        for size, note in self.checkpoints:
            roots[size] = base64.b64decode(note.split("\n")[2])
        self.assertTrue(consistent(old, new, roots[old], roots[new],
                                   [base64.b64decode(h) for h in lines]))
        rc, _, err = ig("audit", "consistency", old, new + 1, "--db",
                        self.db)
        self.assertEqual(rc, 2, err)

    def test_hash_value_confirms_a_redacted_value(self):
        hk = os.path.join(self.log.data, "keys", "audit-hmac.key")
        received = [json.loads(e) for e in self.events
                    if '"intent.received"' in e and self.log.first["allow"] in e]
        stored = received[0]["intent"]["params"]["card_number"]
        # prepare_audit configured the redaction: the value must be hashed.
        self.assertTrue(stored.startswith("hmac-sha256:"), stored)
        rc, out, err = ig("audit", "hash-value", "--hmac-key", hk,
                          json.dumps(CARD))
        self.assertEqual((rc, out), (0, stored + "\n"), err)
        rc, out, _ = ig("audit", "hash-value", "--hmac-key", hk, "-",
                        stdin=('"%s"\n' % CARD).encode())
        self.assertEqual((rc, out), (0, stored + "\n"))
        rc, out, _ = ig("audit", "hash-value", "--hmac-key", hk,
                        '"4111 1111 1111 1112"')
        self.assertEqual(rc, 0)
        self.assertNotEqual(out.strip(), stored)
        self.assertRegex(out, r"^hmac-sha256:[0-9a-f]{64}\n$")
        for args in (("--hmac-key", hk, "4111"),  # not JSON: a number...
                     ("--hmac-key", hk, "not json"),
                     ("--hmac-key", self.path("nokey"), '"x"')):
            rc, out, err = ig("audit", "hash-value", *args)
            if args[-1] == "4111":
                self.assertEqual(rc, 0)  # ...is a JSON number
                continue
            self.assertEqual(rc, 2, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        loose = self.path("loose.key")
        shutil.copy(hk, loose)
        os.chmod(loose, 0o644)
        rc, _, err = ig("audit", "hash-value", "--hmac-key", loose, '"x"')
        self.assertEqual(rc, 2)
        self.assertIn("chmod 600", err)

    # ---- tampering: each fails with its kind ----

    def first_checkpoint_at(self, seq):
        return min(s for s, _ in self.checkpoints if s >= seq)

    def test_edited_leaf(self):
        # This log is shorter than one tile of 256 leaf hashes: the signed
        # root catches the edit (TileTamper below names the leaf).
        db, con = self.copy("edited")
        seq = self.seq_of(con, "intent.decided", self.log.first["block"])
        con.execute("UPDATE audit_events SET event = replace(event, "
                    "'\"BLOCK\"', '\"ALLOW\"') WHERE seq = ?", (seq,))
        con.commit()
        con.close()
        self.verify_fails(db, "root_mismatch", self.first_checkpoint_at(seq))

    # ---- the stored tiles, in a copy grown past two full tiles ----

    def grown(self, name, n=600):
        """A copy with filler events up to n and its tiles recomputed (as
        the PDP would store them): the first 512 leaf hashes are stored."""
        db, con = self.copy(name)
        have = con.execute("SELECT count(*) FROM audit_events").fetchone()[0]
        t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for i in range(have, n):
            con.execute("INSERT INTO audit_events (event) VALUES (?)",
                        ('{"n":%d,"time":"%s","type":"test.filler"}' % (i, t),))
        leaves = [leaf_hash(r[0].encode()) for r in con.execute(
            "SELECT event FROM audit_events ORDER BY seq")]
        con.execute("DELETE FROM audit_tiles")
        for i in range(len(leaves) // 256):
            con.execute("INSERT INTO audit_tiles VALUES (0, ?, ?)",
                        (i, b"".join(leaves[256 * i:256 * (i + 1)])))
        return db, con

    def test_grown_copy_verifies_its_tiles(self):
        db, con = self.grown("grown")
        con.commit()
        con.close()
        rc, out, err = ig("audit", "verify", "--db", db, "--key", self.key)
        self.assertIn(rc, (0, 3), out + err)  # the filler is unsigned
        self.assertIn("leaf hashes: 512 compared with the stored tree", out)

    def test_edited_leaf_in_a_tile(self):
        db, con = self.grown("tile-leaf")
        con.execute("UPDATE audit_events SET event = replace(event, "
                    "'\"n\":300', '\"n\":301') WHERE seq = 301")
        con.commit()
        con.close()
        out = self.verify_fails(db, "leaf_mismatch", 300)
        self.assertIn("entry 44 of tile/0/001", out)

    def test_edited_hash_in_a_tile(self):
        db, con = self.grown("tile-hash")
        con.execute("UPDATE audit_tiles SET hashes = CAST(substr(hashes, 1, "
                    "128) || zeroblob(32) || substr(hashes, 161) AS BLOB) "
                    "WHERE level = 0 AND idx = 1")
        con.commit()
        con.close()
        out = self.verify_fails(db, "leaf_mismatch", 260)
        self.assertIn("entry 4 of tile/0/001", out)

    def test_truncated_tile(self):
        db, con = self.grown("tile-short")
        con.execute("UPDATE audit_tiles SET hashes = substr(hashes, 1, 8000) "
                    "WHERE level = 0 AND idx = 1")
        con.commit()
        con.close()
        out = self.verify_fails(db, "bad_tile", 256)
        self.assertIn("tile/0/001 in audit_tiles is 8000 bytes, not 8192", out)

    def test_deleted_tile(self):
        db, con = self.grown("tile-gone")
        con.execute("DELETE FROM audit_tiles WHERE level = 0 AND idx = 0")
        con.commit()
        con.close()
        out = self.verify_fails(db, "bad_tile", 0)
        self.assertIn("tile/0/000 (leaves 0 to 255) is missing", out)

    def test_swapped_tiles(self):
        db, con = self.grown("tile-swap")
        con.execute("UPDATE audit_tiles SET idx = 9 WHERE idx = 0")
        con.execute("UPDATE audit_tiles SET idx = 0 WHERE idx = 1")
        con.execute("UPDATE audit_tiles SET idx = 1 WHERE idx = 9")
        con.commit()
        con.close()
        out = self.verify_fails(db, "leaf_mismatch", 0)
        self.assertIn("entry 0 of tile/0/000", out)

    def test_tiles_past_the_log(self):
        for level, idx, name in ((0, 2, "tile/0/002"), (1, 0, "tile/1/000")):
            db, con = self.grown("tile-extra-%d" % level)
            con.execute("INSERT INTO audit_tiles VALUES (?, ?, "
                        "zeroblob(8192))", (level, idx))
            con.commit()
            con.close()
            out = self.verify_fails(db, "bad_tile", 600)
            self.assertIn("%s is past the log of 600 leaves" % name, out)

    def test_deleted_leaf(self):
        db, con = self.copy("deleted")
        seq = self.seq_of(con, "approval.voted", self.log.first["escalate"])
        con.execute("DELETE FROM audit_events WHERE seq = ?", (seq,))
        con.commit()
        con.close()
        self.verify_fails(db, "missing_leaf", seq - 1)

    def test_swapped_leaves(self):
        db, con = self.copy("swapped")
        a = self.seq_of(con, "intent.received", self.log.second["allow"])
        b = a + 1
        ea, eb = [con.execute("SELECT event FROM audit_events WHERE seq = ?",
                              (s,)).fetchone()[0] for s in (a, b)]
        con.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                    (eb, a))
        con.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                    (ea, b))
        con.commit()
        con.close()
        self.verify_fails(db, "root_mismatch", self.first_checkpoint_at(a))

    def test_truncated_below_the_latest_checkpoint(self):
        db, con = self.copy("truncated")
        size = self.checkpoints[-1][0]
        con.execute("DELETE FROM audit_events WHERE seq > ?", (size - 3,))
        con.commit()
        con.close()
        self.verify_fails(db, "truncated", size)

    def test_forged_checkpoint_another_key(self):
        db, con = self.copy("forged")
        seed = os.urandom(32)
        size = len(self.events)
        con.execute("INSERT INTO checkpoints (size, note, created_at) "
                    "VALUES (?, ?, 0)",
                    (size + 5, sign_note(checkpoint_text(
                        self.log.name, size + 5, os.urandom(32)),
                        self.log.name, seed)))
        con.commit()
        con.close()
        self.verify_fails(db, "bad_signature", size + 5)

    def test_resigned_checkpoint_another_root(self):
        """The latest checkpoint re-signed (by someone without the log's
        key) over the root of an edited log."""
        db, con = self.copy("resigned")
        seed = os.urandom(32)
        size = self.checkpoints[-1][0]
        evs = list(self.events)
        i = next(k for k, e in enumerate(evs) if "dev-agent" in e)
        evs[i] = evs[i].replace("dev-agent", "someone-else")
        con.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                    (evs[i], i + 1))
        root = tree_root([leaf_hash(e.encode()) for e in evs])
        con.execute("UPDATE checkpoints SET note = ? WHERE size = ?",
                    (sign_note(checkpoint_text(self.log.name, size, root),
                               self.log.name, seed), size))
        con.commit()
        con.close()
        self.verify_fails(db, "bad_signature", size)

    def test_checkpoint_moved_to_another_size(self):
        db, con = self.copy("moved")
        size = self.checkpoints[0][0]
        con.execute("UPDATE checkpoints SET size = ? WHERE size = ?",
                    (size + 1000000, size))
        con.commit()
        con.close()
        self.verify_fails(db, "bad_checkpoint")

    def test_fork_signed_with_the_log_key(self):
        """An operator holding the key signs a second root for a size: the
        database shows a root the leaves do not make, and two sets of
        checkpoints side by side show the fork."""
        seed = audit_secret_seed(self.log.data)  # made by prepare_audit
        self.assertIsNotNone(seed)
        pk = ed25519_public(seed)
        self.assertEqual(verifier_key(self.log.name, pk), self.key)
        size = self.checkpoints[-1][0]
        forked = sign_note(checkpoint_text(self.log.name, size,
                                           os.urandom(32)),
                           self.log.name, seed)
        db, con = self.copy("fork")
        con.execute("UPDATE checkpoints SET note = ? WHERE size = ?",
                    (forked, size))
        con.commit()
        con.close()
        self.verify_fails(db, "root_mismatch", size)
        # The reviewer kept the checkpoints of an earlier export: the
        # database now disagrees with them.
        kept = self.path("kept.jsonl")
        with open(kept, "w") as f:
            for s, note in self.checkpoints:
                f.write(json.dumps({"size": s, "note": note}) + "\n")
        self.verify_fails(db, "fork", size, ("--checkpoints", kept))
        # Offline, with the export and both sets.
        leaves = self.path("fork-leaves.jsonl")
        with open(leaves, "w") as f:
            f.write("\n".join(self.events) + "\n")
        both = self.path("both.jsonl")
        with open(both, "w") as f:
            for s, note in self.checkpoints + [(size, forked)]:
                f.write(json.dumps({"size": s, "note": note}) + "\n")
        rc, out, _ = ig("audit", "verify", "--leaves", leaves,
                        "--checkpoints", both, "--key", self.key)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED fork at %d" % size, out)

    def test_checkpoint_for_another_log(self):
        seed = audit_secret_seed(self.log.data)  # made by prepare_audit
        self.assertIsNotNone(seed)
        db, con = self.copy("origin")
        size = len(self.events)
        root = tree_root([leaf_hash(e.encode()) for e in self.events])
        con.execute("INSERT INTO checkpoints (size, note, created_at) "
                    "VALUES (?, ?, 0)",
                    (size + 1, sign_note(checkpoint_text("another.log/x",
                                                         size + 1, root),
                                         self.log.name, seed)))
        con.commit()
        con.close()
        self.verify_fails(db, "bad_checkpoint")

    def test_rotated_key(self):
        """After a rotation the log holds checkpoints of two keys: both keys
        verify it; either alone refuses the other's checkpoints."""
        seed = os.urandom(32)
        new_key = verifier_key(self.log.name, ed25519_public(seed))
        size = len(self.events)
        root = tree_root([leaf_hash(e.encode()) for e in self.events])
        leaves, cps = self.path("rot-leaves.jsonl"), self.path("rot.jsonl")
        with open(leaves, "w") as f:
            f.write("\n".join(self.events) + "\n")
        with open(cps, "w") as f:
            for s, note in self.checkpoints:
                f.write(json.dumps({"size": s, "note": note}) + "\n")
            f.write(json.dumps({"size": size, "note": sign_note(
                checkpoint_text(self.log.name, size, root), self.log.name,
                seed)}) + "\n")
        rc, out, err = ig("audit", "verify", "--leaves", leaves,
                          "--checkpoints", cps, "--key", self.key, "--key",
                          new_key)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("checked:     %d" % (len(self.checkpoints) + 1), out)
        rc, out, _ = ig("audit", "verify", "--leaves", leaves,
                        "--checkpoints", cps, "--key", self.key)
        self.assertEqual(rc, 1, out)
        self.assertIn("bad_signature", out)
        # The new key's checkpoint must still match the one tree.
        with open(cps, "a") as f:
            f.write(json.dumps({"size": size - 1, "note": sign_note(
                checkpoint_text(self.log.name, size - 1, root),
                self.log.name, seed)}) + "\n")
        rc, out, _ = ig("audit", "verify", "--leaves", leaves,
                        "--checkpoints", cps, "--key", self.key, "--key",
                        new_key)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED root_mismatch at %d" % (size - 1), out)

    # ---- the anchor and the leaves' times ----

    def test_verify_with_the_anchor(self):
        anchor = os.path.join(self.log.data, "keys", "audit.key.checkpoint")
        with open(anchor) as f:
            self.assertEqual(f.read(), self.checkpoints[-1][1])
        self.assertEqual(os.stat(anchor).st_mode & 0o777, 0o600)
        rc, out, err = ig("audit", "verify", "--db", self.db, "--key",
                          self.key, "--anchor", anchor)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("anchor:      size %d" % self.checkpoints[-1][0], out)
        self.assertIn("checked:     %d" % len(self.checkpoints), out)
        # A database cut back below the anchor, its checkpoints too: alone
        # it verifies, with the anchor it does not.
        db, con = self.copy("cut")
        size = self.checkpoints[0][0]
        con.execute("DELETE FROM checkpoints WHERE size > ?", (size,))
        con.execute("DELETE FROM audit_events WHERE seq > ?", (size,))
        con.commit()
        con.close()
        self.assertEqual(ig("audit", "verify", "--db", db, "--key",
                            self.key)[0], 0)
        out = self.verify_fails(db, "truncated", self.checkpoints[-1][0],
                                ("--anchor", anchor))
        rc, _, err = ig("audit", "verify", "--db", db, "--key", self.key,
                        "--anchor", anchor)
        self.assertIn("--anchor", err)

    def test_unsigned_leaves_exit_3(self):
        leaves, cps = self.path("u3-leaves.jsonl"), self.path("u3-cps.jsonl")
        rc, out, err = ig("audit", "export", "--db", self.db, "--format",
                          "jsonl", "--checkpoints-out", cps)
        self.assertEqual(rc, 0, err)
        with open(leaves, "w") as f:
            f.write(out)
        with open(cps) as f:
            lines = f.readlines()
        with open(cps, "w") as f:  # the last checkpoint was never signed
            f.writelines(lines[:-1])
        unsigned = self.checkpoints[-1][0] - self.checkpoints[-2][0]
        first = self.checkpoints[-2][0]
        when = json.loads(self.events[first])["time"]
        args = ("audit", "verify", "--leaves", leaves, "--checkpoints", cps,
                "--key", self.key)
        rc, out, err = ig(*args, "--at", when)  # just logged: not yet
        self.assertEqual(rc, 0, out + err)
        self.assertIn("unsigned:    %d leaves" % unsigned, out)
        rc, out, err = ig(*args, "--at", "2999-01-01")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("result:      UNSIGNED", out)
        self.assertIn("leaf %d (%s)" % (first, when), out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("leaf %d" % first, err)
        rc, out, err = ig(*args, "--at", "2999-01-01",
                          "--checkpoint-interval", "999999999")
        self.assertEqual(rc, 3, out + err)  # a millennium is longer still
        # A forged leaf without a time counts as old.
        with open(leaves, "a") as f:
            f.write('{"type":"x"}\n')
        rc, out, err = ig(*args, "--at", when)
        self.assertEqual(rc, 3, out + err)
        self.assertIn("no readable time", out)

    def test_late_checkpoints_gaps_and_steps_back(self):
        db, con = self.copy("late")
        size = self.checkpoints[-1][0]
        con.execute("UPDATE checkpoints SET created_at = created_at + 7200 "
                    "WHERE size = ?", (size,))
        con.commit()
        con.close()
        rc, out, err = ig("audit", "verify", "--db", db, "--key", self.key)
        self.assertEqual(rc, 0, out + err)  # not signed data: reported only
        self.assertRegex(out, r"late:        checkpoint %d was signed \d+ s "
                              r"after leaf %d" % (size,
                                                  self.checkpoints[-2][0]))
        self.assertIn("times:       ", out)
        # An export with one leaf's time moved two days on.
        leaves, cps = self.path("gap.jsonl"), self.path("gap-cps.jsonl")
        rc, out, err = ig("audit", "export", "--db", self.db,
                          "--checkpoints-out", cps)
        evs = out.splitlines()
        i = len(evs) // 2
        e = json.loads(evs[i])
        t = time.strptime(e["time"], "%Y-%m-%dT%H:%M:%SZ")
        e["time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(
            calendar.timegm(t) + 2 * 86400))
        evs[i] = json.dumps(e, separators=(",", ":"), sort_keys=True,
                            ensure_ascii=False)
        with open(leaves, "w") as f:
            f.write("\n".join(evs) + "\n")
        rc, out, err = ig("audit", "verify", "--leaves", leaves,
                          "--checkpoints", cps, "--key", self.key)
        self.assertEqual(rc, 1, out + err)  # the edit breaks a root
        self.assertRegex(out, r"gap:         \d+ s without events before "
                              r"leaf %d" % i)
        self.assertRegex(out, r"backwards:   leaf %d is \d+ s earlier than "
                              r"leaf %d" % (i + 1, i))
        rc, out, err = ig("audit", "verify", "--leaves", leaves,
                          "--checkpoints", cps, "--key", self.key,
                          "--max-gap", "0")
        self.assertNotIn("gap:", out)

    def test_untouched_copy_still_verifies(self):
        db, con = self.copy("clean")
        con.close()
        self.assertEqual(ig("audit", "verify", "--db", db, "--key",
                            self.key)[0], 0)

    # ---- usage errors: exit 2, one line ----

    def test_usage_errors(self):
        leaves = self.path("u.jsonl")
        with open(leaves, "w") as f:
            f.write(self.events[0] + "\n\n")
        notdb = self.path("not.db")
        with open(notdb, "w") as f:
            f.write("hello")
        cases = [
            ("audit",),
            ("audit", "bogus"),
            ("audit", "verify"),
            ("audit", "verify", "--db", self.db),
            ("audit", "verify", "--db", self.db, "--key", "nope"),
            ("audit", "verify", "--db", self.db, "--leaves", leaves, "--key",
             self.key),
            ("audit", "verify", "--leaves", leaves, "--key", self.key),
            ("audit", "verify", "--db", self.path("missing.db"), "--key",
             self.key),
            ("audit", "verify", "--db", notdb, "--key", self.key),
            ("audit", "verify", "--db", self.db, "--db", self.db, "--key",
             self.key),
            ("audit", "verify", "--db", self.db, "--key", self.key, "--key",
             verifier_key("other.log", ed25519_public(b"\x01" * 32))),
            ("audit", "verify", "--leaves", leaves, "--checkpoints",
             self.path("missing.jsonl"), "--key", self.key),
            ("audit", "show", "--db", self.db),
            ("audit", "show", "../etc", "--db", self.db),
            ("audit", "export", "--format", "xml", "--db", self.db),
            ("audit", "export", "--db", self.db, "--since", "yesterday"),
            ("audit", "export", "--db", self.db, "--decision", "MAYBE"),
            ("audit", "export"),
            ("audit", "proof", "abc", "--db", self.db),
            ("audit", "proof", len(self.events) + 10, "--db", self.db),
            ("audit", "proof", 0, "--db", self.db, "--size", 12345),
            ("audit", "consistency", 5, 3, "--db", self.db),
            ("audit", "verify-proof", "--key", self.key),
            ("audit", "verify", "--db", self.db, "--key", self.key, "--at",
             "tomorrow"),
            ("audit", "verify", "--db", self.db, "--key", self.key,
             "--checkpoint-interval", "-1"),
            ("audit", "verify", "--db", self.db, "--key", self.key,
             "--max-gap", "1h"),
            ("audit", "verify", "--db", self.db, "--key", self.key,
             "--anchor", self.path("no-anchor")),
            ("audit", "hash-value", '"x"'),
        ]
        for args in cases:
            rc, out, err = ig(*args)
            self.assertEqual(rc, 2, "%s: %s%s" % (args, out, err))
            if len(args) > 1:
                self.assertEqual(len(err.strip().splitlines()), 1,
                                 "%s: %r" % (args, err))
        # A blank line in an export is bad input, not a verification.
        cps = self.path("u-cps.jsonl")
        with open(cps, "w") as f:
            f.write("")
        rc, _, err = ig("audit", "verify", "--leaves", leaves,
                        "--checkpoints", cps, "--key", self.key)
        self.assertEqual(rc, 2, err)
        self.assertIn(":2:", err)

    def test_help(self):
        for sub in ("verify", "show", "export", "proof", "consistency",
                    "verify-proof", "hash-value"):
            rc, out, _ = ig("audit", sub, "--help")
            self.assertEqual(rc, 0, sub)
            self.assertTrue(out.startswith("usage: intentgate audit " + sub),
                            out)
        rc, out, _ = ig("audit", "--help")
        self.assertEqual(rc, 0)
        self.assertIn("verify-proof", out)
        self.assertIn("verify also 3", out)
        rc, out, _ = ig("audit", "verify", "--help")
        self.assertIn("--anchor FILE", out)
        self.assertIn("3 everything verifies but a leaf", out)
        rc, out, _ = ig("--help")
        self.assertIn("audit", out)

    def test_no_checkpoint_is_a_failure(self):
        db, con = self.copy("nocp")
        con.execute("DELETE FROM checkpoints")
        con.commit()
        con.close()
        rc, out, err = ig("audit", "verify", "--db", db, "--key", self.key)
        self.assertEqual(rc, 1, out)
        self.assertIn("no checkpoint", out)


# ---- the web pages ----

class Reply:
    def __init__(self, resp, body):
        self.status = resp.status
        self.raw = body
        self.body = body.decode("utf-8", "replace")
        self.msg = resp.msg

    def header(self, name):
        return self.msg.get(name)

    def element(self, ident):
        m = re.search(r'<(\w+)[^>]*\bid="%s"[^>]*>(.*?)</\1>'
                      % re.escape(ident), self.body, re.S)
        return m.group(2) if m else None

    def text(self, ident):
        inner = self.element(ident)
        if inner is None:
            return None
        return html.unescape(re.sub(r"<[^>]+>", "", inner))


class Browser:
    def __init__(self, srv):
        self.srv = srv
        self.jar = {}

    def request(self, method, path, form=None):
        conn = http.client.HTTPConnection(self.srv.host, self.srv.port,
                                          timeout=60)
        headers = {}
        if self.jar:
            headers["Cookie"] = "; ".join("%s=%s" % kv
                                          for kv in self.jar.items())
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = FORM
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            reply = Reply(resp, resp.read())
        finally:
            conn.close()
        for line in reply.msg.get_all("Set-Cookie") or []:
            name, _, rest = line.partition("=")
            value = rest.split(";", 1)[0]
            if "Max-Age=0" in line:
                self.jar.pop(name, None)
            else:
                self.jar[name] = value
        return reply

    def get(self, path):
        return self.request("GET", path)

    def login(self, approver, password):
        page = self.get("/ui/login")
        m = re.search(r'name="csrf" value="([^"]*)"', page.body)
        return self.request("POST", "/ui/login", {
            "csrf": html.unescape(m.group(1)), "approver": approver,
            "password": password})


PASSWORD = "correct horse battery staple"


def approver_section(ident, groups):
    rc, out, err = ig("approver", "add", ident, "--groups", groups,
                      stdin=(PASSWORD + "\n").encode())
    assert rc == 0, err
    return out


class AuditUi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ig-audit-ui-")
        cls.srv = None
        try:
            cls.start()
        except BaseException:
            if cls.srv is not None:
                cls.srv.stop()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def start(cls):
        srv = Server.dev(tmp=cls.tmp)
        data = srv.data
        try:
            cls.ids = lifecycle(srv, "ui")
            st, body, _ = srv.submit("payments.refund", XSS,
                                     {"amount": 7, "note": XSS + "\u202e"})
            assert st == 201, body
            cls.xss = body["intent_id"]
            for i in range(30):  # enough events for two pages
                st, body, _ = srv.submit("payments.refund", "orders/p%d" % i,
                                         {"amount": 1})
                assert st == 201, body
        finally:
            finish(srv)
        with open(os.path.join(data, "intentgate.conf"), "a") as f:
            f.write("\n" + approver_section("audit-alice", "auditors"))
            f.write("\n" + approver_section("fin-bob", "finance"))
        cls.srv = Server.dev(tmp=cls.tmp)
        cls.env = dict(read_env(data))
        cls.env.update(cls.srv.env)

    @classmethod
    def tearDownClass(cls):
        try:
            finish(cls.srv)
        finally:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def auditor(self):
        b = Browser(self.srv)
        r = b.login("audit-alice", PASSWORD)
        self.assertEqual(r.status, 303, r.body)
        return b

    def assertPage(self, r, status):
        self.assertEqual(r.status, status, r.body[:2000])
        self.assertTrue(r.header("Content-Type").startswith("text/html"))
        self.assertIn("default-src 'none'",
                      r.header("Content-Security-Policy") or "")
        self.assertNotIn("<script", r.body)
        self.assertNotIn("style=", r.body)

    def test_sign_in_first(self):
        r = Browser(self.srv).get("/ui/audit")
        self.assertEqual(r.status, 303)
        self.assertEqual(r.header("Location"), "/ui/login")

    def test_auditor_sees_events_and_checkpoint(self):
        r = self.auditor().get("/ui/audit")
        self.assertPage(r, 200)
        note = r.text("checkpoint")
        self.assertIsNotNone(note, r.body[:3000])
        self.assertTrue(note.startswith(self.env["INTENTGATE_AUDIT_KEY"]
                                        .split("+")[0] + "\n"), note)
        self.assertIn("\u2014 ", note)
        self.assertEqual(r.body.count('class="item card event"'), 50)
        self.assertIn("intent.decided", r.body)
        self.assertIn('id="older"', r.body)
        self.assertIn('href="/ui/audit/export.jsonl?end=', r.body)

    def test_other_approvers_get_403(self):
        b = Browser(self.srv)
        self.assertEqual(b.login("fin-bob", PASSWORD).status, 303)
        for path in ("/ui/audit", "/ui/audit/export.jsonl",
                     "/ui/audit/intents/" + self.ids["allow"],
                     "/ui/audit/checkpoints.jsonl"):
            r = b.get(path)
            self.assertPage(r, 403)
            self.assertNotIn(self.ids["allow"], r.body)
        self.assertEqual(b.get("/ui/approvals").status, 200)

    def test_escaping(self):
        b = self.auditor()
        r = b.get("/ui/audit?intent=" + self.xss)
        self.assertPage(r, 200)
        self.assertNotIn(XSS, r.body)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", r.body)
        r = b.get("/ui/audit/intents/" + self.xss)
        self.assertPage(r, 200)
        self.assertNotIn(XSS, r.body)
        self.assertEqual(r.text("resource"), XSS)
        self.assertIn("\\u202e", r.text("params"))
        self.assertNotIn("\u202e", r.body)

    def test_intent_timeline(self):
        r = self.auditor().get("/ui/audit/intents/" + self.ids["escalate"])
        self.assertPage(r, 200)
        self.assertEqual(r.text("action").strip(), "payments.refund")
        self.assertEqual(r.text("principal").strip(), "dev-agent")
        timeline = r.element("timeline")
        for t in ("intent.received", "intent.decided", "approval.voted",
                  "approval.resolved"):
            self.assertIn(t, timeline)
        self.assertIn("refund for ui", html.unescape(timeline))
        r = self.auditor().get("/ui/audit/intents/no-such-intent")
        self.assertPage(r, 404)

    def test_filters_and_paging(self):
        b = self.auditor()
        r = b.get("/ui/audit?type=intent.decided")
        self.assertPage(r, 200)
        types = re.findall(r'<span class="action event-type">([^<]*)</span>',
                           r.body)
        self.assertTrue(types)
        self.assertEqual(set(types), {"intent.decided"})
        r = b.get("/ui/audit?intent=" + self.ids["allow"])
        links = set(re.findall(r'/ui/audit/intents/([^"]+)"', r.body))
        self.assertEqual(links, {self.ids["allow"]})
        self.assertIn("grant.redeemed", r.body)
        first = b.get("/ui/audit")
        older = html.unescape(re.search(r'id="older" href="([^"]+)"',
                                        first.body).group(1))
        second = b.get(older)
        self.assertPage(second, 200)
        leaves1 = re.findall(r'<span class="count">leaf (\d+)</span>',
                             first.body)
        leaves2 = re.findall(r'<span class="count">leaf (\d+)</span>',
                             second.body)
        self.assertTrue(leaves2)
        self.assertLess(int(leaves2[0]), int(leaves1[-1]))
        for bad in ("?type=%3Cx%3E", "?intent=a/b", "?before=-1"):
            self.assertPage(b.get("/ui/audit" + bad), 400)
        self.assertPage(b.request("POST", "/ui/audit", {"x": "1"}), 405)
        self.assertPage(b.get("/ui/audit/nothing"), 404)

    def test_export_download_verifies(self):
        b = self.auditor()
        page = b.get("/ui/audit")
        href = html.unescape(re.search(r'id="export" download href="([^"]+)"',
                                       page.body).group(1))
        cps_href = html.unescape(re.search(
            r'id="export-checkpoints" download href="([^"]+)"',
            page.body).group(1))
        r = b.get(href)
        self.assertEqual(r.status, 200)
        self.assertTrue(r.header("Content-Disposition")
                        .startswith("attachment;"))
        n = int(href.rsplit("=", 1)[1])
        self.assertEqual(r.raw.count(b"\n"), n)
        c = b.get(cps_href)
        self.assertEqual(c.status, 200)
        self.assertTrue(c.header("Content-Disposition")
                        .startswith("attachment;"))
        work = tempfile.mkdtemp(prefix="ig-audit-dl-")
        try:
            leaves = os.path.join(work, "log.jsonl")
            cps = os.path.join(work, "cps.jsonl")
            with open(leaves, "wb") as f:
                f.write(r.raw)
            with open(cps, "wb") as f:
                f.write(c.raw)
            rc, out, err = ig("audit", "verify", "--leaves", leaves,
                              "--checkpoints", cps, "--key",
                              self.env["INTENTGATE_AUDIT_KEY"])
            self.assertEqual(rc, 0, out + err)
        finally:
            shutil.rmtree(work, ignore_errors=True)



if __name__ == "__main__":
    run_tests()
