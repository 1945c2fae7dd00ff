"""test_mcp_bridge.py - issue 16, end to end: an MCP client that speaks
only stdio, the official TypeScript SDK's (tests/mcp/client.mjs --stdio),
runs `intentgate mcp connect URL` as its server, with the agent's token in
INTENTGATE_TOKEN, and through it reaches the executor's MCP gateway
(tests/integration/mcp_stack.py: a PDP, our fixture over HTTP as server
"conf", the executor). Over that one chain it lists the tools, makes an
allowed call (it reaches the upstream and its answer comes back) and a
blocked one (the PDP's reason comes back as an isError result, and the
upstream never sees the call). The token and the upstream's credential
appear in nothing the client prints.

FAILS (never skips) without the binaries, node or tests/mcp/node_modules.

    INTENTGATE_BIN=build/cli/intentgate \\
    INTENTGATE_EXECUTOR_BIN=build/executor/intentgate-executor \\
        python3 tests/integration/test_mcp_bridge.py
"""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import exec_harness as H  # noqa: E402
import mcp_stack  # noqa: E402

CLIENT = os.path.join(H.REPO, "tests", "mcp", "client.mjs")
NODE_MODULES = os.path.join(H.REPO, "tests", "mcp", "node_modules")

POLICY = """-- test policy for the stdio bridge
return function(intent)
  if intent.action == "mcp.conf.test_image_content" then
    return BLOCK{reason = "NO_IMAGES_FOR_AGENTS"}
  end
  if starts_with(intent.action, "mcp.conf") then
    return ALLOW
  end
  return nil
end
"""


class BridgeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        if not os.path.isdir(os.path.join(NODE_MODULES, "@modelcontextprotocol",
                                          "sdk")):
            raise AssertionError("tests/mcp/node_modules is missing: npm ci "
                                 "--prefix tests/mcp (scripts/test.sh does)")
        cls.res = H.Resources()
        cls.lay = H.Layout(cls.res, "tmp")
        cls.st = mcp_stack.Stack(cls.res, cls.lay, names="prefixed",
                                 policy=POLICY)

    @classmethod
    def tearDownClass(cls):
        try:
            rc = cls.st.ex.stop()
            cls.st.ex.check_log_clean(cls.st.ex.secrets.items())
            if rc != 0:
                raise AssertionError("executor exit %s:\n%s"
                                     % (rc, cls.st.ex.log()[-3000:]))
        finally:
            cls.res.close()

    def run_client(self, steps, token, rc=0):
        script = os.path.join(self.lay.path("client"), "script.json")
        with open(script, "w") as f:
            json.dump(steps, f)
        node = os.path.join(NODE_MODULES, ".bin", "node")
        env = dict(os.environ, INTENTGATE_TOKEN=token)
        r = subprocess.run(
            [node if os.path.exists(node) else "node", CLIENT, "--stdio",
             "%s mcp connect %s" % (H.IG_BIN, self.st.gateway_url),
             "--timeout-ms", "60000", script],
            capture_output=True, env=env, timeout=180)
        for secret in (token, self.st.cred):
            self.assertNotIn(secret.encode(), r.stdout)
            self.assertNotIn(secret.encode(), r.stderr)
        self.assertEqual(r.returncode, rc, r.stdout + r.stderr)
        return [json.loads(ln) for ln in r.stdout.decode().splitlines()]

    def calls_seen(self, action):
        return [e["intent"] for e in self.st.pdp.audit_events()
                if e.get("type") == "intent.received" and
                e.get("intent", {}).get("action") == action]

    def test_list_allowed_and_blocked_through_the_bridge(self):
        steps = self.run_client([
            {"op": "list_tools"},
            {"op": "call", "name": "conf__test_simple_text",
             "arguments": {}},
            {"op": "call", "name": "conf__test_image_content",
             "arguments": {}},
            {"op": "ping"}], self.st.agent)
        self.assertEqual(len(steps), 4, steps)
        self.assertTrue(all(s["ok"] for s in steps), steps)
        names = [t["name"] for t in steps[0]["result"]["tools"]]
        self.assertIn("conf__test_simple_text", names)
        self.assertIn("conf__test_image_content", names)
        # Allowed: the fixture's own text came back.
        ok = steps[1]["result"]
        self.assertFalse(ok.get("isError"), ok)
        self.assertIn("This is a simple text response for testing.",
                      json.dumps(ok))
        # Blocked: the reason, and no image: the call never went upstream.
        no = steps[2]["result"]
        self.assertTrue(no.get("isError"), no)
        self.assertIn("NO_IMAGES_FOR_AGENTS", json.dumps(no))
        self.assertFalse([c for c in no["content"] if c["type"] == "image"],
                         no)
        self.assertEqual(len(self.calls_seen("mcp.conf.test_simple_text")), 1)
        self.assertEqual(len(self.calls_seen("mcp.conf.test_image_content")),
                         1)

    def test_a_token_the_pdp_does_not_know_gets_nothing(self):
        steps = self.run_client([{"op": "list_tools"}],
                                "igt_agent_" + H.rand(16), rc=1)
        # The bridge cannot even initialize: the SDK's connect fails.
        self.assertEqual(steps[0]["step"], "connect", steps)
        self.assertFalse(steps[0]["ok"], steps)


if __name__ == "__main__":
    H.run_main(__name__)
