"""test_pg_attack.py - attacks on the PostgreSQL store and its replicas
(issue 17), against real `intentgate serve` processes on a fresh database
of the cluster at IG_TEST_PG_URL (without it every test FAILS).

The attackers: a compromised agent (its own token, reaches every
replica), an unauthenticated client, someone holding the PDP's database
ROLE (least privilege, docs/operations.md "Roles: least privilege": the
replicas here connect as that role, never as the owner), someone who can
kill replicas or cut their connections (pg_terminate_backend), and for
the offline checks the database's owner.

    Secrets         a password in the config's URL never appears in a log
                    line or an error (server.started, a URL libpq
                    cannot parse)
    Redeem          one grant redeemed concurrently on two replicas while
                    their connections are terminated: at most one 200,
                    and a 200 only for a recorded redemption
    Idempotency     one idempotency key sent to two replicas at once
                    while connections are terminated: one intent id
    Stall           a lock held on `redemptions`: a redeem answers 503
                    STORE_UNAVAILABLE within the statement timeout, the
                    replica keeps serving, the redeem was not recorded
    Notify          forged NOTIFY ig_sequenced (huge, negative, garbage)
                    and ig_intent payloads (an id, 7999 bytes): a read of
                    the log never skips its settle (503 while unsequenced,
                    never a log without the caller's events), a long poll
                    woken early answers the intent's real state
                    (and the PDP role holding the sequencer's lock: audit
                    reads fail closed; released, the log catches up); a
                    forged 2^64-1 does not slow every read to a 100 ms tick
    Offline         `audit verify --db` on a database whose owner dropped
                    the triggers and edited an event, or cut the tail:
                    refused; `store copy` into a database a PDP serves, or
                    from a SQLite file a PDP holds: refused
    Votes           one approver voting approve and deny on two replicas
                    at once while connections are terminated: one vote,
                    one resolution, the state that vote says
    Restart         a cluster of the test's own restarted (immediate)
                    under load: no 200 or 201 unrecorded, no hang, every
                    acknowledged intent in the log, the replicas recover
    Reconnect       every connection ended while idle: the next requests
                    succeed (no 503, no BLOCK of a failed count)
    Sequencer       the sequencer SIGKILLed under load: the other takes
                    over, nothing acknowledged lost, the killed one starts
                    on its own anchor, both anchors verify
    *UnderVarLib    Sequencer and Redeem again with the replicas' files
                    under /var/lib (or /srv), named with a space and a
                    non-ASCII letter
    SessionOutage   a session lookup the store cannot answer is 503
                    STORE_UNAVAILABLE, not 401 (sign in again)
    OpenQueue       (known, not fixed: pdp.pg_attack_open runs it and
                    passes while it still succeeds) the PDP role can drop
                    queued, acknowledged events before they are sequenced,
                    queue forged ones, or write a leaf into audit_events,
                    and the sequencer signs them (docs/operations.md,
                    "What the database role is trusted with")

Nothing waits on a timer: each step waits (wait_until) for what it can
observe - a line in psql's output, a log line, a parked poll, a row.

    INTENTGATE_BIN=build/release/cli/intentgate \\
      IG_TEST_PG_URL=postgresql://postgres@127.0.0.1:54329/postgres \\
      python3 tests/integration/test_pg_attack.py
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

# The replicas' database is the one each config names (a database of
# this suite, as the least-privilege role), never the harness's own
# per-server choice (IG_TEST_STORE=postgresql: serve --database).
os.environ.pop("IG_TEST_STORE", None)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, Server, parallel, run_tests, wait_until  # noqa: E402
from harness import log_events as events  # noqa: E402

PG_ENV = "IG_TEST_PG_URL"
OWNER = "attack_owner"  # owns the schema (migrations)
PDP = "attack_pdp"  # the replicas' role: least privilege
SEQUENCER_LOCK = 0x6967000002  # STORE_PG_LOCK_SEQUENCER
STATEMENT_S = 10  # STORE_PG_STATEMENT_MS
DROPPED = (OSError, http.client.HTTPException)

GRANTS = """
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO {pdp};
GRANT SELECT, INSERT ON intents, decisions, grants, redemptions, outcomes,
  approvals, votes, resolutions, audit_events, audit_tiles, checkpoints,
  cosignatures TO {pdp};
GRANT SELECT, INSERT, UPDATE, DELETE ON audit_queue, counter_counts
  TO {pdp};
