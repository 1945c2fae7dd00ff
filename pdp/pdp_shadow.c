/*
 * pdp_shadow.c - the shadow bundle: shadow_policy_dir evaluated after each
 * live decision by a thread of its own, compared, never deciding.
 *
 * DESIGN
 * A live decision, once committed, is handed over by pdp_shadow_submit
 * (pdp_intake.c at submission, pdp_approval.c at quorum): a copy of the
 * recorded verdict and reasons and a reference to the intent go into a
 * ring of IG_SHADOW_QUEUE_MAX slots under a mutex held for that copy
 * only. A full ring drops the job (counted): the live path never waits
 * for the shadow. One thread, at nice +10 so that the HTTP workers win the
 * CPU, and woken by the clock every few milliseconds rather than by each
 * decision (or when the queue grows long), pops a job, evaluates it with its
 * own pol_engine over the shadow bundle and its own ig_counter at the job's
 * time (count() in a shadow never touches the store's quotas), and compares the
 * verdicts. A disagreement is tallied (pdp_shadow_tally.c) and its
 * policy.shadow_disagreed event queued; the events are written in one
 * store write per batch, when IG_SHADOW_EVENTS_BATCH are waiting or the
 * ring is empty. Nothing computed here reaches a reply, a grant or a live
 * counter: the only ways out are the tally and the audit log.
 *
 * A reload (SIGHUP) loads and tests the directory on a thread of its own
 * (pdp_shadow_load.c: a shadow's test run, however long, holds neither
 * the signal thread's live reload nor the stop); the shadow thread takes
 * the result when it is ready, swaps the bundle pointer and rebuilds its
 * engine at its next job. A refused bundle keeps the old one.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid): setpriority on this thread */
#include "pdp_shadow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ig_counter.h"
#include "ig_time.h"
#include "pdp_decision.h"
#include "pdp_int.h"

/* An intent's reference is shared with the shadow thread (read only): its
   count must change atomically. */
#if !JSON_HAVE_ATOMIC_BUILTINS && !JSON_HAVE_SYNC_BUILTINS
#error "jansson without atomic reference counts: a shadow cannot share intents"
#endif

#define SHADOW_NICE 10
/* The shadow thread is not woken per decision (a wake-up right after a
   commit would compete with the reply for the CPU): it looks at the queue
   every SHADOW_POLL_MS, or at once when SHADOW_WAKE_AT jobs wait. */
#define SHADOW_POLL_MS 10
#define SHADOW_WAKE_AT 256

struct shadow_job {
    json_t *intent; /* a reference; read only */
    char intent_id[IG_UUID_STRLEN + 1];
    char action[IG_ACTION_MAX + 1];
    enum pol_verdict live; /* the policies' verdict and reasons */
    size_t nreasons;
    char reasons[POL_MAX_REASONS][POL_REASON_MAX];
    char live_revision[IG_HASH_STRLEN + 1];
    int64_t at;
};

struct pdp_shadow {
    struct pdp_server *srv;
    pthread_mutex_t mu; /* guards ring, head, len, stopping, bundle, reload,
                           reload_again */
    pthread_cond_t cv;
    struct shadow_job *ring;
    size_t head, len;
    int stopping;
    struct pol_bundle *bundle;
    struct pdp_shadow_load *reload; /* a reload under way, or NULL */
    int reload_again; /* a SIGHUP came during it: load once more after */
    pthread_t thread;
    int started;
    struct pdp_shadow_tally tally;
    /* The shadow thread's alone. */
    struct pol_engine *engine;
    struct pol_trace *trace; /* of the job being evaluated, reused */
    struct ig_counter *counter;
    int64_t count_now;
    char *events[IG_SHADOW_EVENTS_BATCH];
    size_t nevents;
};

/* count() in the shadow: its own counter at the job's time. */
static int64_t
count_hit(void *ctx, const char *key, int64_t window_seconds)
{
    struct pdp_shadow *sh = ctx;

    return ig_counter_hit(sh->counter, key, window_seconds, sh->count_now);
}

/* ---- events ---- */

