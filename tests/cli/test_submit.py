"""test_submit.py - `intentgate submit` end to end: a dev PDP, the dev
executor and a fake refunds upstream on loopback, an approver voting
through the API, and a fake PDP that answers malformed things. Checks
the exit-status contract (0 ALLOW, 2 error, 3 pending, 4 BLOCK, 5 not
run) and that nothing but a well-formed ALLOW is 0.

    INTENTGATE_BIN=.../intentgate INTENTGATE_EXECUTOR_BIN=.../intentgate-executor \\
        python3 tests/cli/test_submit.py
"""
import http.server
import json
import os
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import Stack, Tally, parse, run  # noqa: E402

BIN = os.environ.get("INTENTGATE_BIN", "intentgate")
T = Tally()


def submit(env, *args, timeout=60, stdin=None):
    rc, out, err = run([BIN, "submit"] + list(args), env, timeout, stdin)
    if "Sanitizer" in err or "runtime error" in err:
        raise AssertionError("sanitizer: " + err)
    return rc, out, err


def refund(amount, order="o-1"):
    return json.dumps({"amount": amount, "currency": "EUR",
                       "order_id": order})


class FakePDP:
    """Answers POST /v1/intents with a fixed status and body."""

    def __init__(self, status, body):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                data = body if isinstance(body, bytes) else \
                    json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def decisions(s):
    env = s.env

    def allow():
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/1", "--params", refund(42),
                              "--context", '{"ticket":"T-1"}')
        a = parse(out)
        T.check("ALLOW exits 0 with a grant", rc == 0 and a is not None and
                a["decision"] == "ALLOW" and
                a["grant"].startswith("v4.public.") and
                a["intent"]["context"] == {"ticket": "T-1"} and err == "",
                "rc=%d %s %s" % (rc, out[:300], err))

    def block():
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/1", "--params",
                              refund(5000))
        a = parse(out)
        T.check("BLOCK exits 4 with reasons", rc == 4 and a is not None and
                a["decision"] == "BLOCK" and
                "AMOUNT_OVER_LIMIT" in a["reasons"] and "grant" not in a,
                "rc=%d %s %s" % (rc, out[:300], err))

    def escalate():
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/e-1", "--params",
                              refund(500))
        a = parse(out)
        T.check("ESCALATE exits 3 with the approval", rc == 3 and
                a is not None and a["decision"] == "ESCALATE" and
                a["approval"]["id"] and "grant" not in a,
                "rc=%d %s %s" % (rc, out[:300], err))

    def wait_approved():
        t = s.approve_in_background("orders/w-1")
        t0 = time.time()
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/w-1", "--params",
                              refund(500), "--wait", "20")
        t.join()
        v = parse(out)
        T.check("--wait 20 while approved exits 0 with the grant",
                rc == 0 and t.error is None and v is not None and
                v["state"] == "ALLOWED" and
                v["grant"].startswith("v4.public.") and
                time.time() - t0 < 15,
                "rc=%d approver=%s %s %s" % (rc, t.error, out[:300], err))

    def wait_long():
        # Past one ?wait= call (25 s): the second long poll, parked 27 s
        # or more after the start, sees it.
        t = s.approve_in_background("orders/w-4", after=27.0)
        t0 = time.time()
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/w-4", "--params",
                              refund(500), "--wait", "45")
        t.join()
        v = parse(out)
        T.check("--wait 45 approved after 27 s (two long polls) exits 0",
                rc == 0 and t.error is None and v is not None and
                v["state"] == "ALLOWED" and 26 < time.time() - t0 < 40,
                "rc=%d approver=%s %s %s" % (rc, t.error, out[:300], err))

    def wait_denied():
        t = s.approve_in_background("orders/w-2", vote="deny")
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/w-2", "--params",
                              refund(500), "--wait", "20")
        t.join()
        v = parse(out)
        T.check("--wait while denied exits 4", rc == 4 and t.error is None
                and v is not None and v["state"] == "BLOCKED" and
                "grant" not in v,
                "rc=%d approver=%s %s %s" % (rc, t.error, out[:300], err))

    def wait_nobody():
        t0 = time.time()
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/w-3", "--params",
                              refund(500), "--wait", "2")
        took = time.time() - t0
        v = parse(out)
        T.check("--wait 2 with nobody approving exits 3 after ~2 s",
                rc == 3 and v is not None and
                v["state"] == "PENDING_APPROVAL" and 1.8 <= took < 10,
                "rc=%d took=%.1f %s %s" % (rc, took, out[:300], err))

    def idempotency():
        args = ["--action", "payments.refund", "--resource", "orders/i-1",
                "--params", refund(42), "--idempotency-key", "run-7/step-3"]
        rc1, out1, _ = submit(env, *args)
        rc2, out2, _ = submit(env, *args)
        a, b = parse(out1), parse(out2)
        T.check("an idempotency key gives the same intent twice",
                rc1 == 0 and rc2 == 0 and a and b and
                a["intent_id"] == b["intent_id"] and a["grant"] == b["grant"],
                "%d %d %s %s" % (rc1, rc2, out1[:200], out2[:200]))
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/i-1", "--params",
                              refund(43), "--idempotency-key", "run-7/step-3")
        T.check("the same key for other params is refused (2)",
                rc == 2 and out == "" and "another intent" in err,
                "rc=%d %s %s" % (rc, out[:200], err))

    def params_file():
        with tempfile.NamedTemporaryFile("w", suffix=".json",
                                         delete=False) as f:
            f.write(refund(42))
        try:
            rc, out, err = submit(env, "--action", "payments.refund",
                                  "--resource", "orders/1",
                                  "--params-file", f.name)
        finally:
            os.unlink(f.name)
        rc2, out2, err2 = submit(env, "--action", "payments.refund",
                                 "--resource", "orders/1",
                                 "--params-file", "-", stdin=refund(5000))
        T.check("--params-file FILE and - (stdin)", rc == 0 and rc2 == 4 and
                parse(out)["intent"]["params"]["amount"] == 42,
                "rc=%d rc2=%d %s %s" % (rc, rc2, err, err2))

    for name, fn in [("allow", allow), ("block", block),
                     ("escalate", escalate), ("wait approved", wait_approved),
                     ("wait long", wait_long), ("wait denied", wait_denied),
                     ("wait nobody", wait_nobody),
                     ("idempotency", idempotency),
                     ("params file", params_file)]:
        T.run(name, fn)


