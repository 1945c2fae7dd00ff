/*
 * test_store_anchor.c - what the store checks at open and the audit log's
 * anchor file: every way the database can disagree with itself (an event,
 * a node, a gap, a row beyond the tree, a checkpoint) refuses the open
 * naming the first bad index (store_audit_check.c); the anchor file
 * (store_anchor*.c):
 * written 0600 after every checkpoint and equal to it; the running marker
 * removed at a clean close; a tree that does not extend the anchor is not
 * signed; a database that does not extend it, is shorter, had leaves
 * added while closed, or lost its anchor is refused - unless adopted, which
 * is logged; a crash leaves the marker and only a warning; an anchor
 * behind the database catches up, one signed by another key is re-signed;
 * an anchor that cannot be written stops the signing until it can.
 */
#include "testutil.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_note.h"
#include "ig_key.h"
#include "store_int.h"

#define NAME "test.example/audit"

struct fixture {
    char dir[64], path[128], anchor_dir[128], anchor[160], marker[192];
    struct store *s;
    struct ig_signing_key *key;
    int adopt;
    int nev;
};

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char logged[8192];

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

static enum ig_status
try_open(struct fixture *f, struct store **out, struct ig_err *err)
{
    struct store_opts o;

    memset(&o, 0, sizeof(o));
    o.path = f->path;
    o.audit_name = NAME;
    o.audit_key = f->key;
    o.checkpoint_every = 0; /* signed on demand (and at close) only */
    o.audit_anchor = f->anchor;
    o.anchor_adopt = f->adopt;
    o.log = capture_log;
    *out = NULL;
    return store_open(&o, out, err);
}

