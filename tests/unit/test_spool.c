/*
 * test_spool.c - the executor's outcome spool: records survive a restart;
 * a run without its outcome becomes UNKNOWN_AFTER_DISPATCH exactly once;
 * a delivered outcome is never sent again; transient failures are retried
 * with backoff (driven by an injected clock: no test sleeps), permanent
 * ones given up and counted; damaged lines (torn, garbage, bad checksum,
 * too long, wrong shape) are skipped without losing the good ones; wrong
 * modes and a second user of the directory are refused; concurrent
 * writers share one fdatasync; compaction keeps every pending record.
 * Spool lines are written here independently of exec_spool_file.c.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec_spool.h"
#include "ig_canon.h"
#include "ig_json.h"

#define MARKER "SECRET-DETAIL-MARKER"
#define MAXSENT 4096

/* The fake PDP, clock, disk and log behind one spool. */
struct fake {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double now;
    enum ig_status script[16]; /* answers in order, then dflt */
    int nscript, used;
    enum ig_status dflt;
    const char *fail_prefix; /* ids starting so always get IG_ERR_IO */
    int nsent;
    char sent[MAXSENT][IG_INTENT_ID_MAX + 1];
    char sent_outcome[8][IG_OUTCOME_NAME_MAX + 1];
    char *sent_detail[8];
    int syncs, sync_fail, real_sync, hold_first, held;
    long durable; /* file size at the last sync */
    int nlog, bad_log;
    char log_event[64][32];
    unsigned log_attempts[64];
};

struct t {
    char root[64], dir[96], file[128];
    struct fake f;
    struct exec_spool_opts o;
    struct exec_spool *s;
};

/* The canonical text of v, malloc'd. */
static char *
canon(const json_t *v)
{
    struct ig_buf b;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (ig_canon_write(v, &b, NULL) != IG_OK) {
        ig_buf_release(&b);
        return NULL;
    }
    return ig_buf_take(&b, NULL);
}

static enum ig_status
fake_send(void *ctx, const char *id, const char *outcome, const json_t *detail,
          struct ig_err *err)
{
    struct fake *f = ctx;
    enum ig_status st;
    int n;

    pthread_mutex_lock(&f->mu);
    n = f->nsent++;
    if (n < MAXSENT)
        (void)snprintf(f->sent[n], sizeof(f->sent[n]), "%s", id);
    if (n < 8) {
        (void)snprintf(f->sent_outcome[n], sizeof(f->sent_outcome[n]), "%s",
                       outcome);
        f->sent_detail[n] = canon(detail);
    }
    st = f->used < f->nscript ? f->script[f->used++] : f->dflt;
    if (f->fail_prefix != NULL &&
        strncmp(id, f->fail_prefix, strlen(f->fail_prefix)) == 0)
        st = IG_ERR_IO;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return st == IG_OK ? IG_OK
                       : ig_err_set(err, st, "PDP answered %d", (int)st);
}

static double
fake_now(void *ctx)
{
    struct fake *f = ctx;
    double t;

    pthread_mutex_lock(&f->mu);
    t = f->now;
    pthread_mutex_unlock(&f->mu);
    return t;
}

