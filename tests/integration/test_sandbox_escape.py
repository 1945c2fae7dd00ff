"""test_sandbox_escape.py - issue 11's sandbox escape suite.

A compromised agent holding only its agent token gets an `exec` action
whose registry entry hands it a full shell inside the sandbox
(`/bin/sh -c {script}`) and tries, from inside, everything a hostile agent
would: read every file of the executor and of the PDP by absolute path,
by relative path from its working directory, via /proc/self/root and
/proc/1/root; list /run, /var, /home, /root, /srv, /etc and every other
top-level directory of the host; read /proc/*/environ and walk
/proc/*/cwd; connect to host Unix sockets (named and abstract) and to the
PDP's and the executor's TCP ports; grep the visible filesystem for token
and key shapes; write outside /scratch and /tmp (also after remounting);
fill /tmp and the scratch dir past a cap; create a user namespace; read
/etc/shadow. All must fail, and nothing the agent receives may hold any
secret of the deployment (credential, secrets key, PDP tokens, admin and
auditor tokens, approver password, signing keys, planted files).

It runs where users run: a dev-mode deployment under the clone (like
scripts/dev.sh's .intentgate-dev), config deployments under the clone and
under /srv, and one whose secrets key and PDP token sit in
/run/credentials/<unit>/ (0400, as systemd's LoadCredential= makes them),
with 0400 files planted in /run/secrets/..., /etc/intentgate-..., /var,
/home, /root and /srv. Plus the host-side checks: the executor's secrets
are gone from /proc/<pid>/environ, registry binds that would show the
executor's files are refused at start, the startup self-check.

    INTENTGATE_BIN=.../intentgate INTENTGATE_EXECUTOR_BIN=.../intentgate-executor \\
        python3 tests/integration/test_sandbox_escape.py
"""
import hashlib
import json
import os
import pwd
import re
import shlex
import socket
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec_harness as H  # noqa: E402

SHELL_ACTION = {
    "handler": "exec",
    "params": {"script": {"type": "string", "required": True,
                          "max_length": 8192}},
    "exec": {"argv": ["/bin/sh", "-c", "{script}"], "allow": ["/bin/sh"],
             "timeout_ms": 20000, "max_output_bytes": 262144},
}

# Host top-level entries the sandbox may show (spec11: /usr, the /bin,
# /sbin, /lib* links or binds, a few /etc files, fresh /dev, /proc, /tmp,
# /scratch). Every other top-level entry of the host must be invisible.
TOP_ALLOWED = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
               "etc", "dev", "proc", "tmp", "scratch", "sys"}
# /etc entries a program may need (spec11's list, with ssl and friends for
# network: true, and the links some /usr/bin names go through).
ETC_ALLOWED = {"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd",
               "group", "nsswitch.conf", "hosts", "resolv.conf", "ssl",
               "ca-certificates", "alternatives", "localtime", "host.conf",
               "gai.conf", "protocols", "services"}
SENSITIVE_NAMES = ("secrets.key", "secrets.enc", "pdp.token", "dev.env",
                   "intentgate.conf", "executor.conf", "registry.json",
                   "signing.key", "pdp.env", "audit-hmac.key")
GREP_PATTERN = (r"igt_[A-Za-z0-9_-]{16,}|k4\.secret\.[A-Za-z0-9_-]{16,}|"
                r"igplant-[a-z0-9-]+|igcred-[A-Za-z0-9_-]+|"
                r"dev-refund-[0-9a-f]{8,}|INTENTGATE_[A-Z_]+=[^[:space:]]+|"
                r"pw-[0-9a-f]{16,}")

PROBE_PRELUDE = (
    "t() { l=$1; c=$2; shift 2; o=$(\"$@\" 2>&1); r=$?; "
    "printf '\\n@@B %s\\n%s\\n@@E %s %d\\n' \"$l\" "
    "\"$(printf '%s' \"$o\" | head -c \"$c\" | LC_ALL=C tr -c "
    "'\\11\\12\\40-\\176' '?')\" \"$l\" \"$r\"; }\n")


def q(s):
    return shlex.quote(s)


def sha256_file(p):
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---------------------------------------------------------------- plants


