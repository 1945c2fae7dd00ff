/*
 * test_store_pg_read.c - the PostgreSQL store's audit reads
 * (store_pg_audit_read.c, store_pg_audit_view.c), checked against the
 * SQLite store's on the same log: a SQLite store logs 600 events (two
 * full tiles, a checkpoint every 100), `store copy` (store_copy.c) moves
 * it into a fresh PostgreSQL database, and every read - size,
 * checkpoints, pages of leaves, inclusion and consistency proofs, the
 * auditors' pages, the checkpoints' JSONL - must answer exactly as the
 * SQLite store does, refusals included. Then settling: a read waits while
 * events are queued and returns once the sequencer (played here: this
 * test holds the sequencer's lock, so no store of its own can sequence)
 * moves them and NOTIFYs; with nobody sequencing, the reads fail closed
 * (IG_ERR_IO) after their bound; with a real sequencer (a database of
 * its own), a read right after a write sees it. The offline reader
 * (store_log.h, what `intentgate audit --db URL` reads) gives the same rows,
 * tiles, nodes and checkpoints from the URL as from the file, counts queued
 * events, and refuses a URL with a password. A stored tile of the wrong length
 * is refused, never read past.
 *
 * Needs a PostgreSQL server: IG_TEST_PG_URL, a base URL whose user may
 * CREATE DATABASE (scripts/pg-cluster.sh). Without it every test fails;
 * none skips. Its database is dropped at the end.
 */
#include "testutil.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_key.h"
#include "pg_test.h"
#include "store.h"
#include "store_audit_view.h"
#include "store_copy.h"
#include "store_log.h"
#include "store_pg_int.h"

#define NEVENTS 600
#define EVERY 100

static struct {
    char dir[64], path[128];
    char *url; /* pg_test_db's */
    struct ig_signing_key *key;
    struct store *sq, *pg;
    PGconn *ctl; /* holds the sequencer's lock; plays the sequencer */
    char why[512];
} g;

/* ---- PostgreSQL helpers ---- */

static void
quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static PGconn *
connect_to(const char *url)
{
    PGconn *c = PQconnectdb(url);

    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("cannot connect to %s: %s", url, PQerrorMessage(c));
    PQsetNoticeProcessor(c, quiet, NULL);
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

/* ---- the fixture: one log in both stores ---- */

static struct store *
open_store(const char *path)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.path = path;
    o.audit_name = "test.example/audit";
    o.audit_key = g.key;
    o.checkpoint_every = EVERY;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open %s: %s", path, err.msg);
    return s;
}

/* Events for the view's filters: types, intents (one with an approval
   whose vote names only the approval), and an intent id nested in
   params, which a filter must not match. */
static void
log_events(struct store *s)
{
    char text[NEVENTS][160];
    const char *ev[NEVENTS];
    int i;

    for (i = 0; i < NEVENTS; i++) {
        if (i == 7)
            (void)snprintf(text[i], sizeof(text[i]),
                           "{\"approval\":{\"approval_id\":\"ap-1\"},"
                           "\"intent_id\":\"i-0\",\"type\":\"intent."
                           "escalated\"}");
        else if (i == 9)
            (void)snprintf(text[i], sizeof(text[i]),
                           "{\"approval_id\":\"ap-1\",\"type\":\"approval."
                           "vote_refused\"}");
        else if (i == 11) /* what COPY's text form must escape, as is */
            (void)snprintf(text[i], sizeof(text[i]),
                           "{\"type\":\"x\",\"s\":\"a\\\\b\\\"\tc\nd\re "
                           "\\N \\. \xc3\xa9\"}");
        else if (i % 50 == 3)
            (void)snprintf(text[i], sizeof(text[i]),
                           "{\"params\":{\"intent_id\":\"i-0\"},\"type\":"
                           "\"intent.decided\",\"intent_id\":\"i-x%d\"}",
                           i);
        else
            (void)snprintf(text[i], sizeof(text[i]),
                           "{\"intent_id\":\"i-%d\",\"n\":%d,\"type\":\"%s\"}",
                           i % 7, i,
                           i % 3 == 0 ? "intent.decided" : "grant.redeemed");
        ev[i] = text[i];
    }
    for (i = 0; i < NEVENTS; i += 60)
        assert_int_equal(store_put_events(s, ev + i, 60), IG_OK);
}

