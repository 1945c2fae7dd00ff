"""test_mcp_attack.py - issue 16: attacks on the executor's MCP gateway
(/mcp), each a test. Three attackers: a compromised agent holding a valid
agent token (and a second agent, a2, whose sessions and escalations it
must not touch), an unauthenticated client on the network, and a hostile
upstream MCP server (tests/integration/mcp_fixture.py, profile "evil":
it leaks its credential every way it can, answers under wrong ids or
twice, asks the gateway for sampling, roots and elicitation, nests its
answer 100000 deep, dies mid-call).

A test that passes proves a defence; a test that fails is a defect (the
report of helper E lists them). The last test stops the PDP: the gateway
must then fail closed.

FAILS (never skips) without the binaries, root or bubblewrap.
"""
import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import exec_harness as H  # noqa: E402
from mcp_agent import McpAgent  # noqa: E402

FIXTURE = os.path.join(HERE, "mcp_fixture.py")
PY = "/usr/bin/python3"
MAX_SESSIONS = 32

POLICY = """-- test policy for the attacks on the MCP gateway
return function(intent)
  local a = intent.action
  if a == "mcp.evil.guarded" or a == "mcp.evil.die" then
    if approved(intent, "security") then return ALLOW end
    return ESCALATE{approvers = {"security"}, reason = "NEEDS_A_HUMAN"}
  end
  if starts_with(a, "mcp.evil") or starts_with(a, "mcp.conf") or
     a == "mcp.hostile.flood" or a == "mcp.hostile.echo" then
    return ALLOW
  end
  if a == "mcp.hostile.read_path" then
    if starts_with(intent.resource, "/ok/") then return ALLOW end
    return BLOCK{reason = "PATH_NOT_ALLOWED"}
  end
  return nil
end
"""

EVIL_SERVERS = {"evil": None, "evillist": "list_error",
                "evilver": "version_cred", "evilinit": "init_error",
                "evildesc": "desc_cred"}


