"""test_outcome_spool.py - issue 11: outcomes are never lost.

A small proxy sits between the executor and the PDP (the executor's
pdp_url points at it). It forwards redemptions and, while "down", fails
outcome reports: 503, a closed connection, or - worst - forwarding the
outcome and then closing the connection before the answer (the PDP has it,
the executor does not know). Then:

- the agent gets its answer (outcome_recorded=true: the spool has the
  outcome; the PDP gets it after the answer); the executor is stopped, the
  proxy healed, the executor restarted with the same spool: the outcome
  reaches the PDP exactly once (intent COMPLETED, one execution.outcome
  audit event);
- without a restart the background retry delivers it (outcome_retry_ms
  small), /metrics shows intentgate_executor_outcomes_pending go to 0;
- a lost acknowledgement is retried and the PDP answers it as a duplicate:
  still one audit event; the PDP itself answers the same outcome again
  with 200 duplicate:true and a different one with 409;
- an outcome far over the PDP's body limit (1 MiB of output) is recorded,
  shrunk;
- an executor killed while the upstream holds the request reports
  UNKNOWN_AFTER_DISPATCH after its restart;
- a PDP that refuses the outcome for good (400) makes it undeliverable:
  counted and logged, not retried forever.

Every wait polls observable state (the PDP's intent, /metrics, the
proxy's records, log lines); expiry and backoff come from settings.

    INTENTGATE_BIN=... INTENTGATE_EXECUTOR_BIN=... python3 tests/integration/test_outcome_spool.py
"""
import http.client
import json
import os
import signal
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec_harness as H  # noqa: E402


class Proxy:
    """Forwards to the PDP; outcome POSTs obey self.mode:
    "up", "503", "close", "hang", "forward_then_close", "400"."""

    def __init__(self, res, pdp):
        self.pdp = pdp
        self.mode = "up"
        self.healed = threading.Event()  # releases "hang"
        self.outcomes = []  # (intent path, what we did, PDP status or None)
        self.lock = threading.Lock()
        self.up = H.RawUpstream(res, self.handle)
        self.url = self.up.url

    def forward(self, req):
        conn = http.client.HTTPConnection(self.pdp.host, self.pdp.port,
                                          timeout=30)
        try:
            h = {k: v.decode("latin-1") for k, v in req.headers.items()
                 if k in ("authorization", "content-type")}
            conn.request(req.method.decode(), req.target.decode(),
                         body=req.body or None, headers=h)
            r = conn.getresponse()
            return r.status, [("Content-Type", r.getheader(
                "Content-Type", "application/json"))], r.read()
        finally:
            conn.close()

    def handle(self, req):
        target = req.target.decode()
        if not target.endswith("/outcome"):
            return self.forward(req)
        mode = self.mode
        if mode == "hang":  # past the executor's pdp_timeout_ms
            with self.lock:
                self.outcomes.append((target, mode, None, req.body))
            self.healed.wait(30)
            return None
        with self.lock:
            if mode == "up":
                ans = self.forward(req)
                self.outcomes.append((target, mode, ans[0], req.body))
                return ans
            if mode == "503":
                self.outcomes.append((target, mode, None, req.body))
                return 503, [("Content-Type", "application/json")], \
                    b'{"error":{"code":"UNAVAILABLE","message":"down"}}'
            if mode == "400":
                self.outcomes.append((target, mode, None, req.body))
                return 400, [("Content-Type", "application/json")], \
                    b'{"error":{"code":"INVALID","message":"refused"}}'
            if mode == "close":
                self.outcomes.append((target, mode, None, req.body))
                return None
            ans = self.forward(req)  # forward_then_close
            self.outcomes.append((target, mode, ans[0], req.body))
            return None

    def count(self, intent_id, mode=None):
        with self.lock:
            return sum(1 for t, m, _, _ in self.outcomes
                       if intent_id in t and (mode is None or m == mode))


def refund_upstream(res, hold=None):
    """An upstream answering 201; with hold (an Event pair), the first
    request waits for hold[1] after setting hold[0]."""
    def handle(req):
        if hold is not None and not hold[0].is_set():
            hold[0].set()
            hold[1].wait(60)
        return 201, [("Content-Type", "application/json")], b'{"refund":"ok"}'
    return H.RawUpstream(res, handle)


