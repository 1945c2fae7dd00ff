"""test_git_attack.py - issue 15's git gateway attacked by a compromised
agent: the weaknesses found by attacking the built gateway (brief D), each
as a test that fails while the weakness is there.

The fixture is test_git_gateway.GatewayBase (clone layout): a PDP with the
example bundle's git.lua on the test clock, a real `git http-backend`
upstream behind a credential check, and the real executor with alias
"repo" (max_push_bytes 4 MiB) and alias "ff" (the same upstream,
fast_forward_only). The agent holds only its own agent token and the
grants the policies give it; it sends raw bytes to /git/ or runs git.

Every test here failed on the code it was written against (commit
ad4a6d2): each docstring explains the weakness as it was found; the
fixes that followed (the grant's signature checked before any body is
taken or the PDP asked, live git requests capped, a spent push grant
shows no refs, the fast-forward check's pack in a scratch repository
removed after it and the credential only in its fetch, no redirects for
that fetch, capabilities read as git reads them) keep them passing.
Tried and held (no test): pkt-line length case, 0003/delim/0004 packets,
trailing newlines, shallow lines anywhere, caps on later lines, push-cert
after shallow lines or after a command, push options with and without the
capability, bytes after the flush, chunked + Content-Length, gzip and
doubled Content-Encoding, pipelined requests on one keep-alive connection
(each judged alone; the second use of a grant refused), the probe then a
push on one connection, a forged grant naming another intent, refspec or
option injection through ref names in the fast-forward fetch.

    INTENTGATE_BIN=... INTENTGATE_EXECUTOR_BIN=... \\
        python3 tests/integration/test_git_attack.py
"""
import base64
import hashlib
import json
import os
import resource
import select
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec_harness as H  # noqa: E402
import git_upstream as G  # noqa: E402
import test_git_gateway as T  # noqa: E402

ZERO = T.ZERO


