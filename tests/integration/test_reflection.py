"""test_reflection.py - issue 11's reflection suite.

A loopback upstream reflects the credential the executor injected (and
the whole Authorization header value, "Bearer " + credential) in every
spelling the scrubbing rule names: raw, base64 and base64url at the three
alignments with and without padding, percent-encoded (upper, lower, every
byte), JSON-escaped (minimal, \\/, \\u-escapes in lower and upper hex,
every character escaped), hex (lower, upper); as a JSON document for the
"fields" mode; in the Content-Type header; in 4xx/5xx error pages; as
bytes that are not UTF-8; split across chunks; cut by the response cap.
One response per spelling, chosen by a path parameter.

Registry actions use every `response` mode ("status" - the default -,
"fields", "body"), each called plain and with Accept: application/x-ndjson.
Every byte the agent receives (raw, and every string decoded from it), the
PDP's record of each intent, every executor log line and the PDP's whole
database (the file, its -wal and -shm, read after the PDP stopped, and
`intentgate audit export`) are searched for every spelling, computed here
independently (base64, binascii, urllib.parse.quote, json.dumps).

The credential itself holds characters that make spellings differ:
`/ + = " \\ < é`.

    INTENTGATE_BIN=... INTENTGATE_EXECUTOR_BIN=... python3 tests/integration/test_reflection.py
"""
import base64
import binascii
import hashlib
import html
import json
import os
import re
import sys
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec_harness as H  # noqa: E402

CAP = 512  # max_response_bytes of the api.capped action (a pad fits a URL)


def reflect(mode, v, a):
    """The body for one spelling: v is the credential, a "Bearer " + v."""
    which, _, kind = mode.partition("_")
    x = {"c": v, "a": a}.get(which)
    if x is None:
        return None
    s = x.decode("utf-8")
    if kind == "raw":
        return b"token=" + x + b"\n"
    if kind.startswith("b64"):  # b64std0 b64url1 b64nopad2 b64urlnopad0
        k = int(kind[-1])
        enc = base64.b64encode(b"\x01" * k + x + b"\x02")
        if "url" in kind:
            enc = enc.translate(bytes.maketrans(b"+/", b"-_"))
        if "nopad" in kind:
            enc = enc.rstrip(b"=")
        return b"data=" + enc + b"\n"
    if kind == "pctupper":
        return urllib.parse.quote(x, safe="").encode()
    if kind == "pctlower":
        return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(),
                      urllib.parse.quote(x, safe="")).encode()
    if kind == "pctall":
        return "".join("%%%02X" % b for b in x).encode()
    if kind == "pctalllower":
        return "".join("%%%02x" % b for b in x).encode()
    if kind == "jsonmin":
        return json.dumps({"t": s}, ensure_ascii=False).encode()
    if kind == "jsonascii":
        return json.dumps({"t": s}, ensure_ascii=True).encode()
    if kind == "jsonslash":
        return json.dumps({"t": s}).replace("/", "\\/").encode()
    if kind == "jsonuall":
        return ('{"t":"%s"}' % "".join("\\u%04x" % ord(c) for c in s)).encode()
    if kind == "jsonuupper":
        return ('{"t":"%s"}' % "".join("\\u%04X" % ord(c) for c in s)).encode()
    if kind == "jsonasciiupper":
        j = json.dumps({"t": s}, ensure_ascii=True)
        return re.sub(r"\\u([0-9a-f]{4})",
                      lambda m: "\\u" + m.group(1).upper(), j).encode()
    if kind == "pctpath":  # Python's default quote keeps "/"
        return urllib.parse.quote(x).encode()
    if kind == "pctform":  # form encoding: quote_plus
        return urllib.parse.quote_plus(x).encode()
    if kind == "cookiejson":  # a cookie or JWT-like payload: base64url(JSON)
        return base64.urlsafe_b64encode(
            json.dumps({"t": s}).encode()).rstrip(b"=")
    if kind == "cookiejsonphp":  # the same from PHP: json_encode writes \/
        return base64.urlsafe_b64encode(json.dumps({"t": s}).replace(
            "/", "\\/").encode()).rstrip(b"=")
    if kind == "pctb64":  # base64 in a URL query, percent-encoded
        return b"next=/login?t=" + urllib.parse.quote(
            base64.b64encode(x), safe="").encode()
    if kind == "htmlesc":
        return b"<p>token: " + html.escape(s).encode() + b"</p>"
    if kind == "hexlower":
        return binascii.hexlify(x)
    if kind == "hexupper":
        return binascii.hexlify(x).upper()
    if kind == "binary":
        return b"\xff\xfe\x00" + x + b"\x00\xc3\x28"
    if kind == "repeated":
        return x + b" " + x + b"\n" + base64.b64encode(x) + b" " + \
            binascii.hexlify(x)
    if kind == "html":
        return (b"<html><body><h1>Unauthorized</h1><p>The token <code>" + x +
                b"</code> is not valid.</p><!-- Authorization: " + a +
                b" --></body></html>")
    if kind == "trace":
        return (b"Traceback (most recent call last):\n  File \"app.py\"\n"
                b"AuthError: header " + a + b" rejected\n")
    return None


