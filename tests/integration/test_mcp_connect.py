"""test_mcp_connect.py - `intentgate mcp connect URL`, the stdio bridge to
an MCP Streamable HTTP (2025-11-25) server, against a fake server here.

The fake server (http.server on 127.0.0.1:0) records every request's
method, headers and body, and answers by the JSON-RPC method it was sent:
initialize (JSON, pretty-printed over several lines, with a session id),
tools/list (an event stream: a priming event, a progress notification and
the result, with CR, LF and CRLF line ends, written piece by piece), slow
(held until the server has seen a ping), ping, boom (500 with a JSON-RPC
error body and junk), gone (404), any notification or response (202);
GET is 405, or an event stream with one notification when asked for;
DELETE is 200.

Checked: the token is sent as a bearer on every request and printed
nowhere; the session id and protocol version are sent after initialize
(not on it); every stdout line is one whole JSON message; a slow request
does not delay a ping sent after it (synchronised on what the server saw,
not on time); errors name the status and the server's message, never the
body; stdin's end and SIGTERM end the session with DELETE and exit 0.

    INTENTGATE_BIN=build/cli/intentgate \\
        python3 tests/integration/test_mcp_connect.py
"""
import http.server
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, run_tests  # noqa: E402

TOKEN = "agent-token-0123456789-secret"
SESSION = "sess-7f3a"
VERSION = "2025-11-25"
JUNK = "JUNK-" * 200
TIMEOUT = 20


class Fake(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, get_stream=False):
        super().__init__(("127.0.0.1", 0), Handler)
        self.get_stream = get_stream
        self.requests = []
        self.cond = threading.Condition()
        self.stop = threading.Event()
        self.release = threading.Event()  # lets "hold" requests answer
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d/mcp" % self.server_address[1]

    def record(self, method, headers, body):
        with self.cond:
            self.requests.append((method, headers, body))
            self.cond.notify_all()

    def seen(self, pred):
        with self.cond:
            return [r for r in self.requests if pred(r)]

    def wait_seen(self, pred, what):
        with self.cond:
            if not self.cond.wait_for(
                    lambda: any(pred(r) for r in self.requests), TIMEOUT):
                raise AssertionError("the server never saw " + what)

    def close(self):
        self.stop.set()
        self.shutdown()
        self.server_close()


def rpc_method(req):
    try:
        return json.loads(req[2]).get("method")
    except (ValueError, AttributeError):
        return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _headers(self):
        return {k.lower(): v for k, v in self.headers.items()}

    def _send(self, status, body=b"", ctype="application/json", extra=()):
        self.send_response(status)
        if body or ctype:
            self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self):
        self.server.record("DELETE", self._headers(), b"")
        self._send(200, b"", ctype=None)

    def do_GET(self):
        self.server.record("GET", self._headers(), b"")
        if not self.server.get_stream:
            self._send(405, b"", ctype=None)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        note = {"jsonrpc": "2.0",
                "method": "notifications/tools/list_changed"}
        self.wfile.write(b": hello\n\nid: g1\ndata: " +
                         json.dumps(note).encode() + b"\n\n")
        self.wfile.flush()
        self.server.stop.wait(TIMEOUT)  # held open until the test ends

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.record("POST", self._headers(), body)
        msg = json.loads(body)
        method, mid = msg.get("method"), msg.get("id")
        if "id" not in msg or method is None:
            self._send(202, b"", ctype=None)
        elif method == "initialize":
            result = {"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": VERSION, "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}}
            self._send(200, json.dumps(result, indent=2).encode(),
                       extra=[("Mcp-Session-Id", SESSION)])
        elif method == "tools/list":
            self._sse(mid)
        elif method == "slow":
            self.server.wait_seen(lambda r: rpc_method(r) == "ping",
                                  "the ping")
            self._answer(mid, {"slow": True})
        elif method == "hold":
            self.server.release.wait(TIMEOUT)
            self._answer(mid, {})
        elif method == "junk":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            # Not JSON: a raw escape; a duplicate key whose (escaped)
            # name the parser's message quotes.
            self.wfile.write(b'data: {"\x1b[31mred": \x1b]0;title\x07\n\n')
            self.wfile.write(b'data: {"k\\u001b]0;t\\u0007": 1, '
                             b'"k\\u001b]0;t\\u0007": 2}\n\n')
            self.wfile.write(b"data: " + json.dumps(
                {"jsonrpc": "2.0", "id": mid, "result": {}}).encode() +
                b"\n\n")
            self.close_connection = True
        elif method == "boom":
            err = {"jsonrpc": "2.0", "id": mid, "error": {
                "code": -32603, "message": "upstream exploded"},
                "junk": JUNK}
            self._send(500, json.dumps(err).encode())
        elif method == "gone":
            self._send(404, b"not found", ctype="text/plain")
        elif method == "half":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", "13")
            self.end_headers()
            self.wfile.write(b"id: x\ndata: \n\n"[:13])
        else:
            self._answer(mid, {})

    def _answer(self, mid, result):
        self._send(200, json.dumps({"jsonrpc": "2.0", "id": mid,
                                    "result": result}).encode())

    def _sse(self, mid):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        prog = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1}}
        res = {"jsonrpc": "2.0", "id": mid,
               "result": {"tools": [{"name": "t", "inputSchema": {
                   "type": "object"}}]}}
        text = json.dumps(res, indent=1).replace("\n", "\ndata: ")
        pieces = [b"id: p0\ndata: \n\n",
                  b"event: message\r\nid: p1\r\ndata: " +
                  json.dumps(prog).encode() + b"\r\n\r",
                  b"\nevent: message\rid: p2\rdata: " + text.encode() +
                  b"\r\r"]
        for p in pieces:
            self.wfile.write(p)
            self.wfile.flush()