static void
flush_events(struct pdp_shadow *sh)
{
    size_t i;

    if (sh->nevents == 0)
        return;
    if (store_put_events(sh->srv->store, (const char *const *)sh->events,
                         sh->nevents) != IG_OK)
        pdp_log("error", "audit.write_failed",
                json_pack("{s:s, s:I}", "type", "policy.shadow_disagreed",
                          "events", (json_int_t)sh->nevents));
    for (i = 0; i < sh->nevents; i++)
        free(sh->events[i]);
    sh->nevents = 0;
}

static void
queue_event(struct pdp_shadow *sh, json_t *ev)
{
    char *text = ev != NULL ? pdp_json_text(ev) : NULL;

    json_decref(ev);
    if (text == NULL) {
        pdp_log("error", "audit.write_failed",
                json_pack("{s:s}", "type", "policy.shadow_disagreed"));
        return;
    }
    sh->events[sh->nevents++] = text;
    if (sh->nevents == IG_SHADOW_EVENTS_BATCH)
        flush_events(sh);
}

/* policy.shadow_disagreed for job, whose shadow decision is d, explained
   by trace (NULL: the engine could not be built, an empty trace). */
static json_t *
disagreed_event(const struct shadow_job *job, enum pol_verdict live,
                const struct pol_decision *d, const struct pol_trace *trace,
                const char *shadow_revision)
{
    char now[IG_TIME_STRLEN + 1];
    json_t *lr, *sr, *tr;
    size_t i;

    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    lr = json_array();
    for (i = 0; lr != NULL && i < job->nreasons; i++)
        lr = pdp_json_push(lr, job->reasons[i]);
    sr = pdp_decision_reasons(d);
    tr = trace != NULL ? pol_trace_json(trace) : json_array();
    /* "o" steals lr, sr and tr; a NULL one fails the pack. */
    return json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:o}, s:{s:s, s:o, s:o}, "
                     "s:s, s:s}",
                     "type", "policy.shadow_disagreed", "time", now,
                     "intent_id", job->intent_id, "action", job->action, "live",
                     "decision", pol_verdict_name(live), "reasons", lr,
                     "shadow", "decision", pol_verdict_name(d->verdict),
                     "reasons", sr, "trace", tr, "live_revision",
                     job->live_revision, "shadow_revision", shadow_revision);
}

/* A reload's audit event and log line (fields stolen). */
static void
reload_event(struct pdp_server *s, const char *type, const char *level,
             json_t *fields)
{
    char now[IG_TIME_STRLEN + 1];
    json_t *ev;

    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    ev = json_pack("{s:s, s:s}", "type", type, "time", now);
    if (ev != NULL && (fields == NULL || json_object_update(ev, fields) != 0)) {
        json_decref(ev);
        ev = NULL;
    }
    pdp_audit_append(s, ev);
    pdp_log(level, type, fields);
}

/* The refusal of a reload: event, log line, metric. */
static void
reload_refused(struct pdp_server *s, const char *kept, const char *why)
{
    atomic_fetch_add(&s->shadow->tally.reloads_refused, 1);
    reload_event(s, "policy.shadow_reload_refused", "error",
                 json_pack("{s:s, s:s, s:s}", "shadow_policy_dir",
                           s->cfg->shadow_policy_dir, "kept_revision", kept,
                           "reason", why));
}

/* The log line of a reload's start (its tests run on their own thread). */
static void
reload_started(struct pdp_server *s, int queued)
{
    pdp_log("info", "policy.shadow_reload_started",
            json_pack("{s:s, s:b}", "shadow_policy_dir",
                      s->cfg->shadow_policy_dir, "queued", queued));
}

/* ---- the shadow thread ---- */

/* An engine for b, rebuilt when a reload changed it. NULL on failure. */
static struct pol_engine *
engine_for(struct pdp_shadow *sh, struct pol_bundle *b)
{
    struct ig_err err;

    if (sh->engine != NULL && pol_engine_bundle(sh->engine) == b)
        return sh->engine;
    pol_engine_free(sh->engine);
    sh->engine = NULL;
    ig_err_clear(&err);
    if (pol_engine_new(b, NULL, count_hit, sh, &sh->engine, &err) != IG_OK)
        pdp_log("error", "policy.shadow_engine_failed",
                json_pack("{s:s}", "error", err.msg));
    return sh->engine;
}

