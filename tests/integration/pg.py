"""pg.py - PostgreSQL for the integration tests. Python standard library
only: every statement goes through `psql` (Debian's postgresql-client, a
dependency of the postgresql-15 package scripts/deps.sh installs).

    on_postgres()          IG_TEST_STORE=postgresql: run on PostgreSQL
    base_url()             IG_TEST_PG_URL, or an AssertionError saying so
    url = create_database()  a fresh, empty database; dropped at exit
    drop_database(url)
    psql(url, sql)         run sql; its rows as text, one per line
    rows(url, select)      a SELECT's rows as dicts
    cluster = Cluster.start()  a cluster of the test's own
                               (scripts/pg-cluster.sh): down(), up(),
                               restart(), stop()
    left_out(module)       the cases of module left out on PostgreSQL

scripts/test.sh starts one cluster for the whole run and exports its base
URL (postgresql://postgres@127.0.0.1:PORT/postgres, a user that may
CREATE DATABASE) as IG_TEST_PG_URL; ctest hands it on to the tests it
registers with the suffix .pg, which also set IG_TEST_STORE=postgresql.
A test that needs PostgreSQL and has no IG_TEST_PG_URL fails: it never
skips.

LEFT_OUT is the one reviewed list of the cases a .pg variant does not
run, each with the reason: cases that open, lock or edit the SQLite file
itself, or count the process's sockets. harness.run_tests() leaves them out, and says so ("N cases left out
on PostgreSQL: ..."); a case that is not on the list runs, and fails when it
cannot.
"""
import atexit
import json
import os
import secrets
import subprocess
import threading
import urllib.parse

STORE_ENV = "IG_TEST_STORE"
URL_ENV = "IG_TEST_PG_URL"
HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_SCRIPT = os.path.join(HERE, "..", "..", "scripts", "pg-cluster.sh")

# The cases of the .pg variants that only make sense on SQLite, by
# "module.Class.test": why each is left out. (A case that reads the store
# does it with harness's Server.rows/audit_events, and one that stalls the
# writer with Server.stall_writes: both work on either backend. What is
# left needs SQLite itself.) Review an entry when its case
# changes; an entry naming no case fails the suite (a stale list would
# hide nothing, but it would no longer be a list of what is left out).
LEFT_OUT = {
    "test_pdp_limits.TotalLimit."
    "test_total_limit_holds_and_the_deadline_frees_it":
        "counts every socket of the PDP process: on PostgreSQL the store's "
        "connections are sockets too",
}


def on_postgres():
    """True when this run is on PostgreSQL (IG_TEST_STORE=postgresql),
    False on SQLite (unset, empty or sqlite); any other value is refused."""
    store = os.environ.get(STORE_ENV, "")
    if store in ("", "sqlite"):
        return False
    if store == "postgresql":
        return True
    raise AssertionError("%s=%r: want postgresql or sqlite" % (STORE_ENV,
                                                                store))


def base_url():
    """The base URL of the test cluster; fails (never skips) without it."""
    url = os.environ.get(URL_ENV, "")
    if not is_url(url):
        raise AssertionError(
            "%s is %s: this test needs a PostgreSQL server (scripts/test.sh "
            "starts one with scripts/pg-cluster.sh; by hand: "
            "export %s=$(scripts/pg-cluster.sh start /tmp/igpg)); it fails "
            "without one rather than skip" %
            (URL_ENV, repr(url) if url else "not set", URL_ENV))
    return url


def is_url(database):
    """True when database (what --database takes) names a PostgreSQL
    database rather than a SQLite file."""
    return database.startswith(("postgresql://", "postgres://"))


def with_dbname(url, name):
    """url with its database name replaced by name."""
    u = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + name, u.query,
                                    u.fragment))


def dbname(url):
    return urllib.parse.urlsplit(url).path.lstrip("/")


def psql(url, sql, timeout=60):
    """Run sql (one statement or several) on url with psql, stopping at
    the first error; its rows as text (unaligned, | between columns), or
    an AssertionError with psql's message."""
    p = subprocess.run(
        ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url,
         "-c", sql], capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise AssertionError("psql %s: %s: %s" % (dbname(url), sql,
                                                  p.stderr.strip()))
    return p.stdout