SPELLING_KINDS = (
    ["raw"] +
    ["b64%s%d" % (f, k) for f in ("std", "url", "nopad", "urlnopad")
     for k in range(3)] +
    ["pctupper", "pctlower", "pctall", "pctalllower", "jsonmin", "jsonascii",
     "jsonslash", "jsonuall", "jsonuupper", "jsonasciiupper", "hexlower",
     "hexupper", "binary", "repeated", "html", "trace"])
# Common spellings the spec's list does not name (beyond the letter of it).
OTHER_MODES = ["%s_%s" % (w, k) for w in ("c", "a")
               for k in ("pctpath", "pctform", "htmlesc", "cookiejson",
                         "cookiejsonphp", "pctb64")]
MODES = ["%s_%s" % (w, k) for w in ("c", "a") for k in SPELLING_KINDS]
ERROR_STATUSES = ("400", "401", "403", "404", "500", "502")


class ReflectingAPI:
    """GET /reflect/{mode}/{status}/{shape}[?pad=...]."""

    def __init__(self, res):
        self.sent = {}  # request target -> body bytes sent
        self.up = H.RawUpstream(res, self.handle)
        self.url = self.up.url

    def handle(self, req):
        auth = req.headers.get("authorization", b"")
        cred = auth.split(b" ", 1)[1] if b" " in auth else auth
        target = req.target.decode("latin-1")
        path, _, query = target.partition("?")
        parts = path.split("/")
        if len(parts) != 5 or parts[1] != "reflect":
            return 404, [], b"no"
        mode, status, shape = parts[2], int(parts[3]), parts[4]
        headers = [("Content-Type", "text/plain")]
        pad = urllib.parse.parse_qs(query).get("pad", [""])[0]
        if mode == "none":
            body = b'{"ok":true,"note":"nothing of the token here"}'
        elif mode == "ctype":
            headers = [("Content-Type", b"text/plain; token=" + cred +
                        b"; b64=" + base64.b64encode(cred))]
            body = b"look at the header"
        elif mode == "padded":
            body = pad.encode() + cred + b"\n"
        elif mode == "capsplit":
            # The cap cuts the credential one byte before its end.
            body = b"x" * (CAP - len(cred) + 1) + cred + b"\n" + b"y" * 64
        elif mode == "chunked":
            half = len(cred) // 2
            return status, [("Content-Type", "text/plain")], \
                [b"token=" + cred[:half], cred[half:] + b"\n"]
        else:
            body = reflect(mode, cred, auth)
            if body is None:
                return 404, [], b"unknown mode"
        if shape == "json":
            if mode == "none":
                doc = {"echo": "nothing", "a": {"b": "x", "c": ["y"]},
                       "safe": "hello", "n": 1}
            else:
                s = body.decode("utf-8", "replace")
                doc = {"echo": s, "a": {"b": auth.decode("utf-8", "replace"),
                                        "c": [s]},
                       "safe": "hello", "n": 1,
                       cred.decode("utf-8", "replace"): "the token as a key"}
            body = json.dumps(doc).encode()
            headers = [("Content-Type", "application/json")]
        self.sent[target] = body
        return status, headers, body


