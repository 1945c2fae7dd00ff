/*
 * test_store_log.c - the audit log read offline (store/store_log.h): a
 * database the store wrote reads back row for row (events in seq order,
 * the tiles of leaf hashes, the checkpoints with their times, one leaf,
 * one checkpoint, the tree's nodes from the tiles and the last events), and
 * reading it leaves the file byte for byte as it was, with nothing created
 * beside it. A file that changes under such a read fails it; a database a store
 * has open is read through the store's own WAL, up to its last commit. A
 * missing file, a directory and a file that is not a database are refused with
 * one line naming them, and the missing file is not created.
 */
#include "testutil.h"

#include <dirent.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit_tile.h"
#include "audit_tree.h"
#include "ig_key.h"
#include "store.h"
#include "store_log.h"

#define NEV 300     /* one full tile of 256 leaf hashes, and a partial one */
#define SIGNED_AT 7 /* the first checkpoint; the second is at close */

struct fixture {
    char dir[64], path[128];
    char text[NEV][64];
};

/* A database of NEV events with checkpoints of sizes SIGNED_AT and NEV. */
static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct ig_signing_key *key = NULL;
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;
    const char *ev[NEV];
    uint64_t size = 0;
    int i;

    assert_non_null(f);
    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-stlog-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
    assert_int_equal(ig_signing_key_generate(&key), IG_OK);
    memset(&o, 0, sizeof(o));
    o.path = f->path;
    o.audit_name = "test.example/audit";
    o.audit_key = key;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
    for (i = 0; i < NEV; i++) {
        (void)snprintf(f->text[i], sizeof(f->text[0]),
                       "{\"n\":%d,\"type\":\"%s\"}", i,
                       i % 2 != 0 ? "odd" : "even");
        ev[i] = f->text[i];
    }
    assert_int_equal(store_put_events(s, ev, SIGNED_AT), IG_OK);
    assert_int_equal(store_audit_sign(s, &size), IG_OK);
    assert_int_equal(size, SIGNED_AT);
    assert_int_equal(store_put_events(s, ev + SIGNED_AT, NEV - SIGNED_AT),
                     IG_OK);
    store_close(s); /* signs the last checkpoint */
    ig_signing_key_free(key);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[200];

    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* The names in dir, sorted, joined by '/'. */
static void
listing(const char *dir, char *out, size_t cap)
{
    struct dirent **names;
    size_t used = 0;
    int n, i;

    n = scandir(dir, &names, NULL, alphasort);
    assert_true(n >= 0);
    out[0] = '\0';
    for (i = 0; i < n; i++) {
        (void)snprintf(out + used, cap - used, "%s/", names[i]->d_name);
        used += strlen(out + used);
        free(names[i]);
    }
    free(names);
}

