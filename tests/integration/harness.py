"""harness.py - start the real `intentgate serve` on a free loopback port and
talk to it over HTTP. Python standard library only.

    srv = Server.dev(binary)            # serve --dev in a fresh temp dir
    srv = Server.custom(binary, conf)   # serve --config with a config you wrote
    status, body, headers = srv.call("POST", "/v1/intents", token, {...})
    srv.stop()
    srv.wait_parked(1)                  # a long poll is parked (/metrics)
    srv.rows("SELECT ...")              # the store's rows, either backend
    srv.audit_events()                  # the audit log's events, settled
    srv.settled()                       # PostgreSQL: audit_queue sequenced
    stall = srv.stall_writes()          # the writer waits; stall.release()
    srv.store()                         # what `audit verify --db` takes
    run_tests()                         # the suite's main: see exit_status

A suite exits 0 only when every test ran and passed: a skipped test exits
SKIPPED, which tests/CMakeLists.txt registers as ctest's SKIP_RETURN_CODE,
and scripts/run-ctest.sh (CI's ctest step) fails a run with any test skipped.

Time-dependent tests start the server with clock=True and move its test
clock on with srv.advance(seconds) instead of waiting (the binaries must be
built with -DIG_TEST_CLOCK=ON, as scripts/test.sh does; core/ig_time.c):
the file tmp/test-clock holds the offset, and every process started with
IG_TEST_CLOCK_FILE naming it (clock_env) shares that time.

On PostgreSQL: with IG_TEST_STORE=postgresql in the environment (the .pg
variants tests/CMakeLists.txt registers), every server started here gets
a fresh database of the cluster at IG_TEST_PG_URL (pg.py), passed with
`serve --database URL`; a server restarted in the same tmp gets the same
one, and cleanup() drops it. Without IG_TEST_PG_URL such a run fails. A
test may also name its server's database itself (database=: a SQLite file
or a URL, e.g. several replicas on one). run_tests() leaves out the cases
pg.LEFT_OUT lists (they need SQLite itself) and says which.
"""
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import pg

BIN = os.environ.get("INTENTGATE_BIN", "intentgate")
# A suite that could not run all its tests (ctest's SKIP_RETURN_CODE).
SKIPPED = 77


def exit_status(result):
    """1 when a test failed, erred, or was marked as an expected failure (it
    cannot fail), or when no test ran; SKIPPED when a test was skipped;
    0 only when every test ran and passed."""
    bad = (len(result.failures) + len(result.errors) +
           len(result.expectedFailures) + len(result.unexpectedSuccesses))
    if bad or result.testsRun == 0:
        return 1
    return SKIPPED if result.skipped else 0


def _flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _flatten(t)
        else:
            yield t


def _case_name(test):
    """Class.method of a loaded test case."""
    return ".".join(test.id().split(".")[-2:])


def leave_out_on_postgres(suite, module_name, whole):
    """The tests of suite less the cases pg.LEFT_OUT lists for the module
    (a test file's name without .py), and a line saying which. Without
    IG_TEST_PG_URL, or with an entry of the list that names no case of a
    whole module, an AssertionError."""
    pg.base_url()
    listed = pg.left_out(module_name)
    tests = list(_flatten(suite))
    names = {_case_name(t) for t in tests}
    stale = sorted(n for n in listed if n not in names)
    if whole and stale:
        raise AssertionError(
            "tests/integration/pg.py LEFT_OUT names cases %s has not: %s"
            % (module_name, ", ".join(stale)))
    kept = [t for t in tests if _case_name(t) not in listed]
    out = sorted(n for n in names if n in listed)
    line = "%d cases left out on PostgreSQL%s" % (
        len(out), "".join(("; " if i else ": ") + "%s (%s)" % (n, listed[n])
                          for i, n in enumerate(out)))
    return unittest.TestSuite(kept), line


def run_tests(module="__main__", names=None):
    """Run the module's tests (or the named ones: class or class.method),
    print "N passed, M failed, K skipped" and exit with exit_status.
    On PostgreSQL (pg.on_postgres()) the cases pg.LEFT_OUT lists are left
    out, and the last line says so."""
    mod = sys.modules[module]
    names = sys.argv[1:] if names is None else names
    loader = unittest.defaultTestLoader
    if names:
        suite = unittest.TestSuite(loader.loadTestsFromName(n, mod)
                                   for n in names)
    else:
        suite = loader.loadTestsFromModule(mod)
    left_out = None
    if pg.on_postgres():
        module_name = os.path.splitext(os.path.basename(
            getattr(mod, "__file__", None) or sys.argv[0]))[0]
        try:
            suite, left_out = leave_out_on_postgres(suite, module_name,
                                                    not names)
        except AssertionError as e:
            print("FAILED: %s" % e)
            sys.stdout.flush()
            sys.exit(1)
        print("store: PostgreSQL, a database per server on %s"
              % pg.base_url())
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = (len(result.failures) + len(result.errors) +
              len(result.expectedFailures) + len(result.unexpectedSuccesses))
    passed = result.testsRun - failed - len(result.skipped)
    print("%d passed, %d failed, %d skipped" % (max(passed, 0), failed,
                                                 len(result.skipped)))
    for t, why in result.skipped:
        print("SKIPPED %s: %s (a skipped test fails CI)" % (t.id(), why))
    if left_out is not None:
        print(left_out)
    sys.stdout.flush()
    sys.exit(exit_status(result))
