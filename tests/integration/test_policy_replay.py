"""test_policy_replay.py - `intentgate policy replay` on a database that a
real PDP (serve --dev, the example bundle, a quota of 5 a minute) filled:
refunds that pass, escalate and get approved, denied or expire, and block;
a burst that the quota blocks in part; the other example policies.

(a) the same bundle and settings: zero changes, exit 0 - so approvals and
    quota history are rebuilt as the server had them;
(b) one rule changed (the refund auto-approval limit 100 -> 600): exactly
    the expected intents, from/to and counts, in text, json and csv; a
    bundle whose tests fail is refused (exit 2);
(c) --since (the day before warms the quota counters), --until, --action;
(d) read-only: the SQLite file's bytes are the same after, nothing is made
    beside it, and a copy in a read-only directory reads; on PostgreSQL the
    tables' contents are the same after;
(e) hostile rows in a copy of the database (a binding that is not JSON, a
    huge one, garbage reasons): each named by seq, exit 3, no crash.

Runs on both stores (ig_store_test: policy.replay and policy.replay.pg).

    INTENTGATE_BIN=build/release/cli/intentgate \\
        python3 tests/integration/test_policy_replay.py
"""
import csv
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg  # noqa: E402
from harness import BIN, Server, run_tests, wait_until  # noqa: E402