static int
group_setup(void **state)
{
    const char *base = getenv("IG_TEST_PG_URL");
    struct ig_err err;
    char q[128];

    (void)state;
    if (base == NULL || (strncmp(base, "postgresql://", 13) != 0 &&
                         strncmp(base, "postgres://", 11) != 0)) {
        (void)snprintf(g.why, sizeof(g.why),
                       "IG_TEST_PG_URL is not set (a base URL of a "
                       "PostgreSQL server whose user may CREATE DATABASE: "
                       "scripts/pg-cluster.sh): this test fails, never "
                       "skips");
        return 0;
    }
    assert_int_equal(ig_crypto_init(), IG_OK);
    assert_int_equal(ig_signing_key_generate(&g.key), IG_OK);
    (void)snprintf(g.dir, sizeof(g.dir), "/tmp/ig-pgread-XXXXXX");
    assert_non_null(mkdtemp(g.dir));
    (void)snprintf(g.path, sizeof(g.path), "%s/t.db", g.dir);
    g.sq = open_store(g.path);
    log_events(g.sq);
    store_close(g.sq); /* signs the last checkpoint */

    g.url = pg_test_db("ig_pgread");
    if (store_copy(g.path, g.url, NULL, NULL, &err) != IG_OK)
        fail_msg("store copy: %s", err.msg);

    /* This test is the only sequencer: the store's own never leads. */
    g.ctl = connect_to(g.url);
    (void)snprintf(q, sizeof(q), "SELECT pg_advisory_lock(%lld)",
                   STORE_PG_LOCK_SEQUENCER);
    sql(g.ctl, q);
    g.sq = open_store(g.path);
    g.pg = open_store(g.url);
    return 0;
}

static int
group_teardown(void **state)
{
    (void)state;
    store_close(g.pg);
    store_close(g.sq);
    PQfinish(g.ctl);
    pg_test_drop(g.url);
    ig_signing_key_free(g.key);
    if (g.path[0] != '\0') {
        (void)unlink(g.path);
        (void)rmdir(g.dir);
    }
    return 0;
}

static int
need_pg(void **state)
{
    (void)state;
    if (g.why[0] != '\0')
        fail_msg("%s", g.why);
    return 0;
}

/* ---- the reads, against SQLite's ---- */

static void
test_size_and_checkpoints(void **state)
{
    static const uint64_t sizes[] = {0, 100, 300, 600, 123, 601};
    int64_t a = -1, b = -2;
    size_t i;

    (void)state;
    assert_int_equal(store_audit_size(g.sq, &a), IG_OK);
    assert_int_equal(store_audit_size(g.pg, &b), IG_OK);
    assert_int_equal(a, NEVENTS);
    assert_int_equal(b, NEVENTS);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char *na = NULL, *nb = NULL;
        uint64_t sa = 0, sb = 0;
        enum ig_status ra = store_checkpoint_get(g.sq, sizes[i], &na, &sa);
        enum ig_status rb = store_checkpoint_get(g.pg, sizes[i], &nb, &sb);

        assert_int_equal(ra, rb);
        if (ra == IG_OK) {
            assert_string_equal(na, nb);
            assert_int_equal(sa, sb);
        }
        free(na);
        free(nb);
    }
}

static void
test_leaves(void **state)
{
    static const struct {
        uint64_t start, end;
        size_t max;
    } cases[] = {{0, 600, 1 << 20},    {10, 20, 1 << 20},   {250, 270, 100},
                 {590, 1000, 1 << 20}, {600, 700, 1 << 20}, {5, 5, 100},
                 {0, 2000, 20000}};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ig_buf a, b;
        uint64_t ta = 0, tb = 1, ca = 2, cb = 3;

        ig_buf_init(&a, 1 << 20);
        ig_buf_init(&b, 1 << 20);
        assert_int_equal(store_audit_leaves(g.sq, cases[i].start, cases[i].end,
                                            cases[i].max, &a, &ta, &ca),
                         IG_OK);
        assert_int_equal(store_audit_leaves(g.pg, cases[i].start, cases[i].end,
                                            cases[i].max, &b, &tb, &cb),
                         IG_OK);
        assert_int_equal(ta, tb);
        assert_int_equal(ca, cb);
        assert_int_equal(a.len, b.len);
        if (a.len > 0)
            assert_memory_equal(a.data, b.data, a.len);
        ig_buf_release(&a);
        ig_buf_release(&b);
    }
}

