"""test_approvals.py - escalations decided by humans, through the approver
API, against the real `intentgate serve --dev` (two approvers: the dev one
and a second one added to the config, both in finance and dba).

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_approvals.py
"""
import hashlib
import os
import re
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, run_tests, wait_until  # noqa: E402


def start(ttl=None, extra="", clock=False):
    """A dev server with a second approver (same password as the first),
    and extra config text appended ("{hash}" in it: that password's
    hash); on the test clock when clock is true."""
    if ttl is not None:
        os.environ["INTENTGATE_DEV_APPROVAL_TTL"] = str(ttl)
    try:
        srv = Server.dev()
    finally:
        os.environ.pop("INTENTGATE_DEV_APPROVAL_TTL", None)
    srv.stop()
    conf = os.path.join(srv.data, "intentgate.conf")
    with open(conf) as f:
        text = f.read()
    h = re.search(r"^password_hash = (.*)$", text, re.M).group(1)
    with open(conf, "a") as f:
        f.write("\n[approver second]\nname = Second Approver\n"
                "groups = finance, dba\npassword_hash = %s\n" % h)
        f.write(extra.replace("{hash}", h))
    tmp = srv.tmp
    srv2 = Server.dev(tmp=tmp, clock=clock)
    return srv2


def finish(srv):
    rc = srv.stop()
    log = srv.log()
    srv.cleanup()
    if rc != 0 or "Sanitizer" in log or "runtime error" in log:
        raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))


