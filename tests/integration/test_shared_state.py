"""test_shared_state.py - what approvers do is shared by every PDP replica
on one PostgreSQL database (issue 17): sessions, failed sign-ins and votes
live in the store, not in one process's memory.

Two replicas (`intentgate serve --config F --database URL`, the same dev
config with two more approvers and `quorum = 2`, listen 127.0.0.1:0) on
one fresh database of the cluster at IG_TEST_PG_URL (scripts/test.sh
starts it; without it this suite fails, it never skips).

    Sessions     a session made on A is good on B; logged out on B, it is
                 gone on A
    Failures     failed sign-ins on A and on B add up to one backoff (5 in
                 all: 429 on either), 4 do not
    Votes        two approvers voting at the same moment on A and on B on
                 a quorum-2 request, ten times: each request is resolved
                 once (one answer APPROVED, the other PENDING), both votes
                 are recorded, one ALLOW decision follows

Nothing waits on a timer: the votes start together at a barrier, and every
check reads recorded state.

    INTENTGATE_BIN=build/cli/intentgate \\
      IG_TEST_PG_URL=$(scripts/pg-cluster.sh start /tmp/igpg) \\
      python3 tests/integration/test_shared_state.py
"""
import os
import re
import shutil
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg  # noqa: E402
from harness import Server, run_tests  # noqa: E402

# Both extra approvers have the dev approver's password (its hash is
# copied); "failer" is only ever failed, so no other case is held back.
EXTRA = """
[approver second]
name = Second Approver
groups = finance, dba
password_hash = {hash}

[approver failer]
name = Failing Approver
groups = finance
password_hash = {hash}

[approvals]
quorum = 2
login_max_failures = 5
"""


class Pair:
    """Two replicas A and B of one config on one database. The config,
    keys and policies come from a dev server started once on the database
    (which also makes the schema) and stopped."""

    def __init__(self, database):
        boot = Server.dev(database=database)
        self.tmp = boot.tmp
        self.env = {k: v for k, v in boot.env.items()
                    if k != "INTENTGATE_URL"}
        rc = boot.stop()
        if rc != 0:
            log = boot.log()
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise AssertionError("the first server exit %s:\n%s"
                                 % (rc, log[-4000:]))
        self.conf = os.path.join(boot.data, "intentgate.conf")
        with open(self.conf) as f:
            text = f.read()
        h = re.search(r"^password_hash = (.*)$", text, re.M).group(1)
        with open(self.conf, "a") as f:
            f.write(EXTRA.replace("{hash}", h))
        self.pw = self.env["INTENTGATE_APPROVER_PASSWORD"]
        self.servers = []
        try:
            for _ in range(2):
                tmp = tempfile.mkdtemp(prefix="replica-", dir=self.tmp)
                self.servers.append(Server.custom(self.conf, tmp, self.env,
                                                  database=database))
        except Exception:
            self.finish(check=False)
            raise

    def finish(self, check=True):
        """Stop both; raise unless each exited 0 with no sanitizer
        report."""
        problems = []
        for s in self.servers:
            rc = s.stop()
            log = s.log()
            if rc != 0 or "Sanitizer" in log or "runtime error" in log:
                problems.append("replica on port %d exit %s:\n%s"
                                % (s.port, rc, log[-4000:]))
        shutil.rmtree(self.tmp, ignore_errors=True)
        if check and problems:
            raise AssertionError("\n".join(problems))

    def login(self, srv, who, password=None):
        return srv.call("POST", "/v1/approver/login", None,
                        {"approver": who,
                         "password": password if password is not None
                         else self.pw})


