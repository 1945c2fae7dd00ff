/*
 * test_store_audit.c - the audit log's Merkle tree inside the PDP store:
 * the stored tiles equal a tree built naively from the events; a job that
 * fails (alone, or inside a batch) and a transaction whose COMMIT fails
 * leave the frontier and the tiles as they were, also when the job had
 * filled a tile; a reopened store has the same root; a database from
 * before the tree, and one of schema 3 (audit_nodes), get their tiles
 * once; checkpoints are signed by count, on demand and at close, and
 * their proofs (also across a full tile) verify; a tampered tile makes
 * the next checkpoint refused, and the next open (test_store_anchor.c
 * has the other edits the open refuses).
 */
#include "testutil.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_note.h"
#include "audit_tile.h"
#include "audit_tree.h"
#include "ig_key.h"
#include "store_int.h"

#define MAXN 600

struct fixture {
    char dir[64];
    char path[128];
    struct store *s;
    struct ig_signing_key *key;
    uint64_t every;
    int nev;             /* events appended so far */
    char text[MAXN][48]; /* their texts */
};

/* ---- log capture ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char logged[4096];

static void
capture_log(const char *level, const char *event, json_t *fields)
{
    size_t used;

    pthread_mutex_lock(&log_mu);
    used = strlen(logged);
    (void)snprintf(logged + used, sizeof(logged) - used, "%s ", event);
    pthread_mutex_unlock(&log_mu);
    (void)level;
    json_decref(fields);
}

static int
was_logged(const char *event)
{
    int yes;

    pthread_mutex_lock(&log_mu);
    yes = strstr(logged, event) != NULL;
    pthread_mutex_unlock(&log_mu);
    return yes;
}

/* ---- fixture ---- */

static struct store *
open_store(struct fixture *f)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.path = f->path;
    o.synchronous_full = 0;
    o.audit_name = "test.example/audit";
    o.audit_key = f->key;
    o.checkpoint_every = f->every;
    o.log = capture_log;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
    return s;
}

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-staudit-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
    logged[0] = '\0';
    f->s = open_store(f);
    *state = f;
    return 0;
}

/* The same, with a checkpoint key and checkpoint_every = 5. */
static int
setup_signed(void **state)
{
    struct fixture *f;

    setup(state);
    f = *state;
    store_close(f->s);
    assert_int_equal(ig_signing_key_generate(&f->key), IG_OK);
    f->every = 5;
    f->s = open_store(f);
    return 0;
}

/* The same, with a checkpoint key but no checkpoint by count: the test
   signs. */
static int
setup_manual(void **state)
{
    struct fixture *f;

    setup_signed(state);
    f = *state;
    store_close(f->s);
    f->every = 0;
    f->s = open_store(f);
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[200];

    store_close(f->s);
    ig_signing_key_free(f->key);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Append n new events as one write. */
static void
append(struct fixture *f, int n)
{
    const char *ev[MAXN];
    int i;

    assert_true(f->nev + n <= MAXN);
    for (i = 0; i < n; i++) {
        (void)snprintf(f->text[f->nev + i], sizeof(f->text[0]),
                       "{\"n\":%d,\"type\":\"test.event\"}", f->nev + i);
        ev[i] = f->text[f->nev + i];
    }
    assert_int_equal(store_put_events(f->s, ev, (size_t)n), IG_OK);
    f->nev += n;
}

/* The checkpoint of size want, once the writer has signed it (the job is
   queued after the write that crossed checkpoint_every): up to 5 s. */
static enum ig_status
wait_checkpoint(struct fixture *f, uint64_t want)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    uint64_t size = 0;
    char *note = NULL;
    enum ig_status st = IG_ERR_NOTFOUND;
    int i;

    for (i = 0; i < 500 && st == IG_ERR_NOTFOUND; i++) {
        st = store_checkpoint_get(f->s, want, &note, &size);
        free(note);
        note = NULL;
        if (st == IG_ERR_NOTFOUND)
            (void)nanosleep(&ts, NULL);
    }
    return st;
}

/* ---- the naive tree ---- */

static void
naive_root(unsigned char (*leaves)[32], uint64_t n, unsigned char out[32])
{
    unsigned char l[32], r[32];
    uint64_t k = 1;

    if (n == 1) {
        memcpy(out, leaves[0], 32);
        return;
    }
    while (k * 2 < n)
        k *= 2;
    naive_root(leaves, k, l);
    naive_root(leaves + k, n - k, r);
    audit_node_hash(l, r, out);
}

