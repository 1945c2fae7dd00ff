/*
 * pdp_policy_rt.c - policies at run time: the current bundle, one
 * long-lived evaluating engine per server thread, and reload.
 *
 * The server holds one reference to the current bundle, swapped under a
 * mutex by a reload. Each thread that evaluates keeps its own pol_engine
 * (a Lua state with the compiled bundle) in thread-specific storage; before
 * evaluating it compares its engine's bundle with the current one and
 * rebuilds only when a reload changed it. So a request never builds a Lua
 * state, and a reload costs each thread one rebuild.
 */
#include "pdp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "ig_limits.h"
#include "pdp_decision.h"

/* Set by count_hit when the store could not count: the evaluation
   running on this thread then failed for the store's sake. */
static _Thread_local int count_failed;

static int64_t
count_hit(void *ctx, const char *key, int64_t window_seconds)
{
    struct pdp_server *s = ctx;
    int64_t n = store_count(s->store, key, window_seconds, ig_time_now());

    if (n < 0)
        count_failed = 1;
    return n;
}

static void
engine_destroy(void *p)
{
    pol_engine_free(p);
}

/* The first FAIL line of a test run's report, without its newline: what
   the refusal to start names, so the log says which case failed. */
static void
first_failure(const char *report, char *out, size_t cap)
{
    const char *p = report != NULL ? strstr(report, "FAIL ") : NULL;
    size_t n;

    out[0] = '\0';
    if (p == NULL || cap == 0)
        return;
    n = strcspn(p, "\n");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

enum ig_status
pdp_policies_load(const char *dir, const json_t *settings,
                  struct pol_bundle **out, struct ig_err *err)
{
    struct pol_bundle *b = NULL;
    char *report = NULL, first[IG_POLICY_MESSAGE_MAX];
    size_t report_len = 0;
    FILE *sink;
    int failed;

    if (pol_bundle_load(dir, settings, &b, err) != IG_OK)
        return IG_ERR_INVALID;
    sink = open_memstream(&report, &report_len);
    if (sink == NULL) {
        pol_bundle_unref(b);
        return ig_err_set(err, IG_ERR_NOMEM, "cannot run the policy tests");
    }
    failed = pol_bundle_test(b, sink, err);
    (void)fclose(sink);
    first_failure(report, first, sizeof(first));
    free(report);
    if (failed != 0) {
        if (failed > 0)
            (void)ig_err_set(err, IG_ERR_INVALID,
                             "%d policy test case(s) fail in %s, first: %s "
                             "(run `intentgate policy test %s`)",
                             failed, dir, first, dir);
        pol_bundle_unref(b);
        return IG_ERR_INVALID;
    }
    *out = b;
    return IG_OK;
}

/* Load policy_dir and run its tests; a new bundle only when both pass. */
static enum ig_status
load_tested(struct pdp_server *s, struct pol_bundle **out, struct ig_err *err)
{
    return pdp_policies_load(s->cfg->policy_dir, s->cfg->policy_settings, out,
                             err);
}

enum ig_status
pdp_policies_init(struct pdp_server *s, struct ig_err *err)
{
    if (pthread_mutex_init(&s->pol_mu, NULL) != 0 ||
        pthread_key_create(&s->engine_key, engine_destroy) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot set up policy threads");
    return load_tested(s, &s->bundle, err);
}

void
pdp_policies_release(struct pdp_server *s)
{
    pol_bundle_unref(s->bundle);
    s->bundle = NULL;
}

/* The audit event of a reload: the log line's fields (not stolen), with
   its type and time. */
static void
audit_reload(struct pdp_server *s, const char *type, const char *now,
             const json_t *fields)
{
    json_t *ev = json_pack("{s:s, s:s}", "type", type, "time", now);

    /* An event missing the fields is not written (pdp_audit_append logs
       a NULL one as a failed write). */
    if (ev != NULL && fields != NULL &&
        json_object_update(ev, ig_json_unconst(fields)) != 0) {
        json_decref(ev);
        ev = NULL;
    }
    pdp_audit_append(s, ev);
}

enum ig_status
pdp_server_reload_policies(struct pdp_server *s, struct ig_err *err)
{
    struct pol_bundle *b = NULL, *old;

    char now[IG_TIME_STRLEN + 1];
    json_t *fields;

    /* The shadow bundle's own reload, refused or taken on its own. */
    if (s->shadow_reload != NULL)
        s->shadow_reload(s);
    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    if (load_tested(s, &b, err) != IG_OK) {
        atomic_fetch_add(&s->metrics.reloads_refused, 1);
        fields = json_pack("{s:s, s:s, s:s}", "policy_dir", s->cfg->policy_dir,
                           "kept_revision", pol_bundle_revision(s->bundle),
                           "reason", err != NULL ? err->msg : "unknown");
        audit_reload(s, "policy.reload_refused", now, fields);
        pdp_log("error", "policy.reload_refused", fields);
        return IG_ERR_INVALID;
    }
    pthread_mutex_lock(&s->pol_mu);
    old = s->bundle;
    s->bundle = b;
    pthread_mutex_unlock(&s->pol_mu);
    atomic_fetch_add(&s->metrics.reloads_ok, 1);
    fields = json_pack("{s:s, s:s, s:s}", "policy_dir", s->cfg->policy_dir,
                       "old_revision", pol_bundle_revision(old), "revision",
                       pol_bundle_revision(b));
    audit_reload(s, "policy.reloaded", now, fields);
    pdp_log("info", "policy.reloaded", fields);
    pol_bundle_unref(old);
    return IG_OK;
}

/* This thread's engine for the current bundle, built when needed. */
static struct pol_engine *
thread_engine(struct pdp_server *s, struct ig_err *err)
{
    struct pol_engine *e = pthread_getspecific(s->engine_key);
    struct pol_bundle *cur;

    pthread_mutex_lock(&s->pol_mu);
    cur = s->bundle;
    if (e != NULL && pol_engine_bundle(e) == cur) {
        pthread_mutex_unlock(&s->pol_mu);
        return e;
    }
    pol_bundle_ref(cur);
    pthread_mutex_unlock(&s->pol_mu);
    pol_engine_free(e);
    (void)pthread_setspecific(s->engine_key, NULL);
    e = NULL;
    if (pol_engine_new(cur, NULL, count_hit, s, &e, err) == IG_OK)
        (void)pthread_setspecific(s->engine_key, e);
    pol_bundle_unref(cur);
    return e;
}

/* This thread's trace: made once, reused by every evaluation (the engine
   resets it), freed when the thread ends. */
static pthread_key_t trace_key;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static int trace_key_ok;

static void
trace_destroy(void *p)
{
    pol_trace_free(p);
}

static void
trace_key_init(void)
{
    trace_key_ok = pthread_key_create(&trace_key, trace_destroy) == 0;
}

/* NULL on out of memory. */
static struct pol_trace *
thread_trace(void)
{
    struct pol_trace *t;

    if (pthread_once(&trace_once, trace_key_init) != 0 || !trace_key_ok)
        return NULL;
    t = pthread_getspecific(trace_key);
    if (t == NULL) {
        t = pol_trace_new();
        if (t != NULL && pthread_setspecific(trace_key, t) != 0) {
            pol_trace_free(t);
            t = NULL;
        }
    }
    return t;
}

/* t as canonical JSON text (malloc'd); NULL on out of memory. */
static char *
trace_text(const struct pol_trace *t)
{
    struct ig_buf b;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (pol_trace_canon(t, &b) != IG_OK) {
        ig_buf_release(&b);
        return NULL;
    }
    return ig_buf_take(&b, NULL);
}

int
pdp_policies_eval(struct pdp_server *s, const json_t *intent,
                  struct pol_decision *out, char revision[IG_HASH_STRLEN + 1])
{
    return pdp_policies_eval_traced(s, intent, out, revision, NULL);
}

int
pdp_policies_eval_traced(struct pdp_server *s, const json_t *intent,
                         struct pol_decision *out,
                         char revision[IG_HASH_STRLEN + 1], char **trace)
{
    struct ig_err err;
    struct pol_engine *e;
    struct pol_trace *t = NULL;
    double t0 = pdp_mono_seconds();
    const char *rev;

    memset(out, 0, sizeof(*out)); /* BLOCK */
    if (trace != NULL)
        *trace = NULL;
    ig_err_clear(&err);
    e = thread_engine(s, &err);
    if (e != NULL && trace != NULL && (t = thread_trace()) == NULL) {
        e = NULL;
        (void)ig_err_set(&err, IG_ERR_NOMEM, "out of memory for the trace");
    }
    if (e == NULL) {
        out->nreasons = 1;
        (void)snprintf(out->reasons[0], POL_REASON_MAX, "POLICY_ERROR");
        (void)snprintf(out->message, POL_MESSAGE_MAX,
                       "policy engine unavailable: %.200s", err.msg);
        atomic_fetch_add(&s->metrics.policy_errors, 1);
        pthread_mutex_lock(&s->pol_mu);
        rev = pol_bundle_revision(s->bundle);
        (void)snprintf(revision, IG_HASH_STRLEN + 1, "%s", rev);
        pthread_mutex_unlock(&s->pol_mu);
        return 0;
    }
    count_failed = 0;
    pol_engine_eval_traced(e, intent, out, t);
    if (count_failed) {
        count_failed = 0;
        return -1;
    }
    pdp_hist_observe(&s->metrics.policy_seconds, pdp_mono_seconds() - t0);
    (void)snprintf(revision, IG_HASH_STRLEN + 1, "%s",
                   pol_bundle_revision(pol_engine_bundle(e)));
    if (t != NULL && (*trace = trace_text(t)) == NULL)
        pdp_decision_block(out, "POLICY_ERROR",
                           "out of memory recording the policy trace");
    if (out->verdict == POL_BLOCK && out->nreasons > 0) {
        if (strcmp(out->reasons[0], "POLICY_ERROR") == 0)
            atomic_fetch_add(&s->metrics.policy_errors, 1);
        else if (strcmp(out->reasons[0], "POLICY_LIMIT") == 0)
            atomic_fetch_add(&s->metrics.policy_limits, 1);
    }
    return 0;
}