class Bridge:
    """The bridge as a child process; its stdout lines in a queue, each
    checked to be one whole JSON value."""

    def __init__(self, url, token=TOKEN):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("INTENTGATE_")}
        if token is not None:
            env["INTENTGATE_TOKEN"] = token
        self.proc = subprocess.Popen(
            [BIN, "mcp", "connect", url], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.lines = queue.Queue()
        self.raw = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.raw.append(line)
            self.lines.put(line)

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next(self):
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError("no line from the bridge")
        if not line.endswith(b"\n") or b"\n" in line[:-1]:
            raise AssertionError("not one whole line: %r" % line)
        return json.loads(line)

    def answer(self, mid):
        """The next line; it must be the answer to mid."""
        msg = self.next()
        if msg.get("id") != mid:
            raise AssertionError("expected the answer to %r, got %r" %
                                 (mid, msg))
        return msg

    def finish(self):
        """Close stdin; exit status, stdout bytes, stderr text."""
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=TIMEOUT)
        self.reader.join(TIMEOUT)
        err = self.proc.stderr.read().decode()
        return rc, b"".join(self.raw), err

    def initialize(self):
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": VERSION,
                              "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}})
        res = self.answer(0)
        self.send({"jsonrpc": "2.0",
                   "method": "notifications/initialized"})
        return res


