/*
 * test_store_pg_audit.c - the PostgreSQL store's audit sequencer
 * (store_pg_audit*.c) against a real server: IG_TEST_PG_URL names a
 * cluster whose user may CREATE DATABASE (no URL: every case fails, none
 * is skipped); each case gets a fresh database.
 *
 * Two store handles on one database play two replicas. Their writes queue
 * events (store_pg_queue_events, the path every write takes); the cases
 * check that the events end up once each in one gap-free log whose tiles
 * and checkpoints match a recomputation here, that checkpoints are signed
 * and consistent, that the anchor file refuses a rewritten history (the
 * attacker drops the immutability triggers first), that closing the leader
 * hands the lock to the other handle, and that killing the lock's
 * connection (pg_terminate_backend) moves the leadership without
 * sequencing anything twice. Cases wait on what the handles log
 * (audit.sequencer_started ...) or on the sequenced size, with deadlines,
 * never on sleeps.
 */
#include "testutil.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit_note.h"
#include "audit_tile.h"
#include "audit_tree.h"
#include "ig_key.h"
#include "store_pg_int.h"

#define NAME "test.example/pg-audit"
#define WAIT_S 20 /* the longest any case waits for the sequencer */

/* ---- what each handle logs ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_cv = PTHREAD_COND_INITIALIZER;
static char books[2][65536];

static void
note_event(int h, const char *event, json_t *fields)
{
    size_t used;
    char *f = json_dumps(fields, JSON_COMPACT);

    pthread_mutex_lock(&log_mu);
    used = strlen(books[h]);
    (void)snprintf(books[h] + used, sizeof(books[h]) - used, "%s %s\n", event,
                   f != NULL ? f : "");
    pthread_cond_broadcast(&log_cv);
    pthread_mutex_unlock(&log_mu);
    free(f);
    json_decref(fields);
}

static void
log_a(const char *level, const char *event, json_t *fields)
{
    (void)level;
    note_event(0, event, fields);
}

static void
log_b(const char *level, const char *event, json_t *fields)
{
    (void)level;
    note_event(1, event, fields);
}

/* How often handle h logged event (log_mu held). */
static int
count_locked(int h, const char *event)
{
    const char *p;
    int n = 0;

    for (p = books[h]; (p = strstr(p, event)) != NULL; p++)
        n++;
    return n;
}

static int
count_logged(int h, const char *event)
{
    int n;

    pthread_mutex_lock(&log_mu);
    n = count_locked(h, event);
    pthread_mutex_unlock(&log_mu);
    return n;
}

/* The handle that leads: logged audit.sequencer_started more often than
   audit.sequencer_stopped (log_mu held); -1: none. */
static int
leader_locked(void)
{
    int h;

    for (h = 0; h < 2; h++)
        if (count_locked(h, "audit.sequencer_started") >
            count_locked(h, "audit.sequencer_stopped"))
            return h;
    return -1;
}

/* Wait until handle h (-1: either) logged event more than seen times; or,
   event NULL, until handle h (-1: either) leads. 1, or 0 when WAIT_S
   passed. */
static int
wait_for(int h, const char *event, int seen)
{
    struct timespec until;
    int ok = 0, rc = 0;

    (void)clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_S;
    pthread_mutex_lock(&log_mu);
    while (rc == 0) {
        ok = event == NULL
                 ? (h < 0 ? leader_locked() >= 0 : leader_locked() == h)
             : h < 0 ? count_locked(0, event) + count_locked(1, event) > seen
                     : count_locked(h, event) > seen;
        if (ok)
            break;
        rc = pthread_cond_timedwait(&log_cv, &log_mu, &until);
    }
    pthread_mutex_unlock(&log_mu);
    return ok;
}

static int
wait_leader(void)
{
    int h;

    if (!wait_for(-1, NULL, 0))
        fail_msg("no handle took the sequencer's lock within %d s", WAIT_S);
    pthread_mutex_lock(&log_mu);
    h = leader_locked();
    pthread_mutex_unlock(&log_mu);
    return h;
}

