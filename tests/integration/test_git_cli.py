"""test_git_cli.py - `intentgate git push|fetch|clone|ls-remote` with real
git, in a scratch repository made here.

DryRun: --dry-run prints the intent the command would submit (action,
resource = the gateway alias, params.refs / params.delete) and, on
stderr, the git command with the object ids it resolved; hostile
refspecs, URLs and arguments are refused with one line and exit 2, before
anything runs. It needs no PDP.

EndToEnd: against the real `intentgate serve --dev` (plus an approver in
group "release") and a stand-in for the executor's git gateway: a loopback
server that records every request and serves `git http-backend` for a
bare repository when an Authorization header is present. It checks what
the CLI owes the gateway: the grant arrives as `Authorization: Bearer`,
only to the gateway's URL (not after a url.*.insteadOf rewrite or a
redirect), never in any process's argv nor in the CLI's own environment,
never in the CLI's output; a blocked push sends nothing; an escalated tag
push waits, is approved and lands; git failing is exit 5.

git must be installed (Debian `git`, scripts/deps.sh): without it this
suite fails, it never skips.

    INTENTGATE_BIN=build/cli/intentgate \
        python3 tests/integration/test_git_cli.py
"""
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, run_tests, wait_until  # noqa: E402

GIT = shutil.which("git")
REL = "rel"  # the approver added in group release
ID = {"user.name": "T", "user.email": "t@example.org"}


def require_git():
    if GIT is None:
        raise AssertionError("git is not installed (scripts/deps.sh lists "
                             "it): this suite cannot run without it")


def git(repo, *args, env=None):
    """Run git in repo; its stdout, stripped. Fails on a non-zero exit."""
    cmd = [GIT, "-C", repo]
    for k, v in ID.items():
        cmd += ["-c", "%s=%s" % (k, v)]
    res = subprocess.run(cmd + list(args), capture_output=True, env=env,
                         timeout=60)
    if res.returncode != 0:
        raise AssertionError("git %s: %s" % (" ".join(args),
                                             res.stderr.decode()))
    return res.stdout.decode().strip()


