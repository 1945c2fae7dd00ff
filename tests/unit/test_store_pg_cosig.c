/*
 * test_store_pg_cosig.c - witness cosignatures in the PostgreSQL store: the
 * shared cases (test_store_cosig_cases.c) on a fresh database each, and
 * what only PostgreSQL has - the table's triggers and key under the
 * cluster's superuser, migration 2 of a schema-1 database, the
 * least-privilege roles of docs/operations.md (the PDP's puts and reads
 * its cosignatures and cannot change one; an auditor's role without the
 * grant reads the bare notes offline, with it the notes with their lines),
 * `store copy` of a SQLite store's cosignatures, and on_checkpoint on the
 * sequencing replica only. IG_TEST_PG_URL names the cluster (no URL:
 * every case fails, none is skipped).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pg_test.h"
#include "store_copy.h"
#include "store_log.h"
#include "test_store_cosig_cases.h"

static int
setup(void **state)
{
    struct cc_fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->pg_url = pg_test_db("igt_cosig");
    (void)snprintf(f->db, sizeof(f->db), "%s", f->pg_url);
    cc_keys(f);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct cc_fixture *f = *state;

    pg_test_drop(f->pg_url);
    cc_keys_free(f);
    if (f->dir[0] != '\0') {
        char cmd[200];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
        assert_int_equal(system(cmd), 0);
    }
    free(f);
    return 0;
}

/* A store on f->db (or path) with a checkpoint of size 3 and W1's
   cosignature of it; the line and the bare note are returned. */
static void
one_cosigned(struct cc_fixture *f, const char *path, char **line, char **note)
{
    struct store_opts o;
    struct store *s;

    cc_opts(f, &o);
    if (path != NULL)
        o.path = path;
    s = cc_open(&o);
    assert_int_equal(cc_grow_and_sign(s, 3), 3);
    *line = cc_line(s, 3, CC_W1, f->w1_key, 1700000000);
    assert_int_equal(store_cosig_put(s, 3, CC_W1, *line), IG_OK);
    if (note != NULL)
        *note = cc_note(s, 3);
    store_close(s);
}

static void
test_pg_immutable(void **state)
{
    struct cc_fixture *f = *state;
    char *line;

    one_cosigned(f, NULL, &line, NULL);
    assert_int_equal(pg_test_exec(f->db, "UPDATE cosignatures SET line = 'x'"),
                     -1);
    assert_int_equal(pg_test_exec(f->db, "DELETE FROM cosignatures"), -1);
    assert_int_equal(pg_test_exec(f->db, "TRUNCATE cosignatures"), -1);
    assert_int_equal(pg_test_exec(f->db, "INSERT INTO cosignatures VALUES "
                                         "(3, 'w1.example/a', 'x', 0)"),
                     -1); /* one per (checkpoint, witness) */
    assert_int_equal(pg_test_exec(f->db, "INSERT INTO cosignatures VALUES "
                                         "(4, 'w9.example', 'x', 0)"),
                     -1); /* no checkpoint 4: the trigger */
    assert_int_equal(pg_test_scalar(f->db, "SELECT count(*) FROM cosignatures"),
                     1);
    assert_int_equal(pg_test_scalar(f->db, "SELECT count(*) FROM cosignatures "
                                           "WHERE line <> 'x'"),
                     1);
    free(line);
}

/* The first checkpoint's note as the offline reader gives it on url. */
static char *
offline_note(const char *url)
{
    struct store_log *l;
    struct ig_err err;
    char *note = NULL;
    size_t len;
    uint64_t got;

    if (store_log_open(url, &l, &err) != IG_OK)
        fail_msg("store_log_open: %s", err.msg);
    if (store_log_checkpoint(l, 3, &note, &len, &got, &err) != IG_OK)
        fail_msg("store_log_checkpoint: %s", err.msg);
    store_log_close(l);
    return note;
}

/* A schema-1 database (before the witnesses) reads offline as it is, and
   migrates to 2. */