static void
fake_log(void *ctx, const char *event, const char *id, unsigned attempts,
         const char *error)
{
    struct fake *f = ctx;

    (void)id;
    pthread_mutex_lock(&f->mu);
    if (error != NULL && strstr(error, MARKER) != NULL)
        f->bad_log = 1;
    if (f->nlog < 64) {
        (void)snprintf(f->log_event[f->nlog], 32, "%s", event);
        f->log_attempts[f->nlog] = attempts;
    }
    f->nlog++;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static struct t *g_t; /* for the sync hook's stats look-up */

static int
fake_sync(void *ctx, int fd)
{
    struct fake *f = ctx;
    struct exec_spool_stats st;
    struct stat sb;
    int hold;

    pthread_mutex_lock(&f->mu);
    hold = f->hold_first > 0 && f->syncs == 0;
    pthread_mutex_unlock(&f->mu);
    if (hold) /* wait, in the leader, until every writer has appended */
        do {
            exec_spool_stats(g_t->s, &st);
            sched_yield();
        } while ((int)st.records_total < f->hold_first);
    pthread_mutex_lock(&f->mu);
    f->syncs++;
    if (f->sync_fail > 0) {
        f->sync_fail--;
        pthread_mutex_unlock(&f->mu);
        errno = EIO;
        return -1;
    }
    if (fstat(fd, &sb) == 0)
        f->durable = (long)sb.st_size;
    pthread_mutex_unlock(&f->mu);
    return f->real_sync ? fdatasync(fd) : 0;
}

/* Wait (bounded, on the fake's condition variable) for n sends / logs. */
static int
wait_for(struct fake *f, const int *counter, int n)
{
    struct timespec ts;
    int ok = 1;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 20;
    pthread_mutex_lock(&f->mu);
    while (*counter < n && ok)
        ok = pthread_cond_timedwait(&f->cv, &f->mu, &ts) == 0;
    ok = *counter >= n;
    pthread_mutex_unlock(&f->mu);
    return ok;
}

static int
setup(void **state)
{
    struct t *t = calloc(1, sizeof(*t));

    assert_non_null(t);
    assert_true(sodium_init() >= 0);
    (void)snprintf(t->root, sizeof(t->root), "/tmp/test_spool.XXXXXX");
    assert_non_null(mkdtemp(t->root));
    (void)snprintf(t->dir, sizeof(t->dir), "%s/spool", t->root);
    (void)snprintf(t->file, sizeof(t->file), "%s/%s", t->dir, EXEC_SPOOL_FILE);
    pthread_mutex_init(&t->f.mu, NULL);
    pthread_cond_init(&t->f.cv, NULL);
    t->f.dflt = IG_OK;
    t->o.send = fake_send;
    t->o.log = fake_log;
    t->o.now_ms = fake_now;
    t->o.sync = fake_sync;
    t->o.retry_initial_ms = 100;
    t->o.retry_max_ms = 400;
    t->o.ctx = &t->f;
    g_t = t;
    *state = t;
    return 0;
}

static int
teardown(void **state)
{
    struct t *t = *state;
    char cmd[256];
    int i;

    exec_spool_close(t->s);
    for (i = 0; i < 8 && i < t->f.nsent; i++)
        free(t->f.sent_detail[i]);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
    free(t);
    return 0;
}

/* (Re)open with t->o, closing what was open. */
static void
reopen(struct t *t)
{
    struct ig_err err;

    exec_spool_close(t->s);
    t->s = NULL;
    if (exec_spool_open(t->dir, &t->o, &t->s, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
}

static struct exec_spool_stats
stats(struct t *t)
{
    struct exec_spool_stats st;

    exec_spool_stats(t->s, &st);
    return st;
}

static int
count_log(struct t *t, const char *event)
{
    int i, n = 0;

    pthread_mutex_lock(&t->f.mu);
    for (i = 0; i < t->f.nlog && i < 64; i++)
        n += strcmp(t->f.log_event[i], event) == 0;
    pthread_mutex_unlock(&t->f.mu);
    return n;
}

static void
run_ok(struct t *t, const char *id)
{
    struct ig_err err;

    if (exec_spool_run(t->s, id, &err) != IG_OK)
        fail_msg("run %s: %s", id, err.msg);
}

/* Record an outcome with detail {"n": n, "note": MARKER}; *delivered. */
static int
outcome_ok(struct t *t, const char *id, const char *name, int n)
{
    json_t *d = json_pack("{s:i, s:s}", "n", n, "note", MARKER);
    struct ig_err err;
    int delivered = -1;

    if (exec_spool_outcome(t->s, id, name, d, &delivered, &err) != IG_OK)
        fail_msg("outcome %s: %s", id, err.msg);
    json_decref(d);
    return delivered;
}

static void
set_now(struct t *t, double now)
{
    pthread_mutex_lock(&t->f.mu);
    t->f.now = now;
    pthread_mutex_unlock(&t->f.mu);
}

/* A spool line made here: 4 bytes of SHA-256 in hex, space, JSON. */
static void
put_line(FILE *fp, const char *json, int newline)
{
    unsigned char h[crypto_hash_sha256_BYTES];

    crypto_hash_sha256(h, (const unsigned char *)json, strlen(json));
    (void)fprintf(fp, "%02x%02x%02x%02x %s%s", h[0], h[1], h[2], h[3], json,
                  newline ? "\n" : "");
}

/* Every line of the file checks, and there are n of them. */
static void
assert_file_clean(struct t *t, int n)
{
    size_t len, i, start = 0;
    char *text = tu_read_file(t->file, &len);
    unsigned char h[crypto_hash_sha256_BYTES];
    char sum[9];
    int lines = 0;

    for (i = 0; i < len; i++) {
        if (text[i] != '\n')
            continue;
        assert_true(i - start > 9);
        crypto_hash_sha256(h, (unsigned char *)text + start + 9, i - start - 9);
        (void)snprintf(sum, sizeof(sum), "%02x%02x%02x%02x", h[0], h[1], h[2],
                       h[3]);
        assert_memory_equal(sum, text + start, 8);
        lines++;
        start = i + 1;
    }
    assert_int_equal(start, len);
    assert_int_equal(lines, n);
    free(text);
}

/* ---- tests ---- */

static void
test_records_survive_and_unknown_once(void **state)
{
    struct t *t = *state;
    struct stat sb;

    t->o.send = NULL; /* record only */
    reopen(t);
    assert_int_equal(stat(t->dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    run_ok(t, "run-a");
    assert_int_equal(outcome_ok(t, "out-b", "COMPLETED", 2), 0);
    run_ok(t, "c");
    assert_int_equal(outcome_ok(t, "c", "FAILED_BEFORE_DISPATCH", 3), 0);
    assert_int_equal(stats(t).running, 1);
    assert_int_equal(stats(t).pending, 2);
    assert_int_equal(stat(t->file, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    reopen(t); /* run-a has no outcome: recovered */
    assert_int_equal(stats(t).running, 0);
    assert_int_equal(stats(t).pending, 3);
    assert_int_equal(count_log(t, "outcome.recovered"), 1);
    assert_file_clean(t, 3);
    reopen(t); /* ... exactly once */
    assert_int_equal(count_log(t, "outcome.recovered"), 1);
    t->o.send = fake_send;
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 3); /* oldest first */
    assert_string_equal(t->f.sent[0], "run-a");
    assert_string_equal(t->f.sent_outcome[0], "UNKNOWN_AFTER_DISPATCH");
    assert_string_equal(t->f.sent_detail[0],
                        "{\"error\":\"" EXEC_SPOOL_UNKNOWN_ERROR "\"}");
    assert_string_equal(t->f.sent[1], "out-b");
    assert_string_equal(t->f.sent_detail[1],
                        "{\"n\":2,\"note\":\"" MARKER "\"}");
    assert_string_equal(t->f.sent[2], "c");
    assert_string_equal(t->f.sent_outcome[2], "FAILED_BEFORE_DISPATCH");
    assert_int_equal(stats(t).pending, 0);
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 3); /* never again */
    assert_file_clean(t, 0);
}

/* The run record in two steps: written before the redemption (which
   wakes the flusher), durable after it; a refused redemption forgets it;
   a record only written (the executor died during the redemption) is
   still reported after a restart. */
static void
test_run_written_then_durable_or_cancelled(void **state)
{
    struct t *t = *state;
    struct ig_err err;
    uint64_t a, b, c, syncs;

    t->o.send = NULL; /* record only */
    reopen(t);
    syncs = stats(t).syncs_total;
    assert_int_equal(exec_spool_run_write(t->s, "w-1", &a, &err), IG_OK);
    assert_int_equal(exec_spool_run_write(t->s, "w-2", &b, &err), IG_OK);
    /* (The flusher may already be syncing them: the flush overlaps the
       redemption.) */
    assert_int_equal(exec_spool_run_write(t->s, "w-1", &c, &err),
                     IG_ERR_EXISTS);
    assert_int_equal(c, 0);
    assert_int_equal(exec_spool_run_durable(t->s, a, &err), IG_OK);
    assert_true(stats(t).syncs_total > syncs);
    exec_spool_run_cancel(t->s, "w-2"); /* the PDP refused: never ran */
    assert_int_equal(stats(t).running, 1);
    exec_spool_run_cancel(t->s, "no-such-id"); /* harmless */
    assert_int_equal(exec_spool_run_write(t->s, "w-3", &b, &err), IG_OK);
    reopen(t); /* w-1 (durable) and w-3 (only written) are recovered */
    assert_int_equal(stats(t).pending, 2);
    assert_int_equal(count_log(t, "outcome.recovered"), 2);
    t->o.send = fake_send;
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 2);
    assert_string_equal(t->f.sent[0], "w-1");
    assert_string_equal(t->f.sent[1], "w-3");
    assert_string_equal(t->f.sent_outcome[0], "UNKNOWN_AFTER_DISPATCH");
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 2); /* w-2 never */
}

static void
test_delivered_at_once_never_again(void **state)
{
    struct t *t = *state;

    uint64_t syncs;

    reopen(t);
    run_ok(t, "x1");
    syncs = stats(t).syncs_total; /* the run record is durable */
    assert_int_equal(outcome_ok(t, "x1", "COMPLETED", 1), 1);
    /* Taken at once: no disk flush for the outcome. */
    assert_int_equal(stats(t).syncs_total, syncs);
    assert_int_equal(stats(t).delivered_total, 1);
    assert_int_equal(stats(t).pending, 0);
    assert_int_equal(count_log(t, "outcome.delivered"), 0); /* not noisy */
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 1);
    assert_int_equal(stats(t).retries_total, 0);
}

static void
test_transient_then_success_once(void **state)
{
    struct t *t = *state;

    uint64_t syncs;

    t->f.script[0] = IG_ERR_IO;
    t->f.nscript = 1;
    reopen(t);
    run_ok(t, "tr");
    syncs = stats(t).syncs_total;
    assert_int_equal(outcome_ok(t, "tr", "COMPLETED", 1), 0);
    /* Not taken: durable before the call returned. */
    assert_true(stats(t).syncs_total > syncs);
    assert_int_equal(stats(t).pending, 1);
    assert_int_equal(count_log(t, "outcome.pending"), 1);
    exec_spool_flush(t->s); /* t=0: backing off */
    set_now(t, 49);         /* the earliest retry is at 50 */
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 1);
    set_now(t, 100); /* the latest is at 100: kick alone wakes it */
    exec_spool_kick(t->s);
    assert_true(wait_for(&t->f, &t->f.nsent, 2));
    exec_spool_flush(t->s);
    assert_int_equal(stats(t).delivered_total, 1);
    assert_int_equal(stats(t).retries_total, 1);
    assert_int_equal(stats(t).pending, 0);
    assert_int_equal(count_log(t, "outcome.delivered"), 1);
    assert_int_equal(t->f.log_attempts[1], 2);
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 2);
    assert_false(t->f.bad_log);
}