static void
test_inclusion_proofs(void **state)
{
    static const uint64_t idx[] = {0, 1, 99, 255, 256, 299, 511, 512, 599, 600};
    static const uint64_t sizes[] = {0, 100, 300, 600, 123};
    unsigned char pa[AUDIT_PROOF_MAX][AUDIT_HASH_BYTES];
    unsigned char pb[AUDIT_PROOF_MAX][AUDIT_HASH_BYTES];
    size_t i, j;

    (void)state;
    for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
        for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
            char *na = NULL, *nb = NULL;
            size_t a = 0, b = 1;
            uint64_t sa = 0, sb = 1;
            enum ig_status ra =
                store_audit_inclusion(g.sq, idx[i], sizes[j], pa, &a, &na, &sa);
            enum ig_status rb =
                store_audit_inclusion(g.pg, idx[i], sizes[j], pb, &b, &nb, &sb);

            assert_int_equal(ra, rb);
            if (ra == IG_OK) {
                assert_int_equal(a, b);
                assert_memory_equal(pa, pb, a * AUDIT_HASH_BYTES);
                assert_string_equal(na, nb);
                assert_int_equal(sa, sb);
            } else {
                assert_null(nb);
            }
            free(na);
            free(nb);
        }
}

static void
test_consistency_proofs(void **state)
{
    static const uint64_t pairs[][2] = {{100, 600}, {100, 300}, {300, 300},
                                        {200, 500}, {600, 100}, {0, 600},
                                        {123, 600}, {100, 601}};
    unsigned char pa[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    unsigned char pb[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        size_t a = 0, b = 1;
        enum ig_status ra =
            store_audit_consistency(g.sq, pairs[i][0], pairs[i][1], pa, &a);
        enum ig_status rb =
            store_audit_consistency(g.pg, pairs[i][0], pairs[i][1], pb, &b);

        assert_int_equal(ra, rb);
        if (ra == IG_OK) {
            assert_int_equal(a, b);
            assert_memory_equal(pa, pb, a * AUDIT_HASH_BYTES);
        }
    }
}

static void
assert_json_same(json_t *a, json_t *b)
{
    char *x = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
    char *y = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);

    assert_non_null(x);
    assert_non_null(y);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

static void
test_event_pages(void **state)
{
    static const struct {
        size_t limit;
        const char *type, *intent;
    } cases[] = {{50, NULL, NULL},
                 {25, "intent.decided", NULL},
                 {10, NULL, "i-0"},
                 {7, "grant.redeemed", "i-3"},
                 {5, "no.such.type", NULL}};
    size_t i, pages;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t before = 0;

        for (pages = 0; pages < 200; pages++) {
            json_t *a = NULL, *b = NULL;
            int64_t na = -1, nb = -2;

            assert_int_equal(store_audit_events(g.sq, before, cases[i].limit,
                                                cases[i].type, cases[i].intent,
                                                &a, &na),
                             IG_OK);
            assert_int_equal(store_audit_events(g.pg, before, cases[i].limit,
                                                cases[i].type, cases[i].intent,
                                                &b, &nb),
                             IG_OK);
            assert_json_same(a, b);
            assert_int_equal(na, nb);
            json_decref(a);
            json_decref(b);
            if (na == 0)
                break;
            before = na;
        }
        assert_true(pages < 200);
    }
}

