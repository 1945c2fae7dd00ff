"""test_mcp_gateway.py - issue 16: the executor's MCP gateway (/mcp) in
front of our own upstream fixture (tests/integration/mcp_fixture.py):
a stdio server started under the exec sandbox (the "hostile" profile:
echoes, reflects its credential, changes a tool's description, hangs)
and a Streamable HTTP server (the "conformance" profile, its credential
as a header). A compromised agent speaks raw JSON-RPC at the gateway, and
the official TypeScript SDK client (tests/mcp/client.mjs) does the
ordinary things. The deployment lives under the clone.

FAILS (never skips) without the binaries, node, tests/mcp/node_modules,
root or bubblewrap.
"""
import json
import os
import shutil
import subprocess
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import exec_harness as H  # noqa: E402
from mcp_agent import McpAgent  # noqa: E402

FIXTURE = os.path.join(HERE, "mcp_fixture.py")
CLIENT = os.path.join(H.REPO, "tests", "mcp", "client.mjs")
PY = "/usr/bin/python3"

POLICY = """-- test policy for the MCP gateway
return function(intent)
  local a = intent.action
  if a == "mcp.hostile.echo" or a == "mcp.hostile.whoami" or
     a == "mcp.hostile.shifty" or a == "mcp.hostile.hang" or
     a == "mcp.hostile.flood" or starts_with(a, "mcp.conf") or
     starts_with(a, "mcp.mortal.") then
    return ALLOW
  end
  if starts_with(a, "mcp.fs.") then
    if a == "mcp.fs.list_allowed_directories" then return ALLOW end
    if starts_with(intent.resource, "/data/") then return ALLOW end
    return BLOCK{reason = "OUTSIDE_DATA"}
  end
  if starts_with(a, "mcp.every.") then return ALLOW end
  if a == "mcp.hostile.read_path" then
    if starts_with(intent.resource, "/ok/") then return ALLOW end
    return BLOCK{reason = "PATH_NOT_ALLOWED"}
  end
  if a == "mcp.hostile.mutate" then
    if approved(intent, "security") then return ALLOW end
    return ESCALATE{approvers = {"security"}, reason = "NEEDS_A_HUMAN"}
  end
  return nil
end
"""


def copy_node_modules(dest):
    """tests/mcp/node_modules without the Node 22 binary package, readable
    by the sandbox user: where an operator would install the servers."""
    src = os.path.join(H.REPO, "tests", "mcp", "node_modules")
    shutil.copytree(src, dest, symlinks=True,
                    ignore=lambda d, names: ["node"] if d == src else [])
    for root, dirs, files in os.walk(dest):
        os.chmod(root, 0o755)
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                os.chmod(p, 0o644 | (os.stat(p).st_mode & 0o111))