static void
test_pg_migrate_from_1(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    char *line, *lines, *note;

    one_cosigned(f, NULL, &line, &note);
    free(line);
    assert_int_equal(pg_test_exec(f->db,
                                  "DROP TABLE cosignatures; DROP FUNCTION "
                                  "ig_cosig_checkpoint(); UPDATE "
                                  "ig_schema SET version = 1"),
                     0);
    /* Read offline as it is (no table): the bare notes. */
    lines = offline_note(f->db);
    assert_string_equal(lines, note);
    free(lines);
    free(note);
    cc_opts(f, &o);
    s = cc_open(&o);
    assert_int_equal(pg_test_scalar(f->db, "SELECT version FROM ig_schema"), 2);
    assert_int_equal(store_cosig_get(s, 3, &lines), IG_OK);
    assert_string_equal(lines, "");
    free(lines);
    line = cc_line(s, 3, CC_W2, f->w2_key, 1700000000);
    assert_int_equal(store_cosig_put(s, 3, CC_W2, line), IG_OK);
    assert_int_equal(store_cosig_get(s, 3, &lines), IG_OK);
    assert_string_equal(lines, line);
    free(lines);
    store_close(s);
    assert_int_equal(pg_test_exec(f->db, "DELETE FROM cosignatures"), -1);
    free(line);
}

/* url with user as its user (the cluster trusts loopback), malloc'd. */
static char *
as_user(const char *url, const char *user)
{
    const char *at = strchr(url, '@');
    char buf[1100];

    assert_non_null(at);
    (void)snprintf(buf, sizeof(buf), "postgresql://%s%s", user, at);
    return strdup(buf);
}

/* The roles of docs/operations.md ("Roles: least privilege"), with the
   grant on cosignatures. */
static void
test_pg_least_privilege(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    char sql[2048], pdp[64], aud[64], *pdp_url, *aud_url, *line, *lines, *note;
    char *want;

    (void)snprintf(pdp, sizeof(pdp), "igt_cpdp_%ld", (long)getpid());
    (void)snprintf(aud, sizeof(aud), "igt_caud_%ld", (long)getpid());
    (void)snprintf(sql, sizeof(sql),
                   "DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN;"
                   "DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN",
                   pdp, pdp, aud, aud);
    assert_int_equal(pg_test_exec(f->db, sql), 0);
    cc_opts(f, &o);
    o.audit_key = NULL; /* the owner migrates */
    s = cc_open(&o);
    store_close(s);
    (void)snprintf(
        sql, sizeof(sql),
        "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;"
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
        "GRANT USAGE ON SCHEMA public TO %s, %s;"
        "GRANT SELECT, INSERT ON intents, decisions, grants, redemptions,"
        " outcomes, approvals, votes, resolutions, audit_events, audit_tiles,"
        " checkpoints, cosignatures TO %s;"
        "GRANT SELECT, INSERT, UPDATE, DELETE ON audit_queue, counter_counts,"
        " approver_sessions, login_failures, slack_messages TO %s;"
        "GRANT SELECT ON ig_schema TO %s;"
        "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO %s;"
        "GRANT SELECT ON audit_events, audit_tiles, checkpoints, audit_queue"
        " TO %s",
        pdp, aud, pdp, pdp, pdp, pdp, aud);
    assert_int_equal(pg_test_exec(f->db, sql), 0);
    pdp_url = as_user(f->db, pdp);
    aud_url = as_user(f->db, aud);
    assert_non_null(pdp_url);
    assert_non_null(aud_url);

    one_cosigned(f, pdp_url, &line, &note);
    cc_opts(f, &o);
    o.path = pdp_url;
    s = cc_open(&o);
    assert_int_equal(store_cosig_get(s, 3, &lines), IG_OK);
    assert_string_equal(lines, line);
    free(lines);
    store_close(s);
    assert_int_equal(pg_test_exec(pdp_url, "UPDATE cosignatures SET line = "
                                           "'x'"),
                     -1);
    assert_int_equal(pg_test_exec(pdp_url, "DELETE FROM cosignatures"), -1);
    assert_int_equal(pg_test_exec(pdp_url, "DROP TRIGGER "
                                           "cosignatures_immutable ON "
                                           "cosignatures"),
                     -1);

    /* The auditor's role of the docs (no grant on cosignatures) reads
       the bare note; with the grant, the note with its line. */
    lines = offline_note(aud_url);
    assert_string_equal(lines, note);
    free(lines);
    (void)snprintf(sql, sizeof(sql), "GRANT SELECT ON cosignatures TO %s", aud);
    assert_int_equal(pg_test_exec(f->db, sql), 0);
    lines = offline_note(aud_url);
    want = malloc(strlen(note) + strlen(line) + 1);
    assert_non_null(want);
    (void)snprintf(want, strlen(note) + strlen(line) + 1, "%s%s", note, line);
    assert_string_equal(lines, want);
    free(lines);
    free(want);

    free(line);
    free(note);
    free(pdp_url);
    free(aud_url);
    pg_test_drop(f->pg_url);
    f->pg_url = NULL;
    (void)snprintf(sql, sizeof(sql),
                   "DROP ROLE IF EXISTS %s; DROP ROLE IF "
                   "EXISTS %s",
                   pdp, aud);
    (void)pg_test_exec(getenv("IG_TEST_PG_URL"), sql);
}