static void
test_permanent_failure_given_up(void **state)
{
    struct t *t = *state;

    t->f.dflt = IG_ERR_EXISTS;
    reopen(t);
    run_ok(t, "perm");
    assert_int_equal(outcome_ok(t, "perm", "COMPLETED", 1), 0);
    assert_int_equal(stats(t).undeliverable_total, 1);
    assert_int_equal(stats(t).pending, 0);
    assert_int_equal(count_log(t, "outcome.undeliverable"), 1);
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, 1);
}

/* Failure k waits between d/2 and d, d = min(100 * 2^(k-1), 400); the
   queue is sent oldest first; a caller's success ends the backoff. */
static void
test_backoff_doubles_to_max(void **state)
{
    static const double d[] = {100, 200, 400, 400, 400};
    struct t *t = *state;
    double at = 0;
    int k;

    t->f.dflt = IG_ERR_IO;
    reopen(t);
    assert_int_equal(outcome_ok(t, "q1", "COMPLETED", 1), 0);
    assert_int_equal(outcome_ok(t, "q2", "COMPLETED", 2), 0);
    assert_int_equal(t->f.nsent, 2);
    for (k = 0; k < 5; k++) {
        set_now(t, at + d[k] / 2 - 1);
        exec_spool_flush(t->s);
        assert_int_equal(t->f.nsent, 2 + k);
        at += d[k];
        set_now(t, at);
        exec_spool_flush(t->s); /* q1 fails; the pass stops there */
        assert_int_equal(t->f.nsent, 3 + k);
        assert_string_equal(t->f.sent[2 + k], "q1");
    }
    assert_int_equal(stats(t).retries_total, 5);
    pthread_mutex_lock(&t->f.mu);
    t->f.dflt = IG_OK;
    pthread_mutex_unlock(&t->f.mu);
    assert_int_equal(outcome_ok(t, "q3", "COMPLETED", 3), 1);
    assert_true(wait_for(&t->f, &t->f.nsent, 10)); /* no clock change */
    exec_spool_flush(t->s);
    assert_string_equal(t->f.sent[8], "q1");
    assert_string_equal(t->f.sent[9], "q2");
    assert_int_equal(stats(t).pending, 0);
}