QUOTA = 5  # the server's quota_per_minute here
# Replayed decisions in the recording (record() says which).
REPLAYED = 5 + 1 + 7 + 4 + 8
# A policy of the recording's bundle: the server's own reason codes
# returned by a policy (not the server's: compared as the BLOCKs they are),
# and an ALLOW for an action no executor handles (the server's BLOCK
# NO_EXECUTOR: compared as the policies' ALLOW).
SERVER_CODES_POLICY = """
return function(intent)
  if intent.action == "payments.own_no_executor" then
    return BLOCK{reason = "NO_EXECUTOR", message = "the policy's own"}
  end
  if intent.action == "payments.own_not_sufficient" then
    return BLOCK{reason = "APPROVAL_NOT_SUFFICIENT"}
  end
  if intent.action == "noexec.thing" then
    return ALLOW
  end
  return nil
end
"""
SETTINGS = {"quota_per_minute": QUOTA}
NEW_REFUND_TESTS = """
local function refund(amount)
  return { action = "payments.refund", resource = "orders/o",
           params = { amount = amount } }
end
return {
  { name = "600 passes", intent = refund(600), expect = "ALLOW" },
  { name = "700 escalates", intent = refund(700),
    expect = "ESCALATE", reasons = {"REFUND_NEEDS_APPROVAL"} },
  { name = "over 1000", intent = refund(1001),
    expect = "BLOCK", reasons = {"AMOUNT_OVER_LIMIT"} },
}
"""


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Replay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="ig-replay-")
        srv = Server.dev()
        srv.stop()
        conf = os.path.join(srv.data, "intentgate.conf")
        with open(conf) as f:
            text = f.read()
        assert "quota_per_minute = 6000" in text, text
        with open(conf, "w") as f:
            f.write(text.replace("quota_per_minute = 6000",
                                 "quota_per_minute = %d" % QUOTA))
        with open(os.path.join(srv.data, "policies", "zz_codes.lua"),
                  "w") as f:
            f.write(SERVER_CODES_POLICY)
        cls.srv = srv = Server.dev(tmp=srv.tmp, clock=True)
        try:
            cls.record(srv)
        finally:
            srv.stop()
        cls.db = srv.store()
        cls.bundle = os.path.join(srv.data, "policies")
        cls.conf = conf
        cls.settings = cls.write("settings.json", json.dumps(SETTINGS))
        cls.changed = cls.changed_bundle()

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()
        shutil.rmtree(cls.work, ignore_errors=True)

    # ---- the recorded history ----

    @classmethod
    def submit(cls, srv, action, resource, params, want=None):
        st, body, _ = srv.submit(action, resource, params)
        assert st == 201, body
        if want is not None:
            assert body["decision"] == want, (action, resource, body)
        return body

    @classmethod
    def vote(cls, srv, token, body, vote):
        st, res, _ = srv.call("POST", "/v1/approvals/%s/votes"
                              % body["approval"]["id"], token,
                              {"vote": vote,
                               "intent_hash": body["intent_hash"]})
        assert st == 200, res
        return res

    @classmethod
    def record(cls, srv):
        sub = cls.submit
        # Refunds: pass, escalate (approved later, denied later, left to
        # expire), block.
        # (A second early: the server's time(NULL) is a coarse clock that
        # may still say the second before Python's time.time().)
        cls.t_start = srv.now() - 1
        sub(srv, "payments.refund", "orders/1", {"amount": 50}, "ALLOW")
        cls.r500 = sub(srv, "payments.refund", "orders/2", {"amount": 500},
                       "ESCALATE")
        cls.r700 = sub(srv, "payments.refund", "orders/3", {"amount": 700},
                       "ESCALATE")
        cls.r300 = sub(srv, "payments.refund", "orders/4", {"amount": 300},
                       "ESCALATE")
        sub(srv, "payments.refund", "orders/5", {"amount": 5000}, "BLOCK")
        srv.advance(61)  # a fresh quota minute
        st, tok, _ = srv.call("POST", "/v1/approver/login", None,
                              {"approver": "dev-approver",
                               "password":
                               srv.env["INTENTGATE_APPROVER_PASSWORD"]})
        assert st == 200, tok
        res = cls.vote(srv, tok["token"], cls.r500, "approve")
        assert (res["status"], res["decision"]) == ("APPROVED", "ALLOW"), res
        res = cls.vote(srv, tok["token"], cls.r700, "deny")
        assert res["status"] == "DENIED", res
        # The other example policies, one or two intents each.
        sub(srv, "shell.exec", "local", {"argv": ["sudo", "ls"]}, "BLOCK")
        sub(srv, "git.push", "repo", {"refs": ["refs/heads/main"]}, "BLOCK")
        sub(srv, "git.push", "repo", {"refs": ["refs/heads/agent/x"]},
            "ALLOW")
        srv.advance(61)
        sub(srv, "http.request", "http://169.254.169.254/", {}, "BLOCK")
        sub(srv, "db.write", "prod/users", {}, "ESCALATE")
        sub(srv, "file.read", "/etc/passwd", {}, "BLOCK")
        sub(srv, "mcp.other.tool", "x", {}, "ESCALATE")
        # The 300 refund expires (approval_ttl 900 s): the sweeper blocks it.
        srv.advance(901)
        agent = srv.env["INTENTGATE_AGENT_TOKEN"]
        wait_until(lambda: srv.call("GET", "/v1/intents/"
                                    + cls.r300["intent_id"],
                                    agent)[1]["state"] == "BLOCKED",
                   "the sweeper to expire the 300 refund")
        srv.advance(61)
        # The server's reason codes: a policy's own, and the server's.
        b = sub(srv, "payments.own_no_executor", "x", {}, "BLOCK")
        assert b["reasons"] == ["NO_EXECUTOR"], b
        b = sub(srv, "payments.own_not_sufficient", "x", {}, "BLOCK")
        assert b["reasons"] == ["APPROVAL_NOT_SUFFICIENT"], b
        b = sub(srv, "noexec.thing", "x", {}, "BLOCK")
        assert b["reasons"] == ["NO_EXECUTOR"], b
        # A resource a spreadsheet would take for a formula.
        cls.rformula = sub(srv, "payments.refund", "=1+2", {"amount": 400},
                           "ESCALATE")
        srv.advance(61)
        # A quota burst across a --since boundary: 3 intents, then 5 ten
        # seconds later: the last 3 of those are over the quota of 5.
        cls.burst = []
        for i in range(3):
            cls.burst.append(sub(srv, "shell.exec", "local",
                                 {"argv": ["echo", str(i)]}, "ALLOW"))
        srv.advance(10)
        cls.t_burst2 = srv.now() - 1
        for i in range(5):
            cls.burst.append(sub(srv, "shell.exec", "local",
                                 {"argv": ["echo", "b%d" % i]},
                                 "ALLOW" if i < 2 else "BLOCK"))
        cls.over_quota = [b["intent_id"] for b in cls.burst[5:]]
        cls.t_end = srv.now() + 1

    @classmethod
    def write(cls, name, text):
        path = os.path.join(cls.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    @classmethod
    def changed_bundle(cls, tests=NEW_REFUND_TESTS, name="changed"):
        """The bundle with refund.lua's auto-approval limit at 600 (and
        refund_test.lua replaced by tests (None: kept as is))."""
        out = os.path.join(cls.work, name)
        shutil.copytree(cls.bundle, out)
        path = os.path.join(out, "refund.lua")
        with open(path) as f:
            text = f.read()
        assert "local AUTO_LIMIT = 100\n" in text
        with open(path, "w") as f:
            f.write(text.replace("local AUTO_LIMIT = 100\n",
                                 "local AUTO_LIMIT = 600\n"))
        if tests is not None:
            with open(os.path.join(out, "refund_test.lua"), "w") as f:
                f.write(tests)
        return out

    # ---- running it ----

    def replay(self, *args, db=None, bundle=None, settings=True, fmt=None,
               want=None):
        cmd = [BIN, "policy", "replay", "--db", db or self.db,
               "--bundle", bundle or self.bundle]
        if settings:
            cmd += ["--settings", self.settings]
        if fmt:
            cmd += ["--format", fmt]
        p = subprocess.run(cmd + list(args), capture_output=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        out = p.stdout.decode()
        err = p.stderr.decode()
        for bad in ("Sanitizer", "runtime error", "Segmentation"):
            self.assertNotIn(bad, err)
        if want is not None:
            self.assertEqual(p.returncode, want, out + err)
        return p.returncode, out, err

    def summary(self, *args, **kw):
        rc, out, _ = self.replay(*args, fmt="json", **kw)
        return rc, json.loads(out)

    # ---- (a) the same bundle ----

    def test_same_bundle_changes_nothing(self):
        rc, doc = self.summary(want=0)
        s = doc["summary"]
        self.assertEqual(s["verdict_changed"] + s["reasons_changed"], 0, doc)
        self.assertEqual(doc["changes"], [])
        self.assertEqual(s["approval_denied"], 1, s)
        # The 300 refund, db.write and the MCP call expired.
        self.assertEqual(s["approval_expired"], 3, s)
        self.assertEqual(s["unreadable"], 0, s)
        # Every decision that policies made: 5 refunds + the quorum
        # decision + 7 others + 3 with the server's codes and a refund + 8
        # in the burst.
        self.assertEqual(s["replayed"], REPLAYED, s)
        self.assertEqual(s["unchanged"], s["replayed"])
        self.assertTrue(doc["revision"].startswith("sha256:"))
        rc, out, _ = self.replay(want=0)
        self.assertRegex(out, r"verdict changed +0\n")
        self.assertRegex(out, r"approval denied +1\n")
        # The server's config file gives the same settings.
        rc, doc = self.summary("--config", self.conf, settings=False, want=0)
        self.assertEqual(doc["summary"]["unchanged"], REPLAYED)
        rc, out, _ = self.replay(fmt="csv", want=0)
        self.assertEqual(out.splitlines(),
                         ["seq,intent_id,action,resource,decided_at,change,"
                          "from,from_reasons,to,to_reasons"])

    def test_quota_settings_matter(self):
        """Without --settings the quota is 600: the three intents the quota
        blocked would pass, and nothing else changes."""
        rc, doc = self.summary(settings=False, want=1)
        got = sorted(c["intent_id"] for c in doc["changes"])
        self.assertEqual(got, sorted(self.over_quota))
        for c in doc["changes"]:
            self.assertEqual((c["from"], c["to"]["decision"],
                              c["to"]["reasons"], c["change"]),
                             ({"decision": "BLOCK",
                               "reasons": ["QUOTA_EXCEEDED"]}, "ALLOW", [],
                              "verdict"))
        self.assertEqual(doc["by_reason"], [{"reason": "QUOTA_EXCEEDED",
                                             "change": "lost", "count": 3}])

    # ---- (b) one rule changed ----

    def test_one_rule_changed(self):
        want = sorted([self.r500["intent_id"], self.r300["intent_id"],
                       self.rformula["intent_id"]])
        rc, doc = self.summary(bundle=self.changed, want=1)
        s = doc["summary"]
        self.assertEqual((s["verdict_changed"], s["reasons_changed"]), (3, 0),
                         s)
        self.assertEqual(sorted(c["intent_id"] for c in doc["changes"]), want)
        for c in doc["changes"]:
            self.assertEqual(c["action"], "payments.refund")
            self.assertEqual(c["from"], {"decision": "ESCALATE",
                                         "reasons": ["REFUND_NEEDS_APPROVAL"]})
            self.assertEqual((c["to"]["decision"], c["to"]["reasons"]),
                             ("ALLOW", []))
            self.assertIn({"policy": "refund.lua", "verdict": "ALLOW",
                           "reasons": []}, c["to"]["trace"])
        self.assertEqual(doc["by_action"], [{"action": "payments.refund",
                                             "from": "ESCALATE",
                                             "to": "ALLOW", "count": 3}])
        self.assertEqual(doc["by_reason"], [{"reason": "REFUND_NEEDS_APPROVAL",
                                             "change": "lost", "count": 3}])
        # text
        rc, out, _ = self.replay(bundle=self.changed, want=1)
        self.assertRegex(out, r"verdict changed +3\n")
        self.assertRegex(out, r"\n +3  payments\.refund  ESCALATE -> ALLOW\n")
        self.assertRegex(out, r"\n +3  -REFUND_NEEDS_APPROVAL\n")
        for iid in want:
            self.assertRegex(out, r"\n  \d+ %s payments\.refund \S+: "
                             r"ESCALATE \[REFUND_NEEDS_APPROVAL\] -> ALLOW "
                             r"\[\]\n" % iid)
        # csv
        rc, out, _ = self.replay(bundle=self.changed, fmt="csv", want=1)
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual(sorted(r["intent_id"] for r in rows), want)
        # The formula is text in a spreadsheet.
        self.assertEqual(sorted(r["resource"] for r in rows),
                         ["'=1+2", "orders/2", "orders/4"])
        for r in rows:
            self.assertEqual((r["action"], r["change"], r["from"],
                              r["from_reasons"], r["to"], r["to_reasons"]),
                             ("payments.refund", "verdict", "ESCALATE",
                              "REFUND_NEEDS_APPROVAL", "ALLOW", ""))

    def test_a_bundle_whose_tests_fail_is_refused(self):
        bad = self.changed_bundle(tests=None, name="untested")
        rc, out, err = self.replay(bundle=bad, want=2)
        self.assertEqual(out, "")
        self.assertIn("tests fail", err)
        self.assertIn("FAIL", err)

    # ---- (c) --since, --until, --action ----

    def test_action_filters_what_is_reported(self):
        rc, doc = self.summary("--action", "payments.refund",
                               bundle=self.changed, want=1)
        self.assertEqual(doc["summary"]["verdict_changed"], 3)
        self.assertEqual(doc["summary"]["replayed"], 7, doc["summary"])
        rc, doc = self.summary("--action", "shell.", bundle=self.changed,
                               want=0)
        self.assertEqual(doc["summary"]["replayed"], 9, doc["summary"])
        self.assertEqual(doc["summary"]["approval_denied"], 0)

    def test_since_warms_the_quota_with_the_day_before(self):
        since = rfc3339(self.t_burst2)
        # Without the 3 intents before --since the last 3 would pass: the
        # warm-up counts them, so nothing changes.
        rc, doc = self.summary("--since", since, want=0)
        self.assertEqual(doc["summary"]["replayed"], 5, doc["summary"])
        rc, doc = self.summary("--since", str(self.t_burst2),
                               bundle=self.changed, want=0)
        self.assertEqual(doc["summary"]["replayed"], 5)
        # Up to the burst's second part: the two refunds change, nothing
        # of the burst's end is seen.
        rc, doc = self.summary("--until", since, bundle=self.changed, want=1)
        self.assertEqual(doc["summary"]["replayed"], REPLAYED - 5)
        rc, doc = self.summary("--since", rfc3339(self.t_start),
                               "--until", rfc3339(self.t_start + 61),
                               "--action", "payments.refund",
                               bundle=self.changed, want=1)
        # The refunds (the votes came 61 s later).
        self.assertEqual(doc["summary"]["replayed"], 5)

    def test_bad_usage(self):
        for args, what in (
                (["--since", "yesterday"], "not a time"),
                (["--since", "2026-11-24T00:00:00+01:00"], "not a time"),
                (["--format", "xml"], "--format"),
                (["--since", "100", "--until", "50"], "before --until"),
                (["--bogus", "1"], "unknown option"),
                (["--action"], "needs a value"),
                (["--config", self.conf], "use one")):
            rc, out, err = self.replay(*args, want=2)
            self.assertIn(what, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        settings = self.write("list.json", "[1]")
        p = subprocess.run([BIN, "policy", "replay", "--db", self.db,
                            "--bundle", self.bundle, "--settings", settings],
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"must be a JSON object", p.stderr)
        rc, out, err = self.replay(db=os.path.join(self.work, "nope.db"),
                                   want=3)
        self.assertIn("cannot open", err)

    # ---- (d) read-only ----

    def table_digest(self):
        tables = ("intents", "decisions", "approvals", "votes",
                  "resolutions", "audit_events", "counter_counts")
        if self.srv.on_postgres():
            return [pg.psql(self.db, "SELECT md5(coalesce(string_agg(t::text,"
                            " ',' ORDER BY t::text), '')) FROM %s t" % t)
                    for t in tables]
        return None

    def test_read_only(self):
        if self.srv.on_postgres():
            before = self.table_digest()
            self.replay(bundle=self.changed, want=1)
            self.assertEqual(self.table_digest(), before)
            return
        with open(self.db, "rb") as f:
            before = hashlib.sha256(f.read()).hexdigest()
        beside = sorted(os.listdir(os.path.dirname(self.db)))
        self.replay(bundle=self.changed, want=1)
        with open(self.db, "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), before)
        self.assertEqual(sorted(os.listdir(os.path.dirname(self.db))), beside)
        # A copy in a directory this user cannot write.
        ro = os.path.join(self.work, "ro")
        os.mkdir(ro)
        shutil.copy(self.db, os.path.join(ro, "copy.db"))
        os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
        try:
            rc, doc = self.summary(db=os.path.join(ro, "copy.db"), want=0)
            self.assertEqual(doc["summary"]["replayed"], REPLAYED)
            self.assertEqual(os.listdir(ro), ["copy.db"])
        finally:
            os.chmod(ro, stat.S_IRWXU)

    # ---- (e) hostile rows ----

    def hostile_copy(self):
        """A copy of the database with hostile rows added (the stores
        refuse UPDATE and DELETE, not INSERT). Each is an intent (id,
        created_at, binding) with one decision at created_at, or, for
        garbage reasons, a decision of an existing intent. Returns its
        location, a cleanup function and the list of what each row's
        report must say."""
        on_pg = self.srv.on_postgres()
        t = self.t_end + 10

        def binding(iid, resource="local", created=t):
            return json.dumps({"action": "shell.exec", "intent_id": iid,
                               "resource": resource, "principal": "p",
                               "tenant": "t", "params": {"argv": ["pwd"]},
                               "context": {},
                               "created_at": rfc3339(created),
                               "expires_at": rfc3339(created + 60),
                               "version": "intentgate.intent/1"})

        huge = ("'{\"pad\": \"' || repeat('a', 2097152) || '\"}'" if on_pg
                else "'%s'" % json.dumps({"pad": "a" * (2 << 20)}))
        rows = [  # (intent_id, binding SQL, created_at, what is said)
            ("bad-1", "'{not json'", t, "the intent: the binding is not JSON"),
            ("bad-2", huge, t, "the intent: the binding is not JSON"),
            ("bad-3", "'%s'" % binding("bad-3", created=253402300799),
             253402300799, "the intent's created_at is not a time"),
            ("bad-4", "'%s'" % binding("bad-4"), -1,
             "the intent's created_at is not a time"),
            ("bad-5", "'%s'" % binding("bad-5", "local\\u0000x"), t,
             "the binding is not its intent row's: resource"),
            ("bad-6", "'%s'" % binding("bad-6", created=t - 5), t,
             "the binding is not its intent row's: created_at"),
        ]
        inserts = []
        for iid, text, created, _ in rows:
            inserts.append(
                "INSERT INTO intents (intent_id, principal, tenant, action, "
                "resource, intent_hash, binding, created_at, expires_at) "
                "VALUES ('%s', 'p', 't', 'shell.exec', 'local', 'h', %s, "
                "%d, %d)" % (iid, text, created, created + 60))
            inserts.append(
                "INSERT INTO decisions (intent_seq, decision_id, decision, "
                "reasons, message, policy_revision, decided_at) VALUES "
                "((SELECT seq FROM intents WHERE intent_id = '%s'), 'd', "
                "'ALLOW', '[]', 'm', 'r', %d)" % (iid, created))
        inserts.append(
            "INSERT INTO decisions (intent_seq, decision_id, decision, "
            "reasons, message, policy_revision, decided_at) VALUES "
            "((SELECT min(seq) FROM intents), 'd', 'BLOCK', "
            "'{\"garbage\": [1, 2]}', 'm', 'r', %d)" % t)
        # A vote added to the approved 500 refund (one the PDP would have
        # refused: its request was decided): its quorum decision, early in
        # the log, is listed first.
        inserts.append(
            "INSERT INTO votes (intent_seq, approver, vote, comment, channel,"
            " groups, intent_hash, voted_at) SELECT seq, 'mallory', "
            "'APPROVE', '', 'api', '[\"finance\"]', intent_hash, created_at"
            " FROM intents WHERE intent_id = '%s'" % self.r500["intent_id"])
        says = (["the intent: 2 votes for an approval of quorum 1"] +
                [r[3] for r in rows] + ["the reasons are not a list of "
                                        "reason codes"])
        if on_pg:
            name = "%s_h%s" % (pg.dbname(self.db)[:40], secrets.token_hex(3))
            base = pg.base_url()
            pg.psql(base, 'CREATE DATABASE "%s" TEMPLATE "%s"'
                    % (name, pg.dbname(self.db)))
            url = pg.with_dbname(base, name)
            for sql in inserts:
                pg.psql(url, sql)
            return url, lambda: pg.psql(base, 'DROP DATABASE "%s"' % name), \
                says
        path = os.path.join(self.work, "hostile.db")
        shutil.copy(self.db, path)
        db = sqlite3.connect(path)
        for sql in inserts:
            db.execute(sql)
        db.commit()
        db.close()
        return path, lambda: os.remove(path), says

    def test_hostile_rows(self):
        where, cleanup, says = self.hostile_copy()
        try:
            rc, out, err = self.replay(db=where, want=3)
            self.assertRegex(out, r"unreadable rows +%d\n" % len(says))
            listed = re.findall(r"\n  \d+: (.*)", out.split(
                "unreadable rows (seq")[1])
            self.assertEqual(len(listed), len(says), out)
            for got, want in zip(listed, says):
                self.assertTrue(got.startswith(want), (got, want))
            for ch in out:
                self.assertTrue(ch == "\n" or ord(ch) >= 0x20, repr(ch))
            rc, doc = self.summary(db=where, want=3)
            self.assertEqual(doc["summary"]["unreadable"], len(says))
            self.assertEqual(len(doc["unreadable"]), len(says))
            self.assertEqual(doc["summary"]["replayed"], REPLAYED - 1)
            self.assertEqual(doc["changes"], [])
            # Unreadable rows are listed whatever the filters.
            rc, doc = self.summary("--action", "payments.", db=where, want=3)
            self.assertEqual(doc["summary"]["unreadable"], len(says))
            rc, out, err = self.replay(db=where, fmt="csv", want=3)
        finally:
            cleanup()

    # ---- the server's own codes ----

    def test_server_codes_from_a_policy_are_blocks(self):
        """A policy's own BLOCK NO_EXECUTOR stays a BLOCK; the server's
        NO_EXECUTOR is the policies' ALLOW: a bundle where the policy
        file no longer answers reports both the right way."""
        bundle = os.path.join(self.work, "no_codes")
        shutil.copytree(self.bundle, bundle)
        os.remove(os.path.join(bundle, "zz_codes.lua"))
        rc, doc = self.summary(bundle=bundle, want=1)
        got = {c["action"]: (c["from"]["decision"], c["from"]["reasons"],
                             c["to"]["decision"], c["to"]["reasons"])
               for c in doc["changes"]}
        self.assertEqual(got, {
            "payments.own_no_executor": ("BLOCK", ["NO_EXECUTOR"], "BLOCK",
                                         ["NO_POLICY_MATCHED"]),
            "payments.own_not_sufficient": ("BLOCK",
                                            ["APPROVAL_NOT_SUFFICIENT"],
                                            "BLOCK", ["NO_POLICY_MATCHED"]),
            "noexec.thing": ("ALLOW", [], "BLOCK", ["NO_POLICY_MATCHED"]),
        })
        self.assertEqual(doc["summary"]["reasons_changed"], 2)
        self.assertEqual(doc["summary"]["verdict_changed"], 1)


if __name__ == "__main__":
    run_tests()
