"""test_policy_tools_attack.py - issue 19's tools (shadow bundles, the
explain trace, `policy replay`) attacked by those who can reach them: a
compromised agent (any action, resource, params, context), a policy author
who errs or a hostile bundle in the shadow dir, and someone holding the
database file who edits rows before a replay.

    INTENTGATE_BIN=build/release/cli/intentgate \
        python3 tests/integration/test_policy_tools_attack.py [Class[.test]]

Runs on both stores (ctest policy.tools_attack and policy.tools_attack.pg).
Every case is a hostile input with what must hold: the live decision, the
live quota and the server's service untouched by the shadow; no trace or
shadow verdict in anything the agent reads; agent text escaped on a
terminal and in CSV; a replay that never writes, and that reports each
unreadable row (exit 3) instead of crashing or skipping it.
"""
import atexit
import csv
import hashlib
import io
import json
import os
import pty
import re
import select
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg  # noqa: E402
from harness import BIN, Server, run_tests, wait_until  # noqa: E402
from harness import bundle_revision as revision  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUNDLE = os.path.join(ROOT, "policies", "bundle")
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
# What a terminal must never receive from agent text: ESC (colours, title,
# OSC 52 clipboard writes), BEL, backspace, carriage return.
TERM_ATTACK = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x08\r"

# ---- shared helpers ----


def reachable(path):
    """True when every directory above path lets others through."""
    d = os.path.dirname(os.path.abspath(path))
    while d not in ("/", ""):
        if not os.stat(d).st_mode & stat.S_IXOTH:
            return False
        d = os.path.dirname(d)
    return True


_STAGED = {}


def bin_for(user):
    """The CLI another user can run. A clone under a private directory
    (mktemp -d makes 0700) hides the build from that user, so the front
    binary and the full one it starts are copied, in the installed
    layout, to a directory everyone may enter."""
    full = os.path.join(os.path.dirname(os.path.dirname(BIN)), "libexec",
                        "intentgate", "intentgate-full")
    if user is None or (reachable(BIN) and reachable(full)):
        return BIN
    if "bin" not in _STAGED:
        top = tempfile.mkdtemp(prefix="ig-atk-bin-")
        os.chmod(top, 0o755)
        os.makedirs(os.path.join(top, "cli"))
        os.makedirs(os.path.join(top, "libexec", "intentgate"))
        shutil.copy2(BIN, os.path.join(top, "cli", "intentgate"))
        shutil.copy2(full, os.path.join(top, "libexec", "intentgate",
                                        "intentgate-full"))
        for dirpath, _, _ in os.walk(top):
            os.chmod(dirpath, 0o755)
        atexit.register(shutil.rmtree, top, True)
        _STAGED["bin"] = os.path.join(top, "cli", "intentgate")
    return _STAGED["bin"]


def ig(*args, stdin=None, env=None, timeout=300, user=None):
    """Run the CLI; (rc, stdout, stderr) as text. user: run as that user
    (setpriv), to prove a command writes nothing it is not allowed to."""
    cmd = [bin_for(user)] + [str(a) for a in args]
    if user is not None:
        cmd = ["setpriv", "--reuid=" + user, "--regid=nogroup",
               "--clear-groups", "--"] + cmd
    p = subprocess.run(cmd, capture_output=True, input=stdin, env=env,
                       timeout=timeout)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def ig_raw(*args, timeout=300):
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def on_tty(*args, timeout=60):
    """Run the CLI with stdout and stderr on a pseudo-terminal (what a
    person sees); (rc, bytes written to the terminal)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([BIN] + [str(a) for a in args], stdout=slave,
                         stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    rc = p.wait(timeout=10)
    return rc, out


def not_crashed(test, rc, text):
    """rc is an exit status, not a signal, and no sanitizer spoke."""
    test.assertGreaterEqual(rc, 0, "killed by signal %d: %s"
                            % (-rc, text[-2000:]))
    for bad in ("Sanitizer", "runtime error", "Segmentation", "Aborted"):
        test.assertNotIn(bad, text, text[-2000:])


def write_bundle(dst, changes=None, base=BUNDLE):
    """dst: a copy of base (the example bundle) with changes applied:
    {file name: text, or None to remove it}."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(dst):
        if name.endswith(".lua"):
            os.unlink(os.path.join(dst, name))
    for name in os.listdir(base):
        if name.endswith(".lua"):
            shutil.copy(os.path.join(base, name), os.path.join(dst, name))
    for name, text in (changes or {}).items():
        path = os.path.join(dst, name)
        if text is None:
            if os.path.exists(path):
                os.unlink(path)
            continue
        with open(path, "w", newline="") as f:
            f.write(text)
    return dst


def start_dev(top="", quota=None, policy_dir=None, clock=False):
    """serve --dev with top-level config lines added (e.g.
    shadow_policy_dir = ...), [policy] quota_per_minute replaced, the live
    policy_dir replaced. A second approver (second, in finance) is added."""
    srv = Server.dev()
    srv.stop()
    conf = os.path.join(srv.data, "intentgate.conf")
    with open(conf) as f:
        text = f.read()
    h = re.search(r"^password_hash = (.*)$", text, re.M).group(1)
    if policy_dir is not None:
        text = text.replace("policy_dir = policies\n",
                            "policy_dir = %s\n" % policy_dir)
    text = re.sub(r"^(policy_dir = .*\n)", lambda m: m.group(1) + top, text,
                  count=1, flags=re.M)
    if quota is not None:
        text = re.sub(r"^quota_per_minute = \d+$",
                      "quota_per_minute = %d" % quota, text, flags=re.M)
    text += ("\n[approver second]\nname = Second Approver\n"
             "groups = finance\npassword_hash = %s\n" % h)
    with open(conf, "w") as f:
        f.write(text)
    return Server.dev(tmp=srv.tmp, clock=clock)


def finish(test, srv):
    rc = srv.stop()
    log = srv.log()
    srv.cleanup()
    test.assertEqual(rc, 0, log[-4000:])
    for bad in ("Sanitizer", "runtime error"):
        test.assertNotIn(bad, log, log[-4000:])


def login(srv, who):
    st, body, _ = srv.call("POST", "/v1/approver/login", None,
                           {"approver": who,
                            "password": srv.env["INTENTGATE_APPROVER_PASSWORD"]})
    assert st == 200, body
    return body["token"]


def vote(srv, token, body, how="approve"):
    return srv.call("POST", "/v1/approvals/%s/votes" % body["approval"]["id"],
                    token, {"vote": how, "intent_hash": body["intent_hash"]})


def metrics(srv):
    st, text, _ = srv.call("GET", "/metrics", raw_response=True)
    assert st == 200, text
    return text.decode("utf-8", "replace")


def metric_samples(text, name):
    """[(labels dict, value)] of name in an exposition, parsed strictly:
    a label value may hold \\\\, \\" and \\n escapes and nothing raw."""
    out = []
    for line in text.split("\n"):
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        m = re.match(r'^%s(?:\{(.*)\})? (\S+)$' % re.escape(name), line)
        if m is None:
            raise AssertionError("malformed sample line: %r" % line)
        labels = {}
        body = m.group(1) or ""
        for lm in re.finditer(r'(\w+)="((?:[^"\\\n]|\\[\\"n])*)",?', body):
            labels[lm.group(1)] = lm.group(2)
        if re.sub(r'(\w+)="((?:[^"\\\n]|\\[\\"n])*)",?', "", body):
            raise AssertionError("malformed labels: %r" % line)
        out.append((labels, float(m.group(2))))
    return out


def psql_stdin(url, sql):
    """pg.psql for statements too long for a command line (10 MB)."""
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v",
                        "ON_ERROR_STOP=1", "-d", url, "-f", "-"],
                       input=sql, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError("psql: %s" % p.stderr.strip()[:2000])
    return p.stdout