GRANT SELECT ON ig_schema TO {pdp};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {pdp};
"""
# Tables of the shared approver state (not on every branch yet).
SHARED_TABLES = ("approver_sessions", "login_failures", "slack_messages")


# A private cluster's URL while a test runs on one (Restart).
_base_override = None


def base_url():
    if _base_override:
        return _base_override
    url = os.environ.get(PG_ENV)
    if not url:
        raise AssertionError(
            "%s is not set: this suite needs a PostgreSQL cluster whose "
            "user may CREATE DATABASE and CREATE ROLE "
            "(scripts/pg-cluster.sh start DIR prints one)" % PG_ENV)
    return url


def url_for(db, user=None, password=None):
    """IG_TEST_PG_URL with its database (and user) replaced."""
    u = urllib.parse.urlsplit(base_url())
    host = u.hostname or "127.0.0.1"
    if ":" in host:
        host = "[%s]" % host
    netloc = host + (":%d" % u.port if u.port else "")
    user = user or u.username
    if user:
        cred = urllib.parse.quote(user, safe="")
        if password is not None:
            cred += ":" + password
        netloc = cred + "@" + netloc
    return urllib.parse.urlunsplit((u.scheme, netloc, "/" + db, u.query, ""))


def psql(sql, db=None, user=None, check=True):
    """Run sql (psql -c, ON_ERROR_STOP) as user on db: stdout."""
    url = url_for(db, user) if db else base_url()
    p = subprocess.run(
        ["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
         "-c", sql], capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL)
    if check and p.returncode != 0:
        raise AssertionError("psql %r: %s" % (sql[:200], p.stderr))
    return p.stdout if check else (p.returncode, p.stdout, p.stderr)


class Session:
    """A psql session kept open: statements written to its stdin, its
    output read line by line (a held lock, a transaction)."""

    def __init__(self, db, user):
        self.p = subprocess.Popen(
            ["psql", url_for(db, user), "-X", "-q", "-At",
             "-v", "ON_ERROR_STOP=1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, bufsize=1)

    def run(self, sql, marker):
        """Send sql, then wait until the line marker comes back."""
        self.p.stdin.write(sql + "\nSELECT '%s';\n" % marker)
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise AssertionError("psql session ended: "
                                     + self.p.stderr.read())
            if line.strip() == marker:
                return

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def ig(*args, timeout=120):
    p = subprocess.run([BIN] + list(args), capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def ensure_roles():
    for role in (OWNER, PDP):
        psql("DO $$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE "
             "rolname = '%s') THEN CREATE ROLE %s LOGIN; END IF; END$$"
             % (role, role))


class Cluster:
    """A fresh database owned by OWNER (migrated by a first server run
    as the owner, then granted to PDP as docs/operations.md says), the
    dev config its replicas share, and the replicas (as PDP)."""

    seq = 0

    def __init__(self, name, replicas=2, migrate=True, root=None):
        base_url()
        ensure_roles()
        Cluster.seq += 1
        self.db = "attack_%s_%d_%d" % (name, os.getpid(), Cluster.seq)
        psql('DROP DATABASE IF EXISTS "%s"' % self.db)
        psql('CREATE DATABASE "%s" OWNER %s' % (self.db, OWNER))
        self.url = url_for(self.db, PDP)
        self.owner_url = url_for(self.db, OWNER)
        # root: where the replicas' config, keys, anchors and logs go (a
        # fresh directory in it); tempfile's default when None.
        dev = Server.dev(tmp=tempfile.mkdtemp(
            prefix="ig attack \u00fc ", dir=root) if root else None)
        self.tmp = dev.tmp
        self.data = dev.data
        self.env = {k: v for k, v in dev.env.items()
                    if k != "INTENTGATE_URL"}
        rc = dev.stop()
        if rc != 0:
            raise AssertionError("dev server exit %s: %s" % (rc, dev.log()))
        with open(os.path.join(self.data, "intentgate.conf")) as f:
            self.conf_text = f.read()
        self.servers = []
        self.n = 0
        if migrate:
            first = self.start(url=self.owner_url)
            self.stop(first)
            self.servers.remove(first)
            self.grant()
        for _ in range(replicas):
            self.start()

    def grant(self):
        sql = GRANTS.format(pdp=PDP)
        have = psql("SELECT string_agg(tablename, ',') FROM pg_tables "
                    "WHERE schemaname = 'public'", self.db).strip()
        shared = [t for t in SHARED_TABLES if t in have.split(",")]
        if shared:
            sql += ("GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %s;"
                    % (", ".join(shared), PDP))
        psql(sql, self.db, OWNER)

    def config(self, url):
        """A replica's config: the dev config on url, its own anchor."""
        self.n += 1
        lines = []
        for line in self.conf_text.splitlines():
            if line.startswith("database ="):
                line = "database = " + url
            lines.append(line)
        text = "\n".join(lines) + "\n"
        # [audit] is the dev config's last section. A new replica's
        # anchor starts as a copy of the newest one (a replica with none
        # is refused on a log with checkpoints: audit.anchor_refused).
        anchor = os.path.join(self.tmp, "anchor-%d.checkpoint" % self.n)
        have = [os.path.join(self.tmp, f) for f in os.listdir(self.tmp)
                if f.startswith("anchor-") and f.endswith(".checkpoint")]
        if have:
            shutil.copyfile(max(have, key=os.path.getmtime), anchor)
        text += "anchor = %s\n" % anchor
        path = os.path.join(self.data, "replica-%d.conf" % self.n)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start(self, url=None):
        conf = self.config(url or self.url)
        tmp = tempfile.mkdtemp(prefix="replica-", dir=self.tmp)
        srv = Server.custom(conf, tmp, self.env)
        self.servers.append(srv)
        return srv

    def stop(self, srv):
        rc = srv.stop()
        log = srv.log()
        if rc != 0 or "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("replica exit %s:\n%s" % (rc, log[-4000:]))

    def finish(self):
        problems = []
        for s in self.servers:
            try:
                self.stop(s)
            except AssertionError as e:
                problems.append(str(e))
        shutil.rmtree(self.tmp, ignore_errors=True)
        psql('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % self.db,
             check=False)
        if problems:
            raise AssertionError("\n".join(problems))

    # ---- the actors ----

    def submit(self, srv, amount=10, key=None, resource=None):
        extra = {"idempotency_key": key} if key else {}
        return srv.submit("payments.refund",
                          resource or "order/%d" % time.monotonic_ns(),
                          {"amount": amount},
                          token=self.env["INTENTGATE_AGENT_TOKEN"], **extra)

    def allow(self, srv):
        st, body, _ = self.submit(srv)
        if st != 201 or body.get("decision") != "ALLOW":
            raise AssertionError("submit: %s %s" % (st, body))
        return body

    def redeem(self, srv, body):
        return srv.redeem(body["grant"], body["intent_id"],
                          self.env["INTENTGATE_EXECUTOR_TOKEN"])

    def audit(self, srv, path):
        return srv.call("GET", path, self.env["INTENTGATE_ADMIN_TOKEN"])

    def key(self):
        return self.servers[0].log().split('"audit_key":"')[1].split('"')[0]

    def q(self, sql):
        """sql as the cluster's superuser on this database."""
        return psql(sql, self.db)

    def as_pdp(self, sql, check=True):
        return psql(sql, self.db, PDP, check)

    # pg_terminate_backend in the select list, not in WHERE: the planner
    # may call a WHERE's function before the other conditions.
    KILL = ("SELECT pid FROM (SELECT pid, pg_terminate_backend(pid) AS ok "
            "FROM pg_stat_activity WHERE datname = '%s' AND usename = '%s' "
            "AND pid <> pg_backend_pid()) k WHERE ok")

    def terminate(self, stop):
        """Terminate the PDP role's connections to this database until
        stop is set, then wait until every terminated backend is gone;
        returns how many were terminated."""
        pids = set()
        while not stop.is_set():
            out = psql(self.KILL % (self.db, PDP), check=False)
            if out[0] == 0:
                pids.update(int(p) for p in out[1].split())
        self.wait_gone(pids)
        return len(pids)

    def wait_gone(self, pids):
        if pids:
            wait_until(lambda: self.q(
                "SELECT count(*) FROM pg_stat_activity WHERE pid IN (%s)"
                % ",".join(map(str, pids))).strip() == "0",
                "the terminated backends to go")

    def kill_all(self):
        """Terminate every connection of the PDP role once; wait until
        they are gone."""
        out = psql(self.KILL % (self.db, PDP))
        pids = {int(p) for p in out.split()}
        self.wait_gone(pids)
        return pids