static void
evaluate(struct pdp_shadow *sh, struct shadow_job *job, struct pol_bundle *b)
{
    struct pol_engine *e = engine_for(sh, b);
    struct pol_decision d;
    enum pol_verdict live = job->live;

    memset(&d, 0, sizeof(d)); /* BLOCK */
    if (e != NULL) {
        sh->count_now = job->at;
        pol_engine_eval_traced(e, job->intent, &d, sh->trace);
    } else {
        d.nreasons = 1;
        (void)snprintf(d.reasons[0], POL_REASON_MAX, "POLICY_ERROR");
    }
    if (d.verdict == POL_BLOCK && d.nreasons > 0 &&
        (strcmp(d.reasons[0], "POLICY_ERROR") == 0 ||
         strcmp(d.reasons[0], "POLICY_LIMIT") == 0))
        atomic_fetch_add(&sh->tally.errors, 1);
    if (pdp_shadow_tally_add(&sh->tally, job->intent_id, job->action, live,
                             d.verdict, job->at))
        queue_event(sh,
                    disagreed_event(job, live, &d, e != NULL ? sh->trace : NULL,
                                    pol_bundle_revision(b)));
}

/* Take the oldest job (under mu) into *job. */
static void
pop(struct pdp_shadow *sh, struct shadow_job *job)
{
    *job = sh->ring[sh->head];
    sh->ring[sh->head].intent = NULL;
    sh->head = (sh->head + 1) % IG_SHADOW_QUEUE_MAX;
    sh->len--;
}

/* Wait (under mu) for a signal or SHADOW_POLL_MS. */
static void
idle_wait(struct pdp_shadow *sh)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        pthread_cond_wait(&sh->cv, &sh->mu); /* submit wakes it at the mark */
        return;
    }
    ts.tv_nsec += SHADOW_POLL_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    (void)pthread_cond_timedwait(&sh->cv, &sh->mu, &ts);
}

/* Under mu: when the reload under way has finished, take its bundle (or
   its refusal) and say so; 1 then (mu was released meanwhile), else 0. */
static int
reload_taken(struct pdp_shadow *sh)
{
    struct pdp_server *s = sh->srv;
    struct pol_bundle *b = NULL, *old;
    char why[sizeof(((struct ig_err *)0)->msg)];

    if (!pdp_shadow_load_poll(sh->reload, &b, why, sizeof(why)))
        return 0;
    pdp_shadow_load_release(sh->reload);
    sh->reload = NULL;
    old = sh->bundle;
    if (b != NULL)
        sh->bundle = b;
    pthread_mutex_unlock(&sh->mu);
    if (b == NULL) {
        reload_refused(s, pol_bundle_revision(old), why);
    } else {
        atomic_fetch_add(&sh->tally.reloads, 1);
        reload_event(s, "policy.shadow_reloaded", "info",
                     json_pack("{s:s, s:s, s:s}", "shadow_policy_dir",
                               s->cfg->shadow_policy_dir, "old_revision",
                               pol_bundle_revision(old), "revision",
                               pol_bundle_revision(b)));
        pol_bundle_unref(old);
    }
    pthread_mutex_lock(&sh->mu);
    if (sh->reload_again && !sh->stopping) {
        /* The files may have changed since this load read them: the
           SIGHUPs that came meanwhile are one more reload, from now. */
        sh->reload_again = 0;
        sh->reload = pdp_shadow_load_start(s->cfg->shadow_policy_dir,
                                           s->cfg->policy_settings);
        if (sh->reload != NULL) {
            pthread_mutex_unlock(&sh->mu);
            reload_started(s, 1);
            pthread_mutex_lock(&sh->mu);
        } else {
            char kept[IG_HASH_STRLEN + 1];

            (void)snprintf(kept, sizeof(kept), "%s",
                           pol_bundle_revision(sh->bundle));
            pthread_mutex_unlock(&sh->mu);
            reload_refused(s, kept,
                           "cannot start the shadow reload (out of "
                           "memory or threads)");
            pthread_mutex_lock(&sh->mu);
        }
    }
    return 1;
}