def walk_keys(v):
    """Every object key anywhere in a JSON value."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from walk_keys(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk_keys(x)


# ---- the database, copied and edited (both backends) ----

class Db:
    """A copy of a stopped server's store with the immutability triggers
    off, to edit as someone holding the file would: a SQLite file, or a
    PostgreSQL database made from the original as a template."""

    def __init__(self, store, dst_dir):
        self.pg = pg.is_url(store)
        if self.pg:
            self.url = pg.create_database("igatk")
            base = pg.with_dbname(self.url, "postgres")
            pg.psql(base, "DROP DATABASE %s" % pg.dbname(self.url))
            pg.psql(base, "CREATE DATABASE %s TEMPLATE %s"
                    % (pg.dbname(self.url), pg.dbname(store)))
            self.path = self.url
            pg.psql(self.url, "DO $$ DECLARE t record; BEGIN FOR t IN "
                    "SELECT tablename FROM pg_tables WHERE schemaname = "
                    "'public' LOOP EXECUTE format('ALTER TABLE %I DISABLE "
                    "TRIGGER USER', t.tablename); END LOOP; END $$")
        else:
            self.path = os.path.join(dst_dir, "copy-%s.db"
                                     % os.urandom(4).hex())
            s = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
            d = sqlite3.connect(self.path)
            s.backup(d)
            s.close()
            for (name,) in d.execute("SELECT name FROM sqlite_master WHERE "
                                     "type = 'trigger'").fetchall():
                d.execute('DROP TRIGGER "%s"' % name)
            d.commit()
            d.close()

    def execute(self, sql, args=()):
        """One statement; args are inlined as SQL literals (test data)."""
        if self.pg:
            def lit(a):
                if a is None:
                    return "NULL"
                if isinstance(a, int):
                    return str(a)
                return "'" + str(a).replace("'", "''") + "'"
            parts = sql.split("?")
            assert len(parts) == len(args) + 1, sql
            text = parts[0] + "".join(lit(a) + p for a, p in
                                      zip(args, parts[1:]))
            psql_stdin(self.url, text)
            return
        d = sqlite3.connect(self.path)
        d.execute(sql, args)
        d.commit()
        d.close()

    def rows(self, sql):
        if self.pg:
            return pg.rows(self.url, sql)
        d = sqlite3.connect("file:%s?mode=ro" % self.path, uri=True)
        try:
            cur = d.execute(sql)
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]
        finally:
            d.close()

    def drop(self):
        if self.pg:
            pg.drop_database(self.url)
        elif os.path.exists(self.path):
            os.unlink(self.path)


# ==== shadow bundles ====

# Live and shadow: every payments.atk-* and payments.dis-* action is allowed (so a
# shadow that fails or blocks disagrees, and each disagreement shows).
ALLOW_ATTACK = """-- zz_allow_attack.lua - the test's actions are allowed.
return function(intent)
  local a = intent.action
  if a:sub(1, 13) == "payments.atk-" or a:sub(1, 13) == "payments.dis-" then
    return ALLOW
  end
  return nil
end
"""

# The shadow only: everything a hostile or broken bundle can try.
HOSTILE = """-- zz_hostile.lua - a shadow bundle's worst.
return function(intent)
  local a = intent.action
  if a == "payments.atk-loop" then while true do end end
  if a == "payments.atk-mem" then
    local t = {}
    for i = 1, 100000000 do t[i] = string.rep("x", 60000) .. i end
  end
  if a == "payments.atk-rec" then
    local function f(n) return f(n + 1) + 1 end
    return f(1)
  end
  if a == "payments.atk-count" then
    for i = 1, 1000000 do count("k" .. i, 86400) end
  end
  if a == "payments.atk-quota" then
    for i = 1, 200 do count("intents:" .. intent.principal, 60) end
    return BLOCK{reason = "SHADOW_ONLY_REASON"}
  end
  if a == "payments.atk-escalate" then
    return ESCALATE{approvers = {"security"}, reason = "SHADOW_ONLY_REASON"}
  end
  if a:sub(1, 13) == "payments.dis-" then
    return BLOCK{reason = "SHADOW_ONLY_REASON",
                 message = "shadow says no: " .. intent.resource}
  end
  return nil
