/*
 * test_store_cosig_cases.c - witness cosignatures in the store, one set of
 * cases for both backends (test_store_cosig_cases.h).
 *
 * Real cosignatures (audit/audit_cosig.h, keys made per case) are kept and
 * read back: by checkpoint, ordered by witness name, the first line of a
 * witness kept; a checkpoint that does not exist takes none; hostile lines
 * (no newline, two lines, another witness's, too long, not base64, a bad
 * witness name) are refused and leave nothing. on_checkpoint is told of
 * each signed checkpoint once - by count, by store_audit_sign, at close -
 * and of nothing else. The offline reader, and the auditors' page's
 * download of the checkpoints, give each checkpoint's note with its lines
 * appended: the log's key still opens it, each witness's
 * key finds its cosignature in it.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_cosig.h"
#include "audit_note.h"
#include "ig_buf.h"
#include "store_audit_view.h"
#include "store_log.h"
#include "test_store_cosig_cases.h"

#define WAIT_S 20 /* the longest a case waits for a PostgreSQL sequencer */

static pthread_mutex_t sizes_mu = PTHREAD_MUTEX_INITIALIZER;

void
cc_record(void *ctx, uint64_t size)
{
    struct cc_fixture *f = ctx;

    pthread_mutex_lock(&sizes_mu);
    if (f->nsizes < CC_SIZES_MAX)
        f->sizes[f->nsizes] = size;
    f->nsizes++;
    pthread_mutex_unlock(&sizes_mu);
}

size_t
cc_nsizes(struct cc_fixture *f)
{
    size_t n;

    pthread_mutex_lock(&sizes_mu);
    n = f->nsizes;
    pthread_mutex_unlock(&sizes_mu);
    return n;
}

void
cc_opts(struct cc_fixture *f, struct store_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->path = f->db;
    o->audit_name = CC_LOG;
    o->audit_key = f->log_key;
    o->on_checkpoint = cc_record;
    o->on_checkpoint_ctx = f;
}

struct store *
cc_open(const struct store_opts *o)
{
    struct store *s = NULL;
    struct ig_err err;

    if (store_open(o, &s, &err) != IG_OK)
        fail_msg("open %s: %s", o->path, err.msg);
    return s;
}

void
cc_keys(struct cc_fixture *f)
{
    assert_int_equal(ig_crypto_init(), IG_OK);
    assert_int_equal(ig_signing_key_generate(&f->log_key), IG_OK);
    assert_int_equal(ig_signing_key_generate(&f->w1_key), IG_OK);
    assert_int_equal(ig_signing_key_generate(&f->w2_key), IG_OK);
}

void
cc_keys_free(struct cc_fixture *f)
{
    ig_signing_key_free(f->log_key);
    ig_signing_key_free(f->w1_key);
    ig_signing_key_free(f->w2_key);
}

static double
now_s(void)
{
    struct timespec t;

    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};

    (void)nanosleep(&t, NULL);
}

uint64_t
cc_grow_and_sign(struct store *s, int n)
{
    static int counter;
    char text[16][64];
    const char *ev[16];
    double until = now_s() + WAIT_S;
    enum ig_status st;
    uint64_t size = 0;
    int i;

    assert_true(n > 0 && n <= 16);
    for (i = 0; i < n; i++) {
        (void)snprintf(text[i], sizeof(text[i]),
                       "{\"n\":%d,\"type\":\"test.cosig\"}", counter++);
        ev[i] = text[i];
    }
    assert_int_equal(store_put_events(s, ev, (size_t)n), IG_OK);
    /* PostgreSQL: IG_ERR_IO until this handle leads the sequencer. */
    while ((st = store_audit_sign(s, &size)) == IG_ERR_IO && now_s() < until)
        pause_ms(20);
    if (st != IG_OK)
        fail_msg("sign: %s", ig_strerror(st));
    return size;
}

char *
cc_note(struct store *s, uint64_t size)
{
    char *note = NULL;
    uint64_t got = 0;

    assert_int_equal(store_checkpoint_get(s, size, &note, &got), IG_OK);
    assert_int_equal(got, size);
    return note;
}

