"""test_refusals.py - refused requests cannot write the audit log, and
failed logins cannot lock approvers out, against the real
`intentgate serve --dev`.

  * A flood of bad bearer tokens (100,000 by default, IG_FLOOD_N) adds at
    most one aggregated `auth.refused` leaf per key per interval; the
    counts add up to the flood. Failed logins, redeem and outcome refusals
    and bad Slack signatures are aggregated the same way (`*.refused`).
  * Failed logins from one address (or one address behind a trusted
    proxy) only slow that address down: a correct password for an
    approver id with no failures of its own still signs in. An id's own
    failures back it off (429 + Retry-After) except for a browser holding
    a device token from an earlier sign-in as that id.
  * `trusted_proxies` decides when X-Forwarded-For is believed: the
    rightmost hop that is not a trusted proxy is the client.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_refusals.py
"""
import hashlib
import hmac
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests  # noqa: E402

FLOOD_N = int(os.environ.get("IG_FLOOD_N", "100000"))


def start(top="", extra="", slack=False, approvers=("second",), clock=False):
    """A dev server whose config gets `top` before its first section and
    `extra` at the end, more approvers (in finance and dba, with the dev
    approver's password) and, with slack, a [slack] section (an API nobody
    listens on); on the test clock when clock is true."""
    if slack:
        os.environ["INTENTGATE_SLACK_API_URL"] = "http://127.0.0.1:9/api"
    try:
        srv = Server.dev()
    finally:
        os.environ.pop("INTENTGATE_SLACK_API_URL", None)
    srv.stop()
    conf = os.path.join(srv.data, "intentgate.conf")
    with open(conf) as f:
        text = f.read()
    h = re.search(r"^password_hash = (.*)$", text, re.M).group(1)
    text = text.replace("grant_ttl = 30\n", "grant_ttl = 30\n" + top, 1)
    for who in approvers:
        text += ("\n[approver %s]\nname = %s\n"
                 "groups = finance, dba\npassword_hash = %s\n" % (who, who, h))
    text += extra
    with open(conf, "w") as f:
        f.write(text)
    return Server.dev(tmp=srv.tmp, clock=clock)


def finish(srv):
    rc = srv.stop()
    log = srv.log()
    if rc != 0 or "Sanitizer" in log or "runtime error" in log:
        srv.cleanup()
        raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))
    return log


def events(srv):
    """The audit events, in order, once sequenced (either store)."""
    return srv.audit_events()


def leaf_count(srv):
    return srv.leaf_count()


def typed(srv, t):
    return [e for e in events(srv) if e["type"] == t]


def call(srv, method, path, token=None, body=None, headers=None,
         source=None, raw=None):
    """One request, from source (an address on loopback) if given."""
    conn = http.client.HTTPConnection(
        srv.host, srv.port, timeout=60,
        source_address=(source, 0) if source else None)
    h = dict(headers or {})
    data = raw
    if token:
        h["Authorization"] = "Bearer " + token
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        text = resp.read()
        out = text
        if resp.getheader("Content-Type", "").startswith("application/json"):
            out = json.loads(text)
        # Repeated headers (Set-Cookie) kept as a list.
        return resp.status, out, resp.getheaders()
    finally:
        conn.close()


def header(headers, name):
    return [v for k, v in headers if k.lower() == name.lower()]


def login(srv, who, pw, device=None, xff=None, source=None):
    body = {"approver": who, "password": pw}
    if device is not None:
        body["device"] = device
    h = {"X-Forwarded-For": xff} if xff else None
    return call(srv, "POST", "/v1/approver/login", body=body, headers=h,
                source=source)