static void *
shadow_main(void *arg)
{
    struct pdp_shadow *sh = arg;
    struct shadow_job job;
    struct pol_bundle *b;

    /* Linux: a thread's nice value is its own (errors leave it at 0). */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SHADOW_NICE);
    (void)pthread_setname_np(pthread_self(), "ig-shadow");
    pthread_mutex_lock(&sh->mu);
    while (!sh->stopping) {
        if (sh->reload != NULL && reload_taken(sh))
            continue;
        if (sh->len == 0) {
            if (sh->nevents > 0) { /* idle: write what waits */
                pthread_mutex_unlock(&sh->mu);
                flush_events(sh);
                pthread_mutex_lock(&sh->mu);
            } else {
                idle_wait(sh);
            }
            continue;
        }
        pop(sh, &job);
        b = sh->bundle;
        pol_bundle_ref(b);
        pthread_mutex_unlock(&sh->mu);
        evaluate(sh, &job, b);
        pol_bundle_unref(b);
        json_decref(job.intent);
        pthread_mutex_lock(&sh->mu);
    }
    pthread_mutex_unlock(&sh->mu);
    flush_events(sh);
    pol_engine_free(sh->engine);
    sh->engine = NULL;
    return NULL;
}

/* ---- the server's side ---- */

static void
shadow_free(struct pdp_shadow *sh)
{
    if (sh == NULL)
        return;
    for (; sh->ring != NULL && sh->len > 0; sh->len--) {
        json_decref(sh->ring[sh->head].intent);
        sh->head = (sh->head + 1) % IG_SHADOW_QUEUE_MAX;
    }
    free(sh->ring);
    ig_counter_free(sh->counter);
    pol_trace_free(sh->trace);
    pol_bundle_unref(sh->bundle);
    pdp_shadow_tally_release(&sh->tally);
    (void)pthread_cond_destroy(&sh->cv);
    (void)pthread_mutex_destroy(&sh->mu);
    free(sh);
}

static int
cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    int rc;

    if (pthread_condattr_init(&ca) != 0)
        return -1;
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(cv, &ca);
    (void)pthread_condattr_destroy(&ca);
    return rc;
}

