/*
 * store_write.c - the store's write operations, above the writer thread
 * (store_sqlite.c): each makes a job - the function that runs it on the
 * writer (store_ops.c, store_audit.c), its record, the intent whose
 * waiters to wake, the leaf hashes of its audit events, computed here on
 * the calling thread - and submits it, waiting for its commit or (the
 * _async variants) not. Quota counts (store_counter.c) are answered from
 * memory and their hits persisted by an async job, one at a time.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"

/* What a job is: its function and record, the intent it concerns, where
   an idempotent replay goes, the audit events it appends. */
struct job_spec {
    store_job_fn fn;
    const void *rec;
    const char *notify;
    char **replay;
    const char *const *ev;
    size_t nev;
};

static enum ig_status
fill_job(struct store_job *j, const struct job_spec *js)
{
    size_t n = strlen(js->notify);

    j->run = js->fn;
    j->rec = js->rec;
    j->replay = js->replay;
    if (n >= sizeof(j->notify))
        return IG_ERR_INVALID;
    memcpy(j->notify, js->notify, n + 1);
    store_job_hash_events(j, js->ev, js->nev);
    return IG_OK;
}

static enum ig_status
submit_sync(struct store_sq *s, const struct job_spec *js)
{
    struct store_job j;
    enum ig_status st = IG_ERR_INVALID;

    memset(&j, 0, sizeof(j));
    if (fill_job(&j, js) == IG_OK)
        st = store_submit(s, &j);
    free(j.leaves);
    return st;
}

enum ig_status
store_run_events(struct store_sq *s, store_job_fn fn, const void *rec,
                 const char *notify, const char *const *ev, size_t n)
{
    struct job_spec js = {fn, rec, notify != NULL ? notify : "", NULL, ev, n};

    return submit_sync(s, &js);
}

enum ig_status
store_run(struct store_sq *s, store_job_fn fn, const void *rec,
          const char *notify)
{
    return store_run_events(s, fn, rec, notify, NULL, 0);
}

static enum ig_status
submit_async(struct store_sq *s, const struct job_spec *js, store_done_fn done,
             void *ctx)
{
    struct store_job *j = calloc(1, sizeof(*j));

    if (j == NULL)
        return IG_ERR_NOMEM;
    if (fill_job(j, js) != IG_OK) {
        free(j->leaves);
        free(j);
        return IG_ERR_INVALID;
    }
    j->async = 1;
    j->done_fn = done;
    j->done_ctx = ctx;
    if (store_submit(s, j) != IG_OK) {
        free(j->leaves);
        free(j);
        return IG_ERR_IO;
    }
    return IG_OK;
}

enum ig_status
store_sq_put_intent(struct store_sq *s, const struct store_intent_rec *r,
                    char **replay)
{
    struct job_spec js = {
        store_job_put_intent, r, r->intent_id, replay, r->events, r->nevents};

    *replay = NULL;
    return submit_sync(s, &js);
}

enum ig_status
store_sq_put_intent_async(struct store_sq *s, const struct store_intent_rec *r,
                          char **replay, store_done_fn done, void *ctx)
{
    struct job_spec js = {
        store_job_put_intent, r, r->intent_id, replay, r->events, r->nevents};

    *replay = NULL;
    return submit_async(s, &js, done, ctx);
}

enum ig_status
store_sq_redeem(struct store_sq *s, const struct store_redeem_rec *r)
{
    struct job_spec js = {store_job_redeem, r,         r->intent_id, NULL,
                          r->events,        r->nevents};

    return submit_sync(s, &js);
}

enum ig_status
store_sq_redeem_async(struct store_sq *s, const struct store_redeem_rec *r,
                      store_done_fn done, void *ctx)
{
    struct job_spec js = {store_job_redeem, r,         r->intent_id, NULL,
                          r->events,        r->nevents};

    return submit_async(s, &js, done, ctx);
}

enum ig_status
store_sq_put_outcome(struct store_sq *s, const struct store_outcome_rec *r)
{
    struct job_spec js = {
        store_job_put_outcome, r, r->intent_id, NULL, r->events, r->nevents};

    return submit_sync(s, &js);
}

enum ig_status
store_sq_put_outcome_async(struct store_sq *s,
                           const struct store_outcome_rec *r,
                           store_done_fn done, void *ctx)
{
    struct job_spec js = {
        store_job_put_outcome, r, r->intent_id, NULL, r->events, r->nevents};

    return submit_async(s, &js, done, ctx);
}

/* ---- quota counters ---- */

/* Queue the job that writes the pending quota hits (not waited). */
static enum ig_status
queue_flush(struct store_sq *s)
{
    struct store_job *j = calloc(1, sizeof(*j));

    if (j == NULL)
        return IG_ERR_NOMEM;
    j->run = store_job_flush_hits;
    j->async = 1;
    if (store_submit(s, j) != IG_OK) {
        free(j);
        return IG_ERR_IO;
    }
    return IG_OK;
}

int64_t
store_sq_count(struct store_sq *s, const char *key, int64_t window_seconds,
               int64_t now)
{
    int64_t n;
    int flush;

    if (key == NULL || strlen(key) == 0 ||
        strlen(key) > IG_STORE_COUNT_KEY_MAX || window_seconds < 1 ||
        window_seconds > IG_STORE_COUNT_WINDOW_MAX)
        return -1;
    n = store_counter_hit(s, key, window_seconds, now, &flush);
    if (flush && queue_flush(s) != IG_OK) {
        store_counter_queue_failed(s);
        return -1;
    }
    return n;
}

/* ---- the audit log ---- */

struct head_rec {
    uint64_t *size;
    unsigned char *root;
};

static enum ig_status
job_head(struct store_sq *s, struct store_job *j)
{
    const struct head_rec *h = j->rec;

    *h->size = s->audit.tree.size;
    audit_frontier_root(&s->audit.tree, h->root);
    return IG_OK;
}

enum ig_status
store_sq_audit_head(struct store_sq *s, uint64_t *size,
                    unsigned char root[AUDIT_HASH_BYTES])
{
    struct head_rec h;

    h.size = size;
    h.root = root;
    return store_run(s, job_head, &h, NULL);
}

static enum ig_status
job_sign(struct store_sq *s, struct store_job *j)
{
    uint64_t *const *out = j->rec;
    enum ig_status rc = store_job_checkpoint(s, j);

    if (rc == IG_OK)
        **out = (uint64_t)j->at;
    return rc;
}

enum ig_status
store_sq_audit_sign(struct store_sq *s, uint64_t *size)
{
    uint64_t *out = size;

    *size = 0;
    return store_run(s, job_sign, &out, NULL);
}