CLOCK_ENV = "IG_TEST_CLOCK_FILE"


# ---- the test clock ----

def clock_path(tmp):
    """The test clock file of the processes started in tmp (created at 0
    when missing; a restart in the same tmp keeps its time)."""
    path = os.path.join(tmp, "test-clock")
    if not os.path.exists(path):
        clock_write(path, 0)
    return path


def clock_env(path):
    """What to add to a child's environment for it to run on the test
    clock at path."""
    return {CLOCK_ENV: path}


def clock_write(path, offset):
    # Renamed over, never written in place: a reader sees the old file or
    # the new one, never a half-written one.
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write("%d\n" % offset)
    os.replace(tmp, path)


def clock_advance(path, seconds):
    """Move the test clock at path on by whole seconds (> 0)."""
    if seconds <= 0 or int(seconds) != seconds:
        raise ValueError("the test clock moves forward by whole seconds")
    with open(path) as f:
        now = int(f.read())
    clock_write(path, now + int(seconds))


def require_test_clock(log_text, what):
    """Fail (never skip) when what did not start on the test clock."""
    if '"test_clock.active"' not in log_text:
        raise AssertionError(
            "%s is not running on the test clock: build with "
            "-DIG_TEST_CLOCK=ON (scripts/test.sh does) to run the "
            "time-dependent tests" % what)


def bundle_revision(d):
    """A bundle's revision as pol_bundle_load computes it (pol.h): SHA-256
    over (name, NUL, size, NUL, content) of every .lua file, name order."""
    h = hashlib.sha256()
    for name in sorted(n for n in os.listdir(d) if n.endswith(".lua")):
        with open(os.path.join(d, name), "rb") as f:
            data = f.read()
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" +
                 data)
    return "sha256:" + h.hexdigest()


def layout_roots():
    """Where a test installs what operators install: the build tree (the
    working directory ctest gives, inside the clone) and /var/lib or /srv,
    the first that is writable (else the build tree again)."""
    roots = [os.getcwd()]
    for system in ("/var/lib", "/srv"):
        if os.access(system, os.W_OK):
            roots.append(system)
            break
    else:
        roots.append(os.getcwd())
    return roots


def log_events(srv, name):
    """The JSON records of srv's log whose event is name."""
    out = []
    for line in srv.log().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("event") == name:
            out.append(rec)
    return out


def wait_until(pred, what, timeout=20.0):
    """Poll pred (a state check, not a timer) until it returns a true
    value, which is returned; fail naming what after timeout seconds."""
    deadline = time.time() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.time() >= deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


