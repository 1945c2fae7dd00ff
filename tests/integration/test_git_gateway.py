"""test_git_gateway.py - issue 15's git gateway against real git, played by a
compromised agent.

A PDP (the example policy bundle's git.lua decides git.push and
git.fetch; an approver in "release" for tag pushes; on the test clock), a
real `git http-backend` upstream behind a credential check
(git_upstream.GitUpstream), and the real `intentgate-executor` whose
registry has a "git" section: alias "repo" (the upstream, credential
"repo-git"), "other" (a second upstream), "echo" and "echo-wrong" (an
upstream that echoes the credential it receives in its error pages and in
a header; "echo-wrong" holds a credential that upstream refuses, so its
401 pages carry that one). The agent gets grants by submitting intents,
then runs plain git with `-c http.extraHeader=Authorization: Bearer
<grant>` against http://<executor>/git/<alias>, or raw HTTP with
http.client. After each case the upstream's refs (`git for-each-ref`) and
request log say what reached it, and the PDP says whether the grant was
spent.

The hostile bodies are first sent straight to a control upstream (no
gateway) where they land: a refusal through the gateway then means the
gateway refused them, not that they were broken.

Deployments are laid out in the clone and under /srv (the executor's
secrets key and PDP token in /run/credentials/<tag>.service, as systemd
LoadCredential= makes them). A missing binary, git or root FAILS.

    INTENTGATE_BIN=... INTENTGATE_EXECUTOR_BIN=... \
        python3 tests/integration/test_git_gateway.py
"""
import base64
import gzip
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec_harness as H  # noqa: E402
import git_upstream as G  # noqa: E402
import harness  # noqa: E402

ZERO = "0" * 40
MAX_PUSH = 4 * 1024 * 1024  # max_push_bytes of alias "repo"
RECEIVE_CT = "application/x-git-receive-pack-request"
UPLOAD_CT = "application/x-git-upload-pack-request"
REJECTED = re.compile(r"! \[remote rejected\][^\n]*\(intentgate: ")
FAKE_GPG = """#!/bin/sh
# A stand-in for gpg: git only checks for SIG_CREATED on the status fd.
cat >/dev/null
printf '\\n[GNUPG:] SIG_CREATED D 22 8 00 1700000000 0123456789ABCDEF\\n' >&2
printf -- '-----BEGIN PGP SIGNATURE-----\\n\\niHUEABYIAB0WIQ==\\n=abcd\\n'
printf -- '-----END PGP SIGNATURE-----\\n'
"""


def pkt(data):
    if isinstance(data, str):
        data = data.encode()
    return b"%04x" % (len(data) + 4) + data


def empty_pack():
    head = b"PACK" + struct.pack(">II", 2, 0)
    return head + hashlib.sha1(head).digest()


def push_body(cmds, caps="report-status side-band-64k agent=git/2.39.5"):
    """A receive-pack request body: commands (old, new, ref), the first
    with caps after a NUL, a flush, an empty pack unless all delete."""
    out = b""
    for i, (old, new, ref) in enumerate(cmds):
        line = "%s %s %s" % (old, new, ref)
        out += pkt(line + ("\0" + caps if i == 0 else ""))
    out += b"0000"
    if any(new != ZERO for _, new, _ in cmds):
        out += empty_pack()
    return out


def raw_http(host, port, method, path, headers, body=b"", timeout=60):
    """http.client with a header list (duplicates and odd bytes kept):
    (status, [(name, value)], body bytes)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for k, v in headers:
            conn.putheader(k, v)
        if body or method == "POST":
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body if body else None)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, resp.getheaders(), data
    finally:
        conn.close()


def git_text(st, hdrs, body):
    return ("%d\n" % st + "".join("%s: %s\n" % kv for kv in hdrs)).encode() \
        + body


def start_git_pdp(res, d, **more):
    """A PDP routing git. to the executor, deciding with the example
    bundle's policies (git.lua among them)."""
    return H.start_custom_pdp(res, d, prefixes=("sandbox.", "git."),
                              allow_prefixes=("sandbox.",), bundle=True,
                              **more)