char *
cc_line(struct store *s, uint64_t size, const char *witness,
        const struct ig_signing_key *k, uint64_t ts)
{
    char *note = cc_note(s, size), *line;
    struct ig_buf b;
    /* The note's text with one newline: up to its blank line (an offset,
       not a pointer into note - gcc -O3's -Wdangling-pointer misreads
       that one). */
    size_t head = strcspn(note, "\n");

    while (note[head] == '\n' && note[head + 1] != '\n' &&
           note[head + 1] != '\0')
        head += 1 + strcspn(note + head + 1, "\n");
    assert_true(note[head] == '\n' && note[head + 1] == '\n');
    head++;
    ig_buf_init(&b, AUDIT_COSIG_LINE_MAX);
    assert_int_equal(audit_cosig_sign(note, head, witness, k, ts, &b), IG_OK);
    line = ig_buf_take(&b, NULL);
    assert_non_null(line);
    free(note);
    return line;
}

static char *
get(struct store *s, uint64_t size)
{
    char *lines = NULL;

    assert_int_equal(store_cosig_get(s, size, &lines), IG_OK);
    assert_non_null(lines);
    return lines;
}

static uint64_t
latest(struct store *s, const char *witness)
{
    uint64_t size = 99;

    assert_int_equal(store_cosig_latest(s, witness, &size), IG_OK);
    return size;
}

static char *
cat2(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *out = malloc(na + nb + 1);

    assert_non_null(out);
    memcpy(out, a, na);
    memcpy(out + na, b, nb + 1);
    return out;
}

/* ---- the cases ---- */

void
cc_put_get_latest(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    char *l1, *l2, *l3, *want, *got;
    uint64_t a, b;

    cc_opts(f, &o);
    s = cc_open(&o);
    a = cc_grow_and_sign(s, 3);
    assert_int_equal(a, 3);
    got = get(s, a);
    assert_string_equal(got, ""); /* none yet */
    free(got);
    assert_int_equal(latest(s, CC_W1), 0);
    l1 = cc_line(s, a, CC_W1, f->w1_key, 1700000000);
    l2 = cc_line(s, a, CC_W2, f->w2_key, 1700000001);
    /* Put in the other order: read back by witness name. */
    assert_int_equal(store_cosig_put(s, a, CC_W2, l2), IG_OK);
    assert_int_equal(store_cosig_put(s, a, CC_W1, l1), IG_OK);
    want = cat2(l1, l2);
    got = get(s, a);
    assert_string_equal(got, want);
    free(got);
    got = get(s, 0); /* the latest checkpoint */
    assert_string_equal(got, want);
    free(got);
    assert_int_equal(latest(s, CC_W1), a);
    assert_int_equal(latest(s, CC_W2), a);
    assert_int_equal(latest(s, "nobody.example"), 0);

    b = cc_grow_and_sign(s, 2);
    assert_int_equal(b, 5);
    got = get(s, 0); /* the latest has none */
    assert_string_equal(got, "");
    free(got);
    l3 = cc_line(s, b, CC_W1, f->w1_key, 1700000002);
    assert_int_equal(store_cosig_put(s, b, CC_W1, l3), IG_OK);
    got = get(s, 0);
    assert_string_equal(got, l3);
    free(got);
    got = get(s, a); /* the older one keeps its own */
    assert_string_equal(got, want);
    free(got);
    assert_int_equal(latest(s, CC_W1), b);
    assert_int_equal(latest(s, CC_W2), a);
    assert_int_equal(store_cosig_latest(s, NULL, &a), IG_ERR_INVALID);
    store_close(s);
    /* Kept across a restart. */
    s = cc_open(&o);
    got = get(s, 3);
    assert_string_equal(got, want);
    free(got);
    assert_int_equal(latest(s, CC_W1), 5);
    store_close(s);
    free(l1);
    free(l2);
    free(l3);
    free(want);
}

void
cc_first_put_wins(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    char *first, *second, *forged, *got;
    uint64_t a;

    cc_opts(f, &o);
    s = cc_open(&o);
    a = cc_grow_and_sign(s, 2);
    first = cc_line(s, a, CC_W1, f->w1_key, 1700000000);
    second = cc_line(s, a, CC_W1, f->w1_key, 1700000099);
    /* Well-formed, by W1's name, signed by another key. */
    forged = cc_line(s, a, CC_W1, f->w2_key, 1700000000);
    assert_string_not_equal(first, second);
    assert_int_equal(store_cosig_put(s, a, CC_W1, first), IG_OK);
    assert_int_equal(store_cosig_put(s, a, CC_W1, second), IG_OK);
    assert_int_equal(store_cosig_put(s, a, CC_W1, forged), IG_OK);
    assert_int_equal(store_cosig_put(s, a, CC_W1, first), IG_OK);
    got = get(s, a);
    assert_string_equal(got, first);
    free(got);
    store_close(s);
    free(first);
    free(second);
    free(forged);
}