static void
leaf_hashes(const struct fixture *f, unsigned char (*leaves)[32])
{
    int i;

    for (i = 0; i < f->nev; i++)
        audit_leaf_hash(f->text[i], strlen(f->text[i]), leaves[i]);
}

/* Every stored tile holds the naive hashes of its entries, and every
   full tile is stored; the store's head is the naive root. */
static void
check_tree(struct fixture *f)
{
    static unsigned char leaves[MAXN][32];
    unsigned char want[32], root[32];
    uint64_t expected = 0, rows = 0, size = 0, level, idx, i, span;
    sqlite3_stmt *st;
    sqlite3 *db;

    leaf_hashes(f, leaves);
    for (level = 0; level < AUDIT_TILE_LEVELS; level++)
        expected += audit_tile_count((uint64_t)f->nev, (unsigned)level);
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT level, idx, hashes FROM "
                                        "audit_tiles ORDER BY level, idx",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        level = (uint64_t)sqlite3_column_int64(st, 0);
        idx = (uint64_t)sqlite3_column_int64(st, 1);
        span = UINT64_C(1) << (8 * level); /* leaves per entry */
        assert_true((idx + 1) * 256 * span <= (uint64_t)f->nev);
        assert_int_equal(sqlite3_column_bytes(st, 2), AUDIT_TILE_BYTES);
        for (i = 0; i < 256; i++) {
            naive_root(leaves + (idx * 256 + i) * span, span, want);
            assert_memory_equal(
                (const unsigned char *)sqlite3_column_blob(st, 2) + i * 32,
                want, 32);
        }
        rows++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_int_equal(rows, expected);
    assert_int_equal(store_audit_head(f->s, &size, root), IG_OK);
    assert_int_equal(size, (uint64_t)f->nev);
    if (f->nev > 0) {
        naive_root(leaves, (uint64_t)f->nev, want);
        assert_memory_equal(root, want, 32);
    }
}

static int64_t
node_count(struct fixture *f)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t n = -1;

    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM audit_tiles", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static void
