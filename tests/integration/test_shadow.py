"""test_shadow.py - a shadow bundle (shadow_policy_dir) next to the live one:
it is evaluated after each live decision and compared, and never decides.

A shadow that blocks payments.refund (which the live example bundle
allows up to 100) disagrees exactly on those intents: in /metrics by
(action, live, shadow), one policy.shadow_disagreed event each, and in
GET /v1/policy/shadow; the live decisions are those of a server without a
shadow. SIGHUP reloads it on its own; a hostile shadow (endless loop,
memory bomb, count() on ever new keys) leaves the live decisions and the
live quota alone. Config refusals name the problem.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_shadow.py
"""
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, parallel, run_tests, wait_until  # noqa: E402
from harness import bundle_revision, log_events  # noqa: E402
from test_pdp import write_custom  # noqa: E402

BUNDLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "policies", "bundle")

# The shadow's refund rule: every refund in a currency is blocked; the
# rest as the live refund.lua (the example bundle's other tests send
# refunds without one).
with open(os.path.join(BUNDLE, "refund.lua")) as _f:
    FROZEN = """
local live = (function()
%s
end)()
return function(intent)
  if intent.action == "payments.refund" and intent.params.currency ~= nil then
    return BLOCK{reason = "REFUNDS_FROZEN", message = "refunds are frozen"}
  end
  return live(intent)
end
""" % _f.read()
FROZEN_TEST = """
return {
  { name = "frozen", expect = "BLOCK", reasons = {"REFUNDS_FROZEN"},
    intent = { action = "payments.refund",
               params = { amount = 5, currency = "EUR" } } },
}
"""
# Fails under both refund rules (one allows it, the other blocks it).
FAILING_TEST = """
return {
  { name = "this case fails on purpose", expect = "ESCALATE",
    intent = { action = "payments.refund",
               params = { amount = 5, currency = "EUR" } } },
}
"""
# Hostile: what params.mode asks for, on any action; nil otherwise.
HOSTILE = """
return function(intent)
  local mode = type(intent.params) == "table" and intent.params.mode
  if mode == "loop" then
    while true do end
  elseif mode == "memory" then
    local t = {}
    for i = 1, 1e9 do t[i] = string.rep("x", 4096) .. i end
  elseif mode == "count" then
    for i = 1, 1e9 do count("k:" .. intent.intent_id .. ":" .. i, 86400) end
  end
  return nil
end
"""
# Sees the approval object at quorum: blocks refunds re-evaluated after
# approval, agrees otherwise.
with open(os.path.join(BUNDLE, "refund.lua")) as _f:
    AFTER_APPROVAL = """
local live = (function()
%s
end)()
return function(intent)
  if intent.action == "payments.refund" and intent.approval ~= nil and
     #intent.approval.approvals >= 1 then
    return BLOCK{reason = "SEEN_APPROVAL"}
  end
  return live(intent)
end
""" % _f.read()
AFTER_APPROVAL_TEST = """
return {
  { name = "escalates", expect = "ESCALATE",
    intent = { action = "payments.refund", params = { amount = 500 } } },
  { name = "approved: blocked", expect = "BLOCK", reasons = {"SEEN_APPROVAL"},
    intent = { action = "payments.refund", params = { amount = 500 },
               approval = { approval_id = "a", groups = {"finance"},
                            quorum = 1, approvals = {
                              { approver = "x", groups = {"finance"},
                                comment = "", at = 0 } } } } },
}
"""
# x.fake: a policy's own BLOCK with the reason the server uses when no
# executor handles an ALLOW; x.orphan: an ALLOW no executor handles.
FAKE = """
return function(intent)
  if intent.action == "x.fake" then
    return BLOCK{reason = "NO_EXECUTOR", message = "made up"}
  elseif intent.action == "x.orphan" then
    return ALLOW
  end
end
"""
FAKE_TEST = """
return {
  { name = "fake", expect = "BLOCK", reasons = {"NO_EXECUTOR"},
    intent = { action = "x.fake", params = {} } },
  { name = "orphan", expect = "ALLOW",
    intent = { action = "x.orphan", params = {} } },
}
"""
FAKE_ALLOWED = FAKE.replace(
    'BLOCK{reason = "NO_EXECUTOR", message = "made up"}', "ALLOW")