static void
read_events(struct store_log *l, struct fixture *f)
{
    struct store_log_cursor *c;
    struct store_log_row row;
    unsigned char h[AUDIT_HASH_BYTES];
    int i;

    assert_int_equal(store_log_scan(l, STORE_LOG_EVENTS, NULL, &c, NULL),
                     IG_OK);
    for (i = 0; i < NEV; i++) {
        assert_int_equal(store_log_next(c, &row, NULL), IG_OK);
        assert_int_equal(row.key, i + 1);
        assert_int_equal(row.len, strlen(f->text[i]));
        assert_memory_equal(row.data, f->text[i], row.len);
    }
    assert_int_equal(store_log_next(c, &row, NULL), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
    /* The same bytes read in place (what audit verify hashes); no filter. */
    assert_int_equal(store_log_scan(l, STORE_LOG_LEAVES, NULL, &c, NULL),
                     IG_OK);
    for (i = 0; i < NEV; i++) {
        assert_int_equal(store_log_next(c, &row, NULL), IG_OK);
        assert_int_equal(row.key, i + 1);
        assert_int_equal(row.len, strlen(f->text[i]));
        assert_memory_equal(row.data, f->text[i], row.len);
    }
    assert_int_equal(store_log_next(c, &row, NULL), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
    assert_int_equal(store_log_scan(l, STORE_LOG_LEAVES, "x", &c, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(store_log_scan(l, STORE_LOG_TILES, NULL, &c, NULL),
                     IG_ERR_INVALID);
    /* The full tile of leaf hashes; the last 44 are in no tile. */
    assert_int_equal(store_log_has_tiles(l), 1);
    assert_int_equal(store_log_scan_tiles(l, 0, &c, NULL), IG_OK);
    assert_int_equal(store_log_next(c, &row, NULL), IG_OK);
    assert_int_equal(row.key, 0);
    assert_int_equal(row.len, AUDIT_TILE_BYTES);
    for (i = 0; i < AUDIT_TILE_WIDTH; i++) {
        audit_leaf_hash(f->text[i], strlen(f->text[i]), h);
        assert_memory_equal((const unsigned char *)row.data +
                                (size_t)i * AUDIT_HASH_BYTES,
                            h, AUDIT_HASH_BYTES);
    }
    assert_int_equal(store_log_next(c, &row, NULL), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
    assert_int_equal(store_log_scan_tiles(l, 1, &c, NULL), IG_OK);
    assert_int_equal(store_log_next(c, &row, NULL), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
    /* A filter is a substring of the text; the caller checks the rest. */
    assert_int_equal(
        store_log_scan(l, STORE_LOG_EVENTS, "\"type\":\"odd\"", &c, NULL),
        IG_OK);
    for (i = 1; i < NEV; i += 2) {
        assert_int_equal(store_log_next(c, &row, NULL), IG_OK);
        assert_int_equal(row.key, i + 1);
    }
    assert_int_equal(store_log_next(c, &row, NULL), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
}

/* The note's third line is the base64 of root. */
static void
assert_root_in_note(const char *note, const unsigned char *root)
{
    char b64[64];

    (void)sodium_bin2base64(b64, sizeof(b64), root, AUDIT_HASH_BYTES,
                            sodium_base64_VARIANT_ORIGINAL);
    assert_non_null(strstr(note, b64));
}

static void
read_checkpoints(struct store_log *l)
{
    struct store_log_cursor *c;
    struct store_log_row row;
    unsigned char root[AUDIT_HASH_BYTES], node[AUDIT_HASH_BYTES];
    struct ig_err err;
    char *note = NULL;
    size_t len = 0;
    uint64_t got = 0;

    assert_int_equal(store_log_scan(l, STORE_LOG_CHECKPOINTS, NULL, &c, NULL),
                     IG_OK);
    assert_int_equal(store_log_next(c, &row, NULL), IG_OK);
    assert_int_equal(row.key, SIGNED_AT);
    assert_true(row.at > 0);
    assert_non_null(strstr(row.data, "\n7\n"));
    assert_int_equal(store_log_next(c, &row, NULL), IG_OK);
    assert_int_equal(row.key, NEV);
    assert_int_equal(store_log_next(c, &row, NULL), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);

    assert_int_equal(store_log_checkpoint(l, 0, &note, &len, &got, NULL),
                     IG_OK);
    assert_int_equal(got, NEV);
    assert_int_equal(len, strlen(note));
    free(note);
    assert_int_equal(store_log_checkpoint(l, 8, &note, &len, &got, &err),
                     IG_ERR_NOTFOUND);
    assert_null(note);
    assert_string_equal(err.msg, "no checkpoint of size 8");

    /* Roots of both checkpoints from the tiles (and, past the full tile,
       the events), equal to the roots the notes sign. */
    assert_int_equal(store_log_nodes(l, SIGNED_AT, NULL), IG_OK);
    assert_int_equal(audit_root_at(SIGNED_AT, store_log_fetch_node, l, root),
                     IG_OK);
    assert_int_equal(
        store_log_checkpoint(l, SIGNED_AT, &note, &len, &got, NULL), IG_OK);
    assert_root_in_note(note, root);
    free(note);
    assert_int_equal(store_log_nodes(l, NEV, NULL), IG_OK);
    assert_int_equal(audit_root_at(NEV, store_log_fetch_node, l, root), IG_OK);
    assert_int_equal(store_log_checkpoint(l, NEV, &note, &len, &got, NULL),
                     IG_OK);
    assert_root_in_note(note, root);
    free(note);
    assert_int_equal(store_log_fetch_node(l, 0, NEV, node), IG_ERR_NOTFOUND);
    assert_int_equal(store_log_fetch_node(l, 8, 1, node), IG_ERR_NOTFOUND);
    assert_int_equal(store_log_fetch_node(l, 8, 0, node), IG_OK);
}

static void
read_leaves(struct store_log *l, struct fixture *f)
{
    struct ig_err err;
    char *leaf = NULL;
    size_t len = 0;

    assert_int_equal(store_log_leaf(l, 3, &leaf, &len, NULL), IG_OK);
    assert_string_equal(leaf, f->text[3]);
    assert_int_equal(len, strlen(f->text[3]));
    free(leaf);
    assert_int_equal(store_log_leaf(l, NEV, &leaf, &len, &err),
                     IG_ERR_NOTFOUND);
    assert_string_equal(err.msg, "no leaf 300 in the log");
}

/* Every read, and the file is as it was: same bytes, same time, nothing
   new beside it. */
static void
test_reads_leave_the_file_untouched(void **state)
{
    struct fixture *f = *state;
    char before[512], after[512];
    struct stat sa, sb;
    struct store_log *l = NULL;
    size_t n0, n1;
    char *bytes0, *bytes1;

    bytes0 = tu_read_file(f->path, &n0);
    assert_int_equal(stat(f->path, &sb), 0);
    listing(f->dir, before, sizeof(before));

    assert_int_equal(store_log_open(f->path, &l, NULL), IG_OK);
    read_events(l, f);
    read_checkpoints(l);
    read_leaves(l, f);
    store_log_close(l);

    bytes1 = tu_read_file(f->path, &n1);
    assert_int_equal(stat(f->path, &sa), 0);
    listing(f->dir, after, sizeof(after));
    assert_int_equal(n0, n1);
    assert_memory_equal(bytes0, bytes1, n0);
    assert_int_equal(sa.st_mtim.tv_sec, sb.st_mtim.tv_sec);
    assert_int_equal(sa.st_mtim.tv_nsec, sb.st_mtim.tv_nsec);
    assert_string_equal(after, before);
    free(bytes0);
    free(bytes1);
}

/* Count the events. */
static enum ig_status
count_events(struct store_log *l, int *n, struct ig_err *err)
{
    struct store_log_cursor *c;
    struct store_log_row row;
    enum ig_status st;

    *n = 0;
    assert_int_equal(store_log_scan(l, STORE_LOG_EVENTS, NULL, &c, NULL),
                     IG_OK);
    while ((st = store_log_next(c, &row, err)) == IG_OK)
        (*n)++;
    store_log_cursor_free(c);
    return st;
}

static void
test_a_change_under_the_read_fails_it(void **state)
{
    struct fixture *f = *state;
    struct store_log *l = NULL;
    struct ig_err err;
    struct store_opts o;
    struct store *s = NULL;
    const char *ev[1] = {"{\"type\":\"late\"}"};
    int n = 0;

    assert_int_equal(store_log_open(f->path, &l, NULL), IG_OK);
    assert_int_equal(count_events(l, &n, NULL), IG_ERR_NOTFOUND);
    assert_int_equal(n, NEV);
    /* A store opens it (and appends): the read no longer holds. */
    memset(&o, 0, sizeof(o));
    o.path = f->path;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
    assert_int_equal(store_put_events(s, ev, 1), IG_OK);
    assert_int_equal(count_events(l, &n, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "changed while it was read"));
    store_log_close(l);

    /* While the store has it open, the log is read through its WAL. */
    assert_int_equal(store_log_open(f->path, &l, NULL), IG_OK);
    assert_int_equal(count_events(l, &n, NULL), IG_ERR_NOTFOUND);
    assert_int_equal(n, NEV + 1);
    store_log_close(l);
    store_close(s);
}

/* One line naming the file and what is wrong with it. */
static void
assert_one_line(const struct ig_err *err, const char *path, const char *what)
{
    assert_non_null(strstr(err->msg, path));
    assert_non_null(strstr(err->msg, what));
    assert_null(strchr(err->msg, '\n'));
}

static void
test_refuses_what_is_not_a_log(void **state)
{
    struct fixture *f = *state;
    char path[160], before[512], after[512];
    struct store_log *l = (struct store_log *)1;
    struct ig_err err;
    struct stat sb;
    FILE *fp;

    listing(f->dir, before, sizeof(before));
    (void)snprintf(path, sizeof(path), "%s/missing.db", f->dir);
    assert_int_equal(store_log_open(path, &l, &err), IG_ERR_INVALID);
    assert_null(l);
    assert_one_line(&err, path, "cannot open");
    assert_non_null(strstr(err.msg, "No such file or directory"));
    assert_int_not_equal(stat(path, &sb), 0); /* not created */
    listing(f->dir, after, sizeof(after));
    assert_string_equal(after, before);

    assert_int_equal(store_log_open(f->dir, &l, &err), IG_ERR_INVALID);
    assert_one_line(&err, f->dir, "is not an intentgate database");

    (void)snprintf(path, sizeof(path), "%s/junk.db", f->dir);
    assert_non_null(fp = fopen(path, "w"));
    assert_true(fputs("not a database, not even close\n", fp) >= 0);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(store_log_open(path, &l, &err), IG_ERR_INVALID);
    assert_null(l);
    assert_one_line(&err, path, "is not an intentgate database");
}

/* A file of schema 3 that no newer PDP opened yet: its tree is read from
   audit_nodes (here: the leaf hashes alone). */
static void
test_reads_a_schema_3_file(void **state)
{
    struct fixture *f = *state;
    struct store_log *l = NULL;
    struct store_log_cursor *c;
    struct store_log_row row;
    unsigned char h[AUDIT_HASH_BYTES], node[AUDIT_HASH_BYTES];
    sqlite3_stmt *st;
    sqlite3 *db;
    int i;

    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "DROP TABLE audit_tiles; CREATE TABLE audit_nodes (level "
                     "INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT "
                     "NULL, PRIMARY KEY (level, idx)) WITHOUT ROWID; PRAGMA "
                     "user_version = 3",
                     NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "INSERT INTO audit_nodes VALUES (0, "
                                        "?1, ?2)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    for (i = 0; i < NEV; i++) {
        audit_leaf_hash(f->text[i], strlen(f->text[i]), h);
        (void)sqlite3_bind_int(st, 1, i);
        (void)sqlite3_bind_blob(st, 2, h, AUDIT_HASH_BYTES, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        (void)sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);

    assert_int_equal(store_log_open(f->path, &l, NULL), IG_OK);
    assert_int_equal(store_log_has_tiles(l), 0);
    assert_int_equal(store_log_scan(l, STORE_LOG_LEAF_HASHES, NULL, &c, NULL),
                     IG_OK);
    for (i = 0; i < NEV; i++) {
        assert_int_equal(store_log_next(c, &row, NULL), IG_OK);
        assert_int_equal(row.key, i);
        assert_int_equal(row.len, AUDIT_HASH_BYTES);
    }
    assert_int_equal(store_log_next(c, &row, NULL), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
    assert_int_equal(store_log_nodes(l, NEV, NULL), IG_OK);
    assert_int_equal(store_log_fetch_node(l, 0, 3, node), IG_OK);
    audit_leaf_hash(f->text[3], strlen(f->text[3]), h);
    assert_memory_equal(node, h, AUDIT_HASH_BYTES);
    assert_int_equal(store_log_fetch_node(l, 1, 0, node), IG_ERR_NOTFOUND);
    store_log_close(l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reads_leave_the_file_untouched,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_change_under_the_read_fails_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_a_schema_3_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refuses_what_is_not_a_log, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