class GatewayBase:
    """Class fixture shared by the layouts; see the module docstring."""

    KIND = None

    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        H.require_root()
        if not shutil.which("git"):
            raise AssertionError("git is needed (Debian package git)")
        cls.res = H.Resources()
        try:
            cls._start()
        except BaseException:
            cls.res.close()
            raise

    @classmethod
    def _start(cls):
        lay = cls.lay = H.Layout(cls.res, cls.KIND)
        cls.pdp = start_git_pdp(
            cls.res, lay.path("pdp"),
            approver_groups="security,release", clock=True)
        cls.cred = "ghp_" + H.rand(12) + "/+=\"<"
        cls.cred2 = "glpat-" + H.rand(12)
        cls.cred_echo = "echo-" + H.rand(12) + "+/"
        cls.cred_wrong = "wrong-" + H.rand(12) + "=="
        cls.cred_redirect = "redir-" + H.rand(12)
        cls.up = G.GitUpstream(cls.res, lay.path("up"), cls.cred)
        cls.seed = cls.up.seed()
        cls.up2 = G.GitUpstream(cls.res, lay.path("up2"), cls.cred2)
        cls.up2.seed()
        cls.echo = G.GitUpstream(cls.res, lay.path("echo"), cls.cred_echo,
                                 echo_credential_in_errors=True)
        cls.echo.seed()
        cls.control = G.GitUpstream(cls.res, lay.path("control"), "ctl")
        # An upstream that redirects elsewhere, and where it points.
        cls.sink = H.RawUpstream(cls.res, lambda req: (404, [], b"no\n"))
        cls.redirector = H.RawUpstream(cls.res, lambda req: (
            302, [("Location", cls.sink.url + req.target.decode())], b""))
        G.run_git(["--git-dir", cls.up.git_dir, "push", "-q",
                   cls.control.git_dir, "refs/heads/main"],
                  env=G.git_env(cls.up.home))

        def entry(up, cred, **more):
            e = {"url": up.url, "credential": cred,
                 "credential_user": "x-access-token", "timeout_ms": 60000}
            e.update(more)
            return e
        registry = {"actions": {}, "git": {
            "repo": entry(cls.up, "repo-git", max_push_bytes=MAX_PUSH),
            "other": entry(cls.up2, "other-git"),
            "echo": entry(cls.echo, "echo-git"),
            "echo-wrong": entry(cls.echo, "echo-wrong-git"),
            "ff": entry(cls.up, "repo-git", fast_forward_only=True),
            "redirect": {"url": cls.redirector.url + "/repo.git",
                         "credential": "redirect-git",
                         "credential_user": "x-access-token"}}}
        creds_dir = lay.credentials_dir() if cls.KIND == "srv" else None
        cls.ex = H.ConfigExecutor(
            cls.res, lay.path("executor"), cls.pdp, registry,
            credentials={"repo-git": cls.cred, "other-git": cls.cred2,
                         "echo-git": cls.cred_echo,
                         "echo-wrong-git": cls.cred_wrong,
                         "redirect-git": cls.cred_redirect},
            creds_dir=creds_dir, env=harness.clock_env(cls.pdp.clock))
        cls.home = lay.path("agent-home")
        cls.env = G.git_env(cls.home)
        cls.seen = []  # (what, bytes) the agent received
        cls.intents = []  # every intent id the agent submitted

    @classmethod
    def tearDownClass(cls):
        try:
            if getattr(cls, "ex", None) is not None:
                rc = cls.ex.stop()
                cls.ex.check_log_clean()
                if rc != 0:
                    raise AssertionError("executor exit %s:\n%s"
                                         % (rc, cls.ex.log()[-3000:]))
        finally:
            cls.res.close()

    # ---- what the agent does ----

    @classmethod
    def secrets(cls):
        out = {}
        for name, user, v in (("repo", "x-access-token", cls.cred),
                              ("other", "x-access-token", cls.cred2),
                              ("echo", "x-access-token", cls.cred_echo),
                              ("echo-wrong", "x-access-token",
                               cls.cred_wrong),
                              ("redirect", "x-access-token",
                               cls.cred_redirect)):
            basic = base64.b64encode(("%s:%s" % (user, v)).encode()).decode()
            out["credential " + name] = v
            out["user:credential " + name] = "%s:%s" % (user, v)
            out["Basic header " + name] = "Basic " + basic
        return out

    def saw(self, what, data):
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        self.seen.append((what, data))

    def log_events(self):
        out = []
        for line in self.ex.log().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def gw(self, alias="repo"):
        return "%s/git/%s" % (self.ex.url(), alias)

    def git(self, *args, grant=None, cwd=None, check=False, env=None,
            timeout=180):
        pre = []
        if grant is not None:
            pre = ["-c", "http.extraHeader=Authorization: Bearer " + grant]
        r = G.run_git(pre + list(args), cwd=cwd, env=env or self.env,
                      check=check, timeout=timeout)
        self.saw("git " + " ".join(args[:3]), r.stdout + r.stderr)
        return r

    def work(self):
        """A scratch clone of the upstream (straight from its directory)
        with remote gw = the gateway."""
        d = os.path.join(self.lay.path("work"), H.rand())
        G.run_git(["clone", "-q", self.up.git_dir, d], env=self.env)
        G.run_git(["remote", "add", "gw", self.gw()], cwd=d, env=self.env)
        return d

    def commit(self, wd, size=64):
        with open(os.path.join(wd, "f-" + H.rand()), "wb") as f:
            f.write(os.urandom(size))
        G.run_git(["add", "-A"], cwd=wd, env=self.env)
        G.run_git(["commit", "-q", "-m", "c " + H.rand()], cwd=wd,
                  env=self.env)
        return G.run_git(["rev-parse", "HEAD"], cwd=wd,
                         env=self.env).out.strip()

    def submit(self, action, alias, params):
        st, body, _ = self.pdp.submit(action, alias, params)
        if isinstance(body, dict) and body.get("intent_id"):
            self.intents.append(body["intent_id"])
        self.saw("submit", json.dumps(body) if isinstance(body, dict)
                 else body)
        return st, body

    def grant(self, action, alias, params):
        st, body = self.submit(action, alias, params)
        self.assertEqual(st, 201, body)
        self.assertEqual(body.get("decision"), "ALLOW", body)
        return body

    def push_grant(self, refs=None, delete=None, alias="repo"):
        params = {}
        if refs is not None:
            params["refs"] = refs
        if delete is not None:
            params["delete"] = delete
        return self.grant("git.push", alias, params)

    def fetch_grant(self, alias="repo"):
        return self.grant("git.fetch", alias, {})

    def agent_ref(self, what="x"):
        return "refs/heads/agent/%s-%s" % (what, H.rand(4))

    # ---- what the tests check ----

    def unspent(self, b):
        self.assertEqual(self.pdp.state(b["intent_id"]), "ALLOWED",
                         "the grant was redeemed")

    def completed(self, b):
        self.pdp.wait_state(b["intent_id"], "COMPLETED")

    def no_post(self, up=None):
        posts = (up or self.up).posts()
        self.assertEqual(posts, [], "a request reached the upstream's POST")

    def rejected(self, r):
        """git pushed and the gateway refused every command the clean way."""
        text = r.out + r.err
        self.assertEqual(r.returncode, 1, text)
        self.assertRegex(text, REJECTED)
        self.assertNotRegex(text, r"\* \[new (branch|tag|reference)\]|"
                            r"[0-9a-f]{7,}\.\.\.?[0-9a-f]{7,}|\[deleted\]")

    def refused(self, r):
        """git failed and shows the gateway's reason."""
        text = r.out + r.err
        self.assertNotEqual(r.returncode, 0, text)
        self.assertIn("intentgate: ", text)

    def clean_error(self, st, hdrs, body):
        """A refusal: 4xx, or a git-protocol refusal naming intentgate
        (HTTP 200 with an ERR pkt-line, ng lines or a side-band 3 error)."""
        self.assertTrue(400 <= st < 500 or (st == 200 and (
            b"ERR " in body or b"ng " in body or
            re.search(rb"[0-9a-f]{4}\x03", body)) and b"intentgate" in body),
            "not a clean refusal: %d %r" % (st, body[:300]))
        self.assertIsNone(re.search(rb"[0-9a-f]{4}ok refs/", body), body)
        self.assertTrue(self.ex.healthy(), "the executor stopped serving")

    def upstream_never_saw_a_grant(self, up=None):
        """Every request that reached the upstream carried the configured
        credential and nothing of the agent's Authorization."""
        up = up or self.up
        for q in up.requests():
            self.assertEqual(q["headers"].get("authorization"),
                             up.auth_value(), q)
            auths = [v for k, v in q["header_list"]
                     if k.lower() == "authorization"]
            self.assertEqual(len(auths), 1, q)
            for k, v in q["header_list"]:
                self.assertNotIn("Bearer", v, q)
                self.assertNotIn("v4.public.", v, q)

    def raw(self, method, path, grant=None, body=b"", headers=(),
            ctype=None):
        h = []
        if grant is not None:
            h.append(("Authorization", "Bearer " + grant))
        if ctype:
            h.append(("Content-Type", ctype))
        h.extend(headers)
        st, hdrs, data = raw_http(self.ex.host, self.ex.port, method, path,
                                  h, body)
        self.saw("raw %s %s" % (method, path), git_text(st, hdrs, data))
        return st, hdrs, data

    def control_lands(self, body, ref, headers=()):
        """body, POSTed straight to the control upstream, lands ref there:
        the gateway's refusal of the same body is then its own doing."""
        h = [("Authorization", self.control.auth_value()),
             ("Content-Type", RECEIVE_CT)] + list(headers)
        st, _, out = raw_http("127.0.0.1", self.control.port, "POST",
                              "/repo.git/git-receive-pack", h, body)
        self.assertEqual(st, 200, out)
        self.assertIn(ref, self.control.refs(), out)
        G.run_git(["--git-dir", self.control.git_dir, "update-ref", "-d",
                   ref], env=self.env)