/* `store copy`: a SQLite store's cosignatures arrive, and the offline
   reader gives the same notes on both. */
static void
test_pg_copy(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    struct ig_err err;
    char path[128], *line, *l2, *sq_note, *pg_note, *lines;

    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-pgcosig-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(path, sizeof(path), "%s/t.db", f->dir);
    one_cosigned(f, path, &line, NULL);
    cc_opts(f, &o);
    o.path = path;
    s = cc_open(&o);
    l2 = cc_line(s, 3, CC_W2, f->w2_key, 1700000005);
    assert_int_equal(store_cosig_put(s, 3, CC_W2, l2), IG_OK);
    store_close(s);
    if (store_copy(path, f->db, NULL, NULL, &err) != IG_OK)
        fail_msg("store copy: %s", err.msg);
    assert_int_equal(pg_test_scalar(f->db, "SELECT count(*) FROM cosignatures"),
                     2);
    sq_note = offline_note(path);
    pg_note = offline_note(f->db);
    assert_string_equal(pg_note, sq_note);
    assert_non_null(strstr(pg_note, line));
    assert_non_null(strstr(pg_note, l2));
    cc_opts(f, &o);
    s = cc_open(&o);
    assert_int_equal(store_cosig_get(s, 0, &lines), IG_OK);
    assert_non_null(strstr(lines, line));
    assert_non_null(strstr(lines, l2));
    assert_true(strstr(lines, line) < strstr(lines, l2)); /* by witness */
    free(lines);
    store_close(s);
    free(line);
    free(l2);
    free(sq_note);
    free(pg_note);
}

/* Sizes recorded by a and b together, waiting (at most 20 s) for n. */
static size_t
wait_sizes(struct cc_fixture *a, struct cc_fixture *b, size_t n)
{
    struct timespec t, nap = {0, 20 * 1000000L};
    time_t until;

    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    until = t.tv_sec + 20;
    while (cc_nsizes(a) + cc_nsizes(b) < n && t.tv_sec < until) {
        (void)nanosleep(&nap, NULL);
        (void)clock_gettime(CLOCK_MONOTONIC, &t);
    }
    return cc_nsizes(a) + cc_nsizes(b);
}

/* Two replicas: only the one that sequences is told of a checkpoint, once;
   after it closes, the other takes over and is told of the next. */
static void
test_pg_on_checkpoint_sequencer_only(void **state)
{
    struct cc_fixture *f = *state, *g = calloc(1, sizeof(*g)), *lf, *of;
    struct store_opts oa, ob;
    struct store *a, *b, *leader, *other;
    const char *ev[3] = {"{\"r\":1}", "{\"r\":2}", "{\"r\":3}"};

    assert_non_null(g);
    cc_opts(f, &oa);
    oa.checkpoint_every = 3;
    ob = oa;
    ob.on_checkpoint_ctx = g;
    a = cc_open(&oa);
    b = cc_open(&ob);
    assert_int_equal(store_put_events(b, ev, 3), IG_OK);
    assert_int_equal(wait_sizes(f, g, 1), 1);
    leader = cc_nsizes(f) == 1 ? a : b;
    lf = leader == a ? f : g;
    other = leader == a ? b : a;
    of = leader == a ? g : f;
    assert_int_equal(cc_nsizes(of), 0);
    assert_int_equal(lf->sizes[0], 3);
    store_close(leader); /* nothing new: no checkpoint at close */
    assert_int_equal(cc_nsizes(lf) + cc_nsizes(of), 1);
    assert_int_equal(store_put_events(other, ev, 3), IG_OK);
    assert_int_equal(wait_sizes(f, g, 2), 2);
    assert_int_equal(cc_nsizes(of), 1);
    assert_int_equal(of->sizes[0], 6);
    store_close(other);
    assert_int_equal(cc_nsizes(f) + cc_nsizes(g), 2);
    assert_int_equal(pg_test_scalar(f->db, "SELECT count(*) FROM checkpoints"),
                     2);
    free(g);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        COSIG_CASES(setup, teardown),
        cmocka_unit_test_setup_teardown(test_pg_immutable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pg_migrate_from_1, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pg_least_privilege, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pg_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pg_on_checkpoint_sequencer_only,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
