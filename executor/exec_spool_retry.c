/*
 * exec_spool_retry.c - delivering spooled outcomes: one attempt, the
 * queue's backoff, the retry thread, and the log lines (see the DESIGN
 * block of exec_spool.c).
 */
#include "exec_spool_int.h"

#include <sodium.h>
#include <string.h>
#include <time.h>

#include "ig_log.h"

/* ---- logging ---- */

/* ig_log's line: {"time","level","event","intent_id","attempts","error"};
   the error text kept to printable ASCII. */
static void
log_stderr(const char *event, const char *id, unsigned attempts,
           const char *error)
{
    char clean[IG_ERR_MSGMAX];
    size_t i;

    for (i = 0; error != NULL && error[i] != '\0' && i + 1 < sizeof(clean); i++)
        clean[i] = error[i] >= 0x20 && error[i] < 0x7f ? error[i] : '?';
    clean[i] = '\0';
    ig_log(strcmp(event, "outcome.delivered") == 0 ? "info" : "warn", event,
           json_pack("{s:s?, s:I, s:s?}", "intent_id", id, "attempts",
                     (json_int_t)attempts, "error",
                     error != NULL ? clean : NULL));
}

void
exec_spool_log(const struct exec_spool *s, const char *event, const char *id,
               unsigned attempts, const char *error)
{
    if (s->o.log != NULL)
        s->o.log(s->o.ctx, event, id, attempts, error);
    else
        log_stderr(event, id, attempts, error);
}

/* ---- delivery ---- */

static double
backoff_ms(const struct exec_spool *s, unsigned n)
{
    double d = (double)s->o.retry_initial_ms;
    double max = (double)s->o.retry_max_ms;

    while (n-- > 1 && d < max)
        d *= 2;
    if (d > max)
        d = max;
    return d / 2 + (double)randombytes_uniform((uint32_t)(d / 2) + 1);
}

/* Wake the retry thread for a new pass (lock held). */
uint64_t
exec_spool_kick_locked(struct exec_spool *s)
{
    pthread_cond_signal(&s->wake);
    return ++s->pass_req;
}

/*
 * Record the end of an attempt on busy entry e (lock held); *event gets
 * what to log. A transient failure starts the queue's backoff (or
 * restarts one that ran out), and lengthens it when the retry thread made
 * the attempt; any answer of the PDP (a success, a refusal) ends it.
 */
static void
attempt_done(struct exec_spool *s, struct spool_entry *e, enum ig_status st,
             int retry, const char **event)
{
    char id[IG_INTENT_ID_MAX + 1];
    double now = s->o.now_ms(s->o.ctx);

    e->busy = 0;
    *event = NULL;
    if (st == IG_ERR_IO) {
        if (retry || s->failures == 0 || s->retry_at <= now) {
            s->failures += retry || s->failures == 0 ? 1u : 0u;
            s->retry_at = now + backoff_ms(s, s->failures);
        }
        if (!retry)
            (void)exec_spool_kick_locked(s); /* it recomputes its deadline */
        *event = "outcome.pending";
        return;
    }
    if (s->failures > 0) { /* the PDP answers again: drain the backlog */
        s->failures = 0;
        (void)exec_spool_kick_locked(s);
    }
    if (st == IG_OK) {
        s->st.delivered_total++;
        *event = e->attempts > 1 || retry ? "outcome.delivered" : NULL;
    } else {
        s->st.undeliverable_total++;
        *event = "outcome.undeliverable";
    }
    /* Out of the set first: a rewrite the append makes must not keep it. */
    memcpy(id, e->id, sizeof(id));
    exec_spool_entry_free(s, e);
    exec_spool_append_nowait(s, "done", id,
                             st == IG_OK ? "delivered" : "undeliverable");
}

/* Send busy entry e once (lock held; dropped while sending and logging).
   detail: the caller's, or NULL to read it from e's line. 1: delivered. */
int
exec_spool_deliver(struct exec_spool *s, struct spool_entry *e,
                   const json_t *detail, int retry)
{
    char id[IG_INTENT_ID_MAX + 1], outcome[IG_OUTCOME_NAME_MAX + 1];
    const char *event;
    struct ig_err err;
    json_t *d = NULL;
    enum ig_status st;
    unsigned attempts = ++e->attempts;

    memcpy(id, e->id, sizeof(id));
    memcpy(outcome, e->outcome, sizeof(outcome));
    if (retry)
        s->st.retries_total++;
    pthread_mutex_unlock(&s->mu);
    ig_err_clear(&err);
    if (detail == NULL)
        detail = d = exec_spool_line_detail(e->line, e->len);
    st = detail != NULL ? s->o.send(s->o.ctx, id, outcome, detail, &err)
                        : ig_err_set(&err, IG_ERR_NOMEM, "out of memory");
    json_decref(d);
    pthread_mutex_lock(&s->mu);
    attempt_done(s, e, st, retry, &event);
    if (event != NULL) {
        pthread_mutex_unlock(&s->mu);
        exec_spool_log(s, event, id, attempts, st == IG_OK ? NULL : err.msg);
        pthread_mutex_lock(&s->mu);
    }
    return st == IG_OK;
}

/* The oldest pending entry nobody is sending, younger than age. */
static struct spool_entry *
next_due(const struct exec_spool *s, uint64_t age)
{
    struct spool_entry *e;

    for (e = s->oldest; e != NULL; e = e->newer)
        if (e->age > age && e->outcome[0] != '\0' && !e->busy)
            return e;
    return NULL;
}

/* One pass (lock held): send what is due, oldest first. */
static void
retry_pass(struct exec_spool *s)
{
    struct spool_entry *e;
    uint64_t age = 0;

    while (!s->stopping &&
           (s->failures == 0 || s->o.now_ms(s->o.ctx) >= s->retry_at) &&
           (e = next_due(s, age)) != NULL) {
        age = e->age;
        e->busy = 1;
        if (!exec_spool_deliver(s, e, NULL, 1) && s->failures > 0)
            return;
    }
}

/* Sleep (lock held) until kicked, or until the backoff ends. */
static void
retry_wait(struct exec_spool *s)
{
    struct timespec ts;
    double ms;

    if (s->failures == 0 || next_due(s, 0) == NULL) {
        pthread_cond_wait(&s->wake, &s->mu);
        return;
    }
    ms = s->retry_at - s->o.now_ms(s->o.ctx);
    if (ms <= 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ms / 1e3);
    ts.tv_nsec += (long)((ms - (double)(long)(ms / 1e3) * 1e3) * 1e6);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    (void)pthread_cond_timedwait(&s->wake, &s->mu, &ts);
}

void *
exec_spool_retry_main(void *p)
{
    struct exec_spool *s = p;
    uint64_t req;

    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        req = s->pass_req;
        retry_pass(s);
        s->pass_done = req;
        pthread_cond_broadcast(&s->passed);
        if (!s->stopping && s->pass_req == req)
            retry_wait(s);
    }
    pthread_cond_broadcast(&s->passed);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}
