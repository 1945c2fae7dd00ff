"""test_replicas.py - several `intentgate serve` replicas on one PostgreSQL
database keep every promise one PDP makes (issue 17).

The replicas are real processes with the same config (a dev config: its
keys, policies, tokens and approver; `listen = 127.0.0.1:0`, so each gets
its own port) and `--database URL`, one fresh database of the cluster at
IG_TEST_PG_URL (scripts/test.sh starts it; without it this suite fails).

    RedeemRace      100 concurrent redeems of one grant spread over two,
                    then three replicas: exactly one 200, 99 409
                    GRANT_ALREADY_REDEEMED; and over two, one of them
                    SIGKILLed as they start: at most one 200, spent once
    Across          a grant issued on A redeems on B (once); a long poll
                    on A wakes when the approval is voted on B
    KillUnderLoad   the sequencer replica SIGKILLed while both take
                    intents: every intent acknowledged (201) by either is
                    readable from the survivor and in the audit log, the
                    survivor takes the sequencer over, `audit verify --db
                    URL` passes
    DatabaseRestart the database stopped and started again, then
                    restarted (pg_ctl), under load, on a cluster of the
                    test's own: requests fail closed (503
                    STORE_UNAVAILABLE, never a 201 whose intent is not
                    recorded), then succeed again on the same processes
    StoreCopy       a dev server's SQLite store copied with `intentgate
                    store copy` and served from PostgreSQL: its records are
                    all there, and the log verifies with the same key and
                    the checkpoints signed before the copy
    PgCluster       scripts/pg-cluster.sh: start, down, up, restart, stop,
                    --durable, a taken port retried
    DatabaseFlag    `serve --database`: overrides the config; refuses an
                    empty value and a URL holding a password
    Layout          the race over two replicas and the sequencer killed
                    under load again, with the replicas' config, keys,
                    anchor file and logs under the build tree (inside the
                    clone) and under /var/lib or /srv, in a directory
                    whose name holds a space and a non-ASCII letter

Nothing waits on a timer: each step waits (wait_until, with a deadline) for
what it can observe - a count of answers, a log line, a parked poll.

    INTENTGATE_BIN=build/cli/intentgate IG_TEST_STORE=postgresql \\
      IG_TEST_PG_URL=$(scripts/pg-cluster.sh start /tmp/igpg) \\
      python3 tests/integration/test_replicas.py
"""
import bisect
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg  # noqa: E402
from harness import BIN, Server, parallel, run_tests, wait_until  # noqa: E402
from harness import layout_roots, log_events as events  # noqa: E402

# A request whose connection was dropped (a killed replica's, or a
# refused connection to it).
DROPPED = (OSError, http.client.HTTPException)

# What GET /v1/intents/ID says of an intent that was allowed: its grant
# may have expired by the time a long test reads it (grant_ttl).
GRANTED = ("ALLOWED", "EXPIRED")

# The log event of the replica that takes the sequencer's advisory lock
# (STORE_PG_LOCK_SEQUENCER), first or after the holder died
# (store/store_pg_audit*.c; audit.sequencer_stopped when it lets go).
SEQUENCER_EVENT = "audit.sequencer_started"


