"""test_executor.py - the executor end to end: a dev PDP, the real
`intentgate-executor serve --dev` wired to it, and a fake upstream on
loopback that records what it receives.

    INTENTGATE_BIN=.../intentgate INTENTGATE_EXECUTOR_BIN=.../intentgate-executor \\
        python3 tests/integration/test_executor.py
"""
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Server, parallel, run_tests  # noqa: E402

EXEC_BIN = os.environ.get("INTENTGATE_EXECUTOR_BIN", "intentgate-executor")



def stop_all(test, ex, up, pdp):
    """Stop the executor (test asserts it exits 0), the upstream and the
    PDP, and remove the PDP's files."""
    test.assertEqual(ex.stop(), 0)
    up.stop()
    pdp.stop()
    pdp.cleanup()

class Upstream:
    """A fake payments API: records every request, answers 201."""

    def __init__(self):
        self.seen = []
        lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(n).decode()
                with lock:
                    outer.seen.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                self.send_response(201)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"refund":"ok"}')

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()


class Executor:
    def __init__(self, pdp, upstream_url):
        self.log_path = os.path.join(pdp.tmp, "executor.log")
        env = dict(os.environ, INTENTGATE_DEV_UPSTREAM=upstream_url,
                   LIBC_FATAL_STDERR_="1")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [EXEC_BIN, "serve", "--dev", "--pdp-env",
                 os.path.join(pdp.data, "dev.env"), "--listen", "127.0.0.1:0"],
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                env=env)
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("INTENTGATE_EXECUTOR_URL="):
            raise RuntimeError("executor did not start: " + self.log())
        hostport = line.split("//", 1)[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def execute(self, intent, grant, raw=None):
        import http.client
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        body = raw if raw is not None else json.dumps(
            {k: v for k, v in (("intent", intent), ("grant", grant))
             if v is not None}).encode()
        try:
            conn.request("POST", "/v1/execute", body=body,
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read())
        finally:
            conn.close()

    def metric(self, name):
        """An unlabelled metric of the executor's /metrics."""
        import http.client
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
        finally:
            conn.close()
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise AssertionError("metric %s missing from /metrics" % name)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        return self.proc.returncode


class ExecutorFlow(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pdp = Server.dev()
        cls.up = Upstream()
        try:
            cls.ex = Executor(cls.pdp, cls.up.url)
        except Exception:  # tearDownClass will not run: stop what started
            cls.up.stop()
            cls.pdp.stop()
            cls.pdp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        rc = cls.ex.stop()
        log = cls.ex.log()
        cls.up.stop()
        cls.pdp.stop()
        # The credential never appears in anything the executor wrote.
        secret = cls.credential()
        cls.pdp.cleanup()
        if rc != 0 or "Sanitizer" in log or (secret and secret in log):
            raise AssertionError("executor exit %s:\n%s" % (rc, log[-3000:]))

    @classmethod
    def credential(cls):
        seen = [s["auth"] for s in cls.up.seen if s["auth"]]
        return seen[0].split(" ", 1)[1] if seen else None

    def refund(self, amount=42, **params):
        p = {"amount": amount, "currency": "EUR", "order_id": "o-1"}
        p.update(params)
        st, body, _ = self.pdp.submit("payments.refund", "orders/1", p)
        self.assertEqual(body["decision"], "ALLOW", body)
        return body

    def refused(self, resp, status, code):
        st, body = resp
        self.assertEqual(st, status, body)
        self.assertEqual(body["error"]["code"], code, body)

    def test_end_to_end_credential_injected_once(self):
        before = len(self.up.seen)
        b = self.refund()
        st, out = self.ex.execute(b["intent"], b["grant"])
        self.assertEqual(st, 200, out)
        self.assertEqual(out["outcome"], "COMPLETED")
        self.assertTrue(out["outcome_recorded"])
        self.assertEqual(len(self.up.seen), before + 1)
        req = self.up.seen[-1]
        self.assertEqual(req["path"], "/refunds")
        self.assertEqual(json.loads(req["body"]),
                         {"amount": 42, "currency": "EUR", "order_id": "o-1"})
        self.assertTrue(req["auth"].startswith("Bearer dev-refund-"))
        secret = req["auth"].split(" ", 1)[1]
        # Nothing the agent received holds the credential.
        self.assertNotIn(secret, json.dumps(b))
        self.assertNotIn(secret, json.dumps(out))
        # The outcome reaches the PDP just after the agent's answer.
        rec = harness.wait_until(
            lambda: (lambda r: r[1] if r[1].get("state") == "COMPLETED"
                     else None)(self.pdp.call(
                         "GET", "/v1/intents/" + b["intent_id"],
                         self.pdp.env["INTENTGATE_ADMIN_TOKEN"])),
            "the outcome at the PDP")
        self.assertNotIn(secret, json.dumps(rec))
        # The executor has the PDP's acknowledgement too (the PDP shows the
        # outcome before its answer reaches the executor; until then a
        # replay meets the spooled run instead: 409 ALREADY_RUNNING).
        harness.wait_until(
            lambda: self.ex.metric("intentgate_executor_outcomes_pending") == 0,
            "the executor's spool acknowledged")
        # A replay of the same grant is refused and reaches nobody.
        self.refused(self.ex.execute(b["intent"], b["grant"]), 409,
                     "ALREADY_REDEEMED")
        self.assertEqual(len(self.up.seen), before + 1)

    def test_refusals_before_redemption_leave_the_grant_unspent(self):
        b = self.refund(43)
        changed = dict(b["intent"], resource="orders/2")
        cases = [
            (self.ex.execute(b["intent"], None), 400, "NO_GRANT"),
            (self.ex.execute(b["intent"], "v4.public.garbage"), 400,
             "GRANT_MALFORMED"),
            (self.ex.execute(changed, b["grant"]), 403, "INTENT_CHANGED"),
            (self.ex.execute(dict(b["intent"], params={"amount": 43}),
                             b["grant"]), 403, "INTENT_CHANGED"),
        ]
        parts = b["grant"].split(".")
        sig = parts[2]
        flipped = sig[:-5] + ("A" if sig[-5] != "A" else "B") + sig[-4:]
        cases.append((self.ex.execute(b["intent"], ".".join(
            parts[:2] + [flipped] + parts[3:])), 403, "BAD_SIGNATURE"))
        for resp, status, code in cases:
            self.refused(resp, status, code)
        # The grant is still good: nothing above spent it.
        st, out = self.ex.execute(b["intent"], b["grant"])
        self.assertEqual(st, 200, out)

    def test_foreign_grant_unknown_kid(self):
        other = Server.dev()
        try:
            st, b, _ = other.submit("payments.refund", "orders/1",
                                    {"amount": 5, "currency": "EUR",
                                     "order_id": "o-9"})
            self.refused(self.ex.execute(b["intent"], b["grant"]), 403,
                         "UNKNOWN_KID")
        finally:
            other.stop()
            other.cleanup()

    def test_action_not_registered_and_params_invalid(self):
        st, b, _ = self.pdp.submit("http.request", "https://api.github.com/x",
                                   {})
        self.assertEqual(b["decision"], "ALLOW", b)
        self.refused(self.ex.execute(b["intent"], b["grant"]), 403,
                     "ACTION_NOT_REGISTERED")
        st, b, _ = self.pdp.submit("payments.refund", "orders/3",
                                   {"amount": 7, "currency": "eur",
                                    "order_id": "o-3"})
        self.refused(self.ex.execute(b["intent"], b["grant"]), 400,
                     "PARAMS_INVALID")
        st, rec, _ = self.pdp.call("GET", "/v1/intents/" + b["intent_id"],
                                   self.pdp.env["INTENTGATE_ADMIN_TOKEN"])
        self.assertEqual(rec["state"], "ALLOWED")  # not burnt

    def test_concurrent_executes_of_one_grant_reach_upstream_once(self):
        b = self.refund(44)
        before = len(self.up.seen)
        res = parallel(100, lambda i: self.ex.execute(b["intent"],
                                                       b["grant"])[0])
        self.assertEqual(res.count(200), 1, res)
        self.assertEqual(len(self.up.seen), before + 1)
        for st in res:
            self.assertIn(st, (200, 409, 429))


class PdpDown(unittest.TestCase):
    def test_pdp_unreachable_nothing_runs(self):
        pdp = Server.dev()
        up = Upstream()
        ex = Executor(pdp, up.url)
        try:
            st, b, _ = pdp.submit("payments.refund", "orders/1",
                                  {"amount": 5, "currency": "EUR",
                                   "order_id": "o-5"})
            pdp.stop()
            st, out = ex.execute(b["intent"], b["grant"])
            self.assertEqual(st, 503, out)
            self.assertEqual(out["error"]["code"], "PDP_UNAVAILABLE")
            self.assertEqual(up.seen, [])
        finally:
            stop_all(self, ex, up, pdp)




class ExecHandler(unittest.TestCase):
    def test_shell_exec_in_the_sandbox(self):
        pdp = Server.dev()
        up = Upstream()
        ex = Executor(pdp, up.url)
        try:
            st, b, _ = pdp.submit("shell.exec", "host",
                                  {"argv": ["echo", "hello from the box"]})
            self.assertEqual(b["decision"], "ALLOW", b)
            st, out = ex.execute(b["intent"], b["grant"])
            # bubblewrap must work where the suite runs: no skipping.
            self.assertEqual(st, 200, out)
            self.assertEqual(out["outcome"], "COMPLETED")
            self.assertEqual(out["result"]["exit_code"], 0)
            self.assertEqual(out["result"]["stdout"], "hello from the box\n")
            # Parameters fill whole argv elements: no shell ever sees them.
            st, b, _ = pdp.submit("shell.exec", "host",
                                  {"argv": ["echo", "$(id); touch x && echo pwned"]})
            self.assertEqual(b["decision"], "ALLOW", b)
            st, out = ex.execute(b["intent"], b["grant"])
            self.assertEqual(st, 200, out)
            self.assertEqual(out["result"]["stdout"], "$(id); touch x && echo pwned\n")
            # The demo registry takes names in /scratch only: a path is
            # refused before the grant is spent.
            st, b, _ = pdp.submit("shell.exec", "host",
                                  {"argv": ["echo", "a/b"]})
            self.assertEqual(b["decision"], "ALLOW", b)
            st, out = ex.execute(b["intent"], b["grant"])
            self.assertEqual((st, out["error"]["code"]), (400, "PARAMS_INVALID"))
            st, rec, _ = pdp.call("GET", "/v1/intents/" + b["intent_id"],
                                  pdp.env["INTENTGATE_ADMIN_TOKEN"])
            self.assertEqual(rec["state"], "ALLOWED")
        finally:
            stop_all(self, ex, up, pdp)


class StreamAndCancel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pdp = Server.dev()
        cls.up = Upstream()
        try:
            cls.ex = Executor(cls.pdp, cls.up.url)
        except Exception:  # tearDownClass will not run: stop what started
            cls.up.stop()
            cls.pdp.stop()
            cls.pdp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        rc = cls.ex.stop()
        cls.up.stop()
        cls.pdp.stop()
        cls.pdp.cleanup()
        if rc != 0:
            raise AssertionError("executor exit %s" % rc)

    def grant(self, argv):
        st, b, _ = self.pdp.submit("shell.exec", "host", {"argv": argv})
        self.assertEqual(b["decision"], "ALLOW", b)
        return b

    def post(self, path, body, accept=None):
        import http.client
        conn = http.client.HTTPConnection(self.ex.host, self.ex.port,
                                          timeout=30)
        h = {"Content-Type": "application/json"}
        if accept:
            h["Accept"] = accept
        try:
            conn.request("POST", path, body=json.dumps(body).encode(),
                         headers=h)
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type"), resp.read()
        finally:
            conn.close()

    def test_ndjson_stream_ends_with_the_outcome(self):
        b = self.grant(["echo", "streamed"])
        st, ctype, raw = self.post("/v1/execute",
                                   {"intent": b["intent"], "grant": b["grant"]},
                                   accept="application/x-ndjson")
        self.assertEqual(st, 200, raw)
        self.assertEqual(ctype, "application/x-ndjson")
        lines = [json.loads(l) for l in raw.decode().splitlines()]
        self.assertEqual("".join(l.get("data", "") for l in lines[:-1]
                                 if l.get("stream") == "stdout"),
                         "streamed\n")
        self.assertEqual(lines[-1]["outcome"], "COMPLETED")
        self.assertTrue(lines[-1]["outcome_recorded"])

    def test_cancel_kills_a_long_run(self):
        # Waits for a file that never appears (an absolute path such as
        # /dev/null is outside the scratch dir: the example policy asks).
        b = self.grant(["tail", "-F", "never-created"])
        result = {}

        def run():
            result["r"] = self.ex.execute(b["intent"], b["grant"])

        t = threading.Thread(target=run)
        t.start()
        path = "/v1/executions/%s/cancel" % b["intent_id"]
        deadline = time.time() + 5
        st = None
        while time.time() < deadline:
            st, _, raw = self.post(path, {"grant": b["grant"]})
            if st == 200 or "r" in result:
                break
            time.sleep(0.1)
        t.join(30)
        st_exec, out = result["r"]
        self.assertEqual(st, 200)
        self.assertEqual(out["outcome"], "UNKNOWN_AFTER_DISPATCH", out)
        self.assertTrue(out["result"]["cancelled"])
        # Another grant, or nothing running: 404.
        st, _, raw = self.post(path, {"grant": b["grant"]})
        self.assertEqual(st, 404, raw)


REGISTRY = """{"actions": {"payments.refund": {
  "handler": "http",
  "params": {"amount": {"type": "number", "required": true},
             "currency": {"type": "string"}, "order_id": {"type": "string"}},
  "http": {"method": "POST", "url": "%s/refunds",
           "body_fields": ["amount"]}}}}"""


class ConfiguredExecutor(Executor):
    """intentgate-executor serve --config, for a custom PDP from test_pdp."""

    def __init__(self, pdp, ex_id, token, upstream_url, clock=None):
        d = os.path.join(pdp.tmp, "ex-" + ex_id)
        os.makedirs(d)
        with open(os.path.join(d, "pdp.token"), "w") as f:
            f.write(token + "\n")
        os.chmod(os.path.join(d, "pdp.token"), 0o600)
        with open(os.path.join(pdp.tmp, "keys", "signing.pub")) as f:
            pub = f.read()
        with open(os.path.join(d, "pdp.pub"), "w") as f:
            f.write(pub)
        with open(os.path.join(d, "registry.json"), "w") as f:
            f.write(REGISTRY % upstream_url)
        subprocess.run([EXEC_BIN, "secret", "keygen", "--out",
                        os.path.join(d, "secrets.key")], check=True,
                       capture_output=True)
        with open(os.path.join(d, "executor.conf"), "w") as f:
            f.write("id = %s\nlisten = 127.0.0.1:0\npdp_url = %s\n"
                    "pdp_token_file = pdp.token\npdp_public_keys = pdp.pub\n"
                    "registry = registry.json\nsecrets = secrets.enc\n"
                    "secrets_key = secrets.key\nwork_dir = work\n"
                    % (ex_id, pdp.env["INTENTGATE_URL"]))
        self.log_path = os.path.join(d, "executor.log")
        env = dict(os.environ)
        clock = clock or pdp.clock  # by default the PDP's time
        if clock is not None:
            env.update(harness.clock_env(clock))
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [EXEC_BIN, "serve", "--config",
                 os.path.join(d, "executor.conf")],
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                env=env)
        deadline = time.time() + 10
        while time.time() < deadline:
            for line in self.log().splitlines():
                if '"executor.started"' in line:
                    url = json.loads(line)["url"]
                    self.host, port = url.split("//", 1)[1].rsplit(":", 1)
                    self.port = int(port)
                    if clock is not None and \
                            '"test_clock.active"' not in self.log():
                        self.proc.kill()
                        self.proc.wait()
                        harness.require_test_clock(self.log(), "the executor")
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("executor did not start: " + self.log())


class AudienceAndExpiry(unittest.TestCase):
    def start(self, extra="", clock=False):
        import tempfile
        from test_pdp import write_custom
        tmp = tempfile.mkdtemp(prefix="ig-ex-")
        conf, env = write_custom(tmp, None, extra,
                                 "quota_per_minute = 100000\n")
        pdp = Server.custom(conf, tmp, env, clock=clock)
        up = Upstream()
        return pdp, up

    def test_wrong_audience(self):
        pdp, up = self.start()
        # e2 handles only payments.refund.big: a payments.refund grant is
        # for e1, so e2 must refuse it before spending it.
        ex = ConfiguredExecutor(pdp, "e2", pdp.env["INTENTGATE_EXECUTOR2_TOKEN"],
                                up.url)
        try:
            st, b, _ = pdp.submit("payments.refund", "orders/1", {"amount": 5})
            self.assertEqual(b["decision"], "ALLOW", b)
            st, out = ex.execute(b["intent"], b["grant"])
            self.assertEqual((st, out["error"]["code"]),
                             (403, "WRONG_AUDIENCE"), out)
            self.assertEqual(up.seen, [])
        finally:
            stop_all(self, ex, up, pdp)

    def test_expired_grant(self):
        # grant_ttl 30 s (the default); the PDP and the executor share the
        # test clock, so nothing waits for it.
        pdp, up = self.start(clock=True)
        ex = ConfiguredExecutor(pdp, "e1", pdp.env["INTENTGATE_EXECUTOR_TOKEN"],
                                up.url)
        try:
            st, b, _ = pdp.submit("payments.refund", "orders/1", {"amount": 5})
            st, c, _ = pdp.submit("payments.refund", "orders/2", {"amount": 5})
            pdp.advance(25)  # the control: 5 s short of expiry, it runs
            st, out = ex.execute(c["intent"], c["grant"])
            self.assertEqual(st, 200, out)
            self.assertEqual(len(up.seen), 1)
            up.seen.clear()
            pdp.advance(6)
            # The executor's own offline check refuses it: not redeemed.
            st, out = ex.execute(b["intent"], b["grant"])
            self.assertEqual((st, out["error"]["code"]),
                             (410, "GRANT_EXPIRED"), out)
            self.assertEqual(up.seen, [])
            st, rec, _ = pdp.call("GET", "/v1/intents/" + b["intent_id"],
                                  pdp.env["INTENTGATE_ADMIN_TOKEN"])
            self.assertEqual(rec["state"], "EXPIRED", rec)
            self.assertNotIn("redemption", rec)
        finally:
            stop_all(self, ex, up, pdp)

    def test_grant_expired_at_redeem(self):
        # The executor's clock is 31 s behind the PDP's: its offline check
        # passes, the PDP refuses the redeem, nothing runs.
        pdp, up = self.start(clock=True)
        behind = os.path.join(pdp.tmp, "executor-clock")
        harness.clock_write(behind, 0)
        ex = ConfiguredExecutor(pdp, "e1", pdp.env["INTENTGATE_EXECUTOR_TOKEN"],
                                up.url, clock=behind)
        try:
            st, b, _ = pdp.submit("payments.refund", "orders/1", {"amount": 5})
            pdp.advance(31)
            st, out = ex.execute(b["intent"], b["grant"])
            self.assertEqual((st, out["error"]["code"]),
                             (410, "GRANT_EXPIRED"), out)
            self.assertEqual(up.seen, [])
            st, rec, _ = pdp.call("GET", "/v1/intents/" + b["intent_id"],
                                  pdp.env["INTENTGATE_ADMIN_TOKEN"])
            self.assertEqual(rec["state"], "EXPIRED", rec)
            self.assertNotIn("redemption", rec)
        finally:
            stop_all(self, ex, up, pdp)


if __name__ == "__main__":
    run_tests()