class SharedState(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.database = pg.create_database("igshared")
        try:
            cls.pair = Pair(cls.database)
        except Exception:
            pg.drop_database(cls.database)
            raise
        cls.a, cls.b = cls.pair.servers

    @classmethod
    def tearDownClass(cls):
        try:
            cls.pair.finish()
        finally:
            pg.drop_database(cls.database)

    def token(self, srv, who):
        st, body, _ = self.pair.login(srv, who)
        self.assertEqual(st, 200, body)
        return body["token"]

    def test_session_made_on_a_is_good_on_b(self):
        tok = self.token(self.a, "dev-approver")
        for srv in (self.a, self.b):
            st, body, _ = srv.call("GET", "/v1/approvals", tok)
            self.assertEqual(st, 200, body)
        # Logged out on B: gone on A too.
        st, body, _ = self.b.call("POST", "/v1/approver/logout", tok)
        self.assertEqual(st, 200, body)
        for srv in (self.a, self.b):
            st, body, _ = srv.call("GET", "/v1/approvals", tok)
            self.assertEqual((st, body["error"]["code"]),
                             (401, "UNAUTHENTICATED"), body)
        # What the store keeps is the hash of the id, never the id.
        rows = pg.rows(self.database,
                       "SELECT id_hash, approver FROM approver_sessions")
        self.assertTrue(rows)
        for r in rows:
            self.assertRegex(r["id_hash"], r"^[0-9a-f]{64}$")
            self.assertNotIn("igs_", r["id_hash"])

    def fail_login(self, srv, who, n):
        for _ in range(n):
            st, body, _ = self.pair.login(srv, who, "wrong-password")
            self.assertEqual((st, body["error"]["code"]),
                             (401, "LOGIN_FAILED"), body)

    def test_failures_on_a_and_b_add_up(self):
        # Four failures spread over both: the right password still works
        # (and clears them) ...
        self.fail_login(self.a, "failer", 2)
        self.fail_login(self.b, "failer", 2)
        st, body, _ = self.pair.login(self.b, "failer")
        self.assertEqual(st, 200, body)
        # ... five, three on A and two on B, back off on both.
        self.fail_login(self.a, "failer", 3)
        self.fail_login(self.b, "failer", 2)
        for srv in (self.a, self.b):
            st, body, h = self.pair.login(srv, "failer")
            self.assertEqual((st, body["error"]["code"]),
                             (429, "LOGIN_RATE_LIMITED"), body)
            self.assertGreaterEqual(int(h["Retry-After"]), 1)

    def test_two_votes_at_once_on_two_replicas(self):
        tok_a = self.token(self.a, "dev-approver")
        tok_b = self.token(self.b, "second")
        admin = self.pair.env["INTENTGATE_ADMIN_TOKEN"]
        agent = self.pair.env["INTENTGATE_AGENT_TOKEN"]
        for round_ in range(10):
            st, body, _ = self.a.submit("payments.refund",
                                        "orders/shared-%d" % round_,
                                        {"amount": 500}, token=agent)
            self.assertEqual((st, body.get("decision")), (201, "ESCALATE"),
                             body)
            path = "/v1/approvals/%s/votes" % body["approval"]["id"]
            vote = {"vote": "approve", "intent_hash": body["intent_hash"]}
            start = threading.Barrier(2)
            answers = [None, None]

            def cast(i, srv, tok):
                start.wait(30)
                answers[i] = srv.call("POST", path, tok, vote)

            threads = [threading.Thread(target=cast, args=(0, self.a, tok_a)),
                       threading.Thread(target=cast, args=(1, self.b, tok_b))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(90)
                self.assertFalse(t.is_alive(), "a vote hangs")
            for st, res, _ in answers:
                self.assertEqual(st, 200, res)
            statuses = sorted(res["status"] for _, res, _ in answers)
            self.assertEqual(statuses, ["APPROVED", "PENDING"], answers)
            st, rec, _ = self.b.call("GET",
                                     "/v1/intents/" + body["intent_id"],
                                     admin)
            self.assertEqual((st, rec.get("state")), (200, "ALLOWED"), rec)
            ap = rec["approval"]
            self.assertEqual(sorted(v["approver"] for v in ap["votes"]),
                             ["dev-approver", "second"], ap)
            self.assertEqual(ap["resolution"]["result"], "APPROVED", ap)
            self.assertEqual([d["decision"] for d in rec["decisions"]],
                             ["ESCALATE", "ALLOW"], rec)


if __name__ == "__main__":
    run_tests()
