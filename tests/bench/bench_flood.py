#!/usr/bin/env python3
"""bench_flood.py - a legitimate agent's latency while the PDP is flooded.

    tests/bench/bench_flood.py [BUILD_DIR] [--hostile N] [--polls M] [--n K]

Starts `intentgate serve` (release build, example bundle, synchronous=FULL)
with its data under a temporary directory, then measures K sequential
ALLOW decisions and K /healthz requests, each on a new connection (as the
CLI and the hook open them):
  1. idle
  2. while N hostile sockets (default 2,000, from 127.0.0.9) each hold a
     half-sent request line, and the agent keeps M long polls (default
     1,000) `?wait=60` on an allowed intent.
Prints p50 / p99 / max in ms and how many requests were not answered.
The targets (issue 12): ALLOW within 100 ms and /healthz within 50 ms under
the flood.
"""
import argparse
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def timed(port, method, path, token=None, body=None):
    t0 = time.perf_counter()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        h = {"Authorization": "Bearer " + token} if token else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        r.read()
        c.close()
        ok = r.status in (200, 201)
    except OSError:
        ok = False
    return (time.perf_counter() - t0) * 1000.0, ok


def measure(port, token, k, tag):
    allow, health, lost = [], [], 0
    for i in range(k):
        ms, ok = timed(port, "POST", "/v1/intents", token, {
            "action": "payments.refund", "resource": "b/%s/%d" % (tag, i),
            "params": {"amount": 5}})
        allow.append(ms)
        lost += not ok
        ms, ok = timed(port, "GET", "/healthz")
        health.append(ms)
        lost += not ok
    for name, xs in (("ALLOW", allow), ("/healthz", health)):
        print("  %-9s p50 %7.2f ms   p99 %7.2f ms   max %7.2f ms" % (
            name, percentile(xs, 50), percentile(xs, 99), max(xs)))
    print("  not answered: %d of %d" % (lost, 2 * k))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build/release")
    ap.add_argument("--hostile", type=int, default=2000)
    ap.add_argument("--polls", type=int, default=1000)
    ap.add_argument("--n", type=int, default=300)
    a = ap.parse_args()
    os.environ["INTENTGATE_BIN"] = os.path.abspath(
        os.path.join(a.build, "cli", "intentgate"))
    from harness import Server
    from test_pdp import write_custom
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tmp = tempfile.mkdtemp(prefix="ig-bench-flood-")
    conf, env = write_custom(tmp, None, "threads = 2\n",
                             "quota_per_minute = 100000000\n")
    srv = Server.custom(conf, tmp, env)
    token = env["INTENTGATE_AGENT_TOKEN"]
    socks = []
    try:
        print("idle:")
        measure(srv.port, token, a.n, "idle")
        for _ in range(a.hostile):
            s = socket.socket()
            s.bind(("127.0.0.9", 0))
            s.connect(("127.0.0.1", srv.port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        try:
            iid = srv.submit("payments.refund", "b/poll",
                             {"amount": 5})[1]["intent_id"]
        except OSError as e:
            print("  (the intent to poll was not answered: %s)" % e)
            iid = "00000000-0000-4000-8000-000000000000"
        req = ("GET /v1/intents/%s?wait=60 HTTP/1.1\r\nHost: x\r\n"
               "Authorization: Bearer %s\r\n\r\n" % (iid, token)).encode()
        for _ in range(a.polls):
            try:
                s = socket.create_connection(("127.0.0.1", srv.port),
                                             timeout=1)
                s.sendall(req)
                socks.append(s)
            except OSError:
                pass
        print("flood: %d half-sent requests, %d long polls:" % (
            a.hostile, a.polls))
        measure(srv.port, token, a.n, "flood")
    finally:
        for s in socks:
            s.close()
        srv.stop()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
