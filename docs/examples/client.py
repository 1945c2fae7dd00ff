#!/usr/bin/env python3
"""client.py - ask intentgate for leave to act, Python standard library only.

    INTENTGATE_URL=http://127.0.0.1:8700 INTENTGATE_TOKEN=igt_... \\
        python3 client.py [ACTION [RESOURCE [PARAMS_JSON]]]

Submits the intent (POST /v1/intents) and handles the three decisions:
ALLOW (prints the answer with its grant, exit 0), ESCALATE (long-polls
GET /v1/intents/{id}?wait=60 until a human decides or INTENTGATE_WAIT
seconds, default 300, pass) and BLOCK (prints the reasons, exit 4). With
INTENTGATE_EXECUTOR_URL set, an allowed intent is then sent with its grant
to the executor (POST /v1/execute).

Exit status, as `intentgate submit`: 0 allowed (and, with an executor,
COMPLETED), 2 error, 3 still waiting for a human, 4 blocked or expired,
5 allowed but the executor did not complete it.

Use it as a module too: `decide(action, resource, params)` returns
(status, answer) without printing.
"""
import json
import math
import os
import sys
import time
import urllib.error
import urllib.request

ALLOW, ERROR, PENDING, BLOCKED, NOT_RUN = 0, 2, 3, 4, 5


class GateError(Exception):
    """The PDP or executor could not be asked, or answered an error."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is an error: never resend the token


_OPENER = urllib.request.build_opener(_NoRedirect)


def call(method, url, body=None, token=None, timeout=75):
    """One JSON exchange; returns (HTTP status, parsed body)."""
    headers = {"Accept": "application/json"}
    data = None
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers,
                                 method=method)
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as e:  # 4xx/5xx still carry a JSON body
        try:
            return e.code, json.load(e)
        except ValueError:
            return e.code, None
    except ValueError as e:
        raise GateError("the answer from %s is not JSON: %s" % (url, e)) from e
    except OSError as e:
        raise GateError("cannot reach %s: %s" % (url, e)) from e


def decide(action, resource, params, context=None, wait=300):
    """Submit an intent and wait up to `wait` seconds for a human if it
    escalates. Returns (ALLOW | PENDING | BLOCKED, the last answer)."""
    url, token = os.environ["INTENTGATE_URL"], os.environ["INTENTGATE_TOKEN"]
    body = {"action": action, "resource": resource, "params": params}
    if context is not None:
        body["context"] = context
    status, answer = call("POST", url + "/v1/intents", body, token)
    if status not in (200, 201) or not isinstance(answer, dict):
        raise GateError("the PDP refused (HTTP %d): %s" % (status, answer))
    decision = answer.get("decision")
    if decision == "ESCALATE":
        print("client.py: ESCALATE: waiting up to %ds for a human" % wait,
              file=sys.stderr)
        deadline = time.monotonic() + wait
        state = "PENDING_APPROVAL"
        while state == "PENDING_APPROVAL":
            left = math.ceil(deadline - time.monotonic())
            if left <= 0:
                break
            status, answer = call("GET", "%s/v1/intents/%s?wait=%d" % (
                url, answer["intent_id"], min(left, 60)), token=token)
            if status != 200:
                raise GateError("waiting: HTTP %d: %s" % (status, answer))
            state = answer.get("state")
        decision = {"ALLOWED": "ALLOW", "PENDING_APPROVAL": "ESCALATE",
                    "BLOCKED": "BLOCK", "EXPIRED": "BLOCK"}.get(state)
    if decision == "ALLOW" and str(answer.get("grant", "")).startswith(
            "v4.public."):
        return ALLOW, answer
    if decision == "ESCALATE":
        return PENDING, answer
    if decision == "BLOCK":
        return BLOCKED, answer
    raise GateError("unexpected answer: %s" % answer)


def execute(answer):
    """Hand the binding, exactly as returned, and the grant to the
    executor. Returns (ALLOW | NOT_RUN, the executor's reply)."""
    status, reply = call("POST", os.environ["INTENTGATE_EXECUTOR_URL"] +
                         "/v1/execute", {"intent": answer["intent"],
                                         "grant": answer["grant"]})
    ok = (status == 200 and isinstance(reply, dict) and
          reply.get("outcome") == "COMPLETED")
    return (ALLOW if ok else NOT_RUN), reply


def main(argv):
    try:
        action = argv[1] if len(argv) > 1 else "payments.refund"
        resource = argv[2] if len(argv) > 2 else "orders/1"
        params = json.loads(argv[3]) if len(argv) > 3 else {
            "amount": 42, "currency": "EUR", "order_id": "o-1"}
        wait = int(os.environ.get("INTENTGATE_WAIT", "300"))
    except ValueError as e:
        print("client.py: bad argument: %s" % e, file=sys.stderr)
        return ERROR
    for name in ("INTENTGATE_URL", "INTENTGATE_TOKEN"):
        if not os.environ.get(name):
            print("client.py: %s is not set" % name, file=sys.stderr)
            return ERROR
    try:
        code, answer = decide(action, resource, params, wait=wait)
    except GateError as e:
        print("client.py: %s" % e, file=sys.stderr)
        return ERROR
    if code == ALLOW and os.environ.get("INTENTGATE_EXECUTOR_URL"):
        try:
            code, answer = execute(answer)
        except GateError as e:
            print("client.py: %s; check GET /v1/intents/%s" % (
                e, answer["intent_id"]), file=sys.stderr)
            return NOT_RUN
    print(json.dumps(answer, indent=2))
    print("client.py: %s" % {ALLOW: "ALLOW", PENDING: "still waiting",
                             BLOCKED: "BLOCK", NOT_RUN: "not completed"}[code],
          file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