static void
test_damaged_lines_skipped(void **state)
{
    struct t *t = *state;
    FILE *fp;
    int i;

    assert_int_equal(mkdir(t->dir, 0700), 0);
    fp = fopen(t->file, "w");
    assert_non_null(fp);
    put_line(fp, "{\"intent_id\":\"g1\",\"type\":\"run\"}", 1);
    (void)fputs("garbage that is no record\n\n", fp);
    (void)fputs("0000000 {\"intent_id\":\"g9\",\"type\":\"run\"}\n", fp);
    (void)fputs("00000000 {\"intent_id\":\"g9\",\"type\":\"run\"}\n", fp);
    put_line(fp, "{\"intent_id\":\"g/9\",\"type\":\"run\"}", 1); /* bad id */
    put_line(fp, "{\"extra\":1,\"intent_id\":\"g9\",\"type\":\"run\"}", 1);
    put_line(fp,
             "{\"detail\":{\"a\":1},\"intent_id\":\"g2\",\"outcome\":"
             "\"COMPLETED\",\"type\":\"outcome\"}",
             1);
    for (i = 0; i < IG_EXEC_SPOOL_LINE_MAX; i++) /* too long, then good */
        (void)fputc('{', fp);
    (void)fputc('\n', fp);
    for (i = 0; i < IG_EXEC_SPOOL_LINE_MAX - 1; i++) /* fits: just bad */
        (void)fputc('x', fp);
    (void)fputc('\n', fp);
    put_line(fp, "{\"intent_id\":\"g3\",\"type\":\"run\"}", 1);
    put_line(fp,
             "{\"intent_id\":\"g3\",\"result\":\"delivered\",\"type\":"
             "\"done\"}",
             1);
    put_line(fp, "{\"intent_id\":\"g4\",\"type\":\"run\"}", 0); /* torn */
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(chmod(t->file, 0600), 0);
    t->o.send = NULL;
    reopen(t);
    /* garbage, empty, short sum, bad sum, bad id, extra key, too long,
       bad, torn */
    assert_int_equal(stats(t).corrupt_lines, 9);
    assert_int_equal(stats(t).pending, 2); /* g1 (recovered), g2 */
    assert_int_equal(count_log(t, "spool.damaged"), 1);
    assert_file_clean(t, 2);
    reopen(t);
    assert_int_equal(stats(t).corrupt_lines, 0);
    assert_int_equal(stats(t).pending, 2);
}

