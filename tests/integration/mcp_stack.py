#!/usr/bin/env python3
"""mcp_stack.py - the MCP gateway with one upstream, for the tests and the
benchmark that need the whole chain running (issue 16):

    a PDP (start_custom_pdp: a policy that ALLOWs every `mcp.` action),
    our fixture over Streamable HTTP (mcp_fixture.py http --profile
    conformance) registered as server "conf" with "names": "bare" (its
    tools keep their own names, as the conformance suite calls them),
    the real intentgate-executor serving the gateway at /mcp,
    and, with proxy, a test-only pass-through proxy on 127.0.0.1 that
    adds `Authorization: Bearer <agent token>` to every request, for
    clients that send no token (the conformance suite).

As a library: Stack(res, lay, synchronous="normal", proxy=False,
names="bare", policy=None, profile="conformance") (policy: a Lua policy
instead of the ALLOW one; names: "prefixed" shows conf__<tool>; profile:
the fixture's). As a program (tests/mcp/conformance_gateway.sh runs it
as a coprocess):

    INTENTGATE_BIN=... INTENTGATE_EXECUTOR_BIN=... \\
        mcp_stack.py [--proxy] [--synchronous full|normal]

prints `MCP_GATEWAY_URL=<url>` (the proxy's /mcp with --proxy, else the
gateway's) once everything answers, then holds it all up until stdin
ends or SIGTERM arrives, and cleans up. Standard library only.
"""
import argparse
import http.client
import http.server
import os
import signal
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import exec_harness as H  # noqa: E402

FIXTURE = os.path.join(HERE, "mcp_fixture.py")

# Hop-by-hop headers (RFC 9110 7.6.1) are the proxy's own business.
HOP = ("connection", "keep-alive", "proxy-connection", "te", "trailer",
       "transfer-encoding", "upgrade", "proxy-authorization")


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    """Forward one request as it came (method, path, headers, Host and
    Origin included, body), plus the bearer token; stream the answer back
    as it arrives (an event stream grows while a call runs)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # events go out as they arrive

    def log_message(self, fmt, *args):
        pass

    def _forward(self):
        srv = self.server
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else None
        up = http.client.HTTPConnection(srv.target_host, srv.target_port,
                                        timeout=120)
        try:
            up.putrequest(self.command, self.path, skip_host=True,
                          skip_accept_encoding=True)
            for k, v in self.headers.items():
                if k.lower() in HOP or k.lower() == "authorization":
                    continue
                up.putheader(k, v)
            up.putheader("Authorization", "Bearer " + srv.token)
            if body is None and self.command in ("POST", "PUT"):
                up.putheader("Content-Length", "0")
            up.endheaders(body)
            r = up.getresponse()
            self.send_response_only(r.status, r.reason)
            known = r.getheader("Content-Length")
            for k, v in r.getheaders():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            if known is None:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while True:
                chunk = r.read1(65536)
                if not chunk:
                    break
                if known is None:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                else:
                    self.wfile.write(chunk)
                self.wfile.flush()
            if known is None:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (OSError, http.client.HTTPException):
            self.close_connection = True
        finally:
            up.close()

    do_GET = do_POST = do_DELETE = do_PUT = do_OPTIONS = _forward


class Proxy(http.server.ThreadingHTTPServer):
    """127.0.0.1:0 in front of target ("http://host:port"), adding the
    agent's token. url: its /mcp."""

    daemon_threads = True

    def __init__(self, target, token):
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        host, port = target[len("http://"):].split(":")
        self.target_host, self.target_port = host, int(port)
        self.token = token
        self.url = "http://127.0.0.1:%d/mcp" % self.server_address[1]
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.shutdown()
        self.server_close()


class Stack:
    """PDP, fixture, executor (and the proxy). Everything is registered on
    res for cleanup. url: what a client should use; gateway_url: the
    gateway's own /mcp; fixture_url: the upstream's; agent: the token."""

    def __init__(self, res, lay, synchronous="normal", proxy=False,
                 names="bare", policy=None, profile="conformance"):
        H.require_binaries()
        self.res, self.lay = res, lay
        if policy is None:
            self.pdp = H.start_custom_pdp(res, lay.path("pdp"),
                                          prefixes=("mcp.",),
                                          synchronous=synchronous)
        else:
            self.pdp = H.start_custom_pdp(
                res, lay.path("pdp"), prefixes=("mcp.",),
                allow_prefixes=("nothing.",), synchronous=synchronous,
                policies={"mcp_stack.lua": policy})
        self.agent = self.pdp.env["INTENTGATE_AGENT_TOKEN"]
        self.fixture = subprocess.Popen(
            [sys.executable, FIXTURE, "http", "--port", "0", "--profile",
             profile], stdout=subprocess.PIPE,
            stderr=open(os.path.join(lay.path("fixture"), "fixture.log"),
                        "ab"),
            stdin=subprocess.DEVNULL, preexec_fn=H._die_with_us)
        res.process(self.fixture, "mcp fixture")
        line = self.fixture.stdout.readline().decode()
        if not line.startswith("MCP_FIXTURE_URL="):
            raise AssertionError("the fixture did not start: %r" % line)
        self.fixture_url = line.strip().split("=", 1)[1]
        self.cred = "conf-cred-" + H.rand(20)
        registry = {"actions": {}, "mcp": {
            "conf": {"transport": "http", "url": self.fixture_url,
                     "credential": "conf-cred", "names": names,
                     "timeout_ms": 30000}}}
        self.ex = H.ConfigExecutor(res, lay.path("executor"), self.pdp,
                                   registry,
                                   credentials={"conf-cred": self.cred})
        self.gateway_url = self.ex.url() + "/mcp"
        self.url = self.gateway_url
        self.proxy = None
        if proxy:
            self.proxy = Proxy(self.ex.url(), self.agent)
            res.push(self.proxy.stop, "auth proxy")
            self.url = self.proxy.url


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--proxy", action="store_true")
    ap.add_argument("--synchronous", choices=("normal", "full"),
                    default="normal")
    o = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, H._on_sigterm)
    res = H.Resources()
    lay = H.Layout(res, "tmp")
    st = Stack(res, lay, synchronous=o.synchronous, proxy=o.proxy)
    print("MCP_GATEWAY_URL=" + st.url, flush=True)
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    rc = st.ex.stop()
    st.ex.check_log_clean(st.ex.secrets.items())
    res.close()
    if rc != 0:
        print("mcp_stack: the executor exited with %s" % rc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