class McpConnect(unittest.TestCase):
    def setUp(self):
        self.srv = Fake()
        self.bridge = None

    def tearDown(self):
        if self.bridge is not None and self.bridge.proc.poll() is None:
            self.bridge.proc.kill()
            self.bridge.proc.wait()
        self.srv.close()

    def start(self, **kw):
        self.bridge = Bridge(self.srv.url, **kw)
        return self.bridge

    def check_clean_end(self, b):
        rc, out, err = b.finish()
        self.assertEqual(rc, 0, err)
        self.assertNotIn(TOKEN.encode(), out)
        self.assertNotIn(TOKEN, err)
        self.assertNotIn("in flight", err)
        return out, err

    def test_token_missing(self):
        b = self.start(token=None)
        rc, out, err = b.finish()
        self.assertEqual(rc, 2)
        self.assertEqual(out, b"")
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("INTENTGATE_TOKEN", err)
        self.assertEqual(self.srv.seen(lambda r: True), [])

    def test_headers_session_version_delete(self):
        b = self.start()
        res = b.initialize()
        self.assertEqual(res["result"]["protocolVersion"], VERSION)
        self.srv.wait_seen(
            lambda r: rpc_method(r) == "notifications/initialized",
            "notifications/initialized")
        self.srv.wait_seen(lambda r: r[0] == "GET", "the GET stream")
        self.check_clean_end(b)
        posts = self.srv.seen(lambda r: r[0] == "POST")
        for _, h, _ in posts:
            self.assertEqual(h.get("authorization"), "Bearer " + TOKEN)
            self.assertEqual(h.get("content-type"), "application/json")
            self.assertIn("application/json", h.get("accept", ""))
            self.assertIn("text/event-stream", h.get("accept", ""))
        init, after = posts[0][1], posts[1][1]
        self.assertNotIn("mcp-session-id", init)
        self.assertNotIn("mcp-protocol-version", init)
        self.assertEqual(after.get("mcp-session-id"), SESSION)
        self.assertEqual(after.get("mcp-protocol-version"), VERSION)
        # The GET stream was tried with both headers (405: no stream).
        gets = self.srv.seen(lambda r: r[0] == "GET")
        self.assertEqual(len(gets), 1)
        self.assertEqual(gets[0][1].get("mcp-session-id"), SESSION)
        self.assertIn("text/event-stream", gets[0][1].get("accept"))
        deletes = self.srv.seen(lambda r: r[0] == "DELETE")
        self.assertEqual(len(deletes), 1)
        self.assertEqual(deletes[0][1].get("mcp-session-id"), SESSION)
        self.assertEqual(deletes[0][1].get("authorization"),
                         "Bearer " + TOKEN)

    def test_sse_answer_streamed_whole_lines(self):
        b = self.start()
        b.initialize()
        b.send({"jsonrpc": "2.0", "id": "tl", "method": "tools/list"})
        note = b.next()
        self.assertEqual(note["method"], "notifications/progress")
        res = b.answer("tl")
        self.assertEqual(res["result"]["tools"][0]["name"], "t")
        out, _ = self.check_clean_end(b)
        self.assertEqual(len(out.splitlines()), 3)  # no priming line

    def test_slow_request_does_not_block_ping(self):
        b = self.start()
        b.initialize()
        b.send({"jsonrpc": "2.0", "id": 10, "method": "slow"})
        self.srv.wait_seen(lambda r: rpc_method(r) == "slow", "slow")
        # The server answers slow only once it has seen the ping: a bridge
        # that waited for slow's answer before sending the ping would
        # never get either. Both answers then race to stdout.
        b.send({"jsonrpc": "2.0", "id": 11, "method": "ping"})
        got = {m["id"]: m["result"] for m in (b.next(), b.next())}
        self.assertEqual(got, {10: {"slow": True}, 11: {}})
        self.check_clean_end(b)

    def test_http_errors(self):
        b = self.start()
        b.initialize()
        b.send({"jsonrpc": "2.0", "id": 5, "method": "boom"})
        err = b.answer(5)["error"]
        self.assertEqual(err["code"], -32000)
        self.assertIn("500", err["message"])
        self.assertIn("upstream exploded", err["message"])
        self.assertNotIn("JUNK", err["message"])
        b.send({"jsonrpc": "2.0", "id": 6, "method": "gone"})
        err = b.answer(6)["error"]
        self.assertEqual(err["code"], -32000)
        self.assertIn("404", err["message"])
        self.assertIn("session", err["message"])
        # A stream that ends without the answer: still one answer line.
        b.send({"jsonrpc": "2.0", "id": 7, "method": "half"})
        self.assertEqual(b.answer(7)["error"]["code"], -32000)
        # A notification answered 202: nothing on stdout. A ping after it
        # is the next line.
        b.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 5}})
        b.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        self.assertEqual(b.answer(8)["result"], {})
        self.check_clean_end(b)

    def test_hostile_text_not_on_the_terminal(self):
        b = self.start()
        b.send({"jsonrpc": "2.0", "id": 3, "method": "junk"})
        self.assertEqual(b.answer(3)["result"], {})
        _, err = self.check_clean_end(b)
        self.assertIn("dropped a message from the server", err)
        self.assertNotIn("\x1b", err)
        self.assertNotIn("\x07", err)

    def test_in_flight_cap(self):
        b = self.start()
        for i in range(32):
            b.send({"jsonrpc": "2.0", "id": i, "method": "hold"})
        self.srv.wait_seen(
            lambda r: len(self.srv.requests) >= 32 and
            all(rpc_method(x) == "hold" for x in self.srv.requests[:32]),
            "32 held requests")
        b.send({"jsonrpc": "2.0", "id": "over", "method": "ping"})
        err = b.answer("over")["error"]
        self.assertEqual(err["code"], -32000)
        self.assertIn("too many requests in flight", err["message"])
        self.srv.release.set()
        ids = sorted(b.next()["id"] for _ in range(32))
        self.assertEqual(ids, list(range(32)))
        b.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
        self.assertEqual(b.answer("after")["result"], {})
        self.check_clean_end(b)

    def test_bad_lines(self):
        b = self.start()
        b.send_raw(b"{not json\n")
        msg = b.next()
        self.assertIsNone(msg["id"])
        self.assertEqual(msg["error"]["code"], -32700)
        b.send_raw(b"[1,2]\n")
        self.assertEqual(b.next()["error"]["code"], -32600)
        b.send_raw(b"\n  \r\n")  # blank lines: nothing
        big = b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"' + \
            b"a" * (4 * 1024 * 1024) + b'"}\n'
        b.send_raw(big)
        msg = b.next()
        self.assertIsNone(msg["id"])
        self.assertEqual(msg["error"]["code"], -32700)
        self.assertIn("longer than", msg["error"]["message"])
        b.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        self.assertEqual(b.answer(2)["result"], {})
        self.check_clean_end(b)
        # No session: no DELETE.
        self.assertEqual(self.srv.seen(lambda r: r[0] == "DELETE"), [])

    def test_sigterm_ends_with_delete(self):
        b = self.start()
        b.initialize()
        self.srv.wait_seen(
            lambda r: rpc_method(r) == "notifications/initialized",
            "notifications/initialized")
        b.proc.send_signal(signal.SIGTERM)
        rc = b.proc.wait(timeout=TIMEOUT)
        self.assertEqual(rc, 0, b.proc.stderr.read().decode())
        self.assertEqual(len(self.srv.seen(lambda r: r[0] == "DELETE")), 1)