end
"""

FAILING_TEST = """-- zz_fail_test.lua - a case that fails.
return {
  { name = "fails on purpose",
    intent = { action = "payments.refund", resource = "o/1",
               params = { amount = 1 } },
    expect = "BLOCK" },
}
"""


class Shadow(unittest.TestCase):
    """A hostile shadow bundle next to the example bundle: it cannot change, slow or count against a live decision,
    nor reach the agent, the metrics exposition's format or the server's
    life."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="ig-atk-shadow-")
        cls.live = write_bundle(os.path.join(cls.work, "live"),
                                {"zz_allow_attack.lua": ALLOW_ATTACK})
        cls.shadow = write_bundle(os.path.join(cls.work, "shadow"),
                                  {"zz_allow_attack.lua": ALLOW_ATTACK,
                                   "zz_hostile.lua": HOSTILE})
        cls.srv = start_dev(top="shadow_policy_dir = %s\n" % cls.shadow,
                            quota=1000000, policy_dir=cls.live)
        cls.env = cls.srv.env
        cls.admin = cls.env["INTENTGATE_ADMIN_TOKEN"]
        cls.agent = cls.env["INTENTGATE_AGENT_TOKEN"]
        cls.submitted = 0

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        log = cls.srv.log()
        cls.srv.cleanup()
        shutil.rmtree(cls.work, ignore_errors=True)
        assert rc == 0, log[-4000:]
        assert "Sanitizer" not in log, log[-4000:]

    def submit(self, action, resource="r/1", params=None, **extra):
        st, body, _ = self.srv.submit(action, resource,
                                      params if params is not None else {},
                                      **extra)
        if st == 201:
            type(self).submitted += 1
        return st, body

    def summary(self):
        st, body, _ = self.srv.call("GET", "/v1/policy/shadow", self.admin)
        self.assertEqual(st, 200, body)
        return body

    def settle_shadow(self):
        """Wait until the shadow has looked at (or dropped) every decision
        submitted so far."""
        def done():
            s = self.summary()
            return s["evaluated"] + s["dropped"] >= type(self).submitted and s
        return wait_until(done, "the shadow to catch up", timeout=120)

    def test_hostile_shadow_changes_no_live_decision(self):
        for action in ("payments.atk-loop", "payments.atk-mem", "payments.atk-rec",
                       "payments.atk-count", "payments.atk-quota", "payments.atk-escalate"):
            t0 = time.monotonic()
            st, body = self.submit(action)
            took = time.monotonic() - t0
            self.assertEqual(st, 201, body)
            self.assertEqual(body["decision"], "ALLOW", (action, body))
            self.assertIn("grant", body)
            # The reply never waits for the shadow (a loop is cut at the
            # wall limit, 50 ms; seconds are a shadow on the reply path or
            # on a lock the reply needs; 3 s: a slow CI machine is not it).
            self.assertLess(took, 3.0, action)
        s = self.settle_shadow()
        self.assertGreaterEqual(s["errors"], 4, s)  # loop, mem, rec, count
        st, body, _ = self.srv.call("GET", "/healthz")
        self.assertEqual(st, 200)

    def test_shadow_count_never_touches_the_store(self):
        # attack.count hits k1..k1000000, attack.quota the live quota's own
        # key 200 times: none of it may reach the store's counters.
        for action in ("payments.atk-count", "payments.atk-quota", "payments.atk-quota"):
            st, body = self.submit(action)
            self.assertEqual(body["decision"], "ALLOW", body)
        self.settle_shadow()

        def counts():
            return self.srv.rows("SELECT key, sum(hits) AS n FROM "
                                 "counter_counts GROUP BY key")
        rows = wait_until(lambda: counts() or None, "the live counters")
        for r in rows:
            self.assertTrue(r["key"].startswith("intents:"), rows)
            # One hit per live evaluation (submissions, and re-evaluations
            # at quorum, none here): never the shadow's 200 per intent.
            self.assertLessEqual(int(r["n"]), type(self).submitted + 5, rows)

    def test_agent_never_sees_shadow_or_trace(self):
        st, body = self.submit("payments.dis-peek", "o/peek")
        self.assertEqual(body["decision"], "ALLOW", body)
        st2, esc = self.submit("payments.refund", "o/peek", {"amount": 500})
        self.assertEqual(esc["decision"], "ESCALATE", esc)
        self.settle_shadow()
        seen = []
        for b in (body, esc):
            iid = b["intent_id"]
            seen.append(json.dumps(b))
            for path in ("/v1/intents/" + iid,
                         "/v1/intents/%s?wait=1" % iid):
                code, rec, _ = self.srv.call("GET", path, self.agent)
                seen.append(json.dumps(rec))
                if code == 200:
                    self.assertNotIn("trace", set(walk_keys(rec)), rec)
                    self.assertNotIn("shadow", set(walk_keys(rec)), rec)
        for text in seen:
            for word in ("SHADOW_ONLY_REASON", "shadow says no", "trace",
                         "zz_hostile", "refund.lua", "shadow_revision"):
                self.assertNotIn(word, text)
        # Nor the shadow summary, nor the audit log, with an agent token.
        for path in ("/v1/policy/shadow",):
            code, rec, _ = self.srv.call("GET", path, self.agent)
            self.assertIn(code, (401, 403), rec)
            self.assertNotIn("SHADOW_ONLY_REASON", json.dumps(rec))
        code, rec, _ = self.srv.call("GET", "/v1/policy/shadow")
        self.assertEqual(code, 401, rec)

    def test_summary_is_for_admins_only(self):
        for name in ("INTENTGATE_AGENT_TOKEN", "INTENTGATE_EXECUTOR_TOKEN",
                     "INTENTGATE_AUDITOR_TOKEN"):
            code, rec, _ = self.srv.call("GET", "/v1/policy/shadow",
                                         self.env[name])
            self.assertIn(code, (401, 403), (name, rec))
        approver = login(self.srv, "dev-approver")
        code, rec, _ = self.srv.call("GET", "/v1/policy/shadow", approver)
        self.assertIn(code, (401, 403), rec)
        for bad in ("Bearer", "Bearer " + "x" * 5000, "Basic YTpi"):
            code, rec, _ = self.srv.call("GET", "/v1/policy/shadow",
                                         headers={"Authorization": bad})
            self.assertIn(code, (400, 401, 403), (bad[:20], rec))
        # Nothing else than GET.
        code, rec, _ = self.srv.call("POST", "/v1/policy/shadow", self.admin,
                                     {})
        self.assertIn(code, (404, 405), rec)

    def test_one_disagreement_event_per_decision(self):
        ids = []
        for i in range(5):
            st, body = self.submit("payments.dis-once", "o/once-%d" % i)
            ids.append(body["intent_id"])
        # Idempotent replays of one intent (the same key, 20 times, some
        # at once) are one decision: one event.
        key = "idem-%s" % os.urandom(4).hex()
        st, first = self.submit("payments.dis-idem", "o/idem",
                                idempotency_key=key)
        ids.append(first["intent_id"])
        from harness import parallel
        again = parallel(10, lambda i: self.srv.submit(
            "payments.dis-idem", "o/idem", {}, idempotency_key=key))
        again += [self.srv.submit("payments.dis-idem", "o/idem", {},
                                  idempotency_key=key) for _ in range(10)]
        for code, body, _ in again:
            self.assertEqual((code, body["intent_id"]),
                             (200, first["intent_id"]), body)
        st, ok = self.submit("payments.refund", "o/agree", {"amount": 1})
        self.settle_shadow()

        def events():
            evs = [e for e in self.srv.audit_events()
                   if e.get("type") == "policy.shadow_disagreed"]
            got = [e for e in evs if e.get("intent_id") in ids]
            return len(got) == len(ids) and evs
        evs = wait_until(events, "a disagreement event per intent", 60)
        by = {}
        for e in evs:
            by[e["intent_id"]] = by.get(e["intent_id"], 0) + 1
        for iid in ids:
            self.assertEqual(by.get(iid), 1, iid)
        self.assertNotIn(ok["intent_id"], by)
        for e in evs:
            if e["intent_id"] in ids:
                self.assertEqual(e["live"]["decision"], "ALLOW", e)
                self.assertEqual(e["shadow"]["decision"], "BLOCK", e)
        # No intent has more than one (a decision is one disagreement).
        self.assertLessEqual(max(by.values()), 1, by)

    def test_action_label_is_capped(self):
        n = 90
        for i in range(n):
            st, body = self.submit("payments.dis-a%03d" % i)
            self.assertEqual(st, 201, body)
        self.settle_shadow()
        samples = metric_samples(metrics(self.srv),
                                 "intentgate_shadow_disagreements_total")
        actions = {lab.get("action") for lab, _ in samples}
        self.assertLessEqual(len(actions), 65, sorted(actions))
        self.assertIn("other", actions)
        total = sum(v for lab, v in samples
                    if lab.get("action", "").startswith("payments.dis-a")
                    or lab.get("action") == "other")
        self.assertGreaterEqual(total, n, samples)

    def test_exposition_stays_well_formed(self):
        # The agent cannot put quotes, backslashes or newlines in an
        # action (refused at intake); it can in a resource, which is not
        # a label. Whatever it sends, every sample line parses.
        for action in ('disagree.x"} 1\nevil 1', "payments.dis-x\\", "Disagree"):
            st, body = self.submit(action)
            self.assertEqual(st, 400, body)
        self.submit("payments.dis-res", 'r"}\n# EOF\nevil_metric 1\\')
        self.settle_shadow()
        text = metrics(self.srv)
        self.assertNotIn("evil_metric", text)
        for name in ("intentgate_shadow_disagreements_total",
                     "intentgate_shadow_evaluations_total",
                     "intentgate_shadow_dropped_total",
                     "intentgate_shadow_errors_total"):
            self.assertIn(name, text)
            metric_samples(text, name)  # raises on a malformed line

    def test_sighup_while_deciding(self):
        # Rewrite the shadow bundle in place (half-written files, a failing
        # test, a good one) and send SIGHUP under load: the server keeps
        # deciding the same, never dies, and ends on the last good shadow.
        stop = threading.Event()
        bad = []

        def load():
            i = 0
            while not stop.is_set():
                st, body, _ = self.srv.submit("payments.refund", "o/hup-%d" % i,
                                              {"amount": 1})
                if st == 201:
                    type(self).submitted += 1
                i += 1
                if st != 201 or body.get("decision") != "ALLOW":
                    bad.append((st, body))
        t = threading.Thread(target=load)
        t.start()
        try:
            before = self.summary()["shadow_revision"]
            variants = [
                {"zz_hostile.lua": HOSTILE[:len(HOSTILE) // 2]},
                {"zz_fail_test.lua": FAILING_TEST},
                {"zz_fail_test.lua": None, "zz_hostile.lua": HOSTILE + "\n"},
            ]
            for i in range(12):
                ch = dict(variants[i % 3])
                ch.setdefault("zz_allow_attack.lua", ALLOW_ATTACK)
                if "zz_hostile.lua" not in ch:
                    ch["zz_hostile.lua"] = HOSTILE
                write_bundle(self.shadow, ch)
                self.srv.signal(signal.SIGHUP)
                time.sleep(0.05)  # load between the signals, not a sync
            write_bundle(self.shadow, {"zz_allow_attack.lua": ALLOW_ATTACK,
                                       "zz_hostile.lua": HOSTILE + "\n\n"})
            want = revision(self.shadow)
            self.assertNotEqual(want, before)
            # SIGHUPs that come while a reload still runs its tests are
            # one more reload when it ends (F9: they were refused): one
            # signal after the last write is enough.
            self.srv.signal(signal.SIGHUP)
            wait_until(lambda: self.summary()["shadow_revision"] == want,
                       "the last shadow bundle to load", 60)
        finally:
            stop.set()
            t.join()
        self.assertEqual(bad, [])
        self.assertIsNone(self.srv.proc.poll(), self.srv.log()[-3000:])
        s = self.summary()
        self.assertNotEqual(s["shadow_revision"], s["live_revision"])
        # Refusals were recorded, and the live bundle never moved.
        evs = [e["type"] for e in self.srv.audit_events()]
        self.assertIn("policy.shadow_reload_refused", evs)
        self.assertEqual(s["live_revision"], revision(self.live))


class ShadowQuota(unittest.TestCase):
    """Live quota 10 a minute; the shadow counts the live quota's key 200
    times per intent: the live decisions never see it."""

    def test_live_quota_unmoved(self):
        work = tempfile.mkdtemp(prefix="ig-atk-quota-")
        live = write_bundle(os.path.join(work, "live"),
                            {"zz_allow_attack.lua": ALLOW_ATTACK})
        shadow = write_bundle(os.path.join(work, "shadow"),
                              {"zz_allow_attack.lua": ALLOW_ATTACK,
                               "zz_hostile.lua": HOSTILE})
        srv = start_dev(top="shadow_policy_dir = %s\n" % shadow, quota=10,
                        policy_dir=live)
        try:
            admin = srv.env["INTENTGATE_ADMIN_TOKEN"]
            for _ in range(3):
                st, body, _ = srv.submit("payments.atk-quota", "r/1", {})
                self.assertEqual(body["decision"], "ALLOW", body)
            wait_until(lambda: srv.call("GET", "/v1/policy/shadow", admin)[1]
                       ["evaluated"] >= 3, "the shadow to evaluate", 60)
            for i in range(6):
                st, body, _ = srv.submit("payments.refund", "o/%d" % i,
                                         {"amount": 1})
                self.assertEqual(body["decision"], "ALLOW", body)
            # The control: the live quota does hold at 10.
            last = None
            for i in range(3):
                st, last, _ = srv.submit("payments.refund", "o/x%d" % i,
                                         {"amount": 1})
            self.assertIn("QUOTA_EXCEEDED", json.dumps(last))
        finally:
            finish(self, srv)
            shutil.rmtree(work, ignore_errors=True)


COUNT_HOARD = """-- zz_hoard.lua - a count() key per i, a day's window.
return function(intent)
  if intent.action == "payments.atk-hoard" then
    for i = 1, 20000 do count("hoard:" .. i, 86400) end
  end
  return nil
end
"""


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))