def ig(*args, timeout=120):
    """Run the intentgate CLI: (status, stdout, stderr)."""
    p = subprocess.run([BIN] + list(args), capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def leaves(db):
    """The audit log's leaves in db (a file or a URL), as parsed JSON."""
    rc, out, err = ig("audit", "export", "--db", db)
    if rc != 0:
        raise AssertionError("audit export --db %s: %s" % (db, err))
    return [json.loads(line) for line in out.splitlines() if line]


class Replicas:
    """n replicas of one dev config on database. The config, keys and
    policies come from a dev server started once on the database (which
    also creates the schema) and stopped."""

    def __init__(self, n, database, root=None):
        """root: the directory the replicas' files go under (a fresh
        directory in it; tempfile's default when None)."""
        self.database = database
        tmp = None
        if root is not None:
            tmp = tempfile.mkdtemp(prefix="ig replica \u00fc ", dir=root)
        boot = Server.dev(tmp=tmp, database=database)
        self.tmp = boot.tmp
        self.env = {k: v for k, v in boot.env.items()
                    if k != "INTENTGATE_URL"}
        rc = boot.stop()
        if rc != 0:
            log = boot.log()
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise AssertionError("the first server exit %s:\n%s"
                                 % (rc, log[-4000:]))
        self.conf = os.path.join(boot.data, "intentgate.conf")
        self.servers = []
        try:
            for _ in range(n):
                self.servers.append(self.start())
        except Exception:
            self.finish(check=False)
            raise

    def start(self):
        tmp = tempfile.mkdtemp(prefix="replica-", dir=self.tmp)
        return Server.custom(self.conf, tmp, self.env,
                             database=self.database)

    def finish(self, check=True, killed=()):
        """Stop every replica (but the killed ones); raise unless each
        exited 0 with no sanitizer report."""
        problems = []
        for s in self.servers:
            rc = s.stop()
            if s in killed:
                continue
            log = s.log()
            if rc != 0 or "Sanitizer" in log or "runtime error" in log:
                problems.append("replica on port %d exit %s:\n%s"
                                % (s.port, rc, log[-4000:]))
        if check and problems:
            raise AssertionError("\n".join(problems))
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ---- as an agent, executor, approver, admin ----

    def allow(self, srv, resource, amount=10):
        st, body, _ = srv.submit("payments.refund", resource,
                                 {"amount": amount},
                                 token=self.env["INTENTGATE_AGENT_TOKEN"])
        if (st, body.get("decision") if isinstance(body, dict) else None) \
                != (201, "ALLOW"):
            raise AssertionError("submit on port %d: %s %s"
                                 % (srv.port, st, body))
        return body

    def intent(self, srv, iid):
        return srv.call("GET", "/v1/intents/" + iid,
                        self.env["INTENTGATE_ADMIN_TOKEN"])

    def redeem(self, srv, body):
        return srv.redeem(body["grant"], body["intent_id"],
                          self.env["INTENTGATE_EXECUTOR_TOKEN"])

    def login(self, srv):
        st, body, _ = srv.call(
            "POST", "/v1/approver/login", None,
            {"approver": self.env["INTENTGATE_APPROVER_ID"],
             "password": self.env["INTENTGATE_APPROVER_PASSWORD"]})
        if st != 200:
            raise AssertionError("login on port %d: %s %s"
                                 % (srv.port, st, body))
        return body["token"]


class Load:
    """Threads submitting intents (ALLOW) to replicas until stop(): two
    per replica. Every answer is kept: (replica index, answered at -
    time.monotonic(), status or None when the connection failed, body)."""

    def __init__(self, reps, servers, per_replica=2):
        self.reps = reps
        self.servers = servers
        self.answers = []
        self.times = {}  # (replica, status, code): when, in order
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.threads = [
            threading.Thread(target=self._run, args=(i, t), daemon=True)
            for i in range(len(servers)) for t in range(per_replica)]
        for t in self.threads:
            t.start()

    def _run(self, i, t):
        srv = self.servers[i]
        n = 0
        while not self.done.is_set():
            n += 1
            try:
                st, body, _ = srv.call(
                    "POST", "/v1/intents",
                    self.reps.env["INTENTGATE_AGENT_TOKEN"],
                    {"action": "payments.refund",
                     "resource": "load/%d/%d/%d" % (i, t, n),
                     "params": {"amount": 1}}, timeout=60)
            except DROPPED as e:
                st, body = None, str(e)
            code = (body.get("error", {}).get("code")
                    if isinstance(body, dict) else None)
            with self.lock:
                now = time.monotonic()
                self.answers.append((i, now, st, body))
                for key in {(i, st, None), (i, st, code)}:
                    self.times.setdefault(key, []).append(now)
            if st is None and srv.proc.poll() is not None:
                return  # killed: nothing more to ask it

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(90)
            if t.is_alive():
                raise AssertionError("a load thread hangs")

    def count(self, i, status, since=0.0, code=None):
        """How many answers replica i gave with status since (monotonic),
        with that error code when code is given."""
        with self.lock:
            at = self.times.get((i, status, code), [])
            return len(at) - bisect.bisect_left(at, since)

    def acked(self, i=None):
        """The bodies of the 201 answers (of replica i)."""
        with self.lock:
            return [body for r, _, st, body in self.answers
                    if st == 201 and (i is None or r == i)]


def summary(i, st, body):
    """One answer of a Load, short: (replica, status, decision or error
    code, message)."""
    if not isinstance(body, dict):
        return (i, st, None, body)
    err = body.get("error") or {}
    return (i, st, body.get("decision") or err.get("code"),
            body.get("message") or err.get("message"))


# A pooled connection broken by a database restart fails the request that
# next uses it (503 STORE_UNAVAILABLE: reset on next use, docs/
# operations.md "Failover"); a client retries. At most this many times.
RETRIES = 64


def unavailable(res):
    st, body, _ = res
    return st == 503 and isinstance(body, dict) and \
        body.get("error", {}).get("code") == "STORE_UNAVAILABLE"


def retried(call):
    """call() again while it answers 503 STORE_UNAVAILABLE, as a client
    does, at most RETRIES times; its last answer."""
    for _ in range(RETRIES):
        res = call()
        if not unavailable(res):
            return res
    return res


class PgTest(unittest.TestCase):
    def setUp(self):
        self.database = pg.create_database("igrep")

    def tearDown(self):
        pg.drop_database(self.database)

    def race(self, n, root=None, database=None):
        """100 concurrent redeems of one grant spread over n replicas:
        exactly one 200, 99 409 GRANT_ALREADY_REDEEMED."""
        reps = Replicas(n, database or self.database, root)
        try:
            s = reps.servers
            body = reps.allow(s[0], "orders/race-%d" % n)
            results = parallel(100, lambda i: reps.redeem(s[i % n], body))
            statuses = [r[0] for r in results]
            self.assertEqual(statuses.count(200), 1, statuses)
            self.assertEqual(statuses.count(409), 99, statuses)
            for st, b, _ in results:
                if st == 409:
                    self.assertEqual(b["error"]["code"],
                                     "GRANT_ALREADY_REDEEMED", b)
            for srv in s:
                st, rec, _ = reps.intent(srv, body["intent_id"])
                self.assertEqual((st, rec.get("state")), (200, "REDEEMED"),
                                 rec)
        finally:
            reps.finish()

    def kill_the_sequencer(self, root=None, database=None):
        """Two replicas under load; the sequencer SIGKILLed: every
        acknowledged intent is readable and logged, the survivor takes
        the sequencer over, `audit verify --db URL` passes."""
        reps = Replicas(2, database or self.database, root)
        load = None
        killed = ()
        try:
            s = reps.servers
            seq = wait_until(
                lambda: [i for i, srv in enumerate(s)
                         if events(srv, SEQUENCER_EVENT)],
                "a replica logging %s" % SEQUENCER_EVENT, 30)
            self.assertEqual(len(seq), 1, "two sequencers: %s" % seq)
            victim, survivor = s[seq[0]], s[1 - seq[0]]
            v, u = seq[0], 1 - seq[0]
            load = Load(reps, s)
            wait_until(lambda: load.count(v, 201) >= 20 and
                       load.count(u, 201) >= 20, "20 intents on each replica",
                       60)
            victim.signal(signal.SIGKILL)
            victim.proc.wait(30)
            killed = (victim,)
            at_kill = time.monotonic()
            # The survivor goes on answering and takes the sequencer over.
            wait_until(lambda: load.count(u, 201, since=at_kill) >= 20,
                       "20 intents on the survivor after the kill", 60)
            wait_until(lambda: events(survivor, SEQUENCER_EVENT),
                       "the survivor logging %s" % SEQUENCER_EVENT, 60)
            load.stop()
            # The survivor answered every request: only the dead one may
            # have dropped connections.
            with load.lock:
                other = [(st, b) for r, _, st, b in load.answers
                         if r == u and st != 201]
            self.assertEqual(other, [])
            acked = load.acked()
            # Every acknowledged intent is there, whoever acknowledged it.
            for body in acked:
                st, rec, _ = reps.intent(survivor, body["intent_id"])
                self.assertEqual(st, 200, (body["intent_id"], rec))
                self.assertIn(rec.get("state"), GRANTED, rec)
            # ... and in the one audit log, once the survivor sequenced it.
            want = {b["intent_id"] for b in acked}

            def all_logged():
                got = {e.get("intent_id") for e in leaves(reps.database)}
                return want <= got
            wait_until(all_logged, "every acknowledged intent in the log",
                       60)
            key = reps.env["INTENTGATE_AUDIT_KEY"]
            reps.finish(killed=killed)
            reps = None
            rc, out, err = ig("audit", "verify", "--db", database or
                              self.database, "--key", key)
            self.assertEqual(rc, 0, out + err)
        finally:
            if load is not None:
                load.done.set()
            if reps is not None:
                reps.finish(check=False, killed=killed)


class RedeemRace(PgTest):
    def test_two_replicas(self):
        self.race(2)

    def test_a_replica_killed_during_the_race(self):
        """SIGKILL to one of two replicas as 100 redeems are released:
        at most one 200 (none if the dead one redeemed and died before
        answering), and the grant is spent exactly once either way."""
        reps = Replicas(2, self.database)
        victim, survivor = reps.servers
        try:
            body = reps.allow(survivor, "orders/race-kill")

            def one(i):
                if i == 0:
                    victim.signal(signal.SIGKILL)
                    return (None, None)
                srv = reps.servers[i % 2]
                try:
                    st, b, _ = reps.redeem(srv, body)
                except DROPPED:
                    return (srv, None)  # the dead one dropped it
                return (srv, (st, b.get("error", {}).get("code")))

            results = parallel(101, one)
            victim.proc.wait(30)
            got = [r for srv, r in results if srv is not None]
            self.assertLessEqual([r[0] for r in got if r].count(200), 1,
                                 results)
            for srv, r in results:
                if srv is survivor or (srv is victim and r is not None):
                    self.assertIn(r, ((200, None),
                                      (409, "GRANT_ALREADY_REDEEMED")))
            # Spent, whoever spent it: the survivor's tries cannot all
            # have missed it.
            st, rec, _ = reps.intent(survivor, body["intent_id"])
            self.assertEqual((st, rec.get("state")), (200, "REDEEMED"), rec)
            st, res, _ = reps.redeem(survivor, body)
            self.assertEqual((st, res["error"]["code"]),
                             (409, "GRANT_ALREADY_REDEEMED"), res)
        finally:
            reps.finish(killed=(victim,))

    def test_three_replicas(self):
        self.race(3)


class Across(PgTest):
    def setUp(self):
        super().setUp()
        self.reps = Replicas(2, self.database)
        self.a, self.b = self.reps.servers

    def tearDown(self):
        try:
            self.reps.finish()
        finally:
            super().tearDown()

    def test_grant_issued_on_one_redeems_on_another(self):
        body = self.reps.allow(self.a, "orders/across")
        st, res, _ = self.reps.redeem(self.b, body)
        self.assertEqual(st, 200, res)
        self.assertEqual(res["intent"]["intent_id"], body["intent_id"])
        st, res, _ = self.reps.redeem(self.a, body)
        self.assertEqual((st, res["error"]["code"]),
                         (409, "GRANT_ALREADY_REDEEMED"), res)
        st, rec, _ = self.reps.intent(self.a, body["intent_id"])
        self.assertEqual(rec["state"], "REDEEMED", rec)

    def test_long_poll_on_a_wakes_on_a_vote_on_b(self):
        st, body, _ = self.a.submit(
            "payments.refund", "orders/wake", {"amount": 500},
            token=self.reps.env["INTENTGATE_AGENT_TOKEN"])
        self.assertEqual((st, body.get("decision")), (201, "ESCALATE"), body)
        iid = body["intent_id"]
        out = {}

        def poll():
            t0 = time.monotonic()
            out["res"] = self.a.call(
                "GET", "/v1/intents/%s?wait=60" % iid,
                self.reps.env["INTENTGATE_AGENT_TOKEN"], timeout=90)
            out["elapsed"] = time.monotonic() - t0

        t = threading.Thread(target=poll)
        t.start()
        # The agent waits on A: B's vote must wake it.
        wait_until(lambda: not t.is_alive() or
                   (self.a.metric("intentgate_long_polls_parked") or 0) >= 1,
                   "the long poll parked on A")
        self.assertTrue(t.is_alive(), "the long poll was answered at once: "
                        "%r" % (out.get("res"),))
        token = self.reps.login(self.b)
        st, res, _ = self.b.call(
            "POST", "/v1/approvals/%s/votes" % body["approval"]["id"], token,
            {"vote": "approve", "intent_hash": body["intent_hash"]})
        self.assertEqual((st, res.get("status")), (200, "APPROVED"), res)
        t.join(90)
        st, rec, _ = out["res"]
        self.assertEqual((st, rec.get("state")), (200, "ALLOWED"), rec)
        self.assertTrue(rec["grant"].startswith("v4.public."), rec)
        # Woken by the vote, not by the end of the wait.
        self.assertLess(out["elapsed"], 30, out)


class KillUnderLoad(PgTest):
    def test_sigkill_the_sequencer_under_load(self):
        self.kill_the_sequencer()


class Layout(PgTest):
    def test_data_under_the_clone_and_var_lib(self):
        for root in layout_roots():
            with self.subTest(root=root):
                database = pg.create_database("iglay")
                try:
                    self.race(2, root, database)
                finally:
                    pg.drop_database(database)
                database = pg.create_database("iglay")
                try:
                    self.kill_the_sequencer(root, database)
                finally:
                    pg.drop_database(database)


class DatabaseRestart(unittest.TestCase):
    """On a cluster of the test's own: its server is stopped and started
    under the replicas."""

    @classmethod
    def setUpClass(cls):
        cls.cluster = pg.Cluster.start()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()

    def setUp(self):
        self.reps = Replicas(2, self.cluster.create_database())
        self.load = Load(self.reps, self.reps.servers)
        self.pids = [s.proc.pid for s in self.reps.servers]

    def tearDown(self):
        self.load.done.set()
        self.reps.finish()

    def wait_answers(self, status, n, since=0.0, code=None, what=""):
        for i in range(2):
            wait_until(lambda: self.load.count(i, status, since, code) >= n,
                       "%d answers %s%s from replica %d %s"
                       % (n, status, " " + code if code else "", i, what),
                       120)

    def check_fail_closed(self):
        """After the load: every answer was a recorded ALLOW or a 503
        STORE_UNAVAILABLE; every ALLOW is readable and its grant redeems;
        the replicas are the processes they were, and listen again."""
        self.load.stop()
        with self.load.lock:
            answers = list(self.load.answers)
        bad = [summary(i, st, b) for i, _, st, b in answers
               if not isinstance(b, dict) or
               (not (st == 201 and b.get("decision") == "ALLOW" and
                     b.get("grant")) and
                not (st == 503 and
                     b.get("error", {}).get("code") == "STORE_UNAVAILABLE"))]
        self.maxDiff = None
        self.assertEqual(bad[:10], [], "%d answers neither a recorded ALLOW "
                         "nor 503 STORE_UNAVAILABLE (replica, status, "
                         "decision or code, message; the first 10)"
                         % len(bad))
        s = self.reps.servers
        self.assertEqual([x.proc.pid for x in s], self.pids)
        self.assertEqual([x.proc.poll() for x in s], [None, None])
        acked = self.load.acked()
        for k, body in enumerate(acked):
            st, rec, _ = retried(lambda: self.reps.intent(
                s[k % 2], body["intent_id"]))
            self.assertEqual(st, 200, (body["intent_id"], rec))
            self.assertIn(rec.get("state"), GRANTED, rec)
        # The latest grant of each replica redeems on the other.
        for i in range(2):
            last = self.load.acked(i)[-1]
            st, res, _ = retried(lambda: self.reps.redeem(s[1 - i], last))
            self.assertEqual(st, 200, res)
        # Each replica listens again: a long poll on one wakes on a redeem
        # on the other. First each listener is back (logged): its return
        # wakes every poll once (what was notified meanwhile is lost), which
        # would answer a poll parked before it at once.
        for r in s:
            wait_until(lambda: r.log().count('"store.pg_listener_back"') >
                       self.listener_back.get(r.port, 0),
                       "the listener of port %d back" % r.port, timeout=60)
        for i in range(2):
            self.wakes(s[i], s[1 - i])

    def wakes(self, a, b):
        body = retried(lambda: a.submit(
            "payments.refund", "after/%d" % a.port, {"amount": 1},
            token=self.reps.env["INTENTGATE_AGENT_TOKEN"]))[1]
        self.assertEqual(body.get("decision"), "ALLOW", body)
        for _ in range(RETRIES):
            out = {}

            def poll():
                t0 = time.monotonic()
                out["res"] = a.call(
                    "GET", "/v1/intents/%s?wait=60" % body["intent_id"],
                    self.reps.env["INTENTGATE_AGENT_TOKEN"], timeout=90)
                out["elapsed"] = time.monotonic() - t0

            t = threading.Thread(target=poll)
            t.start()
            wait_until(lambda: not t.is_alive() or
                       (a.metric("intentgate_long_polls_parked") or 0) >= 1,
                       "the long poll parked on port %d" % a.port)
            if t.is_alive() or not unavailable(out["res"]):
                break
        self.assertTrue(t.is_alive(), "the long poll was answered at once: "
                        "%r" % (out.get("res"),))
        st, res, _ = retried(lambda: self.reps.redeem(b, body))
        self.assertEqual(st, 200, res)
        t.join(90)
        st, rec, _ = out["res"]
        self.assertEqual((st, rec.get("state")), (200, "REDEEMED"), rec)
        self.assertLess(out["elapsed"], 30, out)

    def mark_listeners(self):
        """Count each replica's listener returns so far."""
        self.listener_back = {r.port: r.log().count('"store.pg_listener_back"')
                              for r in self.reps.servers}

    def test_database_down_then_up_under_load(self):
        self.wait_answers(201, 10, what="before the outage")
        self.mark_listeners()
        self.cluster.down()
        down = time.monotonic()
        self.wait_answers(503, 3, down, "STORE_UNAVAILABLE",
                          "while the database is down")
        self.cluster.up()
        up = time.monotonic()
        self.wait_answers(201, 10, up, what="once the database is back")
        self.check_fail_closed()

    def test_database_restarted_under_load(self):
        self.wait_answers(201, 10, what="before the restart")
        self.mark_listeners()
        self.cluster.restart()
        after = time.monotonic()
        self.wait_answers(201, 10, after, what="after the restart")
        self.check_fail_closed()


class StoreCopy(unittest.TestCase):
    def test_sqlite_store_copied_to_postgresql_verifies(self):
        tmp = tempfile.mkdtemp(prefix="ig-copy-")
        sqlite = os.path.join(tmp, "intentgate.db")
        url = pg.create_database("igcopy")
        srv = Server.dev(tmp=tmp, database=sqlite)
        try:
            self.round_trip(srv, tmp, sqlite, url)
        finally:
            srv.stop()
            shutil.rmtree(tmp, ignore_errors=True)
            pg.drop_database(url)

    def round_trip(self, srv, tmp, sqlite, url):
        env = srv.env
        key = env["INTENTGATE_AUDIT_KEY"]
        agent, admin = env["INTENTGATE_AGENT_TOKEN"], env["INTENTGATE_ADMIN_TOKEN"]
        bodies = []
        for k in range(3):
            st, b, _ = srv.submit("payments.refund", "copy/%d" % k,
                                  {"amount": 10 + k}, token=agent)
            self.assertEqual((st, b.get("decision")), (201, "ALLOW"), b)
            bodies.append(b)
        self.assertEqual(srv.redeem(bodies[0]["grant"],
                                    bodies[0]["intent_id"])[0], 200)
        st, esc, _ = srv.submit("payments.refund", "copy/esc",
                                {"amount": 500}, token=agent)
        self.assertEqual((st, esc.get("decision")), (201, "ESCALATE"), esc)
        st, login, _ = srv.call("POST", "/v1/approver/login", None,
                                {"approver": env["INTENTGATE_APPROVER_ID"],
                                 "password": env["INTENTGATE_APPROVER_PASSWORD"]})
        self.assertEqual(st, 200, login)
        st, res, _ = srv.call(
            "POST", "/v1/approvals/%s/votes" % esc["approval"]["id"],
            login["token"], {"vote": "approve",
                             "intent_hash": esc["intent_hash"]})
        self.assertEqual(st, 200, res)
        ids = [b["intent_id"] for b in bodies] + [esc["intent_id"]]
        before = {i: srv.call("GET", "/v1/intents/" + i, admin)[1]["state"]
                  for i in ids}
        self.assertEqual(srv.stop(), 0, srv.log()[-4000:])

        # The SQLite store as it stands: its leaves and checkpoints.
        cps = os.path.join(tmp, "checkpoints.jsonl")
        rc, out, err = ig("audit", "export", "--db", sqlite,
                          "--checkpoints-out", cps)
        self.assertEqual(rc, 0, err)
        old_leaves = out.splitlines()
        with open(cps) as f:
            self.assertTrue(f.read().strip(), "no checkpoint before the copy")
        rc, out, err = ig("audit", "verify", "--db", sqlite, "--key", key)
        self.assertEqual(rc, 0, out + err)

        rc, out, err = ig("store", "copy", "--from", sqlite, "--to", url)
        self.assertEqual(rc, 0, out + err)

        # Served from PostgreSQL, with the same keys and anchor file.
        srv2 = Server.dev(tmp=tmp, database=url)
        try:
            for i in ids:
                st, rec, _ = srv2.call("GET", "/v1/intents/" + i, admin)
                self.assertEqual((st, rec.get("state")), (200, before[i]),
                                 rec)
            self.assertEqual(srv2.redeem(bodies[0]["grant"],
                                         bodies[0]["intent_id"])[0], 409)
            self.assertEqual(srv2.redeem(bodies[1]["grant"],
                                         bodies[1]["intent_id"])[0], 200)
            st, b, _ = srv2.submit("payments.refund", "copy/after",
                                   {"amount": 20}, token=agent)
            self.assertEqual((st, b.get("decision")), (201, "ALLOW"), b)
        finally:
            rc = srv2.stop()
        self.assertEqual(rc, 0, srv2.log()[-4000:])

        # The log verifies with the same key, against the checkpoints
        # signed on SQLite too, and begins with the same leaves.
        rc, out, err = ig("audit", "verify", "--db", url, "--key", key,
                          "--checkpoints", cps)
        self.assertEqual(rc, 0, out + err)
        rc, out, err = ig("audit", "export", "--db", url)
        self.assertEqual(rc, 0, err)
        new_leaves = out.splitlines()
        self.assertGreater(len(new_leaves), len(old_leaves))
        self.assertEqual(new_leaves[:len(old_leaves)], old_leaves)


class PgCluster(unittest.TestCase):
    """scripts/pg-cluster.sh, which CI and DatabaseRestart rely on."""

    def reachable(self, url):
        try:
            return pg.psql(url, "SELECT 1", timeout=30).strip() == "1"
        except AssertionError:
            return False

    def test_start_down_up_restart_stop(self):
        c = pg.Cluster.start()
        try:
            self.assertTrue(c.url.startswith("postgresql://postgres@127.0.0.1:"))
            self.assertEqual(pg.psql(c.url, "SHOW listen_addresses").strip(),
                             "127.0.0.1")
            self.assertGreaterEqual(
                int(pg.psql(c.url, "SHOW max_connections")), 300)
            self.assertEqual(pg.psql(c.url, "SHOW fsync").strip(), "off")
            db = c.create_database()
            pg.psql(db, "CREATE TABLE t (x bigint); INSERT INTO t VALUES (7)")
            c.down()
            self.assertFalse(self.reachable(c.url))
            c.up()
            self.assertEqual(pg.psql(db, "SELECT x FROM t").strip(), "7")
            c.restart()
            self.assertEqual(pg.psql(db, "SELECT x FROM t").strip(), "7")
            # start refuses a directory that is not empty.
            p = subprocess.run([pg.CLUSTER_SCRIPT, "start", c.path],
                               capture_output=True, text=True)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("not empty", p.stderr)
        finally:
            c.stop()
        self.assertFalse(os.path.exists(c.path))
        self.assertFalse(self.reachable(c.url))

    def test_durable(self):
        c = pg.Cluster.start(durable=True)
        try:
            self.assertEqual(pg.psql(c.url, "SHOW fsync").strip(), "on")
            self.assertEqual(
                pg.psql(c.url, "SHOW synchronous_commit").strip(), "on")
        finally:
            c.stop()

    def test_a_taken_port_is_retried(self):
        import socket
        hold = socket.socket()
        hold.bind(("127.0.0.1", 0))
        hold.listen()
        port = hold.getsockname()[1]
        path = tempfile.mkdtemp(prefix="igpg-")
        try:
            p = subprocess.run([pg.CLUSTER_SCRIPT, "start", path],
                               capture_output=True, text=True, timeout=120,
                               env=dict(os.environ,
                                        IG_PG_CLUSTER_PORT=str(port)))
            self.assertEqual(p.returncode, 0, p.stderr)
            url = p.stdout.strip()
            self.assertNotIn(":%d/" % port, url)
            self.assertTrue(self.reachable(url))
            with open(os.path.join(path, "log")) as f:
                self.assertIn("could not create any TCP/IP sockets", f.read())
        finally:
            hold.close()
            subprocess.run([pg.CLUSTER_SCRIPT, "stop", path],
                           capture_output=True)
            shutil.rmtree(path, ignore_errors=True)


class DatabaseFlag(unittest.TestCase):
    """`serve --database` (cli/cmd_serve.c); runs on SQLite."""

    def test_overrides_the_dev_config(self):
        tmp = tempfile.mkdtemp(prefix="ig-flag-")
        other = os.path.join(tmp, "other.db")
        srv = Server.dev(tmp=tmp, database=other)
        try:
            started = events(srv, "server.started")
            self.assertEqual(started[0]["database"], other, started)
            self.assertTrue(os.path.exists(other))
            self.assertFalse(os.path.exists(
                os.path.join(tmp, "data", "intentgate.db")))
        finally:
            rc = srv.stop()
            srv_log = srv.log()
            shutil.rmtree(tmp, ignore_errors=True)
        self.assertEqual(rc, 0, srv_log[-4000:])
        self.assertTrue(started)

    def test_refusals(self):
        tmp = tempfile.mkdtemp(prefix="ig-flag-")
        try:
            data = os.path.join(tmp, "data")
            for value, says in (
                    ("", "--database needs"),
                    ("postgresql://ig:secret@127.0.0.1:1/ig", "password"),
                    ("postgresql://ig@127.0.0.1:1/ig?password=secret",
                     "password")):
                rc, out, err = ig("serve", "--dev", "--data", data,
                                  "--listen", "127.0.0.1:0", "--database",
                                  value, timeout=30)
                self.assertEqual(rc, 2, (value, out, err))
                self.assertIn(says, err, value)
                self.assertNotIn("secret", err, value)
            rc, out, err = ig("serve", "--dev", "--data", data, "--database",
                              timeout=30)
            self.assertEqual(rc, 2, err)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    run_tests()