class GetStream(unittest.TestCase):
    def test_get_stream_events_then_delete(self):
        srv = Fake(get_stream=True)
        b = Bridge(srv.url)
        try:
            b.initialize()
            note = b.next()
            self.assertEqual(note["method"],
                             "notifications/tools/list_changed")
            rc, out, err = b.finish()  # the GET stream is still open
            self.assertEqual(rc, 0, err)
            self.assertNotIn(TOKEN, err)
            self.assertEqual(len(srv.seen(lambda r: r[0] == "DELETE")), 1)
        finally:
            if b.proc.poll() is None:
                b.proc.kill()
                b.proc.wait()
            srv.close()


class Usage(unittest.TestCase):
    def test_help_and_bad_url(self):
        res = subprocess.run([BIN, "mcp", "--help"], capture_output=True,
                             timeout=TIMEOUT)
        self.assertEqual(res.returncode, 0)
        self.assertIn(b"mcp connect URL", res.stdout)
        for url in ["ftp://x/mcp", "http://user:pw@127.0.0.1/mcp",
                    "http://127.0.0.1/a b", "http:///mcp"]:
            res = subprocess.run([BIN, "mcp", "connect", url],
                                 capture_output=True, timeout=TIMEOUT,
                                 env=dict(os.environ,
                                          INTENTGATE_TOKEN=TOKEN))
            self.assertEqual(res.returncode, 2, url)
            self.assertNotIn(b"pw", res.stderr)


if __name__ == "__main__":
    run_tests()
