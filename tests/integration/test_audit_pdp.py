"""test_audit_pdp.py - the audit log of the real `intentgate serve --dev`:
the events of a whole intent life, of refused tokens, of a policy reload and
of the start; the signed checkpoints (by count, by interval, at shutdown);
the /v1/audit endpoints with their roles; proofs checked here (RFC 9162
Merkle math, the note's key id, Ed25519 through openssl when present) and by
the independent Node.js verifier tests/interop/verify_checkpoint.mjs when
node is installed; redaction of sensitive params.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_audit_pdp.py
"""
import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, run_tests, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_VERIFIER = os.path.join(HERE, "..", "interop", "verify_checkpoint.mjs")
CARD = "4111111111111111"


# ---- the Merkle tree (RFC 6962 / RFC 9162), from the spec ----

def leaf_hash(b):
    return hashlib.sha256(b"\x00" + b).digest()


def node_hash(l, r):
    return hashlib.sha256(b"\x01" + l + r).digest()


def mth(leaves):
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


def verify_inclusion(leaf, index, size, proof, root):
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while True:
                    fn >>= 1
                    sn >>= 1
                    if fn & 1 or fn == 0:
                        break
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(n1, n2, r1, r2, proof):
    if n1 == n2:
        return not proof and r1 == r2
    if n1 & (n1 - 1) == 0:
        proof = [r1] + proof
    fn, sn = n1 - 1, n2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    if not proof:
        return False
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while True:
                    fn >>= 1
                    sn >>= 1
                    if fn & 1 or fn == 0:
                        break
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == r1 and sr == r2


# ---- signed notes ----

def parse_vkey(vkey):
    name, hexid, b64 = vkey.split("+", 2)
    raw = base64.b64decode(b64)
    assert raw[0] == 1 and len(raw) == 33
    return name, int(hexid, 16), raw[1:]


def key_id(name, pk):
    return int.from_bytes(hashlib.sha256(name.encode() + b"\n\x01" + pk)
                          .digest()[:4], "big")


def ed25519_ok(pk, msg, sig):
    """True/False with openssl; without openssl the test fails (naming
    it), never passes unchecked."""
    if shutil.which("openssl") is None:
        raise AssertionError("the signature check needs openssl, which is "
                             "not installed (scripts/deps.sh installs it)")
    d = tempfile.mkdtemp(prefix="ig-ed-")
    try:
        paths = {}
        for name, data in (("pk.der", bytes.fromhex(
                "302a300506032b6570032100") + pk),
                           ("msg", msg), ("sig", sig)):
            paths[name] = os.path.join(d, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        r = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin",
                            "-inkey", paths["pk.der"], "-keyform", "DER",
                            "-rawin", "-in", paths["msg"], "-sigfile",
                            paths["sig"]], capture_output=True)
        if b"Signature Verified Successfully" in r.stdout:
            return True
        if r.returncode != 0 and \
                b"verification failure" in (r.stdout + r.stderr).lower():
            return False
        raise AssertionError("openssl could not check the signature: %r"
                             % (r.stdout + r.stderr)[-500:])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def open_note(note, vkey):
    """Check the note as a verifier does; returns (origin, size, root)."""
    name, kid, pk = parse_vkey(vkey)
    assert key_id(name, pk) == kid, "verifier key id"
    text, _, sigs = note.partition("\n\n")
    text += "\n"
    lines = text.split("\n")
    assert len(lines) == 4 and lines[3] == "", text
    origin, size, root = lines[0], int(lines[1]), base64.b64decode(lines[2])
    found = False
    for line in sigs.rstrip("\n").split("\n"):
        m = re.match("^\u2014 (\\S+) (\\S+)$", line)
        assert m, line
        sig = base64.b64decode(m.group(2))
        if m.group(1) == name and int.from_bytes(sig[:4], "big") == kid:
            assert ed25519_ok(pk, text.encode(), sig[4:]), "bad signature"
            bad = bytearray(text.encode())
            bad[-2] ^= 1  # a forged root digit must fail
            assert ed25519_ok(pk, bytes(bad), sig[4:]) is False
            found = True
    assert found, "no signature by " + name
    assert origin == name
    return origin, size, root