class SocketTrap:
    """A host listener the sandbox must not reach: records connections and
    greets with a marker."""

    def __init__(self, res, family, address, marker):
        self.marker = marker.encode()
        self.connections = 0
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        if family == socket.AF_UNIX and not address.startswith("\0"):
            os.chmod(address, 0o777)  # only the namespace may stop it
            res.path(address)
        self.sock.listen(16)
        self.stopped = False
        threading.Thread(target=self._run, daemon=True).start()
        res.push(self.stop, "socket trap %r" % (address,))

    def _run(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                c.sendall(self.marker + b"\n")
            except OSError:
                pass
            c.close()

    def stop(self):
        self.stopped = True
        self.sock.close()


class Plants:
    """0400 files with unique markers where secrets live on real hosts, and
    Unix sockets the sandbox must not reach."""

    def __init__(self, res, lay):
        self.tag = lay.tag
        self.files = {}  # label -> (path, marker)
        spots = {
            "run secret": "/run/secrets/%s/planted" % lay.tag,
            "etc intentgate": "/etc/intentgate-%s/planted.conf" % lay.tag,
            "var lib": "/var/lib/%s/planted" % lay.tag,
            "home": "/home/%s/planted" % lay.tag,
            "root home": "/root/.%s-planted" % lay.tag,
            "srv": "/srv/%s-planted/planted" % lay.tag,
            "layout root": os.path.join(lay.root, "planted"),
            "host /tmp": "/tmp/%s-planted" % lay.tag,
            "host /var/tmp": "/var/tmp/%s-planted" % lay.tag,
            "host /dev/shm": "/dev/shm/%s-planted" % lay.tag,
        }
        for label, path in spots.items():
            top = path  # the topmost ancestor we create goes at cleanup
            while not os.path.exists(os.path.dirname(top)):
                top = os.path.dirname(top)
            res.path(top)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            marker = "igplant-%s-%s" % (label.replace(" ", "-"), H.rand(8))
            H.write_file(path, marker + "\n", 0o400)
            self.files[label] = (path, marker)
        self.sock_markers = {}
        self.traps = {}
        for label, fam, addr in (
                ("unix socket in the data dir", socket.AF_UNIX,
                 os.path.join(lay.root, "ig.sock")),
                ("unix socket in /run", socket.AF_UNIX,
                 "/run/%s.sock" % lay.tag),
                ("abstract unix socket", socket.AF_UNIX, "\0" + lay.tag)):
            marker = "igplant-sock-%s" % H.rand(8)
            self.traps[label] = (SocketTrap(res, fam, addr, marker), addr)
            self.sock_markers[label] = marker

    def secrets(self):
        out = {"planted " + k: m for k, (_, m) in self.files.items()}
        out.update({"socket greeting " + k: m
                    for k, m in self.sock_markers.items()})
        return out


# ---------------------------------------------------------------- probes


class Probe:
    def __init__(self, label, cmd, cap=3000, expect="fail"):
        self.label, self.cmd, self.cap, self.expect = label, cmd, cap, expect

    def line(self):
        return "t %s %d %s\n" % (self.label, self.cap, self.cmd)


def parse_probes(text):
    out = {}
    for m in re.finditer(r"@@B (\S+)\n(.*?)\n@@E \1 (-?\d+)\n", text,
                         re.S):
        out[m.group(1)] = (int(m.group(3)), m.group(2))
    return out


class Target:
    """One deployment under attack: the PDP, the executor, the shell action,
    the secrets and paths that must stay out of reach."""

    def __init__(self, res, lay, pdp, ex, action, plants, extra_secrets=None):
        self.res, self.lay, self.pdp, self.ex = res, lay, pdp, ex
        self.action, self.plants = action, plants
        self.secrets = {}
        self.secrets.update(pdp.secrets)
        self.secrets.update(ex.secrets)
        self.secrets.update(plants.secrets())
        self.secrets.update(extra_secrets or {})
        self.paths = {}
        self.paths.update(pdp.sensitive_paths)
        self.paths.update(ex.sensitive_paths)
        for label, (p, _) in plants.files.items():
            self.paths["planted " + label] = p
        self.dirs = {}
        self.dirs.update(pdp.sensitive_dirs)
        self.dirs.update(ex.sensitive_dirs)
        self.dirs["layout root"] = lay.root
        self.digests = {}
        for label, p in self.paths.items():
            if os.path.isfile(p):
                self.digests[label] = sha256_file(p)
        self.transcript = []

    def shell(self, script):
        """Submit and execute one script; the whole reply."""
        b = self.pdp.submit_ok(self.action, "host", {"script": script})
        st, hdr, raw, out = self.ex.execute(b["intent"], b["grant"])
        self.transcript.append(raw)
        if st != 200 or not isinstance(out, dict) or \
                out.get("outcome") != "COMPLETED":
            raise AssertionError("the sandboxed shell did not run (a "
                                 "sandbox that cannot run fails this "
                                 "suite): %s %s" % (st, raw[:1500]))
        return raw, out

    def run(self, probes):
        """Run probes in as few scripts as fit the 8 KiB parameter; return
        label -> (rc, output) and the list of raw replies."""
        results, raws, chunk = {}, [], []

        def flush():
            if not chunk:
                return
            script = PROBE_PRELUDE + "".join(p.line() for p in chunk)
            raw, out = self.shell(script)
            raws.append((raw, out))
            got = parse_probes(out["result"].get("stdout", ""))
            for p in chunk:
                results[p.label] = got.get(p.label)
            chunk.clear()
        for p in probes:
            if len(PROBE_PRELUDE) + sum(len(x.line()) for x in chunk) + \
                    len(p.line()) > 3900:
                flush()
            chunk.append(p)
        flush()
        return results, raws

    def leaks(self, raws):
        """Secrets (any spelling) and file digests in what the agent got."""
        found = []
        for raw, out in raws:
            found += H.leaks_in_reply(raw, out, self.secrets)
            text = raw.decode("utf-8", "replace")
            for label, dg in self.digests.items():
                if dg in text:
                    found.append("sha256 of %s (the file was read)" % label)
        return sorted(set(found))


def evaluate(probes, results):
    """Violations: probes expected to fail that succeeded, and positive
    controls that did not work."""
    bad = []
    for p in probes:
        got = results.get(p.label)
        if got is None:
            bad.append("%s: did not report (script cut short?)" % p.label)
            continue
        rc, out = got
        if p.expect == "fail" and rc == 0:
            bad.append("%s succeeded: %s -> %r" % (p.label, p.cmd, out[:200]))
        elif p.expect == "ok" and rc != 0:
            bad.append("control %s failed (rc %d): %s -> %r"
                       % (p.label, rc, p.cmd, out[:200]))
        elif p.expect == "empty" and rc == 0 and out.strip():
            bad.append("%s shows entries: %s -> %r"
                       % (p.label, p.cmd, out[:300]))
    return bad


# ---------------------------------------------------------------- the suite


class SandboxEscape:
    """Mixin: the attacks, against cls.target (set up by a subclass)."""

    res = None
    target = None

    @classmethod
    def tearDownClass(cls):
        try:
            if cls.target is not None:
                rc = cls.target.ex.stop()
                cls.target.ex.check_log_clean(
                    list(cls.target.secrets.items()))
                if rc != 0:
                    raise AssertionError("executor exit %s: %s"
                                         % (rc, cls.target.ex.log()[-2000:]))
        finally:
            cls.res.close()

    def report(self, what, bad, leaks=()):
        print("  [%s] %s: %d probe violations, %d leaks"
              % (self.target.lay.kind, what, len(bad), len(leaks)))
        msgs = list(bad) + ["LEAK to the agent: " + x for x in leaks]
        if msgs:
            self.fail("%s (%s layout, %s):\n  %s"
                      % (what, self.target.lay.kind, self.target.lay.root,
                         "\n  ".join(msgs)))

    def test_read_every_file_of_ours_by_every_path(self):
        t = self.target
        work = t.ex.sensitive_dirs["work dir"]
        probes = []
        for i, (label, p) in enumerate(sorted(t.paths.items())):
            rel = "../" + os.path.relpath(p, work)
            for kind, cmd in (("stat", "stat -c %n " + q(p)),
                              ("cat", "cat " + q(p)),
                              ("sum", "sha256sum " + q(p)),
                              ("root", "cat " + q("/proc/self/root" + p)),
                              ("root1", "cat " + q("/proc/1/root" + p)),
                              ("rel", "cat " + q(rel))):
                probes.append(Probe("f%d.%s" % (i, kind), cmd))
        for i, (label, d) in enumerate(sorted(t.dirs.items())):
            probes.append(Probe("d%d.ls" % i, "ls -la " + q(d)))
            rel = "../" + os.path.relpath(d, work)
            # Only dots ("../..": an ancestor of the run dir) name some
            # directory in any sandbox; the absolute probe covers those.
            if set(rel.split("/")) - {"..", "."}:
                probes.append(Probe("d%d.rel" % i, "ls -la " + q(rel)))
        probes.append(Probe("shadow", "cat /etc/shadow"))
        results, raws = t.run(probes)
        names = dict(("f%d" % i, l) for i, l in enumerate(sorted(t.paths)))
        names.update(("d%d" % i, l) for i, l in enumerate(sorted(t.dirs)))
        bad = [names.get(b.split(".")[0], "") + " " + b
               for b in evaluate(probes, results)]
        self.report("reading our files", bad, t.leaks(raws))

    def test_list_host_directories_and_processes(self):
        t = self.target
        probes = []
        tops = sorted(n for n in os.listdir("/") if n not in TOP_ALLOWED)
        for i, n in enumerate(tops):
            probes.append(Probe("top%d" % i, "ls -A " + q("/" + n),
                                expect="empty"))
        probes.append(Probe("clone", "ls -A " + q(H.REPO), expect="empty"))
        probes += [
            Probe("etc", "ls -A /etc", expect="info"),
            Probe("passwd", "cat /etc/passwd", 20000, expect="info"),
            Probe("environ", "sh -c 'for f in /proc/[0-9]*/environ; do "
                  "tr \"\\0\" \"\\n\" < $f; done'", 20000, expect="info"),
            Probe("cmdline", "sh -c 'for f in /proc/[0-9]*/cmdline; do "
                  "tr \"\\0\" \" \" < $f; echo; done'", 20000, expect="info"),
            Probe("cwds", "sh -c 'for d in /proc/[0-9]*/cwd; do ls -la "
                  "$d/ $d/../ $d/../../ $d/../../../; done'", 20000,
                  expect="info"),
            Probe("proc1root", "ls -la /proc/1/root/", 4000, expect="info"),
            Probe("fds", "sh -c 'ls -la /proc/[0-9]*/fd/; for f in "
                  "/proc/[0-9]*/fd/*; do readlink $f; done'", 20000,
                  expect="info"),
            Probe("mountinfo", "cat /proc/self/mountinfo", 20000,
                  expect="info"),
        ]
        results, raws = t.run(probes)
        bad = evaluate(probes, results)
        rc, etc = results.get("etc") or (1, "")
        extra = sorted(set(etc.split()) - ETC_ALLOWED)
        if extra:
            bad.append("/etc shows %s (allowed: the few files programs "
                       "need)" % extra)
        rc, pw = results.get("passwd") or (1, "")
        with open("/etc/passwd") as f:
            if rc == 0 and pw.strip() == f.read().strip():
                bad.append("/etc/passwd is the host's, not a stub")
        rc, cmd = results.get("cmdline") or (1, "")
        for daemon in ("intentgate serve", "intentgate-executor serve"):
            if daemon in cmd:
                bad.append("host process %r visible in /proc" % daemon)
        rc, cwds = results.get("cwds") or (1, "")
        for n in SENSITIVE_NAMES:
            if n in cwds:
                bad.append("walking /proc/*/cwd shows %s" % n)
        rc, fds = results.get("fds") or (1, "")
        for n in SENSITIVE_NAMES + (t.lay.root, "socket:"):
            if n in fds:
                bad.append("an open descriptor in the sandbox points at %s: "
                           "%r" % (n, fds[:300]))
        self.report("listing the host", bad, t.leaks(raws))

    def test_sockets_and_ports(self):
        t = self.target
        py_unix = ("python3 -c 'import socket,sys;s=socket.socket("
                   "socket.AF_UNIX);s.settimeout(3);s.connect(sys.argv[1]."
                   "replace(\"@\",\"\\0\",1));print(s.recv(200))' ")
        py_tcp = ("python3 -c 'import socket,sys;s=socket.create_connection("
                  "(\"127.0.0.1\",int(sys.argv[1])),3);s.sendall(b\"GET "
                  "/healthz HTTP/1.0\\r\\n\\r\\n\");print(s.recv(300))' ")
        probes = [Probe("python", "python3 -c 'print(6*7)'", expect="ok")]
        labels = {}
        for i, (label, (trap, addr)) in enumerate(
                sorted(t.plants.traps.items())):
            a = "@" + addr[1:] if addr.startswith("\0") else addr
            probes.append(Probe("sock%d" % i, py_unix + q(a)))
            labels["sock%d" % i] = label
        probes.append(Probe("pdp_tcp", py_tcp + str(t.pdp.port)))
        probes.append(Probe("exec_tcp", py_tcp + str(t.ex.port)))
        probes.append(Probe("net", "python3 -c 'import socket;"
                            "socket.create_connection((\"1.1.1.1\",53),3)'"))
        results, raws = t.run(probes)
        bad = evaluate(probes, results)
        rc, out = results.get("python") or (1, "")
        if "42" not in out:
            bad.append("python3 does not run in the sandbox: the socket "
                       "probes prove nothing (%r)" % out[:200])
        for label, (trap, addr) in t.plants.traps.items():
            if trap.connections:
                bad.append("%s was reached %d times"
                           % (label, trap.connections))
        for lab in ("pdp_tcp", "exec_tcp"):
            rc, out = results.get(lab) or (1, "")
            if "HTTP/1." in out:
                bad.append("%s answered from inside: %r" % (lab, out[:200]))
        self.report("sockets", [labels.get(b.split(":")[0], "") + " " + b
                                for b in bad], t.leaks(raws))

    def test_grep_the_visible_filesystem_for_secrets(self):
        t = self.target
        probes = [
            Probe("grep_root", "timeout 15 grep -r -a -o -s -E %s / "
                  "--exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
                  "--exclude-dir=usr" % q(GREP_PATTERN), 60000,
                  expect="info"),
            Probe("grep_proc", "sh -c %s" % q(
                "grep -a -o -s -E %s /proc/[0-9]*/environ "
                "/proc/[0-9]*/cmdline; true" % q(GREP_PATTERN)), 20000,
                expect="info"),
        ]
        results, raws = t.run(probes)
        bad = evaluate(probes, results)
        self.report("grepping for secrets", bad, t.leaks(raws))

    def test_writes_limits_and_privileges(self):
        t = self.target
        tag = "ig-escape-" + t.lay.tag
        escapes = ["/" + tag, "/usr/" + tag, "/etc/" + tag,
                   os.path.join(t.ex.sensitive_dirs["work dir"], tag),
                   os.path.join(t.ex.dir, tag)]
        for p in escapes:
            t.res.path(p)
        probes = [
            Probe("w_root", "touch " + q("/" + tag)),
            Probe("w_usr", "touch " + q("/usr/" + tag)),
            Probe("w_etc", "touch " + q("/etc/" + tag)),
            Probe("w_dev", "touch " + q("/dev/" + tag)),
            Probe("w_proc", "mkdir " + q("/proc/" + tag)),
            Probe("w_up", "touch " + q("../" + tag)),
            Probe("w_abs_exec", "touch " + q(os.path.join(t.ex.dir, tag))),
            Probe("mount", "mount -t tmpfs none /tmp"),
            Probe("userns", "unshare -U true"),
            Probe("userns_root", "unshare -r true"),
            Probe("fill_tmp", "dd if=/dev/zero of=/tmp/fill bs=1M count=100"),
            Probe("fill_cwd", "dd if=/dev/zero of=./fill bs=1M count=100"),
            Probe("fill_shm", "dd if=/dev/zero of=/dev/shm/fill bs=1M "
                  "count=100"),
            Probe("clean", "rm -f /tmp/fill ./fill /dev/shm/fill",
                  expect="info"),
            Probe("scratch", "sh -c 'echo ok > /scratch/p && cat /scratch/p'",
                  expect="ok"),
            Probe("tmp", "sh -c 'echo ok > /tmp/p && cat /tmp/p'",
                  expect="ok"),
            Probe("pwd", "pwd", expect="info"),
            Probe("uid_map", "cat /proc/self/uid_map", expect="info"),
            Probe("gid_map", "cat /proc/self/gid_map", expect="info"),
            Probe("status", "grep -E '^(Uid|Gid|Cap[A-Za-z]*):' "
                  "/proc/self/status", expect="info"),
            Probe("env", "env", expect="info"),
        ]
        results, raws = t.run(probes)
        bad = evaluate(probes, results)
        # Alone and last: today it makes the host's / writable for the rest
        # of its script (and util-linux then writes /run/mount/utab).
        if not os.path.exists("/run/mount"):
            t.res.path("/run/mount")
        remount = [Probe("remount", "sh -c " + q(
            "mount -o remount,rw,bind / && touch /%s" % tag))]
        r2, raws2 = t.run(remount)
        bad += evaluate(remount, r2)
        raws += raws2
        for p in escapes:
            if os.path.lexists(p):
                bad.append("the sandbox created %s on the host" % p)
        rc, out = results.get("pwd") or (1, "")
        if out.strip() != "/scratch":
            bad.append("cwd is %r, not /scratch (the host layout shows)"
                       % out.strip())
        # (uid_map is relative to the parent namespace, which need not be
        # the host's: test_the_child_runs_as_nobody_on_the_host checks the
        # host's view.)
        rc, out = results.get("status") or (1, "")
        m = re.search(r"CapEff:\s*([0-9a-f]+)", out)
        if not m or int(m.group(1), 16) != 0:
            bad.append("effective capabilities in the sandbox: %r"
                       % out.strip())
        rc, out = results.get("env") or (1, "")
        if "INTENTGATE" in out:
            bad.append("the executor's environment leaks: %r" % out[:300])
        self.report("writes, limits and privileges", bad, t.leaks(raws))
        self.assertTrue(t.ex.healthy(), "the executor died")


    def test_the_child_runs_as_nobody_on_the_host(self):
        """The host's view of the sandboxed processes (bwrap and the
        command): every uid is nobody's, never the executor's."""
        t = self.target
        mark = "igasuser-" + H.rand()
        b = t.pdp.submit_ok(t.action, "host", {
            "script": "i=0; while [ $i -lt 150 ]; do sleep 0.1; "
                      "i=$((i+1)); done; : %s" % mark})
        done = {}

        def run():
            try:
                done["r"] = t.ex.execute(b["intent"], b["grant"])
            except OSError as e:
                done["r"] = e
        th = threading.Thread(target=run, daemon=True)
        th.start()

        def procs():
            found = {}
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        cmd = f.read()
                    if mark.encode() not in cmd:
                        continue
                    with open("/proc/%s/status" % pid) as f:
                        st = f.read()
                except OSError:
                    continue
                uids = re.search(r"^Uid:\s+(.*)$", st, re.M).group(1).split()
                gids = re.search(r"^Gid:\s+(.*)$", st, re.M).group(1).split()
                found[int(pid)] = (cmd.split(b"\0")[0].decode(), uids, gids)
            return found if any(v[0] == "/bin/sh" for v in found.values()) \
                else None
        try:
            found = H.wait_for(procs, 15, "the sandboxed shell on the host")
        finally:
            H.http_call(t.ex.host, t.ex.port, "POST",
                        "/v1/executions/%s/cancel" % b["intent_id"],
                        body={"grant": b["grant"]})
            th.join(30)
        nobody = pwd.getpwnam("nobody")
        bad = []
        for pid, (prog, uids, gids) in sorted(found.items()):
            print("  host view: pid %d %s uid %s gid %s"
                  % (pid, prog, uids, gids))
            if any(int(u) != nobody.pw_uid for u in uids) or \
                    any(int(g) != nobody.pw_gid for g in gids):
                bad.append("%s (pid %d) runs as uid %s gid %s on the host, "
                           "not nobody (%d:%d)" % (prog, pid, uids, gids,
                                                   nobody.pw_uid,
                                                   nobody.pw_gid))
        self.report("host uid of the sandbox", bad)

    def test_nothing_survives_the_action(self):
        """A detached, signal-ignoring child must die with the action."""
        t = self.target
        mark = "igsurvivor-" + H.rand()
        raw, out = t.shell(
            "trap '' HUP TERM; setsid sh -c \"trap '' HUP TERM; while :; do "
            "sleep 0.2; done; : %s\" </dev/null >/dev/null 2>&1 & "
            "echo started" % mark)

        def survivors():
            found = []
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        if mark.encode() in f.read():
                            found.append(int(pid))
                except OSError:
                    pass
            return found
        try:
            H.wait_for(lambda: not survivors(), 10,
                       "the action's detached child to be gone")
        finally:
            for pid in survivors():
                os.kill(pid, 9)

    def test_concurrent_runs_cannot_see_each_other(self):
        """Run A keeps a file in its scratch dir and waits; run B (another
        agent's, say) looks for it by every path."""
        t = self.target
        secret = "igplant-run-a-" + H.rand(8)
        t.secrets["run A's scratch file"] = secret
        b = t.pdp.submit_ok(t.action, "host", {
            "script": "echo %s > ./igrun-marker; echo %s > /tmp/igrun-marker;"
                      " echo ready; i=0; while [ $i -lt 300 ]; do sleep 0.1;"
                      " i=$((i+1)); done" % (secret, secret)})
        conn = H.http.client.HTTPConnection(t.ex.host, t.ex.port, timeout=60)
        try:
            conn.request("POST", "/v1/execute", body=json.dumps(
                {"intent": b["intent"], "grant": b["grant"]}).encode(),
                headers={"Content-Type": "application/json",
                         "Accept": "application/x-ndjson"})
            resp = conn.getresponse()
            if resp.status != 200:
                self.fail("run A: %s %r" % (resp.status, resp.read()[:500]))
            seen = []
            while True:
                line = resp.readline()
                seen.append(line)
                self.assertTrue(line, "run A ended before it was ready: %r"
                                % seen)
                if b"ready" in line:
                    break
            probes = [Probe("sib", "sh -c 'cat ../*/igrun-marker'"),
                      Probe("tmp", "cat /tmp/igrun-marker"),
                      Probe("find", "sh -c 'grep -r -s -l igplant-run-a / "
                            "--exclude-dir=proc --exclude-dir=sys "
                            "--exclude-dir=usr --exclude-dir=dev; "
                            "cat /proc/[0-9]*/cwd/igrun-marker "
                            "/proc/[0-9]*/root/tmp/igrun-marker'"),
                      Probe("work", "sh -c " + q(
                          "cat %s/*/igrun-marker" % t.ex.sensitive_dirs[
                              "work dir"]))]
            results, raws = t.run(probes)
            bad = evaluate(probes, results)
            st, _, craw = H.http_call(
                t.ex.host, t.ex.port, "POST",
                "/v1/executions/%s/cancel" % b["intent_id"],
                body={"grant": b["grant"]})
            resp.read()
        finally:
            conn.close()
        self.report("concurrent runs", bad, t.leaks(raws))


def shell_registry(action):
    return {"actions": {action: SHELL_ACTION}}


class ConfigDeployment(SandboxEscape):
    kind = None
    creds = False

    @classmethod
    def setUpClass(cls):
        cls.res = H.Resources()
        try:
            H.require_root()
            lay = H.Layout(cls.res, cls.kind)
            plants = Plants(cls.res, lay)
            pdp = H.start_custom_pdp(cls.res, lay.path("pdp"))
            creds = lay.credentials_dir() if cls.creds else None
            cred = "igcred-" + H.rand(16)
            ex = H.ConfigExecutor(cls.res, lay.path("executor"), pdp,
                                  shell_registry("sandbox.sh"),
                                  credentials={"api": cred},
                                  creds_dir=creds)
            cls.target = Target(cls.res, lay, pdp, ex, "sandbox.sh", plants)
            print("\n  deployment: %s (%s)%s" % (lay.root, cls.kind,
                                                 " + " + creds if creds
                                                 else ""))
        except BaseException:
            cls.res.close()
            raise


class UnderTheClone(ConfigDeployment, unittest.TestCase):
    kind = "clone"


class UnderSrv(ConfigDeployment, unittest.TestCase):
    kind = "srv"


class SystemdCredentials(ConfigDeployment, unittest.TestCase):
    kind = "clone"
    creds = True


class DevModeUnderTheClone(SandboxEscape, unittest.TestCase):
    """`intentgate serve --dev --data <clone>/.ig-test-R/data` and
    `intentgate-executor serve --dev`: first the demo registry's shell.exec
    as shipped, then the same deployment with a full-shell action added to
    its registry (an operator who adds one)."""

    @classmethod
    def setUpClass(cls):
        cls.res = H.Resources()
        try:
            H.require_root()
            lay = H.Layout(cls.res, "clone")
            plants = Plants(cls.res, lay)
            seen = []

            def refund_api(req):
                seen.append(req.headers.get("authorization", b""))
                return 201, [("Content-Type", "application/json")], b"{}"
            up = H.RawUpstream(cls.res, refund_api)
            pdp = H.start_dev_pdp(cls.res, lay.root)
            ex = H.DevExecutor(cls.res, pdp, up.url)
            b = pdp.submit_ok("payments.refund", "orders/1",
                              {"amount": 1, "currency": "EUR",
                               "order_id": "o-1"})
            st, _, raw, out = ex.execute(b["intent"], b["grant"])
            if st != 200 or not seen:
                raise AssertionError("dev refund did not reach the "
                                     "upstream: %s %r" % (st, raw[:300]))
            cred = seen[0].decode().split(" ", 1)[1]
            cls.target = Target(cls.res, lay, pdp, ex, "shell.sh", plants,
                                {"credential refund-api": cred})
            cls.demo = cls.run_demo(cls.target)
            # Now the operator adds a full shell to the dev registry.
            ex.stop()
            reg_path = os.path.join(ex.dir, "registry.json")
            with open(reg_path) as f:
                reg = json.load(f)
            reg["actions"]["shell.sh"] = SHELL_ACTION
            H.write_file(reg_path, json.dumps(reg, indent=1), 0o644)
            H.write_file(os.path.join(pdp.data, "policies",
                                      "zz_ig_allow.lua"),
                         H.ALLOW_POLICY % '"shell.sh"', 0o644)
            pdp.reload_policies()
            ex.start()
            print("\n  deployment: %s (dev mode)" % lay.root)
        except BaseException:
            cls.res.close()
            raise

    DEMO = [["pwd"], ["echo", "hello"], ["ls"], ["ls", "-la"],
            ["cat", "../../secrets.key"], ["cat", "../../pdp.token"],
            ["cat", "../../secrets.enc"], ["cat", "../../executor.conf"],
            ["cat", "../../../dev.env"], ["cat", "../../../keys/signing.key"],
            ["cat", "../../../intentgate.conf"],
            ["grep", "-r", "-a", "igt_", "../../.."],
            ["cat", "/etc/passwd"], ["cat", "/etc/shadow"],
            ["ls", "-la", "/"], ["ls", "-laR", "/run"], ["ls", "-la", ".."],
            ["grep", "-r", "-a", "-s", "igt_", "/run", "/srv", "/root"],
            ["head", "-c", "4000", "/proc/self/environ"],
            ["cat", "/proc/self/mountinfo"],
            ["tail", "-c", "4000", "/proc/1/environ"],
            ["wc", "-c", "../../../intentgate.db"],
            ["cat", "--", "../../secrets.key"],
            ["cat", ".//../../secrets.key"]]

    @classmethod
    def run_demo(cls, t):
        """The demo registry's shell.exec, as a new user would try it."""
        d = t.ex.dir
        extra = [["cat", p] for p in sorted(t.paths.values())]
        extra += [["cat", "/proc/self/root" + os.path.join(d, "secrets.key")],
                  ["grep", "-r", "-a", "igt_", t.pdp.data]]
        # A careless approver says yes to every escalation: the demo
        # registry and the sandbox must hold on their own.
        st, login, _ = t.pdp.call("POST", "/v1/approver/login", None, {
            "approver": t.pdp.env["INTENTGATE_APPROVER_ID"],
            "password": t.pdp.env["INTENTGATE_APPROVER_PASSWORD"]})
        if st != 200:
            raise AssertionError("approver login: %s %r" % (st, login))
        out = []
        for argv in cls.DEMO + extra:
            st, b, _ = t.pdp.submit("shell.exec", "host", {"argv": argv})
            how = "ALLOW"
            if b.get("decision") == "ESCALATE":
                st, v, _ = t.pdp.call(
                    "POST", "/v1/approvals/%s/votes" % b["approval"]["id"],
                    login["token"], {"vote": "approve",
                                     "intent_hash": b["intent_hash"]})
                st, rec, _ = t.pdp.call(
                    "GET", "/v1/intents/" + b["intent_id"],
                    t.pdp.env["INTENTGATE_AGENT_TOKEN"])
                if rec.get("state") == "ALLOWED" and "grant" in rec:
                    b = dict(b, grant=rec["grant"], intent=rec["intent"])
                    how = "approved"
            if "grant" not in b:
                out.append((argv, "PDP " + str(b.get("decision")), None, b))
                continue
            st, hdr, raw, rep = t.ex.execute(b["intent"], b["grant"])
            out.append((argv, "%s %s" % (how, st), raw, rep))
        return out

    def test_demo_registry_shell_exec(self):
        t = self.target
        bad, leaks = [], []
        lines = []
        for argv, st, raw, rep in self.demo:
            lines.append("    %-45s -> %s %s" % (
                json.dumps(argv)[:45], st,
                (rep or {}).get("outcome", (rep or {}).get("error", {})
                                .get("code", "")) if isinstance(rep, dict)
                else ""))
            if raw is None:
                continue
            found = H.leaks_in_reply(raw, rep, t.secrets)
            leaks += ["%s: %s" % (argv, f) for f in found]
            text = raw.decode("utf-8", "replace")
            for label, dg in t.digests.items():
                if dg in text:
                    leaks.append("%s: sha256 of %s" % (argv, label))
            if str(st).endswith("200") and isinstance(rep, dict) and \
                    rep.get("outcome") == "COMPLETED":
                res = rep.get("result", {})
                if argv == ["pwd"] and res.get("exit_code") == 0 and \
                        res.get("stdout") != "/scratch\n":
                    bad.append("pwd shows the host layout: %r"
                               % res.get("stdout"))
                if argv[0] == "cat" and res.get("exit_code") == 0 and \
                        argv[-1] != "/etc/passwd":
                    bad.append("%s succeeded: %r" % (argv, res.get(
                        "stdout", "")[:120]))
                if argv == ["echo", "hello"] and \
                        res.get("stdout") != "hello\n":
                    bad.append("echo hello does not work: %r" % res)
        print("  demo shell.exec:\n" + "\n".join(lines))
        self.report("demo registry shell.exec", bad, sorted(set(leaks)))

    def test_least_privilege_examples(self):
        """The example policies must not ALLOW programs that run arbitrary
        code, reading by path, or trust the agent's cwd."""
        t = self.target
        bad = []
        for argv in (["git", "-c", "core.pager=cat /etc/shadow", "log"],
                     ["git", "--upload-pack=touch /tmp/x", "clone", "x"],
                     ["make", "-f", "/dev/stdin"], ["make"],
                     ["npm", "exec", "--", "sh"], ["npm", "run", "x"],
                     ["env", "sh", "-c", "id"], ["xargs", "sh"],
                     ["cat", t.ex.sensitive_paths["secrets.key"]],
                     ["cat", "../../secrets.key"],
                     ["grep", "-r", "igt_", "/"],
                     ["head", "/proc/self/environ"]):
            st, b, _ = t.pdp.submit("shell.exec", "host", {"argv": argv})
            if b.get("decision") == "ALLOW":
                bad.append("shell.exec %s is ALLOWed" % json.dumps(argv))
        dev_env = t.pdp.sensitive_paths["dev.env"]
        for res, ctx in ((dev_env, {"cwd": t.pdp.data}),
                         ("/root/.bashrc", {"cwd": "/root"}),
                         ("dev.env", {"cwd": t.pdp.data})):
            for action in ("file.read", "file.write"):
                st, b, _ = t.pdp.submit(action, res, {}, context=ctx)
                if b.get("decision") == "ALLOW":
                    bad.append("%s %s with agent cwd %s is ALLOWed"
                               % (action, res, ctx["cwd"]))
        self.report("least-privilege examples", bad)


class DevModeRelativePaths(unittest.TestCase):
    """Beyond the issue: a user in the clone runs the executor as the docs
    say with a relative DIR (scripts/dev.sh's .intentgate-dev). Every exec
    action must still work - not fail after its grant was spent."""

    def test_exec_with_a_relative_pdp_env(self):
        res = H.Resources()
        try:
            lay = H.Layout(res, "clone")
            pdp = H.start_dev_pdp(res, lay.root)
            rel = os.path.relpath(os.path.join(pdp.data, "dev.env"), H.REPO)
            ex = H.DevExecutor(res, pdp, pdp_env=rel, cwd=H.REPO)
            b = pdp.submit_ok("shell.exec", "host", {"argv": ["echo", "hi"]})
            st, _, raw, out = ex.execute(b["intent"], b["grant"])
            print("  --pdp-env %s: %s" % (rel, raw[:200]))
            self.assertEqual(st, 200, raw)
            self.assertEqual(out["outcome"], "COMPLETED", raw)
            self.assertEqual(out["result"]["stdout"], "hi\n", raw)
            self.assertEqual(ex.stop(), 0)
        finally:
            res.close()


class ExecutorProcess(unittest.TestCase):
    """Host-side: what a process on the host (or a core dump) sees of the
    executor's secrets."""

    def test_secrets_from_the_environment_leave_proc_environ(self):
        res = H.Resources()
        try:
            lay = H.Layout(res, "clone")
            pdp = H.start_custom_pdp(res, lay.path("pdp"))
            ex = H.ConfigExecutor(res, lay.path("executor"), pdp,
                                  shell_registry("sandbox.sh"),
                                  token_in_env=True, key_in_env=True)
            with open("/proc/%d/environ" % ex.proc.pid, "rb") as f:
                environ = f.read()
            found = H.find_spellings(environ, ex.secrets)
            print("  /proc/<executor>/environ: %d bytes, %d secrets"
                  % (len(environ), len(found)))
            self.assertEqual(found, [], "the executor's secrets are still "
                             "readable in /proc/%d/environ" % ex.proc.pid)
            self.assertEqual(ex.stop(), 0)
        finally:
            res.close()


class BindsAndSelfCheck(unittest.TestCase):
    """Registry binds (spec11 "binds") and the startup self-check."""

    def setUp(self):
        self.res = H.Resources()
        self.lay = H.Layout(self.res, "srv")
        self.pdp = H.start_custom_pdp(self.res, self.lay.path("pdp"))

    def tearDown(self):
        self.res.close()

    def executor(self, binds=None, conf="", name="executor", start=True):
        action = json.loads(json.dumps(SHELL_ACTION))
        if binds is not None:
            action["exec"]["binds"] = binds
        return H.ConfigExecutor(self.res, self.lay.path(name), self.pdp,
                                {"actions": {"sandbox.sh": action}},
                                conf=conf, start=start)

    def refused_naming(self, ex, path):
        """Start must fail and the log name path (not an unknown key)."""
        try:
            ex.start()
        except H.NotImplementedYet:
            raise
        except AssertionError:
            log = ex.log()
            names = (path,) if isinstance(path, str) else path
            self.assertTrue(any(n in log for n in names),
                            "refused, but without naming %s: %s"
                            % (names, log[-800:]))
            return
        ex.stop()
        self.fail("the executor started although %s is visible to the "
                  "sandbox" % path)

    def test_harmless_binds_work_and_run_as_nobody(self):
        pub = self.lay.path("public")
        H.write_file(os.path.join(pub, "hello.txt"), "hello\n", 0o644)
        os.chmod(pub, 0o755)
        outbox = self.lay.path("outbox")
        os.chmod(outbox, 0o777)
        os.chmod(self.lay.root, 0o755)
        ex = self.executor([{"src": pub, "dest": "/data", "mode": "ro"},
                            {"src": outbox, "dest": "/outbox", "mode": "rw"}])
        b = self.pdp.submit_ok("sandbox.sh", "host", {
            "script": "cat /data/hello.txt; touch /data/x; echo ro=$?; "
                      "echo hi > /outbox/f; echo rw=$?"})
        st, _, raw, out = ex.execute(b["intent"], b["grant"])
        self.assertEqual(st, 200, raw)
        stdout = out["result"]["stdout"]
        self.assertIn("hello", stdout)
        self.assertRegex(stdout, r"ro=[1-9]")
        self.assertIn("rw=0", stdout)
        st = os.stat(os.path.join(outbox, "f"))
        self.assertNotEqual(st.st_uid, os.geteuid(),
                            "a file the child made is owned by the "
                            "executor's uid")
        self.assertEqual(st.st_uid, pwd.getpwnam("nobody").pw_uid)

    def bind_executor(self, name, src_of, conf=""):
        """An executor in its own dir d whose action binds src_of(d)."""
        d = self.lay.path(name)
        src = src_of(d)
        action = json.loads(json.dumps(SHELL_ACTION))
        action["exec"]["binds"] = [{"src": src, "dest": "/data",
                                    "mode": "ro"}]
        ex = H.ConfigExecutor(self.res, d, self.pdp,
                              {"actions": {"sandbox.sh": action}}, conf=conf,
                              start=False)
        return ex, src

    def test_a_bind_covering_our_files_is_refused(self):
        def link_to(d):
            link = d + "-link"
            os.symlink(d, link)
            self.res.path(link)
            return link
        cases = [("its own dir", lambda d: d),
                 ("its secrets key", lambda d: os.path.join(d, "secrets.key")),
                 ("its work dir", lambda d: os.path.join(d, "work")),
                 ("a parent of it", lambda d: self.lay.root),
                 ("/", lambda d: "/"),
                 ("a symlink to it", link_to),
                 ("the PDP dir, declared in protect",
                  lambda d: os.path.join(self.pdp.data, "keys"))]
        for i, (what, src_of) in enumerate(cases):
            conf = "protect = %s\n" % self.pdp.data if "PDP" in what else ""
            ex, src = self.bind_executor("bind-%d" % i, src_of, conf)
            print("  bind of %s (%s)" % (what, src))
            self.refused_naming(ex, (src, os.path.realpath(src)))

    def test_self_check_refuses_a_protected_path_the_sandbox_shows(self):
        # /usr is bound into every sandbox; declaring part of it protected
        # must make the startup probe see it and refuse, naming it.
        victim = "/usr/share"
        ex = self.executor(conf="protect = %s\n" % victim, start=False)
        self.refused_naming(ex, victim)

    def test_relative_or_odd_binds_are_refused(self):
        for i, bind in enumerate(([{"src": "relative/dir", "dest": "/data",
                                    "mode": "ro"}],
                                  [{"src": "/usr/share", "dest": "data",
                                    "mode": "ro"}],
                                  [{"src": "/usr/share", "dest": "/data",
                                    "mode": "rwx"}])):
            ex = self.executor(bind, name="odd-%d" % i, start=False)
            try:
                ex.start()
            except H.NotImplementedYet:
                raise
            except AssertionError as e:
                if "unknown key" in str(e):
                    raise H.NotImplementedYet(str(e))
                continue
            ex.stop()
            self.fail("bind %r was accepted" % bind)


if __name__ == "__main__":
    H.run_main("__main__")
