"""test_ui.py - the approval web pages end to end: the real `intentgate
serve --dev` on a free loopback port, driven the way a browser drives /ui
(cookies, urlencoded forms, redirects), while an agent waits on the
escalated intent over the JSON API.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_ui.py

Exits 0 only when every test passed; the last line reads "N passed, M
failed".
"""
import html
import http.client
import os
import re
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, run_tests  # noqa: E402

CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
FORM = "application/x-www-form-urlencoded"
XSS = "<script>alert(1)</script>"


class Reply:
    def __init__(self, resp, body):
        self.status = resp.status
        self.body = body.decode("utf-8")
        self.msg = resp.msg

    def header(self, name):
        return self.msg.get(name)

    def cookies(self):
        """Set-Cookie headers as {name: (value, {attr: value})}."""
        out = {}
        for line in self.msg.get_all("Set-Cookie") or []:
            parts = [p.strip() for p in line.split(";")]
            name, _, value = parts[0].partition("=")
            attrs = {}
            for p in parts[1:]:
                k, _, v = p.partition("=")
                attrs[k.lower()] = v
            out[name] = (value, attrs)
        return out

    def element(self, ident):
        """The inner HTML of the element with id ident (first match)."""
        m = re.search(r'<(\w+)[^>]*\bid="%s"[^>]*>(.*?)</\1>' % re.escape(ident),
                      self.body, re.S)
        return m.group(2) if m else None

    def text(self, ident):
        inner = self.element(ident)
        if inner is None:
            return None
        return html.unescape(re.sub(r"<[^>]+>", "", inner)).strip()

    def hidden(self, name, form_id=None):
        body = self.body
        if form_id is not None:
            m = re.search(r'<form[^>]*id="%s".*?</form>' % form_id, body, re.S)
            body = m.group(0) if m else ""
        m = re.search(r'<input type="hidden" name="%s" value="([^"]*)"' % name,
                      body)
        return html.unescape(m.group(1)) if m else None


class Browser:
    """A cookie jar and urlencoded forms over http.client."""

    def __init__(self, srv):
        self.srv = srv
        self.jar = {}

    def request(self, method, path, form=None, ctype=FORM, raw=None,
                cookies=None):
        conn = http.client.HTTPConnection(self.srv.host, self.srv.port,
                                          timeout=30)
        headers = {}
        jar = dict(self.jar) if cookies is None else cookies
        if jar:
            headers["Cookie"] = "; ".join("%s=%s" % kv for kv in jar.items())
        data = raw
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
        if data is not None:
            headers["Content-Type"] = ctype
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            reply = Reply(resp, resp.read())
        finally:
            conn.close()
        for name, (value, attrs) in reply.cookies().items():
            if attrs.get("max-age") == "0":
                self.jar.pop(name, None)
            else:
                self.jar[name] = value
        return reply

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, form, **kw):
        return self.request("POST", path, form=form, **kw)

    def login(self, approver=None, password=None):
        page = self.get("/ui/login")
        return self.post("/ui/login", {
            "csrf": page.hidden("csrf"),
            "approver": approver or self.srv.env["INTENTGATE_APPROVER_ID"],
            "password": password or self.srv.env["INTENTGATE_APPROVER_PASSWORD"],
        })