FAKE_ALLOWED_TEST = FAKE_TEST.replace(
    'expect = "BLOCK", reasons = {"NO_EXECUTOR"}', 'expect = "ALLOW"')
HOSTILE_TEST = """
return {
  { name = "harmless without a mode", expect = "ALLOW",
    intent = { action = "payments.refund", params = { amount = 5 } } },
}
"""


def bundle_files(replace=None, add=None):
    """The example bundle's files (name -> text), refund.lua and its test
    replaced by replace's, plus add's files."""
    files = {}
    for name in os.listdir(BUNDLE):
        if name.endswith(".lua"):
            with open(os.path.join(BUNDLE, name)) as f:
                files[name] = f.read()
    if replace is not None:
        files["refund.lua"], files["refund_test.lua"] = replace
    files.update(add or {})
    return files


def write_dir(path, files):
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    for name, text in files.items():
        with open(os.path.join(path, name), "w") as f:
            f.write(text)


def refund(srv, amount, **params):
    params.update({"amount": amount, "currency": "EUR"})
    st, body, _ = srv.submit("payments.refund", "orders/o-%s" % amount,
                             params)
    assert st == 201, (st, body)
    return body


def labelled(srv, action, live, shadow):
    """intentgate_shadow_disagreements_total{action,live,shadow}, or 0."""
    st, text, _ = srv.call("GET", "/metrics", raw_response=True)
    assert st == 200, st
    m = re.search(
        rb'^intentgate_shadow_disagreements_total\{action="%s",live="%s",'
        rb'shadow="%s"\} (\d+)$' % (action.encode(), live.encode(),
                                    shadow.encode()), text, re.M)
    return int(m.group(1)) if m else 0


def events(srv, kind):
    return [e for e in srv.audit_events() if e.get("type") == kind]


class ShadowServer(unittest.TestCase):
    """A server with shadow_policy_dir = shadow (the frozen refunds)."""
    shadow_files = None  # default: bundle_files((FROZEN, FROZEN_TEST))
    live_files = None  # default: the example bundle
    policy_settings = "quota_per_minute = 100000\n"

    def start(self, shadow=True, tmp=None):
        tmp = tmp or tempfile.mkdtemp(prefix="ig-it-shadow-")
        extra = "shadow_policy_dir = shadow\n" if shadow else ""
        if shadow:
            write_dir(os.path.join(tmp, "shadow"),
                      self.shadow_files or bundle_files((FROZEN, FROZEN_TEST)))
        conf, env = write_custom(tmp, self.live_files, extra=extra,
                                 policy_settings=self.policy_settings)
        srv = Server.custom(conf, tmp, env)
        self.servers.append(srv)
        return srv

    def setUp(self):
        self.servers = []
        self.srv = self.start()
        self.admin = self.srv.env["INTENTGATE_ADMIN_TOKEN"]

    def tearDown(self):
        for srv in self.servers:
            rc = srv.stop()
            log = srv.log()
            srv.cleanup()
            self.assertEqual(rc, 0, log[-4000:])
            self.assertNotIn("Sanitizer", log)

    def summary(self, srv=None, token=None):
        srv = srv or self.srv
        st, body, _ = srv.call("GET", "/v1/policy/shadow", token or self.admin)
        self.assertEqual(st, 200, body)
        return body

    def evaluated(self, n):
        wait_until(lambda: self.summary()["evaluated"] >= n,
                   "%d shadow evaluations" % n)
        self.assertEqual(self.summary()["evaluated"], n)