REFUND = {"handler": "http", "credential": "pay",
          "params": {"amount": {"type": "number", "required": True}},
          "http": {"method": "POST", "url": "${IG_SPOOL_UP}/refunds",
                   "credential_header": "Authorization",
                   "credential_prefix": "Bearer ",
                   "body_fields": ["amount"], "timeout_ms": 30000}}
BIG_HTTP = {"handler": "http", "credential": "pay",
            "params": {"amount": {"type": "number", "required": True}},
            "http": {"method": "GET", "url": "${IG_SPOOL_BIG}/big",
                     "credential_header": "Authorization",
                     "credential_prefix": "Bearer ",
                     "max_response_bytes": 2097152, "timeout_ms": 30000}}
BIG_EXEC = {"handler": "exec",
            "params": {"n": {"type": "integer", "required": True}},
            "exec": {"argv": ["/bin/sh", "-c",
                              "head -c \"$1\" /dev/zero | tr '\\0' a; "
                              "ls -laR /usr/share/doc | head -c \"$1\" >&2",
                              "sh", "{n}"],
                     "allow": ["/bin/sh"], "sandbox": "none",
                     "timeout_ms": 30000, "max_output_bytes": 2097152}}


class Spool(unittest.TestCase):
    def setUp(self):
        self.res = H.Resources()
        self.lay = H.Layout(self.res, "clone")
        self.pdp = H.start_custom_pdp(self.res, self.lay.path("pdp"))
        self.proxy = Proxy(self.res, self.pdp)
        self.up = refund_upstream(self.res)
        big = b"x" * (1024 * 1024)
        self.big = H.RawUpstream(self.res, lambda req: (
            200, [("Content-Type", "text/plain")], big))
        self.cred = "igcred-" + H.rand(12)

    def tearDown(self):
        self.res.close()

    def executor(self, conf="", hold_upstream=None, name="executor"):
        up = hold_upstream or self.up
        return H.ConfigExecutor(
            self.res, self.lay.path(name), self.pdp,
            {"actions": {"spool.refund": REFUND, "spool.big_http": BIG_HTTP,
                         "spool.big_exec": BIG_EXEC}},
            credentials={"pay": self.cred}, conf=conf,
            pdp_url=self.proxy.url,
            env={"IG_SPOOL_UP": up.url, "IG_SPOOL_BIG": self.big.url})

    def refund(self, ex, amount=1):
        b = self.pdp.submit_ok("spool.refund", "orders/1", {"amount": amount})
        st, hdr, raw, out = ex.execute(b["intent"], b["grant"])
        self.assertEqual(st, 200, raw)
        self.assertEqual(out["outcome"], "COMPLETED", raw)
        return b, out

    def assert_exactly_once(self, intent_id, outcome="COMPLETED"):
        rec = self.pdp.wait_state(intent_id, outcome, timeout=30)
        events = self.pdp.outcome_events(intent_id)
        self.assertEqual(len(events), 1, "execution.outcome events for %s: "
                         "%r" % (intent_id, events))
        self.assertEqual(rec["outcome"]["outcome"], outcome)
        return rec

    def wait_pending(self, ex, n):
        H.wait_for(lambda: ex.metric("intentgate_executor_outcomes_pending")
                   == n, 30, "outcomes_pending == %d" % n)

    # ---- the cases

    def test_spooled_outcome_arrives_after_a_restart_exactly_once(self):
        ex = self.executor()
        self.proxy.mode = "503"
        b, out = self.refund(ex)
        self.assertTrue(out["outcome_recorded"], out)  # spooled
        self.assertEqual(self.pdp.state(b["intent_id"]), "REDEEMED")
        self.assertEqual(ex.stop(), 0, ex.log()[-2000:])
        spool = os.path.join(ex.dir, "spool")
        print("  spool after stop: %s" % (sorted(os.listdir(spool))
                                          if os.path.isdir(spool) else
                                          "no spool dir"))
        self.proxy.mode = "up"
        ex.start()
        rec = self.assert_exactly_once(b["intent_id"])
        self.assertEqual(rec["outcome"]["detail"].get("status"), 201, rec)
        self.wait_pending(ex, 0)
        # Another restart does not record it again.
        self.assertEqual(ex.stop(), 0)
        ex.start()
        self.wait_pending(ex, 0)
        self.assert_exactly_once(b["intent_id"])
        self.assertIn("outcome.delivered", ex.log())
        ex.check_log_clean([("credential", self.cred)])

    def test_background_retry_delivers_without_a_restart(self):
        ex = self.executor("outcome_retry_ms = 50\npdp_timeout_ms = 300\n")
        for mode in ("close", "503", "hang"):
            self.proxy.healed.clear()
            self.proxy.mode = mode
            b, out = self.refund(ex)
            self.assertTrue(out["outcome_recorded"], out)  # spooled
            self.wait_pending(ex, 1)
            H.wait_for(lambda: self.proxy.count(b["intent_id"]) >= 2, 30,
                       "a retried outcome post (PDP %s)" % mode)
            self.assertIn("outcome.pending", ex.log())
            self.assertGreaterEqual(
                ex.metric("intentgate_executor_outcome_retries_total"), 1)
            self.proxy.mode = "up"
            self.proxy.healed.set()
            self.assert_exactly_once(b["intent_id"])
            self.wait_pending(ex, 0)
            print("  PDP %s: delivered after %d posts"
                  % (mode, self.proxy.count(b["intent_id"])))
        H.wait_for(lambda: "outcome.delivered" in ex.log(), 10,
                   "outcome.delivered log line")
        ex.check_log_clean([("credential", self.cred)])

    def test_a_lost_acknowledgement_is_idempotent(self):
        ex = self.executor("outcome_retry_ms = 50\n")
        self.proxy.mode = "forward_then_close"
        b, out = self.refund(ex)
        self.assertTrue(out["outcome_recorded"], out)  # spooled
        H.wait_for(lambda: self.proxy.count(b["intent_id"],
                                            "forward_then_close") >= 2, 30,
                   "the executor to retry after the lost answer")
        self.proxy.mode = "up"
        self.wait_pending(ex, 0)
        self.assert_exactly_once(b["intent_id"])
        # The PDP directly: the same outcome again is a duplicate, a
        # different one a conflict, neither a new audit event.
        with self.proxy.lock:
            body = [o[3] for o in self.proxy.outcomes
                    if b["intent_id"] in o[0]][0]
        path = "/v1/executions/%s/outcome" % b["intent_id"]
        tok = self.pdp.env["INTENTGATE_EXECUTOR_TOKEN"]
        st, rep, _ = self.pdp.call("POST", path, tok, raw=body,
                                   headers={"Content-Type":
                                            "application/json"})
        self.assertEqual(st, 200, rep)
        self.assertIs(rep.get("duplicate"), True, rep)
        other = json.loads(body)
        other["outcome"] = "FAILED_BEFORE_DISPATCH"
        st, rep, _ = self.pdp.call("POST", path, tok, other)
        self.assertEqual((st, rep["error"]["code"]),
                         (409, "OUTCOME_ALREADY_RECORDED"), rep)
        self.assert_exactly_once(b["intent_id"])

    def test_an_oversized_outcome_is_recorded_shrunk(self):
        ex = self.executor()
        bad = []
        for action, params in (("spool.big_exec", {"n": 1048576}),
                               ("spool.big_http", {"amount": 1})):
            b = self.pdp.submit_ok(action, "big", params)
            st, hdr, raw, out = ex.execute(b["intent"], b["grant"])
            if st != 200 or out.get("outcome") != "COMPLETED":
                bad.append("%s: %s %r" % (action, st, raw[:300]))
                continue
            if out.get("outcome_recorded") is not True:
                bad.append("%s: a %d-byte reply, outcome_recorded %r (the "
                           "PDP refused it?)" % (action, len(raw),
                                                 out.get("outcome_recorded")))
            try:
                rec = self.pdp.wait_state(b["intent_id"], "COMPLETED", 30)
            except AssertionError as e:
                bad.append("%s: %s" % (action, e))
                continue
            size = len(json.dumps(rec["outcome"]["detail"],
                                  separators=(",", ":")))
            if size > 16 * 1024:
                bad.append("%s: the stored detail is %d bytes" % (action,
                                                                   size))
        if bad:
            self.fail("\n  ".join(bad))

    def test_big_fields_are_omitted_from_the_outcome(self):
        big = json.dumps({"small": "ok", "big": "x" * 100000,
                          "many": ["y" * 900] * 40}).encode()
        up = H.RawUpstream(self.res, lambda req: (
            200, [("Content-Type", "application/json")], big))
        act = json.loads(json.dumps(BIG_HTTP))
        act["http"]["url"] = up.url + "/big"
        act["http"]["response"] = "fields"
        act["http"]["response_fields"] = {"small": "/small", "big": "/big",
                                          "many": "/many"}
        ex = H.ConfigExecutor(
            self.res, self.lay.path("fields"), self.pdp,
            {"actions": {"spool.fields": act}},
            credentials={"pay": self.cred}, pdp_url=self.proxy.url)
        b = self.pdp.submit_ok("spool.fields", "big", {"amount": 1})
        st, hdr, raw, out = ex.execute(b["intent"], b["grant"])
        self.assertEqual(st, 200, raw[:300])
        self.assertTrue(out.get("outcome_recorded"), raw[:300])
        rec = self.pdp.wait_state(b["intent_id"], "COMPLETED")
        detail = rec["outcome"]["detail"]
        self.assertLessEqual(len(json.dumps(detail, separators=(",", ":"))),
                             16 * 1024, detail)
        fields = detail.get("fields", {})
        self.assertEqual(fields.get("small"), "ok", detail)
        for k in ("big", "many"):
            self.assertLessEqual(len(json.dumps(fields.get(k))), 1024 + 64,
                                 "field %s in the stored outcome" % k)

    def test_killed_mid_action_reports_unknown_after_restart(self):
        hold = (threading.Event(), threading.Event())
        held = refund_upstream(self.res, hold)
        ex = self.executor(hold_upstream=held)
        b = self.pdp.submit_ok("spool.refund", "orders/1", {"amount": 2})
        result = {}

        def run():
            try:
                result["r"] = ex.execute(b["intent"], b["grant"])
            except OSError as e:
                result["r"] = e
        t = threading.Thread(target=run, daemon=True)
        t.start()
        H.wait_for(hold[0].is_set, 30, "the upstream to hold the request")
        self.assertEqual(self.pdp.state(b["intent_id"]), "REDEEMED")
        ex.stop(signal.SIGKILL)
        hold[1].set()
        t.join(30)
        ex.start()
        rec = self.assert_exactly_once(b["intent_id"],
                                       "UNKNOWN_AFTER_DISPATCH")
        print("  recorded after the crash: %s" % json.dumps(rec["outcome"]))

    def test_a_refused_outcome_is_undeliverable_not_retried_forever(self):
        ex = self.executor("outcome_retry_ms = 50\n")
        self.proxy.mode = "400"
        before = ex.metric("intentgate_executor_outcomes_undeliverable_total")
        b, out = self.refund(ex)
        self.assertTrue(out["outcome_recorded"])  # spooled
        H.wait_for(lambda: ex.metric(
            "intentgate_executor_outcomes_undeliverable_total") == before + 1,
            30, "outcomes_undeliverable_total to count it")
        self.wait_pending(ex, 0)
        H.wait_for(lambda: "outcome.undeliverable" in ex.log(), 10,
                   "outcome.undeliverable log line")
        posts = self.proxy.count(b["intent_id"])
        # Healing the PDP later changes nothing: it is not retried.
        self.proxy.mode = "up"
        self.refund(ex, 3)  # an unrelated execute passes through
        self.assertEqual(self.proxy.count(b["intent_id"]), posts)
        self.assertEqual(self.pdp.state(b["intent_id"]), "REDEEMED")


if __name__ == "__main__":
    H.run_main("__main__")