def call(fn):
    """fn() or (None, repr of the error) when the connection dropped."""
    try:
        return fn()
    except DROPPED as e:
        return None, repr(e), {}


def system_root():
    """/var/lib or /srv, the first that is writable (operators keep a
    PDP's files there), else None (tempfile's default)."""
    for system in ("/var/lib", "/srv"):
        if os.access(system, os.W_OK):
            return system
    return None


class PgCase(unittest.TestCase):
    name = "x"
    replicas = 2
    root = None  # see Cluster

    def setUp(self):
        self.c = Cluster(self.name, self.replicas, root=self.root)

    def tearDown(self):
        self.c.finish()


class Secrets(unittest.TestCase):
    """A password in the config's URL is in no log line and no error."""

    def test_password_not_in_server_started(self):
        c = Cluster("secret", replicas=0)
        try:
            pw = "Zq7secretPW"
            srv = c.start(url=url_for(c.db, PDP, pw))
            self.assertEqual(srv.call("GET", "/healthz")[0], 200)
            self.assertTrue(events(srv, "server.started"))
            body = c.allow(srv)
            self.assertEqual(c.redeem(srv, body)[0], 200)
            c.stop(srv)
            self.assertNotIn(pw, srv.log())
        finally:
            c.finish()

    def test_password_not_in_a_parse_error(self):
        c = Cluster("secretparse", replicas=0, migrate=False)
        try:
            for pw in ("pa%zzSecret1", "pa%00Secret2"):
                conf = c.config(url_for(c.db, PDP, pw))
                rc, out, err = ig("serve", "--config", conf, timeout=60)
                self.assertNotEqual(rc, 0, err)
                self.assertIn("PostgreSQL", err)
                self.assertNotIn(pw.split("%")[1][2:], err + out)
            # The whole URL quoted by libpq (a broken IPv6 host).
            conf = c.config("postgresql://%s:Secret3pw@[::1/%s"
                            % (PDP, c.db))
            rc, out, err = ig("serve", "--config", conf, timeout=60)
            self.assertNotEqual(rc, 0, err)
            self.assertNotIn("Secret3pw", err + out)
        finally:
            c.finish()


class Redeem(PgCase):
    name = "redeem"

    def test_race_with_connections_terminated(self):
        c = self.c
        a, b = c.servers
        grants = [c.allow(a if i % 2 else b) for i in range(12)]
        stop = threading.Event()
        killed = [0]

        def killer():
            killed[0] = c.terminate(stop)

        t = threading.Thread(target=killer)
        t.start()
        try:
            results = []
            for g in grants:
                results.append(parallel(
                    8, lambda i, g=g: call(
                        lambda: c.redeem((a, b)[i % 2], g))))
        finally:
            stop.set()
            t.join()
        self.assertGreater(killed[0], 0)
        for g, res in zip(grants, results):
            ok = [r for r in res if r[0] == 200]
            self.assertLessEqual(len(ok), 1, res)
            for r in res:
                self.assertIn(r[0], (200, 409, 503, None), r)
            rows = int(c.q("SELECT count(*) FROM redemptions r JOIN "
                           "intents i ON i.seq = r.intent_seq WHERE "
                           "i.intent_id = '%s'" % g["intent_id"]))
            if ok:
                self.assertEqual(rows, 1, "a 200 for an unrecorded redeem")
            # Whatever happened, a redeem now answers from the record.
            st, body, _ = c.redeem(a, g)
            if rows:
                self.assertEqual(st, 409, body)
            else:
                self.assertEqual(st, 200, body)
                st, body, _ = c.redeem(b, g)
                self.assertEqual(st, 409, body)


class Idempotency(PgCase):
    name = "idem"

    def test_one_key_two_replicas_connections_terminated(self):
        c = self.c
        a, b = c.servers
        stop = threading.Event()
        t = threading.Thread(target=c.terminate, args=(stop,))
        t.start()
        try:
            keys = ["k-%d" % i for i in range(8)]
            results = {}
            for k in keys:
                results[k] = parallel(
                    8, lambda i, k=k: call(
                        lambda: c.submit((a, b)[i % 2], key=k,
                                         resource="order/" + k)))
        finally:
            stop.set()
            t.join()
        for k, res in results.items():
            ids = {r[1]["intent_id"] for r in res
                   if r[0] in (200, 201) and isinstance(r[1], dict)}
            self.assertLessEqual(len(ids), 1, res)
            for r in res:
                self.assertIn(r[0], (200, 201, 503, None), r)
            # Afterwards both replicas answer the one recorded id.
            st, body, _ = c.submit(a, key=k, resource="order/" + k)
            st2, body2, _ = c.submit(b, key=k, resource="order/" + k)
            self.assertIn(st, (200, 201), body)
            self.assertEqual(st2, 200, body2)
            self.assertEqual(body["intent_id"], body2["intent_id"])
            if ids:
                self.assertEqual(ids, {body["intent_id"]})
            self.assertEqual(int(c.q(
                "SELECT count(*) FROM intents WHERE intent_id = '%s'"
                % body["intent_id"])), 1)