class CoreTests:
    """The cases run in every layout."""

    def test_push_to_an_agent_branch_lands_and_completes(self):
        wd = self.work()
        head = self.commit(wd)
        ref = self.agent_ref()
        b = self.push_grant([ref])
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.assertEqual(self.up.refs().get(ref), head)
        self.assertEqual(self.up.refs()["refs/heads/main"], self.seed)
        self.assertEqual(len(self.up.posts()), 1, self.up.requests())
        self.upstream_never_saw_a_grant()
        self.completed(b)

    def test_push_to_main_with_a_grant_for_an_agent_branch_is_rejected(self):
        wd = self.work()
        self.commit(wd)
        ref = self.agent_ref()
        b = self.push_grant([ref])
        before = self.up.refs()
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:refs/heads/main", grant=b["grant"],
                     cwd=wd)
        self.rejected(r)
        self.assertIn("main", r.err)
        self.assertEqual(self.up.refs(), before)
        self.no_post()
        self.unspent(b)
        # The PDP never saw the attempt: the executor's log is its record.
        H.wait_for(lambda: any(
            e.get("event") == "git.refused" and
            e.get("intent_id") == b["intent_id"] and
            e.get("ref") == "refs/heads/main"
            for e in self.log_events()), 10, "the git.refused log line")
        # Still good for what it names: the refusal did not burn it.
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.assertIn(ref, self.up.refs())
        self.completed(b)

    def test_clone_fetch_ls_remote_with_a_fetch_grant(self):
        b = self.fetch_grant()
        d = os.path.join(self.lay.path("work"), "clone-" + H.rand())
        self.up.reset_log()
        r = self.git("clone", "-q", self.gw(), d, grant=b["grant"])
        self.assertEqual(r.returncode, 0, r.err)
        self.assertEqual(G.run_git(["rev-parse", "HEAD"], cwd=d,
                                   env=self.env).out.strip(), self.seed)
        # The fetch redeemed the grant.
        self.assertNotEqual(self.pdp.state(b["intent_id"]), "ALLOWED")
        # The same grant carries the rest of the fetch session.
        r = self.git("fetch", "-q", "origin", grant=b["grant"], cwd=d)
        self.assertEqual(r.returncode, 0, r.err)
        r = self.git("ls-remote", self.gw(), grant=b["grant"])
        self.assertEqual(r.returncode, 0, r.err)
        self.assertIn("%s\trefs/heads/main" % self.seed, r.out)
        self.upstream_never_saw_a_grant()
        self.assertTrue(self.up.requests())

    def test_no_grant_gets_the_hint(self):
        wd = self.work()
        self.commit(wd)
        before = self.up.refs()
        self.up.reset_log()
        # An askpass that answers nothing: git retries without a user and
        # then prints the 401 body ("remote: intentgate: ...").
        env = dict(self.env, GIT_ASKPASS="/bin/true")
        r = self.git("push", "gw", "HEAD:" + self.agent_ref(), cwd=wd,
                     env=env)
        self.assertNotEqual(r.returncode, 0, r.err)
        self.assertIn("remote: intentgate: ", r.err)
        r = self.git("ls-remote", self.gw(), env=env)
        self.assertNotEqual(r.returncode, 0, r.err)
        self.assertIn("remote: intentgate: ", r.err)
        d = os.path.join(self.lay.path("work"), "noclone-" + H.rand())
        r = self.git("clone", "-q", self.gw(), d, env=env)
        self.assertNotEqual(r.returncode, 0, r.err)
        for service in ("git-receive-pack", "git-upload-pack"):
            st, hdrs, body = self.raw(
                "GET", "/git/repo/info/refs?service=" + service)
            self.assertEqual(st, 401, body)
            self.assertTrue(dict((k.lower(), v) for k, v in hdrs).get(
                "content-type", "").startswith("text/plain"), hdrs)
            self.assertTrue(body.startswith(b"intentgate: "), body)
        self.assertEqual(self.up.refs(), before)
        self.assertEqual(self.up.requests(), [])

    def test_zz_the_agent_never_saw_a_credential(self):
        """Runs last in its class: everything the agent got (git's output,
        raw replies, the PDP's answers and its records of the agent's
        intents), and the executor's log."""
        secrets = self.secrets()
        for iid in self.intents:
            st, rec, _ = self.pdp.call("GET", "/v1/intents/" + iid,
                                       self.pdp.env["INTENTGATE_AGENT_TOKEN"])
            self.saw("intent record", json.dumps(rec) if isinstance(
                rec, dict) else rec)
        self.assertTrue(self.seen)
        for what, data in self.seen:
            self.assertEqual(H.find_spellings(data, secrets), [], what)
        self.assertEqual(H.find_spellings(self.ex.log_bytes(), secrets), [],
                         "the executor's log")
        text = self.ex.log()
        self.assertNotIn("Sanitizer", text)
        self.assertNotIn("runtime error:", text)