enum ig_status
pdp_shadow_start(struct pdp_server *s, struct ig_err *err)
{
    const struct pdp_config *c = s->cfg;
    struct pdp_shadow *sh;

    if (c->shadow_policy_dir == NULL)
        return IG_OK;
    sh = calloc(1, sizeof(*sh));
    if (sh == NULL || pthread_mutex_init(&sh->mu, NULL) != 0) {
        free(sh);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    sh->srv = s;
    if (cond_init(&sh->cv) != 0 || pdp_shadow_tally_init(&sh->tally) != 0) {
        (void)pthread_mutex_destroy(&sh->mu);
        free(sh);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    s->shadow = sh;
    sh->ring = calloc(IG_SHADOW_QUEUE_MAX, sizeof(*sh->ring));
    sh->counter =
        ig_counter_new(IG_STORE_COUNT_KEYS_MAX, IG_STORE_COUNT_WINDOW_MAX);
    sh->trace = pol_trace_new();
    if (sh->ring == NULL || sh->counter == NULL || sh->trace == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (pdp_policies_load(c->shadow_policy_dir, c->policy_settings, &sh->bundle,
                          err) != IG_OK) {
        /* Say which bundle: the message names its directory too. */
        char why[sizeof(err->msg)];

        (void)snprintf(why, sizeof(why), "%s", err->msg);
        return ig_err_set(err, IG_ERR_INVALID, "shadow_policy_dir: %s", why);
    }
    if (pthread_create(&sh->thread, NULL, shadow_main, sh) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot start the shadow thread");
    sh->started = 1;
    s->shadow_reload = pdp_shadow_reload;
    pdp_log("info", "policy.shadow_started",
            json_pack("{s:s, s:s}", "shadow_policy_dir", c->shadow_policy_dir,
                      "shadow_revision", pol_bundle_revision(sh->bundle)));
    return IG_OK;
}

void
pdp_shadow_stop(struct pdp_server *s)
{
    struct pdp_shadow *sh = s->shadow;
    struct pdp_shadow_load *load;

    if (sh == NULL)
        return;
    s->shadow_reload = NULL;
    pthread_mutex_lock(&sh->mu);
    sh->stopping = 1;
    load = sh->reload; /* a test run still going is not waited for */
    sh->reload = NULL;
    atomic_fetch_add(&sh->tally.dropped, sh->len); /* never evaluated */
    pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    if (sh->started)
        (void)pthread_join(sh->thread, NULL);
    pdp_shadow_load_release(load);
    s->shadow = NULL;
    shadow_free(sh);
}

void
pdp_shadow_submit(struct pdp_server *s, json_t *intent, const char *intent_id,
                  const struct pol_decision *live, const char *live_revision,
                  int64_t at)
{
    struct pdp_shadow *sh = s->shadow;
    const char *action = json_string_value(json_object_get(intent, "action"));
    struct shadow_job *job;

    if (sh == NULL)
        return;
    pthread_mutex_lock(&sh->mu);
    if (sh->stopping || sh->len == IG_SHADOW_QUEUE_MAX || intent == NULL) {
        pthread_mutex_unlock(&sh->mu);
        atomic_fetch_add(&sh->tally.dropped, 1);
        return;
    }
    job = &sh->ring[(sh->head + sh->len) % IG_SHADOW_QUEUE_MAX];
    job->intent = json_incref(intent);
    (void)snprintf(job->intent_id, sizeof(job->intent_id), "%s", intent_id);
    (void)snprintf(job->action, sizeof(job->action), "%s",
                   action != NULL ? action : "");
    job->live = live->verdict;
    job->nreasons =
        live->nreasons < POL_MAX_REASONS ? live->nreasons : POL_MAX_REASONS;
    memcpy(job->reasons, live->reasons, sizeof(job->reasons));
    (void)snprintf(job->live_revision, sizeof(job->live_revision), "%s",
                   live_revision);
    job->at = at;
    if (++sh->len == SHADOW_WAKE_AT)
        pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

void
pdp_shadow_reload(struct pdp_server *s)
{
    struct pdp_shadow *sh = s->shadow;
    char kept[IG_HASH_STRLEN + 1];
    const char *why = NULL;
    int queued = 0;

    if (sh == NULL)
        return;
    pthread_mutex_lock(&sh->mu);
    (void)snprintf(kept, sizeof(kept), "%s", pol_bundle_revision(sh->bundle));
    if (sh->reload != NULL)
        queued = sh->reload_again = 1; /* taken when this one ends */
    else if ((sh->reload = pdp_shadow_load_start(
                  s->cfg->shadow_policy_dir, s->cfg->policy_settings)) == NULL)
        why = "cannot start the shadow reload (out of memory or threads)";
    pthread_mutex_unlock(&sh->mu);
    if (why != NULL)
        reload_refused(s, kept, why);
    else if (!queued)
        reload_started(s, 0);
    else
        pdp_log("info", "policy.shadow_reload_queued",
                json_pack("{s:s, s:s}", "shadow_policy_dir",
                          s->cfg->shadow_policy_dir, "reason",
                          "a shadow reload is still running its tests; the "
                          "directory is loaded again when it ends"));
}

json_t *
pdp_shadow_summary(struct pdp_server *s, int *configured)
{
    struct pdp_shadow *sh = s->shadow;
    char shadow_rev[IG_HASH_STRLEN + 1], live_rev[IG_HASH_STRLEN + 1];
    json_t *v;

    *configured = sh != NULL;
    if (sh == NULL)
        return NULL;
    pthread_mutex_lock(&sh->mu);
    (void)snprintf(shadow_rev, sizeof(shadow_rev), "%s",
                   pol_bundle_revision(sh->bundle));
    pthread_mutex_unlock(&sh->mu);
    pthread_mutex_lock(&s->pol_mu);
    (void)snprintf(live_rev, sizeof(live_rev), "%s",
                   pol_bundle_revision(s->bundle));
    pthread_mutex_unlock(&s->pol_mu);
    v = pdp_shadow_tally_json(&sh->tally);
    if (v != NULL &&
        (json_object_set_new(v, "shadow_revision", json_string(shadow_rev)) !=
             0 ||
         json_object_set_new(v, "live_revision", json_string(live_rev)) != 0)) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

enum ig_status
pdp_shadow_metrics(struct pdp_server *s, struct ig_buf *out)
{
    return s->shadow != NULL ? pdp_shadow_tally_render(&s->shadow->tally, out)
                             : IG_OK;
}