def metric(srv, name):
    """The sum of every sample of a metric (all label sets)."""
    st, text, _ = call(srv, "GET", "/metrics")
    total = 0
    for line in text.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def pipelined(srv, n, request, per_batch=500):
    """Send n copies of a raw request over one keep-alive connection,
    pipelined in batches; return the status lines' codes counted."""
    got = {}
    s = socket.create_connection((srv.host, srv.port), timeout=60)
    try:
        sent = 0
        buf = b""
        while sent < n:
            k = min(per_batch, n - sent)
            s.sendall(request * k)
            sent += k
            seen = 0
            while seen < k:
                chunk = s.recv(1 << 16)
                if not chunk:
                    raise AssertionError("connection closed after %d"
                                         % (sent - k + seen))
                buf += chunk
                # Count complete responses: a status line, headers, and
                # the body of Content-Length bytes.
                while True:
                    head_end = buf.find(b"\r\n\r\n")
                    if head_end < 0:
                        break
                    head = buf[:head_end].decode("latin-1")
                    m = re.search(r"(?im)^content-length:\s*(\d+)", head)
                    size = int(m.group(1)) if m else 0
                    if len(buf) < head_end + 4 + size:
                        break
                    code = int(head.split(" ", 2)[1])
                    got[code] = got.get(code, 0) + 1
                    buf = buf[head_end + 4 + size:]
                    seen += 1
    finally:
        s.close()
    return got


def bad_token_request(path=b"/v1/intents/x", xff=None):
    extra = b"X-Forwarded-For: " + xff.encode() + b"\r\n" if xff else b""
    return (b"GET " + path + b" HTTP/1.1\r\nHost: t\r\n"
            b"Authorization: Bearer igt_not_a_token\r\n" + extra + b"\r\n")


def refused_total(evs, kind, **match):
    return sum(e["count"] for e in evs if e["type"] == kind and
               all(e.get(k) == v for k, v in match.items()))