class GatewayTest(McpAgent, unittest.TestCase):
    # Under /srv, as an operator lays it out (a clone under mktemp -d is
    # not traversable by the sandbox user).
    KIND = "srv"

    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        H.require_root()
        if not os.path.exists(os.path.join(H.REPO, "tests", "mcp",
                                           "node_modules", "@modelcontextprotocol",
                                           "sdk")):
            raise AssertionError("tests/mcp/node_modules is missing: npm ci "
                                 "--prefix tests/mcp (scripts/test.sh does)")
        cls.res = H.Resources()
        lay = cls.lay = H.Layout(cls.res, cls.KIND)
        cls.pdp = H.start_custom_pdp(
            cls.res, lay.path("pdp"), prefixes=("mcp.",),
            allow_prefixes=("nothing.",), policies={"mcp_gw.lua": POLICY},
            second_agent=True)
        cls.agent = cls.pdp.env["INTENTGATE_AGENT_TOKEN"]
        cls.cred_stdio = "stdio-cred-" + H.rand(20)
        cls.cred_http = "http-cred-" + H.rand(20)
        # The HTTP upstream: the fixture's conformance profile.
        cls.http_up = subprocess.Popen(
            [sys.executable, FIXTURE, "http", "--port", "0", "--profile",
             "conformance"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            preexec_fn=H._die_with_us)
        cls.res.process(cls.http_up, "http fixture")
        line = cls.http_up.stdout.readline().decode()
        assert line.startswith("MCP_FIXTURE_URL="), line
        http_url = line.strip().split("=", 1)[1]
        # What the sandbox user (nobody) must reach, as an operator
        # lays it out: the server's code readable, its state dir its own;
        # the layout root only traversable.
        os.chmod(lay.root, 0o711)
        fix = lay.path("fixture")
        os.chmod(fix, 0o755)
        shutil.copy(FIXTURE, os.path.join(fix, "mcp_fixture.py"))
        os.chmod(os.path.join(fix, "mcp_fixture.py"), 0o644)
        cls.flag_dir = lay.path("flags")
        os.chmod(cls.flag_dir, 0o777)
        mods = os.path.join(lay.path("opt"), "node_modules")
        os.chmod(lay.path("opt"), 0o755)
        copy_node_modules(mods)
        cls.data = lay.path("data")
        os.chmod(cls.data, 0o777)
        H.write_file(os.path.join(cls.data, "hello.txt"), "hello gateway\n",
                     0o644)
        cls.outside = lay.path("outside")
        os.chmod(cls.outside, 0o755)
        H.write_file(os.path.join(cls.outside, "secret.txt"), "not for you\n",
                     0o644)
        cls.cred_every = "every-cred-" + H.rand(20)
        registry = {"actions": {}, "mcp": {
            "hostile": {
                "transport": "stdio",
                "command": [PY, "/fixture/mcp_fixture.py", "stdio",
                            "--profile", "hostile"],
                "credential": "hostile-cred",
                "credential_env": "FIXTURE_CREDENTIAL",
                "env": {"FIXTURE_MUTATE_FILE": "/flags/mutated"},
                "binds": [{"src": fix, "dest": "/fixture"},
                          {"src": cls.flag_dir, "dest": "/flags",
                           "mode": "rw"}],
                "timeout_ms": 5000,
                "tools": {"read_path": {"resource": "/path"}}},
            # Exits after answering its third request.
            "mortal": {"transport": "stdio",
                       "command": [PY, "/fixture/mcp_fixture.py", "stdio",
                                   "--profile", "hostile", "--die-after",
                                   "3"],
                       "binds": [{"src": fix, "dest": "/fixture"}],
                       "timeout_ms": 5000},
            "conf": {"transport": "http", "url": http_url,
                     "credential": "conf-cred", "timeout_ms": 10000},
            # The reference servers from npm, in the sandbox.
            "fs": {"transport": "stdio",
                   "command": ["/usr/bin/node", "/opt/mcp/node_modules/"
                               "@modelcontextprotocol/server-filesystem/dist/"
                               "index.js", "/data"],
                   "binds": [{"src": mods, "dest": "/opt/mcp/node_modules"},
                             {"src": cls.data, "dest": "/data",
                              "mode": "rw"},
                             {"src": cls.outside, "dest": "/outside"}],
                   "tools": {"read_text_file": {"resource": "/path"},
                             "write_file": {"resource": "/path"}}},
            "every": {"transport": "stdio",
                      "command": ["/usr/bin/node", "/opt/mcp/node_modules/"
                                  "@modelcontextprotocol/server-everything/"
                                  "dist/index.js", "stdio"],
                      "credential": "every-cred",
                      "credential_env": "EVERY_TOKEN",
                      "binds": [{"src": mods,
                                 "dest": "/opt/mcp/node_modules"}]}}}
        cls.pins = os.path.join(lay.path("executor"), "mcp-pins.jsonl")
        cls.ex = H.ConfigExecutor(
            cls.res, lay.path("executor"), cls.pdp, registry,
            credentials={"hostile-cred": cls.cred_stdio,
                         "conf-cred": cls.cred_http,
                         "every-cred": cls.cred_every},
            conf="mcp_escalation_wait_ms = 10000\n"
                 "mcp_approval_url = https://pdp.example/ui/approvals/\n")
        cls.seen = []

    @classmethod
    def tearDownClass(cls):
        try:
            if getattr(cls, "ex", None) is not None:
                rc = cls.ex.stop()
                cls.ex.check_log_clean()
                if rc != 0:
                    raise AssertionError("executor exit %s:\n%s"
                                         % (rc, cls.ex.log()[-3000:]))
                for what, data in cls.seen:
                    for v in (cls.cred_stdio, cls.cred_http,
                              cls.cred_every):
                        if v.encode() in data:
                            raise AssertionError("a credential reached the "
                                                 "agent in " + what)
        finally:
            cls.res.close()


    def saw(self, what, data):
        self.seen.append((what, data))

    def intent_events(self, action):
        return self.intents(action)

    # ---- tests ----

    def test_transport_refusals(self):
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25",
                           "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}}
        st, _, _ = self.post(init, token=False)
        self.assertEqual(st, 401)
        st, _, _ = self.post(init, token="igt_agent_nope")
        self.assertEqual(st, 401)
        st, _, _ = self.post(init, token=self.pdp.env[
            "INTENTGATE_EXECUTOR_TOKEN"])
        self.assertEqual(st, 403)
        st, _, _ = self.post(init, headers={"Origin": "https://evil.example"})
        self.assertEqual(st, 403)
        st, _, _ = self.post(init, headers={"Host": "evil.example"})
        self.assertEqual(st, 403)
        st, _, _ = self.post(init, headers={"Accept": "application/json"})
        self.assertEqual(st, 406)
        st, _, msgs = self.post(None, raw=b"[" + json.dumps(init).encode() +
                                b"]")
        self.assertEqual(st, 400, msgs)
        st, _, msgs = self.post(None, raw=b"{not json")
        self.assertEqual(st, 400)
        self.assertEqual(msgs[0]["error"]["code"], -32700)
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        self.assertEqual(st, 400)  # no session
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 3, "method": "ping"},
                             session="ab" * 32)
        self.assertEqual(st, 404)
        # The stateless revision (its version in _meta, no session): told
        # apart and answered as that revision answers a version it lacks.
        st, _, msgs = self.post({
            "jsonrpc": "2.0", "id": 7, "method": "tools/list",
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
        self.assertEqual(st, 400, msgs)
        self.assertEqual(msgs[0]["error"]["code"], -32022)
        self.assertIn("2025-11-25", msgs[0]["error"]["data"]["supported"])
        st, hdrs, _ = self.raw("GET", None, {
            "Authorization": "Bearer " + self.agent, "Host": "127.0.0.1",
            "Accept": "text/event-stream"})
        self.assertEqual(st, 405)

    def test_tools_are_listed_under_their_server(self):
        sid = self.session()
        tools = self.tools(sid)
        for n in ("hostile__echo", "hostile__whoami", "conf__test_simple_text"):
            self.assertIn(n, tools)
        blob = json.dumps(tools)
        self.assertNotIn(self.cred_stdio, blob)

    def test_allowed_call_reaches_the_upstream(self):
        sid = self.session()
        m = self.final(self.call(sid, "hostile__echo", {"text": "hi"}))
        self.assertFalse(m["result"].get("isError"), m)
        self.assertIn("hi", json.dumps(m["result"]))
        ev = self.intent_events("mcp.hostile.echo")
        self.assertTrue(ev)
        self.assertEqual(ev[-1]["resource"], "mcp://hostile/echo")
        m = self.final(self.call(sid, "conf__test_simple_text", {}))
        self.assertFalse(m["result"].get("isError"), m)

    def test_blocked_call_says_why_and_sends_nothing(self):
        sid = self.session()
        m = self.final(self.call(sid, "hostile__read_path",
                                 {"path": "/etc/shadow"}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertIn("PATH_NOT_ALLOWED", self.text(m["result"]))
        self.assertNotIn("read /etc/shadow", self.text(m["result"]))
        m = self.final(self.call(sid, "hostile__read_path",
                                 {"path": "/ok/file"}))
        self.assertEqual(self.text(m["result"]), "read /ok/file")
        ev = self.intent_events("mcp.hostile.read_path")
        self.assertEqual(ev[-1]["resource"], "/ok/file")
        # The resource argument must be a string.
        m = self.final(self.call(sid, "hostile__read_path", {"path": 7}))
        self.assertTrue(m["result"]["isError"], m)

    def test_reflected_credential_is_scrubbed(self):
        sid = self.session()
        m = self.final(self.call(sid, "hostile__whoami", {}))
        blob = json.dumps(m)
        self.assertNotIn(self.cred_stdio, blob)
        self.assertIn("[credential removed]", blob)

    def mcp_calls(self, result):
        line = 'intentgate_executor_mcp_calls_total{result="%s"} ' % result
        for ln in self.ex.metrics().splitlines():
            if ln.startswith(line):
                return int(ln[len(line):])
        raise AssertionError("no %s in /metrics" % line)

    def test_metrics_count_calls_by_result(self):
        before = {r: self.mcp_calls(r) for r in ("forwarded", "blocked")}
        sid = self.session()
        self.final(self.call(sid, "hostile__echo", {"text": "m"}))
        self.final(self.call(sid, "hostile__read_path", {"path": "/no"}))
        for r in ("forwarded", "blocked"):
            self.assertEqual(self.mcp_calls(r), before[r] + 1, r)

    def test_executor_events_endpoint_takes_only_its_facts(self):
        ev = {"event": "mcp.tool_pinned",
              "detail": {"server": "x", "tool": "y",
                         "hash": "sha256:" + "0" * 64}}
        st, body, _ = self.pdp.call("POST", "/v1/executor/events",
                                    self.agent, ev)
        self.assertEqual(st, 403, body)
        ex = self.pdp.env["INTENTGATE_EXECUTOR_TOKEN"]
        for bad in ({"event": "grant.redeemed", "detail": ev["detail"]},
                    {"event": "mcp.tool_pinned", "detail": {"server": "x"}},
                    dict(ev, extra=1),
                    {"event": "mcp.tool_pinned",
                     "detail": dict(ev["detail"], tool="a b")}):
            st, body, _ = self.pdp.call("POST", "/v1/executor/events", ex,
                                        bad)
            self.assertEqual(st, 400, (bad, body))
        st, body, _ = self.pdp.call("POST", "/v1/executor/events", ex, ev)
        self.assertEqual(st, 200, body)

    def test_upstream_stream_cut_before_its_answer_is_resumed(self):
        # The fixture ends the call's event stream before the result; the
        # gateway resumes it with GET and Last-Event-ID.
        sid = self.session()
        m = self.final(self.call(sid, "conf__test_reconnection", {}))
        self.assertFalse(m["result"].get("isError"), m)

    def test_unknown_tool_and_other_server(self):
        sid = self.session()
        m = self.final(self.call(sid, "nosuch__echo", {}))
        self.assertEqual(m["error"]["code"], -32602)
        m = self.final(self.call(sid, "hostile__nosuch", {}))
        self.assertIn("error", m)

    def test_second_agents_session_is_refused(self):
        sid = self.session()
        other = self.pdp.env["INTENTGATE_AGENT2_TOKEN"]
        # Another agent holding this session id gets what an unknown id
        # gets: 404, for every method, and cannot end it either.
        for msg in ({"jsonrpc": "2.0", "id": 4, "method": "ping"},
                    {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
                    {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                     "params": {"name": "hostile__echo",
                                "arguments": {"text": "x"}}}):
            st, _, msgs = self.post(msg, session=sid, token=other)
            self.assertEqual(st, 404, msgs)
        st, _, _ = self.raw("DELETE", None, {
            "Authorization": "Bearer " + other, "Host": "127.0.0.1",
            "Mcp-Session-Id": sid})
        self.assertEqual(st, 404)
        # A forged token is refused before the session is looked at.
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 4, "method": "ping"},
                             session=sid, token="igt_agent_forged")
        self.assertEqual(st, 401)
        # The owner still has it, and may end it; then it is gone.
        st, _, msgs = self.post({"jsonrpc": "2.0", "id": 4, "method": "ping"},
                                session=sid)
        self.assertEqual(st, 200, msgs)
        st, _, _ = self.raw("DELETE", None, {
            "Authorization": "Bearer " + self.agent, "Host": "127.0.0.1",
            "Mcp-Session-Id": sid})
        self.assertEqual(st, 200)
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 4, "method": "ping"},
                             session=sid)
        self.assertEqual(st, 404)

    def test_another_agents_pending_escalation_is_not_picked_up(self):
        other = self.pdp.env["INTENTGATE_AGENT2_TOKEN"]
        sid = self.session()
        sid2 = self.session(token=other)
        args = {"n": H.rand(8)}
        m = self.final(self.call(sid, "hostile__mutate", args))
        self.assertIn("waits for a human", self.text(m["result"]))
        m2 = self.final(self.call(sid2, "hostile__mutate", args,
                                  token=other))
        self.assertIn("waits for a human", self.text(m2["result"]))
        ev = [e for e in self.intent_events("mcp.hostile.mutate")
              if e["params"] == args]
        self.assertEqual(len(ev), 2, ev)
        self.assertEqual(sorted(e["principal"] for e in ev), ["a1", "a2"])

    def test_held_call_goes_through_once_approved(self):
        sid = self.session()
        args = {"n": H.rand(8)}
        out = {}

        def held():
            out["msgs"] = self.call(sid, "hostile__mutate", args, mid=9)
        t = threading.Thread(target=held)
        t.start()
        try:
            ev = H.wait_for(lambda: [e for e in self.intent_events(
                "mcp.hostile.mutate") if e["params"] == args],
                what="the escalated intent")
            self.approve(ev[0]["intent_id"])
        finally:
            t.join(60)
        m = self.final(out["msgs"], mid=9)
        self.assertFalse(m["result"].get("isError"), m)
        self.pdp.wait_state(ev[0]["intent_id"], "COMPLETED")

    def cancel_while_held(self, sid, name, args, wait_for):
        """Call name in a thread; once wait_for() holds, cancel it in the
        same session. The call's final answer."""
        out = {}

        def held():
            out["msgs"] = self.call(sid, name, args, mid=21)
        t = threading.Thread(target=held)
        t.start()
        try:
            H.wait_for(wait_for, what="the call in flight")
            st, _, _ = self.post({"jsonrpc": "2.0",
                                  "method": "notifications/cancelled",
                                  "params": {"requestId": 21,
                                             "reason": "user"}},
                                 session=sid)
            self.assertEqual(st, 202)
        finally:
            t.join(60)
        return self.final(out["msgs"], mid=21)

    def test_cancel_ends_a_held_escalation(self):
        sid = self.session()
        args = {"n": H.rand(8)}
        m = self.cancel_while_held(sid, "hostile__mutate", args, lambda: [
            e for e in self.intent_events("mcp.hostile.mutate")
            if e["params"] == args])
        self.assertIn("cancelled by the client", self.text(m["result"]))
        # Still pending: the same call again picks it up (one intent).
        m = self.final(self.call(sid, "hostile__mutate", args))
        self.assertEqual(len([e for e in self.intent_events(
            "mcp.hostile.mutate") if e["params"] == args]), 1)

    def test_cancel_stops_waiting_for_the_upstream(self):
        sid = self.session()
        before = self.mcp_calls_sent("hang")
        m = self.cancel_while_held(
            sid, "hostile__hang", {"tag": H.rand(6)},
            lambda: self.mcp_calls_sent("hang") > before)
        self.assertIn("cancelled", self.text(m["result"]))
        self.assertTrue(m["result"]["isError"])

    def mcp_calls_sent(self, tool):
        return len([e for e in self.intent_events("mcp.hostile." + tool)])

    def test_escalation_times_out_then_retry_picks_it_up(self):
        sid = self.session(caps={"elicitation": {"url": {}}})
        args = {"n": H.rand(8)}
        msgs = self.call(sid, "hostile__mutate", args,
                         meta={"progressToken": "p1"})
        m = self.final(msgs)
        self.assertTrue(m["result"]["isError"], m)
        text = self.text(m["result"])
        self.assertIn("waits for a human", text)
        prog = [x for x in msgs if x.get("method") == "notifications/progress"]
        self.assertTrue(prog, msgs)
        self.assertEqual(prog[0]["params"]["progressToken"], "p1")
        eli = [x for x in msgs if x.get("method") == "elicitation/create"]
        self.assertTrue(eli, msgs)
        self.assertTrue(eli[0]["params"]["url"].startswith(
            "https://pdp.example/ui/approvals/"))
        def mine():
            return [e for e in self.intent_events("mcp.hostile.mutate")
                    if e["params"] == args]
        ev = mine()
        self.assertEqual(len(ev), 1)
        iid = ev[0]["intent_id"]
        # The same call again: the same intent, no second approval.
        m = self.final(self.call(sid, "hostile__mutate", args))
        self.assertIn(iid, self.text(m["result"]))
        self.assertEqual(len(mine()), 1)
        # Approved through the API: the same call again goes through.
        self.approve(iid)
        m = self.final(self.call(sid, "hostile__mutate", args))
        self.assertFalse(m["result"].get("isError"), m)
        self.pdp.wait_state(iid, "COMPLETED")

    def test_changed_definition_is_hidden_until_accepted(self):
        sid = self.session()
        self.assertIn("hostile__shifty", self.tools(sid))
        flag = os.path.join(self.flag_dir, "mutated")
        with open(flag, "w") as f:
            f.write("1")
        os.chmod(flag, 0o666)
        try:
            # The fixture notices on its next request and says
            # tools/list_changed; the gateway lists again.
            H.wait_for(lambda: "hostile__shifty" not in self.tools(sid),
                       what="the changed tool hidden")
            m = self.final(self.call(sid, "hostile__shifty", {}))
            self.assertIn("error", m)
            r = subprocess.run([H.IG_BIN, "mcp", "tools", "pending", "--pins",
                                self.pins, "--json"], capture_output=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            pend = json.loads(r.stdout)
            ours = [p for p in pend if p["key"] == "hostile/shifty"]
            self.assertEqual(len(ours), 1, pend)
            self.assertIn("ignore previous", json.dumps(ours[0]))
            r = subprocess.run([H.IG_BIN, "mcp", "tools", "accept", "--pins",
                                self.pins, "hostile/shifty", ours[0]["hash"]],
                               capture_output=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            tools = self.tools(sid)
            self.assertIn("hostile__shifty", tools)
            self.assertIn("v2", tools["hostile__shifty"]["description"])
            # Compliance reads all three in the PDP's audit log.
            ev = [e for e in self.pdp.audit_events()
                  if e.get("type") == "executor.event" and
                  e["detail"]["server"] == "hostile" and
                  e["detail"]["tool"] == "shifty"]
            self.assertEqual([e["event"] for e in ev],
                             ["mcp.tool_pinned", "mcp.tool_changed",
                              "mcp.tool_accepted"], ev)
            self.assertEqual(ev[1]["detail"]["hash"], ours[0]["hash"])
            self.assertEqual(ev[2]["detail"]["hash"], ours[0]["hash"])
            self.assertEqual(ev[0]["executor"],
                             self.pdp.env["INTENTGATE_EXECUTOR_ID"])
        finally:
            os.unlink(flag)

    def test_sdk_client_lists_and_calls(self):
        script = os.path.join(self.lay.path("executor"), "script.json")
        with open(script, "w") as f:
            json.dump([{"op": "list_tools"},
                       {"op": "call", "name": "hostile__echo",
                        "arguments": {"text": "from the sdk"}},
                       {"op": "call", "name": "hostile__read_path",
                        "arguments": {"path": "/etc/passwd"}},
                       {"op": "call", "name": "hostile__whoami",
                        "arguments": {}}], f)
        node = os.path.join(H.REPO, "tests", "mcp", "node_modules", ".bin",
                            "node")
        r = subprocess.run([node if os.path.exists(node) else "node", CLIENT,
                            "--url", self.ex.url() + "/mcp", "--token",
                            self.agent, script], capture_output=True,
                           timeout=120)
        self.seen.append(("sdk stdout", r.stdout))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        steps = [json.loads(ln) for ln in r.stdout.decode().splitlines()]
        self.assertTrue(steps[0]["ok"], steps[0])
        names = [t["name"] for t in steps[0]["result"]["tools"]]
        self.assertIn("hostile__echo", names)
        self.assertIn("from the sdk", json.dumps(steps[1]["result"]))
        self.assertTrue(steps[2]["result"]["isError"], steps[2])
        self.assertNotIn(self.cred_stdio, json.dumps(steps[3]))

    def test_filesystem_server_keeps_its_directories(self):
        # The agent's client offers roots; the gateway never passes them
        # on (server-filesystem would replace /data with them).
        sid = self.session(caps={"roots": {"listChanged": True}})
        m = self.final(self.call(sid, "fs__list_allowed_directories", {}))
        self.assertIn("/data", self.text(m["result"]))
        self.assertNotIn("/outside", self.text(m["result"]))
        m = self.final(self.call(sid, "fs__read_text_file",
                                 {"path": "/data/hello.txt"}))
        self.assertIn("hello gateway", self.text(m["result"]), m)
        m = self.final(self.call(sid, "fs__read_text_file",
                                 {"path": "/outside/secret.txt"}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertIn("OUTSIDE_DATA", self.text(m["result"]))
        # Even allowed by a careless policy, the server itself refuses a
        # path outside its directories: the client's roots did not widen
        # them.
        m = self.final(self.call(sid, "fs__read_text_file",
                                 {"path": "/data/../outside/secret.txt"}))
        self.assertNotIn("not for you", json.dumps(m))

    def test_everything_server_environment_is_scrubbed(self):
        sid = self.session()
        m = self.final(self.call(sid, "every__get-env", {}))
        blob = json.dumps(m)
        self.assertNotIn(self.cred_every, blob)
        self.assertIn("[credential removed]", blob)
        # Nothing of the executor's environment reached the server.
        self.assertNotIn("INTENTGATE", blob)
        m = self.final(self.call(sid, "every__echo", {"message": "hey"}))
        self.assertIn("hey", json.dumps(m["result"]))

    def test_flood_fails_fast_and_the_gateway_keeps_serving(self):
        sid = self.session()
        m = self.final(self.call(sid, "hostile__flood", {"mib": 3}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertIn("max_reply_bytes", self.text(m["result"]))
        m = self.final(self.call(sid, "hostile__echo", {"text": "after"}))
        self.assertIn("after", json.dumps(m["result"]))

    def test_stdio_server_restarts_after_it_dies(self):
        sid = self.session()
        # initialize, tools/list, the call: the server exits right after
        # answering its third request; once it is gone (the log says so),
        # the next call starts it again. (A call sent while it is dying
        # fails as "may or may not have happened": never retried.)
        def exits():  # this server's, not another's
            return len([ln for ln in self.ex.log().splitlines()
                        if '"mcp.upstream_exit"' in ln and
                        '"server":"mortal"' in ln])
        for i in range(3):
            before = exits()
            m = self.final(self.call(sid, "mortal__echo",
                                     {"text": "round %d" % i}))
            self.assertIn("round %d" % i, json.dumps(m["result"]), m)
            H.wait_for(lambda: exits() > before, what="the server's exit")

    def test_a_call_that_never_ends_times_out(self):
        sid = self.session()
        # hang never answers: the call times out (timeout_ms 5000) and the
        # gateway keeps serving.
        msgs = self.call(sid, "hostile__hang", {})
        m = self.final(msgs)
        self.assertTrue(m["result"]["isError"], m)
        m = self.final(self.call(sid, "hostile__echo", {"text": "still"}))
        self.assertIn("still", json.dumps(m["result"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