class ShadowMemory(unittest.TestCase):
    """The shadow's own count() memory is outside the Lua heap cap (16 MiB
    per engine): a shadow bundle that counts 20,000 keys over a day's
    window, one intent a second, must not grow the PDP without bound (here
    300 seconds; in production a day is 86,400 of them)."""

    def test_count_memory_is_bounded(self):
        work = tempfile.mkdtemp(prefix="ig-atk-hoard-")
        live = write_bundle(os.path.join(work, "live"),
                            {"zz_allow_attack.lua": ALLOW_ATTACK})
        shadow = write_bundle(os.path.join(work, "shadow"),
                              {"zz_allow_attack.lua": ALLOW_ATTACK,
                               "zz_hoard.lua": COUNT_HOARD})
        # Under AddressSanitizer (CI's sanitizer job) freed memory is held
        # in a quarantine and counts in RSS: none, for this measure.
        saved = os.environ.get("ASAN_OPTIONS")
        os.environ["ASAN_OPTIONS"] = ((saved + ":") if saved else "") + \
            "quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
        try:
            srv = start_dev(top="shadow_policy_dir = %s\n" % shadow,
                            quota=1000000, policy_dir=live, clock=True)
        finally:
            if saved is None:
                os.environ.pop("ASAN_OPTIONS", None)
            else:
                os.environ["ASAN_OPTIONS"] = saved
        admin = srv.env["INTENTGATE_ADMIN_TOKEN"]

        def evaluated():
            return srv.call("GET", "/v1/policy/shadow", admin)[1]["evaluated"]
        try:
            n = 0
            for _ in range(5):
                srv.submit("payments.atk-hoard", "r", {})
                n += 1
                srv.advance(1)
            wait_until(lambda: evaluated() >= n, "the shadow", 60)
            before = rss_kib(srv.proc.pid)
            for _ in range(300):
                st, body, _ = srv.submit("payments.atk-hoard", "r", {})
                self.assertEqual(body["decision"], "ALLOW", body)
                n += 1
                srv.advance(1)
                # One at a time: each evaluated at its own second.
                wait_until(lambda: evaluated() >= n, "the shadow", 60)
            grown = rss_kib(srv.proc.pid) - before
            self.assertLess(grown, 64 * 1024,
                            "the PDP grew %d MiB for a shadow's count()"
                            % (grown // 1024))
        finally:
            finish(self, srv)
            shutil.rmtree(work, ignore_errors=True)


FAKE_CODES = """-- zz_fake_codes.lua - a live policy that blocks with reason codes
-- the server itself uses after the policies (NO_EXECUTOR at intake,
-- APPROVAL_NOT_SUFFICIENT at quorum).
return function(intent)
  if intent.action == "payments.atk-fake1" then
    return BLOCK{reason = "NO_EXECUTOR"}
  end
  if intent.action == "payments.atk-fake2" then
    return BLOCK{reason = "APPROVAL_NOT_SUFFICIENT"}
  end
  return nil
end
"""

SLOW_TESTS = """-- zz_slow_test.lua - cases that pass, each at the instruction budget.
local cases = {}
for i = 1, 3000 do
  cases[i] = { name = "spin " .. i, intent = { action = "payments.atk-spin" },
               expect = "BLOCK" }
end
return cases
"""

SPIN = """-- zz_spin.lua
return function(intent)
  if intent.action == "payments.atk-spin" then while true do end end
  return nil
end
"""


class ShadowCompare(unittest.TestCase):
    """What the shadow compares with must be what the live policies said,
    not a guess from the reasons; and a shadow reload must not hold the
    live one."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="ig-atk-cmp-")
        self.live = write_bundle(os.path.join(self.work, "live"),
                                 {"zz_allow_attack.lua": ALLOW_ATTACK,
                                  "zz_fake_codes.lua": FAKE_CODES})
        self.shadow = write_bundle(os.path.join(self.work, "shadow"),
                                   {"zz_allow_attack.lua": ALLOW_ATTACK})
        self.srv = start_dev(top="shadow_policy_dir = %s\n" % self.shadow,
                             quota=1000000, policy_dir=self.live)
        self.admin = self.srv.env["INTENTGATE_ADMIN_TOKEN"]

    def tearDown(self):
        t0 = time.monotonic()
        rc = self.srv.stop()
        took = time.monotonic() - t0
        log = self.srv.log()
        self.srv.cleanup()
        shutil.rmtree(self.work, ignore_errors=True)
        self.assertEqual(rc, 0, log[-3000:])
        self.assertLess(took, 10, "the stop took %.1f s" % took)

    def summary(self):
        st, body, _ = self.srv.call("GET", "/v1/policy/shadow", self.admin)
        self.assertEqual(st, 200, body)
        return body

    def test_live_block_with_a_server_code_is_a_block(self):
        # Live BLOCK [NO_EXECUTOR] from a policy, shadow ALLOW: a shadow
        # that would let through what live blocks must show up.
        ids = []
        for action in ("payments.atk-fake1", "payments.atk-fake2"):
            st, body, _ = self.srv.submit(action, "r", {})
            self.assertEqual(body["decision"], "BLOCK", body)
            ids.append(body["intent_id"])
        wait_until(lambda: self.summary()["evaluated"] >= 2, "the shadow")

        def events():
            evs = [e for e in self.srv.audit_events()
                   if e.get("type") == "policy.shadow_disagreed" and
                   e.get("intent_id") in ids]
            return len(evs) == 2 and evs
        evs = wait_until(events, "both disagreements (live BLOCK, shadow "
                         "ALLOW)", 20)
        for e in evs:
            self.assertEqual(e["live"]["decision"], "BLOCK", e)
            self.assertEqual(e["shadow"]["decision"], "ALLOW", e)

    def test_slow_shadow_reload_does_not_hold_the_live_one(self):
        # A shadow bundle whose 3,000 test cases each spin to the budget
        # (they pass: a limit is a BLOCK) takes half a minute to test. A
        # live reload signalled meanwhile must not wait for it.
        write_bundle(self.shadow, {"zz_allow_attack.lua": ALLOW_ATTACK,
                                   "zz_spin.lua": SPIN,
                                   "zz_slow_test.lua": SLOW_TESTS})
        self.srv.signal(signal.SIGHUP)
        write_bundle(self.live, {"zz_allow_attack.lua": ALLOW_ATTACK,
                                 "zz_fake_codes.lua": FAKE_CODES + "\n"})
        want = revision(self.live)
        t0 = time.monotonic()
        self.srv.signal(signal.SIGHUP)
        wait_until(lambda: self.summary()["live_revision"] == want,
                   "the live reload (held by the shadow's tests?)", 10)
        # The agent's intents are decided meanwhile.
        st, body, _ = self.srv.submit("payments.refund", "o/1", {"amount": 1})
        self.assertEqual(body["decision"], "ALLOW", body)
        self.assertLess(time.monotonic() - t0, 10)


class ShadowQueue(unittest.TestCase):
    """A flood of intents the shadow spends its whole budget on: the queue
    stays bounded (drops counted), the live replies keep coming, and a stop
    with a full queue is prompt."""

    def test_flood_then_stop(self):
        work = tempfile.mkdtemp(prefix="ig-atk-flood-")
        live = write_bundle(os.path.join(work, "live"),
                            {"zz_allow_attack.lua": ALLOW_ATTACK})
        shadow = write_bundle(os.path.join(work, "shadow"),
                              {"zz_allow_attack.lua": ALLOW_ATTACK,
                               "zz_hostile.lua": HOSTILE})
        srv = start_dev(top="shadow_policy_dir = %s\n" % shadow,
                        quota=1000000, policy_dir=live)
        try:
            from harness import parallel
            n_threads, per = 8, 40

            def flood(i):
                worst = 0.0
                for j in range(per):
                    t0 = time.monotonic()
                    st, body, _ = srv.submit("payments.atk-loop", "r/%d/%d" % (i, j),
                                             {})
                    worst = max(worst, time.monotonic() - t0)
                    if st != 201 or body["decision"] != "ALLOW":
                        return ("bad", st, body)
                return worst
            res = parallel(n_threads, flood)
            for r in res:
                self.assertIsInstance(r, float, r)
            st, body, _ = srv.call("GET", "/v1/policy/shadow",
                                   srv.env["INTENTGATE_ADMIN_TOKEN"])
            self.assertEqual(st, 200, body)
            self.assertLessEqual(body["evaluated"] + body["dropped"],
                                 n_threads * per, body)
            t0 = time.monotonic()
        finally:
            rc = srv.stop()
        took = time.monotonic() - t0
        log = srv.log()
        srv.cleanup()
        shutil.rmtree(work, ignore_errors=True)
        self.assertEqual(rc, 0, log[-3000:])
        self.assertNotIn("Sanitizer", log)
        # 320 queued jobs of 50 ms each would be 16 s: a prompt stop
        # drops them.
        self.assertLess(took, 5.0, "stop took %.1f s" % took)


class ShadowConfig(unittest.TestCase):
    """The live dir given as the shadow dir under another spelling: it
    must be refused like the same string (a shadow equal to live would
    hide every disagreement)."""

    def start_with(self, make_top):
        srv = Server.dev()
        srv.stop()
        conf = os.path.join(srv.data, "intentgate.conf")
        pol = os.path.join(srv.data, "policies")
        link = os.path.join(srv.tmp, "link-to-policies")
        os.symlink(pol, link)
        top = make_top(pol, link)
        with open(conf) as f:
            text = f.read()
        text = re.sub(r"^(policy_dir = .*\n)", lambda m: m.group(1) + top,
                      text, count=1, flags=re.M)
        with open(conf, "w") as f:
            f.write(text)
        try:
            s2 = Server.dev(tmp=srv.tmp)
        except RuntimeError as e:
            srv.cleanup()
            return str(e)
        s2.stop()
        s2.cleanup()
        return None

    def test_shadow_dir_in_user_layouts(self):
        # Under the clone and under /var/lib, with a space and a non-ASCII
        # letter in the path: taken, and its revision is the directory's.
        for root in (os.path.join(ROOT, "build"), "/var/lib"):
            os.makedirs(root, exist_ok=True)
            w = tempfile.mkdtemp(prefix="ig atk \u00fc ", dir=root)
            try:
                sh = write_bundle(os.path.join(w, "shadow dir"),
                                  {"zz_allow_attack.lua": ALLOW_ATTACK,
                                   "zz_hostile.lua": HOSTILE})
                srv = start_dev(top="shadow_policy_dir = %s\n" % sh,
                                quota=1000000)
                try:
                    st, body, _ = srv.call("GET", "/v1/policy/shadow",
                                           srv.env["INTENTGATE_ADMIN_TOKEN"])
                    self.assertEqual(st, 200, body)
                    self.assertEqual(body["shadow_revision"], revision(sh))
                finally:
                    finish(self, srv)
            finally:
                shutil.rmtree(w, ignore_errors=True)

    def test_same_dir_under_another_name_is_refused(self):
        for make in (lambda pol, link: "shadow_policy_dir = policies\n",
                     lambda pol, link: "shadow_policy_dir = ./policies\n",
                     lambda pol, link: "shadow_policy_dir = %s/\n" % pol,
                     lambda pol, link: "shadow_policy_dir = %s\n" % link):
            err = self.start_with(make)
            self.assertIsNotNone(err, make("/P", "/L"))
            self.assertIn("shadow_policy_dir", err)


# ==== the explain trace ====

ECHO = """-- zz_echo.lua - escalates with agent text in its message.
return function(intent)
  if intent.action ~= "payments.atk-echo" then return nil end
  local note = type(intent.params) == "table" and intent.params.note or ""
  return ESCALATE{approvers = {"finance"}, reason = "ECHO_REASON",
                  message = "note: " .. tostring(note)}
end
"""

PROBE = """-- zz_probe.lua - is the coverage probe reachable in the server?
return function(intent)
  if intent.action ~= "payments.atk-probe" then return nil end
  for _, n in ipairs({"__igcov", "__cov", "_igcov", "igcov"}) do
    local ok, v = pcall(function() return _ENV[n] end)
    if ok and v ~= nil then return BLOCK{reason = "PROBE_SEEN"} end
  end
  return ALLOW
end
"""

XSS = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>'
# A policy file name is the author's, but it reaches an approver's page.
XSS_FILE = 'zz_<b>x<i>"&.lua'


class Trace(unittest.TestCase):
    """The trace: never shown to the agent; escaped wherever agent or
    policy text reaches a page or a terminal; hashed into the log."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="ig-atk-trace-")
        cls.live = write_bundle(os.path.join(cls.work, "live"),
                                {"zz_echo.lua": ECHO, "zz_probe.lua": PROBE})
        cls.srv = start_dev(policy_dir=cls.live)
        cls.env = cls.srv.env
        cls.agent = cls.env["INTENTGATE_AGENT_TOKEN"]

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        cls.srv.cleanup()
        shutil.rmtree(cls.work, ignore_errors=True)

    def decided(self, iid):
        def find():
            for e in self.srv.audit_events():
                if e.get("type") == "intent.decided" and \
                        e.get("intent_id") == iid:
                    return e
            return None
        return wait_until(find, "intent.decided of " + iid)

    def test_no_coverage_probe_in_the_server(self):
        st, body, _ = self.srv.submit("payments.atk-probe", "r", {})
        self.assertEqual(st, 201, body)
        self.assertEqual(body["decision"], "ALLOW", body)

    def test_reply_has_no_trace(self):
        cases = [("payments.refund", "o/1", {"amount": 1}),
                 ("payments.refund", "o/2", {"amount": 500}),
                 ("payments.refund", "o/3", {"amount": 5000}),
                 ("payments.atk-echo", "o/4", {"note": "hi"}),
                 ("nothing.matches", "o/5", {})]
        for action, res, params in cases:
            st, body, _ = self.srv.submit(action, res, params)
            self.assertIn(st, (200, 201), body)
            text = json.dumps(body)
            self.assertNotIn("trace", set(walk_keys(body)), body)
            for word in ("refund.lua", "quota.lua", "zz_echo", ".lua"):
                self.assertNotIn(word, text, body)
            code, rec, _ = self.srv.call("GET", "/v1/intents/" +
                                         body["intent_id"], self.agent)
            self.assertNotIn("trace", set(walk_keys(rec)), rec)
            self.assertNotIn(".lua", json.dumps(rec), rec)
            # The log has it (the point of the feature).
            ev = self.decided(body["intent_id"])
            self.assertIn("trace", ev, ev)
        # After quorum (the re-evaluation has a trace of its own), the
        # agent's view of the intent, long poll included, still has none.
        st, esc, _ = self.srv.submit("payments.refund", "o/q", {"amount": 500})
        self.assertEqual(esc["decision"], "ESCALATE", esc)
        self.assertEqual(vote(self.srv, login(self.srv, "dev-approver"),
                              esc)[0], 200)
        for path in ("/v1/intents/" + esc["intent_id"],
                     "/v1/intents/%s?wait=1" % esc["intent_id"]):
            code, rec, _ = self.srv.call("GET", path, self.agent)
            self.assertEqual(code, 200, rec)
            self.assertNotIn("trace", set(walk_keys(rec)), rec)
            self.assertNotIn(".lua", json.dumps(rec), rec)

    def test_approval_page_escapes_trace(self):
        from test_ui import Browser
        st, body, _ = self.srv.submit("payments.atk-echo", "o/x", {"note": XSS})
        self.assertEqual(body["decision"], "ESCALATE", body)
        b = Browser(self.srv)
        b.login()
        page = b.get("/ui/approvals/" + body["approval"]["id"])
        self.assertEqual(page.status, 200, page.body[:500])
        self.assertNotIn("<script>alert(1)", page.body)
        self.assertNotIn("<img src=x", page.body)
        self.assertIn("ECHO_REASON", page.body)  # the Why: line is there
        self.assertIn("zz_echo.lua", page.body)
        # The audit pages show intent.decided with its trace: escaped too.
        audit = b.get("/ui/audit")
        self.assertEqual(audit.status, 200, audit.body[:300])
        for path in re.findall(r'href="(/ui/audit[^"]*)"', audit.body)[:20]:
            sub = b.get(path.replace("&amp;", "&"))
            ctype = sub.header("Content-Type") or ""
            if not ctype.startswith("text/html"):
                # An export (JSON) carries the text as it is: never
                # rendered as a page.
                self.assertEqual(sub.header("X-Content-Type-Options"),
                                 "nosniff", (path, ctype))
                continue
            self.assertNotIn("<script>alert(1)", sub.body, path)
            self.assertNotIn("<img src=x", sub.body, path)
        self.assertNotIn("<script>alert(1)", audit.body)
        self.assertNotIn("<img src=x", audit.body)

    def test_audit_show_on_a_terminal_escapes(self):
        st, body, _ = self.srv.submit("payments.atk-echo", "o/" + TERM_ATTACK,
                                      {"note": TERM_ATTACK})
        self.assertEqual(body["decision"], "ESCALATE", body)
        self.decided(body["intent_id"])
        rc, out = on_tty("audit", "show", body["intent_id"], "--db",
                         self.srv.store())
        self.assertEqual(rc, 0, out)
        self.assertIn(b"zz_echo.lua", out)
        bad = [c for c in CONTROL.findall(out.replace(b"\r\n", b"\n"))]
        self.assertEqual(bad, [], out)
        # Piped (a log collector): the same.
        rc, raw, err = ig_raw("audit", "show", body["intent_id"], "--db",
                              self.srv.store())
        self.assertEqual(rc, 0, err)
        self.assertEqual(CONTROL.findall(raw), [], raw)

    def test_replay_on_a_running_server(self):
        # What operators will do: replay the live database while the PDP
        # decides. The replay reads (exit 0/1), the PDP keeps deciding,
        # and nothing of the replay is left beside a SQLite file.
        for i in range(30):
            self.srv.submit("payments.refund", "o/live-%d" % i, {"amount": 1})
        settings = os.path.join(self.work, "settings.json")
        with open(settings, "w") as f:
            json.dump({"quota_per_minute": 6000}, f)
        stop = threading.Event()
        bad = []

        def load():
            i = 0
            while not stop.is_set():
                t0 = time.monotonic()
                st, body, _ = self.srv.submit("payments.refund",
                                              "o/during-%d" % i, {"amount": 1})
                if st != 201 or time.monotonic() - t0 > 5:
                    bad.append((st, body))
                i += 1
        t = threading.Thread(target=load)
        t.start()
        try:
            for _ in range(3):
                rc, out, err = ig("policy", "replay", "--db", self.srv.store(),
                                  "--bundle", self.live, "--settings",
                                  settings, "--format", "json")
                self.assertIn(rc, (0, 1), out + err)
                json.loads(out)
        finally:
            stop.set()
            t.join()
        self.assertEqual(bad, [])
        if not self.srv.on_postgres():
            # The PDP's own -wal/-shm, and nothing else the replay made.
            left = sorted(n for n in os.listdir(os.path.dirname(
                self.srv.sqlite_path())) if n.startswith("intentgate.db"))
            self.assertLessEqual(set(left), {"intentgate.db",
                                             "intentgate.db-wal",
                                             "intentgate.db-shm"}, left)

    def test_file_name_escaped_on_the_page(self):
        # A policy file name reaches the approver's page through the trace.
        work = tempfile.mkdtemp(prefix="ig-atk-xssname-")
        live = write_bundle(os.path.join(work, "live"), {
            "zz_echo.lua": ECHO,
            XSS_FILE: "return function(i)\n  if i.action == 'payments.atk-echo' "
                      "then return ESCALATE{approvers = {'finance'}, "
                      "reason = 'NAMED'} end\nend\n"})
        try:
            srv = start_dev(policy_dir=live)
        except RuntimeError as e:
            # Refusing such a name at load is a fine answer too.
            self.assertIn("policy file names may only use", str(e))
            shutil.rmtree(work, ignore_errors=True)
            return
        try:
            from test_ui import Browser
            st, body, _ = srv.submit("payments.atk-echo", "o/x", {"note": "n"})
            self.assertEqual(body["decision"], "ESCALATE", body)
            b = Browser(srv)
            b.login()
            page = b.get("/ui/approvals/" + body["approval"]["id"])
            self.assertEqual(page.status, 200, page.body[:500])
            self.assertIn("NAMED", page.body)
            self.assertNotIn("<b>x</b>", page.body)
            self.assertNotIn('x</b>"&.lua', page.body)
        finally:
            finish(self, srv)
            shutil.rmtree(work, ignore_errors=True)

    def test_trace_is_hashed_into_the_log(self):
        # Its own server, stopped before the copy (a PostgreSQL template
        # must have no connection).
        srv = start_dev(policy_dir=self.live)
        st, body, _ = srv.submit("payments.refund", "o/h", {"amount": 7})
        iid = body["intent_id"]
        srv.settled()
        ev = [e for e in srv.audit_events() if e.get("type") ==
              "intent.decided" and e.get("intent_id") == iid][0]
        self.assertTrue(ev.get("trace"), ev)
        srv.stop()
        key = srv.env["INTENTGATE_AUDIT_KEY"]
        rc, out, err = ig("audit", "verify", "--db", srv.store(),
                          "--key", key)
        self.assertEqual(rc, 0, out + err)
        body = {"intent_id": iid}
        db = Db(srv.store(), self.work)
        try:
            seq = [r for r in db.rows("SELECT seq, event FROM audit_events "
                                      "ORDER BY seq")
                   if json.loads(r["event"]).get("intent_id") ==
                   body["intent_id"] and json.loads(r["event"])["type"] ==
                   "intent.decided"][0]["seq"]
            e = json.loads([r for r in db.rows(
                "SELECT seq, event FROM audit_events ORDER BY seq")
                if r["seq"] == seq][0]["event"])
            e["trace"][0]["verdict"] = "BLOCK"
            db.execute("UPDATE audit_events SET event = ? WHERE seq = ?",
                       (json.dumps(e, separators=(",", ":")), seq))
            rc, out, err = ig("audit", "verify", "--db", db.path, "--key", key)
            self.assertEqual(rc, 1, out + err)
            self.assertIn("FAILED", out)
        finally:
            db.drop()
            srv.cleanup()


# ==== policy replay ====

ALLOW_NOEXEC = """-- zz_noexec.lua - allows an action no executor takes.
return function(intent)
  if intent.action == "zz.noexec" then return ALLOW end
  return nil
end
"""

LOOP_ON_ONE = """-- zz_loop.lua - loops forever on one recorded intent.
return function(intent)
  if intent.resource == "o/loop" then while true do end end
  return nil
end
"""

BLOCK_FORMULAS = """-- zz_formula.lua - blocks the CSV attack resources.
return function(intent)
  if intent.action ~= "payments.refund" then return nil end
  local r = intent.resource
  if r:sub(1, 1) == "=" or r:sub(1, 1) == "+" or r:sub(1, 1) == "@" or
     r:find("\\27", 1, true) or r:find("\\n", 1, true) then
    return BLOCK{reason = "FORMULA"}
  end
  return nil
end
"""

CSV_RESOURCES = ['=cmd|" /C calc"!A0', '+SUM(1,2)', '@HYPERLINK("x")',
                 'a,"b"\r\nc', 'line\nbreak']


class Replay(unittest.TestCase):
    """A database recorded by a real server (quota 5 a minute, on the test
    clock; an approved escalation with two votes, a denied one, an
    expired one, quota blocks, agent text with CSV and terminal attacks),
    then stopped and replayed."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="ig-atk-replay-")
        os.chmod(cls.work, 0o755)  # the read-only case runs as nobody
        cls.settings = os.path.join(cls.work, "settings.json")
        with open(cls.settings, "w") as f:
            json.dump({"quota_per_minute": 5}, f)
        cls.bundle = write_bundle(os.path.join(cls.work, "bundle"),
                                  {"zz_fake_codes.lua": FAKE_CODES,
                                   "zz_noexec.lua": ALLOW_NOEXEC})
        srv = start_dev(quota=5, policy_dir=cls.bundle, clock=True)
        cls.srv = srv
        dev, second = login(srv, "dev-approver"), login(srv, "second")
        ids = {}

        def sub(tag, action, res, params):
            st, body, _ = srv.submit(action, res, params)
            assert st == 201, body
            ids[tag] = body
            srv.advance(1)  # each decision a second of its own (--since)
            return body
        srv.advance(1)
        sub("loop", "payments.refund", "o/loop", {"amount": 2})
        sub("allow", "payments.refund", "o/1", {"amount": 1})
        esc = sub("approved", "payments.refund", "o/2", {"amount": 500})
        assert vote(srv, dev, esc)[0] == 200
        den = sub("denied", "payments.refund", "o/3", {"amount": 600})
        assert vote(srv, dev, den, "deny")[0] == 200
        sub("expired", "payments.refund", "o/4", {"amount": 700})
        # Quota 5 a minute: the 6th and later in this minute are blocked.
        for i in range(3):
            sub("quota%d" % i, "payments.refund", "o/q%d" % i, {"amount": 1})
        srv.advance(61)
        # Server codes: a real NO_EXECUTOR (the policies allowed an action
        # no executor takes) and policies that block with the server's own
        # codes as reasons: an unchanged bundle must see no change in any.
        sub("noexec", "zz.noexec", "r/1", {})
        sub("fake1", "payments.atk-fake1", "r/1", {})
        sub("fake2", "payments.atk-fake2", "r/1", {})
        srv.advance(61)
        for i, r in enumerate(CSV_RESOURCES):
            sub("csv%d" % i, "payments.refund", r, {"amount": 1})
        srv.advance(61)
        sub("term", "payments.refund", "o/" + TERM_ATTACK, {"amount": 1})
        srv.advance(3600)  # the expired one expires (sweep)
        sub("late", "payments.refund", "o/late", {"amount": 1})
        cls.ids = ids
        agent = srv.env["INTENTGATE_AGENT_TOKEN"]
        wait_until(lambda: srv.call("GET", "/v1/intents/" +
                                    ids["expired"]["intent_id"], agent)[1]
                   ["state"] == "BLOCKED", "the approval sweep", 30)
        srv.settled()
        srv.stop()
        cls.store = srv.store()
        cls.quota_blocked = [k for k, b in ids.items()
                             if "QUOTA_EXCEEDED" in json.dumps(b)]
        assert cls.quota_blocked, ids  # the recording did exercise it

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()
        shutil.rmtree(cls.work, ignore_errors=True)

    def replay(self, *extra, db=None, bundle=None, user=None, timeout=300):
        # The server's [policy] settings (quota_per_minute = 5), as the
        # operator must hand them to a replay.
        return ig("policy", "replay", "--db", db or self.store, "--bundle",
                  bundle or self.bundle, "--settings", self.settings, *extra,
                  user=user, timeout=timeout)

    def snapshot(self, path):
        st = os.stat(path)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        return digest, st.st_mtime_ns, st.st_size, \
            sorted(os.listdir(os.path.dirname(path)))

    def test_unchanged_bundle_zero_changes(self):
        rc, out, err = self.replay("--format", "json")
        self.assertEqual(rc, 0, out + err)
        json.loads(out)
        rc, out, err = self.replay()
        self.assertEqual(rc, 0, out + err)

    def decided_at(self, key):
        """When the first decision of the intent recorded as key was made
        (seconds since the epoch)."""
        iid = self.ids[key]["intent_id"]
        r = self.srv.rows("SELECT d.decided_at AS t FROM decisions d JOIN "
                          "intents i ON i.seq = d.intent_seq WHERE "
                          "i.intent_id = '%s' ORDER BY d.seq" % iid)
        return int(r[0]["t"])

    def test_since_warms_the_quota(self):
        # The quota blocks alone (--since at the first of them): the hits
        # before --since only warm the counters, and the blocks stay blocks.
        since = self.decided_at("quota0")
        until = self.decided_at("quota2") + 1
        self.assertGreater(since, self.decided_at("loop"))
        rc, out, err = self.replay("--since", str(since), "--until",
                                   str(until), "--format", "json")
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("QUOTA_EXCEEDED", json.dumps(
            json.loads(out).get("changes", [])), out)

    def test_read_only_sqlite_file_and_dir(self):
        if pg.is_url(self.store):
            # The PostgreSQL variant: a role that may only SELECT.
            role = "igro_%s" % os.urandom(3).hex()
            db = pg.dbname(self.store)
            pg.psql(self.store, "CREATE ROLE %s LOGIN; GRANT CONNECT ON "
                    "DATABASE %s TO %s; GRANT USAGE ON SCHEMA public TO %s; "
                    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO %s"
                    % (role, db, role, role, role))
            u = pg.with_dbname(self.store, db).replace("postgres@",
                                                       role + "@", 1)
            try:
                rc, out, err = self.replay(db=u)
                self.assertEqual(rc, 0, out + err)
            finally:
                pg.psql(self.store, "REASSIGN OWNED BY %s TO postgres; "
                        "DROP OWNED BY %s; DROP ROLE %s" % (role, role, role))
            return
        # Layouts users run: under the clone, under /var/lib, under /tmp.
        roots = [os.path.join(ROOT, "build"), "/var/lib", self.work]
        for root in roots:
            with self.subTest(root=root):
                os.makedirs(root, exist_ok=True)
                d = tempfile.mkdtemp(prefix="ig-atk-ro-", dir=root)
                try:
                    path = os.path.join(d, "intentgate.db")
                    shutil.copy2(self.store, path)
                    os.chmod(path, 0o444)
                    os.chmod(d, 0o555)
                    before = self.snapshot(path)
                    rc, out, err = self.replay(db=path)
                    self.assertEqual(rc, 0, out + err)
                    self.assertEqual(self.snapshot(path), before)
                    # And as a user who cannot write there at all (root
                    # ignores modes); the path must be reachable.
                    os.chmod(d, 0o755)
                    os.chmod(path, 0o644)
                    if reachable(path):
                        before = self.snapshot(path)
                        rc, out, err = self.replay(db=path, user="nobody")
                        self.assertEqual(rc, 0, out + err)
                        self.assertEqual(self.snapshot(path), before)
                finally:
                    os.chmod(d, 0o755)
                    shutil.rmtree(d, ignore_errors=True)

    def test_the_live_file_is_untouched(self):
        if pg.is_url(self.store):
            before = pg.rows(self.store, "SELECT (SELECT count(*) FROM "
                             "decisions) AS d, (SELECT count(*) FROM "
                             "audit_events) AS a, (SELECT count(*) FROM "
                             "counter_counts) AS c")
            self.assertEqual(self.replay()[0], 0)
            after = pg.rows(self.store, "SELECT (SELECT count(*) FROM "
                            "decisions) AS d, (SELECT count(*) FROM "
                            "audit_events) AS a, (SELECT count(*) FROM "
                            "counter_counts) AS c")
            self.assertEqual(before, after)
            return
        before = self.snapshot(self.store)
        rc, out, err = self.replay("--format", "csv")
        self.assertEqual(rc, 0, out + err)
        # Bytes, mtime, and the directory's listing (no -wal, -shm or
        # -journal made beside it).
        self.assertEqual(self.snapshot(self.store), before)

    def test_bundle_failing_its_tests_is_refused(self):
        b = write_bundle(os.path.join(self.work, "failing"),
                         {"zz_fail_test.lua": FAILING_TEST}, base=self.bundle)
        rc, out, err = self.replay(bundle=b)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("fails on purpose", out + err)

    def test_loop_on_one_intent_is_bounded(self):
        b = write_bundle(os.path.join(self.work, "loop"),
                         {"zz_loop.lua": LOOP_ON_ONE}, base=self.bundle)
        t0 = time.monotonic()
        rc, out, err = self.replay("--format", "json", bundle=b, timeout=120)
        self.assertLess(time.monotonic() - t0, 60)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("POLICY_LIMIT", out)
        self.assertIn(self.ids["loop"]["intent_id"], out)
        # Only that one changed.
        for k, b in self.ids.items():
            if k != "loop":
                self.assertNotIn(b["intent_id"], out, k)

    def test_csv_quotes_agent_text(self):
        b = write_bundle(os.path.join(self.work, "formula"),
                         {"zz_formula.lua": BLOCK_FORMULAS}, base=self.bundle)
        rc, out, err = self.replay("--format", "csv", bundle=b)
        self.assertEqual(rc, 1, out + err)
        rows = list(csv.reader(io.StringIO(out, newline="")))
        header, body = rows[0], rows[1:]
        col = header.index("resource")
        act = header.index("action")
        self.assertEqual(len(out.rstrip("\r\n").split("\n")), len(rows), out)
        body = [r for r in body if r[act] == "payments.refund"]
        got = [r[col] for r in body]
        for res in CSV_RESOURCES:
            # The agent's text, whole in its field: as it is, with the '
            # a formula guard adds, or with control characters escaped as
            # the text output does (\\n: one physical line per record).
            esc = res.replace("\r", "\\r").replace("\n", "\\n")
            self.assertTrue({res, "'" + res, esc, "'" + esc} & set(got),
                            (res, out))
        self.assertEqual(len(body), len(CSV_RESOURCES) + 1, out)  # + term

    def test_csv_formulas_are_neutralised(self):
        # RFC 4180 quoting keeps a field whole, but a spreadsheet still
        # runs a quoted "=cmd|..." : a field starting with = + - @ must be
        # guarded (OWASP: prefix ').
        b = write_bundle(os.path.join(self.work, "formula3"),
                         {"zz_formula.lua": BLOCK_FORMULAS}, base=self.bundle)
        rc, out, err = self.replay("--format", "csv", bundle=b)
        self.assertEqual(rc, 1, out + err)
        for row in csv.reader(io.StringIO(out, newline="")):
            for field in row:
                self.assertFalse(field[:1] in ("=", "+", "@"),
                                 "formula left live: %r" % field)

    def test_text_on_a_terminal_is_escaped(self):
        b = write_bundle(os.path.join(self.work, "formula2"),
                         {"zz_formula.lua": BLOCK_FORMULAS}, base=self.bundle)
        rc, out = on_tty("policy", "replay", "--db", self.store, "--bundle", b,
                         "--settings", self.settings)
        self.assertEqual(rc, 1, out)
        self.assertIn(self.ids["term"]["intent_id"].encode(), out)
        self.assertEqual(CONTROL.findall(out.replace(b"\r\n", b"\n")), [],
                         out)

    # ---- hostile rows ----

    def hostile(self, edit, want_seq=True):
        db = Db(self.store, self.work)
        try:
            seq = edit(db)
            t0 = time.monotonic()
            rc, out, err = self.replay("--format", "text", db=db.path,
                                       timeout=120)
            self.assertLess(time.monotonic() - t0, 60)
            not_crashed(self, rc, out + err)
            self.assertEqual(rc, 3, out + err)
            if want_seq and seq is not None:
                self.assertRegex(out + err, r"\b%d\b" % seq)
            self.assertRegex((out + err).lower(), r"unreadable|invalid|bad")
            return out + err
        finally:
            db.drop()

    def first_decision(self, db, key):
        iid = self.ids[key]["intent_id"]
        r = db.rows("SELECT d.seq AS dseq, i.seq AS iseq, i.binding AS b "
                    "FROM decisions d JOIN intents i ON i.seq = d.intent_seq "
                    "WHERE i.intent_id = '%s' ORDER BY d.seq" % iid)
        return r[0]

    def set_binding(self, key, text):
        def edit(db):
            r = self.first_decision(db, key)
            db.execute("UPDATE intents SET binding = ? WHERE seq = ?",
                       (text, r["iseq"]))
            return r["dseq"]
        return edit

    def test_binding_not_json(self):
        self.hostile(self.set_binding("allow", "{not json"))

    def test_binding_huge(self):
        self.hostile(self.set_binding(
            "allow", json.dumps({"action": "payments.refund",
                                 "resource": "o/1", "params":
                                 {"amount": 1, "pad": "x" * (10 << 20)}})))

    def test_binding_deep(self):
        self.hostile(self.set_binding(
            "allow", '{"action":"payments.refund","resource":"o/1",'
            '"params":{"amount":1,"d":' + "[" * 200000 + "]" * 200000 + "}}"))

    def test_binding_escaped_nul(self):
        self.hostile(self.set_binding(
            "allow", '{"action":"payments.refund","resource":"o/1\\u0000x",'
            '"params":{"amount":1}}'))

    def test_binding_not_an_object(self):
        self.hostile(self.set_binding("allow", "[1,2,3]"))

    def test_binding_raw_nul(self):
        if pg.is_url(self.store):
            # PostgreSQL text cannot hold NUL: the closest is an invalid
            # UTF-8 escape it refuses too, so edit the action instead.
            self.hostile(self.set_binding(
                "allow", '{"action":"payments.refund\\ud800",'
                '"resource":"o/1","params":{"amount":1}}'))
            return

        def edit(db):
            r = self.first_decision(db, "allow")
            d = sqlite3.connect(db.path)
            d.execute("UPDATE intents SET binding = CAST(? AS TEXT) WHERE "
                      "seq = ?", (b'{"action":"payments.refund","resource":'
                                  b'"o/1\x00","params":{"amount":1}}',
                                  r["iseq"]))
            d.commit()
            d.close()
            return r["dseq"]
        self.hostile(edit)

    def test_reasons_not_an_array(self):
        def edit(db):
            r = self.first_decision(db, "allow")
            db.execute("UPDATE decisions SET reasons = ? WHERE seq = ?",
                       ('{"evil":1}', r["dseq"]))
            return r["dseq"]
        self.hostile(edit)

    def test_reasons_garbage(self):
        def edit(db):
            r = self.first_decision(db, "quota0") if "quota0" in \
                self.quota_blocked else self.first_decision(db, "allow")
            db.execute("UPDATE decisions SET reasons = ? WHERE seq = ?",
                       ('["' + "A" * 100000 + '", 7, null]', r["dseq"]))
            return r["dseq"]
        self.hostile(edit)

    def test_vote_for_another_intent(self):
        def edit(db):
            other = self.ids["allow"]["intent_hash"]
            iid = self.ids["approved"]["intent_id"]
            db.execute("UPDATE votes SET intent_hash = ? WHERE intent_seq = "
                       "(SELECT seq FROM intents WHERE intent_id = ?)",
                       (other, iid))
            r = db.rows("SELECT d.seq AS dseq FROM decisions d JOIN intents i "
                        "ON i.seq = d.intent_seq WHERE i.intent_id = '%s' "
                        "ORDER BY d.seq" % iid)
            return r[-1]["dseq"]
        self.hostile(edit)

    def quorum_decision(self, db, key):
        iid = self.ids[key]["intent_id"]
        r = db.rows("SELECT d.seq AS dseq FROM decisions d JOIN intents i "
                    "ON i.seq = d.intent_seq WHERE i.intent_id = '%s' "
                    "ORDER BY d.seq" % iid)
        return r[-1]["dseq"]

    def test_vote_after_its_decision(self):
        # "The votes cast up to that decision": a vote dated after the
        # quorum decision it would have counted in cannot be.
        def edit(db):
            iid = self.ids["approved"]["intent_id"]
            db.execute("UPDATE votes SET voted_at = voted_at + 999999 WHERE "
                       "intent_seq = (SELECT seq FROM intents WHERE "
                       "intent_id = ?)", (iid,))
            return self.quorum_decision(db, "approved")
        self.hostile(edit)

    def test_approved_without_approving_votes(self):
        # A resolution APPROVED whose only vote is a DENY: the rows
        # contradict each other.
        def edit(db):
            iid = self.ids["approved"]["intent_id"]
            db.execute("UPDATE votes SET vote = 'DENY' WHERE intent_seq = "
                       "(SELECT seq FROM intents WHERE intent_id = ?)", (iid,))
            return self.quorum_decision(db, "approved")
        self.hostile(edit)

    def test_requirements_not_json(self):
        def edit(db):
            iid = self.ids["approved"]["intent_id"]
            db.execute("UPDATE approvals SET requirements = ? WHERE "
                       "intent_seq = (SELECT seq FROM intents WHERE "
                       "intent_id = ?)", ("{]", iid))
            return None
        self.hostile(edit, want_seq=False)

    def set_decided_at(self, when):
        def edit(db):
            r = self.first_decision(db, "allow")
            db.execute("UPDATE decisions SET decided_at = ? WHERE seq = ?",
                       (when, r["dseq"]))
            return r["dseq"]
        return edit

    def test_decided_in_year_9999(self):
        self.hostile(self.set_decided_at(253402300799))

    def test_decided_at_negative(self):
        self.hostile(self.set_decided_at(-1))

    def test_decided_at_int64_min(self):
        self.hostile(self.set_decided_at(-9223372036854775808))

    def test_duplicate_decision_row(self):
        # A second "first" decision for one intent (copied row, new seq).
        def edit(db):
            r = self.first_decision(db, "allow")
            top = db.rows("SELECT max(seq) AS m FROM decisions")[0]["m"]
            db.execute("INSERT INTO decisions (seq, intent_seq, decision_id, "
                       "decision, reasons, message, policy_revision, "
                       "decided_at) SELECT ?, intent_seq, decision_id, "
                       "decision, reasons, message, policy_revision, "
                       "decided_at FROM decisions WHERE seq = ?",
                       (top + 1, r["dseq"]))
            return top + 1
        self.hostile(edit)


if __name__ == "__main__":
    run_tests()
