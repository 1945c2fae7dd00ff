"""test_exec_url.py - issue 11's URL exactness suite.

The registry promises `GET {upstream}/db/{table}/rows` with query fields
q and sort. For hostile values of the path placeholder and of the query
fields, either the executor refuses BEFORE redemption (400 PARAMS_INVALID,
the grant unspent: the intent stays ALLOWED, executing it again gives the
same 400, not 409, and the PDP still redeems it) or the upstream - a raw
socket server keeping the request line's bytes, not http.server's parsed
path - sees byte for byte the template with the value percent-encoded:
every byte outside RFC 3986 unreserved as %XX in upper-case hex. Values
that are empty or made only of dots must be refused in a path. Nothing
else is acceptable: not a changed path, not FAILED_BEFORE_DISPATCH after
the grant was spent.

Also: a grant string with a NUL and more bytes after it is refused
(400 GRANT_MALFORMED), never truncated and spent.

    INTENTGATE_BIN=... INTENTGATE_EXECUTOR_BIN=... python3 tests/integration/test_exec_url.py
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec_harness as H  # noqa: E402

UNRESERVED = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                 b"0123456789-._~")


def enc(value):
    """RFC 3986 percent-encoding of the UTF-8 bytes, upper-case hex."""
    return "".join(chr(b) if b in UNRESERVED else "%%%02X" % b
                   for b in value.encode("utf-8", "surrogatepass"))


HOSTILE = [
    "..", ".", "", "...", "....", "%2e%2e", "%2E%2E", ".%2e", "%2e.",
    "%2F", "%2f", "/", "a/b", "../admin", "..%2fadmin", "..;", ";",
    ";x=1", "\\", "..\\..", "\\..\\", "@", "user@evil.example", "#",
    "#frag", "?", "?x=1", "&", "=", "+", " ", "a b", "\r\n",
    "x\r\nX-Injected: 1", "\t", "\u0000", "a\u0000b", "\u00e9",
    "\uff0e\uff0e", "\uff0e", "\u2025", "\u3002", "%", "%00", "%zz", "~",
    "-", "_", "a.b", ".hidden", "..a", "a..", "{table}", "{q}", "${HOME}",
    "\u007f", "\u0085", "\u2028", "\ufeff..", "A" * 4096, "\u00e9" * 4096,
    "." * 200, "%2e" * 50,
]
MUST_REFUSE = {"", ".", "..", "...", "....", "." * 200}


def short(v):
    r = repr(v)
    return r if len(r) < 40 else r[:30] + "...(%d chars)" % len(v)


class Upstream:
    def __init__(self, res):
        self.api = H.RawUpstream(res, lambda req: (
            200, [("Content-Type", "application/json")], b'{"rows":[]}'))
        self.url = self.api.url

    def lines_with(self, marker):
        m = marker.encode()
        return [r for r in self.api.requests if m in r.request_line]


ROWS = {"handler": "http", "credential": "db",
        "params": {"table": {"type": "string", "required": True},
                   "id": {"type": "string", "required": True},
                   "q": {"type": "string"}, "sort": {"type": "string"}},
        "http": {"method": "GET", "url": "${IG_URL_UP}/db/{table}/rows",
                 "credential_header": "Authorization",
                 "credential_prefix": "Bearer ",
                 "query_fields": ["q", "sort"], "timeout_ms": 5000}}


def rows2():
    a = json.loads(json.dumps(ROWS))
    a["http"]["url"] = "${IG_URL_UP}/db/{table}/rows/{id}?v=1"
    return a


class UrlExactness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.res = H.Resources()
        try:
            lay = H.Layout(cls.res, "clone")
            cls.pdp = H.start_custom_pdp(cls.res, lay.path("pdp"))
            cls.up = Upstream(cls.res)
            rows = json.loads(json.dumps(ROWS))
            rows["params"]["id"]["required"] = False
            cls.cred = "igcred-" + H.rand(12)
            cls.ex = H.ConfigExecutor(
                cls.res, lay.path("executor"), cls.pdp,
                {"actions": {"db.rows": rows, "db.rows2": rows2()}},
                credentials={"db": cls.cred},
                env={"IG_URL_UP": cls.up.url})
            cls.n = 0
        except BaseException:
            cls.res.close()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            rc = cls.ex.stop()
            cls.ex.check_log_clean([("credential", cls.cred)])
            if rc != 0:
                raise AssertionError("executor exit %s" % rc)
        finally:
            cls.res.close()

    def marker(self):
        type(self).n += 1
        return "case-%d" % self.n

    def attempt(self, action, params, expected_target, marker, refuse_ok=True,
                must_refuse=False):
        """One hostile call; returns a problem string or None."""
        st, b, _ = self.pdp.submit(action, "db", params)
        if st != 201 or not isinstance(b, dict) or b.get("decision") != \
                "ALLOW":
            self.kinds["refused by the PDP"] += 1
            if not any("\u0000" in str(v) for v in params.values()):
                return "the PDP did not grant it: %s %r" % (st, b)
            return None  # a NUL refused at intake: nothing was granted
        st, hdr, raw, out = self.ex.execute(b["intent"], b["grant"])
        seen = self.up.lines_with(marker)
        code = (out or {}).get("error", {}).get("code") \
            if isinstance(out, dict) else None
        if st == 400 and code == "PARAMS_INVALID" and refuse_ok:
            if seen:
                return "refused, yet the upstream saw %r" % (
                    seen[0].request_line,)
            state = self.pdp.state(b["intent_id"])
            if state != "ALLOWED":
                return "refused with the grant spent (state %s)" % state
            st2, _, raw2, _ = self.ex.execute(b["intent"], b["grant"])
            if st2 != 400:
                return "a second execute of the refused grant: %s %r" % (
                    st2, raw2[:200])
            st3, body3 = self.pdp.redeem_direct(b["grant"], b["intent_id"])
            if st3 != 200:
                return "the PDP does not redeem the unspent grant: %s %r" % (
                    st3, body3)
            self.kinds["refused before redemption"] += 1
            return None
        if must_refuse:
            return "must be refused before redemption, got %s %r (upstream "\
                "saw %r)" % (st, raw[:200], [r.request_line for r in seen])
        if st != 200 or not isinstance(out, dict) or \
                out.get("outcome") != "COMPLETED":
            return "neither refused nor sent exactly: %s %r (state %s)" % (
                st, raw[:300], self.pdp.state(b["intent_id"]))
        if len(seen) != 1:
            return "the upstream saw %d requests for it: %r" % (
                len(seen), [r.request_line[:200] for r in seen])
        want = b"GET " + expected_target.encode() + b" HTTP/1.1"
        if seen[0].request_line != want:
            return "the upstream saw %r, the template promises %r" % (
                seen[0].request_line[:300], want[:300])
        if "x-injected" in seen[0].headers:
            return "a header was injected"
        if seen[0].headers.get("authorization") != \
                ("Bearer " + self.cred).encode():
            return "the credential header is not as configured"
        self.kinds["sent byte for byte"] += 1
        return None

    def run_cases(self, cases):
        bad = []
        self.kinds = {"sent byte for byte": 0, "refused before redemption": 0,
                      "refused by the PDP": 0}
        for label, action, params, target, marker, must in cases:
            try:
                why = self.attempt(action, params, target, marker,
                                   must_refuse=must)
            except (AssertionError, OSError, ValueError) as e:
                why = "error: %s" % e
            if why:
                bad.append("%s: %s" % (label, why))
        print("  %d cases, %d problems; %s" % (
            len(cases), len(bad), ", ".join("%s: %d" % kv
                                            for kv in self.kinds.items())))
        if bad:
            self.fail("\n  ".join(bad))

    def test_path_placeholder(self):
        cases = []
        for v in HOSTILE:
            m = self.marker()
            cases.append(("table=%s" % short(v), "db.rows",
                          {"table": v, "q": m},
                          "/db/%s/rows?q=%s" % (enc(v), m), m,
                          v in MUST_REFUSE))
        self.run_cases(cases)

    def test_query_fields(self):
        cases = []
        for v in HOSTILE:
            m = self.marker()
            cases.append(("q=%s" % short(v), "db.rows",
                          {"table": "t", "q": v, "sort": m},
                          "/db/t/rows?q=%s&sort=%s" % (enc(v), m), m, False))
        for v in ("a&admin=1", "x=1", "#", "+", " ", "a+b c", "%26",
                  "&sort=x"):
            m = self.marker()
            cases.append(("sort=%s" % short(v), "db.rows",
                          {"table": "t", "q": m, "sort": v},
                          "/db/t/rows?q=%s&sort=%s" % (m, enc(v)), m, False))
        self.run_cases(cases)

    def test_two_placeholders_and_a_fixed_query(self):
        cases = []
        for t, i in (("..", "1"), ("a", ".."), ("a", ""), ("%2F", "1"),
                     ("a", "%2e%2e"), ("a/..", "b"), ("x", "?v=2"),
                     ("x", "#"), ("\u00e9", "\r\n"), ("a", "." * 3)):
            m = self.marker()
            cases.append(("table=%s id=%s" % (short(t), short(i)), "db.rows2",
                          {"table": t, "id": i, "q": m},
                          "/db/%s/rows/%s?v=1&q=%s" % (enc(t), enc(i), m), m,
                          t in MUST_REFUSE or i in MUST_REFUSE))
        self.run_cases(cases)

    def test_a_grant_with_a_nul_is_refused_never_truncated(self):
        bad = []
        for label, mangle in (
                ("NUL and more bytes after it",
                 lambda g: g + "\u0000garbage"),
                ("a trailing NUL", lambda g: g + "\u0000"),
                ("NUL then a copy of itself", lambda g: g + "\u0000" + g),
                ("NUL inside the footer", lambda g: g[:-5] + "\u0000" +
                 g[-5:])):
            m = self.marker()
            b = self.pdp.submit_ok("db.rows", "db", {"table": "t", "q": m})
            raw = json.dumps({"intent": b["intent"],
                              "grant": mangle(b["grant"])})
            st, hdr, data, out = self.ex.execute(None, None, raw=raw.encode())
            code = (out or {}).get("error", {}).get("code") \
                if isinstance(out, dict) else None
            if (st, code) != (400, "GRANT_MALFORMED"):
                bad.append("%s: %s %r" % (label, st, data[:200]))
            state = self.pdp.state(b["intent_id"])
            if state != "ALLOWED":
                bad.append("%s: the grant was spent (state %s); the "
                           "upstream saw %d requests" % (
                               label, state, len(self.up.lines_with(m))))
                continue
            st, hdr, data, out = self.ex.execute(b["intent"], b["grant"])
            if st != 200 or out.get("outcome") != "COMPLETED":
                bad.append("%s: the real grant afterwards: %s %r"
                           % (label, st, data[:200]))
        # NUL in other strings the executor reads as C strings.
        b = self.pdp.submit_ok("db.rows", "db", {"table": "t",
                                                 "q": self.marker()})
        for label, body in (
                ("intent_id with a NUL",
                 {"intent": dict(b["intent"], intent_id=b["intent_id"] +
                                 "\u0000x"), "grant": b["grant"]}),
                ("action with a NUL",
                 {"intent": dict(b["intent"], action="db.rows\u0000x"),
                  "grant": b["grant"]})):
            st, hdr, data, out = self.ex.execute(
                None, None, raw=json.dumps(body).encode())
            if st < 400 or st >= 500:
                bad.append("%s: %s %r" % (label, st, data[:200]))
        if self.pdp.state(b["intent_id"]) != "ALLOWED":
            bad.append("a mangled intent spent the grant")
        print("  NUL cases: %d problems" % len(bad))
        if bad:
            self.fail("\n  ".join(bad))


if __name__ == "__main__":
    H.run_main("__main__")