static void
test_modes_and_lock_refused(void **state)
{
    struct t *t = *state;
    struct exec_spool *other = NULL;
    struct ig_err err;
    mode_t old;

    assert_int_equal(mkdir(t->dir, 0755), 0);
    assert_int_equal(exec_spool_open(t->dir, &t->o, &t->s, &err), IG_ERR_IO);
    assert_null(t->s);
    assert_non_null(strstr(err.msg, "chmod 700"));
    assert_int_equal(chmod(t->dir, 0700), 0);
    assert_int_equal(close(open(t->file, O_CREAT | O_WRONLY, 0644)), 0);
    assert_int_equal(chmod(t->file, 0644), 0);
    assert_int_equal(exec_spool_open(t->dir, &t->o, &t->s, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "chmod 600"));
    assert_int_equal(unlink(t->file), 0);
    assert_int_equal(symlink("/etc/passwd", t->file), 0);
    assert_int_equal(exec_spool_open(t->dir, &t->o, &t->s, &err), IG_ERR_IO);
    assert_int_equal(unlink(t->file), 0);
    assert_int_equal(rmdir(t->dir), 0);
    old = umask(0); /* the modes do not depend on the umask */
    reopen(t);
    (void)umask(old);
    assert_int_equal(exec_spool_open(t->dir, &t->o, &other, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "in use"));
    run_ok(t, "still-mine");
}