raw_exec(struct fixture *f, const char *sql)
{
    sqlite3 *db;
    char *msg = NULL;

    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* ---- tests ---- */

static void
test_nodes_match_naive_tree(void **state)
{
    struct fixture *f = *state;
    int batch;

    check_tree(f); /* empty */
    for (batch = 1; f->nev + batch <= 560; batch++) {
        append(f, batch);
        if (batch % 4 == 1)
            check_tree(f);
    }
    append(f, 1);
    check_tree(f);
}

static void
test_failed_job_changes_nothing(void **state)
{
    struct fixture *f = *state;
    const char *bad[12];
    unsigned char root0[32], root1[32];
    uint64_t size0 = 0, size1 = 0;
    int64_t nodes;
    int i;

    append(f, 250);
    nodes = node_count(f);
    assert_int_equal(nodes, 0);
    assert_int_equal(store_audit_head(f->s, &size0, root0), IG_OK);
    /* Eleven events are appended (rows, leaves, and the tile the sixth
       fills), the twelfth fails: the job's savepoint rolls back and the
       frontier with it; the writer's partial tiles are rebuilt. */
    for (i = 0; i < 11; i++)
        bad[i] = "{\"type\":\"would.be.rolled.back\"}";
    bad[11] = NULL;
    assert_int_not_equal(store_put_events(f->s, bad, 12), IG_OK);
    assert_int_equal(store_audit_head(f->s, &size1, root1), IG_OK);
    assert_int_equal(size1, size0);
    assert_memory_equal(root1, root0, 32);
    assert_int_equal(node_count(f), nodes);
    append(f, 9);
    check_tree(f);
}

/* Jobs that the writer takes as one batch: a slow one first, so the rest
   queue up behind it. */
struct events_job {
    const char *ev[3];
    size_t n;
    atomic_int *done;
    enum ig_status st;
};

static enum ig_status
run_events(struct store_sq *s, struct store_job *j)
{
    const struct events_job *e = j->rec;

    return store_append_events(s, e->ev, e->n);
}

static enum ig_status
run_slow(struct store_sq *s, struct store_job *j)
{
    struct timespec ts = {0, 200000000L};

    (void)s;
    (void)j;
    (void)nanosleep(&ts, NULL);
    return IG_OK;
}

static void
events_done(void *ctx, enum ig_status st)
{
    struct events_job *e = ctx;

    e->st = st;
    atomic_fetch_add(e->done, 1);
}

static void
submit_events(struct store_sq *s, struct events_job *e, atomic_int *done)
{
    struct store_job *j = calloc(1, sizeof(*j));

    assert_non_null(j);
    j->run = run_events;
    j->rec = e;
    j->async = 1;
    j->done_fn = events_done;
    j->done_ctx = e;
    e->done = done;
    assert_int_equal(store_submit(s, j), IG_OK);
}

static void
test_failed_job_in_a_batch(void **state)
{
    struct fixture *f = *state;
    struct events_job a, b, c;
    struct store_job *slow = calloc(1, sizeof(*slow));
    atomic_int done = 0;
    int i;

    append(f, 3);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&c, 0, sizeof(c));
    for (i = 0; i < 3; i++)
        (void)snprintf(f->text[f->nev + i], sizeof(f->text[0]),
                       "{\"batch\":%d}", i);
    a.ev[0] = f->text[f->nev];
    a.ev[1] = f->text[f->nev + 1];
    a.n = 2;
    b.ev[0] = "{\"batch\":\"failing\"}";
    b.ev[1] = NULL; /* fails after the first event is appended */
    b.n = 2;
    c.ev[0] = f->text[f->nev + 2];
    c.n = 1;
    assert_non_null(slow);
    slow->run = run_slow;
    slow->async = 1;
    assert_int_equal(store_submit(store_sq_of(f->s), slow), IG_OK);
    submit_events(store_sq_of(f->s), &a, &done);
    submit_events(store_sq_of(f->s), &b, &done);
    submit_events(store_sq_of(f->s), &c, &done);
    while (atomic_load(&done) < 3) {
        struct timespec ts = {0, 5000000L};
        (void)nanosleep(&ts, NULL);
    }
    assert_int_equal(a.st, IG_OK);
    assert_int_not_equal(b.st, IG_OK);
    assert_int_equal(c.st, IG_OK);
    f->nev += 3; /* a's two and c's one, in that order */
    check_tree(f);
}

/* Appends an event, then leaves a deferred foreign key violation: the
   job succeeds, the transaction's COMMIT fails. */
static enum ig_status
run_commit_breaker(struct store_sq *s, struct store_job *j)
{
    const char *ev[1] = {"{\"type\":\"never.committed\"}"};

    (void)j;
    if (sqlite3_exec(s->wdb,
                     "PRAGMA defer_foreign_keys = ON; INSERT INTO decisions "
                     "(intent_seq, decision_id, decision, reasons, message, "
                     "policy_revision, decided_at) VALUES (999999, 'd', "
                     "'ALLOW', '[]', '', 'r', 0)",
                     NULL, NULL, NULL) != SQLITE_OK)
        return IG_ERR_IO;
    return store_append_events(s, ev, 1);
}

static void
test_commit_failure_restores_frontier(void **state)
{
    struct fixture *f = *state;
    unsigned char root0[32], root1[32];
    uint64_t size0 = 0, size1 = 0;
    int64_t nodes;

    append(f, 255); /* the breaker's event fills the first tile */
    nodes = node_count(f);
    assert_int_equal(store_audit_head(f->s, &size0, root0), IG_OK);
    assert_int_equal(
        store_run(store_sq_of(f->s), run_commit_breaker, NULL, NULL),
        IG_ERR_IO);
    assert_int_equal(store_audit_head(f->s, &size1, root1), IG_OK);
    assert_int_equal(size1, size0);
    assert_memory_equal(root1, root0, 32);
    assert_int_equal(node_count(f), nodes);
    append(f, 5);
    check_tree(f);
}

static void
test_reopen_rebuilds_the_root(void **state)
{
    struct fixture *f = *state;
    unsigned char root0[32], root1[32];
    uint64_t size0 = 0, size1 = 0;

    append(f, 300);
    assert_int_equal(store_audit_head(f->s, &size0, root0), IG_OK);
    store_close(f->s);
    f->s = open_store(f);
    assert_int_equal(store_audit_head(f->s, &size1, root1), IG_OK);
    assert_int_equal(size1, size0);
    assert_memory_equal(root1, root0, 32);
    assert_false(was_logged("audit.backfilled"));
    append(f, 20);
    check_tree(f);
}