static void
test_intent_events_and_checkpoints(void **state)
{
    static const char *const ids[] = {"i-0", "i-3", "i-x53", "nobody"};
    static const uint64_t max[] = {0, 300, 99, 1000};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        json_t *a = NULL, *b = NULL;

        assert_int_equal(store_audit_intent_events(g.sq, ids[i], &a), IG_OK);
        assert_int_equal(store_audit_intent_events(g.pg, ids[i], &b), IG_OK);
        assert_json_same(a, b);
        json_decref(a);
        json_decref(b);
    }
    for (i = 0; i < sizeof(max) / sizeof(max[0]); i++) {
        struct ig_buf a, b;

        ig_buf_init(&a, 1 << 20);
        ig_buf_init(&b, 1 << 20);
        assert_int_equal(store_audit_checkpoints(g.sq, max[i], &a), IG_OK);
        assert_int_equal(store_audit_checkpoints(g.pg, max[i], &b), IG_OK);
        assert_int_equal(a.len, b.len);
        if (a.len > 0)
            assert_memory_equal(a.data, b.data, a.len);
        ig_buf_release(&a);
        ig_buf_release(&b);
    }
}

/* ---- settling ---- */

struct reader {
    enum ig_status st;
    int64_t size;
};

static void *
read_size(void *arg)
{
    struct reader *r = arg;

    r->st = store_audit_size(g.pg, &r->size);
    return NULL;
}

static void
test_a_read_waits_for_the_sequencer(void **state)
{
    struct reader r = {IG_ERR_IO, -1};
    pthread_t t;

    (void)state;
    sql(g.ctl, "INSERT INTO audit_queue (event) VALUES ('{\"q\":1}')");
    assert_int_equal(pthread_create(&t, NULL, read_size, &r), 0);
    /* The sequencer's batch: the queue emptied, then the announcement.
       Whether the reader started waiting before or after, it must see
       nothing left and answer. */
    sql(g.ctl, "BEGIN");
    sql(g.ctl, "DELETE FROM audit_queue");
    sql(g.ctl, "SELECT pg_notify('" STORE_PG_CH_SEQUENCED "', '600')");
    sql(g.ctl, "COMMIT");
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.st, IG_OK);
    assert_int_equal(r.size, NEVENTS);
}

static void
test_reads_fail_closed_while_nothing_sequences(void **state)
{
    struct ig_buf b;
    uint64_t ts, n;
    int64_t size;
    char *note = NULL;
    json_t *ev = NULL;
    int64_t next;

    (void)state;
    sql(g.ctl, "INSERT INTO audit_queue (event) VALUES ('{\"q\":2}')");
    ig_buf_init(&b, 1 << 20);
    assert_int_equal(store_audit_size(g.pg, &size), IG_ERR_IO);
    assert_int_equal(store_audit_leaves(g.pg, 0, 10, 1 << 20, &b, &ts, &n),
                     IG_ERR_IO);
    assert_int_equal(b.len, 0);
    assert_int_equal(store_checkpoint_get(g.pg, 0, &note, &ts), IG_ERR_IO);
    assert_null(note);
    assert_int_equal(store_audit_events(g.pg, 0, 10, NULL, NULL, &ev, &next),
                     IG_ERR_IO);
    assert_null(ev);
    ig_buf_release(&b);
    sql(g.ctl, "DELETE FROM audit_queue");
    assert_int_equal(store_audit_size(g.pg, &size), IG_OK);
}

/* With a real sequencer (a store on a database of its own): a read right
   after a write sees it, every time. */
static void
test_reads_see_their_own_writes(void **state)
{
    char *url = pg_test_db("ig_pgread_own");
    struct store *s = open_store(url);
    char text[64];
    const char *ev[1] = {text};
    struct ig_buf b;
    uint64_t ts, n;
    int64_t size;
    json_t *page = NULL;
    int64_t next;
    int i;

    (void)state;
    for (i = 1; i <= 20; i++) {
        (void)snprintf(text, sizeof(text),
                       "{\"intent_id\":\"own-%d\",\"type\":\"x\"}", i);
        assert_int_equal(store_put_events(s, ev, 1), IG_OK);
        assert_int_equal(store_audit_size(s, &size), IG_OK);
        assert_int_equal(size, i);
    }
    ig_buf_init(&b, 1 << 20);
    assert_int_equal(store_audit_leaves(s, 19, 20, 1 << 20, &b, &ts, &n),
                     IG_OK);
    assert_int_equal(n, 1);
    assert_int_equal(b.len, strlen(text) + 1);
    assert_memory_equal(b.data, text, strlen(text));
    ig_buf_release(&b);
    assert_int_equal(store_audit_events(s, 0, 1, NULL, "own-20", &page, &next),
                     IG_OK);
    assert_int_equal(json_array_size(page), 1);
    json_decref(page);
    store_close(s);
    pg_test_drop(url);
}