static void
test_bad_input_refused(void **state)
{
    static const char *bad_ids[] = {
        "",
        "a/b",
        "a b",
        "a.b",
        "\xc3\xa9",
        "12345678901234567890123456789012345678901234567890123456789012345"};
    static const char *bad_names[] = {"", "completed", "A-B",
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF"};
    struct t *t = *state;
    struct ig_err err;
    json_t *big, *arr;
    size_t i;
    int delivered = 1;

    reopen(t);
    for (i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
        assert_int_equal(exec_spool_run(t->s, bad_ids[i], &err),
                         IG_ERR_INVALID);
        assert_int_equal(
            exec_spool_outcome(t->s, bad_ids[i], "COMPLETED", NULL, NULL, &err),
            IG_ERR_INVALID);
    }
    for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++)
        assert_int_equal(
            exec_spool_outcome(t->s, "ok-id", bad_names[i], NULL, NULL, &err),
            IG_ERR_INVALID);
    arr = json_array();
    assert_int_equal(
        exec_spool_outcome(t->s, "ok-id", "COMPLETED", arr, &delivered, &err),
        IG_ERR_INVALID);
    assert_int_equal(delivered, 0);
    json_decref(arr);
    /* {"x":"..."}: 8 bytes around the string. */
    big = NULL;
    for (i = 0; i < 2; i++) {
        char *pad = malloc(IG_OUTCOME_DETAIL_MAX_BYTES);
        size_t n = IG_OUTCOME_DETAIL_MAX_BYTES - 8 + i;

        assert_non_null(pad);
        memset(pad, 'p', n);
        json_decref(big);
        big = json_pack("{s:s%}", "x", pad, n);
        free(pad);
        assert_int_equal(exec_spool_outcome(t->s, i ? "big2" : "big1",
                                            "COMPLETED", big, NULL, &err),
                         i ? IG_ERR_LIMIT : IG_OK);
    }
    json_decref(big);
    assert_int_equal(t->f.nsent, 1); /* big1 only */
    run_ok(t, "twice");
    assert_int_equal(exec_spool_run(t->s, "twice", &err), IG_ERR_EXISTS);
    assert_int_equal(outcome_ok(t, "twice", "COMPLETED", 1), 1);
    assert_int_equal(
        exec_spool_outcome(t->s, "big1", "COMPLETED", NULL, NULL, &err),
        IG_OK); /* delivered: gone, so new */
    assert_int_equal(stats(t).pending, 0);
}

