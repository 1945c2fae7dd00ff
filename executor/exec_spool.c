/*
 * exec_spool.c - the outcome spool (see exec_spool.h): the API. The
 * pending set and group commit are in exec_spool_set.c, delivery and the
 * retry thread in exec_spool_retry.c, the file format in
 * exec_spool_file.c; each depends only on those after it in that list.
 *
 * DESIGN
 * The pending set is in memory - a hash by intent id and a list by age -
 * and every change to it is also one line appended to the file, in the
 * same critical section, so the file replayed always gives the set back.
 * Each entry keeps the one line that stands for it (its run or its
 * outcome record); a rewrite writes just those, which is how the file is
 * compacted at open and whenever it grows past compact_bytes and twice
 * its live lines.
 *
 * Group commit, as the PDP's SQLite writer does it: a writer appends its
 * line under the mutex (a write() to the page cache) and gets a sequence
 * number; then, while its number is above `synced`, either it becomes the
 * leader - no sync running: it notes the last number written, drops the
 * lock, fdatasyncs, takes the lock, raises `synced` and wakes everyone -
 * or it sleeps on synced_cv. One fdatasync covers every line written
 * before it began, however many threads wrote them. A run record also
 * wakes the flusher thread, which leads a sync at once: the record is
 * written before the grant is redeemed, and the flush runs while the PDP
 * answers, so the executor seldom waits for it afterwards. A leader whose sync
 * fails marks the numbers it covered `failed` (their writers get
 * IG_ERR_IO) and the spool broken; the next leader then rewrites the
 * whole file from memory instead of trusting the old one (Linux may have
 * dropped the dirty pages a failed fsync reported). A `done` record is
 * appended without waiting: it becomes durable with the next sync, the
 * next rewrite or close; lost in a crash, its outcome is sent again and
 * the PDP answers "duplicate".
 *
 * Delivery: exec_spool_outcome writes its record, tries once in the
 * caller's thread, and only when that fails waits for the record to be
 * durable; the retry thread then owns it. An outcome the PDP takes at
 * once costs no disk flush: its record survives a crash of this process
 * (the page cache has it), and for a power loss in those milliseconds the
 * run record - durable before the action ran - stands in: the restart
 * reports UNKNOWN_AFTER_DISPATCH. So each execution waits for the disk
 * once in the common case. Its
 * backoff is the queue's, not each record's: the PDP is the one shared
 * resource, so after n consecutive transient failures nothing is sent
 * for a delay drawn from [d/2, d], d = min(initial * 2^(n-1), max). When
 * due, a pass sends the pending outcomes oldest first and stops at the
 * first transient failure; a success (the caller's too) ends the backoff.
 * An entry being sent is `busy`: nobody else sends, changes or frees it.
 */
#include "exec_spool_int.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ig_file.h"

/* ---- defaults and logging ---- */