/* ---- the database ---- */

struct fixture {
    char db[64], url[512], dir[64], anchor[2][128];
    struct ig_signing_key *key;
    struct store_pg *s[2];
    PGconn *pg; /* the test's own connection to the database */
    uint64_t every;
};

static int seq_db;

static const char *
base_url(void)
{
    const char *u = getenv("IG_TEST_PG_URL");

    if (u == NULL || u[0] == '\0')
        fail_msg("IG_TEST_PG_URL is not set: these tests need a PostgreSQL "
                 "server (scripts/pg-cluster.sh)");
    return u;
}

/* base URL with its database replaced by db. */
static void
url_for(const char *db, char *out, size_t cap)
{
    const char *u = base_url(), *host = strstr(u, "://"), *path, *query;
    int n;

    assert_non_null(host);
    path = strchr(host + 3, '/');
    query = strchr(host + 3, '?');
    if (path == NULL || (query != NULL && query < path))
        path = query != NULL ? query : u + strlen(u);
    n = snprintf(out, cap, "%.*s/%s%s", (int)(path - u), u, db,
                 query != NULL ? query : "");
    assert_true(n > 0 && (size_t)n < cap);
}

static PGconn *
connect_to(const char *url)
{
    PGconn *c = PQconnectdb(url);

    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("cannot connect to %s: %s", url, PQerrorMessage(c));
    return c;
}

static void
sql(PGconn *c, const char *q)
{
    PGresult *r = PQexec(c, q);
    ExecStatusType st = PQresultStatus(r);

    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        fail_msg("%s: %s", q, PQerrorMessage(c));
    PQclear(r);
}

/* One number. */
static long long
sql_num(PGconn *c, const char *q)
{
    PGresult *r = PQexec(c, q);
    long long v;

    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        fail_msg("%s: %s", q, PQerrorMessage(c));
    v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char q[128], base[512];
    PGconn *admin;

    assert_non_null(f);
    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)snprintf(f->db, sizeof(f->db), "ig_seq_%ld_%d", (long)getpid(),
                   seq_db++);
    url_for("postgres", base, sizeof(base));
    admin = connect_to(base_url());
    (void)snprintf(q, sizeof(q), "CREATE DATABASE %s", f->db);
    sql(admin, q);
    PQfinish(admin);
    url_for(f->db, f->url, sizeof(f->url));
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-pgseq-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->anchor[0], sizeof(f->anchor[0]), "%s/a.checkpoint",
                   f->dir);
    (void)snprintf(f->anchor[1], sizeof(f->anchor[1]), "%s/b.checkpoint",
                   f->dir);
    assert_int_equal(ig_signing_key_generate(&f->key), IG_OK);
    f->every = 100;
    books[0][0] = books[1][0] = '\0';
    *state = f;
    return 0;
}

static void
close_handle(struct fixture *f, int h)
{
    store_pg_close(f->s[h]);
    f->s[h] = NULL;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    char q[128], cmd[128];
    PGconn *admin;

    close_handle(f, 0);
    close_handle(f, 1);
    if (getenv("IG_TEST_VERBOSE") != NULL)
        fprintf(stderr, "handle 0 logged:\n%shandle 1 logged:\n%s", books[0],
                books[1]);
    PQfinish(f->pg);
    admin = connect_to(base_url());
    (void)snprintf(q, sizeof(q), "DROP DATABASE %s WITH (FORCE)", f->db);
    sql(admin, q);
    PQfinish(admin);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    ig_signing_key_free(f->key);
    free(f);
    return 0;
}

static enum ig_status
try_open(struct fixture *f, int h, const struct ig_signing_key *key,
         struct ig_err *err)
{
    struct store_opts o;