def agent_env(extra=None):
    """The environment without any INTENTGATE_ or GIT_CONFIG variable."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INTENTGATE_", "GIT_CONFIG"))}
    env.update(extra or {})
    return env


def run_ig(args, cwd, env=None, timeout=120):
    res = subprocess.run([BIN, "git"] + list(args), cwd=cwd,
                         env=env if env is not None else agent_env(),
                         capture_output=True, timeout=timeout)
    return res.returncode, res.stdout.decode(), res.stderr.decode()


def make_repo(path, remote_url):
    """main with two commits, agent/x, a lightweight tag v1, an annotated
    tag v2, and a remote gw."""
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    for n in ("one", "two"):
        with open(os.path.join(path, n), "w") as f:
            f.write(n + "\n")
        git(path, "add", n)
        git(path, "commit", "-q", "-m", n)
    git(path, "branch", "agent/x")
    git(path, "tag", "v1")
    git(path, "tag", "-a", "-m", "release 2", "v2")
    git(path, "remote", "add", "gw", remote_url)
    return path


class DryRun(unittest.TestCase):
    URL = "http://127.0.0.1:9/git/demo"  # never contacted

    @classmethod
    def setUpClass(cls):
        require_git()
        cls.tmp = tempfile.mkdtemp(prefix="ig-gitcli-")
        cls.repo = make_repo(os.path.join(cls.tmp, "work"), cls.URL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def intent(self, *args):
        rc, out, err = run_ig(["push", "--dry-run"] + list(args)
                              if args and args[0] not in
                              ("fetch", "clone", "ls-remote")
                              else [args[0], "--dry-run"] + list(args[1:]),
                              self.repo)
        self.assertEqual(rc, 0, err)
        m = re.search(r"^intentgate git: would run: (.*)$", err, re.M)
        self.assertIsNotNone(m, err)
        return json.loads(out), m.group(1).split(" ")

    def refused(self, args, word):
        rc, out, err = run_ig(args, self.repo)
        self.assertEqual(rc, 2, (args, out, err))
        self.assertEqual(out, "", args)
        self.assertEqual(len(err.strip().splitlines()), 1, (args, err))
        self.assertIn(word, err, args)
        return err

    def test_push_intent_and_object_ids(self):
        intent, cmd = self.intent("gw", "agent/x", "v1", "v2",
                                  "HEAD:refs/heads/agent/y",
                                  "main:agent/z", ":refs/heads/agent/old")
        self.assertEqual(intent, {
            "action": "git.push", "resource": "demo",
            "params": {"refs": ["refs/heads/agent/x", "refs/tags/v1",
                                "refs/tags/v2", "refs/heads/agent/y",
                                "refs/heads/agent/z"],
                       "delete": ["refs/heads/agent/old"]}})
        head = git(self.repo, "rev-parse", "HEAD")
        tag2 = git(self.repo, "rev-parse", "refs/tags/v2")
        self.assertNotEqual(tag2, head)  # the annotated tag's own object
        self.assertEqual(cmd[:5], ["git", "push", "--no-follow-tags",
                                   "--recurse-submodules=no", "--no-signed"])
        self.assertEqual(cmd[5:], [
            "--end-of-options", self.URL,
            head + ":refs/heads/agent/x", head + ":refs/tags/v1",
            tag2 + ":refs/tags/v2", head + ":refs/heads/agent/y",
            head + ":refs/heads/agent/z", ":refs/heads/agent/old"])

    def test_push_a_tag_to_a_branch_sends_the_commit(self):
        intent, cmd = self.intent("gw", "v2:refs/heads/agent/from-tag")
        self.assertEqual(intent["params"],
                         {"refs": ["refs/heads/agent/from-tag"]})
        self.assertEqual(cmd[-1], git(self.repo, "rev-parse", "HEAD")
                         + ":refs/heads/agent/from-tag")

    def test_short_destinations_follow_the_source(self):
        intent, _ = self.intent("gw", "v1:rel/v1", "agent/x:agent/w")
        self.assertEqual(intent["params"]["refs"],
                         ["refs/tags/rel/v1", "refs/heads/agent/w"])

    def test_delete(self):
        intent, cmd = self.intent("--delete", "gw", "agent/x", "v1",
                                  "refs/heads/agent/gone")
        self.assertEqual(intent["params"], {"delete": [
            "refs/heads/agent/x", "refs/tags/v1", "refs/heads/agent/gone"]})
        self.assertEqual(cmd[-3:], [":refs/heads/agent/x", ":refs/tags/v1",
                                    ":refs/heads/agent/gone"])

    def test_url_and_remote_name_give_the_same_intent(self):
        a, _ = self.intent("gw", "agent/x")
        b, _ = self.intent(self.URL, "agent/x")
        self.assertEqual(a, b)

    def test_fetch_clone_ls_remote(self):
        for sub, args in (("fetch", ["gw"]), ("fetch", [self.URL, "main"]),
                          ("clone", [self.URL, "dir"]),
                          ("ls-remote", ["gw"])):
            intent, cmd = self.intent(sub, *args)
            self.assertEqual(intent, {"action": "git.fetch",
                                      "resource": "demo", "params": {}})
            self.assertEqual(cmd[:3], ["git", sub, "--end-of-options"])

    def test_hostile_refspecs(self):
        for spec, word in (
                ("+agent/x", "'+'"), ("+agent/x:refs/heads/main", "'+'"),
                ("agent/x:+refs/heads/main", "'+'"),
                ("refs/heads/*:refs/heads/copy/*", "'*'"),
                ("^refs/heads/main", "'^'"),
                ("main^:refs/heads/agent/p", "'^'"),
                ("main~1:refs/heads/agent/p", "'~'"),
                ("main@{1}:refs/heads/agent/old", "'@{'"),
                ("@{-1}", "'@{'"),
                ("agent/x:refs/heads/agent/../main", ".."),
                ("agent/x:refs/remotes/origin/main", "refs/heads/"),
                ("agent/x:refs/notes/commits", "refs/heads/"),
                ("agent/x:refs/heads/agent/a b", "space"),
                ("agent/x:refs/heads/agent/a\nb", "control"),
                ("agent/x:refs/heads/agent/x.lock", ".lock"),
                ("a:b:c", "':'"), ("agent/x:", "empty"),
                ("agent/-x", "'-'"), ("agent/x:refs/heads/-x", "'-'"),
                ("HEAD", "not a local branch or tag"),
                ("0123abc:agent/y", "not a local branch or tag"),
                ("nope", "not a local branch or tag"),
                ("nope:refs/heads/agent/y", "does not name a commit")):
            self.refused(["push", "--dry-run", "gw", spec], word)
        self.refused(["push", "--dry-run", "gw",
                      b"HEAD:refs/heads/agent/\xff"], "UTF-8")
        # an option after the remote is a refspec, and refused as one
        self.refused(["push", "--dry-run", "gw", "--force"], "'-'")
        self.refused(["push", "--dry-run", "--", "gw", "--delete"], "'-'")
        self.refused(["push", "--dry-run", "--delete", "gw", "a:b"],
                     "--delete takes ref names")
        self.refused(["push", "--dry-run", "gw", "agent/x", "agent/x"],
                     "named twice")
        self.refused(["push", "--dry-run", "gw", "agent/x",
                      ":refs/heads/agent/x"], "named twice")

    def test_ambiguous_name(self):
        git(self.repo, "branch", "both")
        git(self.repo, "tag", "both")
        self.refused(["push", "--dry-run", "gw", "both"],
                     "both a branch and a tag")

    def test_hostile_remotes(self):
        for remote, word in (
                ("http://x-access-token:s3cret@127.0.0.1:9/git/demo", "user"),
                ("http://127.0.0.1:9/git/demo?service=x", "alias"),
                ("http://127.0.0.1:9/git/demo/", "alias"),
                ("http://127.0.0.1:9/git/demo/../other", "alias"),
                ("http://127.0.0.1:9/demo.git", "/git/"),
                ("file:///tmp/x", "gateway URL"),
                ("ext::sh -c id", "gateway URL"),
                ("--upload-pack=id", "unexpected option"),
                ("nosuchremote", "no git remote named nosuchremote")):
            err = self.refused(["push", "--dry-run", remote, "agent/x"], word)
            self.assertNotIn("s3cret", err)
        self.refused(["push", "--dry-run", "--", "--upload-pack=id",
                      "agent/x"], "gateway URL")
        git(self.repo, "remote", "add", "bad",
            "http://u:s3cret@127.0.0.1:9/git/demo")
        err = self.refused(["ls-remote", "--dry-run", "bad"], "remote bad")
        self.assertNotIn("s3cret", err)
        git(self.repo, "remote", "add", "direct", "https://example.org/x.git")
        self.refused(["fetch", "--dry-run", "direct"], "/git/")
        # a remote with a second URL: a fetch would go to one of them
        git(self.repo, "remote", "add", "two", self.URL)
        git(self.repo, "remote", "set-url", "--add", "two",
            "http://127.0.0.1:9/git/other")
        self.refused(["fetch", "--dry-run", "two"], "remote two")
        self.refused(["clone", "--dry-run", "gw"], "gateway URL")

    def test_usage(self):
        for args, word in (
                ([], "expected push"), (["pull", "gw"], "expected push"),
                (["push", "--dry-run"], "no REMOTE"),
                (["push", "--dry-run", "gw"], "arguments after REMOTE"),
                (["ls-remote", "--dry-run", "gw", "x"], "arguments"),
                (["clone", "--dry-run", self.URL, "a", "b"], "arguments"),
                (["push", "--force", "gw", "agent/x"], "unexpected option"),
                (["fetch", "--delete", "gw"], "unexpected option"),
                (["push", "--wait", "-1", "gw", "agent/x"], "--wait"),
                (["push", "--wait=99999999", "gw", "agent/x"], "--wait")):
            self.refused(args, word)
        many = ["agent/x:refs/heads/agent/n%d" % i for i in range(257)]
        self.refused(["push", "--dry-run", "gw"] + many, "arguments")

    def test_outside_a_repository(self):
        rc, out, err = run_ig(["push", "--dry-run", self.URL, "agent/x"],
                              self.tmp)
        self.assertEqual(rc, 2, err)
        self.assertEqual(out, "")

    def test_without_dry_run_the_pdp_is_required(self):
        rc, out, err = run_ig(["push", "gw", "agent/x"], self.repo)
        self.assertEqual(rc, 2, err)
        self.assertIn("INTENTGATE_URL", err)


# ---- a stand-in for the executor's git gateway ----

def grant_holders(grant):
    """Where grant is visible in /proc: (pid, comm) of processes whose argv
    holds it, and of those whose environment holds it."""
    in_argv, in_env = [], []
    needle = grant.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if needle in f.read():
                    in_argv.append((pid, comm))
            with open("/proc/%s/environ" % pid, "rb") as f:
                if needle in f.read():
                    in_env.append((pid, comm))
        except OSError:
            continue  # gone, or not ours to read
    return in_argv, in_env


class Gateway(http.server.ThreadingHTTPServer):
    """Records every request; /git/<alias>/... is served by `git
    http-backend` from root/<alias>.git when an Authorization header came,
    401 otherwise; alias "refuse" always answers 401, alias "redir"
    redirects to self.redirect_to."""
    daemon_threads = True

    def __init__(self, root):
        super().__init__(("127.0.0.1", 0), GatewayHandler)
        self.root = root
        self.redirect_to = None
        self.lock = threading.Lock()
        self.seen = []  # (method, path, headers dict, argv, env holders)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server_address[1]

    def count(self):
        with self.lock:
            return len(self.seen)


class GatewayHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.serve_git()

    def do_POST(self):
        self.serve_git()

    def serve_git(self):
        path, _, query = self.path.partition("?")
        body = self.read_body()
        auth = self.headers.get("Authorization")
        holders = grant_holders(auth[7:]) if auth and \
            auth.startswith("Bearer ") else ([], [])
        with self.server.lock:
            self.server.seen.append((self.command, self.path,
                                     dict(self.headers), holders))
        m = re.match(r"^/git/([a-z0-9._-]+)(/.*)$", path)
        if m and m.group(1) == "redir" and self.server.redirect_to:
            return self.reply(302, b"", [("Location", self.server.redirect_to
                                          + m.group(2) + "?" + query)])
        if not m or not os.path.isdir(os.path.join(self.server.root,
                                                   m.group(1) + ".git")):
            return self.reply(404, b"intentgate: no such repository\n",
                              [("Content-Type", "text/plain")])
        if not auth or m.group(1) == "refuse":
            return self.reply(401, b"intentgate: no grant\n",
                              [("Content-Type", "text/plain")])
        self.cgi(m.group(1), m.group(2), query, body)

    def cgi(self, alias, rest, query, body):
        env = {"PATH": os.environ["PATH"],
               "GIT_PROJECT_ROOT": self.server.root,
               "GIT_HTTP_EXPORT_ALL": "1", "REMOTE_USER": "gateway",
               "REMOTE_ADDR": "127.0.0.1", "GATEWAY_INTERFACE": "CGI/1.1",
               "REQUEST_METHOD": self.command, "QUERY_STRING": query,
               "PATH_INFO": "/%s.git%s" % (alias, rest),
               "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body))}
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["HTTP_GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run([GIT, "http-backend"], input=body, env=env,
                             capture_output=True, timeout=60).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k.strip(), v.strip()))
        self.reply(status, payload, headers)


def start_pdp():
    """A dev server with an approver in group release (the dev approver is
    not), same password."""
    srv = Server.dev()
    srv.stop()
    conf = os.path.join(srv.data, "intentgate.conf")
    with open(conf) as f:
        text = f.read()
    h = re.search(r"^password_hash = (.*)$", text, re.M).group(1)
    text += ("\n[approver %s]\nname = Release Manager\n"
             "groups = release\npassword_hash = %s\n" % (REL, h))
    with open(conf, "w") as f:
        f.write(text)
    return Server.dev(tmp=srv.tmp)


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_git()
        cls.tmp = tempfile.mkdtemp(prefix="ig-gitcli-")
        root = os.path.join(cls.tmp, "upstream")
        os.makedirs(root)
        cls.upstream = os.path.join(root, "demo.git")
        git(cls.tmp, "init", "-q", "--bare", "-b", "main", cls.upstream)
        git(cls.tmp, "init", "-q", "--bare", "-b", "main",
            os.path.join(root, "refuse.git"))
        cls.gw = Gateway(root)
        cls.evil = Gateway(os.path.join(cls.tmp, "nothing"))
        for s in (cls.gw, cls.evil):
            threading.Thread(target=s.serve_forever, daemon=True).start()
        cls.gw.redirect_to = cls.evil.url + "/git/demo"
        cls.url = cls.gw.url + "/git/demo"
        cls.repo = make_repo(os.path.join(cls.tmp, "work"), cls.url)
        # main exists upstream before the agent starts
        git(cls.repo, "push", "-q", cls.upstream, "main:refs/heads/main")
        cls.srv = start_pdp()
        st, body, _ = cls.srv.call(
            "POST", "/v1/approver/login", None,
            {"approver": REL,
             "password": cls.srv.env["INTENTGATE_APPROVER_PASSWORD"]})
        assert st == 200, body
        cls.rel = body["token"]

    @classmethod
    def tearDownClass(cls):
        for s in (cls.gw, cls.evil):
            s.shutdown()
            s.server_close()
        rc = cls.srv.stop()
        log = cls.srv.log()
        cls.srv.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if rc != 0 or "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("server exit %s:\n%s" % (rc, log[-4000:]))

    def env(self, extra=None):
        e = agent_env({"INTENTGATE_URL": self.srv.env["INTENTGATE_URL"],
                       "INTENTGATE_TOKEN": self.srv.env["INTENTGATE_TOKEN"]})
        e.update(extra or {})
        return e

    def upstream_refs(self):
        out = git(self.tmp, "--git-dir=" + self.upstream, "for-each-ref",
                  "--format=%(refname) %(objectname)")
        return dict(line.split(" ") for line in out.splitlines() if line)

    def since(self, gw, n):
        with gw.lock:
            return list(gw.seen[n:])

    def assert_grant_only_in_git(self, seen, out, err):
        """Every request carried a grant, which no process had in its argv,
        only git's processes in their environment, and the CLI never
        printed."""
        self.assertTrue(seen)
        for method, path, headers, (in_argv, in_env) in seen:
            auth = headers.get("Authorization", "")
            self.assertTrue(auth.startswith("Bearer v4.public."), path)
            self.assertNotIn(auth[7:], out + err)
            self.assertEqual(in_argv, [], path)
            self.assertTrue(in_env, path)  # git's http helper holds it
            for pid, comm in in_env:
                self.assertTrue(comm.startswith("git"), (comm, path))

    def test_push_agent_branch_lands(self):
        n = self.gw.count()
        rc, out, err = run_ig(["push", "gw", "agent/x"], self.repo,
                              self.env())
        self.assertEqual(rc, 0, err)
        head = git(self.repo, "rev-parse", "agent/x")
        self.assertEqual(self.upstream_refs()["refs/heads/agent/x"], head)
        seen = self.since(self.gw, n)
        self.assertEqual([(m, p.split("?")[0]) for m, p, _, _ in seen],
                         [("GET", "/git/demo/info/refs"),
                          ("POST", "/git/demo/git-receive-pack")])
        self.assert_grant_only_in_git(seen, out, err)

    def test_push_main_is_blocked_and_nothing_is_sent(self):
        before, n = self.upstream_refs(), self.gw.count()
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "to main")
        rc, out, err = run_ig(["push", "gw", "main"], self.repo, self.env())
        self.assertEqual(rc, 4, err)
        self.assertIn("PROTECTED_BRANCH", err)
        self.assertIn("git did not run", err)
        self.assertEqual(self.gw.count(), n)
        self.assertEqual(self.upstream_refs(), before)

    def test_delete_agent_branch(self):
        rc, _, err = run_ig(["push", "gw", "agent/x:agent/tmp"], self.repo,
                            self.env())
        self.assertEqual(rc, 0, err)
        self.assertIn("refs/heads/agent/tmp", self.upstream_refs())
        rc, _, err = run_ig(["push", "--delete", "gw", "refs/heads/agent/tmp"],
                            self.repo, self.env())
        self.assertEqual(rc, 0, err)
        self.assertNotIn("refs/heads/agent/tmp", self.upstream_refs())

    def test_tag_push_escalates_then_lands_once_approved(self):
        n = self.gw.count()
        rc, _, err = run_ig(["push", "--wait", "0", "gw", "v2"], self.repo,
                            self.env())
        self.assertEqual(rc, 3, err)
        self.assertIn("TAG_PUSH", err)
        self.assertEqual(self.gw.count(), n)
        self.assertNotIn("refs/tags/v2", self.upstream_refs())
        st, body, _ = self.srv.call("GET", "/v1/approvals", self.rel)
        before = {a["approval_id"] for a in body["approvals"]}
        proc = subprocess.Popen([BIN, "git", "push", "--wait", "60", "gw",
                                 "v2"], cwd=self.repo, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            def new_approval():
                st, body, _ = self.srv.call("GET", "/v1/approvals", self.rel)
                return [a for a in body.get("approvals", [])
                        if a["approval_id"] not in before
                        and a["action"] == "git.push"]
            a = wait_until(new_approval, "the tag push's approval")[0]
            st, res, _ = self.srv.call(
                "POST", "/v1/approvals/%s/votes" % a["approval_id"], self.rel,
                {"vote": "approve", "intent_hash": a["intent_hash"],
                 "comment": "release 2"})
            self.assertEqual(st, 200, res)
            out, err = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(self.upstream_refs()["refs/tags/v2"],
                         git(self.repo, "rev-parse", "refs/tags/v2"))
        self.assert_grant_only_in_git(self.since(self.gw, n), out.decode(),
                                      err.decode())

    def test_clone_and_fetch(self):
        rc, _, err = run_ig(["push", "gw", "agent/x:agent/for-clone"],
                            self.repo, self.env())
        self.assertEqual(rc, 0, err)
        n = self.gw.count()
        rc, out, err = run_ig(["clone", self.url, "cloned"], self.tmp,
                              self.env())
        self.assertEqual(rc, 0, err)
        clone = os.path.join(self.tmp, "cloned")
        self.assertEqual(git(clone, "rev-parse", "origin/agent/for-clone"),
                         git(self.repo, "rev-parse", "agent/x"))
        # the grant was not written into the clone's configuration
        with open(os.path.join(clone, ".git", "config")) as f:
            self.assertNotIn("Bearer", f.read())
        rc, out2, err2 = run_ig(["fetch", "origin"], clone, self.env())
        self.assertEqual(rc, 0, err2)
        rc, out3, err3 = run_ig(["ls-remote", "origin"], clone, self.env())
        self.assertEqual(rc, 0, err3)
        self.assertIn("refs/heads/agent/for-clone", out3)
        self.assert_grant_only_in_git(self.since(self.gw, n),
                                      out + out2 + out3, err + err2 + err3)

    def test_plain_git_without_a_grant_gets_401(self):
        n = self.gw.count()
        res = subprocess.run([GIT, "ls-remote", self.url], cwd=self.repo,
                             env=agent_env({"GIT_TERMINAL_PROMPT": "0"}),
                             capture_output=True, timeout=60)
        self.assertNotEqual(res.returncode, 0)
        seen = self.since(self.gw, n)
        self.assertTrue(seen)
        self.assertNotIn("Authorization", seen[0][2])

    def test_git_failing_is_exit_5(self):
        rc, _, err = run_ig(["ls-remote", self.gw.url + "/git/refuse"],
                            self.repo, self.env())
        self.assertEqual(rc, 5, err)
        self.assertIn("git ls-remote failed", err)

    def test_insteadof_rewrite_does_not_get_the_grant(self):
        n = self.evil.count()
        extra = {"GIT_CONFIG_COUNT": "1",
                 "GIT_CONFIG_KEY_0": "url.%s/git/.insteadOf" % self.evil.url,
                 "GIT_CONFIG_VALUE_0": self.gw.url + "/git/"}
        rc, _, err = run_ig(["ls-remote", self.url], self.repo,
                            self.env(extra))
        self.assertEqual(rc, 5, err)
        seen = self.since(self.evil, n)
        self.assertTrue(seen, "the rewrite did not happen: the test is void")
        for _, path, headers, _ in seen:
            self.assertNotIn("Authorization", headers, path)

    def test_redirect_is_not_followed(self):
        n, m = self.evil.count(), self.gw.count()
        rc, _, err = run_ig(["ls-remote", self.gw.url + "/git/redir"],
                            self.repo, self.env())
        self.assertEqual(rc, 5, err)
        self.assertGreater(self.gw.count(), m)  # the gateway redirected
        self.assertEqual(self.since(self.evil, n), [])
        # the control: plain git follows that redirect
        subprocess.run([GIT, "ls-remote", self.gw.url + "/git/redir"],
                       cwd=self.repo, capture_output=True, timeout=60,
                       env=agent_env({"GIT_TERMINAL_PROMPT": "0"}))
        self.assertTrue(self.since(self.evil, n),
                        "git did not follow the redirect: the test is void")

    def test_existing_git_config_is_kept_and_stale_slots_replaced(self):
        n = self.gw.count()
        extra = {"GIT_CONFIG_COUNT": "1",
                 "GIT_CONFIG_KEY_0": "http.extraHeader",
                 "GIT_CONFIG_VALUE_0": "X-Agent-Test: kept",
                 # stale entries where the grant's settings go: replaced
                 "GIT_CONFIG_KEY_1": "http.proxy",
                 "GIT_CONFIG_VALUE_1": "http://127.0.0.1:9",
                 "GIT_CONFIG_KEY_2": "http.extraHeader",
                 "GIT_CONFIG_VALUE_2": "Authorization: Bearer stale"}
        rc, out, err = run_ig(["ls-remote", "gw"], self.repo,
                              self.env(extra))
        self.assertEqual(rc, 0, err)
        seen = self.since(self.gw, n)
        self.assertEqual(seen[0][2].get("X-Agent-Test"), "kept")
        self.assert_grant_only_in_git(seen, out, err)

    def test_bad_git_config_count_is_refused_first(self):
        for bad in ("1x", "-1", "99999", " 1"):
            rc, out, err = run_ig(["ls-remote", "gw"], self.repo,
                                  self.env({"GIT_CONFIG_COUNT": bad}))
            self.assertEqual((rc, out), (2, ""), err)
            self.assertIn("GIT_CONFIG_COUNT", err)


if __name__ == "__main__":
    run_tests()