static double
mono_ms(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
data_sync(void *ctx, int fd)
{
    (void)ctx;
    return fdatasync(fd);
}

/* ---- the API ---- */

/* A run found without its outcome: the executor stopped while the
   action ran. It is reported UNKNOWN_AFTER_DISPATCH (before any thread
   runs: no lock). */
static enum ig_status
recover_runs(struct exec_spool *s, struct ig_err *err)
{
    static const char unknown[] = "UNKNOWN_AFTER_DISPATCH";
    struct spool_entry *e;
    enum ig_status st = IG_OK;
    json_t *detail;
    char *line;
    size_t len;

    detail = json_pack("{s:s}", "error", EXEC_SPOOL_UNKNOWN_ERROR);
    if (detail == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    for (e = s->oldest; e != NULL && st == IG_OK; e = e->newer) {
        if (e->outcome[0] != '\0')
            continue;
        st = exec_spool_format("outcome", e->id, unknown, detail, NULL, &line,
                               &len, err);
        if (st == IG_OK) {
            exec_spool_entry_set(s, e, line, len, unknown);
            exec_spool_log(s, "outcome.recovered", e->id, 0,
                           EXEC_SPOOL_UNKNOWN_ERROR);
        }
    }
    json_decref(detail);
    return st;
}

static struct exec_spool *
spool_new(const char *dir, const struct exec_spool_opts *o)
{
    struct exec_spool *s = calloc(1, sizeof(*s));
    pthread_condattr_t ca;

    if (s == NULL)
        return NULL;
    if (o != NULL)
        s->o = *o;
    s->fd = s->dirfd = -1;
    if (s->o.retry_initial_ms == 0)
        s->o.retry_initial_ms = IG_EXEC_SPOOL_RETRY_INITIAL_MS;
    if (s->o.retry_max_ms == 0)
        s->o.retry_max_ms = IG_EXEC_SPOOL_RETRY_MAX_MS;
    if (s->o.retry_max_ms < s->o.retry_initial_ms)
        s->o.retry_max_ms = s->o.retry_initial_ms;
    if (s->o.compact_bytes == 0)
        s->o.compact_bytes = IG_EXEC_SPOOL_COMPACT_BYTES;
    if (s->o.now_ms == NULL)
        s->o.now_ms = mono_ms;
    if (s->o.sync == NULL)
        s->o.sync = data_sync;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->synced_cv, NULL);
    pthread_cond_init(&s->flush_cv, NULL);
    pthread_cond_init(&s->passed, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    s->dir = strdup(dir);
    if (s->dir == NULL) {
        exec_spool_close(s);
        return NULL;
    }
    return s;
}

enum ig_status
exec_spool_open(const char *dir, const struct exec_spool_opts *o,
                struct exec_spool **out, struct ig_err *err)
{
    struct exec_spool *s;
    enum ig_status st;

    *out = NULL;
    if (sodium_init() < 0) /* the backoff's jitter */
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialise libsodium");
    if (o != NULL && (o->retry_initial_ms < 0 || o->retry_max_ms < 0 ||
                      o->compact_bytes < 0 ||
                      o->retry_initial_ms > IG_EXEC_SPOOL_RETRY_CEILING_MS ||
                      o->retry_max_ms > IG_EXEC_SPOOL_RETRY_CEILING_MS))
        return ig_err_set(err, IG_ERR_INVALID,
                          "spool retry delays are 0 to %ld ms, compact_bytes "
                          "is not negative",
                          IG_EXEC_SPOOL_RETRY_CEILING_MS);
    if ((s = spool_new(dir, o)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    st = exec_spool_dir_open(s, dir, err);
    if (st == IG_OK)
        st = exec_spool_load(s, exec_spool_apply, err);
    if (st == IG_OK)
        st = recover_runs(s, err);
    if (st == IG_OK) {
        pthread_mutex_lock(&s->mu);
        st = exec_spool_rewrite(s, err);
        s->pass_req = 1; /* the first pass tries everything pending */
        pthread_mutex_unlock(&s->mu);
    }
    if (st == IG_OK && s->o.send != NULL) {
        if (pthread_create(&s->thread, NULL, exec_spool_retry_main, s) != 0)
            st = ig_err_set(err, IG_ERR_NOMEM, "cannot start a thread");
        s->has_thread = st == IG_OK;
    }
    if (st == IG_OK) {
        if (pthread_create(&s->flusher, NULL, exec_spool_flusher_main, s) != 0)
            st = ig_err_set(err, IG_ERR_NOMEM, "cannot start a thread");
        s->has_flusher = st == IG_OK;
    }
    if (st != IG_OK) {
        exec_spool_close(s);
        return st;
    }
    if (s->st.corrupt_lines > 0)
        exec_spool_log(s, "spool.damaged", NULL, (unsigned)s->st.corrupt_lines,
                       "damaged lines of the outcome spool were skipped");
    *out = s;
    return IG_OK;
}

enum ig_status
exec_spool_run_write(struct exec_spool *s, const char *intent_id,
                     uint64_t *ticket, struct ig_err *err)
{
    struct spool_entry *e;
    enum ig_status st;
    char *line;
    size_t len;

    *ticket = 0;
    if (!exec_spool_id_valid(intent_id))
        return ig_err_set(err, IG_ERR_INVALID, "malformed intent id");
    st =
        exec_spool_format("run", intent_id, NULL, NULL, NULL, &line, &len, err);
    if (st != IG_OK)
        return st;
    pthread_mutex_lock(&s->mu);
    if (exec_spool_entry_find(s, intent_id) != NULL)
        st = ig_err_set(err, IG_ERR_EXISTS, "intent %s is already spooled",
                        intent_id);
    else if (s->nrun + s->npending >= IG_EXEC_SPOOL_PENDING_MAX)
        st = ig_err_set(err, IG_ERR_LIMIT,
                        "%d executions are waiting for their outcome to be "
                        "recorded",
                        IG_EXEC_SPOOL_PENDING_MAX);
    else if ((e = exec_spool_entry_add(s, intent_id)) == NULL)
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (st == IG_OK) {
        exec_spool_entry_set(s, e, line, len, NULL);
        line = NULL;
        exec_spool_append_locked(s, e->line, e->len, ticket);
        s->flush_req = 1;
        pthread_cond_signal(&s->flush_cv);
    }
    pthread_mutex_unlock(&s->mu);
    free(line);
    return st;
}

enum ig_status
exec_spool_run_durable(struct exec_spool *s, uint64_t ticket,
                       struct ig_err *err)
{
    enum ig_status st;

    pthread_mutex_lock(&s->mu);
    st = exec_spool_commit_locked(s, ticket, err);
    pthread_mutex_unlock(&s->mu);
    return st;
}

void
exec_spool_run_cancel(struct exec_spool *s, const char *intent_id)
{
    struct spool_entry *e;
    char id[IG_INTENT_ID_MAX + 1];

    pthread_mutex_lock(&s->mu);
    e = exec_spool_entry_find(s, intent_id);
    if (e != NULL && e->outcome[0] == '\0' && !e->busy) {
        /* Out of the set first: a rewrite the append makes must not keep
           it. */
        memcpy(id, e->id, sizeof(id));
        exec_spool_entry_free(s, e);
        exec_spool_append_nowait(s, "done", id, "not-run");
    }
    pthread_mutex_unlock(&s->mu);
}

enum ig_status
exec_spool_run(struct exec_spool *s, const char *intent_id, struct ig_err *err)
{
    uint64_t ticket;
    enum ig_status st = exec_spool_run_write(s, intent_id, &ticket, err);

    return st == IG_OK ? exec_spool_run_durable(s, ticket, err) : st;
}

/* Find or add the entry that takes an outcome (lock held). */
static enum ig_status
outcome_entry(struct exec_spool *s, const char *id, struct spool_entry **e,
              struct ig_err *err)
{
    *e = exec_spool_entry_find(s, id);
    if (*e != NULL && (*e)->outcome[0] != '\0')
        return ig_err_set(err, IG_ERR_EXISTS,
                          "an outcome of intent %s is already spooled", id);
    if (*e == NULL && s->nrun + s->npending >= IG_EXEC_SPOOL_PENDING_MAX)
        return ig_err_set(err, IG_ERR_LIMIT,
                          "%d outcomes are waiting to be recorded",
                          IG_EXEC_SPOOL_PENDING_MAX);
    if (*e == NULL && (*e = exec_spool_entry_add(s, id)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

enum ig_status
exec_spool_outcome_write(struct exec_spool *s, const char *intent_id,
                         const char *outcome, const json_t *detail,
                         uint64_t *ticket, struct ig_err *err)
{
    struct spool_entry *e;
    json_t *empty = NULL;
    enum ig_status st;
    char *line = NULL;
    size_t len;

    *ticket = 0;
    if (detail == NULL)
        detail = empty = json_object();
    if (!exec_spool_id_valid(intent_id) || !exec_spool_name_valid(outcome))
        st = ig_err_set(err, IG_ERR_INVALID, "malformed intent id or outcome");
    else if (detail == NULL)
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    else if ((st = exec_spool_detail_check(detail, err)) == IG_OK)
        st = exec_spool_format("outcome", intent_id, outcome, detail, NULL,
                               &line, &len, err);
    if (st != IG_OK)
        goto out;
    pthread_mutex_lock(&s->mu);
    if ((st = outcome_entry(s, intent_id, &e, err)) == IG_OK) {
        exec_spool_entry_set(s, e, line, len, outcome);
        line = NULL;
        /* The retry thread leaves it to the sender until
           exec_spool_outcome_send; without a sender it is the retry
           thread's (there is none) at once. */
        e->busy = s->o.send != NULL;
        /* Written (the page cache keeps it if this process dies); made
           durable only when the PDP does not take it at once. */
        exec_spool_append_locked(s, e->line, e->len, ticket);
    }
    pthread_mutex_unlock(&s->mu);
out:
    free(line);
    json_decref(empty);
    return st;
}

enum ig_status
exec_spool_outcome_send(struct exec_spool *s, const char *intent_id,
                        const json_t *detail, uint64_t ticket, int *delivered,
                        struct ig_err *err)
{
    struct spool_entry *e;
    json_t *empty = NULL;
    enum ig_status st = IG_OK;
    int sent = 0;

    if (detail == NULL)
        detail = empty = json_object();
    pthread_mutex_lock(&s->mu);
    e = exec_spool_entry_find(s, intent_id);
    /* Ours since exec_spool_outcome_write marked it busy. */
    if (s->o.send != NULL && e != NULL && e->busy && detail != NULL)
        sent = exec_spool_deliver(s, e, detail, 0);
    else if (e != NULL && e->busy)
        e->busy = 0; /* out of memory: the retry thread sends it */
    if (!sent)
        st = exec_spool_commit_locked(s, ticket, err);
    pthread_mutex_unlock(&s->mu);
    if (delivered != NULL)
        *delivered = sent;
    json_decref(empty);
    return st;
}

enum ig_status
exec_spool_outcome(struct exec_spool *s, const char *intent_id,
                   const char *outcome, const json_t *detail, int *delivered,
                   struct ig_err *err)
{
    enum ig_status st;
    uint64_t ticket;

    if (delivered != NULL)
        *delivered = 0;
    st = exec_spool_outcome_write(s, intent_id, outcome, detail, &ticket, err);
    if (st != IG_OK)
        return st;
    return exec_spool_outcome_send(s, intent_id, detail, ticket, delivered,
                                   err);
}

void
exec_spool_kick(struct exec_spool *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    if (s->has_thread)
        (void)exec_spool_kick_locked(s);
    pthread_mutex_unlock(&s->mu);
}

void
exec_spool_flush(struct exec_spool *s)
{
    uint64_t req;

    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    if (s->has_thread) {
        req = exec_spool_kick_locked(s);
        while (s->pass_done < req && !s->stopping)
            pthread_cond_wait(&s->passed, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
}

void
exec_spool_stats(struct exec_spool *s, struct exec_spool_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    out->running = s->nrun;
    out->pending = s->npending;
    pthread_mutex_unlock(&s->mu);
}

void
exec_spool_close(struct exec_spool *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->wake);
    pthread_cond_broadcast(&s->flush_cv);
    pthread_mutex_unlock(&s->mu);
    if (s->has_thread)
        (void)pthread_join(s->thread, NULL);
    if (s->has_flusher)
        (void)pthread_join(s->flusher, NULL);
    pthread_mutex_lock(&s->mu);
    if (s->fd >= 0 && (s->broken || s->written > s->synced))
        exec_spool_lead_sync(s); /* the done records nobody waited for */
    while (s->oldest != NULL)
        exec_spool_entry_free(s, s->oldest);
    pthread_mutex_unlock(&s->mu);
    if (s->fd >= 0)
        (void)close(s->fd);
    if (s->dirfd >= 0)
        (void)close(s->dirfd); /* releases the lock */
    pthread_cond_destroy(&s->wake);
    pthread_cond_destroy(&s->passed);
    pthread_cond_destroy(&s->synced_cv);
    pthread_cond_destroy(&s->flush_cv);
    pthread_mutex_destroy(&s->mu);
    free(s->dir);
    free(s);
}
