"""test_trace.py - the explain trace end to end: which policy file returned
which verdict, recorded in intent.decided and shown to humans, never to
the agent.

A real `intentgate serve --dev` (the example bundle, plus zz_note.lua
added and reloaded with SIGHUP: it escalates a refund carrying a note and
puts the note - agent text - in its message):

  Recorded    an intent each example policy decides: the intent.decided
              event's trace names that file, verdict and reasons (nil
              files left out); the agent's reply and its GET of the
              intent carry no trace
  Approved    an escalation approved at quorum: the second intent.decided
              has the re-evaluation's trace; `audit show` prints both
  Pages       the approval page shows "Why: policy -> verdict" for the
              escalation and the re-evaluation, the audit page the trace,
              everything escaped (<script> from params)

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_trace.py

Runs on both stores (tests/CMakeLists.txt ig_store_test). Exits 0 only
when every test passed.
"""
import html
import os
import re
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests, wait_until  # noqa: E402
from test_ui import Browser  # noqa: E402

XSS = "<script>alert(1)</script>"

NOTE_POLICY = """
-- zz_note.lua (test_trace.py): a refund with a note needs finance; the
-- message repeats the agent's note.
return function(intent)
  if intent.action ~= "payments.refund" or intent.params.note == nil then
    return nil
  end
  if approved(intent, "finance") then
    return ALLOW
  end
  return ESCALATE{approvers = {"finance"}, reason = "NOTE_REVIEW",
                  message = "note: " .. tostring(intent.params.note)}
end
"""

# (action, resource, params, file, verdict, reasons): one intent each
# example policy decides.
EXAMPLES = [
    ("db.write", "prod/orders", {}, "db.lua", "ESCALATE",
     ["PRODUCTION_WRITE"]),
    ("file.read", "/etc/passwd", {}, "file.lua", "BLOCK", ["SENSITIVE_PATH"]),
    ("git.push", "github.com/acme/app", {"refs": ["refs/heads/main"]},
     "git.lua", "BLOCK", ["PROTECTED_BRANCH"]),
    ("http.request", "https://unknown.example/x", {}, "http.lua", "ESCALATE",
     ["HOST_NOT_ALLOWLISTED"]),
    ("mcp.jira.create_issue", "mcp://jira", {}, "mcp.lua", "ESCALATE",
     ["MCP_TOOL_NOT_ALLOWLISTED"]),
    ("mcp.fs.write_file", "/work/project/a.txt", {}, "mcp_fs.lua",
     "ESCALATE", ["MCP_FS_WRITE"]),
    ("mcp.github.merge_pull_request", "acme/app", {}, "mcp_github.lua",
     "ESCALATE", ["MCP_GITHUB_RELEASE"]),
    ("payments.refund", "orders/1", {"amount": 5000}, "refund.lua", "BLOCK",
     ["AMOUNT_OVER_LIMIT"]),
    ("payments.refund", "orders/2", {"amount": 5}, "refund.lua", "ALLOW", []),
    ("shell.exec", "host", {"argv": ["sudo", "ls"]}, "shell.lua", "BLOCK",
     ["DANGEROUS_COMMAND"]),
]


def ig(*args):
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True,
                       timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