    memset(&o, 0, sizeof(o));
    o.path = f->url;
    o.audit_name = NAME;
    o.audit_key = key;
    o.checkpoint_every = f->every;
    o.audit_anchor = key != NULL ? f->anchor[h] : NULL;
    o.log = h == 0 ? log_a : log_b;
    return store_pg_open(&o, &f->s[h], err);
}

static void
open_handle(struct fixture *f, int h)
{
    struct ig_err err;

    if (try_open(f, h, f->key, &err) != IG_OK)
        fail_msg("open %d: %s", h, err.msg);
    if (f->pg == NULL)
        f->pg = connect_to(f->url);
}

/* ---- writes ---- */

struct events {
    const char *ev[16];
    size_t n;
};

static enum ig_status
queue_body(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    const struct events *e = arg;

    return store_pg_queue_events(s, c, e->ev, e->n);
}

/* Handle h writes n events in one transaction: {"r":h,"i":first...}. */
static void
write_events(struct fixture *f, int h, int first, size_t n)
{
    char text[16][64];
    struct events e;
    size_t i;

    assert_true(n <= 16);
    for (i = 0; i < n; i++) {
        (void)snprintf(text[i], sizeof(text[i]),
                       "{\"i\":%d,\"r\":%d,\"type\":\"test.event\"}",
                       first + (int)i, h);
        e.ev[i] = text[i];
    }
    e.n = n;
    assert_int_equal(store_pg_txn(f->s[h], queue_body, &e), IG_OK);
}

/* Wait until the log holds n events (the sequencer announces each size
   on ig_sequenced; the database is the truth). */
static void
wait_sequenced(struct fixture *f, long long n)
{
    time_t until = time(NULL) + WAIT_S;
    struct store_pg *s = f->s[0] != NULL ? f->s[0] : f->s[1];

    while (sql_num(f->pg, "SELECT count(*) FROM audit_events") < n) {
        struct timespec t;

        if (time(NULL) > until)
            fail_msg("the log did not reach %lld events", n);
        (void)clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += 1;
        pthread_mutex_lock(&s->seq_mu);
        if (s->sequenced < (uint64_t)n)
            (void)pthread_cond_timedwait(&s->seq_cv, &s->seq_mu, &t);
        pthread_mutex_unlock(&s->seq_mu);
    }
}

/* ---- the log as this test recomputes it ---- */

struct recomputed {
    PGconn *pg;
    struct audit_frontier tree;
    struct audit_tile_edge *edge;
    unsigned char (*roots)[AUDIT_HASH_BYTES]; /* roots[k]: of k leaves */
    long long tiles;
};

