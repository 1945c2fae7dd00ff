"""git_upstream.py - a real git smart-HTTP upstream on loopback for the git
gateway's suites (issue 15). Standard library only.

GitUpstream creates a bare repository (`git init --bare`, with
`http.receivepack true`) and serves it on 127.0.0.1:<free port> with a
ThreadingHTTPServer that runs `git http-backend` as a CGI for every
request. Each request must carry the credential, the way a forge wants it:
`Authorization: Basic base64(user:credential)` by default, or
`<header>: <prefix><credential>` when header is given; anything else is
answered 401 before git runs. Chunked request bodies are decoded before
they are piped to the CGI (git sends one after its "0000" probe when a
push is over http.postBuffer); a gzip body is passed through with
HTTP_CONTENT_ENCODING for http-backend to inflate.

Every request is recorded (method, path, query, headers, body length,
status answered) in a list guarded by a lock: requests(), reset_log().
refs() reads the repository itself (`git for-each-ref`), so a test sees
what landed whatever the HTTP traffic said.

echo_credential_in_errors=True is the hostile upstream: its 401 and 500
pages carry the Authorization value it received, raw and base64-decoded,
and every answer (200s included) carries it in an X-Debug-Authorization
header; force_status = 500 makes it answer every authorised request with
such an error page (without running git). The gateway must never hand any
of it back to the agent.

    res = exec_harness.Resources()
    up = GitUpstream(res, "/tmp/x", "s3cret")
    up.seed()                 # one commit on main, pushed locally
    up.url                    # http://127.0.0.1:PORT/repo.git
    up.refs()                 # {"refs/heads/main": "<id>"}
    res.close()

Run directly, it tests itself with plain git: clone, push, fetch with the
right Basic credential in an http.extraHeader; no or a wrong credential
is a 401 that git reports. `--serve DIR CREDENTIAL [PORT]` serves a demo
repository until interrupted (README: "Pushing through the git gateway").
"""
import base64
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import exec_harness as H  # noqa: E402

MAX_BODY = 512 * 1024 * 1024  # a request body over this is refused (413)
REPO_NAME = "repo.git"


def git_env(home):
    """An environment for git that reads no user or system config and
    never prompts: HOME is home, identity fixed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false",
                "SSH_ASKPASS": "/bin/false",
                "GIT_AUTHOR_NAME": "Agent",
                "GIT_AUTHOR_EMAIL": "a@example.test",
                "GIT_COMMITTER_NAME": "Agent",
                "GIT_COMMITTER_EMAIL": "a@example.test", "LC_ALL": "C"})
    return env


def run_git(args, cwd=None, env=None, input=None, timeout=300, check=True):
    """subprocess.run(["git"] + args) -> CompletedProcess (text output);
    raises AssertionError with git's output when check and it fails."""
    r = subprocess.run(["git"] + list(args), cwd=cwd, env=env, input=input,
                       capture_output=True, timeout=timeout)
    r.out = r.stdout.decode("utf-8", "replace")
    r.err = r.stderr.decode("utf-8", "replace")
    if check and r.returncode != 0:
        raise AssertionError("git %s failed (%d):\n%s%s" % (
            " ".join(args), r.returncode, r.out, r.err))
    return r


def read_chunked(rfile, cap):
    """The body of a Transfer-Encoding: chunked request (trailers
    skipped); ValueError when malformed or over cap."""
    out = bytearray()
    while True:
        line = rfile.readline(1024)
        if not line.endswith(b"\n"):
            raise ValueError("chunk size line")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size < 0 or len(out) + size > cap:
            raise ValueError("chunked body over the cap")
        if size == 0:
            while rfile.readline(8192).strip():
                pass
            return bytes(out)
        out += rfile.read(size)
        if rfile.read(2) != b"\r\n":
            raise ValueError("chunk not followed by CRLF")