def action(response=None, extra=None, max_bytes=None):
    http = {"method": "GET",
            "url": "${IG_REFLECT_URL}/reflect/{mode}/{status}/{shape}",
            "credential_header": "Authorization",
            "credential_prefix": "Bearer ", "query_fields": ["pad"],
            "timeout_ms": 10000}
    if response is not None:
        http["response"] = response
    if max_bytes is not None:
        http["max_response_bytes"] = max_bytes
    if extra:
        http.update(extra)
    return {"handler": "http", "credential": "api",
            "params": {"mode": {"type": "string", "required": True,
                                "pattern": "^[a-z0-9_]+$"},
                       "status": {"type": "string", "required": True,
                                  "pattern": "^[0-9]{3}$"},
                       "shape": {"type": "string", "required": True,
                                 "enum": ["text", "json"]},
                       "pad": {"type": "string", "max_length": 8192}},
            "http": http}


FIELDS = {"echo": "/echo", "nested": "/a", "deep": "/a/b", "first": "/a/c/0",
          "safe": "/safe", "missing": "/nope"}


def exotic_credential():
    """Characters that make every spelling differ: / + = " \\ < and é."""
    return "igcred-" + base64.urlsafe_b64encode(
        os.urandom(18)).decode() + '/+="\\<\u00e9z'


def plain_credential():
    """What API keys usually look like: a prefix and standard base64
    (so / + = but nothing JSON or HTML would escape)."""
    while True:
        c = "sk_live_" + base64.b64encode(os.urandom(31)).decode()
        if "/" in c and "+" in c:
            return c


