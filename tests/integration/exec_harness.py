"""exec_harness.py - shared pieces of the executor's adversarial suites
(issue 11): deployments laid out where users put them (under the clone,
under /srv, credentials in /run/credentials/...), a PDP with a config we
write, the real `intentgate-executor`, raw loopback upstreams that record
request bytes, and a cleanup stack that always runs. Standard library only.

Every suite FAILS (never skips) when a prerequisite is missing: the
binaries, bubblewrap, root. A key the executor does not know yet makes it
refuse to start; that surfaces as NotImplementedYet (an AssertionError)
naming the key.

    res = Resources()                       # cleanup stack (also atexit)
    lay = Layout(res, "clone")              # <repo>/.ig-test-<rand>/
    pdp = CustomPDP(res, lay.path("pdp"), actions="sandbox., api.")
    ex = ConfigExecutor(res, lay.path("executor"), pdp, registry={...},
                        credentials={"api": "..."})
    b = pdp.submit("api.echo", "r", {...}); ex.execute(b["intent"], b["grant"])
    res.close()
"""
import atexit
import base64
import binascii
import hashlib
import html
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
IG_BIN = os.environ.get("INTENTGATE_BIN", "")
EXEC_BIN = os.environ.get("INTENTGATE_EXECUTOR_BIN", "")


class NotImplementedYet(AssertionError):
    """The executor refused a config or registry key the spec adds."""


def require_binaries():
    for var, path in (("INTENTGATE_BIN", IG_BIN),
                      ("INTENTGATE_EXECUTOR_BIN", EXEC_BIN)):
        if not path or not os.access(path, os.X_OK):
            raise AssertionError("%s must name the built binary (got %r)"
                                 % (var, path))
    harness.BIN = IG_BIN


def require_root():
    if os.geteuid() != 0:
        raise AssertionError("these suites plant files in /srv, /run, /etc "
                             "and /root: run them as root (CI does)")


def rand(n=6):
    return os.urandom(n).hex()


def wait_for(pred, timeout=20.0, what="condition", interval=0.02):
    """Poll pred() until it returns a truthy value; fail after timeout."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = pred()
        except OSError as e:  # a server not yet up, a socket refused
            last = e
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def _die_with_us():
    """In a child before exec: SIGTERM when this test process dies (also
    when a ctest timeout kills it), so no daemon outlives a run."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


# ---------------------------------------------------------------- cleanup


class Resources:
    """A stack of cleanups: processes, dirs, files, servers. close() runs
    them all (newest first), also at exit, and reports what failed."""

    live = []  # every instance, for the SIGTERM handler

    def __init__(self):
        self.stack = []
        self.closed = False
        atexit.register(self.close)
        Resources.live.append(self)

    def push(self, fn, what):
        self.stack.append((fn, what))
        return fn

    def process(self, proc, what):
        def stop():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for f in (proc.stdout, proc.stderr):
                if f:
                    f.close()
        self.push(stop, what)

    def path(self, p):
        def rm():
            if os.path.isdir(p) and not os.path.islink(p):
                _make_writable(p)
                shutil.rmtree(p, ignore_errors=True)
            elif os.path.lexists(p):
                os.unlink(p)
        self.push(rm, "remove " + p)
        return p

    def close(self):
        if self.closed:
            return
        self.closed = True
        errors = []
        while self.stack:
            fn, what = self.stack.pop()
            try:
                fn()
            except Exception as e:  # keep cleaning
                errors.append("%s: %s" % (what, e))
        if errors:
            print("cleanup problems:\n  " + "\n  ".join(errors),
                  file=sys.stderr)


def _make_writable(top):
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            if not os.path.islink(p):
                try:
                    os.chmod(p, 0o700)
                except OSError:
                    pass


# ---------------------------------------------------------------- layouts


class Layout:
    """Where a deployment lives: "clone" (a dir inside the repository, like
    scripts/dev.sh's .intentgate-dev), "srv" (/srv/ig-test-R), or "tmp"."""

    def __init__(self, res, kind):
        self.kind = kind
        self.tag = "ig-test-" + rand()
        if kind == "clone":
            self.root = os.path.join(REPO, "." + self.tag)
        elif kind == "srv":
            self.root = os.path.join("/srv", self.tag)
        elif kind == "tmp":
            self.root = os.path.join("/tmp", self.tag)
        else:
            raise ValueError(kind)
        top = self.root  # the topmost dir we create goes at cleanup
        while not os.path.exists(os.path.dirname(top)):
            top = os.path.dirname(top)
        res.path(top)
        os.makedirs(self.root, mode=0o700)
        self.res = res

    def path(self, *parts):
        p = os.path.join(self.root, *parts)
        os.makedirs(p, mode=0o700, exist_ok=True)
        return p

    def credentials_dir(self):
        """/run/credentials/<tag>.service, as systemd LoadCredential= makes
        it (the files 0400)."""
        d = os.path.join("/run/credentials", self.tag + ".service")
        top = d  # the topmost dir we create goes at cleanup
        while not os.path.exists(os.path.dirname(top)):
            top = os.path.dirname(top)
        self.res.path(top)
        os.makedirs(d, mode=0o700)
        return d