class Approvals(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = start()
        cls.env = cls.srv.env
        cls.pw = cls.env["INTENTGATE_APPROVER_PASSWORD"]
        cls.dev = cls.login("dev-approver")
        cls.second = cls.login("second")

    @classmethod
    def tearDownClass(cls):
        finish(cls.srv)

    @classmethod
    def login(cls, who, pw=None):
        st, body, _ = cls.srv.call("POST", "/v1/approver/login", None,
                                   {"approver": who,
                                    "password": pw or cls.pw})
        assert st == 200, body
        return body["token"]

    def escalate(self, action, resource, params, **extra):
        st, body, _ = self.srv.submit(action, resource, params, **extra)
        self.assertEqual(st, 201, body)
        self.assertEqual(body["decision"], "ESCALATE", body)
        return body

    def vote(self, token, body, vote="approve", intent_hash=None, **extra):
        v = {"vote": vote, "intent_hash": intent_hash or body["intent_hash"]}
        v.update(extra)
        return self.srv.call("POST", "/v1/approvals/%s/votes"
                             % body["approval"]["id"], token, v)

    def refused(self, res, status, code):
        st, body, _ = res
        self.assertEqual(st, status, body)
        self.assertEqual(body["error"]["code"], code, body)

    def state(self, iid, wait=0):
        st, rec, _ = self.srv.call(
            "GET", "/v1/intents/%s?wait=%d" % (iid, wait),
            self.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual(st, 200, rec)
        return rec

    def test_approve_reevaluates_and_the_long_poll_gets_the_grant(self):
        body = self.escalate("payments.refund", "orders/a1",
                             {"amount": 500, "currency": "EUR"})
        iid = body["intent_id"]
        out = {}
        t = threading.Thread(target=lambda: out.update(rec=self.state(iid,
                                                                      20)))
        t.start()
        self.srv.wait_parked(1)  # the agent waits: the vote must wake it
        st, res, _ = self.vote(self.dev, body, comment="ok for ticket 9")
        self.assertEqual(st, 200, res)
        self.assertEqual(res["status"], "APPROVED")
        self.assertEqual(res["decision"], "ALLOW")
        t.join(10)
        rec = out["rec"]
        self.assertEqual(rec["state"], "ALLOWED")
        self.assertTrue(rec["grant"].startswith("v4.public."))
        self.assertIn("grant_expires_at", rec)
        self.assertEqual([d["decision"] for d in rec["decisions"]],
                         ["ESCALATE", "ALLOW"])
        # The grant redeems for this intent, exactly once.
        self.assertEqual(self.srv.redeem(rec["grant"], iid)[0], 200)
        self.refused(self.srv.redeem(rec["grant"], iid), 409,
                     "GRANT_ALREADY_REDEEMED")
        # Votes after the resolution are refused.
        self.refused(self.vote(self.second, body), 409, "APPROVAL_RESOLVED")

    def test_view_shows_what_is_approved(self):
        body = self.escalate("payments.refund", "orders/a2",
                             {"amount": 250, "note": "<b>x</b>"})
        st, v, _ = self.srv.call("GET", "/v1/approvals/" +
                                 body["approval"]["id"], self.dev)
        self.assertEqual(st, 200, v)
        self.assertEqual(v["intent_hash"], body["intent_hash"])
        self.assertEqual(v["intent"]["params"]["amount"], 250)
        self.assertEqual(v["status"], "PENDING")
        self.assertEqual(v["requirements"], {"groups": ["finance"],
                                             "quorum": 1})
        self.assertEqual(v["decision"]["reasons"], ["REFUND_NEEDS_APPROVAL"])
        self.assertTrue(v["can_vote"])
        st, lst, _ = self.srv.call("GET", "/v1/approvals", self.dev)
        ids = [a["approval_id"] for a in lst["approvals"]]
        self.assertIn(body["approval"]["id"], ids)

    def test_deny_blocks(self):
        body = self.escalate("payments.refund", "orders/a3", {"amount": 300})
        st, res, _ = self.vote(self.second, body, "deny", comment="no")
        self.assertEqual((st, res["status"], res["decision"]),
                         (200, "DENIED", "BLOCK"))
        rec = self.state(body["intent_id"])
        self.assertEqual(rec["state"], "BLOCKED")
        self.assertIn("APPROVAL_DENIED", rec["decisions"][-1]["reasons"])
        self.assertNotIn("grant", rec)

    def test_quorum_two_and_one_vote_each(self):
        body = self.escalate("db.write", "prod/orders", {"sql": "x"})
        st, res, _ = self.vote(self.dev, body)
        self.assertEqual((st, res["status"], res["approvals"], res["quorum"]),
                         (200, "PENDING", 1, 2))
        self.refused(self.vote(self.dev, body), 409, "ALREADY_VOTED")
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")
        st, res, _ = self.vote(self.second, body)
        self.assertEqual((res["status"], res["decision"]),
                         ("APPROVED", "ALLOW"))
        self.assertEqual(self.state(body["intent_id"])["state"], "ALLOWED")

    def test_wrong_group(self):
        # A tag push escalates to "release"; neither approver is in it:
        # for them the request does not exist (404, as for an unknown id),
        # and the refusal is audited as NOT_ELIGIBLE.
        body = self.escalate("git.push", "app",
                             {"refs": ["refs/tags/v1.2.3"]})
        self.refused(self.vote(self.dev, body), 404, "APPROVAL_NOT_FOUND")
        codes = [e.get("code") for e in self.srv.audit_events()
                 if e["type"] == "approval.vote_refused" and
                 e.get("approval_id") == body["approval"]["id"]]
        self.assertEqual(codes, ["NOT_ELIGIBLE"])

    def test_self_approval(self):
        body = self.escalate("payments.refund", "orders/a4", {"amount": 400},
                             context={"requested_by": "dev-approver"})
        self.refused(self.vote(self.dev, body), 403, "SELF_APPROVAL")
        st, v, _ = self.srv.call("GET", "/v1/approvals/" +
                                 body["approval"]["id"], self.dev)
        self.assertEqual((v["can_vote"], v["cannot_vote"]),
                         (False, "SELF_APPROVAL"))
        # Someone else may.
        self.assertEqual(self.vote(self.second, body)[0], 200)

    def test_hash_must_match(self):
        body = self.escalate("payments.refund", "orders/a5", {"amount": 401})
        self.refused(self.vote(self.dev, body,
                               intent_hash="sha256:" + "0" * 64),
                     409, "INTENT_HASH_MISMATCH")
        self.refused(self.vote(self.dev, body, intent_hash="nope"), 400,
                     "INVALID_VOTE")
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")

    def test_agent_and_other_tokens_cannot_vote(self):
        body = self.escalate("payments.refund", "orders/a6", {"amount": 402})
        for tok in ("INTENTGATE_AGENT_TOKEN", "INTENTGATE_ADMIN_TOKEN",
                    "INTENTGATE_EXECUTOR_TOKEN"):
            self.refused(self.vote(self.env[tok], body), 401,
                         "UNAUTHENTICATED")
        self.refused(self.srv.call("GET", "/v1/approvals", None), 401,
                     "UNAUTHENTICATED")
        self.refused(self.srv.call("POST", "/v1/approvals/0/votes",
                                   self.dev, {}), 404, "APPROVAL_NOT_FOUND")

    def test_unknown_approval_and_bad_bodies(self):
        self.refused(self.srv.call("POST", "/v1/approvals/%s/votes"
                                   % ("0" * 36), self.dev,
                                   {"vote": "approve",
                                    "intent_hash": "sha256:" + "0" * 64}),
                     404, "APPROVAL_NOT_FOUND")
        body = self.escalate("payments.refund", "orders/a7", {"amount": 403})
        self.refused(self.vote(self.dev, body, "maybe"), 400, "INVALID_VOTE")
        self.refused(self.vote(self.dev, body, extra=1), 400,
                     "UNKNOWN_FIELD")
        self.refused(self.srv.call("GET", "/v1/approvals/" + "0" * 36,
                                   self.dev), 404, "APPROVAL_NOT_FOUND")

    def test_zy_login_failures_are_limited_and_audited(self):
        for _ in range(5):
            self.refused(self.srv.call("POST", "/v1/approver/login", None,
                                       {"approver": "nobody",
                                        "password": "wrong-password"}),
                         401, "LOGIN_FAILED")
        st, body, h = self.srv.call("POST", "/v1/approver/login", None,
                                    {"approver": "nobody",
                                     "password": "wrong-password"})
        self.refused((st, body, h), 429, "LOGIN_RATE_LIMITED")
        self.assertGreaterEqual(int(h["Retry-After"]), 1)
        # Counted for the aggregated login.refused events, not one leaf
        # each (test_refusals.py reads those).
        st, text, _ = self.srv.call("GET", "/metrics")
        m = re.search(rb'intentgate_refusals_total\{kind="login"\} (\d+)',
                      text)
        self.assertGreaterEqual(int(m.group(1)), 6, text)

    def test_logout_ends_the_session(self):
        tok = self.login("second")
        self.assertEqual(self.srv.call("GET", "/v1/approvals", tok)[0], 200)
        self.assertEqual(self.srv.call("POST", "/v1/approver/logout", tok)[0],
                         200)
        self.refused(self.srv.call("GET", "/v1/approvals", tok), 401,
                     "UNAUTHENTICATED")

    def test_zz_everything_is_audited(self):
        types = [e["type"] for e in self.srv.audit_events()]
        for t in ("approval.voted", "approval.resolved",
                  "approval.vote_refused", "intent.decided"):
            self.assertIn(t, types)


AGENT3_TOKEN = "igt_third-agent-token-for-tests-0123456789abcdef"
ROSTER = """
[approver outsider]
name = Outside Person
groups = marketing
password_hash = {hash}

[approver operator]
name = Agent Operator
groups = finance
password_hash = {hash}
agents = dev-agent

[agent third]
tenant = dev
token_sha256 = %s

[approver third]
name = Third Person
groups = finance
password_hash = {hash}
""" % hashlib.sha256(AGENT3_TOKEN.encode()).hexdigest()


class WhoMayReadAndDecide(unittest.TestCase):
    """Reads check the approval's groups (404 otherwise); self-approval is
    decided on what the PDP established (the authenticated agent and the
    config's agents = mapping), and the agent's claims can only add to
    it."""

    @classmethod
    def setUpClass(cls):
        cls.srv = start(extra=ROSTER)
        cls.env = cls.srv.env
        pw = cls.env["INTENTGATE_APPROVER_PASSWORD"]
        cls.tok = {}
        for who in ("dev-approver", "second", "outsider", "operator",
                    "third"):
            st, body, _ = cls.srv.call("POST", "/v1/approver/login", None,
                                       {"approver": who, "password": pw})
            assert st == 200, body
            cls.tok[who] = body["token"]

    @classmethod
    def tearDownClass(cls):
        finish(cls.srv)

    def escalate(self, resource, token=None, **extra):
        st, body, _ = self.srv.submit("payments.refund", resource,
                                      {"amount": 500}, token=token, **extra)
        self.assertEqual(st, 201, body)
        self.assertEqual(body["decision"], "ESCALATE", body)
        return body

    def get(self, who, body):
        return self.srv.call("GET", "/v1/approvals/" + body["approval"]["id"],
                             self.tok[who])

    def vote(self, who, body, vote="approve"):
        return self.srv.call("POST", "/v1/approvals/%s/votes"
                             % body["approval"]["id"], self.tok[who],
                             {"vote": vote,
                              "intent_hash": body["intent_hash"]})

    def assertCode(self, res, status, code):
        st, body, _ = res
        self.assertEqual(st, status, body)
        self.assertEqual(body["error"]["code"], code, body)

    def test_outsider_reads_nothing(self):
        body = self.escalate("orders/r1")
        self.assertEqual(self.get("second", body)[0], 200)
        # Not in finance: the same 404 as an id that does not exist.
        self.assertCode(self.get("outsider", body), 404, "APPROVAL_NOT_FOUND")
        self.assertCode(self.vote("outsider", body), 404,
                        "APPROVAL_NOT_FOUND")
        st, lst, _ = self.srv.call("GET", "/v1/approvals",
                                   self.tok["outsider"])
        self.assertEqual((st, lst["approvals"]), (200, []))
        # Decided: still nothing for the outsider (not 409 RESOLVED).
        self.assertEqual(self.vote("second", body)[0], 200)
        self.assertCode(self.get("outsider", body), 404, "APPROVAL_NOT_FOUND")
        self.assertCode(self.vote("outsider", body), 404,
                        "APPROVAL_NOT_FOUND")
        self.assertEqual(self.get("second", body)[0], 200)

    def test_the_config_mapping_refuses_the_operator(self):
        # No claim at all: the operator runs dev-agent (agents = ...).
        body = self.escalate("orders/r2")
        st, v, _ = self.get("operator", body)
        self.assertEqual(st, 200, v)
        self.assertEqual((v["can_vote"], v["cannot_vote"]),
                         (False, "SELF_APPROVAL"))
        self.assertEqual(v["operators"], ["operator"])
        self.assertCode(self.vote("operator", body), 403, "SELF_APPROVAL")
        # A claim naming someone else changes nothing.
        body = self.escalate("orders/r3", context={"requested_by": "second"})
        self.assertCode(self.vote("operator", body), 403, "SELF_APPROVAL")
        self.assertEqual(self.vote("dev-approver", body)[0], 200)

    def test_the_authenticated_agent_is_always_checked(self):
        # Agent "third" claims to act for someone else; approver "third"
        # shares its id and may not approve it.
        body = self.escalate("orders/r4", token=AGENT3_TOKEN,
                             context={"requested_by": "second"})
        self.assertCode(self.vote("third", body), 403, "SELF_APPROVAL")
        # The claim adds a refusal: second is named, so second may not.
        self.assertCode(self.vote("second", body), 403, "SELF_APPROVAL")
        self.assertEqual(self.vote("dev-approver", body)[0], 200)

    def test_a_claim_naming_the_approver_refuses(self):
        for claim in ("DEV-APPROVER", "Dev Approver",
                      ["someone", "dev-approver"]):
            body = self.escalate("orders/r5-%s" % len(str(claim)),
                                 context={"requested_by": claim})
            self.assertCode(self.vote("dev-approver", body), 403,
                            "SELF_APPROVAL")

    def test_the_view_labels_claims(self):
        ctx = {"requested_by": "bob", "ticket": "T-9"}
        body = self.escalate("orders/r6", context=ctx)
        st, v, _ = self.get("second", body)
        self.assertEqual(st, 200, v)
        self.assertEqual(v["claimed_by_agent"], ctx)
        self.assertEqual(v["principal"], "dev-agent")
        self.assertEqual(v["operators"], ["operator"])
        # The binding as hashed is unchanged.
        self.assertEqual(v["intent"]["context"], ctx)


class DefaultQuorum(unittest.TestCase):
    def test_config_quorum_applies_when_the_policy_names_none(self):
        srv = start(extra="\n[approvals]\nquorum = 2\n")
        try:
            pw = srv.env["INTENTGATE_APPROVER_PASSWORD"]
            toks = [srv.call("POST", "/v1/approver/login", None,
                             {"approver": who, "password": pw})[1]["token"]
                    for who in ("dev-approver", "second")]
            st, body, _ = srv.submit("payments.refund", "orders/q1",
                                     {"amount": 500})
            self.assertEqual(body["decision"], "ESCALATE", body)
            path = "/v1/approvals/%s/votes" % body["approval"]["id"]
            vote = {"vote": "approve", "intent_hash": body["intent_hash"]}
            st, res, _ = srv.call("POST", path, toks[0], vote)
            self.assertEqual((st, res["status"], res["quorum"]),
                             (200, "PENDING", 2), res)
            st, res, _ = srv.call("POST", path, toks[1], vote)
            self.assertEqual((res["status"], res["decision"]),
                             ("APPROVED", "ALLOW"), res)
        finally:
            finish(srv)


class Expiry(unittest.TestCase):
    """approval_ttl (900 s, the default), on the test clock: the sweeper
    records the expiry; nothing waits for it."""

    def test_expiry_blocks_and_late_votes_are_refused(self):
        srv = start(clock=True)
        try:
            st, body, _ = srv.submit("payments.refund", "orders/e1",
                                     {"amount": 500})
            self.assertEqual(body["decision"], "ESCALATE", body)
            iid = body["intent_id"]
            agent = srv.env["INTENTGATE_AGENT_TOKEN"]

            def state():
                return srv.call("GET", "/v1/intents/" + iid, agent)[1]

            srv.advance(890)  # 10 s short of approval_ttl: still open
            self.assertEqual(state()["state"], "PENDING_APPROVAL")
            # A long poll parked now is woken by the sweeper's expiry,
            # long before its own 60 s.
            out = {}
            t = threading.Thread(target=lambda: out.update(
                rec=srv.call("GET", "/v1/intents/%s?wait=60" % iid,
                             agent)[1]))
            t.start()
            wait_until(lambda: srv.metric("intentgate_long_polls_parked") == 1,
                       "the long poll to park")
            srv.advance(11)
            t.join(30)
            self.assertFalse(t.is_alive(), "the long poll was not woken")
            self.assertIn(out["rec"]["state"], ("EXPIRED", "BLOCKED"))
            # The sweeper records the expiry as a BLOCK.
            rec = wait_until(lambda: (lambda r: r["state"] == "BLOCKED"
                                      and r)(state()),
                             "the sweeper to block the expired intent")
            self.assertIn("APPROVAL_EXPIRED", rec["decisions"][-1]["reasons"])
            # (Signed in now: a session from before would have gone idle.)
            st, tok, _ = srv.call("POST", "/v1/approver/login", None,
                                  {"approver": "dev-approver",
                                   "password":
                                   srv.env["INTENTGATE_APPROVER_PASSWORD"]})
            self.assertEqual(st, 200, tok)
            st, res, _ = srv.call("POST", "/v1/approvals/%s/votes"
                                  % body["approval"]["id"], tok["token"],
                                  {"vote": "approve",
                                   "intent_hash": body["intent_hash"]})
            self.assertIn(st, (409, 410), res)
            self.assertIn(res["error"]["code"],
                          ("APPROVAL_EXPIRED", "APPROVAL_RESOLVED"))
        finally:
            finish(srv)


class Lifetimes(unittest.TestCase):
    """The login limiters' backoff and window, the device token's and the
    session's lifetimes (login_max_failures 5, login_window 300 s, the
    first backoff 5 s, device tokens 30 days, session_idle 900 s,
    session_max 8 h), on the test clock."""

    def setUp(self):
        self.srv = start(clock=True)
        self.pw = self.srv.env["INTENTGATE_APPROVER_PASSWORD"]

    def tearDown(self):
        finish(self.srv)

    def login(self, who, pw, device=None):
        body = {"approver": who, "password": pw}
        if device is not None:
            body["device"] = device
        return self.srv.call("POST", "/v1/approver/login", None, body)

    def fail(self, who, n, device=None):
        for _ in range(n):
            st, body, _ = self.login(who, "wrong-password", device)
            self.assertEqual(st, 401, body)

    def test_backoff_ends_when_its_wait_is_over(self):
        self.fail("second", 5)
        st, body, h = self.login("second", self.pw)
        self.assertEqual(st, 429, body)
        wait = int(h["Retry-After"])
        self.assertTrue(1 <= wait <= 5, wait)  # 5 s from the 5th failure
        self.srv.advance(5)
        st, body, _ = self.login("second", self.pw)
        self.assertEqual(st, 200, body)

    def test_failures_are_forgotten_after_the_window(self):
        self.fail("second", 4)
        self.srv.advance(301)  # login_window: the four are forgotten
        self.fail("second", 4)
        # Eight failures in all, but four in the window: not limited.
        st, body, _ = self.login("second", self.pw)
        self.assertEqual(st, 200, body)
        # The control: the fifth failure inside one window backs off.
        self.fail("second", 5)
        self.assertEqual(self.login("second", self.pw)[0], 429)

    def test_session_idle_and_max(self):
        st, body, _ = self.login("second", self.pw)
        self.assertEqual(st, 200, body)
        tok = body["token"]

        def use():
            return self.srv.call("GET", "/v1/approvals", tok)[0]

        # Used every 800 s it stays open, up to session_max ...
        for _ in range(35):  # 28,000 s
            self.srv.advance(800)
            self.assertEqual(use(), 200)
        self.srv.advance(801)  # 28,801 s: past session_max
        self.assertEqual(use(), 401)
        # ... and idle for session_idle it closes.
        tok = self.login("second", self.pw)[1]["token"]
        self.srv.advance(896)  # short of session_idle by more than a
        self.assertEqual(use(), 200)  # second or two of real time
        self.srv.advance(901)
        self.assertEqual(use(), 401)

    def test_device_token_expires(self):
        st, body, _ = self.login("second", self.pw)
        self.assertEqual(st, 200, body)
        device = body["device"]
        self.fail("second", 5)
        self.assertEqual(self.login("second", self.pw)[0], 429)
        # The browser that signed in before still gets in ...
        self.assertEqual(self.login("second", self.pw, device)[0], 200)
        # ... for 30 days; then its token is no device: the id's backoff
        # applies to it as to anyone.
        self.srv.advance(30 * 86400 + 1)
        self.fail("second", 5)
        self.assertEqual(self.login("second", self.pw, device)[0], 429)


class SessionsAcrossRestarts(unittest.TestCase):
    """Sessions live in the store (on PostgreSQL: shared by replicas), so
    they outlive a restart; one made with a password the config no longer
    has is refused, on every replica, however fresh."""

    def login(self, srv, pw):
        st, body, _ = srv.call("POST", "/v1/approver/login", None,
                               {"approver": srv.env["INTENTGATE_APPROVER_ID"],
                                "password": pw})
        self.assertEqual(st, 200, body)
        return body["token"]

    def test_a_changed_password_ends_the_old_sessions(self):
        srv = Server.dev()
        tok = self.login(srv, srv.env["INTENTGATE_APPROVER_PASSWORD"])
        self.assertEqual(srv.call("GET", "/v1/approvals", tok)[0], 200)
        srv.stop()
        srv = Server.dev(tmp=srv.tmp)  # the same data and store
        try:
            self.assertEqual(srv.call("GET", "/v1/approvals", tok)[0], 200,
                             "a session outlives a restart")
        finally:
            srv.stop()
        # The operator sets a new password: a new hash (new salt).
        new_pw = "new-" + hashlib.sha256(os.urandom(16)).hexdigest()[:16]
        out = subprocess.run(
            [os.environ["INTENTGATE_BIN"], "approver", "add", "x", "--groups",
             "g"], input=(new_pw + "\n").encode(), capture_output=True,
            check=True).stdout.decode()
        new_hash = re.search(r"^password_hash = (.*)$", out, re.M).group(1)
        conf = os.path.join(srv.data, "intentgate.conf")
        with open(conf) as f:
            text = f.read()
        text = re.sub(r"^password_hash = .*$", lambda m: "password_hash = " +
                      new_hash, text, count=1, flags=re.M)
        with open(conf, "w") as f:
            f.write(text)
        srv = Server.dev(tmp=srv.tmp)
        try:
            st, body, _ = srv.call("GET", "/v1/approvals", tok)
            self.assertEqual((st, body["error"]["code"]),
                             (401, "UNAUTHENTICATED"), body)
            tok2 = self.login(srv, new_pw)
            self.assertEqual(srv.call("GET", "/v1/approvals", tok2)[0], 200)
        finally:
            finish(srv)


if __name__ == "__main__":
    run_tests()