class Reflection(unittest.TestCase):
    modes_error = None
    make_credential = staticmethod(exotic_credential)

    @classmethod
    def setUpClass(cls):
        cls.res = H.Resources()
        try:
            H.require_root()
            lay = H.Layout(cls.res, "clone")
            cls.pdp = H.start_custom_pdp(cls.res, lay.path("pdp"))
            cls.api = ReflectingAPI(cls.res)
            cls.cred = cls.make_credential()
            cls.secrets = {"credential": cls.cred,
                           "header value": "Bearer " + cls.cred}
            env = {"IG_REFLECT_URL": cls.api.url}
            cls.legacy = H.ConfigExecutor(
                cls.res, lay.path("legacy"), cls.pdp,
                {"actions": {"api.default": action()}},
                credentials={"api": cls.cred}, env=env)
            try:
                cls.modes = H.ConfigExecutor(
                    cls.res, lay.path("modes"), cls.pdp,
                    {"actions": {
                        "api.default": action(),
                        "api.status": action("status"),
                        "api.fields": action("fields", {
                            "response_fields": FIELDS}),
                        "api.body": action("body"),
                        "api.capped": action("body", max_bytes=CAP)}},
                    credentials={"api": cls.cred}, env=env)
            except H.NotImplementedYet as e:
                cls.modes = None
                cls.modes_error = e
            cls.intents = []  # every intent id we executed
        except BaseException:
            cls.res.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.res.close()

    # ---- helpers

    def need_modes(self):
        if self.modes is None:
            raise H.NotImplementedYet("registry http.response / "
                                      "response_fields: %s" % self.modes_error)
        return self.modes

    def call(self, ex, act, mode, status="200", shape="text", ndjson=False,
             pad=None):
        params = {"mode": mode, "status": status, "shape": shape}
        if pad is not None:
            params["pad"] = pad
        b = self.pdp.submit_ok(act, "api", params)
        self.intents.append(b["intent_id"])
        st, hdr, raw, out = ex.execute(
            b["intent"], b["grant"],
            accept="application/x-ndjson" if ndjson else None)
        final = out[-1] if ndjson and isinstance(out, list) and out else out
        return b["intent_id"], st, raw, out, final

    def check_call(self, bad, label, st, raw, out, final, reflected):
        leaks = H.leaks_deep(raw, out, self.secrets)
        if leaks:
            bad.append("%s: the agent got %s" % (label, ", ".join(leaks)))
        if st != 200 or not isinstance(final, dict) or \
                final.get("outcome") != "COMPLETED":
            bad.append("%s: %s %r" % (label, st, raw[:300]))
            return None
        res = final.get("result") or {}
        if reflected is not None and \
                res.get("credential_reflected") is not reflected:
            bad.append("%s: credential_reflected is %r, expected %r"
                       % (label, res.get("credential_reflected"), reflected))
        return res

    def check_record(self, bad, label, intent_id):
        try:  # the outcome reaches the PDP just after the agent's answer
            rec = self.pdp.wait_state(intent_id, "COMPLETED")
        except AssertionError:
            rec = self.pdp.record(intent_id)
        detail = (rec.get("outcome") or {}).get("detail") or {}
        for k in ("body", "body_b64url"):
            if k in detail:
                bad.append("%s: the PDP's outcome holds a raw upstream %s"
                           % (label, k))
        text = json.dumps(rec, ensure_ascii=False)
        leaks = H.leaks_deep(text.encode(), rec, self.secrets)
        if leaks:
            bad.append("%s: the PDP's record holds %s"
                       % (label, sorted(set(leaks))))
        if rec.get("state") != "COMPLETED":
            bad.append("%s: intent state %s" % (label, rec.get("state")))

    def sweep(self, ex, act, shapes=("text",), statuses=("200",),
              modes=None, extra_check=None):
        bad, n = [], 0
        for shape in shapes:
            for status in statuses:
                for mode in (modes or MODES):
                    for ndjson in (False, True):
                        label = "%s %s/%s/%s%s" % (act, mode, status, shape,
                                                   " ndjson" if ndjson else "")
                        iid, st, raw, out, final = self.call(
                            ex, act, mode, status, shape, ndjson)
                        n += 1
                        res = self.check_call(bad, label, st, raw, out, final,
                                              mode != "none")
                        if res is not None and extra_check:
                            extra_check(bad, label, mode, status, shape, res)
                        self.check_record(bad, label, iid)
        print("  %s: %d calls, %d problems" % (act, n, len(bad)))
        if bad:
            self.fail("%d problems:\n  %s\n  (%d problems in all)" % (
                len(bad), "\n  ".join(bad[:80]), len(bad)))

    def status_shape(self, bad, label, mode, status, shape, res):
        for k in ("status", "content_type", "size", "sha256", "truncated"):
            if k not in res:
                bad.append("%s: result lacks %s: %r" % (label, k, res))
        if res.get("status") != int(status):
            bad.append("%s: status %r" % (label, res.get("status")))
        for k in ("body", "body_b64url", "stdout"):
            if k in res:
                bad.append("%s: %s mode returned %s" % (label, "status", k))
        if mode == "none":
            sent = self.api.sent.get("/reflect/none/%s/%s" % (status, shape))
            if sent is not None and (
                    res.get("size") != len(sent) or
                    res.get("sha256") != hashlib.sha256(sent).hexdigest()):
                bad.append("%s: size/sha256 %r/%r do not describe the "
                           "unscrubbed body" % (label, res.get("size"),
                                                res.get("sha256")))

    # ---- the cases

    def test_default_mode_never_hands_back_the_body(self):
        """Today's registry entries (no "response" key): the default must
        be "status" - no body at all, and still no credential anywhere."""
        self.sweep(self.legacy, "api.default", statuses=("200", "500"),
                   extra_check=self.status_shape)

    def test_status_mode(self):
        ex = self.need_modes()
        self.sweep(ex, "api.status", statuses=("200", "401"),
                   extra_check=self.status_shape)

    def test_fields_mode(self):
        ex = self.need_modes()

        def fields(bad, label, mode, status, shape, res):
            f = res.get("fields")
            if not isinstance(f, dict):
                bad.append("%s: no fields object: %r" % (label, res))
                return
            if "body" in res or "body_b64url" in res:
                bad.append("%s: fields mode returned the body" % label)
            if f.get("safe") != "hello":
                bad.append("%s: the untouched field /safe is %r"
                           % (label, f.get("safe")))
            if "missing" not in (res.get("fields_missing") or []):
                bad.append("%s: fields_missing lacks \"missing\": %r"
                           % (label, res.get("fields_missing")))
        self.sweep(ex, "api.fields", shapes=("json",),
                   statuses=("200", "401"), extra_check=fields)

    def test_body_mode(self):
        ex = self.need_modes()

        def body(bad, label, mode, status, shape, res):
            if "body" not in res and "body_b64url" not in res:
                bad.append("%s: body mode returned no body: %r"
                           % (label, res))
            if mode.endswith("_raw") and shape == "text" and \
                    H.MARKER not in res.get("body", ""):
                bad.append("%s: the raw credential was not replaced by %r: "
                           "%r" % (label, H.MARKER, res.get("body")))
        self.sweep(ex, "api.body", shapes=("text", "json"),
                   statuses=("200",), extra_check=body)

    def test_error_pages_in_every_mode(self):
        ex = self.need_modes()
        bad, n = [], 0
        for act, shape in (("api.status", "text"), ("api.fields", "json"),
                           ("api.body", "text"), ("api.body", "json"),
                           ("api.default", "text")):
            for status in ERROR_STATUSES:
                for mode in ("c_html", "a_trace", "a_jsonascii"):
                    for ndjson in (False, True):
                        label = "%s %s %s %s%s" % (act, status, mode, shape,
                                                   " ndjson" if ndjson
                                                   else "")
                        iid, st, raw, out, final = self.call(
                            ex, act, mode, status, shape, ndjson)
                        n += 1
                        res = self.check_call(bad, label, st, raw, out, final,
                                              True)
                        if res and res.get("status") != int(status):
                            bad.append("%s: status %r"
                                       % (label, res.get("status")))
                        self.check_record(bad, label, iid)
        print("  error pages: %d calls, %d problems" % (n, len(bad)))
        if bad:
            self.fail("%d problems:\n  %s" % (len(bad), "\n  ".join(bad[:80])))

    def test_other_common_spellings(self):
        """Beyond the spec's list: Python's default quote (keeps "/"), form
        encoding, HTML escaping (error pages), and two spellings composed -
        base64url of JSON (a cookie, a JWT-like payload) and base64 in a
        percent-encoded query: real upstreams spell a credential holding
        / + = " < so."""
        ex = self.need_modes()
        bad = []
        for act, shape in (("api.status", "text"), ("api.body", "text"),
                           ("api.body", "json"), ("api.fields", "json")):
            for mode in OTHER_MODES:
                label = "%s %s %s" % (act, mode, shape)
                iid, st, raw, out, final = self.call(ex, act, mode,
                                                     shape=shape)
                self.check_call(bad, label, st, raw, out, final, None)
                self.check_record(bad, label, iid)
        print("  other spellings: %d problems" % len(bad))
        if bad:
            self.fail("\n  ".join(bad))

    def test_content_type_header(self):
        ex = self.need_modes()
        bad = []
        for act in ("api.status", "api.fields", "api.body"):
            for ndjson in (False, True):
                iid, st, raw, out, final = self.call(ex, act, "ctype",
                                                     ndjson=ndjson)
                res = self.check_call(bad, act + " ctype", st, raw, out,
                                      final, True)
                if res is not None and "content_type" not in res:
                    bad.append("%s: no content_type" % act)
                self.check_record(bad, act + " ctype", iid)
        iid, st, raw, out, final = self.call(self.legacy, "api.default",
                                             "ctype")
        self.check_call(bad, "legacy ctype", st, raw, out, final, True)
        if bad:
            self.fail("\n  ".join(bad))

    def test_credential_split_across_chunks(self):
        ex = self.need_modes()
        bad = []
        for act in ("api.status", "api.body"):
            iid, st, raw, out, final = self.call(ex, act, "chunked")
            self.check_call(bad, act + " chunked", st, raw, out, final, True)
            self.check_record(bad, act + " chunked", iid)
        if bad:
            self.fail("\n  ".join(bad))

    def test_credential_cut_by_the_response_cap(self):
        """The cap must not leave all but the last byte of the credential
        (an agent that can pad an echoed parameter chooses where it
        falls): a cut-off tail of the credential is removed too."""
        ex = self.need_modes()
        bad = []
        prefixes = {"credential minus its last byte": self.cred[:-1],
                    "credential minus its last 4 bytes": self.cred[:-4]}
        # Whether a cut-off tail counts as "reflected" is the executor's
        # choice (None below); that no prefix gets out is not.
        iid, st, raw, out, final = self.call(ex, "api.capped", "capsplit")
        res = self.check_call(bad, "capsplit", st, raw, out, final, None)
        if res is not None and res.get("truncated") is not True:
            bad.append("capsplit: truncated is %r" % res.get("truncated"))
        leaks = H.leaks_in_reply(raw, out, prefixes)
        if leaks:
            bad.append("capsplit: the agent got %s" % leaks)
        for n in (1, 2, 5):
            pad = "p" * (CAP - len(self.cred.encode()) - len("\n") + n)
            label = "agent-chosen pad %d" % len(pad)
            iid, st, raw, out, final = self.call(ex, "api.capped", "padded",
                                                 pad=pad)
            self.check_call(bad, label, st, raw, out, final, None)
            leaks = H.leaks_in_reply(raw, out, prefixes)
            if leaks:
                bad.append("%s: the agent got %s" % (label, leaks))
        if bad:
            self.fail("\n  ".join(bad))

    def test_metrics_count_reflections(self):
        ex = self.need_modes()
        before = ex.metric("intentgate_executor_credential_reflected_total")
        self.call(ex, "api.status", "c_raw")
        self.call(ex, "api.status", "none")
        after = ex.metric("intentgate_executor_credential_reflected_total")
        self.assertEqual(after, before + 1)
        ex_log = ex.log()
        self.assertEqual(H.find_spellings(ex_log, self.secrets), [])

    def test_zz_logs_and_database_hold_no_spelling(self):
        """Last: stop everything, then read the executor logs and the PDP's
        database files as bytes, and its audit export."""
        self.assertGreater(len(self.intents), 0)
        bad = []
        for name, ex in (("legacy", self.legacy), ("modes", self.modes)):
            if ex is None:
                continue
            rc = ex.stop()
            if rc != 0:
                bad.append("%s executor exit %s" % (name, rc))
            found = H.find_spellings(ex.log_bytes(), self.secrets)
            if found:
                bad.append("%s executor log holds %s" % (name, found))
            ex.check_log_clean()
            # Whatever it keeps on disk besides its sealed secrets (the
            # outcome spool above all) holds no spelling either.
            for d, _, files in os.walk(ex.dir):
                for f in files:
                    p = os.path.join(d, f)
                    if f in ("secrets.enc", "secrets.key", "executor.log"):
                        continue
                    with open(p, "rb") as fh:
                        found = H.find_spellings(fh.read(), self.secrets)
                    if found:
                        bad.append("%s holds %s" % (p, found))
        export = self.pdp.audit_export()
        self.pdp.stop()
        for fname, data in sorted(self.pdp.db_bytes().items()):
            found = H.find_spellings(data, self.secrets)
            if found:
                bad.append("PDP %s holds %s" % (fname, found))
        found = H.find_spellings(export, self.secrets)
        for line in export.decode().splitlines():
            for s in H.deep_strings(H.as_json(line)):
                found += H.find_spellings(s, self.secrets)
        if found:
            bad.append("audit export holds %s" % sorted(set(found)))
        n_out = sum(1 for line in export.decode().splitlines()
                    if '"execution.outcome"' in line)
        print("  scanned: executor logs, %s, audit export (%d outcome "
              "events)" % (", ".join(sorted(self.pdp.db_bytes())), n_out))
        if self.modes is None:
            bad.append("(the response-mode executor never ran: %s)"
                       % self.modes_error)
        if bad:
            self.fail("\n  ".join(bad))



class ReflectionOfAPlainToken(Reflection):
    """The same with a credential shaped like most API keys. (The error
    page, header, chunk, cap and metrics cases above do not depend on the
    credential's shape and run once.)"""
    make_credential = staticmethod(plain_credential)
    test_error_pages_in_every_mode = None
    test_content_type_header = None
    test_credential_split_across_chunks = None
    test_credential_cut_by_the_response_cap = None
    test_metrics_count_reflections = None
    test_status_mode = None


if __name__ == "__main__":
    H.run_main("__main__")