def execute(s):
    env = s.env
    up = s.upstream

    def completed():
        before = len(up.seen)
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/x-1", "--params",
                              refund(12, "o-x1"), "--execute")
        r = parse(out)
        T.check("--execute on a small refund: COMPLETED, exit 0, one call",
                rc == 0 and r is not None and r["outcome"] == "COMPLETED" and
                r["result"]["status"] == 201 and
                len(up.seen) == before + 1 and
                up.seen[-1]["path"] == "/refunds" and
                json.loads(up.seen[-1]["body"])["amount"] == 12,
                "rc=%d %s %s seen=%d" % (rc, out[:300], err,
                                         len(up.seen) - before))

    def after_wait():
        before = len(up.seen)
        t = s.approve_in_background("orders/x-2")
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/x-2", "--params",
                              refund(500, "o-x2"), "--wait", "20",
                              "--execute")
        t.join()
        r = parse(out)
        T.check("--wait --execute: approved, then COMPLETED",
                rc == 0 and t.error is None and r is not None and
                r["outcome"] == "COMPLETED" and len(up.seen) == before + 1,
                "rc=%d approver=%s %s %s" % (rc, t.error, out[:300], err))

    def blocked():
        before = len(up.seen)
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/x-3", "--params",
                              refund(5000, "o-x3"), "--execute")
        T.check("--execute on a BLOCK exits 4 and calls nobody",
                rc == 4 and parse(out)["decision"] == "BLOCK" and
                len(up.seen) == before, "rc=%d %s" % (rc, err))

    def pending():
        before = len(up.seen)
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/x-4", "--params",
                              refund(500, "o-x4"), "--execute")
        T.check("--execute on an ESCALATE without --wait exits 3",
                rc == 3 and parse(out)["decision"] == "ESCALATE" and
                len(up.seen) == before, "rc=%d %s" % (rc, err))

    def refused():
        before = len(up.seen)
        # The policy allows it; the executor's schema refuses "eur".
        rc, out, err = submit(env, "--action", "payments.refund",
                              "--resource", "orders/x-5", "--params",
                              '{"amount":5,"currency":"eur","order_id":"o"}',
                              "--execute")
        r = parse(out)
        T.check("an executor refusal exits 5 with its error",
                rc == 5 and r is not None and
                r["error"]["code"] == "PARAMS_INVALID" and
                "PARAMS_INVALID" in err and len(up.seen) == before,
                "rc=%d %s %s" % (rc, out[:300], err))

    def unreachable():
        e = dict(env, INTENTGATE_EXECUTOR_URL="http://127.0.0.1:1")
        rc, out, err = submit(e, "--action", "payments.refund",
                              "--resource", "orders/x-6", "--params",
                              refund(5, "o-x6"), "--execute")
        T.check("an unreachable executor exits 5; the grant is unspent",
                rc == 5 and out == "" and "unspent" in err,
                "rc=%d %s %s" % (rc, out[:300], err))

    def no_executor_env():
        e = dict(env)
        del e["INTENTGATE_EXECUTOR_URL"]
        rc, out, err = submit(e, "--action", "payments.refund",
                              "--resource", "orders/x-7", "--params",
                              refund(5), "--execute")
        T.check("--execute without INTENTGATE_EXECUTOR_URL exits 2",
                rc == 2 and out == "" and "INTENTGATE_EXECUTOR_URL" in err,
                "rc=%d %s" % (rc, err))

    for name, fn in [("completed", completed), ("after wait", after_wait),
                     ("blocked", blocked), ("pending", pending),
                     ("refused", refused), ("unreachable", unreachable),
                     ("no executor env", no_executor_env)]:
        T.run(name, fn)