def rows(url, sql, timeout=60):
    """The rows of one SELECT (no trailing ;) as dicts, through
    json_agg: numbers and text as they are; bytea as PostgreSQL's hex
    text ("\\x..")."""
    out = psql(url, "SELECT coalesce(json_agg(q), '[]'::json) FROM (%s) q"
               % sql, timeout)
    return json.loads(out)


_lock = threading.Lock()
_created = []  # URLs of the databases this process created, still there
_count = 0


def create_database(prefix="igt"):
    """A fresh, empty database on the test cluster (a unique name: this
    process's id, a counter and random bits), dropped when the process
    exits unless drop_database did it before. Its URL."""
    global _count
    base = base_url()
    with _lock:
        _count += 1
        n = _count
        if not _created:
            atexit.register(_drop_all)
    name = "%s_%d_%d_%s" % (prefix, os.getpid(), n, secrets.token_hex(3))
    psql(base, "CREATE DATABASE %s" % name)
    url = with_dbname(base, name)
    with _lock:
        _created.append(url)
    return url


def drop_database(url):
    """Drop a database create_database made (closing what is still
    connected to it)."""
    psql(with_dbname(url, "postgres"),
         "DROP DATABASE IF EXISTS %s WITH (FORCE)" % dbname(url))
    with _lock:
        if url in _created:
            _created.remove(url)


def _drop_all():
    for url in list(_created):
        try:
            drop_database(url)
        except (AssertionError, OSError, subprocess.SubprocessError):
            pass  # the cluster is thrown away after the run anyway


def database_for(tmp):
    """The database of the server(s) whose files are in tmp: created on
    first use and named in tmp/pg-database, so that a server restarted in
    the same tmp finds its records again."""
    path = os.path.join(tmp, "pg-database")
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip()
    url = create_database()
    with open(path, "w") as f:
        f.write(url + "\n")
    return url


def drop_database_for(tmp):
    """Drop the database database_for(tmp) created, if any."""
    path = os.path.join(tmp, "pg-database")
    if not os.path.exists(path):
        return
    with open(path) as f:
        url = f.read().strip()
    drop_database(url)
    os.unlink(path)


def left_out(module):
    """{"Class.test": reason} of module (a test file's name without .py)."""
    prefix = module + "."
    return {k[len(prefix):]: v for k, v in LEFT_OUT.items()
            if k.startswith(prefix)}


class Cluster:
    """A PostgreSQL cluster of a test's own (scripts/pg-cluster.sh), for
    tests that stop or restart the server under the PDPs."""

    def __init__(self, path, url):
        self.path = path
        self.url = url

    @classmethod
    def start(cls, durable=False):
        import tempfile
        path = tempfile.mkdtemp(prefix="igpg-")
        args = [CLUSTER_SCRIPT, "start", path] + (["--durable"] if durable
                                                  else [])
        url = cls._run(args)
        return cls(path, url)

    @staticmethod
    def _run(args):
        p = subprocess.run(args, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            raise AssertionError("%s: %s" % (" ".join(args),
                                             p.stderr.strip()))
        return p.stdout.strip()

    def down(self):
        """Stop the server (fast shutdown: sessions are cut), keep the
        data."""
        self._run([CLUSTER_SCRIPT, "down", self.path])

    def up(self):
        """Start it again on the same port."""
        self._run([CLUSTER_SCRIPT, "up", self.path])

    def restart(self):
        self._run([CLUSTER_SCRIPT, "restart", self.path])

    def stop(self):
        """Stop it and remove its files."""
        self._run([CLUSTER_SCRIPT, "stop", self.path])

    def create_database(self, prefix="igr"):
        name = "%s_%d_%s" % (prefix, os.getpid(), secrets.token_hex(3))
        psql(self.url, "CREATE DATABASE %s" % name)
        return with_dbname(self.url, name)
