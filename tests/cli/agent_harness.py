"""agent_harness.py - what the agent-side tests (test_submit.py,
test_examples.py) share: a dev PDP (tests/integration/harness.py), a fake
refunds upstream, the dev executor wired to both, an approver who votes
through the API, and a tiny pass/fail counter. Python standard library.

    stack = Stack.start(executor=True)
    stack.env            # dev.env + executor.env as a dict
    stack.approve_when_pending("orders/w-1")   # in a thread
    stack.finish()       # stops everything; raises unless all exited 0
"""
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from harness import Server  # noqa: E402

EXEC_BIN = os.environ.get("INTENTGATE_EXECUTOR_BIN", "intentgate-executor")


class Upstream:
    """A fake payments API: records every POST, answers 201."""

    def __init__(self):
        self.seen = []
        lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(n).decode()
                with lock:
                    outer.seen.append({"path": self.path, "body": body})
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
        self.httpd.server_close()


class Executor:
    """intentgate-executor serve --dev against the PDP's dev.env."""

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
        self.url = line.split("=", 1)[1]

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        return self.proc.returncode


class Stack:
    def __init__(self, pdp, upstream=None, executor=None):
        self.pdp = pdp
        self.upstream = upstream
        self.executor = executor
        self.env = dict(pdp.env)
        if executor is not None:
            self.env["INTENTGATE_EXECUTOR_URL"] = executor.url

    @classmethod
    def start(cls, executor=False):
        pdp = Server.dev()
        if not executor:
            return cls(pdp)
        up = Upstream()
        try:
            ex = Executor(pdp, up.url)
        except Exception:
            up.stop()
            pdp.stop()
            raise
        return cls(pdp, up, ex)

    def finish(self):
        """Stop everything; raise unless every server exited 0 and no
        sanitizer spoke."""
        problems = []
        if self.executor is not None:
            rc = self.executor.stop()
            log = self.executor.log()
            if rc != 0 or "Sanitizer" in log or "runtime error" in log:
                problems.append("executor exit %s:\n%s" % (rc, log[-3000:]))
        if self.upstream is not None:
            self.upstream.stop()
        rc = self.pdp.stop()
        log = self.pdp.log()
        if rc != 0 or "Sanitizer" in log or "runtime error" in log:
            problems.append("PDP exit %s:\n%s" % (rc, log[-3000:]))
        if not problems:
            self.pdp.cleanup()
        if problems:
            raise AssertionError("\n".join(problems))

    # ---- an approver, through the API ----

    def approver_token(self):
        st, body, _ = self.pdp.call(
            "POST", "/v1/approver/login", None,
            {"approver": self.env["INTENTGATE_APPROVER_ID"],
             "password": self.env["INTENTGATE_APPROVER_PASSWORD"]})
        if st != 200:
            raise AssertionError("approver login: %s %s" % (st, body))
        return body["token"]

    def approve_when_pending(self, resource, timeout=20, vote="approve"):
        """Wait until an approval for resource is pending, then vote on
        it. Returns the vote's answer (or raises)."""
        token = self.approver_token()
        deadline = time.time() + timeout
        while time.time() < deadline:
            st, body, _ = self.pdp.call("GET", "/v1/approvals", token)
            for a in body.get("approvals", []) if st == 200 else []:
                if a.get("resource") == resource:
                    st, res, _ = self.pdp.call(
                        "POST", "/v1/approvals/%s/votes" % a["approval_id"],
                        token, {"vote": vote,
                                "intent_hash": a["intent_hash"]})
                    if st != 200 or not res.get("counted"):
                        raise AssertionError("vote: %s %s" % (st, res))
                    return res
            time.sleep(0.1)
        raise AssertionError("no pending approval for " + resource)

    def approve_in_background(self, resource, vote="approve", after=0.0):
        """Vote on resource's approval in a thread once the agent's long
        poll is parked on the PDP (the intentgate_long_polls_parked gauge),
        so the vote wakes a waiting agent; with after, once a poll is
        parked `after` seconds or more from now (a later poll of the same
        wait). join() it, then .error is None or what went wrong."""
        t = threading.Thread(target=self._approve,
                             args=(resource, vote, time.monotonic() + after),
                             daemon=True)
        t.error = None
        t.start()
        return t

    def _approve(self, resource, vote, not_before):
        me = threading.current_thread()
        try:
            self.pdp.wait_parked(1)
            if time.monotonic() < not_before:
                time.sleep(not_before - time.monotonic())
                self.pdp.wait_parked(1)
            self.approve_when_pending(resource, vote=vote)
        except Exception as e:  # reported by the test that joins
            me.error = e


class Tally:
    """Named checks; prints each failure and 'N passed, M failed'."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print("ok   " + name)
        else:
            self.failed += 1
            print("FAIL " + name + (": " + detail if detail else ""))
        sys.stdout.flush()
        return ok

    def run(self, name, fn):
        """Run fn(); an exception counts as a failure."""
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - report and go on
            self.check(name, False, "%s: %s" % (type(e).__name__, e))

    def done(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 and self.passed > 0 else 1


def run(argv, env, timeout=60, stdin=None):
    """Run a command; (exit status, stdout, stderr) as text."""
    p = subprocess.run(argv, env=env, input=stdin, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def parse(text):
    try:
        return json.loads(text)
    except ValueError:
        return None