/* audit_node_fn: a tile that fills must be the stored one. */
static int
check_tile(void *ctx, unsigned level, uint64_t index,
           const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct recomputed *rc = ctx;
    char l[24], i[24];
    const char *v[2] = {l, i};
    uint64_t tn;
    unsigned tl;
    PGresult *r;

    if (!audit_tile_edge_put(rc->edge, level, index, hash, &tl, &tn))
        return 0;
    (void)snprintf(l, sizeof(l), "%u", tl);
    (void)snprintf(i, sizeof(i), "%llu", (unsigned long long)tn);
    r = PQexecParams(rc->pg,
                     "SELECT hashes FROM audit_tiles WHERE level = $1 AND "
                     "idx = $2",
                     2, NULL, v, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        fail_msg("tile %u/%llu is not stored", tl, (unsigned long long)tn);
    assert_int_equal(PQgetlength(r, 0, 0), AUDIT_TILE_BYTES);
    assert_memory_equal(PQgetvalue(r, 0, 0), rc->edge->hash[tl],
                        AUDIT_TILE_BYTES);
    PQclear(r);
    rc->tiles++;
    return 0;
}

/*
 * The whole log: seq 1..n without a gap, each written event exactly once
 * (written[h] events of handle h), the queue empty, every full tile stored
 * as recomputed here and no other, every checkpoint signed by key for the
 * root of its size. Returns the number of checkpoints; *newest gets the
 * newest note (malloc'd).
 */
static int
check_log(struct fixture *f, const int written[2], char **newest)
{
    struct recomputed rc;
    struct audit_verifier v;
    struct ig_public_key pub;
    struct audit_checkpoint cp;
    long long n = written[0] + written[1], k;
    char *seen = calloc((size_t)n + 2, 2);
    unsigned char leaf[AUDIT_HASH_BYTES];
    PGresult *r;
    int ncp, i;

    assert_non_null(seen);
    memset(&rc, 0, sizeof(rc));
    rc.pg = f->pg;
    rc.edge = calloc(1, sizeof(*rc.edge));
    rc.roots = calloc((size_t)n + 1, AUDIT_HASH_BYTES);
    assert_non_null(rc.edge);
    assert_non_null(rc.roots);
    audit_frontier_init(&rc.tree);
    audit_frontier_root(&rc.tree, rc.roots[0]);
    assert_int_equal(sql_num(f->pg, "SELECT count(*) FROM audit_queue"), 0);
    r = PQexec(f->pg, "SELECT seq, event FROM audit_events ORDER BY seq");
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_int_equal(PQntuples(r), n);
    for (k = 0; k < n; k++) {
        const char *ev = PQgetvalue(r, (int)k, 1);
        int idx = -1, h = -1;
        json_t *j = json_loads(ev, 0, NULL);

        assert_int_equal(strtoll(PQgetvalue(r, (int)k, 0), NULL, 10), k + 1);
        assert_non_null(j);
        assert_int_equal(json_unpack(j, "{s:i, s:i}", "i", &idx, "r", &h), 0);
        json_decref(j);
        assert_true(h == 0 || h == 1);
        assert_true(idx >= 0 && idx < written[h]);
        if (seen[2 * idx + h]++ != 0)
            fail_msg("event %d of handle %d is in the log twice", idx, h);
        audit_leaf_hash(ev, (size_t)PQgetlength(r, (int)k, 1), leaf);
        assert_int_equal(audit_frontier_append(&rc.tree, leaf, check_tile, &rc),
                         IG_OK);
        audit_frontier_root(&rc.tree, rc.roots[k + 1]);
    }
    PQclear(r);
    assert_int_equal(sql_num(f->pg, "SELECT count(*) FROM audit_tiles"),
                     rc.tiles);
    ig_signing_key_public(f->key, &pub);
    assert_int_equal(audit_verifier_init(&v, NAME, pub.pk), IG_OK);
    r = PQexec(f->pg, "SELECT size, note FROM checkpoints ORDER BY size");
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    ncp = PQntuples(r);
    for (i = 0; i < ncp; i++) {
        const char *note = PQgetvalue(r, i, 1);

        assert_int_equal(
            audit_checkpoint_open(note, strlen(note), &v, &cp, NULL), IG_OK);
        assert_int_equal(cp.size, strtoull(PQgetvalue(r, i, 0), NULL, 10));
        assert_true(cp.size >= 1 && cp.size <= (uint64_t)n);
        /* The root of the first cp.size events: so each checkpoint is
           consistent with every earlier one. */
        assert_memory_equal(cp.root, rc.roots[cp.size], AUDIT_HASH_BYTES);
    }
    if (newest != NULL)
        *newest = ncp > 0 ? strdup(PQgetvalue(r, ncp - 1, 1)) : NULL;
    PQclear(r);
    free(rc.edge);
    free(rc.roots);
    free(seen);
    return ncp;
}

/* The anchor file of handle h holds note. */
static void
check_anchor(struct fixture *f, int h, const char *note)
{
    size_t len = 0;
    char *got = tu_read_file(f->anchor[h], &len);
    struct stat sb;

    assert_int_equal(stat(f->anchor[h], &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(len, strlen(note));
    assert_memory_equal(got, note, len);
    free(got);
}

/* ---- the cases ---- */

struct writer {
    struct fixture *f;
    int h, first, n;
    pthread_t t;
};

static void *
writer_main(void *arg)
{
    struct writer *w = arg;
    int i;

    for (i = 0; i < w->n; i += 10)
        write_events(w->f, w->h, w->first + i, 10);
    return NULL;
}

/* Both handles start writing at once: events first .. first + n - 1 each
   (n a multiple of 10). */
static void
writers_start(struct fixture *f, struct writer w[2], int first, int n)
{
    int h;

    for (h = 0; h < 2; h++) {
        w[h].f = f;
        w[h].h = h;
        w[h].first = first;
        w[h].n = n;
        assert_int_equal(pthread_create(&w[h].t, NULL, writer_main, &w[h]), 0);
    }
}

static void
writers_join(struct writer w[2])
{
    int h;

    for (h = 0; h < 2; h++)
        assert_int_equal(pthread_join(w[h].t, NULL), 0);
}

static void
write_both(struct fixture *f, int n)
{
    struct writer w[2];

    writers_start(f, w, 0, n);
    writers_join(w);
}

static void
test_two_replicas_one_log(void **state)
{
    struct fixture *f = *state;
    int written[2] = {300, 300}, lead, ncp;
    char *newest = NULL;

    open_handle(f, 0);
    open_handle(f, 1);
    lead = wait_leader();
    write_both(f, 300);
    wait_sequenced(f, 600);
    ncp = check_log(f, written, NULL);
    assert_true(ncp >= 1); /* every 100 leaves */
    /* Exactly one leads: the other never started. */
    assert_int_equal(count_logged(1 - lead, "audit.sequencer_started"), 0);
    /* Closing both: the leader's final checkpoint covers the whole log and
       is in its anchor file. */
    close_handle(f, 1 - lead);
    close_handle(f, lead);
    ncp = check_log(f, written, &newest);
    assert_non_null(newest);
    assert_non_null(strstr(newest, "\n600\n"));
    check_anchor(f, lead, newest);
    free(newest);
    /* Reopened, the log checks out against itself and the anchor. */
    open_handle(f, lead);
    assert_int_equal(count_logged(lead, "audit.log_checked"), 2);
}

static void
test_handover_on_close(void **state)
{
    struct fixture *f = *state;
    int written[2] = {0, 0}, lead, other;

    open_handle(f, 0);
    lead = wait_leader();
    assert_int_equal(lead, 0);
    open_handle(f, 1);
    write_events(f, 0, 0, 10);
    write_events(f, 1, 0, 10);
    wait_sequenced(f, 20);
    other = 1;
    close_handle(f, 0);
    /* The other handle takes the lock within seconds. */
    assert_true(wait_for(other, "audit.sequencer_started", 0));
    assert_true(strstr(books[other], "\"tree_size\":20") != NULL);
    write_events(f, 1, 10, 10);
    wait_sequenced(f, 30);
    written[0] = 10;
    written[1] = 20;
    (void)check_log(f, written, NULL);
    (void)lead;
}

static void
test_killed_lock_connection(void **state)
{
    struct fixture *f = *state;
    struct writer w[2];
    int written[2] = {400, 400}, lead, starts;

    open_handle(f, 0);
    open_handle(f, 1);
    lead = wait_leader();
    starts = count_logged(0, "audit.sequencer_started") +
             count_logged(1, "audit.sequencer_started");
    /* Kill the lock's connection while both handles write, once the
       sequencer is under way. The key 0x6967000002 is classid 0x69 =
       105, objid 0x67000002. */
    writers_start(f, w, 0, 400);
    wait_sequenced(f, 100);
    assert_int_equal(sql_num(f->pg,
                             "SELECT count(pg_terminate_backend(pid)) FROM "
                             "pg_locks WHERE locktype = 'advisory' AND "
                             "classid = 105 AND objid = 1728053250 AND "
                             "granted"),
                     1);
    /* The holder notices and steps down; the other handle takes over
       (the deposed one waits before it competes again). */
    assert_true(wait_for(lead, "audit.sequencer_stopped", 0));
    assert_true(wait_for(-1, "audit.sequencer_started", starts));
    assert_int_equal(wait_leader(), 1 - lead);
    writers_join(w);
    wait_sequenced(f, 800);
    (void)check_log(f, written, NULL);
}

static void
test_deposed_leader_collides(void **state)
{
    struct fixture *f = *state;
    int written[2] = {30, 1}, lead;

    open_handle(f, 0);
    open_handle(f, 1);
    lead = wait_leader();
    write_events(f, lead, 0, 10);
    wait_sequenced(f, 10);
    /* Another sequencer (one that took over while this one did not
       notice) wrote leaf 11: the leader's next batch hits the PRIMARY
       KEY, it steps down, and whoever leads next rebuilds the tree from
       the database. */
    sql(f->pg, "INSERT INTO audit_events (seq, event) VALUES (11, "
               "'{\"i\":0,\"r\":1,\"type\":\"test.event\"}')");
    written[1 - lead] = 1;
    written[lead] = 30;
    write_events(f, lead, 10, 10);
    assert_true(wait_for(lead, "audit.sequencer_stopped", 0));
    assert_true(wait_for(1 - lead, NULL, 0));
    assert_true(strstr(books[1 - lead], "\"tree_size\":11") != NULL);
    write_events(f, lead, 20, 10);
    wait_sequenced(f, 31);
    (void)check_log(f, written, NULL);
}

static void
test_anchor_refuses_rewrite(void **state)
{
    struct fixture *f = *state;
    int written[2] = {20, 0};
    uint64_t size = 0;
    struct ig_err err;
    PGresult *r;
    char *newest = NULL;
    int i;

    open_handle(f, 0);
    assert_int_equal(wait_leader(), 0);
    write_events(f, 0, 0, 10);
    write_events(f, 0, 10, 10);
    wait_sequenced(f, 20);
    assert_int_equal(store_pg_audit_sign(f->s[0], &size), IG_OK);
    assert_int_equal(size, 20);
    assert_int_equal(store_pg_audit_sign(f->s[0], &size), IG_ERR_EXISTS);
    close_handle(f, 0);
    assert_int_equal(check_log(f, written, &newest), 1);
    check_anchor(f, 0, newest);
    free(newest);
    /* The history is immutable to the PDP's statements... */
    r = PQexec(f->pg, "UPDATE audit_events SET event = '{}' WHERE seq = 2");
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    PQclear(r);
    /* ...so the attacker drops the triggers and writes another history,
       longer, through a PDP without the audit key. */
    for (i = 0; i < 3; i++) {
        static const char *const t[] = {"audit_events", "audit_tiles",
                                        "checkpoints"};
        char q[160];

        (void)snprintf(q, sizeof(q),
                       "DROP TRIGGER %s_immutable ON %s; DROP TRIGGER "
                       "%s_no_truncate ON %s",
                       t[i], t[i], t[i], t[i]);
        sql(f->pg, q);
    }
    sql(f->pg, "TRUNCATE audit_events, audit_tiles, checkpoints");
    assert_int_equal(try_open(f, 1, NULL, &err), IG_OK);
    for (i = 0; i < 3; i++)
        write_events(f, 1, 10 * i, 10);
    wait_sequenced(f, 30);
    close_handle(f, 1);
    /* The PDP with the key and the anchor refuses to start. */
    assert_int_equal(try_open(f, 0, f->key, &err), IG_ERR_IO);
    assert_null(f->s[0]);
    if (strstr(err.msg, "does not extend its anchor") == NULL)
        fail_msg("want a refusal naming the anchor: %s", err.msg);
    assert_true(count_logged(0, "audit.anchor_refused") == 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_replicas_one_log, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_handover_on_close, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_killed_lock_connection, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_deposed_leader_collides, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_anchor_refuses_rewrite, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
