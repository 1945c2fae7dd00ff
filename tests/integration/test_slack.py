"""test_slack.py - Slack notifications and button clicks end to end.

A fake Slack Web API runs on loopback (http.server in a thread) and records
every chat.postMessage / chat.update; `intentgate serve --dev` is started
with INTENTGATE_SLACK_API_URL pointing at it. Escalations must post a
message with the bearer token and the approve/deny buttons; signed clicks
on /slack/interactions must vote under the same rules as the web page, and
forged, stale, unknown, ineligible, replayed and late clicks must not.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_slack.py
"""
import hashlib
import hmac
import json
import os
import signal
import sys
import threading
import time
import unittest
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, run_tests  # noqa: E402

CHANNEL = "CDEVAPPROVALS"
APPROVER = "UDEVAPPROVER"


class FakeSlack:
    """chat.postMessage / chat.update on 127.0.0.1: each call is recorded
    as {method, headers, body}; a post gets a fresh ts."""

    def __init__(self):
        self.calls = []
        self.cv = threading.Condition()
        self.posts = 0
        self.release = threading.Event()  # holds "hang-me" calls until set
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                method = self.path.rsplit("/", 1)[-1]
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with fake.cv:
                    if method == "chat.postMessage":
                        fake.posts += 1
                        ts = "1700000000.%06d" % (99 + fake.posts)
                    else:
                        ts = (body or {}).get("ts", "")
                    fake.calls.append({"method": method, "path": self.path,
                                       "headers": dict(self.headers),
                                       "body": body})
                    fake.cv.notify_all()
                if b"hang-me" in raw:  # Slack takes its time
                    fake.release.wait(60)
                if b"fail-me" in raw:  # Slack refuses this one
                    out = json.dumps({"ok": False,
                                      "error": "channel_not_found"}).encode()
                else:
                    out = json.dumps({"ok": True, "ts": ts,
                                      "channel": CHANNEL}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the PDP gave up waiting (its timeout)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/api" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def wait(self, method, pred, timeout=10):
        """The first recorded call of method for which pred(call) holds."""
        deadline = time.time() + timeout
        with self.cv:
            while True:
                for c in self.calls:
                    if c["method"] == method and c["body"] and pred(c):
                        return c
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError("no %s call arrived; calls: %s" % (
                        method, json.dumps(self.calls)[-3000:]))
                self.cv.wait(left)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def buttons(msg):
    for b in msg.get("blocks", []):
        if b.get("type") == "actions":
            return b["elements"]
    return None


def context_text(msg):
    for b in msg.get("blocks", []):
        if b.get("type") == "context":
            return b["elements"][0]["text"]
    return ""


def all_text(msg):
    """Every block's text, joined."""
    out = []
    for b in msg.get("blocks", []):
        if isinstance(b.get("text"), dict):
            out.append(b["text"]["text"])
        for e in b.get("elements", []):
            if isinstance(e.get("text"), str):
                out.append(e["text"])
    return "\n".join(out)


def sign(secret, ts, body):
    mac = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body,
                   hashlib.sha256).hexdigest()
    return "v0=" + mac


def click_body(user, action, value):
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "someone", "team_id": "T0DEV"},
        "api_app_id": "A0DEV",
        "container": {"type": "message", "message_ts": "1700000000.000100",
                      "channel_id": CHANNEL, "is_ephemeral": False},
        "channel": {"id": CHANNEL, "name": "approvals"},
        "response_url": "https://hooks.slack.com/actions/T0DEV/1/abc",
        "actions": [{"action_id": action, "block_id": "intentgate_vote",
                     "value": value, "type": "button",
                     "action_ts": "1700000001.000200"}],
    }
    return ("payload=" + urllib.parse.quote_plus(json.dumps(payload))).encode()