class Trace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server.dev()
        cls.env = cls.srv.env
        before = cls.srv.metric("intentgate_policy_reloads_total") or 0
        with open(os.path.join(cls.srv.data, "policies", "zz_note.lua"),
                  "w") as f:
            f.write(NOTE_POLICY)
        cls.srv.signal(signal.SIGHUP)
        wait_until(lambda: (cls.srv.metric("intentgate_policy_reloads_total")
                            or 0) > before, "the bundle to reload")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        log = cls.srv.log()
        cls.srv.cleanup()
        if rc != 0 or "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))

    # ---- helpers ----

    def submit(self, action, resource, params):
        st, body, _ = self.srv.submit(action, resource, params)
        self.assertEqual(st, 201, body)
        self.assertNotIn("trace", body)
        return body

    def decided(self, intent_id, n=1):
        """The intent's intent.decided events, once there are n."""
        def get():
            evs = [e for e in self.srv.audit_events()
                   if e.get("type") == "intent.decided"
                   and e.get("intent_id") == intent_id]
            return evs if len(evs) >= n else None
        return wait_until(get, "%d intent.decided of %s" % (n, intent_id))

    def approve(self, body):
        st, tok, _ = self.srv.call(
            "POST", "/v1/approver/login", None,
            {"approver": self.env["INTENTGATE_APPROVER_ID"],
             "password": self.env["INTENTGATE_APPROVER_PASSWORD"]})
        self.assertEqual(st, 200, tok)
        st, res, _ = self.srv.call(
            "POST", "/v1/approvals/%s/votes" % body["approval"]["id"],
            tok["token"], {"vote": "approve",
                           "intent_hash": body["intent_hash"]})
        self.assertEqual(st, 200, res)
        return res

    # ---- recorded, never shown to the agent ----

    def test_each_example_policy(self):
        for action, resource, params, name, verdict, reasons in EXAMPLES:
            with self.subTest(policy=name, action=action):
                body = self.submit(action, resource, params)
                self.assertEqual(body["decision"], verdict, body)
                ev = self.decided(body["intent_id"])[0]
                trace = ev["trace"]
                self.assertIn({"policy": name, "verdict": verdict,
                               "reasons": reasons}, trace, trace)
                # Only files with an opinion, in file order, known shape.
                names = [t["policy"] for t in trace]
                self.assertEqual(names, sorted(names))
                self.assertNotIn("quota.lua", names)
                for t in trace:
                    self.assertEqual(sorted(t), ["policy", "reasons",
                                                 "verdict"])
                    self.assertIn(t["verdict"],
                                  ("ALLOW", "BLOCK", "ESCALATE"))

    def test_agent_never_sees_it(self):
        st, raw, _ = self.srv.call(
            "POST", "/v1/intents", self.env["INTENTGATE_AGENT_TOKEN"],
            {"action": "payments.refund", "resource": "orders/3",
             "params": {"amount": 500}}, raw_response=True)
        self.assertEqual(st, 201, raw)
        self.assertNotIn(b"trace", raw)
        self.assertNotIn(b"refund.lua", raw)
        iid = re.search(rb'"intent_id":"([^"]+)"', raw).group(1).decode()
        st, raw, _ = self.srv.call("GET", "/v1/intents/" + iid,
                                   self.env["INTENTGATE_AGENT_TOKEN"],
                                   raw_response=True)
        self.assertEqual(st, 200, raw)
        self.assertNotIn(b"trace", raw)
        self.assertNotIn(b"refund.lua", raw)
        # ... while the log has it.
        self.assertEqual(self.decided(iid)[0]["trace"],
                         [{"policy": "refund.lua", "verdict": "ESCALATE",
                           "reasons": ["REFUND_NEEDS_APPROVAL"]}])

    # ---- approved at quorum ----

    def test_approved_shows_the_reevaluation(self):
        body = self.submit("payments.refund", "orders/4", {"amount": 500})
        self.assertEqual(body["decision"], "ESCALATE", body)
        res = self.approve(body)
        self.assertEqual(res.get("status"), "APPROVED", res)
        first, second = self.decided(body["intent_id"], 2)[:2]
        self.assertEqual(first["trace"],
                         [{"policy": "refund.lua", "verdict": "ESCALATE",
                           "reasons": ["REFUND_NEEDS_APPROVAL"]}])
        self.assertEqual(second["approval_id"], body["approval"]["id"])
        self.assertEqual(second["decision"], "ALLOW")
        self.assertEqual(second["trace"],
                         [{"policy": "refund.lua", "verdict": "ALLOW",
                           "reasons": []}])
        self.srv.settled()
        rc, out, err = ig("audit", "show", body["intent_id"], "--db",
                          self.srv.store())
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"(?m)^ +refund\.lua  ESCALATE  "
                              r"REFUND_NEEDS_APPROVAL$")
        self.assertRegex(out, r"(?m)^ +refund\.lua  ALLOW$")
        self.assertEqual(out.count("trace:"), 2, out)

    def test_audit_show_blocked(self):
        body = self.submit("git.push", "github.com/acme/app",
                           {"refs": ["refs/heads/main"]})
        self.decided(body["intent_id"])
        rc, out, err = ig("audit", "show", body["intent_id"], "--db",
                          self.srv.store())
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"(?m)^ +trace:$")
        self.assertRegex(out, r"(?m)^ +git\.lua  BLOCK  PROTECTED_BRANCH$")

    # ---- the pages ----

    def test_approval_page_escaped(self):
        body = self.submit("payments.refund", "orders/5",
                           {"amount": 5, "note": XSS})
        self.assertEqual(body["decision"], "ESCALATE", body)
        b = Browser(self.srv)
        self.assertEqual(b.login().status, 303)
        path = "/ui/approvals/" + body["approval"]["id"]
        # PostgreSQL sequences the event after the reply: wait for it.
        page = wait_until(lambda: (lambda r: r if r.element("trace")
                                   else None)(b.get(path)),
                          "the trace on the approval page")
        self.assertEqual(page.status, 200)
        self.assertNotIn("<script", page.body.lower())
        self.assertIn(html.escape(XSS, quote=True), page.body)
        self.assertIn("Why: policy", page.body)
        trace = page.text("trace")
        self.assertIn("refund.lua \u2192 ALLOW", trace)
        self.assertIn("zz_note.lua \u2192 ESCALATE NOTE_REVIEW", trace)
        self.assertIn('class="verdict verdict-escalate"', page.body)
        self.assertIsNone(page.element("resolution-trace"))

        self.approve(body)
        page = wait_until(
            lambda: (lambda r: r if r.element("resolution-trace")
                     else None)(b.get(path)),
            "the re-evaluation's trace on the page")
        self.assertIn("zz_note.lua \u2192 ALLOW",
                      page.text("resolution-trace"))
        self.assertNotIn("<script", page.body.lower())

        # The auditors' timeline (dev-approver is in group auditors).
        r = b.get("/ui/audit/intents/" + body["intent_id"])
        self.assertEqual(r.status, 200, r.body)
        self.assertNotIn("<script", r.body.lower())
        self.assertEqual(r.body.count('<ol class="trace">'), 2, r.body)
        self.assertIn("NOTE_REVIEW", r.body)


if __name__ == "__main__":
    run_tests()