static void
test_pending_cap(void **state)
{
    struct t *t = *state;
    struct ig_err err;
    char id[32];
    int i;

    t->o.send = NULL;
    reopen(t);
    for (i = 0; i < IG_EXEC_SPOOL_PENDING_MAX; i++) {
        (void)snprintf(id, sizeof(id), "cap-%d", i);
        run_ok(t, id);
    }
    assert_int_equal(exec_spool_run(t->s, "one-more", &err), IG_ERR_LIMIT);
    assert_int_equal(
        exec_spool_outcome(t->s, "one-more", "COMPLETED", NULL, NULL, &err),
        IG_ERR_LIMIT);
    assert_int_equal(outcome_ok(t, "cap-7", "COMPLETED", 7), 0);
    assert_int_equal(stats(t).running, IG_EXEC_SPOOL_PENDING_MAX - 1);
}

static void
test_bad_options_refused(void **state)
{
    struct t *t = *state;
    struct ig_err err;

    t->o.retry_max_ms = IG_EXEC_SPOOL_RETRY_CEILING_MS + 1;
    assert_int_equal(exec_spool_open(t->dir, &t->o, &t->s, &err),
                     IG_ERR_INVALID);
    t->o.retry_max_ms = 400;
    t->o.retry_initial_ms = -1;
    assert_int_equal(exec_spool_open(t->dir, &t->o, &t->s, &err),
                     IG_ERR_INVALID);
    assert_null(t->s);
}

/* ---- durability ---- */

struct writer {
    struct t *t;
    char id[32];
    int ok;
};

/* Run one record; then it must lie within what the last sync covered. */
static void *
writer_main(void *p)
{
    struct writer *w = p;
    char *text, needle[64];
    const char *at, *end = NULL;
    long durable;
    size_t len;

    w->ok = exec_spool_run(w->t->s, w->id, NULL) == IG_OK;
    pthread_mutex_lock(&w->t->f.mu);
    durable = w->t->f.durable;
    pthread_mutex_unlock(&w->t->f.mu);
    text = tu_read_file(w->t->file, &len);
    (void)snprintf(needle, sizeof(needle), "\"%s\"", w->id);
    at = strstr(text, needle);
    if (at != NULL)
        end = strchr(at, '\n');
    w->ok = w->ok && end != NULL && (end - text) + 1 <= durable;
    free(text);
    return NULL;
}