class Flood(unittest.TestCase):
    """The default interval (60 s): a flood writes (almost) nothing until
    the interval passes or the server stops; then one event per key."""

    def test_a_flood_of_bad_tokens_adds_a_few_leaves(self):
        srv = start()
        try:
            before = leaf_count(srv)
            t0 = time.time()
            per = FLOOD_N // 4
            counts = [None] * 4

            def run(i):
                n = per if i < 3 else FLOOD_N - 3 * per
                counts[i] = pipelined(srv, n, bad_token_request())

            threads = [threading.Thread(target=run, args=(i,))
                       for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.time() - t0
            self.assertEqual(sum(c.get(401, 0) for c in counts), FLOOD_N,
                             counts)
            # The server still answers, and the flood left at most one leaf
            # per interval begun (one key: one address, one reason).
            self.assertEqual(call(srv, "GET", "/healthz")[0], 200)
            added = leaf_count(srv) - before
            self.assertLessEqual(added, 1 + int(elapsed // 60) + 1,
                                 "%d leaves for %d refusals in %.1f s"
                                 % (added, FLOOD_N, elapsed))
            self.assertGreaterEqual(metric(srv, "intentgate_refusals_total"),
                                    FLOOD_N)
        finally:
            finish(srv)
        # Stopping flushed what was counted: nothing recorded is lost.
        evs = events(srv)
        auth = [e for e in evs if e["type"] == "auth.refused"]
        self.assertLessEqual(len(auth), 2 + int(elapsed // 60))
        self.assertEqual(refused_total(evs, "auth.refused"), FLOOD_N)
        e = auth[-1]
        self.assertEqual((e["client"], e["reason"]),
                         ("127.0.0.1", "UNAUTHENTICATED"), e)
        self.assertNotIn("principal", e)
        self.assertLessEqual(e["first"], e["last"])
        self.assertEqual([x for x in evs if x["type"] == "auth.failed"], [])
        # The log still verifies.
        out = subprocess.run(
            [BIN, "audit", "verify", "--db", srv.store(), "--key",
             srv.env["INTENTGATE_AUDIT_KEY"]],
            capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        srv.cleanup()


class Interval(unittest.TestCase):
    """refusal_log_interval = 60: aggregated events appear while running,
    one per key per interval, written by the server on its own - when the
    test clock has moved the interval on."""

    @classmethod
    def setUpClass(cls):
        cls.srv = start(top="refusal_log_interval = 60\n", slack=True,
                        clock=True)
        cls.env = cls.srv.env

    @classmethod
    def tearDownClass(cls):
        finish(cls.srv)
        cls.srv.cleanup()

    def wait_total(self, kind, want, timeout=20, **match):
        self.srv.advance(60)
        deadline = time.time() + timeout
        while time.time() < deadline:
            evs = events(self.srv)
            if refused_total(evs, kind, **match) >= want:
                return evs
            time.sleep(0.1)
        self.fail("%s %r: want %d, have %d" % (
            kind, match, want, refused_total(events(self.srv), kind,
                                             **match)))

    def test_auth_refusals_by_key(self):
        agent = self.env["INTENTGATE_AGENT_TOKEN"]
        got = pipelined(self.srv, 300, bad_token_request(b"/v1/intents/y"))
        self.assertEqual(got, {401: 300})
        # A known token where its role may not go: 403, with the principal.
        for _ in range(3):
            st, _, _ = call(self.srv, "GET", "/v1/audit/leaves?start=0&end=1",
                            agent)
            self.assertEqual(st, 403)
        evs = self.wait_total("auth.refused", 3, reason="FORBIDDEN")
        e = [x for x in evs if x["type"] == "auth.refused" and
             x["reason"] == "FORBIDDEN"][-1]
        self.assertEqual(e["principal"], {"id": "dev-agent", "role": "agent"})
        self.wait_total("auth.refused", 300, reason="UNAUTHENTICATED")
        text = json.dumps(events(self.srv))
        self.assertNotIn("igt_not_a_token", text)
        self.assertNotIn(agent, text)

    def test_failed_logins_are_aggregated(self):
        for _ in range(8):  # 5 LOGIN_FAILED, then LOGIN_RATE_LIMITED
            st, body, _ = login(self.srv, "second", "wrong-password-1")
            self.assertIn(st, (401, 429), body)
        evs = self.wait_total("login.refused", 8,
                              principal={"id": "second", "role": "approver"})
        by_reason = {}
        for e in evs:
            if e["type"] == "login.refused" and \
                    e.get("principal", {}).get("id") == "second":
                by_reason[e["reason"]] = by_reason.get(e["reason"], 0) + \
                    e["count"]
        # Five failures, then the id backs off (a slow machine may let a
        # sixth through after the first wait).
        self.assertEqual(sum(by_reason.values()), 8, by_reason)
        self.assertGreaterEqual(by_reason.get("LOGIN_FAILED", 0), 5)
        self.assertGreaterEqual(by_reason.get("LOGIN_RATE_LIMITED", 0), 1)
        self.assertEqual(typed(self.srv, "approver.login_failed"), [])

    def test_redeem_and_outcome_refusals(self):
        st, body, _ = self.srv.submit("payments.refund", "o/r1",
                                      {"amount": 1})
        self.assertEqual(body["decision"], "ALLOW", body)
        grant, iid = body["grant"], body["intent_id"]
        self.assertEqual(self.srv.redeem(grant, iid)[0], 200)
        self.assertEqual(self.srv.redeem(grant, iid)[0], 409)  # replayed
        forged = grant[:-4] + ("AAAA" if not grant.endswith("AAAA")
                               else "BBBB")
        self.assertEqual(self.srv.redeem(forged, iid)[0], 403)
        st, out, _ = self.srv.call(
            "POST", "/v1/executions/%s/outcome" % ("0" * 36),
            self.env["INTENTGATE_EXECUTOR_TOKEN"], {"outcome": "COMPLETED"})
        self.assertEqual(st, 409, out)
        who = {"id": "dev-executor", "role": "executor"}
        self.wait_total("grant.refused", 1, reason="GRANT_ALREADY_REDEEMED",
                        principal=who)
        self.wait_total("grant.refused", 1, reason="GRANT_INVALID",
                        principal=who)
        self.wait_total("outcome.refused", 1, reason="NOT_REDEEMED",
                        principal=who)

    def test_bad_slack_signatures(self):
        body = "payload=" + urllib.parse.quote(json.dumps({"type": "x"}))
        ts = str(self.srv.now())
        secret = self.env["INTENTGATE_SLACK_SIGNING_SECRET"]
        good = "v0=" + hmac.new(secret.encode(),
                                ("v0:%s:%s" % (ts, body)).encode(),
                                hashlib.sha256).hexdigest()
        bad = "v0=" + "0" * 64
        h = {"Content-Type": "application/x-www-form-urlencoded",
             "X-Slack-Request-Timestamp": ts}
        for _ in range(4):
            st, _, _ = call(self.srv, "POST", "/slack/interactions",
                            raw=body.encode(),
                            headers=dict(h, **{"X-Slack-Signature": bad}))
            self.assertEqual(st, 401)
        stale = dict(h, **{"X-Slack-Request-Timestamp": str(int(ts) - 3600),
                           "X-Slack-Signature": good})
        self.assertEqual(call(self.srv, "POST", "/slack/interactions",
                              raw=body.encode(), headers=stale)[0], 401)
        self.wait_total("slack.refused", 4, reason="SLACK_SIGNATURE_INVALID",
                        client="127.0.0.1")
        self.wait_total("slack.refused", 1, reason="SLACK_STALE_REQUEST")


class Lockout(unittest.TestCase):
    """Failures of other ids from the same address never refuse a correct
    password; an id's own failures back it off, except for a device that
    signed in as that id before."""

    @classmethod
    def setUpClass(cls):
        cls.srv = start(extra="\n[approvals]\nlogin_max_failures = 2\n",
                        approvers=("second", "web-user"))
        cls.pw = cls.srv.env["INTENTGATE_APPROVER_PASSWORD"]

    @classmethod
    def tearDownClass(cls):
        finish(cls.srv)
        cls.srv.cleanup()

    def test_address_failures_only_delay(self):
        ADDR = "127.0.0.5"  # an address of its own: the others stay fast
        # 2 x 10 = 20 failures from one address trip the address limit;
        # send 30 with as many different (unknown) approver ids.
        delayed = metric(self.srv, "intentgate_login_delayed_total")
        res = [None] * 30

        def fail(i):
            res[i] = login(self.srv, "stranger-%d" % i, "wrong-password",
                           source=ADDR)[0]

        threads = [threading.Thread(target=fail, args=(i,))
                   for i in range(30)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(set(res), {401}, res)
        # The address is slowed now, never refused: the dev approver, who
        # has no failures, signs in.
        st, body, _ = login(self.srv, "dev-approver", self.pw, source=ADDR)
        self.assertEqual(st, 200, body)
        self.assertGreater(metric(self.srv, "intentgate_login_delayed_total"),
                           delayed)

    def test_id_backoff_and_the_device_token(self):
        st, body, _ = login(self.srv, "second", self.pw)
        self.assertEqual(st, 200, body)
        device = body["device"]
        self.assertTrue(device.startswith("igd_"), body)
        for _ in range(2):
            self.assertEqual(login(self.srv, "second", "wrong-password")[0],
                             401)
        # "second" now backs off: even the right password waits.
        st, body, hdrs = login(self.srv, "second", self.pw)
        self.assertEqual(st, 429, body)
        self.assertEqual(body["error"]["code"], "LOGIN_RATE_LIMITED")
        self.assertGreaterEqual(int(header(hdrs, "Retry-After")[0]), 1)
        # A forged device token is no device: the id's backoff applies.
        self.assertEqual(login(self.srv, "second", self.pw,
                               device="igd_" + "A" * 75)[0], 429)
        # The browser that signed in before gets in.
        st, body, _ = login(self.srv, "second", self.pw, device=device)
        self.assertEqual(st, 200, body)
        # A device token is bound to its approver id.
        st, body, _ = login(self.srv, "dev-approver", "wrong-password",
                            device=device)
        self.assertEqual(st, 401, body)
        # A device token's own failures back off that device only.
        for _ in range(2):
            self.assertEqual(login(self.srv, "second", "wrong-password",
                                   device=device)[0], 401)
        self.assertEqual(login(self.srv, "second", self.pw,
                               device=device)[0], 429)

    def test_web_login_sets_and_honours_the_device_cookie(self):
        # Sign in through the page, keep the device cookie.
        st, page, hdrs = call(self.srv, "GET", "/ui/login")
        self.assertEqual(st, 200)
        csrf = re.search(r"ig_login_csrf=([^;]+)",
                         header(hdrs, "Set-Cookie")[0]).group(1)

        def web_login(pw, device=None):
            cookies = "ig_login_csrf=" + csrf
            if device:
                cookies += "; ig_device=" + device
            form = urllib.parse.urlencode({"approver": "web-user",
                                           "password": pw, "csrf": csrf})
            return call(self.srv, "POST", "/ui/login", raw=form.encode(),
                        headers={"Content-Type":
                                 "application/x-www-form-urlencoded",
                                 "Cookie": cookies})

        # web-user has the dev password (setUpClass).
        st, _, hdrs = web_login(self.pw)
        self.assertEqual(st, 303)
        cookies = " ".join(header(hdrs, "Set-Cookie"))
        m = re.search(r"ig_device=(igd_[A-Za-z0-9_-]+);", cookies)
        self.assertIsNotNone(m, cookies)
        self.assertIn("HttpOnly", cookies)
        for _ in range(2):
            self.assertEqual(web_login("wrong-password")[0], 401)
        self.assertEqual(web_login(self.pw)[0], 429)
        self.assertEqual(web_login(self.pw, m.group(1))[0], 303)


class Proxies(unittest.TestCase):
    """127.0.0.1 and 10.0.0.0/8 are trusted proxies; 127.0.0.2 is not."""

    @classmethod
    def setUpClass(cls):
        cls.srv = start(top="trusted_proxies = 127.0.0.1, 10.0.0.0/8\n"
                            "refusal_log_interval = 3600\n",
                        extra="\n[approvals]\nlogin_max_failures = 2\n")
        cls.pw = cls.srv.env["INTENTGATE_APPROVER_PASSWORD"]

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        cls.srv.cleanup()

    def test_clients_named_by_the_rightmost_untrusted_hop(self):
        cases = [
            ("198.51.100.7", None),                       # one hop
            ("203.0.113.9, 10.1.2.3", None),              # a chain
            ("6.6.6.6, 203.0.113.10", None),              # spoofed left part
            ("garbage", None),                            # not an address
            ("10.9.9.9", None),                           # all trusted
            ("[2001:db8::1]:443, 10.0.0.1", None),        # IPv6 with port
            ("::ffff:192.0.2.1", None),                   # mapped IPv4
            ("198.51.100.99", "127.0.0.2"),               # untrusted peer
        ]
        for xff, source in cases:
            st, _, _ = call(self.srv, "GET", "/v1/intents/z",
                            "igt_not_a_token",
                            headers={"X-Forwarded-For": xff}, source=source)
            self.assertEqual(st, 401)
        # The Forwarded header (RFC 7239) is not read at all.
        st, _, _ = call(self.srv, "GET", "/v1/intents/z", "igt_not_a_token",
                        headers={"Forwarded": "for=198.51.100.200"})
        self.assertEqual(st, 401)
        # Two headers: one list, in order.
        req = (b"GET /v1/intents/z HTTP/1.1\r\nHost: t\r\n"
               b"Authorization: Bearer igt_not_a_token\r\n"
               b"X-Forwarded-For: 6.6.6.6\r\n"
               b"X-Forwarded-For: 203.0.113.11\r\n\r\n")
        self.assertEqual(pipelined(self.srv, 1, req), {401: 1})
        # More headers than hops are read: the rightmost still count (a
        # client sending many cannot push out what the proxy appended).
        req = (b"GET /v1/intents/z HTTP/1.1\r\nHost: t\r\n"
               b"Authorization: Bearer igt_not_a_token\r\n" +
               b"".join(b"X-Forwarded-For: 6.6.6.%d\r\n" % i
                        for i in range(40)) +
               b"X-Forwarded-For: 203.0.113.77\r\n\r\n")
        self.assertEqual(pipelined(self.srv, 1, req), {401: 1})
        # Failed logins behind the proxy count against the real client.
        for i in range(25):
            self.assertEqual(login(self.srv, "x%d" % i, "wrong-password",
                                   xff="198.51.100.50")[0], 401)
        st, body, _ = login(self.srv, "dev-approver", self.pw,
                            xff="198.51.100.50")
        self.assertEqual(st, 200, body)
        delayed = metric(self.srv, "intentgate_login_delayed_total")
        st, body, _ = login(self.srv, "second", self.pw, xff="198.51.100.51")
        self.assertEqual(st, 200, body)
        self.assertEqual(metric(self.srv, "intentgate_login_delayed_total"),
                         delayed)  # another client behind the proxy: no delay
        finish(self.srv)
        evs = events(self.srv)
        self.srv.cleanup()
        clients = {e["client"] for e in evs if e["type"] == "auth.refused"}
        self.assertEqual(clients, {"198.51.100.7", "203.0.113.9",
                                   "203.0.113.10", "127.0.0.1", "10.9.9.9",
                                   "2001:db8::1", "192.0.2.1", "127.0.0.2",
                                   "203.0.113.11", "203.0.113.77"})
        self.assertEqual(refused_total(evs, "login.refused",
                                       client="198.51.100.50"), 25)


if __name__ == "__main__":
    run_tests()