class SlackServer(unittest.TestCase):
    ttl = None  # INTENTGATE_DEV_APPROVAL_TTL for this server
    clock = False  # on the test clock (srv.advance)

    @classmethod
    def setUpClass(cls):
        cls.slack = FakeSlack()
        saved = dict(os.environ)
        os.environ["INTENTGATE_SLACK_API_URL"] = cls.slack.url
        if cls.ttl is not None:
            os.environ["INTENTGATE_DEV_APPROVAL_TTL"] = str(cls.ttl)
        try:
            cls.srv = Server.dev(clock=cls.clock)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        cls.env = cls.srv.env
        cls.secret = cls.env["INTENTGATE_SLACK_SIGNING_SECRET"]
        with open(os.path.join(cls.srv.data, "slack-bot-token")) as f:
            cls.bot_token = f.read().strip()

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        log = cls.srv.log()
        cls.srv.cleanup()
        cls.slack.stop()
        # A clean exit: no sanitizer report, no leak, status 0; no secret
        # in the log.
        if rc != 0 or "Sanitizer" in log:
            raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))
        if cls.secret in log or cls.bot_token in log:
            raise AssertionError("a Slack secret is in the server log")

    def escalate(self, action="payments.refund", resource="orders/1",
                 params=None):
        """Submit an intent that escalates; wait for its Slack message.
        Returns (answer, postMessage call, button value)."""
        st, body, _ = self.srv.submit(
            action, resource, params if params is not None else
            {"amount": 500, "currency": "EUR", "order_id": "o-1"})
        self.assertEqual(st, 201, body)
        self.assertEqual(body["decision"], "ESCALATE", body)
        value = "%s:%s" % (body["approval"]["id"], body["intent_hash"])
        post = self.slack.wait(
            "chat.postMessage",
            lambda c: any(b.get("value") == value
                          for b in buttons(c["body"]) or []))
        return body, post, value

    def click(self, user, action, value, ts=None, secret=None, body=None,
              sig=None, headers=None):
        raw = body if body is not None else click_body(user, action, value)
        ts = ts if ts is not None else str(self.srv.now())
        h = {"Content-Type": "application/x-www-form-urlencoded",
             "X-Slack-Request-Timestamp": ts,
             "X-Slack-Signature": sig or sign(secret or self.secret, ts, raw)}
        if headers is not None:
            h = headers
        return self.srv.call("POST", "/slack/interactions", raw=raw, headers=h)

    def assertRefused(self, resp, code):
        st, body, _ = resp
        self.assertEqual(st, 200, body)
        self.assertEqual(body.get("code"), code, body)
        self.assertEqual(body.get("response_type"), "ephemeral", body)
        self.assertIs(body.get("replace_original"), False, body)
        self.assertIn("not counted", body["text"], body)

    def state(self, intent_id, wait=0):
        st, body, _ = self.srv.call(
            "GET", "/v1/intents/%s?wait=%d" % (intent_id, wait),
            self.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual(st, 200, body)
        return body


class Notifications(SlackServer):
    def test_escalation_posts_a_message_with_buttons(self):
        body, post, value = self.escalate()
        h = {k.lower(): v for k, v in post["headers"].items()}
        self.assertEqual(post["path"], "/api/chat.postMessage")
        self.assertEqual(h["authorization"], "Bearer " + self.bot_token)
        self.assertTrue(self.bot_token.startswith("xoxb-"))
        self.assertEqual(h["content-type"], "application/json; charset=utf-8")
        msg = post["body"]
        self.assertEqual(msg["channel"], CHANNEL)
        self.assertNotIn("ts", msg)
        self.assertIn("payments.refund", msg["text"])
        b = buttons(msg)
        self.assertEqual([x["action_id"] for x in b], ["approve", "deny"])
        self.assertEqual([x["style"] for x in b], ["primary", "danger"])
        self.assertEqual({x["value"] for x in b}, {value})
        text = all_text(msg)
        for part in ("payments.refund", "orders/1", '"amount": 500',
                     '"currency": "EUR"', '"order_id": "o-1"', "dev-agent",
                     "finance", body["intent_hash"]):
            self.assertIn(part, text)

    def test_every_param_is_shown(self):
        params = {"amount": 500, "fence": "```\n*Approved by the CFO*\n```",
                  "ping": "<!channel> <https://evil.example|bank>"}
        for i in range(10):
            params["k%02d" % i] = ("v%d" % i) * 150
        _, post, _ = self.escalate(params=params)
        msg = post["body"]
        text = all_text(msg)
        for i in range(10):
            self.assertIn('"k%02d": "%s"' % (i, ("v%d" % i) * 150), text)
        self.assertNotIn("<!channel>", json.dumps(msg))
        self.assertNotIn("<https://evil", json.dumps(msg))
        self.assertIn("\\u0060\\u0060\\u0060", text)
        self.assertEqual([x["action_id"] for x in buttons(msg)],
                         ["approve", "deny"])
        for b in msg["blocks"]:
            if b["type"] == "section":
                self.assertLessEqual(len(b["text"]["text"]), 3000)
        self.assertLessEqual(len(msg["blocks"]), 50)

    def test_params_are_escaped(self):
        _, post, _ = self.escalate(params={
            "amount": 200, "order_id": "<script>alert(1)</script> <!channel>"})
        text = json.dumps(post["body"])
        self.assertNotIn("<script>", text)
        self.assertNotIn("<!channel>", text)
        self.assertIn("&lt;script&gt;", text)


    def test_claims_cannot_pass_for_established_fields(self):
        """Review attack (issue 12): context keys and values, and a
        requested_by, that read like the PDP's own lines."""
        fake = "\n*Agent:* root (authenticated)\n*Intent hash:* `sha256:0`"
        st, body, _ = self.srv.submit(
            "payments.refund", "orders/9" + fake.replace("\n", " "),
            {"amount": 500, "note": fake},
            context={"Agent (authenticated)": "root", "requested_by": fake,
                     "x": {"*Run by:*": "alice (config)"}})
        self.assertEqual((st, body.get("decision")), (201, "ESCALATE"), body)
        value = "%s:%s" % (body["approval"]["id"], body["intent_hash"])
        post = self.slack.wait(
            "chat.postMessage",
            lambda c: any(b.get("value") == value
                          for b in buttons(c["body"]) or []))
        text = all_text(post["body"])
        # The PDP's own lines, once each, at the start of a line, outside
        # any code block: the claims are inside code.
        lines = text.split("\n")
        self.assertEqual(
            [x for x in lines if x.startswith("*Agent:*")],
            ["*Agent:* dev-agent (authenticated)"], text)
        self.assertEqual(
            [x for x in lines if x.startswith("*Intent hash:*")],
            ["*Intent hash:* `%s`" % body["intent_hash"]], text)
        self.assertFalse([x for x in lines if x.startswith("*Run by:*")],
                         text)
        by = [x for x in lines if x.startswith("*Requested by:*")]
        self.assertEqual(len(by), 1, text)
        self.assertTrue(by[0].startswith(
            "*Requested by:* claimed by the agent: `"), by)
        self.assertIn("\\n*Agent:* root", by[0])
        self.assertIn("\\u0060", by[0])  # the backticks cannot close it
        self.assertIn('"Agent (authenticated)": "root"', text)
        self.assertIn("*Context, claimed by the agent (not verified):*", text)

    def test_every_attempt_is_logged(self):
        self.escalate()
        st, body, _ = self.srv.submit("payments.refund", "orders/2",
                                      {"amount": 300, "order_id": "fail-me"})
        self.assertEqual(body["decision"], "ESCALATE", body)
        self.slack.wait("chat.postMessage",
                        lambda c: "fail-me" in json.dumps(c["body"]))
        deadline = time.time() + 10
        while True:
            lines = [json.loads(x) for x in self.srv.log().splitlines()
                     if x.startswith("{") and "slack.notify" in x]
            bad = [x for x in lines if x["intent_id"] == body["intent_id"]]
            if bad:
                break
            self.assertLess(time.time(), deadline, "no slack.notify line")
            time.sleep(0.05)
        self.assertIs(bad[0]["ok"], False, bad)
        self.assertEqual(bad[0]["error"], "channel_not_found", bad)
        self.assertEqual(bad[0]["method"], "chat.postMessage")
        self.assertTrue(any(x["ok"] is True and x.get("ts") for x in lines))


class Clicks(SlackServer):
    def test_approve_click_allows_and_updates_the_message(self):
        body, post, value = self.escalate()
        st, ans, _ = self.click(APPROVER, "approve", value)
        self.assertEqual(st, 200, ans)
        self.assertIsNone(ans.get("code"), ans)
        self.assertIn("counted", ans["text"])
        self.assertEqual(ans["response_type"], "ephemeral")
        rec = self.state(body["intent_id"], wait=5)
        self.assertEqual(rec["state"], "ALLOWED", rec)
        self.assertTrue(rec.get("grant"), rec)
        # The message is updated in place: same ts, no buttons, the result.
        upd = self.slack.wait(
            "chat.update", lambda c: c["body"].get("ts") == self.post_ts(post)
            and "APPROVED" in context_text(c["body"]))
        self.assertEqual(upd["body"]["channel"], CHANNEL)
        h = {k.lower(): v for k, v in upd["headers"].items()}
        self.assertEqual(h["authorization"], "Bearer " + self.bot_token)
        self.assertIsNone(buttons(upd["body"]), upd)
        ctx = context_text(upd["body"])
        self.assertIn("APPROVED", ctx)
        self.assertIn("Dev Approver", ctx)
        self.assertIn("slack", ctx)
        # Replayed click: refused, nothing changes.
        self.assertRefused(self.click(APPROVER, "approve", value),
                           "APPROVAL_RESOLVED")
        self.assertEqual(self.state(body["intent_id"])["state"], "ALLOWED")

    def post_ts(self, post):
        """The ts the fake answered for this post (posts are numbered)."""
        with self.slack.cv:
            n = [c for c in self.slack.calls
                 if c["method"] == "chat.postMessage"].index(post) + 1
        return "1700000000.%06d" % (99 + n)

    def test_a_message_too_large_cannot_approve(self):
        body, post, value = self.escalate(
            params={"amount": 500, "blob": "z" * 60000})
        msg = post["body"]
        text = all_text(msg)
        # The hash and where to decide; Deny, but no Approve.
        self.assertEqual([x["action_id"] for x in buttons(msg)], ["deny"])
        self.assertIn(body["intent_hash"], text)
        self.assertIn("/ui/approvals/" + body["approval"]["id"], text)
        self.assertNotIn("z" * 3000, text)
        # A click that approves anyway (an old message, a crafted
        # payload) is refused: Slack never showed this intent whole.
        self.assertRefused(self.click(APPROVER, "approve", value),
                           "INTENT_NOT_SHOWN")
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")
        st, ans, _ = self.click(APPROVER, "deny", value)
        self.assertEqual(st, 200, ans)
        self.assertIsNone(ans.get("code"), ans)
        self.assertEqual(self.state(body["intent_id"], wait=5)["state"],
                         "BLOCKED")

    def test_deny_click_blocks(self):
        body, post, value = self.escalate()
        st, ans, _ = self.click(APPROVER, "deny", value)
        self.assertEqual(st, 200, ans)
        self.assertIsNone(ans.get("code"), ans)
        rec = self.state(body["intent_id"], wait=5)
        self.assertEqual(rec["state"], "BLOCKED", rec)
        upd = self.slack.wait(
            "chat.update", lambda c: c["body"].get("ts") == self.post_ts(post)
            and "DENIED" in context_text(c["body"]))
        self.assertIsNone(buttons(upd["body"]))

    def test_replay_before_quorum_is_already_voted(self):
        # db.write to prod/ needs two dba approvals: one vote keeps it open.
        body, post, value = self.escalate("db.write", "prod/users",
                                          {"sql": "update t set x = 1"})
        st, ans, _ = self.click(APPROVER, "approve", value)
        self.assertEqual(st, 200, ans)
        self.assertIsNone(ans.get("code"), ans)
        self.assertIn("1 of 2", ans["text"])
        upd = self.slack.wait(
            "chat.update", lambda c: c["body"].get("ts") == self.post_ts(post))
        # Still pending: the buttons stay, the vote so far is shown.
        self.assertEqual(len(buttons(upd["body"])), 2)
        self.assertIn("1 of 2", context_text(upd["body"]))
        self.assertIn("Dev Approver", context_text(upd["body"]))
        self.assertRefused(self.click(APPROVER, "approve", value),
                           "ALREADY_VOTED")
        self.assertRefused(self.click(APPROVER, "deny", value),
                           "ALREADY_VOTED")
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")

    def test_unknown_slack_user_is_refused(self):
        body, _, value = self.escalate()
        resp = self.click("UNOBODY", "approve", value)
        self.assertRefused(resp, "NOT_AN_APPROVER")
        self.assertIn("not an approver", resp[1]["text"])
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")
        deadline = time.time() + 5
        while "NOT_AN_APPROVER" not in self.srv.log():
            self.assertLess(time.time(), deadline, "refusal not logged")
            time.sleep(0.05)
        self.assertIn("slack.vote_refused", self.srv.log())

    def test_wrong_group_is_not_eligible(self):
        # A tag push escalates to "release"; the dev approver is not in it.
        body, _, value = self.escalate("git.push", "app",
                                       {"refs": ["refs/tags/v1.2.3"]})
        self.assertRefused(self.click(APPROVER, "approve", value),
                           "NOT_ELIGIBLE")
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")

    def test_other_intent_hash_is_refused(self):
        body, _, value = self.escalate()
        other = value.split(":", 1)[0] + ":sha256:" + "0" * 64
        self.assertRefused(self.click(APPROVER, "approve", other),
                           "INTENT_HASH_MISMATCH")
        unknown = "00000000-0000-4000-8000-000000000000:" + body["intent_hash"]
        self.assertRefused(self.click(APPROVER, "approve", unknown),
                           "APPROVAL_NOT_FOUND")
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")

    def test_forged_clicks_are_401(self):
        body, _, value = self.escalate()
        raw = click_body(APPROVER, "approve", value)
        ts = str(int(time.time()))
        good = sign(self.secret, ts, raw)
        flipped = good[:-1] + ("0" if good[-1] != "0" else "1")
        cases = [
            dict(sig=flipped),
            dict(secret="not-the-secret"),
            dict(sig=sign(self.secret, ts, raw + b"\n")),
            dict(sig=good.upper()),
            dict(sig="v1=" + good[3:]),
            dict(headers={"Content-Type": "application/x-www-form-urlencoded",
                          "X-Slack-Request-Timestamp": ts}),
            dict(headers={"Content-Type": "application/x-www-form-urlencoded",
                          "X-Slack-Signature": good}),
            dict(ts=ts + "0", sig=sign(self.secret, ts + "0", raw)),
            dict(ts="-" + ts, sig=sign(self.secret, "-" + ts, raw)),
            dict(ts=" " + ts, sig=sign(self.secret, " " + ts, raw)),
        ]
        for kw in cases:
            kw.setdefault("ts", ts)
            st, ans, _ = self.click(APPROVER, "approve", value, **kw)
            self.assertEqual(st, 401, (kw, ans))
            self.assertIn(ans["error"]["code"],
                          ("SLACK_SIGNATURE_INVALID", "SLACK_STALE_REQUEST"),
                          (kw, ans))
            if "secret" in kw or kw.get("sig") == flipped:
                self.assertEqual(ans["error"]["code"],
                                 "SLACK_SIGNATURE_INVALID")
        # The body signed, then changed: an approve turned into a deny.
        deny = click_body(APPROVER, "deny", value)
        st, ans, _ = self.click(APPROVER, "deny", value, ts=ts, body=deny,
                                sig=good)
        self.assertEqual(st, 401, ans)
        self.assertEqual(ans["error"]["code"], "SLACK_SIGNATURE_INVALID")
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")

    def test_stale_clicks_are_401(self):
        body, _, value = self.escalate()
        # Clear of the 300 s edge: the server's clock may read a second
        # later than ours (the unit test checks exactly +-301).
        for delta in (-310, 310, -3600):
            ts = str(int(time.time()) + delta)
            st, ans, _ = self.click(APPROVER, "approve", value, ts=ts)
            self.assertEqual(st, 401, ans)
            self.assertEqual(ans["error"]["code"], "SLACK_STALE_REQUEST", ans)
        self.assertEqual(self.state(body["intent_id"])["state"],
                         "PENDING_APPROVAL")

    def test_malformed_signed_payloads_are_400(self):
        _, _, value = self.escalate()
        for raw in (b"", b"payload=", b"payload=%7B%7D", b"payload=nope",
                    b"token=x&" + click_body(APPROVER, "approve", value),
                    click_body(APPROVER, "maybe", value),
                    click_body(APPROVER, "approve", "no-hash-here")):
            st, ans, _ = self.click(APPROVER, "approve", value, body=raw)
            self.assertEqual(st, 400, (raw, ans))
            self.assertEqual(ans["error"]["code"], "SLACK_PAYLOAD_INVALID")


class Expiry(SlackServer):
    clock = True  # approval_ttl 900 s, the default

    def test_click_after_expiry(self):
        body, post, value = self.escalate()
        self.srv.advance(901)
        self.assertRefused(self.click(APPROVER, "approve", value),
                           "APPROVAL_EXPIRED")
        rec = self.state(body["intent_id"])
        self.assertNotEqual(rec["state"], "ALLOWED", rec)
        # The message is updated: no buttons, EXPIRED.
        upd = self.slack.wait(
            "chat.update", lambda c: "EXPIRED" in context_text(c["body"]))
        self.assertIsNone(buttons(upd["body"]))


class StopWhileBusy(unittest.TestCase):
    """Review attack (issue 12): stop the server while a Slack call hangs
    and approver logins (argon2id on the HTTP threads) keep coming. It
    exits 0 without a sanitizer report; the hung call costs at most its
    own timeout."""

    def test_stop_during_a_slack_call_and_logins(self):
        slack = FakeSlack()
        saved = dict(os.environ)
        os.environ["INTENTGATE_SLACK_API_URL"] = slack.url
        try:
            srv = Server.dev()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        stop, answered = threading.Event(), threading.Semaphore(0)
        errors = []

        def login():
            while not stop.is_set():
                try:
                    st, body, _ = srv.call(
                        "POST", "/v1/approver/login", None,
                        {"approver": srv.env["INTENTGATE_APPROVER_ID"],
                         "password": "wrong-password"}, timeout=30)
                except OSError:
                    return
                if st not in (401, 429, 503):
                    errors.append("%s %s" % (st, body))
                    return
                answered.release()

        try:
            st, body, _ = srv.submit("payments.refund", "orders/h",
                                     {"amount": 500, "order_id": "hang-me"})
            self.assertEqual(body.get("decision"), "ESCALATE", body)
            slack.wait("chat.postMessage",
                       lambda c: "hang-me" in json.dumps(c["body"]))
            threads = [threading.Thread(target=login) for _ in range(3)]
            for t in threads:
                t.start()
            for _ in range(3):
                self.assertTrue(answered.acquire(timeout=30))
            srv.signal(signal.SIGTERM)
            rc = srv.proc.wait(timeout=60)
            stop.set()
            for t in threads:
                t.join()
        finally:
            slack.release.set()
            srv.stop()
            log = srv.log()
            srv.cleanup()
            slack.stop()
        self.assertEqual(rc, 0, log[-4000:])
        self.assertNotIn("Sanitizer", log)
        self.assertNotIn("runtime error", log)
        self.assertEqual(errors, [])


class NotConfigured(unittest.TestCase):
    def test_interactions_404_without_slack(self):
        saved = os.environ.pop("INTENTGATE_SLACK_API_URL", None)
        srv = Server.dev()
        try:
            st, body, _ = srv.call(
                "POST", "/slack/interactions", raw=b"payload=%7B%7D",
                headers={"Content-Type": "application/x-www-form-urlencoded"})
            self.assertEqual(st, 404, body)
        finally:
            rc = srv.stop()
            log = srv.log()
            srv.cleanup()
            if saved is not None:
                os.environ["INTENTGATE_SLACK_API_URL"] = saved
        self.assertEqual(rc, 0, log[-4000:])
        self.assertNotIn("Sanitizer", log)


class SecretFiles(unittest.TestCase):
    def test_group_readable_secret_files_are_refused(self):
        import tempfile
        slack = FakeSlack()
        tmp = tempfile.mkdtemp(prefix="ig-it-")
        saved = dict(os.environ)
        os.environ["INTENTGATE_SLACK_API_URL"] = slack.url
        try:
            srv = Server.dev(tmp=tmp)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        try:
            self.assertEqual(srv.stop(), 0, srv.log()[-4000:])
            for name in ("slack-bot-token", "slack-signing-secret"):
                path = os.path.join(srv.data, name)
                os.chmod(path, 0o640)
                with self.assertRaises(RuntimeError) as cm:
                    Server.dev(tmp=tmp)
                self.assertIn(name, str(cm.exception))
                self.assertIn("chmod 600", str(cm.exception))
                os.chmod(path, 0o600)
            # Fixed: it starts again.
            again = Server.dev(tmp=tmp)
            self.assertEqual(again.stop(), 0, again.log()[-4000:])
            self.assertNotIn("Sanitizer", again.log())
        finally:
            srv.cleanup()
            slack.stop()



if __name__ == "__main__":
    run_tests()