static void
run_writers(struct t *t, int n, const char *prefix)
{
    struct writer *w = calloc((size_t)n, sizeof(*w));
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    int i;

    assert_true(w != NULL && th != NULL);
    for (i = 0; i < n; i++) {
        w[i].t = t;
        (void)snprintf(w[i].id, sizeof(w[i].id), "%s-%d", prefix, i);
        assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
    }
    for (i = 0; i < n; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    for (i = 0; i < n; i++)
        if (!w[i].ok)
            fail_msg("writer %s: not durable on return", w[i].id);
    free(w);
    free(th);
}

static void
test_group_commit_one_sync_per_group(void **state)
{
    struct t *t = *state;
    int before;

    reopen(t);
    before = t->f.syncs;
    t->f.hold_first = 100; /* the first leader waits for all 100 */
    t->f.syncs = 0;
    run_writers(t, 100, "w");
    /* One sync for the first record, one for the 99 behind it. */
    assert_int_equal(t->f.syncs, 2);
    assert_int_equal(stats(t).running, 100);
    (void)before;
    t->f.hold_first = 0;
}

static void
test_fsyncs_per_record_32_writers(void **state)
{
    struct t *t = *state;
    struct exec_spool_stats a, b;
    int round;

    t->f.real_sync = 1; /* fdatasync on the real disk */
    t->o.send = NULL;
    reopen(t);
    a = stats(t);
    for (round = 0; round < 10; round++) {
        char prefix[16];

        (void)snprintf(prefix, sizeof(prefix), "r%d", round);
        run_writers(t, 32, prefix);
    }
    b = stats(t);
    assert_int_equal(b.records_total - a.records_total, 320);
    assert_true(b.syncs_total - a.syncs_total <= 320);
    print_message("fsyncs per record at 32 concurrent writers: %.3f "
                  "(%llu syncs, 320 records)\n",
                  (double)(b.syncs_total - a.syncs_total) / 320.0,
                  (unsigned long long)(b.syncs_total - a.syncs_total));
}

static void
test_sync_failure_rewrites(void **state)
{
    struct t *t = *state;
    struct ig_err err;

    reopen(t);
    t->f.sync_fail = 1;
    assert_int_equal(exec_spool_run(t->s, "sf1", &err), IG_ERR_IO);
    /* The caller reports it not executed; the spool rewrites the file. */
    t->f.dflt = IG_ERR_IO;
    assert_int_equal(outcome_ok(t, "sf1", "DEFINITELY_NOT_EXECUTED", 1), 0);
    run_ok(t, "sf2");
    assert_true(stats(t).compactions_total >= 2);
    t->o.send = NULL;
    reopen(t);
    assert_int_equal(stats(t).pending, 2);
    assert_int_equal(count_log(t, "outcome.recovered"), 1); /* sf2 */
}

static void
test_compaction_keeps_pending(void **state)
{
    struct t *t = *state;
    struct stat sb;
    char id[32];
    int i;

    t->o.compact_bytes = 4096;
    t->f.fail_prefix = "keep-";
    reopen(t);
    for (i = 0; i < 5; i++) {
        (void)snprintf(id, sizeof(id), "keep-%d", i);
        run_ok(t, id);
        assert_int_equal(outcome_ok(t, id, "COMPLETED", i), 0);
    }
    for (i = 0; i < 300; i++) {
        (void)snprintf(id, sizeof(id), "gone-%d", i);
        run_ok(t, id);
        assert_int_equal(outcome_ok(t, id, "COMPLETED", i), 1);
    }
    assert_true(stats(t).compactions_total > 5);
    assert_int_equal(stats(t).pending, 5);
    assert_int_equal(stat(t->file, &sb), 0);
    assert_true(sb.st_size < 2 * 4096 + 1024);
    t->o.send = NULL;
    reopen(t);
    assert_int_equal(stats(t).pending, 5);
    assert_int_equal(stats(t).corrupt_lines, 0);
    t->f.fail_prefix = NULL;
    t->o.send = fake_send;
    i = t->f.nsent;
    reopen(t);
    exec_spool_flush(t->s);
    assert_int_equal(t->f.nsent, i + 5);
    assert_string_equal(t->f.sent[i], "keep-0");
    assert_string_equal(t->f.sent[i + 4], "keep-4");
}

/* With no log callback: one JSON line on stderr, never the detail. */
static void
test_default_log_line(void **state)
{
    struct t *t = *state;
    char path[160], *text;
    int saved, fd;

    (void)snprintf(path, sizeof(path), "%s/stderr", t->root);
    fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    assert_true(fd >= 0);
    saved = dup(2);
    assert_true(saved >= 0 && dup2(fd, 2) == 2);
    t->o.log = NULL;
    t->f.dflt = IG_ERR_IO;
    reopen(t);
    (void)outcome_ok(t, "logged", "COMPLETED", 1);
    exec_spool_close(t->s);
    t->s = NULL;
    assert_int_equal(dup2(saved, 2), 2);
    (void)close(saved);
    (void)close(fd);
    text = tu_read_file(path, NULL);
    assert_non_null(strstr(text, "\"event\":\"outcome.pending\""));
    assert_non_null(strstr(text, "\"intent_id\":\"logged\""));
    assert_non_null(strstr(text, "\"attempts\":1"));
    assert_null(strstr(text, MARKER));
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_records_survive_and_unknown_once),
        T(test_run_written_then_durable_or_cancelled),
        T(test_delivered_at_once_never_again),
        T(test_transient_then_success_once),
        T(test_permanent_failure_given_up),
        T(test_backoff_doubles_to_max),
        T(test_damaged_lines_skipped),
        T(test_modes_and_lock_refused),
        T(test_bad_input_refused),
        T(test_pending_cap),
        T(test_bad_options_refused),
        T(test_group_commit_one_sync_per_group),
        T(test_fsyncs_per_record_32_writers),
        T(test_sync_failure_rewrites),
        T(test_compaction_keeps_pending),
        T(test_default_log_line),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