def node_verify(vkey, note, proof=None, leaf=None):
    """Run the Node.js verifier; without node (or the verifier) the test
    fails naming it, never passes unchecked."""
    if shutil.which("node") is None:
        raise AssertionError("the independent check needs node, which is "
                             "not installed (scripts/deps.sh installs it)")
    if not os.path.exists(NODE_VERIFIER):
        raise AssertionError("no Node.js verifier at " + NODE_VERIFIER)
    d = tempfile.mkdtemp(prefix="ig-node-")
    try:
        args = []
        for name, data in (("vkey", vkey.encode()), ("cp", note.encode()),
                           ("proof", proof), ("leaf", leaf)):
            if data is None:
                continue
            p = os.path.join(d, name)
            with open(p, "wb") as f:
                f.write(data)
            args.append(p)
        r = subprocess.run(["node", NODE_VERIFIER] + args,
                           capture_output=True, text=True, timeout=60)
        return r.returncode == 0, r.stdout.strip()
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- servers ----

def dev_with(audit_lines="", clock=False):
    """A dev server whose [audit] section gets audit_lines (restarted once
    to take them); on the test clock when clock is true."""
    srv = Server.dev(clock=clock)
    if not audit_lines:
        return srv
    srv.stop()
    conf = os.path.join(srv.data, "intentgate.conf")
    with open(conf) as f:
        text = f.read()
    with open(conf, "w") as f:
        f.write(text.replace("[audit]\n", "[audit]\n" + audit_lines))
    return Server.dev(tmp=srv.tmp, clock=clock)


def finish(srv):
    rc = srv.stop()
    log = srv.log()
    srv.cleanup()
    if rc != 0 or "Sanitizer" in log or "runtime error" in log:
        raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))