class Server:
    def __init__(self, proc, tmp, env, log_path):
        self.proc = proc
        self.tmp = tmp
        self.env = env
        self.log_path = log_path
        url = env["INTENTGATE_URL"]
        hostport = url.split("//", 1)[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.clock = None  # the test clock file (clock=True)
        self.database = None  # what --database named, or None
        self.conf_path = None  # custom(): the config file

    # ---- lifecycle ----

    @staticmethod
    def _spawn(args, tmp):
        log_path = os.path.join(tmp, "server.log")
        log = open(log_path, "ab")
        env = dict(os.environ)
        env["LIBC_FATAL_STDERR_"] = "1"  # glibc's fatal messages into the log
        proc = subprocess.Popen(
            [BIN, "serve"] + args,
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        log.close()
        return proc, log_path

    @classmethod
    def _spawn_clocked(cls, args, tmp, clock):
        """_spawn, on the test clock of tmp when clock is true."""
        if not clock:
            return cls._spawn(args, tmp)
        saved = os.environ.get(CLOCK_ENV)
        os.environ[CLOCK_ENV] = clock_path(tmp)
        try:
            return cls._spawn(args, tmp)
        finally:
            if saved is None:
                os.environ.pop(CLOCK_ENV, None)
            else:
                os.environ[CLOCK_ENV] = saved

    def _clocked(self, clock):
        self.clock = clock_path(self.tmp) if clock else None
        if clock:
            try:
                require_test_clock(self.log(), "the PDP")
            except AssertionError:
                self.stop()
                self.cleanup()
                raise

    def now(self):
        """The server's wall clock: real seconds plus its test clock's
        offset (0 without one)."""
        if self.clock is None:
            return int(time.time())
        with open(self.clock) as f:
            return int(time.time()) + int(f.read())

    def advance(self, seconds):
        """Move this server's test clock on (started with clock=True)."""
        if self.clock is None:
            raise AssertionError("this server was not started with clock=True")
        clock_advance(self.clock, seconds)

    @staticmethod
    def _database(tmp, database):
        """What --database names: database when given, else on PostgreSQL
        the database of tmp (pg.database_for), else nothing (the
        config's)."""
        if database is None and pg.on_postgres():
            database = pg.database_for(tmp)
        return database

    @classmethod
    def dev(cls, tmp=None, listen="127.0.0.1:0", clock=False, database=None):
        """serve --dev in tmp/data (a fresh tmp when None); database
        overrides the dev config's SQLite file (see _database)."""
        tmp = tmp or tempfile.mkdtemp(prefix="ig-it-")
        data = os.path.join(tmp, "data")
        database = cls._database(tmp, database)
        args = ["--dev", "--data", data, "--listen", listen]
        if database is not None:
            args += ["--database", database]
        proc, log_path = cls._spawn_clocked(args, tmp, clock)
        env = {}
        deadline = time.time() + 20
        while time.time() < deadline:
            line = proc.stdout.readline().decode()
            if not line:
                raise RuntimeError("server exited: " + open(log_path).read())
            if line.startswith("#"):
                continue
            k, _, v = line.strip().partition("=")
            env[k] = v
            if k == "INTENTGATE_PUBLIC_KEY":
                break
        srv = cls(proc, tmp, env, log_path)
        srv.data = data
        srv.database = database
        srv.wait_healthy()
        srv._clocked(clock)
        return srv

    @classmethod
    def custom(cls, conf_path, tmp, env, clock=False, database=None):
        """serve --config conf_path; env must hold the tokens you configured.
        The config should listen on 127.0.0.1:0; the port is read from the
        server's start log line. database overrides the config's (see
        _database)."""
        database = cls._database(tmp, database)
        args = ["--config", conf_path]
        if database is not None:
            args += ["--database", database]
        proc, log_path = cls._spawn_clocked(args, tmp, clock)
        deadline = time.time() + 20
        port = None
        while time.time() < deadline and port is None:
            if proc.poll() is not None:
                raise RuntimeError("server exited: " + open(log_path).read())
            with open(log_path) as f:
                lines = f.readlines()
            for line in lines:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("event") == "server.started":
                    port = rec["port"]
            time.sleep(0.05)
        if port is None:
            raise RuntimeError("server did not start: " + open(log_path).read())
        env = dict(env)
        env["INTENTGATE_URL"] = "http://127.0.0.1:%d" % port
        srv = cls(proc, tmp, env, log_path)
        srv.database = database
        srv.conf_path = conf_path
        srv.wait_healthy()
        srv._clocked(clock)
        return srv

    def wait_healthy(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if self.call("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("server never became healthy")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode

    def cleanup(self):
        """Remove tmp, and on PostgreSQL the database made for it."""
        if pg.on_postgres():
            try:
                pg.drop_database_for(self.tmp)
            except (AssertionError, OSError, subprocess.SubprocessError):
                pass  # dropped at exit (pg.create_database) instead
        shutil.rmtree(self.tmp, ignore_errors=True)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    # ---- observable state ----

    def sqlite_path(self):
        """The SQLite file this server's records are in: --database, else
        the dev config's data/intentgate.db, else the config's database
        (relative to the config file's directory)."""
        if self.database is not None:
            return self.database
        if self.conf_path is None:
            return os.path.join(self.data, "intentgate.db")
        with open(self.conf_path) as f:
            m = re.search(r"^database\s*=\s*(.*?)\s*$", f.read(), re.M)
        if m is None:
            raise AssertionError("no database in " + self.conf_path)
        return os.path.join(os.path.dirname(self.conf_path), m.group(1))

    def rows(self, sql):
        """The rows of one SELECT on this server's store (SQLite opened
        read-only, or PostgreSQL through psql) as dicts: the same for
        numbers and text on both; a blob is bytes on SQLite, hex text on
        PostgreSQL. On PostgreSQL, audit events reach audit_events once the
        sequencer has moved them there (wait for them)."""
        if self.database is not None and pg.is_url(self.database):
            return pg.rows(self.database, sql)
        db = sqlite3.connect("file:%s?mode=ro" % self.sqlite_path(),
                             uri=True)
        try:
            cur = db.execute(sql)
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]
        finally:
            db.close()

    def on_postgres(self):
        """True when this server's records are in PostgreSQL."""
        return self.database is not None and pg.is_url(self.database)

    def store(self):
        """What `audit verify --db` and the other commands take for this
        server's store: the PostgreSQL URL, or the SQLite file."""
        return self.database if self.on_postgres() else self.sqlite_path()

    def settled(self, timeout=30):
        """Wait until every audit event committed so far is in
        audit_events: on PostgreSQL until the sequencer has emptied
        audit_queue (polled: observable state, no timer); on SQLite at
        once (a write puts its events there itself). The server need not
        be running, but on PostgreSQL some PDP must be (or have drained
        the queue when it stopped)."""
        if not self.on_postgres():
            return
        wait_until(lambda: not self.rows("SELECT 1 FROM audit_queue LIMIT 1"),
                   "the audit queue of %s to be sequenced"
                   % pg.dbname(self.database), timeout)

    def audit_events(self):
        """The audit events (parsed JSON) in log order, once settled."""
        self.settled()
        return [json.loads(r["event"]) for r in
                self.rows("SELECT event FROM audit_events ORDER BY seq")]

    def leaf_count(self):
        """How many events the audit log holds, once settled."""
        self.settled()
        return self.rows("SELECT count(*) AS n FROM audit_events")[0]["n"]

    def stall_writes(self):
        """Hold the store's writer (a WriteStall; release() lets it go):
        on SQLite a write transaction on the file (BEGIN IMMEDIATE), on
        PostgreSQL a psql session holding LOCK TABLE intents IN EXCLUSIVE
        MODE (readers go on, every intent's INSERT waits). Returns once
        the lock is held."""
        return WriteStall(self.database if self.on_postgres() else None,
                          None if self.on_postgres() else self.sqlite_path())

    def metric(self, name):
        """The value of an unlabelled metric on GET /metrics, or None."""
        st, text, _ = self.call("GET", "/metrics", raw_response=True)
        if st != 200:
            return None
        m = re.search(rb"^" + re.escape(name.encode()) + rb" (\d+)$", text,
                      re.M)
        return int(m.group(1)) if m else None

    def wait_parked(self, n, timeout=20):
        """Wait until at least n long polls are parked on the server (the
        intentgate_long_polls_parked gauge): a waiter is then certainly
        waiting, and what wakes it can be triggered. Fails after timeout."""
        deadline = time.monotonic() + timeout
        got = None
        while time.monotonic() < deadline:
            got = self.metric("intentgate_long_polls_parked")
            if got is not None and got >= n:
                return got
            time.sleep(0.02)
        raise AssertionError("%d long poll(s) never parked (gauge: %r)"
                             % (n, got))

    # ---- HTTP ----

    def call(self, method, path, token=None, body=None, headers=None, raw=None,
             timeout=30, raw_response=False):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        h = {}
        if token:
            h["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if raw is not None:
            data = raw
        if headers:
            h.update(headers)
        try:
            conn.request(method, path, body=data, headers=h)
            resp = conn.getresponse()
            text = resp.read()
            ctype = resp.getheader("Content-Type", "")
            if raw_response:
                return resp.status, text, dict(resp.getheaders())
            out = json.loads(text) if ctype.startswith("application/json") and text else text
            return resp.status, out, dict(resp.getheaders())
        finally:
            conn.close()

    def submit(self, action, resource, params, token=None, **extra):
        body = {"action": action, "resource": resource, "params": params}
        body.update(extra)
        return self.call("POST", "/v1/intents",
                         token or self.env["INTENTGATE_AGENT_TOKEN"], body)

    def redeem(self, grant, intent_id, token=None):
        return self.call("POST", "/v1/grants/redeem",
                         token or self.env["INTENTGATE_EXECUTOR_TOKEN"],
                         {"grant": grant, "intent_id": intent_id})


class WriteStall:
    """A lock that makes the store's writer wait (Server.stall_writes)."""

    MARKER = "ig-write-stall-held"

    def __init__(self, url, path):
        self.db = self.p = None
        if url is None:
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.execute("BEGIN IMMEDIATE")
            return
        self.p = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d",
             url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, bufsize=1)
        self.p.stdin.write("BEGIN; LOCK TABLE intents IN EXCLUSIVE MODE; "
                           "SELECT '%s';\n" % self.MARKER)
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                err = self.p.stderr.read()
                self.p.wait()
                raise AssertionError("psql could not lock intents: " + err)
            if line.strip() == self.MARKER:
                return

    def release(self):
        """Roll the holding transaction back: the writer goes on."""
        if self.db is not None:
            self.db.execute("ROLLBACK")
            self.db.close()
            self.db = None
        if self.p is not None:
            try:
                self.p.stdin.write("ROLLBACK;\n")
                self.p.stdin.close()
            except OSError:
                pass
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
            self.p.stdout.close()
            self.p.stderr.close()
            self.p = None


def parallel(n, fn):
    """Run fn(i) in n threads released at once; return the results."""
    results = [None] * n
    gate = threading.Barrier(n)

    def run(i):
        gate.wait()
        results[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