static void
open_store(struct fixture *f)
{
    struct ig_err err;

    if (try_open(f, &f->s, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
}

/* The open's refusal (its message), the store left closed. */
static void
refused(struct fixture *f, const char *want)
{
    struct store *s = NULL;
    struct ig_err err;

    if (try_open(f, &s, &err) != IG_ERR_IO || strstr(err.msg, want) == NULL)
        fail_msg("want a refusal with '%s': %s", want,
                 s != NULL ? "opened" : err.msg);
    assert_null(s);
}

static void
close_store(struct fixture *f)
{
    store_close(f->s);
    f->s = NULL;
}

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig-stanchor-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
    (void)snprintf(f->anchor_dir, sizeof(f->anchor_dir), "%s/keys", f->dir);
    assert_int_equal(mkdir(f->anchor_dir, 0700), 0);
    (void)snprintf(f->anchor, sizeof(f->anchor), "%s/audit.key.checkpoint",
                   f->anchor_dir);
    (void)snprintf(f->marker, sizeof(f->marker), "%s.running", f->anchor);
    assert_int_equal(ig_signing_key_generate(&f->key), IG_OK);
    logged[0] = '\0';
    open_store(f);
    *state = f;
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

static void
append(struct fixture *f, int n)
{
    char text[64][48];
    const char *ev[64];
    int i;

    assert_true(n <= 64);
    for (i = 0; i < n; i++) {
        (void)snprintf(text[i], sizeof(text[i]),
                       "{\"n\":%d,\"time\":\"2026-01-01T00:00:00Z\"}",
                       f->nev + i);
        ev[i] = text[i];
    }
    assert_int_equal(store_put_events(f->s, ev, (size_t)n), IG_OK);
    f->nev += n;
}

static void
sign(struct fixture *f, enum ig_status want)
{
    uint64_t size = 0;

    assert_int_equal(store_audit_sign(f->s, &size), want);
}

static char *
slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    char *buf = calloc(1, AUDIT_NOTE_MAX + 1);

    assert_non_null(buf);
    if (fp == NULL) {
        free(buf);
        return NULL;
    }
    /* A short read is the file's end (buf is zeroed), never an error. */
    if (fread(buf, 1, AUDIT_NOTE_MAX, fp) < AUDIT_NOTE_MAX)
        assert_false(ferror(fp));
    (void)fclose(fp);
    return buf;
}

static void
raw_exec(struct fixture *f, const char *sql)
{
    sqlite3 *db;
    char *msg = NULL;

    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_busy_timeout(db, 5000), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* The anchor file holds exactly the newest stored checkpoint. */
static void
anchor_is_newest(struct fixture *f, uint64_t want)
{
    struct stat sb;
    uint64_t size = 0;
    char *note = NULL, *file = slurp(f->anchor);

    assert_non_null(file);
    assert_int_equal(store_checkpoint_get(f->s, 0, &note, &size), IG_OK);
    assert_int_equal(size, want);
    assert_string_equal(file, note);
    assert_int_equal(stat(f->anchor, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    free(note);
    free(file);
}

/* ---- tests ---- */

static void
test_written_at_each_checkpoint(void **state)
{
    struct fixture *f = *state;
    struct stat sb;

    assert_int_not_equal(stat(f->anchor, &sb), 0); /* nothing signed yet */
    assert_int_equal(stat(f->marker, &sb), 0);     /* open */
    append(f, 3);
    sign(f, IG_OK);
    anchor_is_newest(f, 3);
    append(f, 4);
    sign(f, IG_OK);
    anchor_is_newest(f, 7);
    append(f, 1);
    close_store(f); /* the last checkpoint, anchored; the marker goes */
    assert_int_not_equal(stat(f->marker, &sb), 0);
    open_store(f);
    anchor_is_newest(f, 8);
    assert_false(was_logged("audit.anchor_"));
}

static void
test_tree_that_does_not_extend_the_anchor_is_not_signed(void **state)
{
    struct fixture *f = *state;

    append(f, 4);
    sign(f, IG_OK);
    append(f, 2);
    store_sq_of(f->s)->anchor.root[0] ^=
        1; /* as if the anchor held another history */
    sign(f, IG_ERR_CRYPTO);
    assert_true(was_logged("audit.checkpoint_refused"));
    store_sq_of(f->s)->anchor.root[0] ^= 1;
    sign(f, IG_OK);
    anchor_is_newest(f, 6);
}

static void
copy_file(const char *from, const char *to)
{
    char cmd[400];

    (void)snprintf(cmd, sizeof(cmd), "cp %s %s", from, to);
    assert_int_equal(system(cmd), 0);
}

/* Anchored at 10 (checkpoints 5 and 10); a copy of the database as it was
   at 5 (closed) into backup. */
static void
two_checkpoints(struct fixture *f, char backup[160])
{
    append(f, 5);
    sign(f, IG_OK);
    close_store(f);
    (void)snprintf(backup, 160, "%s.at5", f->path);
    copy_file(f->path, backup);
    open_store(f);
    append(f, 5);
    sign(f, IG_OK);
    close_store(f);
}

static void
test_rewritten_database_refused(void **state)
{
    struct fixture *f = *state;
    char backup[160], keep[200];

    two_checkpoints(f, backup);
    (void)snprintf(keep, sizeof(keep), "%s.kept", f->anchor);
    copy_file(f->anchor, keep);
    /* The attacker's history: the copy at 5 continued with other events
       (by a store of its own, so its nodes are right), the checkpoints
       above 5 deleted. */
    copy_file(backup, f->path);
    (void)unlink(f->anchor);
    f->adopt = STORE_ANCHOR_ADOPT;
    open_store(f);
    f->nev = 100;
    append(f, 5);
    close_store(f);
    raw_exec(f, "DROP TRIGGER checkpoints_no_delete; "
                "DELETE FROM checkpoints WHERE size > 5");
    copy_file(keep, f->anchor);
    f->adopt = STORE_ANCHOR_STRICT;
    logged[0] = '\0';
    refused(f, "does not extend its anchor");
    assert_true(was_logged("audit.anchor_refused"));
}

static void
test_shorter_database_refused_then_adopted(void **state)
{
    struct fixture *f = *state;
    char backup[160];
    struct ig_buf b;
    uint64_t size = 0, count = 0;

    ig_buf_init(&b, 1 << 20);
    two_checkpoints(f, backup);
    copy_file(backup, f->path); /* restored from the older backup */
    refused(f, "audit log (5 leaves) is shorter than its anchor");
    f->adopt = STORE_ANCHOR_ADOPT_MISSING; /* dev mode: not enough */
    refused(f, "shorter");
    f->adopt = STORE_ANCHOR_ADOPT;
    open_store(f);
    assert_true(was_logged("audit.anchor_adopted"));
    anchor_is_newest(f, 5);
    /* The adoption is an event of the log itself, the 6th leaf. */
    assert_int_equal(store_audit_leaves(f->s, 5, 6, 1 << 20, &b, &size, &count),
                     IG_OK);
    assert_int_equal(count, 1);
    assert_non_null(strstr(b.data, "\"type\":\"audit.anchor_adopted\""));
    assert_non_null(strstr(b.data, "\"previous_size\":10"));
    assert_non_null(strstr(b.data, "\"reason\":\"shorter\""));
    ig_buf_release(&b);
    close_store(f); /* signs and anchors it */
    f->adopt = STORE_ANCHOR_STRICT;
    open_store(f);
    anchor_is_newest(f, 6);
}

static void
test_leaves_added_while_closed(void **state)
{
    struct fixture *f = *state;
    struct stat sb;

    append(f, 3);
    close_store(f);
    raw_exec(f, "INSERT INTO audit_events (event) VALUES ('{\"forged\":1}')");
    refused(f, "audit leaf 3 to 3 added after the PDP stopped at 3");
    /* A crash instead: the marker stayed; the leaf is signed on. */
    assert_int_equal(close(creat(f->marker, 0600)), 0);
    open_store(f);
    assert_true(was_logged("audit.unanchored_leaves"));
    sign(f, IG_OK);
    anchor_is_newest(f, 4);
    close_store(f);
    assert_int_not_equal(stat(f->marker, &sb), 0);
}

static void
test_missing_anchor(void **state)
{
    struct fixture *f = *state;

    append(f, 3);
    close_store(f);
    assert_int_equal(unlink(f->anchor), 0);
    refused(f, "is missing, the database has checkpoints up to 3");
    f->adopt = STORE_ANCHOR_ADOPT_MISSING;
    open_store(f);
    assert_true(was_logged("audit.anchor_adopted"));
    anchor_is_newest(f, 3);
}

static void
test_anchor_behind_catches_up(void **state)
{
    struct fixture *f = *state;
    char at5[200], *note = NULL;
    uint64_t size = 0;

    append(f, 5);
    sign(f, IG_OK);
    (void)snprintf(at5, sizeof(at5), "%s.5", f->anchor);
    copy_file(f->anchor, at5);
    append(f, 5);
    close_store(f);
    /* Stopped between the commit of 10 and its anchor: a crash. */
    copy_file(at5, f->anchor);
    assert_int_equal(close(creat(f->marker, 0600)), 0);
    open_store(f);
    anchor_is_newest(f, 10);
    assert_int_equal(store_checkpoint_get(f->s, 10, &note, &size), IG_OK);
    free(note);
}

static void
test_anchor_of_another_key(void **state)
{
    struct fixture *f = *state;
    struct ig_signing_key *old = f->key, *other = NULL;
    struct audit_verifier v;
    struct audit_checkpoint cp;
    struct ig_public_key pub;
    char *note;

    append(f, 4);
    close_store(f);
    /* A rotation: the new key opens the log the old one anchored. */
    assert_int_equal(ig_signing_key_generate(&other), IG_OK);
    f->key = other;
    open_store(f);
    assert_true(was_logged("audit.anchor_key_changed"));
    /* Re-signed at once with the key now in use. */
    ig_signing_key_public(other, &pub);
    assert_int_equal(audit_verifier_init(&v, NAME, pub.pk), IG_OK);
    note = slurp(f->anchor);
    assert_int_equal(audit_checkpoint_open(note, strlen(note), &v, &cp, NULL),
                     IG_OK);
    assert_int_equal(cp.size, 4);
    free(note);
    close_store(f);
    f->key = old;
    ig_signing_key_free(other);
}

static void
test_edited_anchor_refused(void **state)
{
    struct fixture *f = *state;
    char *note;
    FILE *fp;
    size_t n;

    append(f, 4);
    close_store(f);
    note = slurp(f->anchor);
    n = strlen(note);
    note[n - 3] = note[n - 3] == 'A' ? 'B' : 'A'; /* a signature byte */
    fp = fopen(f->anchor, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(note, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
    free(note);
    refused(f, "is not a checkpoint of test.example/audit signed by its key");
}

static void
test_unwritable_anchor_stops_signing(void **state)
{
    struct fixture *f = *state;
    char away[160];

    append(f, 3);
    sign(f, IG_OK);
    (void)snprintf(away, sizeof(away), "%s.away", f->anchor_dir);
    assert_int_equal(rename(f->anchor_dir, away), 0);
    append(f, 3);
    sign(f, IG_OK); /* committed, but the file cannot follow */
    assert_true(was_logged("audit.anchor_write_failed"));
    append(f, 3);
    sign(f, IG_ERR_CRYPTO); /* refused until it can */
    assert_int_equal(rename(away, f->anchor_dir), 0);
    sign(f, IG_OK);
    anchor_is_newest(f, 9);
}

/* Append until the log has n events. */
static void
append_to(struct fixture *f, int n)
{
    while (f->nev < n)
        append(f, n - f->nev < 64 ? n - f->nev : 64);
}

/* Each way the database can disagree with itself refuses the open and
   names where: the events, the tiles (an edited hash, a truncated blob,
   a deleted row, two rows swapped, rows past the log) and the
   checkpoints. The log: 600 events, so two full level-0 tiles. */
static void
test_open_check_names_the_first_bad_index(void **state)
{
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"UPDATE audit_events SET event = '{\"n\":99}' WHERE seq = 7",
         "leaf 6 (audit_events seq 7) does not hash to its stored leaf hash "
         "(entry 6 of tile/0/000)"},
        {"UPDATE audit_tiles SET hashes = CAST(substr(hashes, 1, 128) || "
         "zeroblob(32) || substr(hashes, 161) AS BLOB) WHERE level = 0 AND "
         "idx = 1",
         "leaf 260 (audit_events seq 261) does not hash to its stored leaf "
         "hash (entry 4 of tile/0/001)"},
        {"UPDATE audit_tiles SET hashes = substr(hashes, 1, 8000) WHERE "
         "level = 0 AND idx = 1",
         "tile/0/001 in audit_tiles is 8000 bytes, not 8192"},
        {"DELETE FROM audit_tiles WHERE level = 0 AND idx = 0",
         "tile/0/000 (leaves 0 to 255) is missing from audit_tiles"},
        {"DELETE FROM audit_tiles WHERE level = 0 AND idx = 1",
         "tile/0/001 (leaves 256 to 511) is missing from audit_tiles"},
        {"UPDATE audit_tiles SET idx = 9 WHERE level = 0 AND idx = 0; "
         "UPDATE audit_tiles SET idx = 0 WHERE level = 0 AND idx = 1; "
         "UPDATE audit_tiles SET idx = 1 WHERE level = 0 AND idx = 9",
         "leaf 0 (audit_events seq 1) does not hash to its stored leaf hash "
         "(entry 0 of tile/0/000)"},
        {"INSERT INTO audit_tiles VALUES (0, 2, zeroblob(8192))",
         "audit_tiles holds tile/0/002, past the log of 600 events"},
        {"INSERT INTO audit_tiles VALUES (0, 1000, zeroblob(8192))",
         "audit_tiles holds tile/0/x001/000, past the log of 600 events"},
        {"INSERT INTO audit_tiles VALUES (1, 0, zeroblob(8192))",
         "audit_tiles holds a tile (level 1, index 0) past the log"},
        {"DELETE FROM audit_events WHERE seq = 4",
         "leaf 3 is missing (a gap in audit_events.seq"},
        {"UPDATE checkpoints SET note = replace(note, substr(note, "
         "instr(note, char(10)) + 5, 8), 'AAAAAAAA') WHERE size = 300",
         "the signed checkpoint of size 300 is not the root"},
    };
    struct fixture *f = *state;
    char copy[160];
    size_t i;

    append(f, 5);
    sign(f, IG_OK);
    append_to(f, 300);
    sign(f, IG_OK);
    append_to(f, 600);
    close_store(f);
    (void)snprintf(copy, sizeof(copy), "%s.orig", f->path);
    copy_file(f->path, copy);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        copy_file(copy, f->path);
        raw_exec(f, "DROP TRIGGER audit_events_no_update; DROP TRIGGER "
                    "audit_events_no_delete; DROP TRIGGER "
                    "audit_tiles_no_update; DROP TRIGGER "
                    "audit_tiles_no_delete; DROP TRIGGER "
                    "checkpoints_no_update");
        raw_exec(f, cases[i].sql);
        refused(f, cases[i].want);
        refused(f, "refusing to start");
    }
    copy_file(copy, f->path);
    open_store(f); /* the untouched copy opens */
}

static void
test_directory_must_be_writable(void **state)
{
    struct fixture *f = *state;

    close_store(f);
    (void)snprintf(f->anchor, sizeof(f->anchor), "%s/none/cp", f->dir);
    refused(f, "cannot write beside the audit anchor");
}

static void
test_anchor_beside_the_database_is_a_warning(void **state)
{
    struct fixture *f = *state;

    assert_false(was_logged("audit.anchor_beside_database"));
    close_store(f);
    (void)snprintf(f->anchor, sizeof(f->anchor), "%s/./cp", f->dir);
    (void)snprintf(f->marker, sizeof(f->marker), "%s.running", f->anchor);
    open_store(f);
    assert_true(was_logged("audit.anchor_beside_database"));
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_written_at_each_checkpoint),
        T(test_tree_that_does_not_extend_the_anchor_is_not_signed),
        T(test_rewritten_database_refused),
        T(test_shorter_database_refused_then_adopted),
        T(test_leaves_added_while_closed),
        T(test_missing_anchor),
        T(test_anchor_behind_catches_up),
        T(test_anchor_of_another_key),
        T(test_edited_anchor_refused),
        T(test_unwritable_anchor_stops_signing),
        T(test_open_check_names_the_first_bad_index),
        T(test_directory_must_be_writable),
        T(test_anchor_beside_the_database_is_a_warning),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