class AttackTest(McpAgent, unittest.TestCase):
    # Under /srv, as an operator lays it out (a clone under mktemp -d is
    # not traversable by the sandbox user).
    KIND = "srv"

    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        H.require_root()
        cls.res = H.Resources()
        lay = cls.lay = H.Layout(cls.res, cls.KIND)
        cls.agent2 = H._tok("agent")
        a2 = ("[agent a2]\ntoken_sha256 = %s\ntenant = t1\n"
              % hashlib.sha256(cls.agent2.encode()).hexdigest())
        cls.pdp = H.start_custom_pdp(
            cls.res, lay.path("pdp"), prefixes=("mcp.",),
            allow_prefixes=("nothing.",), policies={"mcp_atk.lua": POLICY},
            extra=a2)
        cls.agent = cls.pdp.env["INTENTGATE_AGENT_TOKEN"]
        cls.creds = {"hostile-cred": "stdio-cred-" + H.rand(20),
                     "conf-cred": "http-cred-" + H.rand(20)}
        for alias in EVIL_SERVERS:
            cls.creds[alias + "-cred"] = alias + "-cred-" + H.rand(24)
        cls.http_up = subprocess.Popen(
            [sys.executable, FIXTURE, "http", "--port", "0", "--profile",
             "conformance"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            preexec_fn=H._die_with_us)
        cls.res.process(cls.http_up, "http fixture")
        line = cls.http_up.stdout.readline().decode()
        assert line.startswith("MCP_FIXTURE_URL="), line
        http_url = line.strip().split("=", 1)[1]
        os.chmod(lay.root, 0o711)
        fix = lay.path("fixture")
        os.chmod(fix, 0o755)
        shutil.copy(FIXTURE, os.path.join(fix, "mcp_fixture.py"))
        os.chmod(os.path.join(fix, "mcp_fixture.py"), 0o644)
        flags = lay.path("flags")
        os.chmod(flags, 0o777)
        binds = [{"src": fix, "dest": "/fixture"},
                 {"src": flags, "dest": "/flags", "mode": "rw"}]
        mcp = {
            "hostile": {
                "transport": "stdio",
                "command": [PY, "/fixture/mcp_fixture.py", "stdio",
                            "--profile", "hostile"],
                "credential": "hostile-cred",
                "credential_env": "FIXTURE_CREDENTIAL",
                "env": {"FIXTURE_MUTATE_FILE": "/flags/mutated"},
                "binds": binds, "timeout_ms": 5000,
                "tools": {"read_path": {"resource": "/path"}}},
            "conf": {"transport": "http", "url": http_url,
                     "credential": "conf-cred", "timeout_ms": 10000}}
        for alias, mode in EVIL_SERVERS.items():
            mcp[alias] = {
                "transport": "stdio",
                "command": [PY, "/fixture/mcp_fixture.py", "stdio",
                            "--profile", "evil"],
                "credential": alias + "-cred",
                "credential_env": "FIXTURE_CREDENTIAL",
                "env": {"FIXTURE_EVIL": mode or ""},
                "binds": binds, "timeout_ms": 3000}
        cls.pins = os.path.join(lay.path("executor"), "mcp-pins.jsonl")
        cls.ex = H.ConfigExecutor(
            cls.res, lay.path("executor"), cls.pdp, {"actions": {},
                                                      "mcp": mcp},
            credentials=cls.creds,
            conf="mcp_escalation_wait_ms = 2000\n"
                 "mcp_max_sessions = %d\n"
                 "mcp_approval_url = https://pdp.example/ui/approvals/\n"
                 % MAX_SESSIONS)
        cls.seen = []

    @classmethod
    def tearDownClass(cls):
        try:
            if getattr(cls, "ex", None) is not None:
                rc = cls.ex.stop()
                if os.environ.get("MCP_ATTACK_LOG"):
                    with open(os.environ["MCP_ATTACK_LOG"], "w") as f:
                        f.write(cls.ex.log())
                cls.ex.check_log_clean(
                    [(k, v) for k, v in cls.creds.items()])
                if rc != 0:
                    raise AssertionError("executor exit %s:\n%s"
                                         % (rc, cls.ex.log()[-3000:]))
        finally:
            cls.res.close()

    # ---- helpers ----

    def cred_spellings(self, v):
        b = v.encode()
        return [b, base64.b64encode(b), base64.urlsafe_b64encode(b),
                base64.b64encode(b).rstrip(b"="), b.hex().encode()]

    def assert_clean(self, what, data):
        """No spelling of a credential, and no 16 bytes of one in a row
        (a message cut at 40 bytes still gives most of it away)."""
        if isinstance(data, str):
            data = data.encode()
        for name, v in self.creds.items():
            for sp in self.cred_spellings(v):
                self.assertNotIn(sp, data, "%s leaked %s" % (what, name))
            b = v.encode()
            for i in range(0, len(b) - 16 + 1):
                self.assertNotIn(b[i:i + 16], data, "%s leaked part of %s"
                                 % (what, name))

    def saw(self, what, data):
        self.assert_clean(what, data)

    def ping(self, sid, token=None):
        st, _, msgs = self.post({"jsonrpc": "2.0", "id": 9, "method": "ping"},
                                session=sid, token=token)
        return st

    def escalate(self, sid, name, args, token=None):
        """Call an escalated tool until it is held; its intent id."""
        m = self.final(self.call(sid, name, args, token=token))
        self.assertTrue(m["result"]["isError"], m)
        text = self.text(m["result"])
        self.assertIn("waits for a human", text)
        return text.split("intent ")[-1].split(")")[0]

    def assert_alive(self, server="evil"):
        sid = self.session()
        m = self.final(self.call(sid, server + "__echo", {"text": "alive"}))
        self.assertIn("alive", self.text(m["result"]),
                      self.ex.log()[-2000:])

    # ==== (b) an unauthenticated client on the network ====

    def test_b_duplicated_and_odd_headers(self):
        init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                           "params": {"protocolVersion": "2025-11-25",
                                      "capabilities": {}, "clientInfo": {
                                          "name": "t", "version": "1"}}})
        base = {"Content-Type": "application/json", "Host": "127.0.0.1",
                "Accept": "application/json, text/event-stream"}
        # Two Authorization headers, the second a valid token: refused.
        st, _, d = self.raw("POST", init.encode(), base, multi=[
            ("Authorization", "Bearer igt_agent_forged"),
            ("Authorization", "Bearer " + self.agent)])
        self.assertEqual(st, 401, d)
        # Two Hosts, two Origins.
        st, _, _ = self.raw("POST", init.encode(), {
            k: v for k, v in base.items() if k != "Host"}, multi=[
            ("Host", "127.0.0.1"), ("Host", "evil.example"),
            ("Authorization", "Bearer " + self.agent)])
        self.assertEqual(st, 403)
        st, _, _ = self.raw("POST", init.encode(), base, multi=[
            ("Origin", "http://127.0.0.1"), ("Origin", "https://evil.example"),
            ("Authorization", "Bearer " + self.agent)])
        self.assertEqual(st, 403)
        # Origin that starts like loopback.
        for o in ("http://127.0.0.1.evil.example", "http://localhost@evil",
                  "http://[::1]:80/x", "http://localhost:80:81"):
            st, _, _ = self.raw("POST", init.encode(), base, multi=[
                ("Origin", o), ("Authorization", "Bearer " + self.agent)])
            self.assertEqual(st, 403, o)
        # A token of 100 KiB, a token with a NUL-ish byte.
        st, _, _ = self.raw("POST", init.encode(), base, multi=[
            ("Authorization", "Bearer " + "a" * 100000)])
        # (0: it answered and closed while the rest was still being sent,
        # and the reset lost the answer - refused either way.)
        self.assertIn(st, (0, 401, 431, 413))
        st, _, _ = self.raw("POST", init.encode(), base, multi=[
            ("Authorization", "Bearer " + self.agent + "\x7f")])
        self.assertEqual(st, 401)
        self.assert_alive()

    def test_b_session_id_odd_bytes(self):
        sid = self.session()
        for bad in (sid.upper(), sid + "0", sid[:-1], "\x7f" * 64,
                    sid[:-1] + "\xff", "0" * 64, "../" * 21 + "a",
                    "%s, %s" % (sid, sid)):
            st, _, _ = self.post({"jsonrpc": "2.0", "id": 3,
                                  "method": "ping"},
                                 session=bad.encode("latin-1").decode(
                                     "latin-1"))
            self.assertEqual(st, 404, repr(bad))
        # The same id twice: refused, though both are the agent's own.
        st, _, _ = self.raw("POST", json.dumps(
            {"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode(), {
            "Content-Type": "application/json", "Host": "127.0.0.1",
            "Accept": "application/json, text/event-stream",
            "Authorization": "Bearer " + self.agent}, multi=[
            ("Mcp-Session-Id", sid), ("Mcp-Session-Id", sid)])
        self.assertEqual(st, 404)
        self.assertEqual(self.ping(sid), 200)

    def test_b_chunked_body_over_the_cap(self):
        host, port = self.hostport()
        s = socket.create_connection((host, port), timeout=60)
        s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Authorization: Bearer %s\r\n"
                   "Content-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n" % self.agent).encode())
        chunk = b"a" * 65536
        sent = 0
        try:
            while sent < 5 * 1024 * 1024:
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            s.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        data = b""
        try:
            while b"\r\n" not in data:
                b = s.recv(4096)
                if not b:
                    break
                data += b
        except OSError:
            pass
        s.close()
        self.assertTrue(data.startswith(b"HTTP/1.1 413"), data[:100])
        self.assert_alive()

    def test_b_slowloris_does_not_starve_the_gateway(self):
        host, port = self.hostport()
        socks = []
        try:
            for _ in range(64):
                s = socket.create_connection((host, port), timeout=10)
                s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Length: 100\r\n")
                socks.append(s)
            # Headers in, the body trickling: one byte each.
            for s in socks[:32]:
                s.sendall(b"Authorization: Bearer " + self.agent.encode() +
                          b"\r\nContent-Type: application/json\r\nAccept: "
                          b"application/json, text/event-stream\r\n\r\n{")
            self.assert_alive()
        finally:
            for s in socks:
                s.close()

    # ==== (a) a compromised agent ====

    def test_a_second_agent_cannot_use_or_end_a_session(self):
        sid = self.session()
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 4, "method": "ping"},
                             session=sid, token=self.agent2)
        self.assertEqual(st, 404)
        m = self.post({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                       "params": {"name": "evil__echo", "arguments": {}}},
                      session=sid, token=self.agent2)
        self.assertEqual(m[0], 404)
        st, _, _ = self.raw("DELETE", None, {
            "Host": "127.0.0.1", "Authorization": "Bearer " + self.agent2,
            "Mcp-Session-Id": sid})
        self.assertEqual(st, 404)
        self.assertEqual(self.ping(sid), 200)

    def test_a_sessions_of_one_agent_do_not_evict_anothers(self):
        mine = self.session()
        for _ in range(MAX_SESSIONS + 8):
            self.session(token=self.agent2)
        self.assertEqual(self.ping(mine), 200,
                         "a2 opening sessions ended a1's session")

    def test_a_thousand_sessions(self):
        sids = [self.session(token=self.agent2) for _ in range(1000)]
        self.assertEqual(self.ping(sids[-1], token=self.agent2), 200)
        self.assert_alive()

    def test_a_tool_name_of_10k_bytes_and_odd_names(self):
        sid = self.session()
        for name in ("evil__" + "a" * 10000, "a" * 10000, "__echo",
                     "evil__", "evil____echo", "EVIL__echo", "evil__ECHO",
                     "evil__echo\u0000", "evil__echo ", "hostile__echo/..",
                     "evil__ech\u00f6"):
            st, _, msgs = self.post({"jsonrpc": "2.0", "id": 5,
                                     "method": "tools/call",
                                     "params": {"name": name,
                                                "arguments": {}}},
                                    session=sid)
            self.assertEqual(st, 200, name[:40])
            m = self.final(msgs, 5)
            self.assertTrue("error" in m or m["result"].get("isError"),
                            (name[:40], m))
            self.assertLess(len(json.dumps(m)), 2000)
        for args in ([], "x", 7, None, True):
            st, _, msgs = self.post({"jsonrpc": "2.0", "id": 6,
                                     "method": "tools/call",
                                     "params": {"name": "evil__echo",
                                                "arguments": args}},
                                    session=sid)
            m = self.final(msgs, 6)
            if args is None:
                continue  # null: no arguments (JSON null is "absent")
            self.assertEqual(m.get("error", {}).get("code"), -32602, m)
        self.assert_alive()

    def test_a_resource_pointer_at_a_non_string(self):
        sid = self.session()
        for args in ({"path": 7}, {"path": [1]}, {"path": {"a": 1}},
                     {"path": None}, {"path": ""}, {"path": "/ok/\u0000x"},
                     {}, {"path": "/ok/" + "x" * 100000}):
            m = self.final(self.call(sid, "hostile__read_path", args))
            self.assertTrue(m["result"]["isError"], (args, m))
        # No arguments at all.
        m = self.final(self.call(sid, "hostile__read_path", None,
                                 params={"name": "hostile__read_path"}))
        self.assertTrue("error" in m or m["result"]["isError"], m)
        self.assert_alive()

    def test_a_names_differing_in_case_and_with_double_underscore(self):
        sid = self.session()
        tools = self.tools(sid)
        self.assertNotIn("evil__Case", tools)
        self.assertNotIn("evil__case", tools)
        for n in ("evil__Case", "evil__case"):
            m = self.final(self.call(sid, n, {}))
            self.assertTrue("error" in m or m["result"].get("isError"), m)
        self.assertIn("evil__a__b", tools)
        m = self.final(self.call(sid, "evil__a__b", {"text": "u"}))
        self.assertIn('"tool": "a__b"', self.text(m["result"]))
        self.assertTrue(self.intents("mcp.evil.a__b"))
        # A prompt name with "__" goes to the server the prefix names.
        st, _, msgs = self.post({"jsonrpc": "2.0", "id": 7,
                                 "method": "prompts/get",
                                 "params": {"name": "conf__a__b"}},
                                session=sid)
        m = self.final(msgs, 7)
        self.assertIn("error", m)
        ev = [e for e in self.intents("mcp.conf:prompts.get")
              if e["resource"] == "mcp://conf/prompts/a__b"]
        self.assertTrue(ev)

    def test_a_same_request_id_twice_concurrently(self):
        sid = self.session()
        out = {}

        def go(v):
            out[v] = self.final(self.call(sid, "evil__echo", {"text": v},
                                          mid=42), 42)

        ts = [threading.Thread(target=go, args=("v%d" % i,))
              for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for v, m in out.items():
            self.assertIn('"%s"' % v, self.text(m["result"]))

    def test_a_cancel_for_anothers_call_and_answer_to_elicitation(self):
        sid2 = self.session(token=self.agent2)
        st, _, _ = self.post({"jsonrpc": "2.0",
                              "method": "notifications/cancelled",
                              "params": {"requestId": 1}},
                             session=sid2, token=self.agent2)
        self.assertEqual(st, 202)
        # An answer to a request the gateway never sent.
        st, _, _ = self.post({"jsonrpc": "2.0", "id": "intentgate-approval-x",
                              "result": {"action": "accept"}},
                             session=sid2, token=self.agent2)
        self.assertEqual(st, 202)
        self.assert_alive()

    def test_a_agent_cannot_approve_itself(self):
        sid = self.session(caps={"elicitation": {"url": {}}})
        st, _, msgs = self.post(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "evil__guarded",
                        "arguments": {"text": "self"},
                        "_meta": {"progressToken": "p"}}}, session=sid)
        eli = [x for x in msgs if x.get("method") == "elicitation/create"]
        self.assertTrue(eli, msgs)
        iid = self.final(msgs)["result"]["content"][0]["text"].split(
            "intent ")[-1].split(")")[0]
        # The agent "accepts" the elicitation.
        st, _, _ = self.post({"jsonrpc": "2.0", "id": eli[0]["id"],
                              "result": {"action": "accept"}}, session=sid)
        self.assertEqual(st, 202)
        # And votes at the PDP with its own token.
        rec = self.pdp.record(iid)
        st, _, _ = self.pdp.call(
            "POST", "/v1/approvals/%s/votes" % rec["approval"]["approval_id"],
            self.agent, {"vote": "approve",
                         "intent_hash": rec["intent_hash"]})
        self.assertIn(st, (401, 403))
        self.assertEqual(self.pdp.state(iid), "PENDING_APPROVAL")
        m = self.final(self.call(sid, "evil__guarded", {"text": "self"}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertEqual(self.pdp.state(iid), "PENDING_APPROVAL")

    def test_a_escalation_is_not_picked_up_by_another_agent_or_call(self):
        sid = self.session()
        sid2 = self.session(token=self.agent2)
        iid = self.escalate(sid, "evil__guarded", {"text": "pickup"})
        # a2 makes the very same call: its own intent, not a1's.
        iid2 = self.escalate(sid2, "evil__guarded", {"text": "pickup"},
                             token=self.agent2)
        self.assertNotEqual(iid, iid2)
        # Approved for a different call's hash: the PDP refuses the vote.
        rec, rec2 = self.pdp.record(iid), self.pdp.record(iid2)
        st, login, _ = self.pdp.call(
            "POST", "/v1/approver/login", None,
            {"approver": "appr",
             "password": self.pdp.secrets["approver password"]})
        st, res, _ = self.pdp.call(
            "POST", "/v1/approvals/%s/votes" % rec["approval"]["approval_id"],
            login["token"], {"vote": "approve",
                             "intent_hash": rec2["intent_hash"]})
        self.assertNotEqual(st, 200, res)
        self.assertEqual(self.pdp.state(iid), "PENDING_APPROVAL")
        self.approve(iid)
        # a2's identical call does not run on a1's approval.
        m = self.final(self.call(sid2, "evil__guarded", {"text": "pickup"},
                                 token=self.agent2))
        self.assertTrue(m["result"]["isError"], m)
        self.assertNotIn(iid, self.text(m["result"]))
        # a1's retry with other arguments is another intent, held.
        m = self.final(self.call(sid, "evil__guarded", {"text": "pickup!"}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertNotIn(iid, self.text(m["result"]))
        self.assertEqual(self.pdp.state(iid), "ALLOWED")
        # The approved call itself goes through, once.
        m = self.final(self.call(sid, "evil__guarded", {"text": "pickup"}))
        self.assertFalse(m["result"].get("isError"), m)
        self.pdp.wait_state(iid, "COMPLETED")

    def test_a_one_grant_acts_once_under_concurrent_retries(self):
        sid = self.session()
        iid = self.escalate(sid, "evil__guarded", {"text": "race"})
        self.approve(iid)
        out = []

        def go():
            out.append(self.final(self.call(sid, "evil__guarded",
                                            {"text": "race"})))

        ts = [threading.Thread(target=go) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        ok = [m for m in out if not m["result"].get("isError")]
        self.assertEqual(len(ok), 1, out)
        self.pdp.wait_state(iid, "COMPLETED")
        red = [e for e in self.pdp.audit_events()
               if e.get("type") == "grant.redeemed" and
               e.get("intent_id") == iid]
        self.assertLessEqual(len(red), 1)

    # ==== (c) a hostile upstream ====

    def test_c_credential_in_progress_notification(self):
        sid = self.session()
        msgs = self.call(sid, "evil__leak_progress", {},
                         meta={"progressToken": "pt"})
        self.final(msgs)  # post() already checked every byte

    def test_c_credential_in_error_message_and_data(self):
        sid = self.session()
        m = self.final(self.call(sid, "evil__leak_error", {}))
        self.assertIn("error", m)

    def test_c_credential_in_log_blob_and_keys(self):
        sid = self.session()
        for t in ("evil__leak_log", "evil__leak_blob", "evil__leak_key"):
            self.final(self.call(sid, t, {}, meta={"progressToken": "l"}))

    @unittest.expectedFailure
    def test_c_credential_split_across_two_blocks(self):
        """Documented limit of exec_scrub.h ("splits ... not caught"):
        each half alone is no spelling."""
        sid = self.session()
        self.final(self.call(sid, "evil__leak_split", {}))

    def test_c_credential_in_tool_description(self):
        sid = self.session()
        tools = self.tools(sid)
        self.assertIn("evildesc__desc", tools)
        with open(self.pins, "rb") as f:
            self.assert_clean("the pin file", f.read())
        r = subprocess.run([H.IG_BIN, "mcp", "tools", "pending", "--pins",
                            self.pins, "--json"], capture_output=True)
        self.assert_clean("mcp tools pending", r.stdout + r.stderr)

    def test_c_credential_in_initialize_error(self):
        sid = self.session()
        for _ in range(2):
            m = self.final(self.call(sid, "evilinit__echo", {}))
            self.assertTrue("error" in m or m["result"].get("isError"), m)

    def test_c_credential_as_protocol_version(self):
        sid = self.session()
        for _ in range(2):
            m = self.final(self.call(sid, "evilver__echo", {}))
            self.assertTrue("error" in m or m["result"].get("isError"), m)

    def test_c_credential_in_tools_list_error(self):
        sid = self.session()
        self.assertNotIn("evillist__echo", self.tools(sid))
        m = self.final(self.call(sid, "evillist__echo", {}))
        self.assertTrue("error" in m or m["result"].get("isError"), m)

    def test_c_upstream_asks_for_sampling_roots_elicitation(self):
        sid = self.session(caps={"sampling": {}, "roots": {},
                                 "elicitation": {"form": {}, "url": {}}})
        msgs = self.call(sid, "evil__ask", {}, meta={"progressToken": "a"})
        for x in msgs:
            self.assertNotIn(x.get("method"), ("sampling/createMessage",
                                               "roots/list",
                                               "elicitation/create"), msgs)
        got = json.loads(self.text(self.final(msgs)["result"]))
        for method in ("sampling/createMessage", "roots/list",
                       "elicitation/create"):
            self.assertEqual(got[method], {"error": -32601}, got)

    def test_c_upstream_answers_wrong_id_twice_and_ahead(self):
        sid = self.session()
        m = self.final(self.call(sid, "evil__wrong_id", {}))
        self.assertEqual(self.text(m["result"]), "right")
        m = self.final(self.call(sid, "evil__twice", {}))
        self.assertEqual(self.text(m["result"]), "first")
        m = self.final(self.call(sid, "evil__echo", {"text": "next"}))
        self.assertIn("next", self.text(m["result"]))

    def test_c_upstream_answer_nested_deep_and_huge(self):
        sid = self.session()
        m = self.final(self.call(sid, "evil__nest", {}))
        self.assertTrue(m["result"]["isError"], m)
        m = self.final(self.call(sid, "hostile__flood", {"mib": 16}))
        self.assertTrue(m["result"]["isError"], m)
        self.assert_alive()

    def test_c_upstream_dies_mid_call(self):
        sid = self.session()
        iid = self.escalate(sid, "evil__die", {"n": 1})
        self.approve(iid)
        m = self.final(self.call(sid, "evil__die", {"n": 1}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertIn("may or may not have happened", self.text(m["result"]))
        self.pdp.wait_state(iid, "UNKNOWN_AFTER_DISPATCH")
        # The same call again is a new intent, held: never a second
        # dispatch under the spent grant.
        # (The server is started again by this call: the old one's end,
        # seen late by its waiter thread, must not fail that start.)
        m = self.final(self.call(sid, "evil__die", {"n": 1}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertIn("waits for a human", self.text(m["result"]))
        self.assertNotIn(iid, self.text(m["result"]))
        self.assertEqual(self.pdp.state(iid), "UNKNOWN_AFTER_DISPATCH")
        self.assert_alive()

    # ==== last: the PDP goes away ====

    def test_zz_pdp_down_fails_closed(self):
        sid = self.session()
        self.final(self.call(sid, "hostile__echo", {"text": "warm"}))
        self.pdp.proc.kill()
        self.pdp.proc.wait()
        # A token the gateway has not seen: 503, nothing done.
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 1,
                              "method": "initialize",
                              "params": {"protocolVersion": "2025-11-25",
                                         "capabilities": {},
                                         "clientInfo": {"name": "t",
                                                        "version": "1"}}},
                             token=H._tok("agent"))
        self.assertEqual(st, 503)
        # The agent it knows: the call is refused, never forwarded.
        m = self.final(self.call(sid, "hostile__echo", {"text": "down"}))
        self.assertTrue(m["result"]["isError"], m)
        self.assertNotIn('"down"', self.text(m["result"]))
        self.assertIn("nothing was done", self.text(m["result"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