class TestDisagreements(ShadowServer):
    def test_counted_recorded_and_summarised(self):
        plain = self.start(shadow=False)
        cases = [("payments.refund", {"amount": 42, "currency": "EUR"}),
                 ("payments.refund", {"amount": 5000, "currency": "EUR"}),
                 ("payments.refund", {"amount": 7, "currency": "EUR"}),
                 ("payments.refund", {"amount": 500, "currency": "EUR"}),
                 ("shell.exec", {"argv": ["ls"]}),
                 ("payments.refund", {"amount": 99, "currency": "EUR"})]
        ids = []
        for action, params in cases:
            st, got, _ = self.srv.submit(action, "r/1", params)
            st2, want, _ = plain.submit(action, "r/1", params)
            self.assertEqual((st, got["decision"], got["reasons"],
                              got["message"]),
                             (st2, want["decision"], want["reasons"],
                              want["message"]), (action, params))
            ids.append((got["intent_id"], action, got["decision"]))
        self.evaluated(len(cases))
        # Live ALLOW x3 and ESCALATE x1 against the shadow's BLOCK; the
        # 5000 refund and shell.exec agree.
        wait_until(lambda: labelled(self.srv, "payments.refund", "ALLOW",
                                    "BLOCK") == 3, "3 ALLOW/BLOCK")
        self.assertEqual(labelled(self.srv, "payments.refund", "ESCALATE",
                                  "BLOCK"), 1)
        self.assertEqual(labelled(self.srv, "payments.refund", "BLOCK",
                                  "BLOCK"), 0)
        self.assertEqual(self.srv.metric("intentgate_shadow_evaluations_total"),
                         len(cases))
        self.assertEqual(self.srv.metric("intentgate_shadow_dropped_total"), 0)
        self.assertEqual(self.srv.metric("intentgate_shadow_errors_total"), 0)
        differ = [i for i in ids if i[1] == "payments.refund"
                  and i[2] in ("ALLOW", "ESCALATE")]
        wait_until(lambda: len(events(self.srv, "policy.shadow_disagreed"))
                   >= len(differ), "the disagreement events")
        evs = events(self.srv, "policy.shadow_disagreed")
        self.assertEqual(sorted(e["intent_id"] for e in evs),
                         sorted(i[0] for i in differ))
        s = self.summary()
        for e in evs:
            self.assertEqual(e["action"], "payments.refund")
            self.assertIn(e["live"]["decision"], ("ALLOW", "ESCALATE"))
            self.assertEqual(e["shadow"], dict(e["shadow"], decision="BLOCK",
                                               reasons=["REFUNDS_FROZEN"]))
            # The shadow's explain trace: refund.lua said why.
            self.assertIn({"policy": "refund.lua", "verdict": "BLOCK",
                           "reasons": ["REFUNDS_FROZEN"]},
                          e["shadow"]["trace"])
            self.assertEqual(e["live_revision"], s["live_revision"])
            self.assertEqual(e["shadow_revision"], s["shadow_revision"])
            if e["live"]["decision"] == "ESCALATE":
                self.assertEqual(e["live"]["reasons"],
                                 ["REFUND_NEEDS_APPROVAL"])
        self.assertNotEqual(s["live_revision"], s["shadow_revision"])
        self.assertEqual((s["evaluated"], s["disagreed"], s["dropped"],
                          s["errors"]), (6, 4, 0, 0))
        self.assertEqual(sorted((b["action"], b["live"], b["shadow"],
                                 b["count"]) for b in s["by"]),
                         [("payments.refund", "ALLOW", "BLOCK", 3),
                          ("payments.refund", "ESCALATE", "BLOCK", 1)])
        # Newest first: the order they were submitted, reversed.
        self.assertEqual([r["intent_id"] for r in s["recent"]],
                         [i[0] for i in reversed(differ)])
        for r in s["recent"]:
            self.assertRegex(r["at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        # The agent never learns what the shadow thought.
        st, got, _ = self.srv.call("GET", "/v1/intents/" + ids[0][0],
                                   self.srv.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual(st, 200)
        self.assertNotIn("shadow", str(got).lower())

    def test_admin_only(self):
        st, body, _ = self.srv.call("GET", "/v1/policy/shadow")
        self.assertEqual((st, body["error"]["code"]), (401, "UNAUTHENTICATED"))
        st, body, _ = self.srv.call("GET", "/v1/policy/shadow", "igt_nope")
        self.assertEqual((st, body["error"]["code"]), (401, "UNAUTHENTICATED"))
        for var in ("INTENTGATE_AGENT_TOKEN", "INTENTGATE_EXECUTOR_TOKEN"):
            st, body, _ = self.srv.call("GET", "/v1/policy/shadow",
                                        self.srv.env[var])
            self.assertEqual((st, body["error"]["code"]), (403, "FORBIDDEN"))
        st, body, _ = self.srv.call("POST", "/v1/policy/shadow", self.admin,
                                    {})
        self.assertEqual(st, 405)

    def test_no_shadow_is_404(self):
        plain = self.start(shadow=False)
        st, body, _ = plain.call("GET", "/v1/policy/shadow",
                                 plain.env["INTENTGATE_ADMIN_TOKEN"])
        self.assertEqual((st, body["error"]["code"]), (404, "NO_SHADOW"))
        st, text, _ = plain.call("GET", "/metrics", raw_response=True)
        self.assertNotIn(b"intentgate_shadow_", text)


class TestReload(ShadowServer):
    def test_failing_shadow_refused_old_kept(self):
        shadow = os.path.join(self.srv.tmp, "shadow")
        before = self.summary()["shadow_revision"]
        with open(os.path.join(shadow, "refund_test.lua"), "w") as f:
            f.write(FAILING_TEST)
        self.srv.signal(signal.SIGHUP)
        wait_until(lambda: events(self.srv, "policy.shadow_reload_refused"),
                   "the refused shadow reload")
        ev = events(self.srv, "policy.shadow_reload_refused")[0]
        self.assertEqual(ev["kept_revision"], before)
        self.assertIn("this case fails on purpose", ev["reason"])
        self.assertEqual(
            self.srv.metric("intentgate_shadow_reloads_refused_total"), 1)
        # The live reload went on by itself (its bundle is unchanged).
        wait_until(lambda: events(self.srv, "policy.reloaded"),
                   "the live reload")
        self.assertEqual(self.summary()["shadow_revision"], before)
        refund(self.srv, 10)
        self.evaluated(1)
        self.assertEqual(self.summary()["disagreed"], 1)  # still frozen

    def test_new_shadow_taken(self):
        shadow = os.path.join(self.srv.tmp, "shadow")
        before = self.summary()["shadow_revision"]
        live = self.summary()["live_revision"]
        write_dir(shadow, bundle_files())  # the live rules: agrees
        # A live bundle that fails its tests is refused, the shadow's
        # reload is not held back by it.
        pol = os.path.join(self.srv.tmp, "policies")
        with open(os.path.join(pol, "refund_test.lua"), "w") as f:
            f.write(FAILING_TEST)
        self.srv.signal(signal.SIGHUP)
        wait_until(lambda: events(self.srv, "policy.shadow_reloaded"),
                   "the shadow reload")
        wait_until(lambda: events(self.srv, "policy.reload_refused"),
                   "the live reload refused")
        ev = events(self.srv, "policy.shadow_reloaded")[0]
        self.assertEqual(ev["old_revision"], before)
        s = self.summary()
        self.assertEqual(s["shadow_revision"], ev["revision"])
        self.assertEqual(s["shadow_revision"], live)  # same files as live
        self.assertEqual(s["live_revision"], live)
        refund(self.srv, 10)
        self.evaluated(1)
        self.assertEqual(self.summary()["disagreed"], 0)
        self.assertEqual(self.srv.metric("intentgate_shadow_reloads_total"), 1)


class TestHostileShadow(ShadowServer):
    shadow_files = bundle_files(add={"hostile.lua": HOSTILE,
                                     "hostile_test.lua": HOSTILE_TEST})
    policy_settings = "quota_per_minute = 6\n"

    def test_live_decisions_and_quota_unharmed(self):
        plain = self.start(shadow=False)
        for mode in ("loop", "memory", "count"):
            got = refund(self.srv, 3, mode=mode)
            want = refund(plain, 3, mode=mode)
            self.assertEqual((got["decision"], got["reasons"]),
                             (want["decision"], want["reasons"]))
            self.assertEqual(got["decision"], "ALLOW")
            self.assertEqual(self.srv.call("GET", "/healthz")[0], 200)
        self.evaluated(3)
        s = self.summary()
        self.assertEqual((s["errors"], s["disagreed"]), (3, 3))
        self.assertEqual(
            labelled(self.srv, "payments.refund", "ALLOW", "BLOCK"), 3)
        for e in events(self.srv, "policy.shadow_disagreed"):
            self.assertIn(e["shadow"]["reasons"][0],
                          ("POLICY_LIMIT", "POLICY_ERROR"))
            self.assertIn(e["shadow"]["trace"][-1]["verdict"],
                          ("LIMIT", "ERROR"))
            self.assertEqual(e["shadow"]["trace"][-1]["policy"],
                             "hostile.lua")
        # The live quota (6 a minute) counted the live decisions only: the
        # shadow's count() calls went to its own counter.
        for i in range(3):
            self.assertEqual(refund(self.srv, 4)["decision"], "ALLOW", i)
        got = refund(self.srv, 4)
        self.assertEqual((got["decision"], got["reasons"]),
                         ("BLOCK", ["QUOTA_EXCEEDED"]))
        self.evaluated(7)
        # The shadow's own quota: hostile.lua failed before quota.lua ran
        # (evaluation stops at a failure), so it counted 4 intents, not 7,
        # and allowed the one the live quota blocked.
        self.assertEqual(self.summary()["disagreed"], 4)
        self.assertEqual(
            labelled(self.srv, "payments.refund", "BLOCK", "ALLOW"), 1)


def slow_cases(n):
    """A test file of n cases that each spin to the policy's limit."""
    return """
local cases = {}
for i = 1, %d do
  cases[i] = { name = "spin " .. i, expect = "BLOCK",
               reasons = {"POLICY_LIMIT"},
               intent = { action = "payments.refund",
                          params = { amount = 5, mode = "loop" } } }
end
return cases
""" % n


class TestSlowShadowReload(ShadowServer):
    """A shadow bundle whose tests take minutes is loaded on a thread of its
    own: the live reload signalled with it is taken at once, another
    SIGHUP meanwhile is queued for the shadow (not refused), and the stop
    does not wait for the test run (nor start the queued one)."""
    shadow_files = bundle_files(add={"hostile.lua": HOSTILE,
                                     "hostile_test.lua": HOSTILE_TEST})

    def test_reload_and_stop_not_held(self):
        with open(os.path.join(self.srv.tmp, "shadow", "slow_test.lua"),
                  "w") as f:
            f.write(slow_cases(6000))
        live = self.summary()["live_revision"]
        with open(os.path.join(self.srv.tmp, "policies", "refund.lua"),
                  "a") as f:
            f.write("-- v2\n")
        self.srv.signal(signal.SIGHUP)
        wait_until(lambda: self.summary()["live_revision"] != live,
                   "the live reload, not held by the shadow's tests",
                   timeout=10)
        self.srv.signal(signal.SIGHUP)
        wait_until(lambda: log_events(self.srv,
                                      "policy.shadow_reload_queued"),
                   "the second shadow reload queued", timeout=10)
        self.assertEqual(events(self.srv, "policy.shadow_reload_refused"), [])
        self.assertEqual(events(self.srv, "policy.shadow_reloaded"), [])
        t0 = time.monotonic()
        self.assertEqual(self.srv.stop(), 0, self.srv.log()[-2000:])
        self.assertLess(time.monotonic() - t0, 10)


class TestQueuedShadowReload(ShadowServer):
    """A SIGHUP while a shadow reload still runs its tests is one more
    reload when it ends (it was refused: the attacker's F9), so the last
    edit is what the shadow runs, with no second signal."""
    shadow_files = bundle_files(add={"hostile.lua": HOSTILE,
                                     "hostile_test.lua": HOSTILE_TEST})

    def test_the_last_edit_is_loaded(self):
        shadow = os.path.join(self.srv.tmp, "shadow")
        first = self.summary()["shadow_revision"]
        self.assertEqual(first, bundle_revision(shadow))
        # Seconds of tests (800 cases of about 4 ms), so that the second
        # SIGHUP comes while they run.
        with open(os.path.join(shadow, "slow_test.lua"), "w") as f:
            f.write(slow_cases(800))
        self.srv.signal(signal.SIGHUP)
        wait_until(lambda: log_events(self.srv,
                                      "policy.shadow_reload_started"),
                   "the first shadow reload started")
        with open(os.path.join(shadow, "hostile.lua"), "a") as f:
            f.write("-- v3\n")
        want = bundle_revision(shadow)
        self.srv.signal(signal.SIGHUP)
        wait_until(lambda: log_events(self.srv,
                                      "policy.shadow_reload_queued"),
                   "the second SIGHUP queued behind the first's tests")
        wait_until(lambda: self.summary()["shadow_revision"] == want,
                   "the last edit loaded", timeout=120)
        # The reload's event is written after the shadow takes the bundle.
        wait_until(lambda: [e["revision"] for e in events(
            self.srv, "policy.shadow_reloaded")][-1:] == [want],
            "policy.shadow_reloaded for the last edit")
        wait_until(lambda: [e.get("queued") for e in log_events(
            self.srv, "policy.shadow_reload_started")] == [False, True],
            "two reloads started: the SIGHUP's own, then the queued one")
        self.assertEqual(events(self.srv, "policy.shadow_reload_refused"), [])


class TestServerReasons(ShadowServer):
    """The live verdict compared is the policies' own, handed over before
    the server adjusts it - never read back from the recorded reasons: a
    policy's own BLOCK [NO_EXECUTOR] is a BLOCK (a shadow that allows it
    disagrees), the server's NO_EXECUTOR on an ALLOW is an ALLOW."""
    live_files = bundle_files(add={"fake.lua": FAKE,
                                   "fake_test.lua": FAKE_TEST})
    shadow_files = bundle_files(add={"fake.lua": FAKE_ALLOWED,
                                     "fake_test.lua": FAKE_ALLOWED_TEST})

    def test_policies_own_verdict(self):
        ids = {}
        for action in ("x.fake", "x.orphan"):
            st, body, _ = self.srv.submit(action, "r/1", {})
            self.assertEqual((st, body["decision"], body["reasons"]),
                             (201, "BLOCK", ["NO_EXECUTOR"]), body)
            ids[action] = body["intent_id"]
        self.evaluated(2)
        s = self.summary()
        self.assertEqual(s["by"], [{"action": "x.fake", "live": "BLOCK",
                                    "shadow": "ALLOW", "count": 1}])
        wait_until(lambda: events(self.srv, "policy.shadow_disagreed"),
                   "the disagreement event")
        ev, = events(self.srv, "policy.shadow_disagreed")
        self.assertEqual((ev["intent_id"], ev["live"]),
                         (ids["x.fake"], {"decision": "BLOCK",
                                          "reasons": ["NO_EXECUTOR"]}))


class TestQueueFull(ShadowServer):
    """A shadow slower than the live decisions (every evaluation runs into
    the wall-clock limit): the queue fills, the rest is dropped and
    counted, every live decision is made, and a stop does not wait for
    the queued evaluations."""
    shadow_files = bundle_files(add={"hostile.lua": HOSTILE,
                                     "hostile_test.lua": HOSTILE_TEST})

    def test_dropped_and_prompt_stop(self):
        n, cap = 8, 40000  # threads; intents at most
        full = threading.Event()
        sent = []

        def submit(i):
            got, k = [], 0
            while not full.is_set() and len(sent) < cap:
                st, body, _ = self.srv.submit(
                    "payments.refund", "orders/q%d-%d" % (i, k),
                    {"amount": 1, "currency": "EUR", "mode": "loop"})
                got.append((st, body.get("decision")))
                sent.append(1)
                k += 1
                if i == 0 and k % 200 == 0 and (self.srv.metric(
                        "intentgate_shadow_dropped_total") or 0) > 0:
                    full.set()
            return got
        results = [x for r in parallel(n, submit) for x in r]
        self.assertTrue(full.is_set(), "no job dropped after %d intents"
                        % len(results))
        self.assertGreater(len(results), 4096)
        self.assertEqual(results, [(201, "ALLOW")] * len(results))
        s = self.summary()
        self.assertLess(s["evaluated"], len(results))
        # (Read while the thread runs: one may be counted in one only.)
        self.assertAlmostEqual(s["errors"], s["evaluated"], delta=1)
        # Thousands still queued at 50 ms each: the stop drops them.
        t0 = time.monotonic()
        self.assertEqual(self.srv.stop(), 0, self.srv.log()[-2000:])
        self.assertLess(time.monotonic() - t0, 10)


class TestQuorum(unittest.TestCase):
    """At quorum the shadow sees what the live policies re-evaluated: the
    binding with its approval object."""

    def test_reevaluation_shadowed(self):
        srv = Server.dev()
        srv.stop()
        tmp = srv.tmp
        shadow = os.path.join(tmp, "shadow")
        write_dir(shadow, bundle_files((AFTER_APPROVAL, AFTER_APPROVAL_TEST)))
        conf = os.path.join(srv.data, "intentgate.conf")
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace("policy_dir = policies\n",
                                 "policy_dir = policies\nshadow_policy_dir = "
                                 "%s\n" % shadow, 1))
        srv = Server.dev(tmp=tmp)
        try:
            env = srv.env
            st, body, _ = srv.submit("payments.refund", "orders/q1",
                                     {"amount": 500, "currency": "EUR"})
            self.assertEqual((st, body["decision"]), (201, "ESCALATE"), body)
            st, login, _ = srv.call(
                "POST", "/v1/approver/login", None,
                {"approver": "dev-approver",
                 "password": env["INTENTGATE_APPROVER_PASSWORD"]})
            self.assertEqual(st, 200, login)
            st, res, _ = srv.call(
                "POST", "/v1/approvals/%s/votes" % body["approval"]["id"],
                login["token"], {"vote": "approve",
                                 "intent_hash": body["intent_hash"]})
            self.assertEqual(st, 200, res)
            self.assertEqual(res["decision"], "ALLOW", res)
            admin = env["INTENTGATE_ADMIN_TOKEN"]

            def summary():
                return srv.call("GET", "/v1/policy/shadow", admin)[1]
            wait_until(lambda: summary()["evaluated"] == 2,
                       "both decisions shadowed")
            s = summary()
            self.assertEqual(s["disagreed"], 1)
            self.assertEqual(s["by"], [{"action": "payments.refund",
                                        "live": "ALLOW", "shadow": "BLOCK",
                                        "count": 1}])
            wait_until(lambda: events(srv, "policy.shadow_disagreed"),
                       "the disagreement event")
            ev, = events(srv, "policy.shadow_disagreed")
            self.assertEqual(ev["intent_id"], body["intent_id"])
            self.assertEqual(ev["shadow"]["reasons"], ["SEEN_APPROVAL"])
            self.assertIn({"policy": "refund.lua", "verdict": "BLOCK",
                           "reasons": ["SEEN_APPROVAL"]},
                          ev["shadow"]["trace"])
        finally:
            rc = srv.stop()
            log = srv.log()
            srv.cleanup()
            self.assertEqual(rc, 0, log[-4000:])


class TestConfigRefused(unittest.TestCase):
    def refused(self, extra, shadow_files=None):
        tmp = tempfile.mkdtemp(prefix="ig-it-shadow-")
        try:
            if shadow_files is not None:
                write_dir(os.path.join(tmp, "shadow"), shadow_files)
            conf, env = write_custom(tmp, extra=extra)
            with self.assertRaises(RuntimeError) as cm:
                srv = Server.custom(conf, tmp, env)
                srv.stop()
            return str(cm.exception)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_missing_dir(self):
        log = self.refused("shadow_policy_dir = nowhere\n")
        self.assertIn("shadow_policy_dir", log)
        self.assertIn("nowhere", log)

    def test_failing_tests(self):
        log = self.refused("shadow_policy_dir = shadow\n",
                           bundle_files((FROZEN, FAILING_TEST)))
        self.assertIn("shadow_policy_dir", log)
        self.assertIn("this case fails on purpose", log)

    def test_same_dir_as_live(self):
        for same in ("policies", "./policies", "policies/"):
            log = self.refused("shadow_policy_dir = %s\n" % same)
            self.assertIn("same directory as policy_dir", log)


if __name__ == "__main__":
    run_tests()