class AuditBase(unittest.TestCase):
    srv = None

    def rows(self, sql):
        """A SELECT on the server's store (SQLite or PostgreSQL)."""
        return self.srv.rows(sql)

    def count(self, sql):
        """The one number a SELECT count(*) AS n ... answers."""
        return self.rows(sql)[0]["n"]

    def events(self):
        """(seq, event text) of every audit event, in order, once the
        sequencer has them all (on PostgreSQL; at once on SQLite)."""
        self.srv.settled()
        return [(r["seq"], r["event"]) for r in
                self.rows("SELECT seq, event FROM audit_events ORDER BY seq")]

    def typed(self, t):
        return [json.loads(ev) for _, ev in self.events()
                if json.loads(ev)["type"] == t]

    def wait_event(self, pred, what, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for _, ev in self.events():
                e = json.loads(ev)
                if pred(e):
                    return e
            time.sleep(0.05)
        self.fail("no audit event: " + what)

    def get(self, path, token):
        return self.srv.call("GET", path, token, raw_response=True)

    def refused(self, resp, status, code):
        st, body, _ = resp
        self.assertEqual(st, status, body)
        self.assertEqual(json.loads(body)["error"]["code"], code, body)

    def leaves(self, token, start, end):
        st, body, h = self.get("/v1/audit/leaves?start=%d&end=%d"
                               % (start, end), token)
        self.assertEqual(st, 200, body)
        self.assertEqual(h["Content-Type"], "application/x-ndjson")
        lines = body.split(b"\n")
        self.assertEqual(lines[-1], b"")
        return lines[:-1], int(h["X-Audit-Tree-Size"])

    def all_leaves(self, token, size):
        out = []
        while len(out) < size:
            page, _ = self.leaves(token, len(out), min(size, len(out) + 1000))
            self.assertTrue(page)
            out += page
        return out[:size]

    def checkpoint(self, token):
        st, body, h = self.get("/v1/audit/checkpoint", token)
        self.assertEqual(st, 200, body)
        self.assertEqual(h["Content-Type"], "text/plain; charset=utf-8")
        return body.decode()


class Lifecycle(AuditBase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server.dev()
        cls.env = cls.srv.env
        cls.auditor = cls.env["INTENTGATE_AUDITOR_TOKEN"]
        cls.admin = cls.env["INTENTGATE_ADMIN_TOKEN"]

    @classmethod
    def tearDownClass(cls):
        finish(cls.srv)

    def test_config_loaded_at_start(self):
        ev = json.loads(self.events()[0][1])
        self.assertEqual(ev["type"], "config.loaded")
        conf = os.path.join(self.srv.data, "intentgate.conf")
        self.assertEqual(os.path.realpath(ev["path"]), os.path.realpath(conf))
        with open(conf, "rb") as f:
            want = "sha256:" + hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(ev["sha256"], want)
        self.assertEqual(ev["principals"], {
            "agent": ["dev-agent"], "executor": ["dev-executor"],
            "admin": ["dev-admin"], "auditor": ["dev-auditor"]})
        self.assertEqual(ev["approvers"], ["dev-approver"])
        self.assertTrue(ev["policy_revision"].startswith("sha256:"))
        self.assertEqual(ev["audit"]["verifier_key"],
                         self.env["INTENTGATE_AUDIT_KEY"])
        self.assertEqual(ev["audit"]["redact"], ["/card_number"])
        for tok in ("AGENT", "EXECUTOR", "ADMIN", "AUDITOR"):
            self.assertNotIn(self.env["INTENTGATE_%s_TOKEN" % tok],
                             json.dumps(ev))

    def test_dev_env_order_and_start_log(self):
        with open(os.path.join(self.srv.data, "dev.env")) as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[-1].startswith("INTENTGATE_PUBLIC_KEY="))
        keys = [l.split("=", 1)[0] for l in lines]
        self.assertIn("INTENTGATE_AUDIT_KEY", keys)
        self.assertIn("INTENTGATE_AUDITOR_TOKEN", keys)
        started = [json.loads(l) for l in self.srv.log().splitlines()
                   if '"server.started"' in l][0]
        self.assertEqual(started["audit_key"],
                         self.env["INTENTGATE_AUDIT_KEY"])
        self.assertNotIn("audit.unsigned", self.srv.log())
        for name in ("audit.key", "audit-hmac.key"):
            mode = os.stat(os.path.join(self.srv.data, "keys", name)).st_mode
            self.assertEqual(mode & 0o777, 0o600, name)

    def test_full_lifecycle_is_audited(self):
        st, body, _ = self.srv.submit("payments.refund", "orders/aud1",
                                      {"amount": 500})
        self.assertEqual(body["decision"], "ESCALATE", body)
        iid = body["intent_id"]
        st, login, _ = self.srv.call(
            "POST", "/v1/approver/login", None,
            {"approver": self.env["INTENTGATE_APPROVER_ID"],
             "password": self.env["INTENTGATE_APPROVER_PASSWORD"]})
        self.assertEqual(st, 200, login)
        st, res, _ = self.srv.call(
            "POST", "/v1/approvals/%s/votes" % body["approval"]["id"],
            login["token"], {"vote": "approve",
                             "intent_hash": body["intent_hash"]})
        self.assertEqual((st, res["status"]), (200, "APPROVED"), res)
        st, rec, _ = self.srv.call("GET", "/v1/intents/" + iid,
                                   self.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual(rec["state"], "ALLOWED", rec)
        self.assertEqual(self.srv.redeem(rec["grant"], iid)[0], 200)
        st, out, _ = self.srv.call(
            "POST", "/v1/executions/%s/outcome" % iid,
            self.env["INTENTGATE_EXECUTOR_TOKEN"],
            {"outcome": "COMPLETED", "detail": {"status": 200}})
        self.assertEqual(st, 200, out)
        mine = [json.loads(ev) for _, ev in self.events()
                if json.loads(ev).get("intent_id") == iid]
        types = [e["type"] for e in mine]
        for t in ("intent.received", "intent.decided", "approval.voted",
                  "approval.resolved", "grant.redeemed",
                  "execution.outcome"):
            self.assertIn(t, types)
        self.assertEqual(types[0], "intent.received")
        self.assertEqual(types[-1], "execution.outcome")
        self.assertLess(types.index("approval.voted"),
                        types.index("grant.redeemed"))

    def test_auth_failures_are_counted_not_logged_one_by_one(self):
        """A refused token is no leaf of its own: refusals are counted and
        written as aggregated auth.refused events (test_refusals.py reads
        those); no token ever reaches the log."""
        agent = self.env["INTENTGATE_AGENT_TOKEN"]
        self.refused(self.srv.call("POST", "/v1/intents", "igt_not_a_token",
                                   {}, raw_response=True), 401,
                     "UNAUTHENTICATED")
        self.refused(self.srv.call("GET", "/v1/intents/x", None,
                                   raw_response=True), 401, "UNAUTHENTICATED")
        self.refused(self.get("/v1/audit/leaves?start=0&end=1", agent), 403,
                     "FORBIDDEN")
        st, text, _ = self.get("/metrics", None)
        self.assertEqual(st, 200)
        m = re.search(rb'intentgate_refusals_total\{kind="auth"\} (\d+)', text)
        self.assertGreaterEqual(int(m.group(1)), 3, text)
        self.assertEqual(self.typed("auth.failed"), [])
        text = "\n".join(ev for _, ev in self.events())
        self.assertNotIn("igt_not_a_token", text)
        self.assertNotIn(agent, text)

    def test_sighup_reload_is_audited(self):
        before = len(self.typed("policy.reloaded"))
        self.srv.signal(signal.SIGHUP)
        deadline = time.time() + 20
        while time.time() < deadline:
            got = self.typed("policy.reloaded")
            if len(got) > before:
                break
            time.sleep(0.05)
        else:
            self.fail("no policy.reloaded event")
        ev = got[-1]
        self.assertTrue(ev["revision"].startswith("sha256:"))
        self.assertEqual(ev["old_revision"], ev["revision"])
        self.assertTrue(ev["policy_dir"].endswith("policies"))

    def test_redaction(self):
        st, body, _ = self.srv.submit("payments.refund", "orders/card",
                                      {"amount": 7, "card_number": CARD,
                                       "note": "keep"})
        self.assertEqual(st, 201, body)
        iid = body["intent_id"]
        # The answer, the hash and the stored binding hold the real value.
        self.assertEqual(body["intent"]["params"]["card_number"], CARD)
        canon = json.dumps(body["intent"], sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
        self.assertEqual(body["intent_hash"], "sha256:" +
                         hashlib.sha256(canon.encode()).hexdigest())
        self.assertRegex(iid, r"^[0-9a-f-]{36}$")  # safe to quote as is
        (row,) = self.rows("SELECT binding, intent_hash FROM intents WHERE "
                           "intent_id = '%s'" % iid)
        binding, ihash = row["binding"], row["intent_hash"]
        self.assertEqual(ihash, body["intent_hash"])
        self.assertEqual(json.loads(binding)["params"]["card_number"], CARD)
        # The log holds the keyed hash only.
        rec = [json.loads(ev) for _, ev in self.events()
               if json.loads(ev)["type"] == "intent.received" and
               json.loads(ev)["intent_id"] == iid][0]
        self.assertEqual(rec["intent_hash"], body["intent_hash"])
        with open(os.path.join(self.srv.data, "keys",
                               "audit-hmac.key")) as f:
            key = base64.urlsafe_b64decode(f.read().strip() + "=")
        want = "hmac-sha256:" + hmac.new(key, json.dumps(CARD).encode(),
                                         hashlib.sha256).hexdigest()
        self.assertEqual(rec["intent"]["params"]["card_number"], want)
        self.assertEqual(rec["intent"]["params"]["note"], "keep")
        text = "\n".join(ev for _, ev in self.events())
        self.assertNotIn(CARD, text)

    def test_endpoint_roles(self):
        paths = ["/v1/audit/checkpoint", "/v1/audit/leaves?start=0&end=1",
                 "/v1/audit/proof/inclusion?index=0",
                 "/v1/audit/proof/consistency?old=1&new=1"]
        for p in paths:
            for who in ("AGENT", "EXECUTOR"):
                self.refused(self.get(p, self.env["INTENTGATE_%s_TOKEN"
                                                  % who]), 403, "FORBIDDEN")
            self.refused(self.get(p, None), 401, "UNAUTHENTICATED")
            for tok in (self.auditor, self.admin):
                st, body, _ = self.get(p, tok)
                self.assertIn(st, (200, 404), body)
        self.refused(self.srv.call("POST", "/v1/audit/checkpoint",
                                   self.auditor, {}, raw_response=True), 405,
                     "METHOD_NOT_ALLOWED")
        self.refused(self.get("/v1/audit/nothing", self.auditor), 404,
                     "NOT_FOUND")
        # An auditor reads the log and nothing else.
        self.refused(self.srv.call("POST", "/v1/intents", self.auditor,
                                   {"action": "x", "resource": "y",
                                    "params": {}}, raw_response=True),
                     403, "FORBIDDEN")

    def test_leaves_paging(self):
        for i in range(5):
            self.srv.submit("payments.refund", "orders/p%d" % i,
                            {"amount": 1 + i})
        db_leaves = [ev.encode() for _, ev in self.events()]
        n = len(db_leaves)
        got, size = [], None
        while len(got) < n:
            page, size = self.leaves(self.auditor, len(got), len(got) + 7)
            got += page
        self.assertGreaterEqual(size, n)
        self.assertEqual(got[:n], db_leaves)
        # Past the end: clamped; at the end: empty.
        page, size = self.leaves(self.admin, size - 1, size + 500)
        self.assertEqual(len(page), 1)
        page, _ = self.leaves(self.admin, size, size + 1)
        self.assertEqual(page, [])
        for q in ("start=3&end=3", "start=4&end=2", "start=0&end=1001",
                  "start=-1&end=2", "start=a&end=2", "end=2", "start=0",
                  "start=0x1&end=2", "start=1&end=2%20"):
            self.refused(self.get("/v1/audit/leaves?" + q, self.auditor),
                         400, "INVALID_QUERY")
        page, _ = self.leaves(self.auditor, 0, 1000)
        self.assertEqual(len(page), min(1000, size))

    def test_no_checkpoint_before_the_first(self):
        self.refused(self.get("/v1/audit/proof/inclusion?index=0&size=999999",
                              self.auditor), 404, "NO_CHECKPOINT")
        self.refused(self.get("/v1/audit/proof/consistency?old=999998&"
                              "new=999999", self.auditor), 404,
                     "NO_CHECKPOINT")
        self.refused(self.get("/v1/audit/proof/consistency?old=5&new=4",
                              self.auditor), 400, "INVALID_QUERY")
        self.refused(self.get("/v1/audit/proof/inclusion", self.auditor), 400,
                     "INVALID_QUERY")


class Checkpoints(AuditBase):
    """checkpoint_every = 5: checkpoints follow the log as it grows."""

    @classmethod
    def setUpClass(cls):
        cls.srv = dev_with("checkpoint_every = 5\n")
        cls.env = cls.srv.env
        cls.vkey = cls.env["INTENTGATE_AUDIT_KEY"]
        cls.auditor = cls.env["INTENTGATE_AUDITOR_TOKEN"]

    @classmethod
    def tearDownClass(cls):
        finish(cls.srv)

    def wait_checkpoint(self, min_size):
        deadline = time.time() + 15
        while time.time() < deadline:
            st, body, _ = self.get("/v1/audit/checkpoint", self.auditor)
            if st == 200:
                _, size, _ = open_note(body.decode(), self.vkey)
                if size >= min_size:
                    return body.decode(), size
            time.sleep(0.05)
        self.fail("no checkpoint of %d leaves or more" % min_size)

    def test_checkpoints_proofs_and_consistency(self):
        for i in range(4):
            self.srv.submit("payments.refund", "orders/c%d" % i, {"amount": 3})
        note1, size1 = self.wait_checkpoint(5)
        origin, _, root1 = open_note(note1, self.vkey)
        self.assertEqual(origin, "intentgate.local/audit")
        leaves = self.all_leaves(self.auditor, size1)
        hashes = [leaf_hash(l) for l in leaves]
        self.assertEqual(mth(hashes), root1)
        nv = node_verify(self.vkey, note1)
        self.assertTrue(nv[0], nv[1])
        # Inclusion proofs for the first, a middle and the last leaf.
        for index in sorted({0, size1 // 2, size1 - 1}):
            st, body, h = self.get("/v1/audit/proof/inclusion?index=%d&size=%d"
                                   % (index, size1), self.auditor)
            self.assertEqual(st, 200, body)
            self.assertEqual(h["Content-Type"], "text/plain; charset=utf-8")
            text = body.decode()
            head, _, note = text.partition("\n\n")
            lines = head.split("\n")
            self.assertEqual(lines[0], "c2sp.org/tlog-proof@v1")
            self.assertEqual(lines[1], "index %d" % index)
            proof = [base64.b64decode(l) for l in lines[2:]]
            self.assertEqual(note, note1)
            self.assertTrue(verify_inclusion(hashes[index], index, size1,
                                             proof, root1))
            self.assertFalse(verify_inclusion(leaf_hash(leaves[index] + b" "),
                                              index, size1, proof, root1))
            nv = node_verify(self.vkey, note1, body, leaves[index])
            self.assertTrue(nv[0], nv[1])
            bad = node_verify(self.vkey, note1, body, leaves[index] + b" ")
            self.assertFalse(bad[0], bad[1])
        # Latest checkpoint when size is left out.
        st, body, _ = self.get("/v1/audit/proof/inclusion?index=0",
                               self.auditor)
        self.assertEqual(st, 200, body)
        self.refused(self.get("/v1/audit/proof/inclusion?index=%d&size=%d"
                              % (size1, size1), self.auditor), 400,
                     "INVALID_QUERY")
        self.refused(self.get("/v1/audit/proof/inclusion?index=0&size=%d"
                              % (size1 + 100000), self.auditor), 404,
                     "NO_CHECKPOINT")
        # More leaves, a newer checkpoint, consistent with the first.
        for i in range(4):
            self.srv.submit("payments.refund", "orders/d%d" % i, {"amount": 4})
        note2, size2 = self.wait_checkpoint(size1 + 5)
        _, _, root2 = open_note(note2, self.vkey)
        st, body, h = self.get("/v1/audit/proof/consistency?old=%d&new=%d"
                               % (size1, size2), self.auditor)
        self.assertEqual(st, 200, body)
        self.assertEqual(h["Content-Type"], "text/plain; charset=utf-8")
        lines = body.decode().split("\n")
        self.assertEqual(lines[:3], ["intentgate.org/consistency-proof@v1",
                                     "old %d" % size1, "new %d" % size2])
        self.assertEqual(lines[-1], "")
        proof = [base64.b64decode(l) for l in lines[3:-1]]
        self.assertTrue(verify_consistency(size1, size2, root1, root2, proof))
        self.assertFalse(verify_consistency(size1, size2, root2, root1,
                                            proof))
        leaves2 = self.all_leaves(self.auditor, size2)
        self.assertEqual(leaves2[:size1], leaves)
        self.assertEqual(mth([leaf_hash(l) for l in leaves2]), root2)
        st, body, _ = self.get("/v1/audit/proof/consistency?old=%d&new=%d"
                               % (size2, size2), self.auditor)
        self.assertEqual((st, body.decode().count("\n")), (200, 3))
        self.refused(self.get("/v1/audit/proof/consistency?old=%d&new=%d"
                              % (size1, size2 + 1), self.auditor), 404,
                     "NO_CHECKPOINT")


class Shutdown(AuditBase):
    def test_checkpoint_signed_at_shutdown_and_kept_across_restart(self):
        self.srv = Server.dev()
        try:
            vkey = self.srv.env["INTENTGATE_AUDIT_KEY"]
            self.srv.submit("payments.refund", "orders/s1", {"amount": 2})
            self.refused(self.get("/v1/audit/checkpoint",
                                  self.srv.env["INTENTGATE_AUDITOR_TOKEN"]),
                         404, "NO_CHECKPOINT")
            self.assertEqual(self.srv.stop(), 0)
            self.assertIn("audit.checkpoint_signed", self.srv.log())
            self.srv.settled()
            n = self.count("SELECT count(*) AS n FROM audit_events")
            (last,) = self.rows("SELECT size, note FROM checkpoints "
                                "ORDER BY size DESC LIMIT 1")
            size, note = last["size"], last["note"]
            tiles = self.count("SELECT count(*) AS n FROM audit_tiles "
                               "WHERE level = 0")
            self.assertEqual(size, n)
            self.assertEqual(tiles, n // 256)  # full tiles only
            _, got, root = open_note(note, vkey)
            self.assertEqual(got, n)
            leaves = [leaf_hash(ev.encode()) for _, ev in self.events()]
            self.assertEqual(mth(leaves), root)
            # Restarted: the same tree grows on; the old checkpoint is
            # served and the next is consistent with it.
            self.srv = Server.dev(tmp=self.srv.tmp)
            tok = self.srv.env["INTENTGATE_AUDITOR_TOKEN"]
            self.assertEqual(self.checkpoint(tok), note)
            self.srv.submit("payments.refund", "orders/s2", {"amount": 2})
            self.assertEqual(self.srv.stop(), 0)
            sizes = [r["size"] for r in self.rows(
                "SELECT size FROM checkpoints ORDER BY size")]
            self.assertEqual(sizes[0], n)
            self.assertGreater(sizes[-1], n)
            self.assertNotIn("checkpoint_refused", self.srv.log())
        finally:
            self.srv.stop()
            self.srv.cleanup()


class IntervalAndUnsigned(AuditBase):
    def test_interval_checkpoint(self):
        # On the test clock: the interval passes without waiting for it.
        self.srv = dev_with("checkpoint_interval = 600\n", clock=True)
        try:
            tok = self.srv.env["INTENTGATE_AUDITOR_TOKEN"]
            vkey = self.srv.env["INTENTGATE_AUDIT_KEY"]
            # The first run signed 1 leaf at its shutdown; this one adds
            # config.loaded and the intent's two events.
            self.srv.submit("payments.refund", "orders/i1", {"amount": 2})
            self.assertEqual(open_note(self.checkpoint(tok), vkey)[1], 1)
            self.srv.advance(601)
            size = wait_until(
                lambda: open_note(self.checkpoint(tok), vkey)[1] >= 4 and
                open_note(self.checkpoint(tok), vkey)[1],
                "the interval checkpoint")
            self.assertEqual(size, 4)
            self.assertNotIn("checkpoint_refused", self.srv.log())
        finally:
            finish(self.srv)

    def test_without_key_one_warning_and_no_checkpoints(self):
        srv = Server.dev()
        srv.stop()
        conf = os.path.join(srv.data, "intentgate.conf")
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace("key = keys/audit.key\n", ""))
        self.srv = Server.dev(tmp=srv.tmp)
        try:
            self.srv.submit("payments.refund", "orders/u1", {"amount": 2})
            self.assertEqual(self.srv.stop(), 0)
            log = self.srv.log()
            self.assertEqual(log.count('"audit.unsigned"'), 1)
            # Only the first run (with its key) signed, at its shutdown.
            self.assertEqual(log.count('"audit.checkpoint_signed"'), 1)
            self.srv.settled()
            self.assertEqual(
                self.count("SELECT count(*) AS n FROM checkpoints"), 1)
            # The tree is kept all the same (its full tiles).
            n = self.count("SELECT count(*) AS n FROM audit_events")
            self.assertEqual(self.count("SELECT count(*) AS n FROM "
                                        "audit_tiles WHERE level = 0"),
                             n // 256)
        finally:
            self.srv.stop()
            self.srv.cleanup()


class ConfigErrors(unittest.TestCase):
    """[audit] and [auditor] are checked at start, naming file and line."""

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

    def test_bad_audit_sections(self):
        h = "0" * 64
        self.refused("[audit]\nredact = /card\n", "redact needs hmac_key")
        self.refused("[audit]\nhmac_key = h\nredact = card\n",
                     "not a JSON pointer")
        self.refused("[audit]\nhmac_key = h\nredact = /a, /a\n", "twice")
        self.refused("[audit]\nname = has space\n", "name must be")
        self.refused("[audit]\ncheckpoint_every = 0\n", "checkpoint_every")
        self.refused("[audit]\ncheckpoint_interval = x\n",
                     "checkpoint_interval")
        self.refused("[audit]\nkeys = k\n", "unknown key keys in [audit]")
        self.refused("[audit]\nkey = a\nkey = b\n", "duplicate key key")
        self.refused("[audit]\n[audit]\n", "[audit] appears twice")
        self.refused("[audit x]\n", "[audit] takes no id")
        self.refused("[audit]\nanchor = a\n", "anchor needs key")
        self.refused("[auditor a]\n", "a needs token_sha256")
        self.refused("[auditor a]\ntoken_sha256 = %s\ntenant = t\n" % h,
                     "unknown key tenant")
        self.refused("[auditor a]\ntoken_sha256 = %s\n[admin b]\n"
                     "token_sha256 = %s\n" % (h, h), "share a token")

    def test_audit_key_files_checked_at_start(self):
        srv = Server.dev()
        srv.stop()
        try:
            hk = os.path.join(srv.data, "keys", "audit-hmac.key")
            os.chmod(hk, 0o644)
            from harness import BIN
            conf = os.path.join(srv.data, "intentgate.conf")
            r = subprocess.run([BIN, "serve", "--config", conf],
                               capture_output=True, text=True, timeout=30)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("audit-hmac.key may be read by group", r.stderr)
            os.chmod(hk, 0o600)
            with open(hk, "w") as f:
                f.write("too-short\n")
            r = subprocess.run([BIN, "serve", "--config", conf],
                               capture_output=True, text=True, timeout=30)
            self.assertIn("32 random bytes", r.stderr)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    run_tests()