/* Whatever later migrations changed, undone (the quota counts table,
   when the tree's tiles are not the last migration): SQL for an older
   user_version. */
#define UNDO_COUNTS                                                            \
    "DROP TABLE IF EXISTS counter_counts; CREATE TABLE IF NOT EXISTS "         \
    "counter_hits (key TEXT NOT NULL, at INTEGER NOT NULL); "

static void
test_backfill_of_an_older_database(void **state)
{
    struct fixture *f = *state;

    append(f, 300);
    store_close(f->s);
    f->s = NULL;
    /* What a database from before migration 3 looks like. */
    raw_exec(f, "DROP TABLE audit_tiles; DROP TABLE checkpoints; " UNDO_COUNTS
                "PRAGMA user_version = 2");
    f->s = open_store(f);
    assert_true(was_logged("audit.backfilled"));
    check_tree(f);
    append(f, 4);
    check_tree(f);
    /* Once: a second open has nothing to do. */
    logged[0] = '\0';
    store_close(f->s);
    f->s = open_store(f);
    assert_false(was_logged("audit.backfilled"));
    check_tree(f);
}

/* A database of schema 3 (the tree as audit_nodes rows) converts: its
   tiles are computed from the events at the first open, audit_nodes is
   gone, and the tree is the same. */
static void
test_conversion_from_nodes(void **state)
{
    struct fixture *f = *state;
    unsigned char root0[32], root1[32];
    uint64_t size0 = 0, size1 = 0;
    sqlite3 *db;
    sqlite3_stmt *st = NULL;

    append(f, 530);
    assert_int_equal(store_audit_head(f->s, &size0, root0), IG_OK);
    store_close(f->s);
    f->s = NULL;
    raw_exec(f, "DROP TABLE audit_tiles; "
                "CREATE TABLE audit_nodes (level INTEGER NOT NULL, idx INTEGER "
                "NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (level, idx)) "
                "WITHOUT ROWID; INSERT INTO audit_nodes VALUES (0, 0, "
                "zeroblob(32)); " UNDO_COUNTS "PRAGMA user_version = 3");
    f->s = open_store(f);
    assert_true(was_logged("audit.backfilled"));
    assert_int_equal(store_audit_head(f->s, &size1, root1), IG_OK);
    assert_int_equal(size1, size0);
    assert_memory_equal(root1, root0, 32);
    check_tree(f);
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_not_equal(
        sqlite3_prepare_v2(db, "SELECT * FROM audit_nodes", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* Events deleted below the stored tiles: the tiles are past the log. */
static void
test_truncated_log_refused(void **state)
{
    struct fixture *f = *state;
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    append(f, 258);
    store_close(f->s);
    f->s = NULL;
    raw_exec(f, "DROP TRIGGER audit_events_no_delete; "
                "DELETE FROM audit_events WHERE seq >= 256");
    memset(&o, 0, sizeof(o));
    o.path = f->path;
    assert_int_equal(store_open(&o, &s, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "truncated"));
    assert_non_null(strstr(err.msg, "tile/0/000"));
    assert_null(s);
}

static void
test_new_tables_are_immutable(void **state)
{
    struct fixture *f = *state;
    static const char *const sql[] = {
        "UPDATE audit_tiles SET hashes = x'00'", "DELETE FROM audit_tiles",
        "UPDATE checkpoints SET note = ''", "DELETE FROM checkpoints"};
    sqlite3 *db;
    size_t i;

    append(f, 256);
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_busy_timeout(db, 5000), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO checkpoints VALUES (1, 'x', 0)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++)
        assert_int_not_equal(sqlite3_exec(db, sql[i], NULL, NULL, NULL),
                             SQLITE_OK);
    sqlite3_close(db);
}

/* ---- checkpoints ---- */

static void
open_latest(struct fixture *f, struct audit_checkpoint *cp, char **note_out)
{
    struct audit_verifier v;
    struct ig_public_key pub;
    struct ig_err err;
    uint64_t size = 0;
    char *note = NULL;

    ig_signing_key_public(f->key, &pub);
    memset(&v, 0, sizeof(v));
    (void)snprintf(v.name, sizeof(v.name), "test.example/audit");
    memcpy(v.pk, pub.pk, 32);
    v.key_id = audit_key_id(v.name, v.pk);
    assert_int_equal(store_checkpoint_get(f->s, 0, &note, &size), IG_OK);
    if (audit_checkpoint_open(note, strlen(note), &v, cp, &err) != IG_OK)
        fail_msg("checkpoint: %s", err.msg);
    assert_int_equal(cp->size, size);
    *note_out = note;
}

static void
test_checkpoints_and_proofs(void **state)
{
    struct fixture *f = *state;
    static unsigned char leaves[MAXN][32];
    unsigned char proof[AUDIT_CPROOF_MAX][32], root[32], old_root[32];
    struct audit_checkpoint cp;
    uint64_t size = 0, got = 0, i;
    char *note = NULL;
    size_t n = 0;

    assert_int_equal(store_audit_sign(f->s, &size), IG_ERR_EXISTS);
    assert_int_equal(store_checkpoint_get(f->s, 0, &note, &size),
                     IG_ERR_NOTFOUND);
    for (i = 0; i < 12; i++)
        append(f, 1); /* every = 5: checkpoints at 5 and 10 */
    assert_int_equal(wait_checkpoint(f, 5), IG_OK);
    assert_int_equal(wait_checkpoint(f, 10), IG_OK);
    assert_int_equal(store_checkpoint_get(f->s, 7, &note, &size),
                     IG_ERR_NOTFOUND);
    assert_int_equal(store_audit_sign(f->s, &size), IG_OK);
    assert_int_equal(size, 12);
    open_latest(f, &cp, &note);
    free(note);
    leaf_hashes(f, leaves);
    naive_root(leaves, 12, root);
    assert_memory_equal(cp.root, root, 32);
    /* Every leaf's inclusion proof verifies against the signed root. */
    for (i = 0; i < 12; i++) {
        assert_int_equal(
            store_audit_inclusion(f->s, i, 0, proof, &n, &note, &got), IG_OK);
        free(note);
        assert_int_equal(got, 12);
        assert_int_equal(audit_verify_inclusion(
                             leaves[i], i, 12,
                             (const unsigned char(*)[32])proof, n, cp.root),
                         IG_OK);
    }
    assert_int_equal(store_audit_inclusion(f->s, 12, 0, proof, &n, &note, &got),
                     IG_ERR_INVALID);
    assert_int_equal(store_audit_inclusion(f->s, 1, 11, proof, &n, &note, &got),
                     IG_ERR_NOTFOUND);
    /* 5 -> 12 is consistent. */
    naive_root(leaves, 5, old_root);
    assert_int_equal(store_audit_consistency(f->s, 5, 12, proof, &n), IG_OK);
    assert_int_equal(audit_verify_consistency(5, 12, old_root, cp.root,
                                              (const unsigned char(*)[32])proof,
                                              n),
                     IG_OK);
    assert_int_equal(store_audit_consistency(f->s, 5, 11, proof, &n),
                     IG_ERR_NOTFOUND);
    assert_int_equal(store_audit_consistency(f->s, 10, 5, proof, &n),
                     IG_ERR_INVALID);
    /* One more leaf: signed at close. */
    append(f, 1);
    store_close(f->s);
    f->s = open_store(f);
    open_latest(f, &cp, &note);
    free(note);
    assert_int_equal(cp.size, 13);
    assert_true(was_logged("audit.checkpoint_signed"));
}

static void
test_leaves_pages(void **state)
{
    struct fixture *f = *state;
    struct ig_buf b;
    uint64_t size = 0, count = 0;

    append(f, 10);
    ig_buf_init(&b, 1 << 20);
    assert_int_equal(store_audit_leaves(f->s, 3, 6, 1 << 20, &b, &size, &count),
                     IG_OK);
    assert_int_equal(size, 10);
    assert_int_equal(count, 3);
    assert_string_equal(b.data, "{\"n\":3,\"type\":\"test.event\"}\n"
                                "{\"n\":4,\"type\":\"test.event\"}\n"
                                "{\"n\":5,\"type\":\"test.event\"}\n");
    ig_buf_reset(&b);
    /* Clamped to the log; a byte budget stops early but sends one. */
    assert_int_equal(store_audit_leaves(f->s, 8, 50, 10, &b, &size, &count),
                     IG_OK);
    assert_int_equal(count, 1);
    ig_buf_reset(&b);
    assert_int_equal(
        store_audit_leaves(f->s, 10, 20, 1 << 20, &b, &size, &count), IG_OK);
    assert_int_equal(count, 0);
    ig_buf_release(&b);
}

static enum ig_status
try_open(struct fixture *f, struct ig_err *err)
{
    struct store_opts o;
    struct store *s = NULL;
    enum ig_status st;

    memset(&o, 0, sizeof(o));
    o.path = f->path;
    o.audit_name = "test.example/audit";
    o.audit_key = f->key;
    o.log = capture_log;
    st = store_open(&o, &s, err);
    store_close(s);
    return st;
}

/* A tile edited under the running store: the next checkpoint is refused
   (the consistency proof from the previous checkpoint, read from the
   stored tile, no longer verifies), and the next open refuses the
   database, naming the tile and the leaf. */
static void
test_tampered_node_refuses_checkpoint(void **state)
{
    struct fixture *f = *state;
    struct ig_err err;
    uint64_t size = 0;
    char *note = NULL;

    append(f, 5);
    assert_int_equal(store_audit_sign(f->s, &size), IG_OK);
    append(f, 256);
    raw_exec(f, "DROP TRIGGER audit_tiles_no_update; UPDATE audit_tiles SET "
                "hashes = CAST(substr(hashes, 1, 96) || zeroblob(32) || "
                "substr(hashes, 129) AS BLOB) WHERE level = 0 AND idx = 0");
    assert_int_equal(store_audit_sign(f->s, &size), IG_ERR_CRYPTO);
    assert_true(was_logged("audit.checkpoint_refused"));
    assert_int_equal(store_checkpoint_get(f->s, 0, &note, &size), IG_OK);
    free(note);
    assert_int_equal(size, 5);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(try_open(f, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "leaf 3 (audit_events seq 4) does not "
                                    "hash to its stored leaf hash (entry 3 "
                                    "of tile/0/000)"));
}

/* Proofs across a full tile and the partial one after it, from the
   store's read connections, verify against the signed roots. */
static void
test_proofs_across_tiles(void **state)
{
    struct fixture *f = *state;
    static unsigned char leaves[MAXN][32];
    unsigned char proof[AUDIT_CPROOF_MAX][32], root[32], old_root[32];
    uint64_t size = 0, got = 0, i;
    char *note = NULL;
    size_t n = 0;

    append(f, 300);
    assert_int_equal(store_audit_sign(f->s, &size), IG_OK);
    append(f, 270);
    assert_int_equal(store_audit_sign(f->s, &size), IG_OK);
    assert_int_equal(size, 570);
    leaf_hashes(f, leaves);
    naive_root(leaves, 570, root);
    naive_root(leaves, 300, old_root);
    for (i = 0; i < 570; i += 7) {
        assert_int_equal(
            store_audit_inclusion(f->s, i, 570, proof, &n, &note, &got), IG_OK);
        free(note);
        assert_int_equal(
            audit_verify_inclusion(leaves[i], i, 570,
                                   (const unsigned char(*)[32])proof, n, root),
            IG_OK);
    }
    assert_int_equal(
        store_audit_inclusion(f->s, 299, 300, proof, &n, &note, &got), IG_OK);
    free(note);
    assert_int_equal(audit_verify_inclusion(leaves[299], 299, 300,
                                            (const unsigned char(*)[32])proof,
                                            n, old_root),
                     IG_OK);
    assert_int_equal(store_audit_consistency(f->s, 300, 570, proof, &n), IG_OK);
    assert_int_equal(audit_verify_consistency(300, 570, old_root, root,
                                              (const unsigned char(*)[32])proof,
                                              n),
                     IG_OK);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nodes_match_naive_tree, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_job_changes_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_job_in_a_batch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_commit_failure_restores_frontier,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_rebuilds_the_root, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_backfill_of_an_older_database,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_conversion_from_nodes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_truncated_log_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_proofs_across_tiles, setup_manual,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_new_tables_are_immutable, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leaves_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoints_and_proofs,
                                        setup_signed, teardown),
        cmocka_unit_test_setup_teardown(test_tampered_node_refuses_checkpoint,
                                        setup_manual, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