def errors(s):
    env = s.env
    ok = ["--action", "payments.refund", "--resource", "orders/1"]
    cases = [
        ("unreachable PDP", dict(env, INTENTGATE_URL="http://127.0.0.1:1"),
         ok, "cannot reach"),
        ("bad params JSON", env, ok + ["--params", '{"amount":'], "--params:"),
        ("duplicate key in params", env, ok + ["--params", '{"a":1,"a":2}'],
         "duplicate object key"),
        ("params not an object", env, ok + ["--params", "[1]"],
         "not a JSON object"),
        ("context not an object", env, ok + ["--context", '"x"'],
         "not a JSON object"),
        ("params file missing", env,
         ok + ["--params-file", "/nonexistent/p.json"], "cannot open"),
        ("params and params-file", env,
         ok + ["--params", "{}", "--params-file", "-"], "not both"),
        ("missing token", {k: v for k, v in env.items()
                           if k != "INTENTGATE_TOKEN"}, ok,
         "INTENTGATE_TOKEN not set"),
        ("missing URL", {k: v for k, v in env.items()
                         if k != "INTENTGATE_URL"}, ok,
         "INTENTGATE_URL not set"),
        ("bad URL", dict(env, INTENTGATE_URL="ftp://x"), ok, "INTENTGATE_URL"),
        ("wrong token", dict(env, INTENTGATE_TOKEN="igt_nope"), ok,
         "UNAUTHENTICATED"),
        ("executor token", dict(env, INTENTGATE_TOKEN=env[
            "INTENTGATE_EXECUTOR_TOKEN"]), ok, "FORBIDDEN"),
        ("bad action", env, ["--action", "Pay!", "--resource", "r"],
         "INVALID_FIELD"),
        ("no action", env, ["--resource", "r"], "required"),
        ("unknown option", env, ok + ["--frobnicate"], "unexpected argument"),
        ("option without value", env, ok + ["--wait"], "needs a value"),
        ("--wait not a number", env, ok + ["--wait", "soon"], "--wait"),
        ("--wait negative", env, ok + ["--wait", "-1"], "--wait"),
        ("--action twice", env, ok + ["--action", "x"], "twice"),
        ("bad idempotency key", env, ok + ["--idempotency-key", "a\tb"],
         "--idempotency-key"),
    ]
    for name, e, args, want in cases:
        rc, out, err = submit(e, *args)
        T.check(name + " exits 2", rc == 2 and out == "" and want in err and
                err.count("\n") == 1 and err.startswith("intentgate submit: "),
                "rc=%d out=%r err=%r" % (rc, out[:200], err))

    rc, out, err = submit(env, "--help")
    T.check("--help", rc == 0 and "Exit status" in out and err == "")


def malformed(s):
    """A PDP that answers something wrong is never 0."""
    st, good, _ = s.pdp.submit("payments.refund", "orders/1", {"amount": 1})
    tampered = dict(good, intent=dict(good["intent"], resource="orders/2"))
    other_hash = dict(good, intent_hash="sha256:" + "0" * 64)
    no_grant = {k: v for k, v in good.items() if k != "grant"}
    cases = [
        ("ALLOW without a grant", 201, no_grant, "no grant"),
        ("ALLOW with a binding that does not hash", 201, other_hash,
         "does not hash"),
        ("ALLOW for another intent", 201, tampered, "another intent"),
        ("unknown decision", 201, dict(good, decision="MAYBE"),
         "unknown decision"),
        ("no decision", 201, {"intent_id": good["intent_id"]}, "no intent id"),
        ("not JSON", 201, b"ALLOW", "not JSON"),
        ("not an object", 201, [good], "not an object"),
        ("empty 201", 201, b"", "not an object"),
        ("an error status", 503, {"error": {"code": "STORE_UNAVAILABLE",
                                            "message": "db"}},
         "STORE_UNAVAILABLE"),
        ("a 302", 302, {"decision": "ALLOW"}, "unexpected HTTP 302"),
    ]
    for name, status, body, want in cases:
        fake = FakePDP(status, body)
        try:
            rc, out, err = submit(dict(s.env, INTENTGATE_URL=fake.url),
                                  "--action", "payments.refund", "--resource",
                                  "orders/1", "--params", '{"amount":1}')
        finally:
            fake.stop()
        T.check("malformed answer: " + name + " exits 2",
                rc == 2 and out == "" and want in err,
                "rc=%d out=%r err=%r" % (rc, out[:200], err))


def main():
    s = Stack.start(executor=True)
    try:
        for part in (decisions, execute, errors, malformed):
            T.run(part.__name__, lambda: part(s))
    finally:
        T.run("servers exit 0",
              lambda: (s.finish(), T.check("servers exit 0", True)))
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