/* ---- the offline reader ---- */

/* Every row of a cursor of each, equal. */
static void
same_rows(struct store_log_cursor *a, struct store_log_cursor *b)
{
    struct store_log_row ra, rb;
    struct ig_err err;
    enum ig_status sa, sb;

    do {
        sa = store_log_next(a, &ra, &err);
        sb = store_log_next(b, &rb, &err);
        assert_int_equal(sa, sb);
        if (sa != IG_OK)
            break;
        assert_int_equal(ra.key, rb.key);
        assert_int_equal(ra.at, rb.at);
        assert_int_equal(ra.len, rb.len);
        if (ra.len > 0)
            assert_memory_equal(ra.data, rb.data, ra.len);
    } while (1);
    assert_int_equal(sa, IG_ERR_NOTFOUND);
    store_log_cursor_free(a);
    store_log_cursor_free(b);
}

static void
test_offline_reader(void **state)
{
    static const enum store_log_table tables[] = {
        STORE_LOG_EVENTS, STORE_LOG_CHECKPOINTS, STORE_LOG_LEAVES};
    unsigned char na[AUDIT_HASH_BYTES], nb[AUDIT_HASH_BYTES];
    struct store_log *a = NULL, *b = NULL, *c = NULL;
    struct store_log_cursor *ca, *cb;
    struct ig_err err;
    char *la, *lb, bad[600];
    size_t lena, lenb, i;
    uint64_t ga, gb, q, k;
    unsigned lv;

    (void)state;
    assert_int_equal(store_log_open(g.path, &a, &err), IG_OK);
    if (store_log_open(g.url, &b, &err) != IG_OK)
        fail_msg("%s", err.msg);
    assert_true(store_log_has_tiles(b));
    for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        assert_int_equal(store_log_scan(a, tables[i], NULL, &ca, &err), IG_OK);
        assert_int_equal(store_log_scan(b, tables[i], NULL, &cb, &err), IG_OK);
        same_rows(ca, cb);
    }
    assert_int_equal(store_log_scan(a, STORE_LOG_EVENTS, "\"i-3\"", &ca, &err),
                     IG_OK);
    assert_int_equal(store_log_scan(b, STORE_LOG_EVENTS, "\"i-3\"", &cb, &err),
                     IG_OK);
    same_rows(ca, cb);
    for (lv = 0; lv < 3; lv++) {
        assert_int_equal(store_log_scan_tiles(a, lv, &ca, &err), IG_OK);
        assert_int_equal(store_log_scan_tiles(b, lv, &cb, &err), IG_OK);
        same_rows(ca, cb);
    }
    assert_int_equal(store_log_checkpoint(a, 0, &la, &lena, &ga, &err), IG_OK);
    assert_int_equal(store_log_checkpoint(b, 0, &lb, &lenb, &gb, &err), IG_OK);
    assert_string_equal(la, lb);
    assert_int_equal(ga, gb);
    free(la);
    free(lb);
    assert_int_equal(store_log_checkpoint(b, 123, &lb, &lenb, &gb, &err),
                     IG_ERR_NOTFOUND);
    assert_int_equal(store_log_leaf(a, 299, &la, &lena, &err), IG_OK);
    assert_int_equal(store_log_leaf(b, 299, &lb, &lenb, &err), IG_OK);
    assert_string_equal(la, lb);
    free(la);
    free(lb);
    assert_int_equal(store_log_leaf(b, 600, &lb, &lenb, &err), IG_ERR_NOTFOUND);
    assert_int_equal(store_log_nodes(a, 555, &err), IG_OK);
    assert_int_equal(store_log_nodes(b, 555, &err), IG_OK);
    for (k = 0; k < 555; k += 37) {
        assert_int_equal(store_log_fetch_node(a, 0, k, na), IG_OK);
        assert_int_equal(store_log_fetch_node(b, 0, k, nb), IG_OK);
        assert_memory_equal(na, nb, AUDIT_HASH_BYTES);
    }
    for (lv = 1; lv < 10; lv++) {
        assert_int_equal(store_log_fetch_node(a, lv, 1, na),
                         store_log_fetch_node(b, lv, 1, nb));
        if (store_log_fetch_node(a, lv, 1, na) == IG_OK)
            assert_memory_equal(na, nb, AUDIT_HASH_BYTES);
    }
    assert_int_equal(store_log_queued(a, &q, &err), IG_OK);
    assert_int_equal(q, 0);
    /* Queued events are counted in a new snapshot, not in b's. */
    sql(g.ctl, "INSERT INTO audit_queue (event) VALUES ('{}'), ('{}')");
    assert_int_equal(store_log_queued(b, &q, &err), IG_OK);
    assert_int_equal(q, 0);
    assert_int_equal(store_log_open(g.url, &c, &err), IG_OK);
    assert_int_equal(store_log_queued(c, &q, &err), IG_OK);
    assert_int_equal(q, 2);
    sql(g.ctl, "DELETE FROM audit_queue");
    store_log_close(c);
    store_log_close(b);
    store_log_close(a);
    /* Never a password on a command line. */
    (void)snprintf(bad, sizeof(bad), "postgresql://u:pw@127.0.0.1/x");
    assert_int_equal(store_log_open(bad, &c, &err), IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "PGPASSWORD"));
    (void)snprintf(bad, sizeof(bad), "postgres://u@h/x?password=pw");
    assert_int_equal(store_log_open(bad, &c, &err), IG_ERR_INVALID);
    assert_null(c);
    assert_true(store_url_has_password("postgres://h/x?sslmode=disable&"
                                       "pass%77ord=pw"));
    assert_true(store_url_has_password("postgresql://u:@h/x"));
    assert_false(store_url_has_password("postgresql://u@h/x?passwordless=1"));
    assert_false(store_url_has_password("postgresql://u@[::1]:5432/x"));
    assert_false(store_url_has_password("postgresql://u@h/x?user=password"));
}