void
cc_missing_checkpoint(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    static char sentinel[] = "x";
    char *line, *lines = sentinel;
    uint64_t a;

    cc_opts(f, &o);
    s = cc_open(&o);
    /* No checkpoint at all. */
    assert_int_equal(store_cosig_get(s, 0, &lines), IG_ERR_NOTFOUND);
    assert_null(lines);
    assert_int_equal(store_cosig_get(s, 1, &lines), IG_ERR_NOTFOUND);
    a = cc_grow_and_sign(s, 3);
    line = cc_line(s, a, CC_W1, f->w1_key, 1700000000);
    /* Sizes with no checkpoint: the tree's sizes before and after it,
       none, and the largest. */
    assert_int_equal(store_cosig_put(s, 2, CC_W1, line), IG_ERR_NOTFOUND);
    assert_int_equal(store_cosig_put(s, 4, CC_W1, line), IG_ERR_NOTFOUND);
    assert_int_equal(store_cosig_put(s, 0, CC_W1, line), IG_ERR_NOTFOUND);
    assert_int_equal(store_cosig_put(s, UINT64_MAX, CC_W1, line),
                     IG_ERR_NOTFOUND);
    assert_int_equal(store_cosig_put(s, (uint64_t)INT64_MAX, CC_W1, line),
                     IG_ERR_NOTFOUND);
    lines = sentinel;
    assert_int_equal(store_cosig_get(s, 2, &lines), IG_ERR_NOTFOUND);
    assert_null(lines);
    assert_int_equal(store_cosig_get(s, UINT64_MAX, &lines), IG_ERR_NOTFOUND);
    assert_int_equal(latest(s, CC_W1), 0);
    lines = get(s, a);
    assert_string_equal(lines, "");
    free(lines);
    store_close(s);
    free(line);
}

void
cc_hostile_lines(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    char *good, *got, bad[2 * AUDIT_COSIG_LINE_MAX], longname[300];
    size_t n;
    uint64_t a;

    cc_opts(f, &o);
    s = cc_open(&o);
    a = cc_grow_and_sign(s, 2);
    good = cc_line(s, a, CC_W1, f->w1_key, 1700000000);
    n = strlen(good);

    /* Without its newline. */
    memcpy(bad, good, n - 1);
    bad[n - 1] = '\0';
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    /* Two lines in one. */
    (void)snprintf(bad, sizeof(bad), "%s%s", good, good);
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    /* A newline inside, one at the end. */
    memcpy(bad, good, n + 1);
    bad[n / 2] = '\n';
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    /* Another witness's name in the line. */
    assert_int_equal(store_cosig_put(s, a, CC_W2, good), IG_ERR_INVALID);
    /* A witness name that is a prefix of the line's. */
    assert_int_equal(store_cosig_put(s, a, "w1.example", good), IG_ERR_INVALID);
    /* ASCII '-' for the em dash. */
    (void)snprintf(bad, sizeof(bad), "- %s", good + 4);
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    /* No signature. */
    (void)snprintf(bad, sizeof(bad), "\xe2\x80\x94 %s \n", CC_W1);
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    (void)snprintf(bad, sizeof(bad), "\xe2\x80\x94 %s\n", CC_W1);
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    /* Not base64: a tab, a carriage return, a quote, a space. */
    memcpy(bad, good, n + 1);
    bad[n - 3] = '\t';
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    bad[n - 3] = '\r';
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    bad[n - 3] = '\'';
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    bad[n - 3] = ' ';
    assert_int_equal(store_cosig_put(s, a, CC_W1, bad), IG_ERR_INVALID);
    /* Over AUDIT_COSIG_LINE_MAX: the longest name with a long tail. */
    memset(longname, 'n', AUDIT_NAME_MAX);
    longname[AUDIT_NAME_MAX] = '\0';
    (void)snprintf(bad, sizeof(bad), "\xe2\x80\x94 %s %s", longname,
                   strrchr(good, ' ') + 1);
    bad[strlen(bad) - 1] = 'A';
    (void)snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "AAAA\n");
    assert_true(strlen(bad) > AUDIT_COSIG_LINE_MAX);
    assert_int_equal(store_cosig_put(s, a, longname, bad), IG_ERR_INVALID);
    /* Bad witness names: empty, a space, a '+', too long, NULL. */
    assert_int_equal(store_cosig_put(s, a, "", good), IG_ERR_INVALID);
    assert_int_equal(store_cosig_put(s, a, "w1 x", good), IG_ERR_INVALID);
    assert_int_equal(store_cosig_put(s, a, "w1+x", good), IG_ERR_INVALID);
    longname[AUDIT_NAME_MAX] = 'n';
    longname[AUDIT_NAME_MAX + 1] = '\0';
    assert_int_equal(store_cosig_put(s, a, longname, good), IG_ERR_INVALID);
    assert_int_equal(store_cosig_put(s, a, NULL, good), IG_ERR_INVALID);
    assert_int_equal(store_cosig_put(s, a, CC_W1, NULL), IG_ERR_INVALID);
    assert_int_equal(store_cosig_put(s, a, CC_W1, ""), IG_ERR_INVALID);
    /* Refused on a missing checkpoint too: the line is checked first. */
    assert_int_equal(store_cosig_put(s, 99, CC_W1, "x\n"), IG_ERR_INVALID);

    got = get(s, a); /* nothing was kept */
    assert_string_equal(got, "");
    free(got);
    assert_int_equal(latest(s, CC_W1), 0);
    assert_int_equal(store_cosig_put(s, a, CC_W1, good), IG_OK);
    got = get(s, a);
    assert_string_equal(got, good);
    free(got);
    store_close(s);
    free(good);
}

