"""test_hook.py - `intentgate hook claude-code` end to end: the recorded
Claude Code PreToolUse events in tests/hook/ fed to the real binary against
the real `intentgate serve --dev` (plus an approver in group "security"),
and every failure the hook must turn into a deny with exit status 0: an
unreachable PDP, bad or empty or huge input, an unmapped tool, missing
variables, bad mapping files, a PDP answering garbage, a PDP that never
answers.

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_hook.py
"""
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests  # noqa: E402

HOOK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "hook")
SEC = "sec"  # the approver added in group security
PROJECT = "/home/dev/proj"  # the recorded events' cwd, made a project root


def recorded(name, **changes):
    with open(os.path.join(HOOK_DIR, name + ".json")) as f:
        ev = json.load(f)
    for k, v in changes.items():
        ev["tool_input"][k] = v
    return ev


def start():
    """A dev server with a second approver, in group security (the dev
    approver is in finance, dba, auditors), same password, and the recorded
    events' project as the policies' project root (docs/claude-code.md)."""
    srv = Server.dev()
    srv.stop()
    conf = os.path.join(srv.data, "intentgate.conf")
    with open(conf) as f:
        text = f.read()
    h = re.search(r"^password_hash = (.*)$", text, re.M).group(1)
    text = text.replace("\n[policy]\n", "\n[policy]\nproject_roots = %s\n"
                        % PROJECT, 1)
    text += ("\n[approver %s]\nname = Security Reviewer\n"
             "groups = security\npassword_hash = %s\n" % (SEC, h))
    with open(conf, "w") as f:
        f.write(text)
    return Server.dev(tmp=srv.tmp)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class FakePDP:
    """A loopback HTTP server answering every request with handler(path)
    -> (status, body bytes); or, when hang is set, accepting connections and
    never answering."""

    def __init__(self, handler=None, hang=False):
        self.handler = handler
        self.hang = hang
        self.requests = []
        if hang:
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", 0))
            self.sock.listen(16)
            self.port = self.sock.getsockname()[1]
            self.conns = []
            self.thread = threading.Thread(target=self._accept, daemon=True)
        else:
            fake = self

            class H(http.server.BaseHTTPRequestHandler):
                def _any(self):
                    n = int(self.headers.get("Content-Length") or 0)
                    body = self.rfile.read(n) if n else b""
                    fake.requests.append((self.command, self.path, body,
                                          self.headers.get("Authorization")))
                    status, out = fake.handler(self.command, self.path)
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)

                do_GET = do_POST = _any

                def log_message(self, *a):
                    pass

            self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
            self.port = self.httpd.server_address[1]
            self.thread = threading.Thread(target=self.httpd.serve_forever,
                                           daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.port

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        if self.hang:
            self.sock.close()
            for c in self.conns:
                c.close()
        else:
            self.httpd.shutdown()
            self.httpd.server_close()


class Hook(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = start()
        cls.env = cls.srv.env
        cls.tmp = tempfile.mkdtemp(prefix="ig-hook-")
        cls.sec = cls.login(SEC)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        log = cls.srv.log()
        cls.srv.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if rc != 0 or "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))

    @classmethod
    def login(cls, who):
        st, body, _ = cls.srv.call(
            "POST", "/v1/approver/login", None,
            {"approver": who,
             "password": cls.env["INTENTGATE_APPROVER_PASSWORD"]})
        assert st == 200, body
        return body["token"]

    # ---- running the hook ----

    def mappings(self, doc):
        path = os.path.join(self.tmp, "m%d.json" % time.monotonic_ns())
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def hook_env(self, url=None, token=None, drop=()):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("INTENTGATE_")}
        env["INTENTGATE_URL"] = url or self.env["INTENTGATE_URL"]
        env["INTENTGATE_TOKEN"] = token or self.env["INTENTGATE_TOKEN"]
        for k in drop:
            env.pop(k, None)
        return env

    def run_hook(self, event, args=(), env=None, timeout=40, raw=None):
        """Run the hook on event (a dict, or raw bytes); check it exits 0
        with exactly one decision object; return (decision, reason,
        seconds taken, stderr)."""
        data = raw if raw is not None else json.dumps(event).encode()
        t0 = time.monotonic()
        p = subprocess.run([BIN, "hook", "claude-code"] + list(args),
                           input=data, capture_output=True, timeout=timeout,
                           env=env if env is not None else self.hook_env())
        took = time.monotonic() - t0
        return self.check_output(p.returncode, p.stdout, p.stderr) + (took,
                                                                     p.stderr)

    def check_output(self, rc, out, err):
        self.assertEqual(rc, 0, err.decode(errors="replace"))
        self.assertTrue(out.endswith(b"\n"), out)
        self.assertEqual(out.count(b"\n"), 1, out)
        doc = json.loads(out)
        self.assertEqual(list(doc), ["hookSpecificOutput"])
        h = doc["hookSpecificOutput"]
        self.assertEqual(sorted(h), ["hookEventName", "permissionDecision",
                                     "permissionDecisionReason"])
        self.assertEqual(h["hookEventName"], "PreToolUse")
        self.assertIn(h["permissionDecision"], ("allow", "deny", "ask"))
        reason = h["permissionDecisionReason"]
        self.assertTrue(reason.startswith("intentgate: "), reason)
        for secret in (self.env["INTENTGATE_TOKEN"],
                       self.env["INTENTGATE_APPROVER_PASSWORD"]):
            self.assertNotIn(secret.encode(), out)
            self.assertNotIn(secret.encode(), err)
        return h["permissionDecision"], reason

    def expect(self, want, event, why=None, **kw):
        decision, reason, took, err = self.run_hook(event, **kw)
        self.assertEqual(decision, want, reason)
        if why is not None:
            self.assertIn(why, reason)
        return reason, took

    # ---- approvals ----

    def pending(self):
        st, body, _ = self.srv.call("GET", "/v1/approvals", self.sec)
        self.assertEqual(st, 200, body)
        return body["approvals"]

    def vote_on_new(self, before, vote, action):
        """Wait for an approval request not in before, for action, and vote
        on it with the hash it shows."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            for a in self.pending():
                if a["approval_id"] not in before and a["action"] == action:
                    st, res, _ = self.srv.call(
                        "POST", "/v1/approvals/%s/votes" % a["approval_id"],
                        self.sec, {"vote": vote,
                                   "intent_hash": a["intent_hash"],
                                   "comment": "hook test"})
                    self.assertEqual(st, 200, res)
                    return a
            time.sleep(0.1)
        self.fail("no approval request for %s appeared" % action)

    def escalate_and_vote(self, event, vote, action, wait=20):
        before = {a["approval_id"] for a in self.pending()}
        m = self.mappings({"escalate_wait": wait})
        out = {}

        def go():
            out["r"] = self.run_hook(event, args=["--mappings", m])

        t = threading.Thread(target=go)
        t.start()
        self.srv.wait_parked(1)  # the hook is waiting on its long poll
        a = self.vote_on_new(before, vote, action)
        t.join(wait + 10)
        self.assertFalse(t.is_alive())
        decision, reason, took, _ = out["r"]
        self.assertLess(took, wait)  # answered when the human did
        self.assertIn(a["approval_id"], reason)
        return decision, reason

    # ---- decisions from the example bundle ----

    def test_bash_ls_is_allowed(self):
        self.expect("allow", recorded("bash_ls"), "allowed by policy")

    def test_rm_rf_is_denied(self):
        self.expect("deny", recorded("bash_rm_rf"), "DANGEROUS_COMMAND")

    def test_curl_pipe_sh_is_denied(self):
        self.expect("deny", recorded("bash_curl_sh"),
                    "a download piped into a shell")

    def test_shell_program_escalates(self):
        m = self.mappings({"escalate_wait": 1})
        self.expect("deny", recorded("bash_program"),
                    "COMMAND_NOT_ALLOWLISTED", args=["--mappings", m])

    def test_shell_allowlist_is_confined(self):
        # Allowlisted programs reading inside the current directory run;
        # programs that run code, and paths outside it, go to a human.
        m = self.mappings({"escalate_wait": 1})
        for command in ("cat README.md", "grep -rn TODO src", "wc -l a.c",
                        "head -n 5 notes.txt", "pwd", "echo done"):
            self.expect("allow", recorded("bash_ls", command=command),
                        "allowed by policy")
        for command, why in (
                ("git -c core.pager=id log", "COMMAND_NOT_ALLOWLISTED"),
                ("make", "COMMAND_NOT_ALLOWLISTED"),
                ("npm exec cowsay", "COMMAND_NOT_ALLOWLISTED"),
                ("/bin/cat README.md", "COMMAND_NOT_ALLOWLISTED"),
                ("cat /etc/shadow", "PATH_OUTSIDE_SCRATCH"),
                ("cat ../../secrets.key", "PATH_OUTSIDE_SCRATCH"),
                ("grep -r token /", "PATH_OUTSIDE_SCRATCH"),
                ("grep -f/etc/passwd x", "PATH_OUTSIDE_SCRATCH"),
                ("head ~/.ssh/id_rsa", "COMMAND_NOT_ALLOWLISTED"),  # sh -c
                ("wc --files0-from=list", "ARGUMENT_NOT_ALLOWED")):
            self.expect("deny", recorded("bash_ls", command=command), why,
                        args=["--mappings", m])

    def test_file_writes_in_the_project_are_allowed(self):
        for name in ("write_project", "edit_project", "multiedit_project",
                     "notebookedit_project"):
            self.expect("allow", recorded(name), "allowed by policy")

    def test_file_writes_outside_the_project_escalate(self):
        # The event's cwd is the agent's to choose: it changes nothing.
        m = self.mappings({"escalate_wait": 1})
        for path, cwd in (("/home/dev/.bashrc", "/home/dev"),
                          ("/home/user/.bashrc", "/home/user"),
                          ("/tmp/x.sh", "/tmp"),
                          (PROJECT, PROJECT),
                          ("/home/dev/project2/a.c", "/home/dev/project2")):
            ev = recorded("write_project", file_path=path)
            ev["cwd"] = cwd
            self.expect("deny", ev, "PATH_OUTSIDE_PROJECT",
                        args=["--mappings", m])
        ev = recorded("write_project")
        ev["cwd"] = "/"
        self.expect("allow", ev, "allowed by policy")

    def test_write_env_is_denied(self):
        self.expect("deny", recorded("write_env"), "SENSITIVE_PATH")
        self.expect("deny", recorded("write_project",
                                     file_path="/home/dev/proj/../x"),
                    "PATH_TRAVERSAL")

    def test_webfetch_allowlisted_host_is_allowed(self):
        self.expect("allow", recorded("webfetch_allowed"))

    def test_webfetch_escalation_approved_while_waiting(self):
        decision, reason = self.escalate_and_vote(
            recorded("webfetch_escalate"), "approve", "http.request")
        self.assertEqual(decision, "allow", reason)
        self.assertIn("allowed after human approval", reason)

    def test_webfetch_escalation_denied_by_the_approver(self):
        decision, reason = self.escalate_and_vote(
            recorded("webfetch_escalate", url="https://example.org/x"),
            "deny", "http.request")
        self.assertEqual(decision, "deny", reason)
        self.assertIn("APPROVAL_DENIED", reason)

    def test_escalation_nobody_approves_denies(self):
        m = self.mappings({"escalate_wait": 2})
        reason, took = self.expect("deny", recorded("webfetch_escalate"),
                                   "no approver decided within 2 s",
                                   args=["--mappings", m])
        self.assertIn("HOST_NOT_ALLOWLISTED", reason)
        self.assertGreater(took, 1.5)
        self.assertLess(took, 5)

    def test_escalation_nobody_approves_asks_when_configured(self):
        m = self.mappings({"escalate_wait": 1, "on_escalate_timeout": "ask"})
        self.expect("ask", recorded("webfetch_escalate"), "asking you",
                    args=["--mappings", m])

    def test_mcp_tool_escalates(self):
        m = self.mappings({"escalate_wait": 1})
        self.expect("deny", recorded("mcp_github"), "MCP_GITHUB_WRITE",
                    args=["--mappings", m])
        decision, reason = self.escalate_and_vote(
            recorded("mcp_github"), "approve", "mcp.github.create_issue")
        self.assertEqual(decision, "allow", reason)

    def test_mapping_file_tools(self):
        m = os.path.join(HOOK_DIR, "mappings.json")
        self.expect("allow", recorded("read_unmapped"), "allowed by policy",
                    args=["--mappings", m])
        self.expect("deny", recorded("read_unmapped",
                                     file_path="/home/dev/proj/.env"),
                    "SENSITIVE_PATH", args=["--mappings", m])
        glob = recorded("read_unmapped")
        glob["tool_name"] = "Glob"
        # A fixed answer needs no PDP at all.
        self.expect("allow", glob, "the PDP was not asked",
                    args=["--mappings", m],
                    env=self.hook_env(drop=("INTENTGATE_URL",)))
        env = self.hook_env()
        env["INTENTGATE_HOOK_MAPPINGS"] = m
        self.expect("allow", recorded("read_unmapped"), env=env)

    # ---- failing closed ----

    def test_unmapped_tool_is_denied(self):
        self.expect("deny", recorded("read_unmapped"), "no mapping for tool "
                    "Read")
        m = self.mappings({"unmapped": "ask"})
        self.expect("ask", recorded("read_unmapped"), args=["--mappings", m])

    def test_pdp_unreachable(self):
        env = self.hook_env(url="http://127.0.0.1:%d" % free_port())
        self.expect("deny", recorded("bash_ls"), "cannot reach", env=env)

    def test_bad_input(self):
        ev = recorded("bash_ls")
        self.expect("deny", None, "not valid JSON", raw=b"{\"tool_name\": ")
        self.expect("deny", None, "not valid JSON", raw=b"\xff\xfe")
        self.expect("deny", None, "empty", raw=b"")
        self.expect("deny", None, "larger than",
                    raw=b"[" + b"1," * (1024 * 1024) + b"1]")
        self.expect("deny", None, "not an object", raw=b"[1]")
        bad = dict(ev, hook_event_name="PostToolUse")
        self.expect("deny", bad, "PreToolUse")
        bad = dict(ev, tool_input={"command": ""})
        self.expect("deny", bad, "empty")
        bad = dict(ev, tool_input={"command": "ls\u0000-la"})
        self.expect("deny", bad, "NUL")

    def test_missing_environment(self):
        ev = recorded("bash_ls")
        self.expect("deny", ev, "INTENTGATE_URL is not set",
                    env=self.hook_env(drop=("INTENTGATE_URL",)))
        self.expect("deny", ev, "INTENTGATE_TOKEN is not set",
                    env=self.hook_env(drop=("INTENTGATE_TOKEN",)))
        self.expect("deny", ev, "INTENTGATE_URL",
                    env=self.hook_env(url="ftp://127.0.0.1:1"))
        self.expect("deny", ev, "credentials",
                    env=self.hook_env(url="http://u:p@127.0.0.1:1"))
        self.expect("deny", ev, "UNAUTHENTICATED",
                    env=self.hook_env(token="igt_not-a-real-token"))

    def test_bad_arguments_and_mapping_files(self):
        ev = recorded("bash_ls")
        for args in ([], ["claude"], ["claude-code", "--frobnicate"]):
            p = subprocess.run([BIN, "hook"] + args, capture_output=True,
                               input=json.dumps(ev).encode(), timeout=20,
                               env=self.hook_env())
            d, reason = self.check_output(p.returncode, p.stdout, p.stderr)
            self.assertEqual(d, "deny", reason)
        self.expect("deny", ev, "cannot open",
                    args=["--mappings", os.path.join(self.tmp, "nope")])
        for doc, why in (("{", "end of input"),
                         ({"escalate_wait": -1}, "escalate_wait"),
                         ({"tools": {"Bash": "maybe"}}, "tools.Bash"),
                         ({"unmapped": "allow"}, "unmapped")):
            self.expect("deny", ev, why, args=["--mappings",
                                               self.mappings(doc)])
        p = subprocess.run([BIN, "hook", "--help"], capture_output=True,
                           timeout=20)
        self.assertEqual(p.returncode, 0)
        self.assertTrue(p.stdout.startswith(b"usage: intentgate hook"))

    def test_garbage_pdp(self):
        ev = recorded("bash_ls")
        answers = [
            (201, b"not json"),
            (201, b"[]"),
            (201, b"{\"decision\": \"ALLOW\"}"),
            (201, json.dumps({"decision": "MAYBE", "intent_id": "x1",
                              "intent": {"action": "shell.exec",
                                         "resource": "/home/dev/proj"}})
             .encode()),
            (201, json.dumps({"decision": "ALLOW", "intent_id": "x1",
                              "intent": {"action": "payments.refund",
                                         "resource": "/home/dev/proj"}})
             .encode()),
            (201, json.dumps({"decision": "ESCALATE", "intent_id": "x1",
                              "intent": {"action": "shell.exec",
                                         "resource": "/home/dev/proj"}})
             .encode()),
            (201, json.dumps({"decision": "ALLOW", "intent_id": "../x",
                              "intent": {"action": "shell.exec",
                                         "resource": "/home/dev/proj"}})
             .encode()),
            (200, json.dumps({"decision": "ALLOW", "intent_id": "x1",
                              "intent": {"action": "shell.exec",
                                         "resource": "/home/dev/proj"}})
             .encode()),
            (500, b"{\"error\": {\"code\": \"INTERNAL\", \"message\": "
                  b"\"boom\"}}"),
            (201, b"{\"decision\": \"ALLOW\"" + b" " * (2 * 1024 * 1024) +
             b"}"),
        ]
        for status, body in answers:
            fake = FakePDP(lambda m, p, s=status, b=body: (s, b))
            try:
                d, reason, _, _ = self.run_hook(
                    ev, env=self.hook_env(url=fake.url))
            finally:
                fake.close()
            self.assertEqual(d, "deny", (status, body[:80], reason))
            self.assertEqual(fake.requests[0][3],
                             "Bearer " + self.env["INTENTGATE_TOKEN"])

    def test_long_and_odd_reasons(self):
        # A BLOCK whose message is long, multibyte and full of control
        # characters: still one valid decision line, cut on a character.
        body = json.dumps({
            "decision": "BLOCK", "intent_id": "i-1",
            "reasons": ["R%d" % i for i in range(50)],
            "message": "\u00e9\u65e5\U0001F600\x1b[31m\n" * 300,
            "intent": {"action": "shell.exec",
                       "resource": "/home/dev/proj"}}).encode()
        fake = FakePDP(lambda m, p: (201, body))
        try:
            d, reason, _, err = self.run_hook(
                recorded("bash_ls"), env=self.hook_env(url=fake.url))
        finally:
            fake.close()
        self.assertEqual(d, "deny")
        self.assertTrue(reason.startswith("intentgate: blocked by policy: "
                                          "R0, R1"), reason)
        self.assertIn("\u00e9\u65e5\U0001F600\\u001b[31m\\n", reason)
        self.assertIsNone(re.search("[\x00-\x1f\x7f]", reason), reason)
        self.assertLess(len(reason.encode()), 1200)

    def test_garbage_while_waiting(self):
        escalate = json.dumps({
            "decision": "ESCALATE", "intent_id": "i-1", "reasons": ["X"],
            "approval": {"id": "a-1"},
            "intent": {"action": "shell.exec",
                       "resource": "/home/dev/proj"}}).encode()
        polls = [
            (200, b"{}"),
            (200, b"{\"intent_id\": \"i-2\", \"state\": \"ALLOWED\"}"),
            (200, b"{\"intent_id\": \"i-1\", \"state\": \"REDEEMED\"}"),
            (404, b"{\"error\": {\"code\": \"NOT_FOUND\"}}"),
            (200, b"garbage"),
        ]
        m = self.mappings({"escalate_wait": 5})
        for status, body in polls:
            def handler(method, path, s=status, b=body):
                return (201, escalate) if method == "POST" else (s, b)
            fake = FakePDP(handler)
            try:
                d, reason, took, _ = self.run_hook(
                    recorded("bash_ls"), args=["--mappings", m],
                    env=self.hook_env(url=fake.url))
            finally:
                fake.close()
            self.assertEqual(d, "deny", (body, reason))
            self.assertLess(took, 4)
            self.assertEqual(fake.requests[1][1], "/v1/intents/i-1?wait=5")
        # A PDP that keeps answering "pending" at once: polled gently, and
        # the wait still ends on time.
        fake = FakePDP(lambda method, path: (201, escalate) if method == "POST"
                       else (200, b"{\"intent_id\": \"i-1\", "
                                  b"\"state\": \"PENDING_APPROVAL\"}"))
        try:
            reason, took = self.expect("deny", recorded("bash_ls"),
                                       "no approver decided within 2 s",
                                       args=["--mappings",
                                             self.mappings(
                                                 {"escalate_wait": 2})],
                                       env=self.hook_env(url=fake.url))
        finally:
            fake.close()
        self.assertLess(len(fake.requests), 30)

    # ---- the small front binary (cli/main.c) ----

    def test_small_binary_loads_no_pdp_library(self):
        # The hook runs in `intentgate` itself: it must not need libcurl,
        # Lua, SQLite, libmicrohttpd or libcrypto (what made it slow).
        out = subprocess.run(["readelf", "-d", BIN], capture_output=True,
                             check=True, timeout=20).stdout.decode()
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", out)
        self.assertIn("libjansson.so.4", needed)
        for lib in ("libcurl", "liblua", "libsqlite3", "libmicrohttpd",
                    "libcrypto", "libssl", "libgnutls"):
            self.assertFalse([n for n in needed if n.startswith(lib)],
                             needed)

    def test_https_hook_goes_to_the_full_binary(self):
        # Nothing listens there: the full binary's libcurl says so.
        env = self.hook_env(url="https://127.0.0.1:%d" % free_port())
        self.expect("deny", recorded("bash_ls"), "cannot reach", env=env)

    def test_front_without_the_full_binary(self):
        # Copied alone, the front cannot hand over: an https hook still
        # denies (never a call without TLS), other commands fail.
        where = tempfile.mkdtemp(prefix="ig-front-", dir=self.tmp)
        alone = os.path.join(where, "intentgate")
        with open(BIN, "rb") as src, open(alone, "wb") as dst:
            dst.write(src.read())
        os.chmod(alone, 0o755)
        env = self.hook_env(url="https://127.0.0.1:%d" % free_port())
        p = subprocess.run([alone, "hook", "claude-code"], env=env,
                           input=json.dumps(recorded("bash_ls")).encode(),
                           capture_output=True, timeout=20)
        d, reason = self.check_output(p.returncode, p.stdout, p.stderr)
        self.assertEqual(d, "deny", reason)
        self.assertIn("needs the full intentgate binary", reason)
        p = subprocess.run([alone, "--version"], capture_output=True,
                           timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"cannot start", p.stderr)
        # Over http it answers by itself.
        p = subprocess.run([alone, "hook", "claude-code"],
                           env=self.hook_env(),
                           input=json.dumps(recorded("bash_ls")).encode(),
                           capture_output=True, timeout=20)
        d, reason = self.check_output(p.returncode, p.stdout, p.stderr)
        self.assertEqual(d, "allow", reason)

    def test_body_over_the_pdp_limit(self):
        # The PDP answers 413 before it has taken the whole body: the plain
        # http client still reports its answer, not a broken pipe.
        ev = recorded("mcp_github")
        ev["tool_input"] = {"body": "x" * 600000}
        self.expect("deny", ev, "HTTP 413 BODY_TOO_LARGE")

    def test_hanging_pdp(self):
        fake = FakePDP(hang=True)
        m = self.mappings({"escalate_wait": 1, "timeout": 3})
        try:
            reason, took = self.expect("deny", recorded("bash_ls"),
                                       "time limit (3 s)",
                                       args=["--mappings", m],
                                       env=self.hook_env(url=fake.url))
        finally:
            fake.close()
        self.assertGreater(took, 2)
        self.assertLess(took, 5)

    def test_default_time_limit_with_a_hanging_pdp(self):
        # No mapping file: the hard limit is escalate_wait + 3 = 58 s, below
        # Claude Code's default hook timeout of 60 s. Rather than waiting
        # for it, the alarm the hook armed for that limit is delivered early
        # (SIGALRM, as the kernel would at 58 s) once the hook is stuck on
        # the hanging PDP: the answer prepared for that moment must be a
        # deny naming the 58 s limit. (The POST's own 30 s transfer timeout
        # comes first in real life; either way a deny is printed in time.)
        fake = FakePDP(hang=True)
        p = subprocess.Popen([BIN, "hook", "claude-code"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE,
                             env=self.hook_env(url=fake.url))
        try:
            p.stdin.write(json.dumps(recorded("bash_ls")).encode())
            p.stdin.close()
            deadline = time.monotonic() + 20
            while not fake.conns and time.monotonic() < deadline:
                self.assertIsNone(p.poll(), "the hook exited before asking")
                time.sleep(0.02)
            self.assertTrue(fake.conns, "the hook never reached the PDP")
            p.send_signal(signal.SIGALRM)
            p.wait(timeout=10)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            fake.close()
        out, err = p.stdout.read(), p.stderr.read()
        p.stdout.close()
        p.stderr.close()
        d, reason = self.check_output(p.returncode, out, err)
        self.assertEqual(d, "deny", reason)
        self.assertIn("time limit (58 s)", reason)

    def test_stopped_while_waiting(self):
        m = self.mappings({"escalate_wait": 30})
        p = subprocess.Popen([BIN, "hook", "claude-code", "--mappings", m],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=self.hook_env())
        p.stdin.write(json.dumps(recorded("webfetch_escalate")).encode())
        p.stdin.close()
        self.srv.wait_parked(1)  # stopped while it waits for a human
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        out, err = p.stdout.read(), p.stderr.read()
        p.stdout.close()
        p.stderr.close()
        d, reason = self.check_output(p.returncode, out, err)
        self.assertEqual(d, "deny", reason)
        self.assertIn("stopped", reason)


if __name__ == "__main__":
    run_tests()