class PrivateCluster:
    """A PostgreSQL cluster of the test's own (the restart must not hit
    other tests' databases): initdb with the binaries of pg_config
    --bindir, trust on 127.0.0.1 only, no Unix socket, fsync on."""

    def __init__(self):
        import socket
        self.bin = subprocess.check_output(
            ["pg_config", "--bindir"], text=True).strip()
        self.dir = tempfile.mkdtemp(prefix="attack-pg-")
        self.data = os.path.join(self.dir, "data")
        self.as_server = []
        if os.geteuid() == 0:  # initdb refuses root: run as postgres
            self.as_server = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.dir, "postgres")
        self.pg("initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                "-E", "UTF8", "--locale=C.UTF-8", "-N")
        with socket.socket() as so:
            so.bind(("127.0.0.1", 0))
            self.port = so.getsockname()[1]
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("listen_addresses = '127.0.0.1'\n"
                    "unix_socket_directories = ''\nport = %d\n"
                    "max_connections = 200\n" % self.port)
        self.pg("pg_ctl", "-D", self.data, "-l",
                os.path.join(self.dir, "log"), "-w", "-t", "60", "start")
        self.url = "postgresql://postgres@127.0.0.1:%d/postgres" % self.port

    def pg(self, prog, *args):
        p = subprocess.run(self.as_server + [os.path.join(self.bin, prog)]
                           + list(args), capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            raise AssertionError("%s: %s%s" % (prog, p.stdout, p.stderr))

    def restart(self, mode):
        self.pg("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60",
                "restart", "-l", os.path.join(self.dir, "log"))

    def remove(self):
        try:
            self.pg("pg_ctl", "-D", self.data, "-m", "immediate", "-w",
                    "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


class Restart(unittest.TestCase):
    """The database restarted (an immediate stop: a crash) under load on
    two replicas: never a 200 for an unrecorded redeem, never two 200s
    for one grant, never a 201 for an unrecorded intent, no request
    hanging, every acknowledged intent in the log afterwards, and the
    same processes serve again."""

    def test_restart_under_load(self):
        global _base_override
        base_url()  # IG_TEST_PG_URL is required all the same
        pc = PrivateCluster()
        _base_override = pc.url
        try:
            c = Cluster("restart", 2)
            try:
                self.run_load(c, pc)
            finally:
                c.finish()
        finally:
            _base_override = None
            pc.remove()

    def run_load(self, c, pc):
        a, b = c.servers
        lock = threading.Lock()
        done = threading.Event()
        ops = []  # (t0, seconds, kind, status, body)

        def timed(kind, fn):
            t0 = time.monotonic()
            st, body, _ = call(fn)
            with lock:
                ops.append((t0, time.monotonic() - t0, kind, st, body))
            return st, body

        def worker(i):
            mine, other = (a, b) if i % 2 else (b, a)
            while not done.is_set():
                st, body = timed("submit", lambda: c.submit(mine))
                if st != 201 or body.get("decision") != "ALLOW":
                    continue
                # Two executors redeem it at once, on both replicas.
                parallel(2, lambda j: timed(
                    ("redeem", body["intent_id"]),
                    lambda: c.redeem((mine, other)[j], body)))

        def ok_since(t):
            with lock:
                return sum(1 for o in ops if o[0] >= t and o[3] == 200)

        threads = [threading.Thread(target=worker, args=(i,))
                   for i in range(4)]
        for t in threads:
            t.start()
        try:
            wait_until(lambda: ok_since(0) >= 20, "redeems before",
                       timeout=60)
            pc.restart("immediate")
            back = time.monotonic()
            wait_until(lambda: ok_since(back) >= 20, "redeems after the "
                       "restart", timeout=90)
        finally:
            done.set()
            for t in threads:
                t.join()
        for srv in (a, b):
            self.assertIsNone(srv.proc.poll(), "a replica died")
        statuses = {o[3] for o in ops}
        self.assertTrue(statuses <= {200, 201, 409, 503}, statuses)
        self.assertIn(503, statuses)  # the restart was seen
        self.assertLess(max(o[1] for o in ops), 30, "a request hung")
        granted = {}
        for o in ops:
            if o[2] != "submit" and o[3] == 200:
                granted.setdefault(o[2][1], 0)
                granted[o[2][1]] += 1
        self.assertTrue(all(n == 1 for n in granted.values()), granted)
        redeemed = set(c.q(
            "SELECT i.intent_id FROM redemptions r JOIN intents i ON "
            "i.seq = r.intent_seq").split())
        self.assertTrue(set(granted) <= redeemed,
                        "a 200 for an unrecorded redeem: %s"
                        % (set(granted) - redeemed))
        acked = {o[4]["intent_id"] for o in ops
                 if o[2] == "submit" and o[3] == 201}
        intents = set(c.q("SELECT intent_id FROM intents").split())
        self.assertTrue(acked <= intents, acked - intents)
        # Every acknowledged intent's events reach the log.
        wait_until(lambda: c.q("SELECT count(*) FROM audit_queue").strip()
                   == "0", "the queue sequenced", timeout=60)
        key = c.key()
        for srv in list(c.servers):
            c.stop(srv)
        c.servers.clear()
        rc, out, err = ig("audit", "export", "--db", c.url)
        self.assertEqual(rc, 0, err)
        missing = [i for i in acked if i not in out]
        self.assertEqual(missing, [])
        rc, out, err = ig("audit", "verify", "--db", c.url, "--key", key)
        self.assertEqual(rc, 0, out + err)


class Votes(PgCase):
    name = "votes"

    def login(self, srv):
        st, body, _ = srv.call(
            "POST", "/v1/approver/login", None,
            {"approver": self.c.env["INTENTGATE_APPROVER_ID"],
             "password": self.c.env["INTENTGATE_APPROVER_PASSWORD"]})
        self.assertEqual(st, 200, body)
        return body["token"]

    def test_one_vote_per_approver_across_replicas(self):
        """One approver, signed in on both replicas, votes approve on one
        and deny on the other at the same moment, several times, while
        connections are terminated: one vote counted, one resolution, and
        the intent's state follows that one vote."""
        c = self.c
        a, b = c.servers
        tokens = {a: self.login(a), b: self.login(b)}
        stop = threading.Event()
        t = threading.Thread(target=c.terminate, args=(stop,))
        t.start()
        bodies = []
        try:
            for _ in range(6):
                st, body, _ = call(lambda: c.submit(a, amount=500))
                if st != 201:
                    continue
                self.assertEqual(body["decision"], "ESCALATE", body)
                bodies.append((body, parallel(8, lambda i, body=body: call(
                    lambda: (a, b)[i % 2].call(
                        "POST", "/v1/approvals/%s/votes"
                        % body["approval"]["id"], tokens[(a, b)[i % 2]],
                        {"vote": ("approve", "deny")[i % 2],
                         "intent_hash": body["intent_hash"]})))))
        finally:
            stop.set()
            t.join()
        self.assertTrue(bodies)
        for body, res in bodies:
            counted = [r for r in res if r[0] == 200]
            self.assertLessEqual(len(counted), 1, res)
            for r in res:
                self.assertIn(r[0], (200, 409, 503, None), r)
            seq = "(SELECT seq FROM intents WHERE intent_id = '%s')" % (
                body["intent_id"])
            votes = c.q("SELECT vote FROM votes WHERE intent_seq = " +
                        seq).split()
            res_rows = int(c.q("SELECT count(*) FROM resolutions WHERE "
                               "intent_seq = " + seq))
            self.assertLessEqual(len(votes), 1, votes)
            self.assertEqual(res_rows, len(votes))
            if counted:
                self.assertEqual(len(votes), 1)
            st, got, _ = a.call("GET", "/v1/intents/" + body["intent_id"],
                                c.env["INTENTGATE_AGENT_TOKEN"])
            self.assertEqual(st, 200, got)
            if votes:
                self.assertEqual(got["state"],
                                 {"approve": "ALLOWED", "deny": "BLOCKED"}
                                 [votes[0].lower()], (votes, got))


class Sequencer(PgCase):
    name = "seq"

    def test_sequencer_killed_under_load_restarts_on_its_anchor(self):
        """The sequencer SIGKILLed while both replicas take intents (its
        batch maybe committed, its anchor not written, its .running
        marker left): the other takes over, every acknowledged intent is
        in the log, the killed one starts again on its own anchor file,
        and the log verifies against both anchors."""
        c = self.c
        seq = wait_until(lambda: [s for s in c.servers
                                  if events(s, "audit.sequencer_started")],
                         "a sequencer")[0]
        other = [s for s in c.servers if s is not seq][0]
        def anchor_of(srv):
            with open(srv.proc.args[-1]) as f:
                return [line.split("=", 1)[1].strip() for line in f
                        if line.startswith("anchor =")][0]

        anchor, other_anchor = anchor_of(seq), anchor_of(other)
        acked, lock, done = [], threading.Lock(), threading.Event()

        def load(srv):
            while not done.is_set():
                st, body, _ = call(lambda: c.submit(srv))
                if st == 201:
                    with lock:
                        acked.append(body["intent_id"])

        threads = [threading.Thread(target=load, args=(s,))
                   for s in (seq, other, other)]
        for t in threads:
            t.start()
        try:
            wait_until(lambda: len(acked) >= 30, "intents before the kill")
            seq.proc.send_signal(signal.SIGKILL)
            seq.proc.wait()
            wait_until(lambda: events(other, "audit.sequencer_started"),
                       "the takeover", timeout=60)
            n = len(acked)
            wait_until(lambda: len(acked) >= n + 30, "intents after")
        finally:
            done.set()
            for t in threads:
                t.join()
        c.servers.remove(seq)
        wait_until(lambda: c.q("SELECT count(*) FROM audit_queue").strip()
                   == "0", "the queue sequenced", timeout=60)
        # The killed replica starts again on its own anchor.
        again = Server.custom(seq.proc.args[-1], tempfile.mkdtemp(
            prefix="replica-", dir=c.tmp), c.env)
        c.servers.append(again)
        self.assertEqual(again.call("GET", "/healthz")[0], 200)
        key = c.key()
        for s in list(c.servers):
            c.stop(s)
        c.servers.clear()
        rc, out, err = ig("audit", "export", "--db", c.url)
        self.assertEqual(rc, 0, err)
        self.assertEqual([i for i in acked if i not in out], [])
        for an in (anchor, other_anchor):
            rc, out, err = ig("audit", "verify", "--db", c.url, "--key",
                              key, "--anchor", an)
            self.assertEqual(rc, 0, out + err)


class SequencerUnderVarLib(Sequencer):
    """The sequencer case again with the replicas' config, keys, anchor
    files and logs under /var/lib (or /srv), in a directory whose name
    holds a space and a non-ASCII letter, as an operator installs them."""
    name = "seqlay"
    root = system_root()

    def test_the_layout_is_the_system_one(self):
        self.assertIsNotNone(self.root, "neither /var/lib nor /srv is "
                             "writable: the layout case cannot run")
        self.assertTrue(self.c.tmp.startswith(self.root + "/"), self.c.tmp)


class RedeemUnderVarLib(Redeem):
    """The redeem race again under /var/lib (or /srv), as above."""
    name = "redlay"
    root = system_root()


class Reconnect(PgCase):
    name = "reconnect"
    replicas = 1

    def test_no_503_after_connections_killed_while_idle(self):
        """The database up again (every connection of the replica ended
        while idle, as at a restart): the next requests succeed - a
        pooled connection the server ended is replaced before use."""
        c = self.c
        (a,) = c.servers
        # Fill the pool: concurrent requests open several connections.
        for r in parallel(16, lambda i: c.submit(a)):
            self.assertEqual(r[0], 201, r)
        self.assertGreater(len(c.kill_all()), 4)
        for i in range(40):
            st, body, _ = c.submit(a)
            self.assertEqual((st, body.get("decision")), (201, "ALLOW"),
                             "request %d after the kill: %s" % (i, body))
            st, body, _ = c.redeem(a, body)
            self.assertEqual(st, 200, body)


class Stall(PgCase):
    name = "stall"
    replicas = 1

    def test_locked_redemptions_fail_closed_in_time(self):
        c = self.c
        (a,) = c.servers
        g = c.allow(a)
        lock = Session(c.db, None)
        try:
            lock.run("BEGIN; LOCK TABLE redemptions;", "locked")
            out = {}

            def redeem():
                t0 = time.monotonic()
                out["r"] = call(lambda: c.redeem(a, g))
                out["s"] = time.monotonic() - t0

            t = threading.Thread(target=redeem)
            t.start()
            # The redeem is waiting on the lock (pg_locks shows it).
            wait_until(lambda: int(c.q(
                "SELECT count(*) FROM pg_locks l JOIN pg_class r ON "
                "r.oid = l.relation WHERE r.relname = 'redemptions' AND "
                "NOT l.granted")), "the redeem to wait on the lock")
            # Meanwhile the replica serves others.
            self.assertEqual(a.call("GET", "/healthz")[0], 200)
            other = c.allow(a)
            # A read of an intent reads redemptions too: it waits on the
            # lock, then answers 503 within the statement timeout.
            t0 = time.monotonic()
            st, body, _ = a.call("GET", "/v1/intents/" + other["intent_id"],
                                 c.env["INTENTGATE_ADMIN_TOKEN"])
            self.assertIn(st, (200, 503), body)
            self.assertLess(time.monotonic() - t0, STATEMENT_S + 5)
            t.join(timeout=STATEMENT_S + 20)
            self.assertFalse(t.is_alive(), "the redeem hangs")
            st, body, _ = out["r"]
            self.assertEqual(st, 503, body)
            self.assertEqual(body.get("error", {}).get("code")
                             if isinstance(body.get("error"), dict)
                             else body.get("code", body.get("error")),
                             "STORE_UNAVAILABLE", body)
            self.assertLess(out["s"], STATEMENT_S + 5)
        finally:
            lock.close()
        # Nothing was recorded: the redeem now succeeds, once.
        st, body, _ = c.redeem(a, g)
        self.assertEqual(st, 200, (body, a.log()[-3000:]))
        self.assertEqual(c.redeem(a, g)[0], 409)


class Notify(PgCase):
    name = "notify"

    def hold_sequencer(self):
        """Take the sequencer's lock as the PDP role while no replica
        runs (stop them, take it, start them again)."""
        c = self.c
        for s in list(c.servers):
            c.stop(s)
            c.servers.remove(s)
        sess = Session(c.db, PDP)
        sess.run("SELECT pg_advisory_lock(%d);" % SEQUENCER_LOCK, "held")
        c.start()
        c.start()
        return sess

    def test_forged_sequenced_never_skips_settle(self):
        c = self.c
        sess = self.hold_sequencer()
        try:
            a, b = c.servers
            body = c.allow(a)
            self.assertIsNotNone(body)
            for payload in ("18446744073709551615", "99999999999999999999",
                            "-1", "garbage", "", "x" * 7999):
                c.as_pdp("NOTIFY ig_sequenced, '%s'" % payload)
            # Nothing is sequenced: a read of the log fails closed.
            for srv in (a, b):
                st, got, _ = c.audit(srv, "/v1/audit/checkpoint")
                self.assertEqual(st, 503, got)
        finally:
            sess.close()
        # The lock released: a replica sequences, and reads see the write.
        wait_until(lambda: any(events(s, "audit.sequencer_started")
                               for s in c.servers), "a sequencer")
        for srv in c.servers:
            st, got, _ = c.audit(srv, "/v1/audit/leaves?start=0&end=1")
            self.assertEqual(st, 200, got)
            self.assertEqual(srv.call("GET", "/healthz")[0], 200)
        st, cp, _ = c.audit(a, "/v1/audit/checkpoint")
        self.assertEqual(st, 200, cp)
        n = int(c.q("SELECT count(*) FROM audit_events"))
        self.assertGreater(n, 0)
        self.assertEqual(int(c.q("SELECT count(*) FROM audit_queue")), 0)

    def test_forged_huge_sequenced_does_not_slow_reads(self):
        """Any role that can connect may NOTIFY: a forged size of 2^64-1
        once kept as the replicas' maximum, so no real announcement woke
        a reader again and every read of the log after a write waited its
        100 ms tick. Reads after writes must still be woken at once."""
        c = self.c
        a, b = c.servers
        c.as_pdp("NOTIFY ig_sequenced, '18446744073709551615'")
        slow = 0
        for _ in range(20):
            c.allow(b)
            t0 = time.monotonic()
            st, got, _ = c.audit(a, "/v1/audit/checkpoint")
            self.assertEqual(st, 200, got)
            slow += time.monotonic() - t0 >= 0.095
        # Unwoken, about half wait (those the sequencer had not caught up
        # with); woken, a read waits milliseconds.
        self.assertLessEqual(slow, 3, "%d of 20 reads waited a whole tick"
                             % slow)

    def test_forged_intent_notify_answers_the_real_state(self):
        c = self.c
        a, b = c.servers
        # An approval-gated refund stays PENDING_APPROVAL.
        st, body, _ = c.submit(a, amount=500)
        self.assertEqual((st, body.get("decision")), (201, "ESCALATE"), body)
        iid = body["intent_id"]
        st, before, _ = a.call("GET", "/v1/intents/" + iid,
                               c.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual(st, 200, before)
        out = {}

        def poll():
            out["r"] = a.call("GET", "/v1/intents/%s?wait=30" % iid,
                              c.env["INTENTGATE_AGENT_TOKEN"], timeout=60)

        t = threading.Thread(target=poll)
        t.start()
        a.wait_parked(1)
        c.as_pdp("NOTIFY ig_intent, '%s'" % ("y" * 7999))
        c.as_pdp("NOTIFY ig_intent, '%s'" % iid)
        t.join(timeout=40)
        self.assertFalse(t.is_alive())
        st, got, _ = out["r"]
        self.assertEqual(st, 200, got)
        self.assertEqual(got.get("state"), before.get("state"), got)
        self.assertNotIn("grant", got)
        for s in (a, b):
            self.assertEqual(s.call("GET", "/healthz")[0], 200)


class Offline(PgCase):
    name = "offline"
    replicas = 1

    def fill(self, n=6):
        c = self.c
        (a,) = c.servers
        for _ in range(n):
            self.assertEqual(c.redeem(a, c.allow(a))[0], 200)
        st, cp, _ = c.audit(a, "/v1/audit/checkpoint")
        self.assertEqual(st, 200, cp)
        return a

    def verify(self, *extra):
        return ig("audit", "verify", "--db", self.c.url, "--key",
                  self.c.key(), *extra)

    def test_verify_refuses_an_edited_event_with_triggers_dropped(self):
        c = self.c
        a = self.fill()
        c.stop(a)  # signs a last checkpoint
        rc, out, err = self.verify()
        self.assertEqual(rc, 0, out + err)
        # The PDP role cannot edit a recorded event.
        rc, _, err = c.as_pdp("UPDATE audit_events SET event = event "
                              "WHERE seq = 2", check=False)
        self.assertNotEqual(rc, 0)
        # The owner (or a superuser) can, with the triggers gone.
        c.q("ALTER TABLE audit_events DISABLE TRIGGER ALL;"
            "UPDATE audit_events SET event = replace(event, '\"amount\":10',"
            "'\"amount\":99') WHERE seq = (SELECT min(seq) FROM audit_events"
            " WHERE event LIKE '%\"amount\":10%');")
        rc, out, err = self.verify()
        self.assertNotEqual(rc, 0, out + err)

    def test_verify_refuses_a_cut_tail_against_the_anchor(self):
        c = self.c
        a = self.fill()
        anchor = os.path.join(c.tmp, "anchor-2.checkpoint")
        c.stop(a)
        self.assertTrue(os.path.exists(anchor))
        size = int(c.q("SELECT max(size) FROM checkpoints"))
        c.q("ALTER TABLE audit_events DISABLE TRIGGER ALL;"
            "ALTER TABLE checkpoints DISABLE TRIGGER ALL;"
            "ALTER TABLE audit_tiles DISABLE TRIGGER ALL;"
            "DELETE FROM checkpoints WHERE size > %d;"
            "DELETE FROM audit_events WHERE seq > %d;"
            "DELETE FROM checkpoints WHERE size >= %d;"
            % (size // 2, size // 2, size // 2))
        rc, out, err = self.verify("--anchor", anchor)
        self.assertNotEqual(rc, 0, out + err)
        # A replica refuses to start on the rolled-back log.
        conf = c.config(c.url)
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace(
                "anchor = " + os.path.join(c.tmp, "anchor-%d.checkpoint"
                                           % c.n), "anchor = " + anchor))
        rc, out, err = ig("serve", "--config", conf, timeout=60)
        self.assertNotEqual(rc, 0, err)
        self.assertIn("anchor", err)

    def test_store_copy_into_a_served_database_refused(self):
        c = self.c
        a = self.fill(2)
        src = os.path.join(c.data, "intentgate.db")
        before = c.q("SELECT count(*) FROM intents")
        rc, out, err = ig("store", "copy", "--from", src,
                          "--to", c.owner_url)
        self.assertNotEqual(rc, 0, out + err)
        self.assertEqual(c.q("SELECT count(*) FROM intents"), before)
        self.assertEqual(a.call("GET", "/healthz")[0], 200)

    def test_store_copy_from_a_file_a_pdp_holds_refused(self):
        c = self.c
        dev = Server.dev()
        try:
            st, body, _ = dev.submit("payments.refund", "order/1",
                                     {"amount": 10})
            self.assertEqual(st, 201, body)
            empty = "attack_copy_%d" % os.getpid()
            psql('DROP DATABASE IF EXISTS "%s"' % empty)
            psql('CREATE DATABASE "%s" OWNER %s' % (empty, OWNER))
            try:
                rc, out, err = ig("store", "copy", "--from",
                                  os.path.join(dev.data, "intentgate.db"),
                                  "--to", url_for(empty, OWNER))
                self.assertNotEqual(rc, 0, out + err)
                self.assertEqual(psql(
                    "SELECT count(*) FROM pg_tables WHERE tablename = "
                    "'intents'", empty).strip() in ("0", "1"), True)
                rc, n, _ = psql("SELECT count(*) FROM intents", empty,
                                check=False)
                if rc == 0:
                    self.assertEqual(n.strip(), "0")
            finally:
                psql('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % empty,
                     check=False)
        finally:
            dev.stop()
            dev.cleanup()


class OpenQueue(PgCase):
    """Known and not fixed (pdp.pg_attack_open is WILL_FAIL): the PDP's
    role is trusted with the log's content before it is sequenced."""
    name = "queue"

    def test_dropped_queued_events_are_caught(self):
        c = self.c
        for s in list(c.servers):
            c.stop(s)
            c.servers.remove(s)
        sess = Session(c.db, PDP)
        sess.run("SELECT pg_advisory_lock(%d);" % SEQUENCER_LOCK, "held")
        a = c.start()
        try:
            body = c.allow(a)  # acknowledged: 201
            sess.run("DELETE FROM audit_queue;", "deleted")
        finally:
            sess.close()
        wait_until(lambda: events(a, "audit.sequencer_started"),
                   "a sequencer")
        c.stop(a)
        c.servers.remove(a)
        rc, out, err = ig("audit", "export", "--db", c.url)
        self.assertEqual(rc, 0, err)
        rc2, vout, verr = ig("audit", "verify", "--db", c.url, "--key",
                             c.key() if c.servers else
                             a.log().split('"audit_key":"')[1].split('"')[0])
        self.assertTrue(body["intent_id"] in out or rc2 != 0,
                        "OPEN: an acknowledged intent's events were dropped "
                        "from the queue and verify passes:\n" + vout)

    def test_forged_queued_event_is_caught(self):
        c = self.c
        a, _ = c.servers
        c.allow(a)
        forged = json.dumps({"type": "intent.decided", "decision": "ALLOW",
                             "intent_id": "forged-by-the-pdp-role"})
        c.as_pdp("INSERT INTO audit_queue (event) VALUES ('%s')" % forged)
        wait_until(lambda: int(c.q("SELECT count(*) FROM audit_queue")) == 0,
                   "the forged event sequenced")
        key = c.key()
        for s in list(c.servers):
            c.stop(s)
        c.servers.clear()
        rc, out, err = ig("audit", "verify", "--db", c.url, "--key", key)
        exported = ig("audit", "export", "--db", c.url)[1]
        self.assertTrue("forged-by-the-pdp-role" not in exported or rc != 0,
                        "OPEN: a forged event is in the signed log and verify "
                        "passes:\n" + out)

    def test_forged_leaf_in_audit_events_is_caught(self):
        """The PDP role writes the next leaf into audit_events itself: the
        sequencer collides on it and stops, the next one rebuilds the
        tree from the table, forged leaf included, and signs it."""
        c = self.c
        a, b = c.servers
        c.allow(a)
        wait_until(lambda: c.q("SELECT count(*) FROM audit_queue").strip()
                   == "0", "the queue sequenced")
        n = int(c.q("SELECT max(seq) FROM audit_events"))
        c.as_pdp("INSERT INTO audit_events (seq, event) VALUES "
                 "(%d, '{\"type\":\"forged-leaf\"}')" % (n + 1))
        c.allow(b)
        wait_until(lambda: c.q("SELECT count(*) FROM audit_queue").strip()
                   == "0", "the queue sequenced after the forged leaf",
                   timeout=60)
        key = c.key()
        for s in list(c.servers):
            c.stop(s)  # a last checkpoint, over the forged leaf
        c.servers.clear()
        rc, out, err = ig("audit", "verify", "--db", c.url, "--key", key)
        exported = ig("audit", "export", "--db", c.url)[1]
        self.assertTrue("forged-leaf" not in exported or rc != 0,
                        "OPEN: a leaf the PDP role wrote is in the signed log "
                        "and verify passes:\n" + out)


class SessionOutage(PgCase):
    """A signed-in approver's request while the store cannot read
    sessions answers 503 STORE_UNAVAILABLE, as every other store failure
    does - not 401 UNAUTHENTICATED (sign in again), which it answered
    until pdp_approver_session said why it found no session."""
    name = "status"
    replicas = 1

    def test_session_lookup_outage_is_503(self):
        c = self.c
        (a,) = c.servers
        st, body, _ = a.call(
            "POST", "/v1/approver/login", None,
            {"approver": c.env["INTENTGATE_APPROVER_ID"],
             "password": c.env["INTENTGATE_APPROVER_PASSWORD"]})
        self.assertEqual(st, 200, body)
        token = body["token"]
        self.assertEqual(a.call("GET", "/v1/approvals", token)[0], 200)
        lock = Session(c.db, None)
        try:
            lock.run("BEGIN; LOCK TABLE approver_sessions;", "locked")
            st, body, _ = a.call("GET", "/v1/approvals", token)
        finally:
            lock.close()
        self.assertEqual(st, 503, "a session lookup the store could not "
                         "answer: %s %s" % (st, body))
        self.assertEqual(body["error"]["code"], "STORE_UNAVAILABLE", body)
        # And once the store answers again, the session is still good.
        self.assertEqual(a.call("GET", "/v1/approvals", token)[0], 200)


# What pdp.pg_attack runs: every attack the code withstands.
HELD = ["Secrets", "Redeem", "Idempotency", "Votes", "Restart", "Reconnect",
        "Stall", "Notify", "Sequencer", "Offline", "SessionOutage"]


def run_open():
    """pdp.pg_attack_open: the known, unfixed attacks (OpenQueue).
    Exits 0
    only when each still succeeds - its test FAILS on its own assertion
    (an error, or a missing IG_TEST_PG_URL, exits 1); once one is caught
    it exits 1 too: move it to HELD."""
    if not os.environ.get(PG_ENV):
        print("%s is not set: the open attacks cannot run" % PG_ENV)
        sys.exit(1)
    suite = unittest.TestSuite(
        unittest.defaultTestLoader.loadTestsFromTestCase(k)
        for k in (OpenQueue,))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    # Failed on the attack's own assertion, nothing else.
    failed = {t.id() for t, tb in result.failures if "OPEN: " in tb}
    ok = (not result.errors and not result.skipped and
          result.testsRun == suite.countTestCases() and
          len(failed) == result.testsRun)
    print("open attacks still succeeding: %d of %d%s" % (
        len(failed), result.testsRun, "" if ok else
        " - an error, or an attack now caught (move it to HELD)"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if sys.argv[1:] == ["--open"]:
        run_open()
    run_tests(names=sys.argv[1:] or HELD)