void
cc_on_checkpoint(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    struct store_log *l;
    struct store_log_cursor *c;
    struct store_log_row row;
    struct ig_err err;
    const char *ev[4] = {"{\"a\":1}", "{\"a\":2}", "{\"a\":3}", "{\"a\":4}"};
    double until;
    uint64_t size = 0;
    size_t i;

    cc_opts(f, &o);
    o.checkpoint_every = 4;
    s = cc_open(&o);
    assert_int_equal(cc_nsizes(f), 0);
    /* By count: 4 leaves. */
    assert_int_equal(store_put_events(s, ev, 4), IG_OK);
    until = now_s() + WAIT_S;
    while (cc_nsizes(f) < 1 && now_s() < until)
        pause_ms(10);
    assert_int_equal(cc_nsizes(f), 1);
    assert_int_equal(f->sizes[0], 4);
    /* By store_audit_sign: told before the call returns. */
    assert_int_equal(cc_grow_and_sign(s, 2), 6);
    assert_int_equal(cc_nsizes(f), 2);
    assert_int_equal(f->sizes[1], 6);
    /* Nothing new: no checkpoint, nothing told. */
    assert_int_equal(store_audit_sign(s, &size), IG_ERR_EXISTS);
    assert_int_equal(cc_nsizes(f), 2);
    /* At close. */
    assert_int_equal(store_put_events(s, ev, 1), IG_OK);
    store_close(s);
    assert_int_equal(cc_nsizes(f), 3);
    assert_int_equal(f->sizes[2], 7);
    /* Once each, and each one a stored checkpoint. */
    assert_int_equal(store_log_open(f->db, &l, &err), IG_OK);
    assert_int_equal(store_log_scan(l, STORE_LOG_CHECKPOINTS, NULL, &c, &err),
                     IG_OK);
    for (i = 0; i < 3; i++) {
        assert_int_equal(store_log_next(c, &row, &err), IG_OK);
        assert_int_equal(row.key, (int64_t)f->sizes[i]);
    }
    assert_int_equal(store_log_next(c, &row, &err), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
    store_log_close(l);
    /* A reopen with nothing new signs nothing. */
    s = cc_open(&o);
    store_close(s);
    assert_int_equal(cc_nsizes(f), 3);
}

/* w's verifier key from its signing key. */
static void
witness_key(const struct ig_signing_key *k, const char *name,
            struct audit_witness_key *w)
{
    struct ig_public_key pub;

    ig_signing_key_public(k, &pub);
    assert_int_equal(audit_witness_key_init(w, name, pub.pk), IG_OK);
}

/* store_audit_checkpoints: two lines, the notes n3 and n5. */
static void
jsonl_checkpoints(struct store *s, const char *n3, const char *n5)
{
    struct ig_buf b;
    json_t *v;
    char *nl;

    ig_buf_init(&b, 1 << 20);
    assert_int_equal(store_audit_checkpoints(s, 0, &b), IG_OK);
    assert_non_null(b.data);
    nl = strchr(b.data, '\n');
    assert_non_null(nl);
    v = json_loadb(b.data, (size_t)(nl - b.data), 0, NULL);
    assert_non_null(v);
    assert_int_equal(json_integer_value(json_object_get(v, "size")), 3);
    assert_string_equal(json_string_value(json_object_get(v, "note")), n3);
    json_decref(v);
    v = json_loads(nl + 1, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(v);
    assert_int_equal(json_integer_value(json_object_get(v, "size")), 5);
    assert_string_equal(json_string_value(json_object_get(v, "note")), n5);
    json_decref(v);
    ig_buf_release(&b);
}

void
cc_offline_reader(void **state)
{
    struct cc_fixture *f = *state;
    struct store_opts o;
    struct store *s;
    struct store_log *l;
    struct store_log_cursor *c;
    struct store_log_row row;
    struct audit_verifier v;
    struct audit_witness_key w1, w2;
    struct audit_checkpoint cp;
    struct ig_public_key pub;
    struct ig_err err;
    char *note3, *note5, *l1, *l2, *tmp, *want3, *got;
    size_t len;
    uint64_t ts, size;

    cc_opts(f, &o);
    s = cc_open(&o);
    assert_int_equal(cc_grow_and_sign(s, 3), 3);
    l1 = cc_line(s, 3, CC_W1, f->w1_key, 1700000001);
    l2 = cc_line(s, 3, CC_W2, f->w2_key, 1700000002);
    assert_int_equal(store_cosig_put(s, 3, CC_W2, l2), IG_OK);
    assert_int_equal(store_cosig_put(s, 3, CC_W1, l1), IG_OK);
    assert_int_equal(cc_grow_and_sign(s, 2), 5);
    note3 = cc_note(s, 3);
    note5 = cc_note(s, 5);
    tmp = cat2(note3, l1);
    want3 = cat2(tmp, l2);
    free(tmp);
    /* The auditors' page's download (store_audit_view.h) as well. */
    jsonl_checkpoints(s, want3, note5);
    store_close(s);

    assert_int_equal(store_log_open(f->db, &l, &err), IG_OK);
    assert_int_equal(store_log_scan(l, STORE_LOG_CHECKPOINTS, NULL, &c, &err),
                     IG_OK);
    assert_int_equal(store_log_next(c, &row, &err), IG_OK);
    assert_int_equal(row.key, 3);
    assert_int_equal(row.len, strlen(want3));
    assert_memory_equal(row.data, want3, row.len);
    assert_int_equal(store_log_next(c, &row, &err), IG_OK);
    assert_int_equal(row.key, 5);
    assert_int_equal(row.len, strlen(note5));
    assert_memory_equal(row.data, note5, row.len);
    assert_int_equal(store_log_next(c, &row, &err), IG_ERR_NOTFOUND);
    store_log_cursor_free(c);
    assert_int_equal(store_log_checkpoint(l, 3, &got, &len, &size, &err),
                     IG_OK);
    assert_string_equal(got, want3);
    assert_int_equal(len, strlen(want3));
    free(got);
    assert_int_equal(store_log_checkpoint(l, 0, &got, &len, &size, &err),
                     IG_OK);
    assert_int_equal(size, 5);
    assert_string_equal(got, note5);
    free(got);
    store_log_close(l);

    /* One signed note: the log's key opens it, each witness finds its
       cosignature, a third key finds none. */
    ig_signing_key_public(f->log_key, &pub);
    assert_int_equal(audit_verifier_init(&v, CC_LOG, pub.pk), IG_OK);
    assert_int_equal(audit_checkpoint_open(want3, strlen(want3), &v, &cp, &err),
                     IG_OK);
    assert_int_equal(cp.size, 3);
    witness_key(f->w1_key, CC_W1, &w1);
    witness_key(f->w2_key, CC_W2, &w2);
    assert_int_equal(audit_cosig_find(want3, strlen(want3), &w1, &ts, &err),
                     IG_OK);
    assert_int_equal(ts, 1700000001);
    assert_int_equal(audit_cosig_find(want3, strlen(want3), &w2, &ts, &err),
                     IG_OK);
    assert_int_equal(ts, 1700000002);
    witness_key(f->w1_key, "w3.example", &w1);
    assert_int_equal(audit_cosig_find(want3, strlen(want3), &w1, &ts, &err),
                     IG_ERR_NOTFOUND);
    free(note3);
    free(note5);
    free(want3);
    free(l1);
    free(l2);
}