/* Last: it edits the stored tree. */
static void
test_a_short_tile_is_refused(void **state)
{
    unsigned char p[AUDIT_PROOF_MAX][AUDIT_HASH_BYTES];
    char *note = NULL;
    uint64_t got;
    size_t n;

    (void)state;
    sql(g.ctl, "DROP TRIGGER audit_tiles_immutable ON audit_tiles");
    sql(g.ctl, "UPDATE audit_tiles SET hashes = substring(hashes from 1 for "
               "8191) WHERE level = 0 AND idx = 0");
    assert_int_equal(store_audit_inclusion(g.pg, 3, 600, p, &n, &note, &got),
                     IG_ERR_IO);
    assert_null(note);
    /* The proofs inside the last, partial tile do not read it. */
    assert_int_equal(store_audit_inclusion(g.pg, 599, 600, p, &n, &note, &got),
                     IG_ERR_IO);
    assert_null(note);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_size_and_checkpoints, need_pg),
        cmocka_unit_test_setup(test_leaves, need_pg),
        cmocka_unit_test_setup(test_inclusion_proofs, need_pg),
        cmocka_unit_test_setup(test_consistency_proofs, need_pg),
        cmocka_unit_test_setup(test_event_pages, need_pg),
        cmocka_unit_test_setup(test_intent_events_and_checkpoints, need_pg),
        cmocka_unit_test_setup(test_a_read_waits_for_the_sequencer, need_pg),
        cmocka_unit_test_setup(test_reads_fail_closed_while_nothing_sequences,
                               need_pg),
        cmocka_unit_test_setup(test_reads_see_their_own_writes, need_pg),
        cmocka_unit_test_setup(test_offline_reader, need_pg),
        cmocka_unit_test_setup(test_a_short_tile_is_refused, need_pg),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