def tree_bytes(d):
    """Bytes of every regular file under d (0 when d is missing)."""
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def _obj_header(kind, size):
    """A pack object's type and size header."""
    out = bytearray()
    c = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def _delta_size(n):
    out = bytearray()
    while True:
        c, n = n & 0x7F, n >> 7
        out.append(c | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _copy(off, size):
    """A delta copy instruction (size < 2**24)."""
    cmd, out = 0x80, bytearray()
    for i in range(4):
        if (off >> (8 * i)) & 0xFF:
            cmd |= 1 << i
            out.append((off >> (8 * i)) & 0xFF)
    for i in range(3):
        if (size >> (8 * i)) & 0xFF:
            cmd |= 1 << (4 + i)
            out.append((size >> (8 * i)) & 0xFF)
    return bytes([cmd]) + bytes(out)


def _ofs(n):
    """An OFS_DELTA's distance back to its base."""
    out = [n & 0x7F]
    n >>= 7
    while n:
        n -= 1
        out.insert(0, 0x80 | (n & 0x7F))
        n >>= 7
    return bytes(out)


def delta_bomb():
    """A pack of a few kilobytes whose objects expand to 4 GiB: a 1 MiB
    blob of zeros, then three OFS_DELTA objects, each 16 copies of the one
    before (16 MiB, 256 MiB, 4 GiB)."""
    chunk = 8 << 20
    base = 1 << 20
    objs, offs = [], []
    off = 12
    data = _obj_header(3, base) + zlib.compress(b"\0" * base, 9)
    objs.append(data)
    offs.append(off)
    off += len(data)
    for _ in range(3):
        pieces = [(o, min(chunk, base - o)) for o in range(0, base, chunk)]
        delta = _delta_size(base) + _delta_size(16 * base) + b"".join(
            _copy(o, n) for _ in range(16) for o, n in pieces)
        data = (_obj_header(6, len(delta)) + _ofs(off - offs[-1]) +
                zlib.compress(delta, 9))
        objs.append(data)
        offs.append(off)
        off += len(data)
        base *= 16
    pack = b"PACK" + struct.pack(">II", 2, len(objs)) + b"".join(objs)
    return pack + hashlib.sha1(pack).digest()


class Attacks(T.GatewayBase, unittest.TestCase):
    KIND = "clone"

    def ff_cache(self):
        return os.path.join(self.ex.dir, "spool", "git-ff")

    def branch_upstream(self, what):
        """A new agent branch upstream (pushed through alias repo) and a
        scratch clone on it: (work dir, ref, its commit)."""
        wd = self.work()
        first = self.commit(wd)
        ref = self.agent_ref(what)
        b = self.push_grant([ref])
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        G.run_git(["remote", "add", "ff", self.gw("ff")], cwd=wd,
                  env=self.env)
        return wd, ref, first

    def test_ff_check_keeps_every_refused_pack_on_disk(self):
        """fast_forward_only indexes the pushed pack into a cache repository
        under the spool directory BEFORE the grant is spent, and never
        removes it. One unspent grant, replayed with forced pushes that
        are refused, writes max_push_bytes per try to disk forever: the
        spool (run records, outcomes) fills up."""
        wd, ref, first = self.branch_upstream("ffdisk")
        b = self.push_grant([ref], alias="ff")
        size, tries = 400 * 1024, 6
        before = None
        for i in range(tries):
            G.run_git(["reset", "-q", "--hard", self.seed], cwd=wd,
                      env=self.env)
            self.commit(wd, size=size)  # random bytes: incompressible
            r = self.git("push", "--force", "ff", "HEAD:" + ref,
                         grant=b["grant"], cwd=wd)
            self.rejected(r)
            self.assertIn("not a fast-forward", r.err)
            if before is None:
                before = tree_bytes(self.ff_cache())
        self.assertEqual(self.up.refs().get(ref), first)
        self.unspent(b)  # the same grant, every time
        grown = tree_bytes(self.ff_cache()) - before
        self.assertLess(
            grown, size,
            "the fast-forward cache grew by %d bytes over %d refused "
            "pushes of one unspent grant (%d bytes each): the pushed "
            "packs stay on the executor's disk" % (grown, tries - 1, size))

    def test_ff_check_survives_a_delta_bomb(self):
        """A pack of a few kilobytes that expands to 4 GiB, pushed as an
        update to a fast_forward_only repository with an unspent grant:
        the check's git index-pack runs under limits (2 GiB of address
        space, CPU seconds, file size) and fails there, before it takes
        the machine's memory; the push is refused, the grant unspent, and
        the executor keeps serving. Without the limits index-pack inflates
        the whole chain and the check fails later, at merge-base."""
        wd, ref, first = self.branch_upstream("bomb")
        b = self.push_grant([ref], alias="ff")
        pack = delta_bomb()
        self.assertLess(len(pack), 64 * 1024)
        body = T.pkt("%s %s %s\0report-status side-band-64k" % (
            first, "1" * 40, ref)) + b"0000" + pack
        st, _, out = self.raw("POST", "/git/ff/git-receive-pack",
                              grant=b["grant"], body=body,
                              ctype=T.RECEIVE_CT)
        self.assertEqual(st, 200, out)
        self.assertIn(b"intentgate: the fast-forward check cannot run", out)
        self.assertEqual(self.up.refs().get(ref), first)
        self.unspent(b)
        self.assertTrue(self.ex.healthy())
        steps = [e.get("step") for e in self.log_events()
                 if e.get("event") == "git.ff_check_failed"]
        self.assertEqual(steps[-1:], ["git index-pack"], steps)

    def test_side_band_asked_with_a_tab_hides_the_outcome(self):
        """git's receive-pack reads capabilities with parse_feature_request
        (any isspace() separates them, "name=value" also names the
        capability); the gateway's has_cap only splits on ' '. With
        "report-status<TAB>side-band-64k" the upstream answers side-band
        wrapped while the gateway reads the answer as plain: the push
        lands but the PDP never learns it completed."""
        ref = self.agent_ref("tab")
        b = self.push_grant([ref])
        body = T.push_body([(ZERO, self.seed, ref)],
                           caps="report-status\tside-band-64k "
                                "agent=git/2.39.5")
        self.control_lands(body, ref)
        st, hdrs, data = self.raw("POST", "/git/repo/git-receive-pack",
                                  grant=b["grant"], body=body,
                                  ctype=T.RECEIVE_CT)
        self.assertEqual(st, 200, data)
        self.assertEqual(self.up.refs().get(ref), self.seed)
        rec = self.pdp.wait_state(b["intent_id"],
                                  ("COMPLETED", "FAILED_BEFORE_DISPATCH",
                                   "UNKNOWN_AFTER_DISPATCH",
                                   "DEFINITELY_NOT_EXECUTED"), timeout=20)
        self.assertEqual(rec["state"], "COMPLETED",
                         "the push landed upstream but its outcome reads "
                         "%r" % rec)

    def test_a_spent_push_grant_still_lists_the_refs(self):
        """docs/git-gateway.md: "before it is used, a push grant also shows
        its holder the receive-pack advertisement". After the push the
        grant is spent, yet GET info/refs?service=git-receive-pack with it
        still relays the upstream's advertisement (every ref name and id)
        until the grant expires: the check is offline only."""
        wd = self.work()
        self.commit(wd)
        ref = self.agent_ref("spent")
        b = self.push_grant([ref])
        r = self.git("push", "gw", "HEAD:" + ref, grant=b["grant"], cwd=wd)
        self.assertEqual(r.returncode, 0, r.err)
        self.completed(b)
        st, _, data = self.raw(
            "GET", "/git/repo/info/refs?service=git-receive-pack",
            grant=b["grant"])
        self.assertNotIn(ref.encode(), data,
                         "a spent push grant still reads the advertisement")
        self.assertNotIn(b"refs/heads/main", data)

    def spooled_bytes(self):
        """Bytes in the executor's open unlinked files (its spooled
        request bodies and answers)."""
        total, fds = 0, "/proc/%d/fd" % self.ex.proc.pid
        for n in os.listdir(fds):
            try:
                if "(deleted)" in os.readlink(os.path.join(fds, n)) or \
                        "/#" in os.readlink(os.path.join(fds, n)):
                    total += os.stat(os.path.join(fds, n)).st_size
            except OSError:
                pass
        return total

    def test_a_body_is_spooled_before_any_grant_is_checked(self):
        """exec_git_begin only checks that the Authorization header holds
        token characters; the body then goes to the spool directory as it
        arrives, and the grant is verified only once the whole body is in.
        Anyone who can reach the executor, with no grant at all, holds
        max_push_bytes (default 100 MiB) of spool disk per connection, on
        up to max_connections_per_address (2048) connections: the spool
        that also holds the run records fills up and executions stop."""
        sent = 3 * 1024 * 1024
        s = socket.create_connection((self.ex.host, self.ex.port), 30)
        try:
            s.sendall(("POST /git/repo/git-receive-pack HTTP/1.1\r\n"
                       "Host: x\r\nAuthorization: Bearer not-a-grant\r\n"
                       "Content-Type: %s\r\nContent-Length: %d\r\n\r\n"
                       % (T.RECEIVE_CT, sent + 1024)).encode())
            try:
                s.sendall(b"x" * sent)  # the last 1024 bytes never come
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused before the body: what the fix does
            # Synchronise on the executor's answer (a refusal comes at
            # once; a spooling executor answers nothing until the body
            # ends), then look at the spool.
            select.select([s], [], [], 10)
            held = self.spooled_bytes()
        finally:
            s.close()
        self.assertLess(held, 64 * 1024,
                        "%d bytes of a request with no grant are held in "
                        "the executor's spool" % held)
        self.assertTrue(self.ex.healthy())

    def test_an_unsigned_token_tells_which_intents_exist(self):
        """check_grant asks the PDP for the intent an UNVERIFIED token
        names before any signature check: anyone who can reach the
        executor, with no grant, makes it call the PDP once per request
        and learns from the answer whether an intent id exists (another
        tenant's too): GRANT_MALFORMED for one that does, "no intent" for
        one that does not. The signature can be checked offline first."""
        b = self.push_grant([self.agent_ref("oracle")])
        gone = b["intent_id"][:-4] + ("0000" if not
                                      b["intent_id"].endswith("0000")
                                      else "1111")
        answers = []
        for iid in (b["intent_id"], gone):
            payload = json.dumps({"intent_id": iid}).encode() + b"\0" * 64
            tok = "v4.public." + base64.urlsafe_b64encode(
                payload).decode().rstrip("=")
            st, _, data = self.raw(
                "GET", "/git/repo/info/refs?service=git-receive-pack",
                grant=tok)
            answers.append((st, data.replace(iid.encode(), b"<id>")))
        self.assertEqual(answers[0], answers[1],
                         "a forged token's refusal says whether its intent "
                         "exists")

    def test_ff_check_hands_the_credential_to_index_pack(self):
        """The fast_forward_only check builds one environment, credential
        (GIT_CONFIG_VALUE_0 = the Authorization line) included, and runs
        every git with it: `git index-pack` on the agent's own pack (as
        long as the agent's bytes keep it busy, up to timeout_ms) and `git
        merge-base` too, though only the fetch talks to the upstream.
        /proc/<pid>/environ of those processes is open to anything running
        as the executor's user (dev mode runs the agent as that user);
        the credential should be in the fetch's environment only."""
        wd, ref, _ = self.branch_upstream("ffenv")
        b = self.push_grant([ref], alias="ff")
        seen = {}
        for _ in range(3):
            G.run_git(["reset", "-q", "--hard", self.seed], cwd=wd,
                      env=self.env)
            self.commit(wd, size=8 * 1024 * 1024)
            stop = threading.Event()
            t = threading.Thread(target=self.watch_git, args=(stop, seen))
            t.start()
            try:
                r = self.git("push", "--force", "ff", "HEAD:" + ref,
                             grant=b["grant"], cwd=wd)
            finally:
                stop.set()
                t.join(30)
            self.rejected(r)
            if "index-pack" in seen:
                break
        self.assertIn("index-pack", seen, "never saw the check's index-pack")
        self.assertEqual(
            [k for k, v in seen.items() if v and k != "fetch"], [],
            "git processes of the fast-forward check other than the fetch "
            "hold the repository credential in their environment: %r"
            % seen)

    def watch_git(self, stop, seen):
        """Until stop: {git subcommand: credential in its environment} of
        the executor's fast-forward git processes."""
        basic = self.secrets()["Basic header repo"].encode()
        while not stop.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        argv = f.read().split(b"\0")
                    if b"--git-dir" not in argv or \
                            b"git-ff" not in b" ".join(argv):
                        continue
                    with open("/proc/%s/environ" % pid, "rb") as f:
                        env = f.read()
                except OSError:
                    continue
                sub = argv[argv.index(b"--git-dir") + 2].decode()
                seen[sub] = seen.get(sub, False) or basic in env


class RedirectedFastForwardCheck(unittest.TestCase):
    """The gateway's own upstream call follows no redirect (and the
    existing suite checks a redirect never carries the credential), and
    `intentgate git` sets http.followRedirects=false for the agent's git.
    The fast_forward_only check's `git fetch`, though, runs with git's
    default http.followRedirects=initial and the credential in
    http.extraHeader: after a redirect of info/refs git moves its base URL
    to the new place and sends its next request there itself, header
    included. A push grant for an agent branch on a fast_forward_only
    alias whose upstream redirects is enough to send the credential to
    wherever the redirect points."""

    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        cls.res = H.Resources()
        try:
            lay = H.Layout(cls.res, "clone")
            cls.pdp = T.start_git_pdp(cls.res, lay.path("pdp"))
            cls.cred = "ghp_" + H.rand(12)
            cls.ref = "refs/heads/agent/r-" + H.rand(4)

            def sink(req):  # advertises the ref the check fetches
                adv = (T.pkt("# service=git-upload-pack\n") + b"0000" +
                       T.pkt("3" * 40 + " " + cls.ref +
                             "\0multi_ack_detailed side-band-64k "
                             "ofs-delta\n") + b"0000")
                if b"/info/refs" in req.target:
                    return (200, [("Content-Type", "application/x-git-"
                                   "upload-pack-advertisement")], adv)
                return (500, [], b"no\n")
            cls.sink = H.RawUpstream(cls.res, sink)
            cls.redirector = H.RawUpstream(cls.res, lambda req: (
                302, [("Location", cls.sink.url + req.target.decode())],
                b""))
            cls.ex = H.ConfigExecutor(
                cls.res, lay.path("executor"), cls.pdp,
                {"actions": {}, "git": {"ffr": {
                    "url": cls.redirector.url + "/repo.git",
                    "credential": "ffr-git",
                    "credential_user": "x-access-token",
                    "fast_forward_only": True}}},
                credentials={"ffr-git": cls.cred})
        except BaseException:
            cls.res.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.res.close()

    def test_ff_fetch_follows_a_redirect_with_the_credential(self):
        ref = self.ref
        st, b, _ = self.pdp.submit("git.push", "ffr", {"refs": [ref]})
        self.assertEqual((st, b.get("decision")), (201, "ALLOW"), b)
        body = T.push_body([("1" * 40, "2" * 40, ref)])
        st, _, data = T.raw_http(
            self.ex.host, self.ex.port, "POST", "/git/ffr/git-receive-pack",
            [("Authorization", "Bearer " + b["grant"]),
             ("Content-Type", T.RECEIVE_CT)], body)
        self.assertEqual(st, 200, data)
        self.assertIn(b"intentgate", data)  # refused: cannot be checked
        self.assertTrue(self.redirector.requests, "no fast-forward check?")
        basic = base64.b64encode(
            ("x-access-token:" + self.cred).encode()).decode()
        secrets = {"credential": self.cred, "Basic header": basic}
        with self.sink.lock:
            seen = list(self.sink.requests)
        for req in seen:
            self.assertEqual(H.find_spellings(req.head + req.body, secrets),
                             [], "the redirect target got the credential: "
                             "%r" % req.head[:400])


class LowFdExecutor(H.ConfigExecutor):
    """An executor whose hard open-files limit is 1024 (a container's
    default): it fits max_connections to it (1024 - IG_EXEC_FD_RESERVE)."""

    def _child(self):
        H._die_with_us()
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


class DescriptorsPerConnection(unittest.TestCase):
    """The executor sizes max_connections as open-files limit minus a
    reserve of 256, one descriptor per connection. A git push connection
    holds two (its socket and the spooled body, opened at the first body
    byte, before any grant is looked at): with no grant, about 500
    connections that each send part of a body exhaust 1024 descriptors
    while still under max_connections (768). accept() then fails: /healthz
    stops answering, and executions cannot open their run records."""

    @classmethod
    def setUpClass(cls):
        H.require_binaries()
        cls.res = H.Resources()
        try:
            lay = H.Layout(cls.res, "clone")
            cls.pdp = T.start_git_pdp(cls.res, lay.path("pdp"))
            cls.up = G.GitUpstream(cls.res, lay.path("up"), "ghp_x")
            cls.ex = LowFdExecutor(
                cls.res, lay.path("executor"), cls.pdp,
                {"actions": {}, "git": {"repo": {
                    "url": cls.up.url, "credential": "repo-git",
                    "credential_user": "x-access-token"}}},
                credentials={"repo-git": "ghp_x"})
        except BaseException:
            cls.res.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.res.close()

    def test_partial_push_bodies_exhaust_descriptors(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4096), hard))
        head = ("POST /git/repo/git-receive-pack HTTP/1.1\r\nHost: x\r\n"
                "Authorization: Bearer not-a-grant\r\nContent-Type: %s\r\n"
                "Content-Length: 1048576\r\n\r\n" % T.RECEIVE_CT).encode()
        socks = []
        try:
            for _ in range(700):  # under max_connections (768)
                s = socket.create_connection((self.ex.host, self.ex.port),
                                             10)
                try:
                    s.sendall(head + b"x" * 1024)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # refused before the body
                socks.append(s)
            # Synchronise on the answers: each refused request is answered
            # at once; a spooling executor answers none (then the deadline
            # ends the wait).
            sel, deadline = selectors.DefaultSelector(), time.monotonic() + 20
            for x in socks:
                sel.register(x, selectors.EVENT_READ)
            left = len(socks)
            while left and time.monotonic() < deadline:
                for key, _ in sel.select(deadline - time.monotonic()):
                    sel.unregister(key.fileobj)
                    left -= 1
            sel.close()
            fds = len(os.listdir("/proc/%d/fd" % self.ex.proc.pid))
            healthy = self.ex.healthy()
        finally:
            for s in socks:
                s.close()
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        self.assertLess(fds, 1024 - 128,
                        "%d connections (max_connections 768) hold %d of the "
                        "executor's 1024 descriptors: the reserve for run "
                        "records, spool files and the PDP is gone"
                        % (len(socks), fds))
        self.assertTrue(healthy, "/healthz stopped answering")


if __name__ == "__main__":
    H.run_main(__name__)
