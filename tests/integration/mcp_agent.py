"""mcp_agent.py - the agent's side of the MCP gateway suites
(test_mcp_gateway.py, test_mcp_attack.py): raw JSON-RPC over the gateway's
Streamable HTTP, parsed answers (JSON or an event stream), and the PDP
steps a test takes around a call. Standard library only.

A suite mixes McpAgent into its unittest.TestCase and provides self.ex
(the executor), self.pdp (the PDP) and self.agent (the agent's token);
every answer body goes through self.saw(what, data), which a suite
overrides to check that no credential ever reached the agent.
"""
import http.client
import json


def sse_messages(body):
    """The JSON messages of an event stream's data lines."""
    out = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [ln[5:].lstrip(b" ") for ln in block.split(b"\n")
                if ln.startswith(b"data:")]
        if data and any(data):
            out.append(json.loads(b"\n".join(data)))
    return out


class McpAgent:
    def saw(self, what, data):
        """Every answer the agent got; a suite checks it."""

    def hostport(self):
        host, port = self.ex.url()[len("http://"):].split(":")
        return host, int(port)

    def raw(self, method, body, headers, multi=()):
        """One request to /mcp; multi: (name, value) headers sent as given,
        so a header may repeat. Status 0: the server cut the connection
        (refusing a request too large to read) before an answer could be
        read."""
        host, port = self.hostport()
        c = http.client.HTTPConnection(host, port, timeout=60)
        c.putrequest(method, "/mcp", skip_host=True,
                     skip_accept_encoding=True)
        for k, v in list(headers.items()) + list(multi):
            c.putheader(k, v)
        if body is not None:
            c.putheader("Content-Length", str(len(body)))
        try:
            c.endheaders(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed before all was sent: read it
        try:
            r = c.getresponse()
            data = r.read()
        except (ConnectionResetError, http.client.RemoteDisconnected):
            c.close()
            return 0, {}, b""  # cut before any answer could be read
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        return r.status, hdrs, data

    def post(self, msg, token=None, session=None, headers=None, raw=None):
        """POST one message (or raw bytes); the status, the headers and the
        messages answered. token False: no Authorization at all."""
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream",
             "Host": "127.0.0.1"}
        if token is not False:
            h["Authorization"] = "Bearer " + (token or self.agent)
        if session:
            h["Mcp-Session-Id"] = session
        h.update(headers or {})
        body = raw if raw is not None else json.dumps(msg).encode()
        st, hdrs, data = self.raw("POST", body, h)
        self.saw("a POST answer", data)
        ctype = hdrs.get("content-type", "")
        if ctype.startswith("text/event-stream"):
            msgs = sse_messages(data)
        elif data:
            msgs = [json.loads(data)]
        else:
            msgs = []
        return st, hdrs, msgs

    def session(self, token=None, caps=None):
        """initialize + notifications/initialized: the session id."""
        st, hdrs, msgs = self.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25",
                        "capabilities": caps or {},
                        "clientInfo": {"name": "t", "version": "1"}}},
            token=token)
        self.assertEqual(st, 200, msgs)
        self.assertEqual(msgs[0]["result"]["protocolVersion"], "2025-11-25")
        sid = hdrs["mcp-session-id"]
        st, _, _ = self.post({"jsonrpc": "2.0",
                              "method": "notifications/initialized"},
                             token=token, session=sid)
        self.assertEqual(st, 202)
        return sid

    def call(self, sid, name, args, mid=1, token=None, meta=None,
             params=None):
        """tools/call; every message of the answer."""
        p = params if params is not None else {"name": name,
                                               "arguments": args}
        if meta:
            p["_meta"] = meta
        st, _, msgs = self.post({"jsonrpc": "2.0", "id": mid,
                                 "method": "tools/call", "params": p},
                                session=sid, token=token)
        self.assertEqual(st, 200, msgs)
        return msgs

    def final(self, msgs, mid=1):
        """The result or error for id mid among msgs."""
        for m in msgs:
            if m.get("id") == mid and ("result" in m or "error" in m):
                return m
        raise AssertionError("no answer for id %r in %r" % (mid, msgs))

    def text(self, result):
        return "".join(c.get("text", "") for c in result["content"])

    def tools(self, sid):
        """tools/list as {shown name: tool}."""
        st, _, msgs = self.post({"jsonrpc": "2.0", "id": 2,
                                 "method": "tools/list"}, session=sid)
        self.assertEqual(st, 200, msgs)
        return {t["name"]: t for t in msgs[0]["result"]["tools"]}

    def intents(self, action):
        """The bindings of every intent the PDP received for action."""
        return [e["intent"] for e in self.pdp.audit_events()
                if e.get("type") == "intent.received" and
                e.get("intent", {}).get("action") == action]

    def approve(self, iid):
        """The approver "appr" votes for the escalated intent iid."""
        rec = self.pdp.record(iid)
        st, login, _ = self.pdp.call(
            "POST", "/v1/approver/login", None,
            {"approver": "appr",
             "password": self.pdp.secrets["approver password"]})
        self.assertEqual(st, 200, login)
        st, res, _ = self.pdp.call(
            "POST", "/v1/approvals/%s/votes" % rec["approval"]["approval_id"],
            login["token"], {"vote": "approve",
                             "intent_hash": rec["intent_hash"]})
        self.assertEqual(st, 200, res)
