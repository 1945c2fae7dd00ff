/*
 * test_store_cosig.c - witness cosignatures in the SQLite store: the
 * shared cases (test_store_cosig_cases.c), and what only SQLite has - the
 * table's triggers under an attacker's own connection (a line only for
 * a checkpoint that exists, one per witness, never changed), the
 * migration of a schema-6 database (and the migration run twice), the
 * offline reader of a schema-6 file, which has no cosignatures table, and
 * a witness's line left beside a forked checkpoint, which fails its check.
 */
#include "testutil.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_cosig.h"
#include "audit_note.h"
#include "ig_buf.h"
#include "store_log.h"
#include "test_store_cosig_cases.h"

static int
setup(void **state)
{
    struct cc_fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-cosig-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
    cc_keys(f);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct cc_fixture *f = *state;
    char cmd[200];

    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    cc_keys_free(f);
    free(f);
    return 0;
}

static int
exec_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    int rc;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    (void)sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

static long long
query_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* A store with a checkpoint of size 3 and W1's cosignature of it. */
static void
one_cosigned(struct cc_fixture *f, char **line)
{
    struct store_opts o;
    struct store *s;

    cc_opts(f, &o);
    s = cc_open(&o);
    assert_int_equal(cc_grow_and_sign(s, 3), 3);
    *line = cc_line(s, 3, CC_W1, f->w1_key, 1700000000);
    assert_int_equal(store_cosig_put(s, 3, CC_W1, *line), IG_OK);
    store_close(s);
}

/* Rows are immutable, and only of a checkpoint that exists: with the
   file's own connection, not the store's checks. */
static void
test_immutable(void **state)
{
    struct cc_fixture *f = *state;
    char *line;

    one_cosigned(f, &line);
    assert_int_not_equal(exec_sql(f->db, "UPDATE cosignatures SET line = 'x'"),
                         SQLITE_OK);
    assert_int_not_equal(
        exec_sql(f->db, "UPDATE cosignatures SET witness = 'w9'"), SQLITE_OK);
    assert_int_not_equal(exec_sql(f->db, "DELETE FROM cosignatures"),
                         SQLITE_OK);
    assert_int_not_equal(exec_sql(f->db, "INSERT INTO cosignatures VALUES "
                                         "(3, 'w1.example/a', 'x', 0)"),
                         SQLITE_OK); /* one per (checkpoint, witness) */
    assert_int_not_equal(exec_sql(f->db, "INSERT INTO cosignatures VALUES "
                                         "(4, 'w1.example/a', 'x', 0)"),
                         SQLITE_OK); /* no checkpoint 4: the trigger */
    assert_int_equal(query_int(f->db, "SELECT count(*) FROM cosignatures"), 1);
    assert_int_equal(query_int(f->db,
                               "SELECT line = (SELECT line FROM cosignatures) "
                               "FROM cosignatures"),
                     1);
    free(line);
}

/* A schema-6 database (a PDP of before the witnesses) migrates to 7 and
   takes cosignatures; its log is kept. */
static void
test_migrate_from_6(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    char *line, *lines;

    one_cosigned(f, &line);
    free(line);
    assert_int_equal(exec_sql(f->db, "DROP TABLE cosignatures; "
                                     "PRAGMA user_version = 6"),
                     SQLITE_OK);
    assert_int_equal(query_int(f->db, "SELECT count(*) FROM sqlite_schema "
                                      "WHERE name LIKE 'cosignatures%'"),
                     0);
    cc_opts(f, &o);
    s = cc_open(&o);
    assert_int_equal(store_cosig_get(s, 3, &lines), IG_OK);
    assert_string_equal(lines, "");
    free(lines);
    line = cc_line(s, 3, CC_W2, f->w2_key, 1700000000);
    assert_int_equal(store_cosig_put(s, 3, CC_W2, line), IG_OK);
    store_close(s);
    assert_int_equal(query_int(f->db, "PRAGMA user_version"), 7);
    /* The triggers came with the table. */
    assert_int_not_equal(exec_sql(f->db, "DELETE FROM cosignatures"),
                         SQLITE_OK);
    /* Run twice (user_version set back): the rows stay. */
    assert_int_equal(exec_sql(f->db, "PRAGMA user_version = 6"), SQLITE_OK);
    s = cc_open(&o);
    assert_int_equal(store_cosig_get(s, 3, &lines), IG_OK);
    assert_string_equal(lines, line);
    free(lines);
    store_close(s);
    assert_int_equal(query_int(f->db, "PRAGMA user_version"), 7);
    free(line);
}