class HostileTests:
    """The whole attacker's suite (run in the clone layout)."""

    def test_one_more_ref_than_granted_refuses_the_whole_push(self):
        wd = self.work()
        self.commit(wd)
        a, extra = self.agent_ref("a"), self.agent_ref("b")
        b = self.push_grant([a])
        before = self.up.refs()
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:" + a, "HEAD:" + extra,
                     grant=b["grant"], cwd=wd)
        self.rejected(r)
        self.assertEqual(len(REJECTED.findall(r.err)), 2, r.err)
        self.assertEqual(self.up.refs(), before)
        self.no_post()
        self.unspent(b)

    def test_a_prefix_or_an_extension_of_the_granted_ref_is_not_it(self):
        wd = self.work()
        self.commit(wd)
        base = self.agent_ref("p")
        for granted, pushed in ((base + "x", base), (base, base + "x"),
                                (base, base + "/y"),
                                (base, base.replace("agent", "Agent"))):
            b = self.push_grant([granted])
            before = self.up.refs()
            self.up.reset_log()
            r = self.git("push", "gw", "HEAD:" + pushed, grant=b["grant"],
                         cwd=wd)
            self.rejected(r)
            self.assertEqual(self.up.refs(), before)
            self.no_post()
            self.unspent(b)

    def test_delete_needs_a_delete_grant_and_then_lands(self):
        wd = self.work()
        head = self.commit(wd)
        ref = self.agent_ref("d")
        b = self.push_grant([ref])
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.assertEqual(self.up.refs().get(ref), head)
        # A grant to update the ref does not delete it.
        b = self.push_grant([ref])
        self.up.reset_log()
        r = self.git("push", "gw", "--delete", ref, grant=b["grant"], cwd=wd)
        self.rejected(r)
        self.assertEqual(self.up.refs().get(ref), head)
        self.no_post()
        self.unspent(b)
        # A delete grant for another ref does not either.
        b = self.push_grant(delete=[self.agent_ref("other")])
        r = self.git("push", "gw", ":" + ref, grant=b["grant"], cwd=wd)
        self.rejected(r)
        self.assertEqual(self.up.refs().get(ref), head)
        self.no_post()
        self.unspent(b)
        # A delete grant does not create or update.
        b = self.push_grant(delete=[ref])
        self.commit(wd)
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.rejected(r)
        self.assertEqual(self.up.refs().get(ref), head)
        self.no_post()
        self.unspent(b)
        # With one for it, the deletion lands.
        r = self.git("push", "gw", "--delete", ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.assertNotIn(ref, self.up.refs())
        self.completed(b)

    def test_tag_push_escalates_then_lands_once_approved(self):
        wd = self.work()
        head = self.commit(wd)
        tag = "v%s" % H.rand(3)
        G.run_git(["tag", tag], cwd=wd, env=self.env)
        st, body = self.submit("git.push", "repo",
                               {"refs": ["refs/tags/" + tag]})
        self.assertEqual(st, 201, body)
        self.assertEqual(body["decision"], "ESCALATE", body)
        self.assertFalse(body.get("grant"), body)
        st, login, _ = self.pdp.call(
            "POST", "/v1/approver/login", None,
            {"approver": "appr",
             "password": self.pdp.secrets["approver password"]})
        self.assertEqual(st, 200, login)
        st, res, _ = self.pdp.call(
            "POST", "/v1/approvals/%s/votes" % body["approval"]["id"],
            login["token"], {"vote": "approve",
                             "intent_hash": body["intent_hash"]})
        self.assertEqual(st, 200, res)
        rec = self.pdp.wait_state(body["intent_id"], "ALLOWED")
        st, mine, _ = self.pdp.call("GET", "/v1/intents/" + body["intent_id"],
                                    self.pdp.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual(st, 200, mine)
        grant = mine.get("grant") or rec.get("grant")
        self.assertTrue(grant, mine)
        self.up.reset_log()
        r = self.git("push", "gw", "refs/tags/" + tag, grant=grant, cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.assertEqual(self.up.refs().get("refs/tags/" + tag), head)
        self.completed(body)

    def test_signed_push_is_refused(self):
        gpg = H.write_file(os.path.join(self.lay.path("bin"), "fake-gpg"),
                           FAKE_GPG, 0o755)
        cfg = ["--git-dir", self.up.git_dir, "config"]
        G.run_git(cfg + ["receive.certNonceSeed", H.rand()], env=self.env)
        try:
            wd = self.work()
            self.commit(wd)
            ref = self.agent_ref("signed")
            b = self.push_grant([ref])
            before = self.up.refs()
            self.up.reset_log()
            r = self.git("-c", "gpg.program=" + gpg, "-c",
                         "user.signingkey=ABC", "push", "--signed", "gw",
                         "HEAD:" + ref, grant=b["grant"], cwd=wd)
            self.assertNotEqual(r.returncode, 0, r.out + r.err)
            self.assertEqual(self.up.refs(), before)
            self.no_post()
            self.unspent(b)
        finally:
            G.run_git(cfg + ["--unset", "receive.certNonceSeed"],
                      env=self.env)
        # Hand-made: a push-cert block around a command the grant names.
        ref = self.agent_ref("cert")
        caps = "report-status side-band-64k agent=git/2.39.5"
        body = pkt("push-cert\0%s\n" % caps) + b"".join(pkt(x) for x in (
            "certificate version 0.1\n",
            "pusher Agent <a@example.test> 1700000000 +0000\n",
            "pushee %s\n" % self.gw(), "nonce 1700000000-abc\n", "\n",
            "%s %s %s\n" % (ZERO, self.seed, ref),
            "-----BEGIN PGP SIGNATURE-----\n", "\n", "iHUEABYIAB0WIQ==\n",
            "-----END PGP SIGNATURE-----\n", "push-cert-end\n")) + \
            b"0000" + empty_pack()
        b = self.push_grant([ref])
        self.up.reset_log()
        st, hdrs, out = self.raw("POST", "/git/repo/git-receive-pack",
                                 b["grant"], body, ctype=RECEIVE_CT)
        self.clean_error(st, hdrs, out)
        self.assertNotIn(ref, self.up.refs())
        self.no_post()
        self.unspent(b)

    def test_the_same_push_grant_twice(self):
        wd = self.work()
        head = self.commit(wd)
        ref = self.agent_ref("twice")
        b = self.push_grant([ref])
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.completed(b)
        self.commit(wd)
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        # Refused at the advertisement already (a spent push grant shows
        # no refs): git prints the remote error and exits non-zero.
        self.refused(r)
        self.assertIn("intentgate: grant already used", r.err)
        self.assertEqual(self.up.refs().get(ref), head)
        self.no_post()
        # Straight to the push endpoint, past the advertisement: the
        # PDP refuses the second redemption, git's ng lines say so.
        st, _, out = self.raw("POST", "/git/repo/git-receive-pack",
                              b["grant"],
                              push_body([(head, self.seed, ref)]),
                              ctype=RECEIVE_CT)
        self.assertEqual(st, 200, out)
        self.assertIn(b"intentgate: grant already used", out)
        self.assertIn(b"ng " + ref.encode(), out)
        self.assertEqual(self.up.refs().get(ref), head)
        self.no_post()

    def test_a_grant_for_another_alias(self):
        wd = self.work()
        self.commit(wd)
        ref = self.agent_ref("alias")
        b = self.push_grant([ref], alias="other")
        before, before2 = self.up.refs(), self.up2.refs()
        self.up.reset_log()
        self.up2.reset_log()
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.refused(r)
        self.assertEqual(self.up.refs(), before)
        self.assertEqual(self.up2.refs(), before2)
        self.no_post()
        self.no_post(self.up2)
        self.unspent(b)
        f = self.fetch_grant(alias="other")
        r = self.git("ls-remote", self.gw(), grant=f["grant"])
        self.refused(r)
        self.unspent(f)

    def test_fetch_grant_cannot_push_and_push_grant_cannot_fetch(self):
        wd = self.work()
        self.commit(wd)
        ref = self.agent_ref("svc")
        f = self.fetch_grant()
        before = self.up.refs()
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:" + ref, grant=f["grant"], cwd=wd)
        self.refused(r)
        self.assertEqual(self.up.refs(), before)
        self.no_post()
        b = self.push_grant([ref])
        d = os.path.join(self.lay.path("work"), "pclone-" + H.rand())
        r = self.git("clone", "-q", self.gw(), d, grant=b["grant"])
        self.refused(r)
        r = self.git("ls-remote", self.gw(), grant=b["grant"])
        self.refused(r)
        body = pkt("want %s side-band-64k\n" % self.seed) + b"0000" + \
            pkt("done\n")
        st, hdrs, out = self.raw("POST", "/git/repo/git-upload-pack",
                                 b["grant"], body, ctype=UPLOAD_CT)
        self.clean_error(st, hdrs, out)
        self.assertNotIn(b"PACK", out)
        self.no_post()
        self.unspent(b)
        # ... and the push grant still pushes what it names.
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)

    def test_a_tampered_grant(self):
        wd = self.work()
        self.commit(wd)
        ref = self.agent_ref("tamper")
        b = self.push_grant([ref])
        parts = b["grant"].split(".")
        p = parts[2]
        i = len(p) - 20  # in the signature
        parts[2] = p[:i] + ("A" if p[i] != "A" else "B") + p[i + 1:]
        bad = ".".join(parts)
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:" + ref, grant=bad, cwd=wd)
        self.refused(r)
        self.assertIn("fatal: remote error: intentgate: ", r.err)
        self.assertNotIn(ref, self.up.refs())
        self.no_post()
        self.unspent(b)

    def test_a_push_over_1_mib_lands(self):
        wd = self.work()
        head = self.commit(wd, size=2 * 1024 * 1024)  # random: no delta
        ref = self.agent_ref("big")
        b = self.push_grant([ref])
        self.up.reset_log()
        trace = os.path.join(self.lay.path("work"), "trace-" + H.rand())
        env = dict(self.env, GIT_TRACE_CURL=trace,
                   GIT_TRACE_CURL_NO_DATA="1")
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd,
                     env=env)
        self.assertEqual(r.returncode, 0, r.err)
        with open(trace, "rb") as f:
            t = f.read()
        os.unlink(trace)
        # git sent its probe and then a chunked body through the gateway.
        self.assertIn(b"Transfer-Encoding: chunked", t)
        self.assertEqual(self.up.refs().get(ref), head)
        self.assertTrue(any(p["body_len"] > 1024 * 1024
                            for p in self.up.posts()), self.up.posts())
        self.upstream_never_saw_a_grant()
        self.completed(b)

    def test_a_push_over_max_push_bytes_is_refused(self):
        wd = self.work()
        self.commit(wd, size=MAX_PUSH + 512 * 1024)
        ref = self.agent_ref("huge")
        b = self.push_grant([ref])
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertNotEqual(r.returncode, 0, r.err)
        self.assertNotIn(ref, self.up.refs())
        self.no_post()
        self.unspent(b)
        self.assertTrue(self.ex.healthy())

    def test_100_refs_land_at_once(self):
        wd = self.work()
        head = self.commit(wd)
        base = self.agent_ref("m")
        refs = ["%s/%03d" % (base, i) for i in range(100)]
        b = self.push_grant(refs)
        r = self.git("push", "gw", *["HEAD:" + x for x in refs],
                     grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        got = self.up.refs()
        self.assertEqual([got.get(x) for x in refs], [head] * 100)
        self.completed(b)

    def test_1001_refs_are_refused_cleanly(self):
        wd = self.work()
        self.commit(wd)
        base = self.agent_ref("k")
        refs = ["%s/%04d" % (base, i) for i in range(1001)]
        st, body = self.submit("git.push", "repo", {"refs": refs})
        self.assertLess(st, 500, body)
        if st == 201 and body.get("decision") == "ALLOW":
            b = body  # the PDP let it through: the gateway must not
        else:
            b = self.push_grant(refs[:100])
        self.up.reset_log()
        r = self.git("push", "gw", *["HEAD:" + x for x in refs],
                     grant=b["grant"], cwd=wd)
        self.refused(r)
        got = self.up.refs()
        self.assertEqual([x for x in refs if x in got], [])
        self.no_post()
        self.unspent(b)
        self.assertTrue(self.ex.healthy())

    def test_expired_grant(self):
        harness.require_test_clock(self.ex.log(), "the executor")
        wd = self.work()
        self.commit(wd)
        ref = self.agent_ref("late")
        b = self.push_grant([ref])
        f = self.fetch_grant()
        s = self.fetch_grant()  # a fetch session, begun before the expiry
        r = self.git("ls-remote", self.gw(), grant=s["grant"])
        self.assertEqual(r.returncode, 0, r.err)
        self.pdp.advance(900)  # grant_ttl is 300 s
        r = self.git("ls-remote", self.gw(), grant=s["grant"])
        self.refused(r)
        self.assertNotIn(self.seed, r.out)
        self.up.reset_log()
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.refused(r)
        self.assertNotIn(ref, self.up.refs())
        self.no_post()
        r = self.git("ls-remote", self.gw(), grant=f["grant"])
        self.refused(r)
        self.assertNotIn(self.seed, r.out)

    def test_execute_endpoint_refuses_git_actions(self):
        ref = self.agent_ref("exec")
        b = self.push_grant([ref])
        self.up.reset_log()
        st, hdr, data, parsed = self.ex.execute(b["intent"], b["grant"])
        self.saw("execute", data)
        self.assertTrue(400 <= st < 500, (st, data))
        self.assertEqual(self.up.requests(), [])
        self.unspent(b)

    def test_the_probe_does_not_touch_the_grant(self):
        ref = self.agent_ref("probe")
        b = self.push_grant([ref])
        self.up.reset_log()
        st, hdrs, out = self.raw("POST", "/git/repo/git-receive-pack",
                                 b["grant"], b"0000", ctype=RECEIVE_CT)
        self.assertEqual(st, 200, out)
        self.assertNotIn(ref, self.up.refs())
        self.unspent(b)

    def test_one_grant_two_pushes_at_once_only_one_lands(self):
        a, b2 = self.agent_ref("race"), self.agent_ref("race")
        b = self.push_grant([a, b2])
        self.up.reset_log()
        bodies = [push_body([(ZERO, self.seed, a)]),
                  push_body([(ZERO, self.seed, b2)])]
        out = harness.parallel(2, lambda i: self.raw(
            "POST", "/git/repo/git-receive-pack", b["grant"], bodies[i],
            ctype=RECEIVE_CT))
        got = self.up.refs()
        landed = [x for x in (a, b2) if x in got]
        self.assertEqual(len(landed), 1, (landed, out))
        self.assertEqual(len(self.up.posts()), 1, self.up.posts())
        oks = [o for o in out if re.search(rb"ok refs/heads/agent/race", o[2])]
        self.assertEqual(len(oks), 1, out)
        self.completed(b)

    def test_fast_forward_only_refuses_a_forced_update(self):
        wd = self.work()
        first = self.commit(wd)
        ref = self.agent_ref("ff")
        b = self.push_grant([ref])
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        G.run_git(["remote", "add", "ff", self.gw("ff")], cwd=wd,
                  env=self.env)
        # A rewrite: a sibling of what the upstream has.
        G.run_git(["reset", "-q", "--hard", self.seed], cwd=wd, env=self.env)
        self.commit(wd)
        b = self.push_grant([ref], alias="ff")
        self.up.reset_log()
        r = self.git("push", "--force", "ff", "HEAD:" + ref,
                     grant=b["grant"], cwd=wd)
        self.rejected(r)
        self.assertIn("not a fast-forward", r.err)
        self.assertEqual(self.up.refs().get(ref), first)
        # The check fetches from the upstream (git-upload-pack); nothing
        # was pushed to it.
        self.assertEqual([x for x in self.up.posts()
                          if x["path"].endswith("/git-receive-pack")], [])
        self.unspent(b)
        # A fast-forward with the same grant lands.
        G.run_git(["reset", "-q", "--hard", first], cwd=wd, env=self.env)
        second = self.commit(wd)
        r = self.git("push", "ff", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.assertEqual(self.up.refs().get(ref), second)
        self.completed(b)

    def test_an_upstream_refusal_is_not_completed(self):
        hook = os.path.join(self.up2.git_dir, "hooks", "update")
        H.write_file(hook, '#!/bin/sh\ncase "$1" in *hooked*) '
                     'echo "no hooked refs" >&2; exit 1;; esac\nexit 0\n',
                     0o755)
        try:
            wd = self.work()
            head = self.commit(wd)
            ok, bad = self.agent_ref("fine"), self.agent_ref("hooked")
            b = self.push_grant([ok, bad], alias="other")
            G.run_git(["remote", "add", "other", self.gw("other")], cwd=wd,
                      env=self.env)
            r = self.git("push", "other", "HEAD:" + ok, "HEAD:" + bad,
                         grant=b["grant"], cwd=wd)
            self.assertEqual(r.returncode, 1, r.err)
            self.assertRegex(r.err, r"! \[remote rejected\][^\n]*hooked")
            got = self.up2.refs()
            self.assertEqual(got.get(ok), head)
            self.assertNotIn(bad, got)
            rec = self.pdp.wait_state(b["intent_id"], (
                "COMPLETED", "FAILED_BEFORE_DISPATCH",
                "UNKNOWN_AFTER_DISPATCH", "DEFINITELY_NOT_EXECUTED"))
            self.assertNotEqual(rec["state"], "COMPLETED", rec)
        finally:
            os.unlink(hook)

    def test_an_upstream_redirect_does_not_carry_the_credential(self):
        f = self.fetch_grant(alias="redirect")
        r = self.git("ls-remote", self.gw("redirect"), grant=f["grant"])
        self.assertNotEqual(r.returncode, 0, r.out)
        self.assertTrue(self.redirector.requests, "nothing reached it")
        with self.sink.lock:
            seen = list(self.sink.requests)
        for req in seen:
            self.assertEqual(H.find_spellings(req.head + req.body,
                                              self.secrets()), [],
                             req.head[:300])

    # ---- the credential never comes back ----

    def test_an_upstream_echoing_the_credential(self):
        self.echo.reset_log()
        f = self.fetch_grant(alias="echo")
        # 200s from it carry the credential in X-Debug-Authorization.
        # The executor may scrub them or refuse the reply: either way the
        # credential must not come back.
        self.raw("GET", "/git/echo/info/refs?service=git-upload-pack",
                 f["grant"])
        self.git("ls-remote", self.gw("echo"), grant=f["grant"])
        self.assertTrue(any(q["status"] == 200
                            for q in self.echo.requests()))
        # Its 500 pages carry it raw and base64-decoded.
        self.echo.force_status = 500
        try:
            g = self.fetch_grant(alias="echo")
            self.raw("GET", "/git/echo/info/refs?service=git-upload-pack",
                     g["grant"])
            r = self.git("ls-remote", self.gw("echo"), grant=g["grant"])
            self.assertNotEqual(r.returncode, 0)
            wd = self.work()
            self.commit(wd)
            ref = self.agent_ref("echo")
            p = self.push_grant([ref], alias="echo")
            G.run_git(["remote", "add", "echo", self.gw("echo")], cwd=wd,
                      env=self.env)
            r = self.git("push", "echo", "HEAD:" + ref, grant=p["grant"],
                         cwd=wd)
            self.assertNotEqual(r.returncode, 0)
            self.raw("GET", "/git/echo/info/refs?service=git-receive-pack",
                     p["grant"])
            self.raw("POST", "/git/echo/git-receive-pack", p["grant"],
                     push_body([(ZERO, self.seed, ref)]), ctype=RECEIVE_CT)
        finally:
            self.echo.force_status = None
        self.assertTrue(any(q["status"] == 500
                            for q in self.echo.requests()))
        # "echo-wrong" holds a credential the upstream refuses: its 401
        # pages echo that one.
        self.echo.reset_log()
        w = self.fetch_grant(alias="echo-wrong")
        self.raw("GET", "/git/echo-wrong/info/refs?service=git-upload-pack",
                 w["grant"])
        r = self.git("ls-remote", self.gw("echo-wrong"), grant=w["grant"])
        self.assertNotEqual(r.returncode, 0)
        self.assertTrue(any(q["status"] == 401
                            for q in self.echo.requests()))
        secrets = self.secrets()
        for what, data in self.seen:
            self.assertEqual(H.find_spellings(data, secrets), [], what)
        self.assertEqual(H.find_spellings(self.ex.log_bytes(), secrets), [],
                         "the executor's log")

    # ---- hostile raw HTTP ----

    def test_hostile_paths_and_queries(self):
        b = self.fetch_grant()
        self.up.reset_log()
        q = "/info/refs?service=git-upload-pack"
        for path in ("/git/../x" + q, "/git/repo/../../x" + q,
                     "/git/repo/../../", "/git/../git/repo" + q,
                     "/git/%2e%2e/repo" + q, "/git/repo%2f..%2fother" + q,
                     "/git/./repo" + q, "/git//repo" + q,
                     "/git/REPO" + q, "/git/repo%00" + q,
                     "/git/repo/info/refs",
                     "/git/repo/info/refs?service=git-upload-pack&x=1",
                     "/git/repo/info/refs?x=1&service=git-upload-pack",
                     "/git/repo/info/refs?service=git-upload-archive",
                     "/git/repo/info/refs?service=git-upload-pack"
                     "&service=git-receive-pack",
                     "/git/repo/HEAD", "/git/repo/objects/info/packs",
                     "/git/repo/git-upload-pack/../git-receive-pack",
                     "/git/" + "a" * 5000 + q):
            st, hdrs, out = self.raw("GET", path, b["grant"])
            self.assertTrue(400 <= st < 500 or (
                st == 200 and b"ERR intentgate" in out), (path, st, out[:200]))
            self.assertNotIn(b"refs/heads/main", out, path)
            self.assertTrue(self.ex.healthy(), path)
        for method, path in (
                ("POST", "/git/repo/info/refs?service=git-upload-pack"),
                ("GET", "/git/repo/git-upload-pack"),
                ("PUT", "/git/repo/git-upload-pack"),
                ("DELETE", "/git/repo/info/refs?service=git-upload-pack"),
                ("POST", "/git/repo/git-upload-pack?service=x"),
                ("POST", "/git/repo/git-upload-archive")):
            st, hdrs, out = self.raw(method, path, b["grant"], b"0000",
                                     ctype=UPLOAD_CT)
            self.assertTrue(400 <= st < 500 or st == 501 or (  # 501: method
                st == 200 and b"ERR intentgate" in out), (path, st, out[:200]))
            self.assertNotIn(b"refs/heads/main", out, path)
            self.assertTrue(self.ex.healthy(), path)
        self.assertEqual(self.up.requests(), [])
        self.unspent(b)

    def test_gzip_body_cannot_hide_commands(self):
        # Commands the grant does not name, gzipped: a gateway that reads
        # the compressed bytes as pkt-lines and forwards them would let
        # the upstream inflate and run them.
        ref = self.agent_ref("gz")
        evil = "refs/heads/evil-" + H.rand(4)
        body = gzip.compress(push_body([(ZERO, self.seed, evil)]))
        self.control_lands(body, evil, [("Content-Encoding", "gzip")])
        b = self.push_grant([ref])
        self.up.reset_log()
        st, hdrs, out = self.raw("POST", "/git/repo/git-receive-pack",
                                 b["grant"], body, ctype=RECEIVE_CT,
                                 headers=[("Content-Encoding", "gzip")])
        self.clean_error(st, hdrs, out)
        self.assertNotIn(evil, self.up.refs())
        self.no_post()
        self.unspent(b)

    def test_garbage_pkt_lengths(self):
        ref = self.agent_ref("pkt")
        b = self.push_grant([ref])
        good = push_body([(ZERO, self.seed, ref)])
        self.control_lands(good, ref)
        for body in (b"zzzz" + good[4:], b"0003" + good[4:],
                     b"ffff" + good[4:], b"0001", b"00", b"",
                     b"%04x" % (len(good) + 100) + good[4:],
                     good[:4].upper().replace(b"0", b"O") + good[4:],
                     b"-012" + good[4:], b"0x40" + good[4:],
                     good.replace(b"\0", b"\0\0", 1),
                     pkt("%s %s %s\n" % (ZERO, self.seed, ref)) +
                     pkt("%s %s refs/heads/main" % (ZERO, self.seed)) +
                     b"0000" + empty_pack()):
            self.up.reset_log()
            st, hdrs, out = self.raw("POST", "/git/repo/git-receive-pack",
                                     b["grant"], body, ctype=RECEIVE_CT)
            self.assertTrue(400 <= st < 500 or (st == 200 and (
                b"ERR " in out or b"ng " in out or b"unpack " in out or
                re.search(rb"[0-9a-f]{4}\x03intentgate: ", out))),
                (body[:40], st, out[:200]))
            self.assertEqual(self.up.refs()["refs/heads/main"], self.seed)
            self.assertEqual(self.up.posts(), [], body[:40])
            self.assertTrue(self.ex.healthy(), body[:40])
            self.unspent(b)
        self.assertNotIn(ref, self.up.refs())

    def test_body_over_max_push_bytes(self):
        ref = self.agent_ref("cap")
        b = self.push_grant([ref])
        head = push_body([(ZERO, self.seed, ref)])
        big = head + os.urandom(MAX_PUSH + 1 - len(head) + 1024)
        path = "/git/repo/git-receive-pack"
        self.up.reset_log()
        # With its Content-Length, then chunked (no length to check up
        # front). The executor may answer before it has read it all.
        for chunked in (False, True):
            st, out = self.stream_post(path, b["grant"], big, chunked)
            self.assertTrue(400 <= st < 500 or (
                st == 200 and b"intentgate" in out and b"ng " in out),
                (chunked, st, out[:200]))
            self.assertTrue(self.ex.healthy())
            self.no_post()
            self.unspent(b)
        # A Content-Length far over the cap is refused before the body.
        t0 = time.monotonic()
        st, out = self.stream_post(path, b["grant"], head, length=10 ** 12)
        self.assertTrue(400 <= st < 500, (st, out[:200]))
        self.assertLess(time.monotonic() - t0, 15)
        self.no_post()
        self.unspent(b)
        self.assertTrue(self.ex.healthy())
        self.assertNotIn(ref, self.up.refs())

    def stream_post(self, path, grant, body, chunked=False, length=None,
                    piece=65536):
        """POST body over a raw socket, giving up sending when the executor
        stops reading; (status, rest of the reply) once it answers."""
        s = socket.create_connection((self.ex.host, self.ex.port), 60)
        try:
            frame = ("Transfer-Encoding: chunked" if chunked else
                     "Content-Length: %d" % (len(body) if length is None
                                             else length))
            s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: "
                       "Bearer %s\r\nContent-Type: %s\r\n%s\r\n\r\n"
                       % (path, grant, RECEIVE_CT, frame)).encode())
            try:
                for i in range(0, len(body), piece):
                    part = body[i:i + piece]
                    s.sendall(b"%x\r\n" % len(part) + part + b"\r\n"
                              if chunked else part)
                if chunked:
                    s.sendall(b"0\r\n\r\n")
            except OSError:
                pass  # it stopped reading: its answer should be waiting
            return self.read_reply(s)
        finally:
            s.close()

    def read_reply(self, s):
        s.settimeout(30)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                d = s.recv(65536)
                if not d:
                    break
                data += d
        except OSError as e:
            self.fail("no answer, the connection broke (%s) after %r"
                      % (e, data[:200]))
        head, _, rest = data.partition(b"\r\n\r\n")
        self.saw("raw reply", data)
        m = re.match(rb"HTTP/1\.[01] (\d{3})", head)
        self.assertTrue(m, data[:200])
        return int(m.group(1)), rest

    def test_authorization_with_two_grants(self):
        ref = self.agent_ref("two")
        b1 = self.push_grant([ref])
        b2 = self.push_grant([ref])
        body = push_body([(ZERO, self.seed, ref)])
        path = "/git/repo/git-receive-pack"
        self.up.reset_log()
        for headers in (
                [("Authorization", "Bearer %s, Bearer %s"
                  % (b1["grant"], b2["grant"]))],
                [("Authorization", "Bearer %s Bearer %s"
                  % (b1["grant"], b2["grant"]))],
                [("Authorization", "Bearer " + b1["grant"]),
                 ("Authorization", "Bearer " + b2["grant"])],
                [("Authorization", "Bearer " + b1["grant"]),
                 ("Authorization", "Basic " + base64.b64encode(
                     b"x:y").decode())],
                [("Authorization", "bearer" + b1["grant"])]):
            st, hdrs, out = self.raw("POST", path, None, body,
                                     headers=headers, ctype=RECEIVE_CT)
            self.clean_error(st, hdrs, out)
        self.assertNotIn(ref, self.up.refs())
        self.no_post()
        self.unspent(b1)
        self.unspent(b2)

    def test_grant_with_a_nul(self):
        ref = self.agent_ref("nul")
        b = self.push_grant([ref])
        g = b["grant"]
        body = push_body([(ZERO, self.seed, ref)])
        self.up.reset_log()
        # libmicrohttpd ends a header value at a NUL: "g\0junk" reaches the
        # executor as g alone, so the bytes after the NUL cannot change
        # what it does (docs/git-gateway.md, "Limits to know"). A NUL that
        # cuts the grant short must be refused.
        for bad in (g[:20] + "\0" + g[20:], g[:-1] + "\0" + g[-1:],
                    "\0" + g):
            st, hdrs, out = self.raw("POST", "/git/repo/git-receive-pack",
                                     None, body, ctype=RECEIVE_CT, headers=[
                                         ("Authorization", "Bearer " + bad)])
            self.clean_error(st, hdrs, out)
            st, hdrs, out = self.raw(
                "GET", "/git/repo/info/refs?service=git-receive-pack",
                None, headers=[("Authorization", "Bearer " + bad)])
            self.clean_error(st, hdrs, out)
        self.assertNotIn(ref, self.up.refs())
        self.no_post()
        self.unspent(b)

    def test_unknown_alias_is_404(self):
        f = self.fetch_grant()
        st, hdrs, out = self.raw(
            "GET", "/git/nope/info/refs?service=git-upload-pack", f["grant"])
        self.assertEqual(st, 404, out)
        self.assertTrue(self.ex.healthy())

    def test_metrics_count_git_requests(self):
        text = self.ex.metrics()
        lines = [l for l in text.splitlines()
                 if l.startswith("intentgate_executor_git_requests_total{")]
        self.assertTrue(lines, text[-2000:])
        services = set(re.findall(r'service="([^"]+)"', "\n".join(lines)))
        self.assertTrue(services, lines)


class DevMode(unittest.TestCase):
    """`intentgate-executor serve --dev` with INTENTGATE_DEV_GIT_UPSTREAM:
    alias demo, Basic x-access-token with INTENTGATE_DEV_GIT_CREDENTIAL;
    the README walkthrough (a push lands, a push to main is rejected)."""

    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        cls.res = H.Resources()
        try:
            lay = cls.lay = H.Layout(cls.res, "clone")
            cls.cred = "ghs_" + H.rand(12) + "+/="
            cls.up = G.GitUpstream(cls.res, lay.path("up"), cls.cred)
            cls.seed = cls.up.seed()
            cls.pdp = H.start_dev_pdp(cls.res, lay.root)
            cls.ex = H.DevExecutor(cls.res, cls.pdp, env={
                "INTENTGATE_DEV_GIT_UPSTREAM": cls.up.url,
                "INTENTGATE_DEV_GIT_CREDENTIAL": cls.cred})
            cls.env = G.git_env(lay.path("home"))
        except BaseException:
            cls.res.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.res.close()

    def state(self, iid):
        st, rec, _ = self.pdp.call("GET", "/v1/intents/" + iid,
                                   self.pdp.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual(st, 200, rec)
        return rec["state"]

    def test_walkthrough(self):
        wd = os.path.join(self.lay.path("work"), H.rand())
        G.run_git(["clone", "-q", self.up.git_dir, wd], env=self.env)
        with open(os.path.join(wd, "f"), "w") as f:
            f.write(H.rand())
        G.run_git(["add", "f"], cwd=wd, env=self.env)
        G.run_git(["commit", "-q", "-m", "x"], cwd=wd, env=self.env)
        head = G.run_git(["rev-parse", "HEAD"], cwd=wd,
                         env=self.env).out.strip()
        url = self.ex.url() + "/git/demo"
        ref = "refs/heads/agent/demo-" + H.rand(4)
        st, b, _ = self.pdp.submit("git.push", "demo", {"refs": [ref]})
        self.assertEqual((st, b.get("decision")), (201, "ALLOW"), b)
        hdr = "http.extraHeader=Authorization: Bearer " + b["grant"]
        self.up.reset_log()
        r = G.run_git(["-c", hdr, "push", url, "HEAD:refs/heads/main"],
                      cwd=wd, env=self.env, check=False)
        self.assertEqual(r.returncode, 1, r.err)
        self.assertRegex(r.err, REJECTED)
        self.assertEqual(self.up.refs()["refs/heads/main"], self.seed)
        self.assertEqual(self.up.posts(), [])
        self.assertEqual(self.state(b["intent_id"]), "ALLOWED")
        r = G.run_git(["-c", hdr, "push", url, "HEAD:" + ref], cwd=wd,
                      env=self.env, check=False)
        self.assertEqual(r.returncode, 0, r.err)
        self.assertEqual(self.up.refs().get(ref), head)
        H.wait_for(lambda: self.state(b["intent_id"]) == "COMPLETED", 20,
                   "the outcome at the PDP")
        for q in self.up.requests():
            self.assertEqual(q["headers"].get("authorization"),
                             self.up.auth_value(), q)
        secrets = {"credential": self.cred,
                   "basic": "x-access-token:" + self.cred}
        self.assertEqual(H.find_spellings(self.ex.log_bytes(), secrets), [])
        self.assertEqual(H.find_spellings(r.stdout + r.stderr, secrets), [])

    def test_upstream_without_its_credential_refuses_to_start(self):
        """INTENTGATE_DEV_GIT_UPSTREAM without the credential: the dev
        executor stops at start with one line naming the variable, rather
        than serve an alias that cannot authenticate."""
        env = dict(os.environ, INTENTGATE_DEV_GIT_UPSTREAM=self.up.url)
        env.pop("INTENTGATE_DEV_GIT_CREDENTIAL", None)
        r = subprocess.run([H.EXEC_BIN, "serve", "--dev", "--pdp-env",
                            os.path.join(self.pdp.data, "dev.env"),
                            "--listen", "127.0.0.1:0"], env=env,
                           capture_output=True, timeout=60)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"set INTENTGATE_DEV_GIT_CREDENTIAL too", r.stderr)

    def test_cli_walkthrough(self):
        """The README's agent side: `intentgate git push` lands on an agent
        branch through the real gateway, and is blocked (exit 4, nothing
        sent) for main."""
        wd = os.path.join(self.lay.path("work"), H.rand())
        G.run_git(["clone", "-q", self.up.git_dir, wd], env=self.env)
        url = self.ex.url() + "/git/demo"
        G.run_git(["remote", "add", "gw", url], cwd=wd, env=self.env)
        with open(os.path.join(wd, "g"), "w") as f:
            f.write(H.rand())
        G.run_git(["add", "g"], cwd=wd, env=self.env)
        G.run_git(["commit", "-q", "-m", "y"], cwd=wd, env=self.env)
        head = G.run_git(["rev-parse", "HEAD"], cwd=wd,
                         env=self.env).out.strip()
        env = dict(self.env)
        env["INTENTGATE_URL"] = self.pdp.env["INTENTGATE_URL"]
        env["INTENTGATE_TOKEN"] = self.pdp.env["INTENTGATE_AGENT_TOKEN"]
        ref = "refs/heads/agent/cli-" + H.rand(4)
        r = subprocess.run([H.IG_BIN, "git", "push", "gw", "HEAD:" + ref],
                           cwd=wd, env=env, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.up.refs().get(ref), head)
        self.up.reset_log()
        r = subprocess.run([H.IG_BIN, "git", "push", "gw",
                            "HEAD:refs/heads/main"], cwd=wd, env=env,
                           capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(b"PROTECTED_BRANCH", r.stderr)
        self.assertEqual(self.up.requests(), [])
        self.assertEqual(self.up.refs()["refs/heads/main"], self.seed)


class Concurrency(unittest.TestCase):
    """A compromised agent holding one fetch grant opens request after
    request against a slow upstream: past the executor's max_concurrent
    git requests it gets 503 at once, and executions keep their workers."""

    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        cls.res = H.Resources()
        try:
            lay = H.Layout(cls.res, "clone")
            cls.pdp = start_git_pdp(cls.res, lay.path("pdp"))
            cls.cred = "ghp_" + H.rand(12)
            cls.up = G.GitUpstream(cls.res, lay.path("up"), cls.cred)
            cls.up.seed()
            cls.ex = H.ConfigExecutor(
                cls.res, lay.path("executor"), cls.pdp,
                {"actions": {}, "git": {"repo": {
                    "url": cls.up.url, "credential": "repo-git",
                    "credential_user": "x-access-token"}}},
                credentials={"repo-git": cls.cred},
                conf="max_concurrent = 1\n")
        except BaseException:
            cls.res.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.res.close()

    def get_refs(self, grant, out):
        port = int(self.ex.url().rsplit(":", 1)[1])
        out.append(H.http_call("127.0.0.1", port, "GET",
                               "/git/repo/info/refs?service=git-upload-pack",
                               token=grant))

    def test_git_requests_past_the_cap_are_503(self):
        st, b, _ = self.pdp.submit("git.fetch", "repo", {})
        self.assertEqual((st, b.get("decision")), (201, "ALLOW"), b)
        self.up.hold = threading.Event()
        first = []
        t = threading.Thread(target=self.get_refs, args=(b["grant"], first))
        t.start()
        try:
            self.assertTrue(self.up.held.wait(30), "the upstream saw nothing")
            second = []
            self.get_refs(b["grant"], second)
            st, _, body = second[0]
            self.assertEqual(st, 503, body)
            self.assertIn(b"too many git requests", body)
            self.assertTrue(self.ex.healthy())
        finally:
            self.up.hold.set()
            t.join(60)
        self.up.hold = None
        self.assertEqual(first[0][0], 200, first[0][2][:200])
        third = []
        self.get_refs(b["grant"], third)  # the fetch session, free again
        self.assertEqual(third[0][0], 200, third[0][2][:200])


class CloneLayout(GatewayBase, CoreTests, HostileTests, unittest.TestCase):
    KIND = "clone"


class SrvLayout(GatewayBase, CoreTests, unittest.TestCase):
    KIND = "srv"


if __name__ == "__main__":
    H.run_main(__name__)