class UiServer(unittest.TestCase):
    """One dev server per class; a clean exit is part of the test."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server.dev()
        cls.env = cls.srv.env

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        log = cls.srv.log()
        cls.srv.cleanup()
        # A clean exit: no sanitizer report, no leak, status 0.
        if rc != 0 or "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))

    def signed_in(self):
        b = Browser(self.srv)
        r = b.login()
        self.assertEqual(r.status, 303, r.body)
        self.assertIn("ig_session", b.jar)
        return b

    def escalate(self, amount=500, **params):
        params["amount"] = amount
        st, body, _ = self.srv.submit("payments.refund", "orders/%d" % amount,
                                      params, context={"ticket": "T-7"})
        self.assertEqual(st, 201, body)
        self.assertEqual(body["decision"], "ESCALATE", body)
        return body

    def state(self, intent_id, wait=None):
        path = "/v1/intents/" + intent_id
        if wait is not None:
            path += "?wait=%d" % wait
        st, body, _ = self.srv.call("GET", path,
                                    self.env["INTENTGATE_AGENT_TOKEN"],
                                    timeout=wait + 20 if wait else 30)
        self.assertEqual(st, 200, body)
        return body

    def assertSecurityHeaders(self, r):
        self.assertEqual(r.header("Content-Security-Policy"), CSP)
        self.assertEqual(r.header("X-Frame-Options"), "DENY")
        self.assertEqual(r.header("Referrer-Policy"), "no-referrer")
        self.assertEqual(r.header("X-Content-Type-Options"), "nosniff")
        self.assertEqual(r.header("Cache-Control"), "no-store")

    def assertRedirect(self, r, where):
        self.assertEqual(r.status, 303, r.body)
        self.assertEqual(r.header("Location"), where)
        self.assertSecurityHeaders(r)

    def assertHtml(self, r, status):
        self.assertEqual(r.status, status, r.body)
        self.assertEqual(r.header("Content-Type"), "text/html; charset=utf-8")
        self.assertSecurityHeaders(r)
        self.assertNotIn("<script", r.body.lower())
        self.assertNotIn("style=", r.body)


class Pages(UiServer):
    def test_redirects_without_a_session(self):
        b = Browser(self.srv)
        self.assertRedirect(b.get("/ui"), "/ui/approvals")
        self.assertRedirect(b.get("/ui/"), "/ui/approvals")
        self.assertRedirect(b.get("/ui/approvals"), "/ui/login")
        self.assertRedirect(
            b.get("/ui/approvals/00000000-0000-4000-8000-000000000000"),
            "/ui/login")
        self.assertRedirect(b.post("/ui/approvals/x/vote", {"vote": "approve"}),
                            "/ui/login")
        # A forged or stale session is no session.
        for bad in ("igs_" + "A" * 43, "igs_short", "x" * 47, ""):
            r = b.get("/ui/approvals", cookies={"ig_session": bad})
            self.assertRedirect(r, "/ui/login")

    def test_login_page_and_its_cookie(self):
        b = Browser(self.srv)
        r = b.get("/ui/login")
        self.assertHtml(r, 200)
        self.assertIn('<meta name="viewport"', r.body)
        self.assertIn('<form method="post" action="/ui/login"', r.body)
        for frag in ('id="approver" name="approver"',
                     'id="password" name="password" type="password"',
                     'id="login"'):
            self.assertIn(frag, r.body)
        value, attrs = r.cookies()["ig_login_csrf"]
        self.assertRegex(value, r"^[A-Za-z0-9_-]{43}$")
        self.assertEqual(r.hidden("csrf"), value)
        self.assertEqual(attrs.get("path"), "/ui")
        self.assertIn("httponly", attrs)
        self.assertEqual(attrs.get("samesite"), "Strict")
        self.assertNotIn("secure", attrs)  # dev: no TLS
        # Another visit keeps the token (another tab's form stays valid).
        self.assertEqual(b.get("/ui/login").hidden("csrf"), value)
        # A different browser gets a different token.
        self.assertNotEqual(Browser(self.srv).get("/ui/login").hidden("csrf"),
                            value)

    def test_login_sets_a_strict_session_cookie(self):
        b = Browser(self.srv)
        r = b.login()
        self.assertRedirect(r, "/ui/approvals")
        value, attrs = r.cookies()["ig_session"]
        self.assertRegex(value, r"^igs_[A-Za-z0-9_-]{43}$")
        self.assertEqual(attrs.get("path"), "/ui")
        self.assertIn("httponly", attrs)
        self.assertEqual(attrs.get("samesite"), "Strict")
        self.assertEqual(attrs.get("max-age"), "28800")
        page = b.get("/ui/approvals")
        self.assertHtml(page, 200)
        self.assertEqual(page.text("approver-name"), "Dev Approver")
        # Signed in, the login page sends you on.
        self.assertRedirect(b.get("/ui/login"), "/ui/approvals")

    def test_wrong_password_and_unknown_id_read_the_same(self):
        b = Browser(self.srv)
        wrong = b.login(password="not-the-password")
        self.assertHtml(wrong, 401)
        self.assertNotIn("ig_session", wrong.cookies())
        self.assertNotIn("ig_session", b.jar)
        self.assertIn("do not match", wrong.text("error"))
        nobody = Browser(self.srv).login(approver="nobody-here",
                                         password="not-the-password")
        self.assertHtml(nobody, 401)
        self.assertEqual(nobody.text("error"), wrong.text("error"))
        self.assertNotIn("ig_session", nobody.cookies())
        # The id is filled in again, escaped; the password never is.
        self.assertIn('value="%s"' % self.env["INTENTGATE_APPROVER_ID"],
                      wrong.body)
        self.assertNotIn("not-the-password", wrong.body)

    def test_login_needs_the_double_submit_token(self):
        b = Browser(self.srv)
        token = b.get("/ui/login").hidden("csrf")
        creds = {"approver": self.env["INTENTGATE_APPROVER_ID"],
                 "password": self.env["INTENTGATE_APPROVER_PASSWORD"]}
        # No field, a wrong field, no cookie: refused before any check.
        for form, cookies in ((dict(creds), None),
                              (dict(creds, csrf="A" * 43), None),
                              (dict(creds, csrf=token), {})):
            r = b.post("/ui/login", form, cookies=cookies)
            self.assertHtml(r, 403)
            self.assertNotIn("ig_session", r.cookies())
            self.assertIsNotNone(r.text("error"))
        r = b.post("/ui/login", dict(creds, csrf=b.jar["ig_login_csrf"]))
        self.assertRedirect(r, "/ui/approvals")

    def test_stylesheet(self):
        r = Browser(self.srv).get("/ui/static/style.css")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "text/css; charset=utf-8")
        self.assertSecurityHeaders(r)
        self.assertIn("button.approve", r.body)

    def test_methods_types_and_paths(self):
        b = self.signed_in()
        for method, path, allow in (("PUT", "/ui/login", "GET, POST"),
                                    ("GET", "/ui/logout", "POST"),
                                    ("DELETE", "/ui/approvals", "GET"),
                                    ("POST", "/ui/static/style.css", "GET")):
            r = b.request(method, path, raw=b"")
            self.assertHtml(r, 405)
            self.assertEqual(r.header("Allow"), allow)
        for ctype in ("application/json", "text/plain",
                      "multipart/form-data; boundary=x"):
            r = b.request("POST", "/ui/logout", raw=b"csrf=x", ctype=ctype)
            self.assertHtml(r, 415)
        r = b.request("POST", "/ui/logout", raw=b"csrf=%zz")
        self.assertHtml(r, 400)
        r = b.request("POST", "/ui/logout", raw=b"csrf=a&csrf=b")
        self.assertHtml(r, 400)
        r = b.request("POST", "/ui/logout", raw=b"csrf=" + b"a" * 70000)
        self.assertEqual(r.status, 413)
        for path in ("/ui/nowhere", "/ui/approvals/not%20an%20id",
                     "/ui/approvals/00000000-0000-4000-8000-000000000000",
                     "/ui/approvals/x/vote/more"):
            self.assertHtml(b.get(path), 404)
        self.assertIn("ig_session", b.jar)  # none of that signed us out

    def test_list_and_detail_show_the_intent_escaped(self):
        ans = self.escalate(512, note=XSS, **{"<b>key</b>": "\u202eevil"})
        b = self.signed_in()
        r = b.get("/ui/approvals")
        self.assertHtml(r, 200)
        m = re.search(r'<a class="approval-link" href="(/ui/approvals/%s)">'
                      r'(.*?)</a>' % ans["approval"]["id"], r.body, re.S)
        self.assertIsNotNone(m, r.body)
        item = html.unescape(re.sub(r"<[^>]+>", " ", m.group(2)))
        for want in ("payments.refund", "orders/512", "dev-agent", "0 of 1",
                     ans["approval"]["expires_at"]):
            self.assertIn(want, item)

        d = b.get(m.group(1))
        self.assertHtml(d, 200)
        self.assertEqual(d.text("status"), "PENDING")
        self.assertEqual(d.text("action"), "payments.refund")
        self.assertEqual(d.text("resource"), "orders/512")
        self.assertEqual(d.text("principal"), "dev-agent")
        self.assertEqual(d.text("tenant"), "dev")
        self.assertEqual(d.text("intent-hash"), ans["intent_hash"])
        self.assertEqual(d.text("policy-revision"), ans["policy_revision"])
        self.assertIn("REFUND_NEEDS_APPROVAL", d.text("reasons"))
        self.assertIsNotNone(d.text("message"))
        self.assertEqual(d.text("expires-at"), ans["approval"]["expires_at"])
        self.assertIsNotNone(d.text("created-at"))
        self.assertIn("No votes yet", d.text("votes"))
        self.assertIn('"ticket": "T-7"', d.text("context"))
        params = d.element("params")
        self.assertIn("&quot;amount&quot;: 512", params)
        self.assertIn("\n  ", params)  # pretty-printed
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", params)
        self.assertIn("&lt;b&gt;key&lt;/b&gt;", params)
        self.assertIn("\\u202eevil", params)  # a bidi override is shown
        self.assertNotIn(XSS, d.body)
        self.assertIn('"note": "%s"' % XSS, d.text("params"))
        # The vote form binds the hash shown and the session's token.
        self.assertEqual(d.hidden("intent_hash", "vote-form"),
                         ans["intent_hash"])
        self.assertEqual(d.hidden("csrf", "vote-form"),
                         d.hidden("csrf"))  # same token as the logout form
        for frag in ('action="/ui/approvals/%s/vote"' % ans["approval"]["id"],
                     '<textarea id="comment" name="comment"',
                     'id="approve" name="vote" value="approve"',
                     'id="deny" name="vote" value="deny"'):
            self.assertIn(frag, d.body)

    def test_a_request_for_other_groups_does_not_exist(self):
        # A tag push escalates to "release"; the dev approver is not in it.
        st, ans, _ = self.srv.submit("git.push", "app",
                                     {"refs": ["refs/tags/v9.9.9"]})
        self.assertEqual((st, ans.get("decision")), (201, "ESCALATE"), ans)
        aid = ans["approval"]["id"]
        b = self.signed_in()
        r = b.get("/ui/approvals/" + aid)
        self.assertHtml(r, 404)
        # The very page an unknown id gets: nothing tells them apart.
        unknown = b.get("/ui/approvals/00000000-0000-4000-8000-000000000000")
        self.assertEqual(r.body, unknown.body)
        self.assertNotIn("refs/tags", r.body)
        csrf = b.get("/ui/approvals").hidden("csrf")
        r = b.post("/ui/approvals/%s/vote" % aid,
                   {"csrf": csrf, "intent_hash": ans["intent_hash"],
                    "vote": "approve"})
        self.assertHtml(r, 404)
        self.assertNotIn(aid, b.get("/ui/approvals").body)

    def test_claims_are_labelled_as_claims(self):
        st, ans, _ = self.srv.submit(
            "payments.refund", "orders/claims", {"amount": 424},
            context={"requested_by": "bob", "ticket": "T-8"})
        self.assertEqual(ans.get("decision"), "ESCALATE", ans)
        b = self.signed_in()
        d = b.get("/ui/approvals/" + ans["approval"]["id"])
        self.assertHtml(d, 200)
        self.assertNotIn("On behalf of", d.body)
        self.assertEqual(d.text("requested-by"),
                         "claimed by the agent: bob")
        self.assertIn("Context, claimed by the agent (not verified)", d.body)
        self.assertIn("Agent (authenticated)", d.body)
        self.assertEqual(d.text("principal"), "dev-agent")

    def test_no_field_can_inject_markup(self):
        """Review attack (issue 12): markup in every field the agent or
        another approver controls, on the list and the detail page."""
        evil = '"><img src=x onerror=alert(1)>\'<svg/onload=alert(2)>'
        # file.write escalates with the path in the resource and in the
        # policy's message.
        st, ans, _ = self.srv.submit(
            "file.write", "/tmp/" + evil.replace("/", "_"),
            {evil: evil, "nested": [{evil: [evil]}]},
            context={"requested_by": {evil: evil}, evil: evil,
                     "Agent (authenticated)": "root"})
        self.assertEqual((st, ans.get("decision")), (201, "ESCALATE"), ans)
        aid = ans["approval"]["id"]
        b = self.signed_in()
        lst = b.get("/ui/approvals")
        self.assertHtml(lst, 200)
        d = b.get("/ui/approvals/" + aid)
        self.assertHtml(d, 200)
        for page in (lst, d):
            low = page.body.lower()
            self.assertNotIn("<img", low)
            self.assertNotIn("<svg", low)
            # No quote from a value can end an attribute: none is left raw.
            self.assertNotIn('"&gt;', page.body.replace("&quot;&gt;", ""))
        self.assertIn("onerror=alert(1)", d.text("resource"))
        self.assertIn("onerror=alert(1)", d.text("message"))
        self.assertIn("claimed by the agent", d.text("requested-by"))
        self.assertIn("<svg/onload=alert(2)>", d.text("requested-by"))
        # A context key that reads like a PDP label stays inside the
        # claims; the established field says who really asked.
        self.assertIn('"Agent (authenticated)": "root"', d.text("context"))
        self.assertEqual(d.text("principal"), "dev-agent")
        self.assertEqual(d.body.count('id="principal"'), 1)
        # A comment from another approver is markup-free too.
        form = self.vote_form(b, aid)
        form["comment"] = evil
        r = b.post("/ui/approvals/%s/vote" % aid, form)
        self.assertRedirect(r, "/ui/approvals/%s?voted=1" % aid)
        d = b.get("/ui/approvals/" + aid)
        self.assertHtml(d, 200)
        self.assertNotIn("<img", d.body.lower())
        self.assertNotIn("<svg", d.body.lower())
        self.assertIn(evil, d.text("votes"))

    def vote_form(self, b, approval_id):
        d = b.get("/ui/approvals/" + approval_id)
        self.assertHtml(d, 200)
        return {"csrf": d.hidden("csrf", "vote-form"),
                "intent_hash": d.hidden("intent_hash", "vote-form"),
                "vote": "approve", "comment": "ok by me"}

    def assertNothingRecorded(self, b, ans):
        d = b.get("/ui/approvals/" + ans["approval"]["id"])
        self.assertEqual(d.text("status"), "PENDING")
        self.assertIn("No votes yet", d.text("votes"))
        self.assertEqual(self.state(ans["intent_id"])["state"],
                         "PENDING_APPROVAL")

    def test_vote_needs_the_session_token(self):
        ans = self.escalate(600)
        b = self.signed_in()
        form = self.vote_form(b, ans["approval"]["id"])
        path = "/ui/approvals/%s/vote" % ans["approval"]["id"]
        login_token = b.get("/ui/login", cookies={}).hidden("csrf")
        for csrf in (None, "", "A" * 43, login_token, form["csrf"][:-1]):
            f = dict(form)
            if csrf is None:
                del f["csrf"]
            else:
                f["csrf"] = csrf
            r = b.post(path, f)
            self.assertHtml(r, 403)
        # Another approver session's token is not this session's.
        other = self.signed_in()
        r = other.post(path, form)
        self.assertHtml(r, 403)
        self.assertNothingRecorded(b, ans)

    def test_vote_on_a_changed_hash_is_refused(self):
        ans = self.escalate(700)
        b = self.signed_in()
        form = self.vote_form(b, ans["approval"]["id"])
        form["intent_hash"] = "sha256:" + "0" * 64
        r = b.post("/ui/approvals/%s/vote" % ans["approval"]["id"], form)
        self.assertHtml(r, 409)
        self.assertIn("INTENT_HASH_MISMATCH", r.text("error"))
        self.assertNothingRecorded(b, ans)
        form["vote"] = "maybe"
        self.assertHtml(b.post("/ui/approvals/%s/vote" % ans["approval"]["id"],
                               form), 400)
        self.assertNothingRecorded(b, ans)

    def test_approve_releases_the_waiting_agent(self):
        ans = self.escalate(500)
        aid, iid = ans["approval"]["id"], ans["intent_id"]
        b = self.signed_in()
        form = self.vote_form(b, aid)
        waited = {}

        def long_poll():
            waited["t0"] = time.time()
            waited["body"] = self.state(iid, wait=5)
            waited["t1"] = time.time()

        agent = threading.Thread(target=long_poll)
        agent.start()
        self.srv.wait_parked(1)  # the agent is parked
        form["comment"] = "refund checked <ok>"
        r = b.post("/ui/approvals/%s/vote" % aid, form)
        self.assertRedirect(r, "/ui/approvals/%s?voted=1" % aid)
        agent.join(30)
        self.assertFalse(agent.is_alive())
        body = waited["body"]
        self.assertEqual(body["state"], "ALLOWED", body)
        self.assertTrue(body.get("grant"), body)
        self.assertLess(waited["t1"] - waited["t0"], 4.5)  # woken, not timed out
        st, red, _ = self.srv.redeem(body["grant"], iid)
        self.assertEqual(st, 200, red)

        d = b.get(r.header("Location"))
        self.assertHtml(d, 200)
        self.assertIn("Your approval was recorded", d.text("flash"))
        self.assertEqual(d.text("status"), "APPROVED")
        votes = d.text("votes")
        self.assertIn("APPROVE", votes)
        self.assertIn("Dev Approver", votes)
        self.assertIn("refund checked <ok>", votes)
        self.assertIn("web", votes)
        self.assertNotIn('id="vote-form"', d.body)
        # Decided: the outcome card, not a "cannot vote" notice.
        self.assertIsNone(d.element("cannot-vote"))
        self.assertIn("ALLOW", d.text("resolution"))
        # Without ?voted=1 there is no flash.
        self.assertIsNone(b.get("/ui/approvals/" + aid).element("flash"))
        # The list no longer offers it.
        self.assertNotIn(aid, b.get("/ui/approvals").body)

        # A second vote is refused, and says why.
        r = b.post("/ui/approvals/%s/vote" % aid, form)
        self.assertHtml(r, r.status)
        self.assertIn(r.status, (409, 410))
        self.assertRegex(r.text("error"),
                         r"ALREADY_VOTED|APPROVAL_RESOLVED")
        self.assertEqual(b.get("/ui/approvals/" + aid).text("votes")
                         .count("APPROVE"), 1)

    def test_deny_blocks_the_intent(self):
        ans = self.escalate(800)
        b = self.signed_in()
        form = self.vote_form(b, ans["approval"]["id"])
        form["vote"] = "deny"
        form["comment"] = ""
        r = b.post("/ui/approvals/%s/vote" % ans["approval"]["id"], form)
        self.assertRedirect(r, "/ui/approvals/%s?voted=1"
                            % ans["approval"]["id"])
        d = b.get(r.header("Location"))
        self.assertIn("Your denial was recorded", d.text("flash"))
        self.assertEqual(d.text("status"), "DENIED")
        body = self.state(ans["intent_id"])
        self.assertEqual(body["state"], "BLOCKED", body)
        self.assertNotIn("grant", body)

    def test_logout_ends_the_session(self):
        b = self.signed_in()
        session = b.jar["ig_session"]
        page = b.get("/ui/approvals")
        token = page.hidden("csrf")
        # Without the session's token: refused, still signed in.
        self.assertHtml(b.post("/ui/logout", {}), 403)
        self.assertHtml(b.post("/ui/logout", {"csrf": "A" * 43}), 403)
        self.assertHtml(b.get("/ui/approvals"), 200)
        r = b.post("/ui/logout", {"csrf": token})
        self.assertRedirect(r, "/ui/login")
        value, attrs = r.cookies()["ig_session"]
        self.assertEqual(value, "")
        self.assertEqual(attrs.get("max-age"), "0")
        # The old cookie, replayed, no longer opens anything.
        r = b.get("/ui/approvals", cookies={"ig_session": session})
        self.assertRedirect(r, "/ui/login")
        # Nor is the session usable on the JSON API.
        st, _, _ = self.srv.call("GET", "/v1/approvals", session)
        self.assertEqual(st, 401)


class Throttle(UiServer):
    """A server of its own: failed logins are counted per client address."""

    def test_empty_list_then_rate_limit(self):
        b = self.signed_in()
        r = b.get("/ui/approvals")
        self.assertHtml(r, 200)
        self.assertIn("Nothing is waiting for you", r.text("empty"))
        self.assertNotIn("approval-link", r.body)

        other = Browser(self.srv)
        for _ in range(5):
            r = other.login(password="wrong-password")
            self.assertHtml(r, 401)
        r = other.login(password="wrong-password")
        self.assertHtml(r, 429)
        self.assertIn("Too many", r.text("error"))
        self.assertNotIn("ig_session", r.cookies())
        # Even the right password is refused while the limit holds.
        r = other.login()
        self.assertHtml(r, 429)
        self.assertNotIn("ig_session", r.cookies())
        # A session opened before is unaffected.
        self.assertHtml(b.get("/ui/approvals"), 200)



if __name__ == "__main__":
    run_tests()