/* The offline reader of a schema-6 file gives the bare notes. */
static void
test_reader_schema_6(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    struct store_log *l;
    struct store_log_cursor *c;
    struct store_log_row row;
    struct ig_err err;
    char *line, *bare, *got;
    size_t len;
    uint64_t size;

    one_cosigned(f, &line);
    cc_opts(f, &o);
    o.audit_key = NULL; /* reopened only to read the bare note */
    s = cc_open(&o);
    bare = cc_note(s, 3);
    store_close(s);
    assert_int_equal(exec_sql(f->db, "DROP TABLE cosignatures; "
                                     "PRAGMA user_version = 6"),
                     SQLITE_OK);
    assert_int_equal(store_log_open(f->db, &l, &err), IG_OK);
    assert_int_equal(store_log_scan(l, STORE_LOG_CHECKPOINTS, NULL, &c, &err),
                     IG_OK);
    assert_int_equal(store_log_next(c, &row, &err), IG_OK);
    assert_int_equal(row.len, strlen(bare));
    assert_memory_equal(row.data, bare, row.len);
    store_log_cursor_free(c);
    assert_int_equal(store_log_checkpoint(l, 3, &got, &len, &size, &err),
                     IG_OK);
    assert_string_equal(got, bare);
    free(got);
    store_log_close(l);
    free(bare);
    free(line);
}

/* A fork: the attacker (triggers dropped) replaces checkpoint 3 with
   another tree of size 3 signed by the log's real key. The witness's
   line stays with size 3: the reader appends it, the log's key still
   opens the note, and the witness's check fails - the fork shows. */
static void
test_stale_cosignature_on_a_fork(void **state)
{
    struct cc_fixture *f = *state;
    struct ig_public_key pub;
    struct audit_verifier v;
    struct audit_witness_key w;
    struct audit_checkpoint cp;
    struct ig_buf text, forged;
    struct store_log *l;
    struct ig_err err;
    unsigned char root[32];
    char *line, *note;
    sqlite3 *db;
    sqlite3_stmt *st;
    size_t len;
    uint64_t size, ts;

    one_cosigned(f, &line);
    memset(root, 0x5a, sizeof(root));
    ig_buf_init(&text, 1024);
    ig_buf_init(&forged, 4096);
    assert_int_equal(audit_checkpoint_text(CC_LOG, 3, root, &text), IG_OK);
    assert_int_equal(
        audit_note_sign(text.data, text.len, CC_LOG, f->log_key, &forged),
        IG_OK);
    assert_int_equal(exec_sql(f->db, "DROP TRIGGER checkpoints_no_update"),
                     SQLITE_OK);
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "UPDATE checkpoints SET note = ?1 "
                                        "WHERE size = 3",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(
        sqlite3_bind_text(st, 1, forged.data, (int)forged.len, SQLITE_STATIC),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);

    assert_int_equal(store_log_open(f->db, &l, &err), IG_OK);
    assert_int_equal(store_log_checkpoint(l, 3, &note, &len, &size, &err),
                     IG_OK);
    store_log_close(l);
    assert_int_equal(len, forged.len + strlen(line));
    assert_memory_equal(note, forged.data, forged.len);
    assert_string_equal(note + forged.len, line);
    ig_signing_key_public(f->log_key, &pub);
    assert_int_equal(audit_verifier_init(&v, CC_LOG, pub.pk), IG_OK);
    assert_int_equal(audit_checkpoint_open(note, len, &v, &cp, &err), IG_OK);
    ig_signing_key_public(f->w1_key, &pub);
    assert_int_equal(audit_witness_key_init(&w, CC_W1, pub.pk), IG_OK);
    assert_int_equal(audit_cosig_find(note, len, &w, &ts, &err), IG_ERR_CRYPTO);
    free(note);
    free(line);
    ig_buf_release(&text);
    ig_buf_release(&forged);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        COSIG_CASES(setup, teardown),
        cmocka_unit_test_setup_teardown(test_immutable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_6, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_schema_6, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_cosignature_on_a_fork, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