def parse_cgi(out):
    """(status, [(name, value)], body) from a CGI's output."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        head, found, body = out.partition(sep)
        if found:
            break
    else:
        return 502, [("Content-Type", "text/plain")], b"bad CGI output\n"
    status, headers = 200, []
    for line in head.replace(b"\r\n", b"\n").split(b"\n"):
        k, _, v = line.decode("latin-1").partition(":")
        if k.lower() == "status":
            status = int(v.strip().split(" ", 1)[0])
        elif k:
            headers.append((k.strip(), v.strip()))
    return status, headers, body


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "git-upstream"

    def log_message(self, fmt, *args):  # quiet
        pass

    def do_GET(self):
        self._serve()

    def do_POST(self):
        self._serve()

    def _read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return read_chunked(self.rfile, MAX_BODY), True
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0 or n > MAX_BODY:
            raise ValueError("Content-Length")
        return self.rfile.read(n), False

    def _serve(self):
        up = self.server.upstream
        path, _, query = self.path.partition("?")
        rec = {"method": self.command, "path": path, "query": query,
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "header_list": list(self.headers.items()),
               "body_len": 0, "chunked": False, "status": None}
        try:
            body, rec["chunked"] = self._read_body()
            rec["body_len"] = len(body)
        except ValueError as e:
            rec["status"] = 400
            up._record(rec)
            self._answer(400, [("Content-Type", "text/plain")],
                         b"bad body: %s\n" % str(e).encode(), close=True)
            return
        got = self.headers.get(up.auth_header, "")
        if not up.authorised(got):
            rec["status"] = 401
            up._record(rec)
            self._answer(401, [("WWW-Authenticate",
                                'Basic realm="git-upstream"'),
                               ("Content-Type", "text/plain")],
                         up.error_page(401, got))
            return
        if up.hold is not None:  # a slow upstream: wait to be released
            up.held.set()
            up.hold.wait(60)
        if up.force_status:
            rec["status"] = up.force_status
            up._record(rec)
            self._answer(up.force_status, [("Content-Type", "text/html")],
                         up.error_page(up.force_status, got))
            return
        status, headers, out = self._cgi(path, query, body)
        rec["status"] = status
        up._record(rec)
        self._answer(status, headers, out)

    def _cgi(self, path, query, body):
        up = self.server.upstream
        env = git_env(up.home)
        env.update({
            "GIT_PROJECT_ROOT": up.root, "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": up.user, "REMOTE_ADDR": "127.0.0.1",
            "GATEWAY_INTERFACE": "CGI/1.1", "SERVER_PROTOCOL": "HTTP/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": urllib.parse.unquote(path),
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body))})
        for name, var in (("Content-Encoding", "HTTP_CONTENT_ENCODING"),
                          ("Git-Protocol", "HTTP_GIT_PROTOCOL")):
            v = self.headers.get(name)
            if v is not None:
                env[var] = v
        r = subprocess.run(["git", "http-backend"], input=body, env=env,
                           capture_output=True, timeout=600)
        if r.returncode != 0 and not r.stdout:
            return 500, [("Content-Type", "text/plain")], r.stderr[-2000:]
        return parse_cgi(r.stdout)

    def _answer(self, status, headers, body, close=False):
        up = self.server.upstream
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("content-length", "transfer-encoding"):
                self.send_header(k, v)
        if up.echo_credential_in_errors:
            self.send_header("X-Debug-Authorization",
                             self.headers.get(up.auth_header, ""))
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class GitUpstream:
    """A bare repository served over smart HTTP by `git http-backend`,
    behind a credential check. See the module docstring."""

    def __init__(self, res, dir, credential, user="x-access-token",
                 header=None, prefix="", echo_credential_in_errors=False,
                 port=0):
        self.dir = dir
        self.credential = credential
        self.user = user
        self.auth_header = header or "Authorization"
        self.prefix = prefix
        if header is None:
            basic = base64.b64encode(("%s:%s" % (user, credential)).encode())
            self.expected = "Basic " + basic.decode()
        else:
            self.expected = prefix + credential
        self.echo_credential_in_errors = echo_credential_in_errors
        self.force_status = None
        # hold = threading.Event(): every authorised request waits until it
        # is set (held is set once one is waiting): a slow upstream.
        self.hold = None
        self.held = threading.Event()
        self.root = os.path.join(dir, "srv")
        self.home = os.path.join(dir, "home")
        os.makedirs(self.home, exist_ok=True)
        self.git_dir = os.path.join(self.root, REPO_NAME)
        run_git(["init", "-q", "--bare", "-b", "main", self.git_dir],
                env=git_env(self.home))
        run_git(["--git-dir", self.git_dir, "config", "http.receivepack",
                 "true"], env=git_env(self.home))
        self._log = []
        self._lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                                     _Handler)
        self.httpd.daemon_threads = True
        self.httpd.upstream = self
        self.port = self.httpd.server_address[1]
        t = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        t.start()
        res.push(self.stop, "git upstream %d" % self.port)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self):
        return "http://127.0.0.1:%d/%s" % (self.port, REPO_NAME)

    def auth_value(self):
        """The header value a client must send."""
        return self.expected

    def authorised(self, got):
        return got == self.expected

    def error_page(self, status, got):
        """An error page; in echo mode it carries what the client sent as
        its credential, raw and base64-decoded."""
        page = b"<html><body><h1>%d</h1>" % status
        if self.echo_credential_in_errors:
            page += b"<p>You sent: " + got.encode("latin-1", "replace")
            try:
                raw = base64.b64decode(got.split(" ", 1)[-1])
                page += b"<br>decoded: " + raw
            except ValueError:
                pass
            page += b"</p>"
        return page + b"</body></html>\n"

    def _record(self, rec):
        with self._lock:
            self._log.append(rec)

    def requests(self):
        """A copy of the request log (dicts, oldest first)."""
        with self._lock:
            return list(self._log)

    def reset_log(self):
        with self._lock:
            self._log = []

    def posts(self):
        return [r for r in self.requests() if r["method"] == "POST"]

    def refs(self):
        """{ref name: object id} read from the repository itself."""
        r = run_git(["--git-dir", self.git_dir, "for-each-ref",
                     "--format=%(objectname) %(refname)"],
                    env=git_env(self.home))
        out = {}
        for line in r.out.splitlines():
            oid, _, name = line.partition(" ")
            out[name] = oid
        return out

    def seed(self, branch="main"):
        """One commit on branch, pushed straight into the bare repository
        (no HTTP, so nothing in the request log); returns its id."""
        work = tempfile.mkdtemp(prefix="seed-", dir=self.dir)
        env = git_env(self.home)
        run_git(["init", "-q", "-b", branch, work], env=env)
        with open(os.path.join(work, "README"), "w") as f:
            f.write("seed %s\n" % H.rand())
        run_git(["add", "README"], cwd=work, env=env)
        run_git(["commit", "-q", "-m", "seed"], cwd=work, env=env)
        run_git(["push", "-q", self.git_dir, "HEAD:refs/heads/" + branch],
                cwd=work, env=env)
        return run_git(["rev-parse", "HEAD"], cwd=work, env=env).out.strip()


# ---------------------------------------------------------------- self-test


def _self_test():
    import unittest

    class SelfTest(unittest.TestCase):
        def setUp(self):
            self.res = H.Resources()
            self.tmp = self.res.path(tempfile.mkdtemp(prefix="git-up-"))
            self.cred = "ghp_" + H.rand(16) + "/+="
            self.up = GitUpstream(self.res, self.tmp, self.cred)
            self.env = git_env(os.path.join(self.tmp, "home"))

        def tearDown(self):
            self.res.close()

        def git(self, *args, auth=None, cwd=None, check=True):
            pre = []
            if auth is not None:
                pre = ["-c", "http.extraHeader=Authorization: " + auth]
            return run_git(pre + list(args), cwd=cwd, env=self.env,
                           check=check, timeout=120)

        def test_clone_push_fetch_with_the_credential(self):
            seed = self.up.seed()
            work = os.path.join(self.tmp, "work")
            auth = self.up.auth_value()
            self.git("clone", "-q", self.up.url, work, auth=auth)
            self.assertEqual(self.git("rev-parse", "HEAD", cwd=work).out
                             .strip(), seed)
            with open(os.path.join(work, "f"), "wb") as f:
                f.write(os.urandom(3 * 1024 * 1024))  # chunked, with probe
            self.git("add", "f", cwd=work)
            self.git("commit", "-q", "-m", "big", cwd=work)
            self.up.reset_log()
            self.git("push", "-q", "origin", "HEAD:refs/heads/agent/x",
                     auth=auth, cwd=work)
            head = self.git("rev-parse", "HEAD", cwd=work).out.strip()
            self.assertEqual(self.up.refs()["refs/heads/agent/x"], head)
            posts = self.up.posts()
            self.assertTrue(any(p["chunked"] for p in posts), posts)
            self.assertTrue(any(p["body_len"] == 4 for p in posts), posts)
            self.git("fetch", "-q", "origin", auth=auth, cwd=work)
            r = self.git("ls-remote", self.up.url, auth=auth)
            self.assertIn("refs/heads/agent/x", r.out)

        def test_no_or_wrong_credential_is_401(self):
            self.up.seed()
            for auth in (None, "Basic " + base64.b64encode(
                    b"x-access-token:wrong").decode(), "Bearer " + self.cred):
                self.up.reset_log()
                r = self.git("ls-remote", self.up.url, auth=auth, check=False)
                self.assertNotEqual(r.returncode, 0, r.err)
                self.assertEqual([q["status"] for q in self.up.requests()],
                                 [401], r.err)

        def test_header_mode_and_echo(self):
            up = GitUpstream(self.res, os.path.join(self.tmp, "h"), "tok-" +
                             H.rand(), header="X-Token", prefix="Key ",
                             echo_credential_in_errors=True)
            up.seed()
            r = self.git("-c", "http.extraHeader=X-Token: Key " +
                         up.credential, "ls-remote", up.url)
            self.assertIn("refs/heads/main", r.out)
            st, hdr, body = H.http_call("127.0.0.1", up.port, "GET",
                                        "/repo.git/info/refs?service="
                                        "git-upload-pack",
                                        headers={"X-Token": "Key nope"})
            self.assertEqual(st, 401)
            self.assertIn(b"Key nope", body)
            self.assertEqual(hdr.get("x-debug-authorization"), "Key nope")

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(SelfTest)
    r = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if r.wasSuccessful() and not r.skipped else 1)


def _serve(argv):
    """--serve DIR CREDENTIAL [PORT]: the README's demo upstream, one
    commit on main, until interrupted."""
    if len(argv) not in (2, 3):
        raise SystemExit("usage: git_upstream.py --serve DIR CREDENTIAL "
                         "[PORT (default 8703)]")
    res = H.Resources()
    try:
        up = GitUpstream(res, os.path.abspath(argv[0]), argv[1],
                         port=int(argv[2]) if len(argv) == 3 else 8703)
        up.seed()
        print("INTENTGATE_DEV_GIT_UPSTREAM=%s" % up.url, flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        res.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        _serve(sys.argv[2:])
    else:
        _self_test()
