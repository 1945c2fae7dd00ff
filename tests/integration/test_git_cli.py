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

    INTENTGATE_BIN=build/cli/intentgate python3 tests/integration/test_git_cli.py
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
                ("^refs/heads/main", "'^'"), ("main^:refs/heads/agent/p", "'^'"),
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


if __name__ == "__main__":
    run_tests()