def write_file(path, data, mode=0o600):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
    return path


# ---------------------------------------------------------------- HTTP


def http_call(host, port, method, path, token=None, body=None, raw=None,
              headers=None, timeout=60):
    """(status, headers dict (lower-case names), body bytes)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    h = {}
    if token:
        h["Authorization"] = "Bearer " + token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    if raw is not None:
        data = raw if isinstance(raw, bytes) else raw.encode()
        h["Content-Type"] = "application/json"
    if headers:
        h.update(headers)
    try:
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        text = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, text
    finally:
        conn.close()


def as_json(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


# ---------------------------------------------------------------- the PDP

ALLOW_POLICY = """-- test policy: ALLOW the test actions, nothing else.
local PREFIXES = {%s}
return function(intent)
  for _, p in ipairs(PREFIXES) do
    if starts_with(intent.action, p) then
      return ALLOW
    end
  end
  return nil
end
"""


class PDP(harness.Server):
    """harness.Server plus the things these suites read."""

    @staticmethod
    def _spawn(args, tmp):
        """harness.Server._spawn, the PDP dying with the test process."""
        log_path = os.path.join(tmp, "server.log")
        env = dict(os.environ, LIBC_FATAL_STDERR_="1")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen([IG_BIN, "serve"] + args,
                                    stdout=subprocess.PIPE, stderr=log,
                                    stdin=subprocess.DEVNULL, env=env,
                                    preexec_fn=_die_with_us)
        return proc, log_path

    secrets = None  # name -> value the sandbox and the agent must never see
    db_path = None

    def admin(self):
        return self.env["INTENTGATE_ADMIN_TOKEN"]

    def submit_ok(self, action, resource, params):
        st, body, _ = self.submit(action, resource, params)
        if st != 201 or not isinstance(body, dict) or \
                body.get("decision") != "ALLOW":
            raise AssertionError("the PDP did not ALLOW %s: %s %r"
                                 % (action, st, body))
        return body

    def record(self, intent_id):
        st, rec, _ = self.call("GET", "/v1/intents/" + intent_id, self.admin())
        if st != 200:
            raise AssertionError("GET intent %s: %s %r" % (intent_id, st, rec))
        return rec

    def state(self, intent_id):
        return self.record(intent_id)["state"]

    def wait_state(self, intent_id, states, timeout=20.0):
        if isinstance(states, str):
            states = (states,)
        return wait_for(lambda: self.state(intent_id) in states and
                        self.record(intent_id), timeout,
                        "intent %s to reach %s" % (intent_id, states),
                        interval=0.05)

    def redeem_direct(self, grant, intent_id):
        """Redeem at the PDP with the executor's token: 200 proves the
        grant was still unspent."""
        st, body, _ = self.redeem(grant, intent_id)
        return st, body

    def audit_events(self):
        """Every audit event (parsed), read over /v1/audit/leaves."""
        out, start = [], 0
        while True:
            st, raw, hdr = self.call("GET", "/v1/audit/leaves?start=%d&end=%d"
                                     % (start, start + 1000), self.admin(),
                                     raw_response=True)
            if st != 200:
                raise AssertionError("audit leaves: %s %r" % (st, raw[:300]))
            lines = [l for l in raw.decode().split("\n") if l]
            out.extend(json.loads(l) for l in lines)
            size = int(hdr.get("X-Audit-Tree-Size", hdr.get(
                "x-audit-tree-size", "0")))
            start += len(lines)
            if not lines or start >= size:
                return out

    def outcome_events(self, intent_id):
        return [e for e in self.audit_events()
                if e.get("type") == "execution.outcome" and
                e.get("intent_id") == intent_id]

    def db_bytes(self):
        """The database, its -wal and its -shm as bytes (call after stop)."""
        out = {}
        for suffix in ("", "-wal", "-shm"):
            p = self.db_path + suffix
            if os.path.exists(p):
                with open(p, "rb") as f:
                    out[os.path.basename(p)] = f.read()
        return out

    def audit_export(self):
        r = subprocess.run([IG_BIN, "audit", "export", "--db", self.db_path,
                            "--format", "jsonl"], capture_output=True,
                           timeout=120)
        if r.returncode != 0:
            raise AssertionError("audit export failed: %s"
                                 % r.stderr.decode(errors="replace"))
        return r.stdout

    def reload_policies(self):
        n = self.log().count('"policy.reloaded"')
        self.signal(signal.SIGHUP)
        wait_for(lambda: self.log().count('"policy.reloaded"') > n, 20,
                 "policy.reloaded")


def _tok(kind):
    return "igt_%s_%s" % (kind, base64.urlsafe_b64encode(
        os.urandom(32)).decode().rstrip("="))


def start_custom_pdp(res, d, prefixes=("sandbox.", "api.", "db.", "spool.",
                                      "soak.", "payments."),
                     extra="", executor_id="ex1", allow_prefixes=None,
                     bundle=False, approver_groups="security", clock=False,
                     policies=None, second_agent=False,
                     synchronous="normal"):
    """A PDP from a config we write in d: signing key, audit key and HMAC
    key, an agent, one executor handling prefixes, an admin, an auditor
    and an approver ("appr", in approver_groups) with a password; pdp.env
    (0600) keeps the tokens as an operator might. Policy: ALLOW every
    action under allow_prefixes (default: prefixes); with bundle, the
    example bundle's policies (policies/bundle/*.lua) too. clock: on the
    test clock of d (harness.Server.custom). synchronous: the PDP's
    SQLite durability, "normal" or "full" (what a benchmark measures)."""
    allow = tuple(allow_prefixes or prefixes)
    require_binaries()
    subprocess.run([IG_BIN, "keygen", "--out", os.path.join(d, "keys")],
                   check=True, capture_output=True)
    subprocess.run([IG_BIN, "keygen", "--out", os.path.join(d, "keys",
                                                             "audit")],
                   check=True, capture_output=True)
    hmac_key = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    write_file(os.path.join(d, "keys", "audit-hmac.key"), hmac_key + "\n")
    write_file(os.path.join(d, "policies", "ig_allow.lua"),
               ALLOW_POLICY % ", ".join('"%s"' % p for p in allow), 0o644)
    write_file(os.path.join(d, "policies", "ig_allow_test.lua"),
               'return {{name = "allow", intent = {action = "%sx", '
               'resource = "r"}, expect = "ALLOW"}}\n' % allow[0], 0o644)
    for name, text in (policies or {}).items():
        write_file(os.path.join(d, "policies", name), text, 0o644)
    if bundle:
        src = os.path.join(REPO, "policies", "bundle")
        for name in sorted(os.listdir(src)):
            if name.endswith(".lua"):
                shutil.copy(os.path.join(src, name),
                            os.path.join(d, "policies", name))
    env = {"INTENTGATE_AGENT_TOKEN": _tok("agent"),
           "INTENTGATE_EXECUTOR_TOKEN": _tok("exec"),
           "INTENTGATE_ADMIN_TOKEN": _tok("admin"),
           "INTENTGATE_AUDITOR_TOKEN": _tok("auditor"),
           "INTENTGATE_EXECUTOR_ID": executor_id}
    if second_agent:
        env["INTENTGATE_AGENT2_TOKEN"] = _tok("agent")
    password = "pw-" + rand(16)
    r = subprocess.run([IG_BIN, "approver", "add", "appr", "--groups",
                        approver_groups], input=(password + "\n").encode(),
                       capture_output=True, check=True)
    approver = r.stdout.decode()

    def sect(kind, ident, tok, more=""):
        return "[%s %s]\n%stoken_sha256 = %s\n" % (
            kind, ident, more, hashlib.sha256(tok.encode()).hexdigest())
    conf = os.path.join(d, "intentgate.conf")
    write_file(conf,
               "listen = 127.0.0.1:0\ndatabase = ig.db\n"
               "signing_key = keys/signing.key\npolicy_dir = policies\n"
               "intent_ttl = 300\ngrant_ttl = 300\n"
               "synchronous = %s\n" % synchronous +
               extra +
               "\n[policy]\n\n" +
               sect("agent", "a1", env["INTENTGATE_AGENT_TOKEN"],
                    "tenant = t1\n") +
               (sect("agent", "a2", env["INTENTGATE_AGENT2_TOKEN"],
                     "tenant = t1\n") if second_agent else "") +
               sect("executor", executor_id, env["INTENTGATE_EXECUTOR_TOKEN"],
                    "actions = %s\n" % ", ".join(prefixes)) +
               sect("admin", "root", env["INTENTGATE_ADMIN_TOKEN"]) +
               sect("auditor", "aud", env["INTENTGATE_AUDITOR_TOKEN"]) +
               approver +
               "\n[audit]\nname = ig-test.local/audit\n"
               "key = keys/audit/signing.key\n"
               "hmac_key = keys/audit-hmac.key\n",
               0o600)
    write_file(os.path.join(d, "pdp.env"),
               "".join("%s=%s\n" % kv for kv in sorted(env.items())) +
               "INTENTGATE_APPROVER_PASSWORD=%s\n" % password)
    srv = PDP.custom(conf, d, env, clock=clock)
    res.process(srv.proc, "PDP")
    srv.db_path = os.path.join(d, "ig.db")
    srv.data = d
    srv.secrets = {
        "executor token": env["INTENTGATE_EXECUTOR_TOKEN"],
        "admin token": env["INTENTGATE_ADMIN_TOKEN"],
        "auditor token": env["INTENTGATE_AUDITOR_TOKEN"],
        "approver password": password,
        "grant signing key": _read_text(os.path.join(d, "keys",
                                                     "signing.key")),
        "audit signing key": _read_text(os.path.join(d, "keys", "audit",
                                                     "signing.key")),
        "audit hmac key": hmac_key,
    }
    srv.sensitive_paths = {
        "pdp conf": conf,
        "pdp db": srv.db_path,
        "pdp signing key": os.path.join(d, "keys", "signing.key"),
        "pdp audit key": os.path.join(d, "keys", "audit", "signing.key"),
        "pdp hmac key": os.path.join(d, "keys", "audit-hmac.key"),
        "pdp env": os.path.join(d, "pdp.env"),
    }
    srv.sensitive_dirs = {"pdp dir": d}
    return srv


def start_dev_pdp(res, tmp):
    """`intentgate serve --dev --data tmp/data` (tmp: a layout dir)."""
    require_binaries()
    srv = PDP.dev(tmp=tmp)
    srv.__class__ = PDP
    res.process(srv.proc, "dev PDP")
    d = srv.data
    srv.db_path = os.path.join(d, "intentgate.db")
    srv.secrets = {}
    for k, v in srv.env.items():
        if k in ("INTENTGATE_URL", "INTENTGATE_EXECUTOR_ID",
                 "INTENTGATE_APPROVER_ID", "INTENTGATE_PUBLIC_KEY",
                 "INTENTGATE_AUDIT_KEY", "INTENTGATE_AGENT_TOKEN",
                 "INTENTGATE_TOKEN"):
            continue
        srv.secrets[k] = v
    for name in ("signing.key", "audit.key", "audit-hmac.key"):
        srv.secrets["pdp " + name] = _read_text(os.path.join(d, "keys", name))
    srv.sensitive_paths = {
        "pdp conf": os.path.join(d, "intentgate.conf"),
        "pdp db": srv.db_path,
        "pdp db-wal": srv.db_path + "-wal",
        "pdp signing key": os.path.join(d, "keys", "signing.key"),
        "pdp audit key": os.path.join(d, "keys", "audit.key"),
        "pdp hmac key": os.path.join(d, "keys", "audit-hmac.key"),
        "dev.env": os.path.join(d, "dev.env"),
    }
    srv.sensitive_dirs = {"pdp data dir": d, "pdp keys dir":
                          os.path.join(d, "keys")}
    return srv


def _read_text(p):
    with open(p) as f:
        return f.read().strip()


# ---------------------------------------------------------------- executor


class Executor:
    """A running `intentgate-executor`."""

    proc = None
    host = "127.0.0.1"
    port = None

    def url(self):
        return "http://%s:%d" % (self.host, self.port)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def log_bytes(self):
        with open(self.log_path, "rb") as f:
            return f.read()

    def _wait_started(self, timeout=60):
        deadline = time.time() + timeout
        start_at = self._log_offset
        while time.time() < deadline:
            with open(self.log_path, "rb") as f:
                f.seek(start_at)
                text = f.read().decode("utf-8", "replace")
            for line in text.splitlines():
                if '"executor.started"' in line:
                    rec = json.loads(line)
                    self.host, port = rec["url"].split("//", 1)[1].rsplit(
                        ":", 1)
                    self.port = int(port)
                    return
            if self.proc.poll() is not None:
                if "unknown key" in text:
                    raise NotImplementedYet(
                        "the executor does not know a key this test needs "
                        "(spec11): " + text.strip()[-600:])
                raise AssertionError("the executor did not start (exit %s): %s"
                                     % (self.proc.returncode, text[-3000:]))
            time.sleep(0.03)
        raise AssertionError("the executor did not start in time: "
                             + self.log()[-3000:])

    def execute(self, intent, grant, accept=None, raw=None, timeout=120):
        """POST /v1/execute -> (status, headers, raw bytes, parsed JSON or
        list of NDJSON objects)."""
        body = raw if raw is not None else json.dumps(
            {"intent": intent, "grant": grant}).encode()
        headers = {"Accept": accept} if accept else None
        st, hdr, data = http_call(self.host, self.port, "POST", "/v1/execute",
                                  raw=body, headers=headers, timeout=timeout)
        if hdr.get("content-type", "").startswith("application/x-ndjson"):
            parsed = [json.loads(l) for l in data.decode().splitlines() if l]
        else:
            parsed = as_json(data)
        return st, hdr, data, parsed

    def get(self, path, timeout=30):
        return http_call(self.host, self.port, "GET", path, timeout=timeout)

    def metrics(self):
        st, hdr, data = self.get("/metrics")
        if st != 200:
            raise NotImplementedYet("executor GET /metrics answered %s: %r"
                                    % (st, data[:200]))
        return data.decode()

    def metric(self, name):
        """The value of an unlabelled metric, or the sum over its labels."""
        total, seen = 0.0, False
        for line in self.metrics().splitlines():
            if line.startswith("#"):
                continue
            m = re.match(r"^%s(\{[^}]*\})?\s+(\S+)$" % re.escape(name), line)
            if m:
                total += float(m.group(2))
                seen = True
        if not seen:
            raise AssertionError("metric %s missing from executor /metrics"
                                 % name)
        return total

    def healthy(self):
        try:
            return self.get("/healthz", timeout=5)[0] == 200
        except OSError:
            return False

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def check_log_clean(self, secrets=()):
        log = self.log()
        if "Sanitizer" in log or "runtime error:" in log:
            raise AssertionError("sanitizer report in the executor log:\n"
                                 + log[-4000:])
        for name, v in secrets:
            if v and v in log:
                raise AssertionError("%s appears in the executor log" % name)


def secret_set(key_path, enc_path, name, value):
    r = subprocess.run([EXEC_BIN, "secret", "set", name, "--file", enc_path,
                        "--key", key_path],
                       input=(value if isinstance(value, bytes)
                              else value.encode()) + b"\n",
                       capture_output=True)
    if r.returncode != 0:
        raise AssertionError("secret set %s: %s" % (name, r.stderr.decode()))


class ConfigExecutor(Executor):
    """`intentgate-executor serve --config` with files we write in d.

    registry: the registry dict; credentials: name -> value; conf: extra
    config lines (new keys of the spec go here); creds_dir: put
    secrets_key and pdp_token_file there (0400), as systemd's
    LoadCredential= does."""

    def __init__(self, res, d, pdp, registry, credentials=None, conf="",
                 creds_dir=None, ex_id=None, token=None, pubkey_text=None,
                 env=None, start=True, token_in_env=False, key_in_env=False,
                 pdp_url=None, nofile=None):
        require_binaries()
        self.res, self.dir, self.pdp = res, d, pdp
        ex_id = ex_id or pdp.env["INTENTGATE_EXECUTOR_ID"]
        token = token or pdp.env["INTENTGATE_EXECUTOR_TOKEN"]
        if pubkey_text is None:
            pub = os.path.join(pdp.data, "keys", "signing.pub")
            pubkey_text = _read_text(pub) if os.path.exists(pub) else \
                pdp.env["INTENTGATE_PUBLIC_KEY"]
        write_file(os.path.join(d, "pdp.pub"), pubkey_text + "\n", 0o644)
        write_file(os.path.join(d, "registry.json"),
                   json.dumps(registry, indent=1), 0o644)
        key = os.path.join(d, "secrets.key")
        enc = os.path.join(d, "secrets.enc")
        r = subprocess.run([EXEC_BIN, "secret", "keygen", "--out", key],
                           capture_output=True)
        if r.returncode != 0:
            raise AssertionError("secret keygen: " + r.stderr.decode())
        for name, value in (credentials or {}).items():
            secret_set(key, enc, name, value)
        if not os.path.exists(enc):
            secret_set(key, enc, "unused", "unused-" + rand())
        self.secrets_key_text = _read_text(key)
        self.env = dict(os.environ, LIBC_FATAL_STDERR_="1")
        if env:
            self.env.update(env)
        token_file = os.path.join(d, "pdp.token")
        if creds_dir:
            shutil.move(key, os.path.join(creds_dir, "secrets.key"))
            key = os.path.join(creds_dir, "secrets.key")
            token_file = os.path.join(creds_dir, "pdp.token")
        lines = ["id = %s" % ex_id, "listen = 127.0.0.1:0",
                 "pdp_url = %s" % (pdp_url or pdp.env["INTENTGATE_URL"]),
                 "pdp_public_keys = pdp.pub", "registry = registry.json",
                 "secrets = secrets.enc", "work_dir = work"]
        if token_in_env:
            self.env["INTENTGATE_EXECUTOR_TOKEN"] = token
        else:
            write_file(token_file, token + "\n", 0o600)
            lines.append("pdp_token_file = %s" % token_file)
        if key_in_env:
            self.env["INTENTGATE_EXECUTOR_SECRETS_KEY"] = self.secrets_key_text
            os.unlink(key)
        else:
            lines.append("secrets_key = %s" % key)
        if creds_dir:
            os.chmod(key, 0o400)
            if not token_in_env:
                os.chmod(token_file, 0o400)
        self.conf_path = os.path.join(d, "executor.conf")
        write_file(self.conf_path, "\n".join(lines) + "\n" + conf, 0o600)
        self.credentials = dict(credentials or {})
        self.secrets = {"secrets key": self.secrets_key_text,
                        "executor pdp token": token}
        for n, v in self.credentials.items():
            self.secrets["credential " + n] = v
        self.sensitive_paths = {"executor conf": self.conf_path,
                                "executor registry": os.path.join(
                                    d, "registry.json"),
                                "secrets.enc": enc}
        if not key_in_env:
            self.sensitive_paths["secrets.key"] = key
        if not token_in_env:
            self.sensitive_paths["pdp.token"] = token_file
        self.sensitive_dirs = {"executor dir": d,
                               "work dir": os.path.join(d, "work")}
        self.log_path = os.path.join(d, "executor.log")
        self._log_offset = 0
        self.nofile = nofile
        if start:
            self.start()

    def _child(self):
        """In the child: die with us; with nofile, the soft open-files
        limit a service often gets (systemd's default soft limit is 1024),
        the hard one kept."""
        _die_with_us()
        if self.nofile:
            import resource
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, hard))

    def start(self):
        if os.path.exists(self.log_path):
            self._log_offset = os.path.getsize(self.log_path)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [EXEC_BIN, "serve", "--config", self.conf_path],
                stdout=subprocess.DEVNULL, stderr=log,
                stdin=subprocess.DEVNULL, env=self.env,
                preexec_fn=self._child)
        self.res.process(self.proc, "executor " + self.dir)
        self._wait_started()
        return self


class DevExecutor(Executor):
    """`intentgate-executor serve --dev --pdp-env DATA/dev.env`."""

    def __init__(self, res, pdp, upstream_url="http://127.0.0.1:9",
                 pdp_env=None, cwd=None, env=None):
        """env: more environment for the executor (the dev git alias's
        INTENTGATE_DEV_GIT_UPSTREAM and _CREDENTIAL, say)."""
        require_binaries()
        self.extra_env = dict(env or {})
        self.res, self.pdp = res, pdp
        self.pdp_env = pdp_env or os.path.join(pdp.data, "dev.env")
        self.cwd = cwd
        self.dir = os.path.join(pdp.data, "executor")
        self.log_path = os.path.join(pdp.tmp, "executor.log")
        self.upstream_url = upstream_url
        self._log_offset = 0
        self.start()

    def start(self):
        if os.path.exists(self.log_path):
            self._log_offset = os.path.getsize(self.log_path)
        env = dict(os.environ, INTENTGATE_DEV_UPSTREAM=self.upstream_url,
                   LIBC_FATAL_STDERR_="1")
        env.update(getattr(self, "extra_env", {}))
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [EXEC_BIN, "serve", "--dev", "--pdp-env", self.pdp_env,
                 "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL,
                stderr=log, stdin=subprocess.DEVNULL, env=env, cwd=self.cwd,
                preexec_fn=_die_with_us)
        self.res.process(self.proc, "dev executor")
        self._wait_started()
        d = self.dir
        self.secrets = {"secrets key": _read_text(os.path.join(d,
                                                               "secrets.key")),
                        "executor pdp token": _read_text(
                            os.path.join(d, "pdp.token"))}
        self.sensitive_paths = {
            "executor conf": os.path.join(d, "executor.conf"),
            "executor registry": os.path.join(d, "registry.json"),
            "secrets.enc": os.path.join(d, "secrets.enc"),
            "secrets.key": os.path.join(d, "secrets.key"),
            "pdp.token": os.path.join(d, "pdp.token")}
        self.sensitive_dirs = {"executor dir": d,
                               "work dir": os.path.join(d, "work")}
        return self


# ---------------------------------------------------------------- upstreams


class RawRequest:
    def __init__(self, head, body):
        self.head = head  # bytes up to and including the blank line
        self.body = body
        first, _, rest = head.partition(b"\r\n")
        self.request_line = first
        parts = first.split(b" ")
        self.method = parts[0] if parts else b""
        self.target = b" ".join(parts[1:-1]) if len(parts) >= 3 else b""
        self.headers = {}
        for line in rest.split(b"\r\n"):
            if b":" in line:
                k, _, v = line.partition(b":")
                self.headers[k.strip().lower().decode("latin-1")] = v.strip()


class RawUpstream:
    """A loopback HTTP/1.1 server that keeps every request's raw bytes and
    answers with handler(RawRequest) -> (status, [(name, value bytes)],
    body bytes), or None to close the connection without an answer."""

    def __init__(self, res, handler):
        self.handler = handler
        self.requests = []
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()
        res.push(self.stop, "upstream %d" % self.port)

    def stop(self):
        self.stopped = True
        try:
            self.sock.close()
        except OSError:
            pass

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,),
                             daemon=True).start()

    @staticmethod
    def _send_chunked(c, status, headers, parts):
        head = [b"HTTP/1.1 %d X" % status]
        head += [k.encode() + b": " + (v if isinstance(v, bytes)
                                        else v.encode()) for k, v in headers]
        head += [b"Transfer-Encoding: chunked", b"Connection: close"]
        c.sendall(b"\r\n".join(head) + b"\r\n\r\n")
        for part in parts:
            c.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
            time.sleep(0.05)  # shapes the stream: separate reads upstream
        c.sendall(b"0\r\n\r\n")

    def _serve(self, c):
        c.settimeout(30)
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                head, _, buf = buf.partition(b"\r\n\r\n")
                req = RawRequest(head + b"\r\n\r\n", b"")
                n = int(req.headers.get("content-length", b"0") or 0)
                while len(buf) < n:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                req.body, buf = buf[:n], buf[n:]
                with self.lock:
                    self.requests.append(req)
                ans = self.handler(req)
                if ans is None:
                    return
                status, headers, body = ans
                if isinstance(body, list):  # chunked, a pause between parts
                    self._send_chunked(c, status, headers, body)
                    return
                out = [b"HTTP/1.1 %d X" % status]
                names = set()
                for k, v in headers:
                    names.add(k.lower())
                    out.append(k.encode() + b": " + (
                        v if isinstance(v, bytes) else v.encode()))
                if "content-length" not in names:
                    out.append(b"Content-Length: %d" % len(body))
                out.append(b"Connection: close")
                c.sendall(b"\r\n".join(out) + b"\r\n\r\n" + body)
                return
        except OSError:
            return
        finally:
            c.close()


# ---------------------------------------------------------------- spellings


MARKER = "[credential removed]"


def b64_cores(v, alphabet="std"):
    """The parts of base64(x + v + y) that depend on v alone, for the
    three alignments of v (with and without padding at the end)."""
    out = set()
    for k in range(3):
        for tail in (b"", b"\x00", b"\x00\x00"):
            data = b"\x00" * k + v + tail
            enc = base64.b64encode(data).decode()
            if alphabet == "url":
                enc = enc.translate(str.maketrans("+/", "-_"))
            start = 4 * ((k + 2) // 3)
            end = 4 * ((k + len(v)) // 3)
            if end - start >= 8:
                out.add(enc[start:end])
        # the whole encoding, padded and not, when v is at offset 0
    for enc in (base64.b64encode(v).decode(),
                base64.urlsafe_b64encode(v).decode()):
        out.add(enc)
        out.add(enc.rstrip("="))
    return out


def spellings(value):
    """Every spelling of value the scrubbing rule names (spec11), computed
    independently: raw; base64 and base64url at three alignments with and
    without padding; percent-encoded (upper/lower hex, unreserved kept or
    every byte encoded); JSON-escaped (minimal, \\/, ASCII-only \\uXXXX in
    lower and upper hex, every character escaped); hex (lower/upper)."""
    v = value.encode() if isinstance(value, str) else value
    s = v.decode("utf-8", "replace")
    out = {s}
    out |= b64_cores(v, "std")
    out |= b64_cores(v, "url")
    q = urllib.parse.quote(v, safe="")
    out.add(q)
    out.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), q))
    out.add(urllib.parse.quote_plus(v, safe=""))
    out.add(urllib.parse.quote(v))  # Python's default keeps "/"
    out.add(urllib.parse.quote(v, safe="/:@!$&'()*+,;="))  # encodeURI-like
    out.add(html.escape(s))
    every = "".join("%%%02X" % b for b in v)
    out.add(every)
    out.add(every.lower())
    for ensure in (True, False):
        j = json.dumps(s, ensure_ascii=ensure)[1:-1]
        out.add(j)
        out.add(j.replace("/", "\\/"))
        up = re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(),
                    j)
        out.add(up)
    out.add("".join("\\u%04x" % ord(ch) for ch in s))
    out.add("".join("\\u%04X" % ord(ch) for ch in s))
    out.add(binascii.hexlify(v).decode())
    out.add(binascii.hexlify(v).decode().upper())
    return {x for x in out if len(x) >= 6}


def find_spellings(blob, secrets):
    """Names of the secrets any spelling of which occurs in blob (bytes or
    text); [] when clean."""
    if isinstance(blob, bytes):
        texts = [blob]
    else:
        texts = [blob.encode("utf-8", "surrogatepass")]
    found = []
    for name, value in secrets.items():
        if not value:
            continue
        for sp in spellings(value):
            spb = sp.encode("utf-8")
            if any(spb in t for t in texts):
                found.append("%s (as %r)" % (name, sp[:40]))
                break
    return found


def deep_strings(v, depth=0):
    """Every string in a JSON value (keys too), and recursively in any
    string that itself parses as JSON or is base64url of bytes."""
    out = []
    if depth > 6:
        return out
    if isinstance(v, str):
        out.append(v)
        inner = as_json(v) if v[:1] in "{[\"" else None
        if inner is not None:
            out.extend(deep_strings(inner, depth + 1))
    elif isinstance(v, dict):
        for k, x in v.items():
            out.append(k)
            if k in ("body_b64url", "data_b64url") and isinstance(x, str):
                try:
                    raw = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
                    out.append(raw.decode("latin-1"))
                    out.append(raw.decode("utf-8", "replace"))
                except (ValueError, binascii.Error):
                    pass
            out.extend(deep_strings(x, depth + 1))
    elif isinstance(v, list):
        for x in v:
            out.extend(deep_strings(x, depth + 1))
    return out


_B64RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_JSONSTR = re.compile(r'"((?:[^"\\]|\\.)*)(?:"|$)')


def decodings(text, depth=3, budget=None):
    """text and what it decodes to, recursively: percent-decoding, HTML
    entities, JSON string escapes, base64 / base64url runs at every
    offset. Finds a secret under composed spellings (base64 of JSON, a
    percent-encoded base64, ...) that a spelling list does not name."""
    budget = budget if budget is not None else [2000]
    out = [text]
    if depth == 0 or budget[0] <= 0:
        return out
    budget[0] -= 1
    cands = set()
    cands.add(urllib.parse.unquote(text, errors="replace"))
    cands.add(urllib.parse.unquote_plus(text, errors="replace"))
    cands.add(html.unescape(text))
    for m in _JSONSTR.finditer(text):
        try:
            cands.add(json.loads('"%s"' % m.group(1)))
        except ValueError:
            pass
    for m in _B64RUN.finditer(text):
        run = m.group(0).rstrip("=")
        for off in range(4):
            whole = run[off:]
            for part in (whole[:len(whole) - len(whole) % 4],
                         whole + "=" * (-len(whole) % 4)):
                if len(part) < 12:
                    continue
                for alt in (b"+/", b"-_"):
                    try:
                        raw = base64.b64decode(part.encode(), altchars=alt,
                                               validate=True)
                    except (ValueError, binascii.Error):
                        continue
                    cands.add(raw.decode("utf-8", "replace"))
                    cands.add(raw.decode("latin-1"))
    for c in cands:
        if c != text and c:
            out.extend(decodings(c, depth - 1, budget))
    return out


def leaks_deep(raw, parsed, secrets):
    """Secrets found raw after decoding whatever the agent got (see
    decodings), on top of leaks_in_reply's spellings."""
    found = leaks_in_reply(raw, parsed, secrets)
    texts = [raw.decode("utf-8", "replace")] + deep_strings(parsed)
    for t in texts:
        for d in decodings(t):
            for name, value in secrets.items():
                if value and value in d:
                    found.append("%s (under a composed spelling)" % name)
    return sorted(set(found))


def leaks_in_reply(raw, parsed, secrets):
    """Spellings of secrets in a reply: its raw bytes and every decoded
    string in it."""
    found = find_spellings(raw, secrets)
    for s in deep_strings(parsed):
        found += find_spellings(s, secrets)
    return sorted(set(found))


# ---------------------------------------------------------------- running


def _on_sigterm(signum, frame):
    """A CI runner stopping us: clean up everything, then exit."""
    for r in reversed(Resources.live):
        r.close()
    os._exit(143)


def run_main(module_name):
    """unittest.main with a summary line per test; the exit status is
    harness.exit_status's (1 on any failure, harness.SKIPPED on a skip)."""
    import unittest
    import warnings
    warnings.simplefilter("ignore", ResourceWarning)
    signal.signal(signal.SIGTERM, _on_sigterm)
    require_binaries()
    prog = unittest.main(module=module_name, exit=False, verbosity=2,
                         warnings="ignore")
    r = prog.result
    print("\nSUMMARY %s: %d run, %d failed, %d errors, %d skipped"
          % (module_name, r.testsRun, len(r.failures), len(r.errors),
             len(r.skipped)))
    for t, tb in r.failures + r.errors:
        last = [l for l in tb.strip().splitlines() if l.strip()][-1]
        print("  FAIL %s: %s" % (t.id(), last[:300]))
    for t, why in r.skipped:
        print("  SKIPPED %s: %s (a skipped test fails CI)" % (t.id(), why))
    sys.exit(harness.exit_status(r))
