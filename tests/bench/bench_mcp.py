#!/usr/bin/env python3
"""bench_mcp.py - what the MCP gateway adds to a tools/call.

    python3 tests/bench/bench_mcp.py BUILD_DIR [N]          (N default 400)

BUILD_DIR holds cli/intentgate and executor/intentgate-executor (build a
RelWithDebInfo tree without sanitizers for figures worth quoting; the
environment's INTENTGATE_BIN and INTENTGATE_EXECUTOR_BIN win when set).
tests/integration/mcp_stack.py starts a PDP with `synchronous = full`
(every decision and every redeem is on disk before the answer: the
durability is part of what is measured) and a policy that ALLOWs `mcp.`,
our fixture over Streamable HTTP (mcp_fixture.py, profile hostile) as
server "conf" with bare names, and the executor. Then, for 1 and for 32
concurrent clients (threads, each with its own MCP session and its own
keep-alive connection), N tools/call of the fixture's `echo` in all are
timed, straight to the fixture and through the gateway, the two
alternated, after a warm-up of 3 calls a client.

How to read it: one line per (path, clients) with the calls made, the
throughput, and the p50 and p99 latency in milliseconds of one call (POST
sent to the whole answer read); then "added" = gateway minus direct at
p50 and p99, the gateway's cost per call: the whoami check (cached), the
intent at the PDP (a durable write), the grant verified, the run record,
the redeem (a durable write), the hop to the upstream, the scrub. The
outcome report goes after the answer and is not in the latency, but it
competes for the same 2 cores. The last lines give each process's CPU
use during the 32-client runs in percent of one core: a Python fixture
near 100 % is the bottleneck there (one interpreter, one GIL), and then
the 32-client figures say more about it than about the gateway. Not a
test: figures go in the issue notes.
"""
import http.client
import json
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
if len(sys.argv) > 1:
    B = os.path.abspath(sys.argv[1])
    os.environ.setdefault("INTENTGATE_BIN", os.path.join(B, "cli",
                                                         "intentgate"))
    os.environ.setdefault("INTENTGATE_EXECUTOR_BIN",
                          os.path.join(B, "executor", "intentgate-executor"))
import exec_harness as H  # noqa: E402
import mcp_stack  # noqa: E402

CLIENTS = (1, 32)
WARMUP = 3


class Session:
    """One client: its keep-alive connection and its MCP session."""

    def __init__(self, url, token):
        hostport, self.path = url[len("http://"):].split("/", 1)
        host, port = hostport.split(":")
        self.path = "/" + self.path
        self.conn = http.client.HTTPConnection(host, int(port), timeout=120)
        self.h = {"Content-Type": "application/json",
                  "Accept": "application/json, text/event-stream"}
        if token:
            self.h["Authorization"] = "Bearer " + token
        self.next_id = 0
        st, hdrs, _ = self.post({"method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        if st != 200:
            raise AssertionError("initialize answered %s" % st)
        self.h["Mcp-Session-Id"] = hdrs["mcp-session-id"]
        self.h["MCP-Protocol-Version"] = "2025-11-25"
        st, _, _ = self.post({"method": "notifications/initialized"},
                             notify=True)
        if st != 202:
            raise AssertionError("initialized answered %s" % st)

    def post(self, msg, notify=False):
        msg = dict(msg, jsonrpc="2.0")
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        self.conn.request("POST", self.path, body=json.dumps(msg).encode(),
                          headers=self.h)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def call(self, text):
        st, _, data = self.post({"method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": text}}})
        if st != 200 or text.encode() not in data or b'"isError":true' in \
                data.replace(b" ", b""):
            raise AssertionError("echo answered %s: %r" % (st, data[:300]))

    def close(self):
        self.conn.close()


def run(url, token, clients, n, procs):
    """Latencies (seconds) of n calls by clients threads, the wall time of
    the measured part, and the CPU ticks each of procs (name: pid) used
    during it."""
    per = max(1, n // clients)
    sessions = [Session(url, token) for _ in range(clients)]
    lat = [[] for _ in range(clients)]
    errors = []
    go = threading.Barrier(clients + 1)

    def worker(i):
        s = sessions[i]
        try:
            for k in range(WARMUP):
                s.call("warm %d %d" % (i, k))
            go.wait()
            for k in range(per):
                t0 = time.monotonic()
                s.call("call %d %d" % (i, k))
                lat[i].append(time.monotonic() - t0)
        except Exception as e:  # reported after the join
            errors.append(e)
            go.abort()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in ts:
        t.start()
    try:
        go.wait()
    except threading.BrokenBarrierError:
        pass
    t0 = time.monotonic()
    before = {k: cpu_ticks(p) for k, p in procs.items()}
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    used = {k: cpu_ticks(p) - before[k] for k, p in procs.items()}
    for s in sessions:
        s.close()
    if errors:
        raise errors[0]
    return [x for li in lat for x in li], wall, used


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        f = f.read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime + stime


def main():
    if len(sys.argv) < 2 or len(sys.argv) > 3:
        print("usage: bench_mcp.py BUILD_DIR [N]", file=sys.stderr)
        return 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    res = H.Resources()
    try:
        lay = H.Layout(res, "tmp")
        st = mcp_stack.Stack(res, lay, synchronous="full", profile="hostile")
        procs = {"fixture": st.fixture.pid, "executor": st.ex.proc.pid,
                 "pdp": st.pdp.proc.pid}
        hz = os.sysconf("SC_CLK_TCK")
        paths = (("direct", st.fixture_url, None),
                 ("gateway", st.gateway_url, st.agent))
        got, cpu = {}, {}
        for clients in CLIENTS:
            order = paths if clients == 1 else tuple(reversed(paths))
            for name, url, token in order:
                lat, wall, used = run(url, token, clients, n, procs)
                if clients == CLIENTS[-1]:
                    cpu[name] = {k: 100.0 * v / hz / wall
                                 for k, v in used.items()}
                got[name, clients] = lat
                print("%-8s clients %2d: %5d calls, %7.1f calls/s, "
                      "p50 %7.2f ms, p99 %7.2f ms"
                      % (name, clients, len(lat), len(lat) / wall,
                         1000 * statistics.median(lat), 1000 * pct(lat, 99)),
                      flush=True)
        for clients in CLIENTS:
            d, g = got["direct", clients], got["gateway", clients]
            print("added    clients %2d: p50 %+7.2f ms, p99 %+7.2f ms"
                  % (clients, 1000 * (statistics.median(g) -
                                      statistics.median(d)),
                     1000 * (pct(g, 99) - pct(d, 99))))
        for name in ("direct", "gateway"):
            print("cpu at %d clients, %s: %s" % (
                CLIENTS[-1], name, ", ".join("%s %.0f %%" % kv for kv in
                                             sorted(cpu[name].items()))))
        rc = st.ex.stop()
        st.ex.check_log_clean(st.ex.secrets.items())
        return 0 if rc == 0 else 1
    finally:
        res.close()


if __name__ == "__main__":
    sys.exit(main())
