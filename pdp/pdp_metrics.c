/*
 * pdp_metrics.c - Prometheus text exposition of the PDP's metrics.
 *
 * Histograms use fixed bucket bounds (50 µs to 5 s), cumulative at render
 * time as the format requires. Rejections are counted per error code from
 * a fixed list, so the label set is bounded whatever clients send.
 */
#include "pdp_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const double bounds[PDP_HIST_BUCKETS] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01,    0.025,  0.05,    0.1,    0.25,  1.0,    5.0};

static const char *const reject_codes[PDP_REJECT_CODES] = {
    "UNAUTHENTICATED",
    "FORBIDDEN",
    "NOT_FOUND",
    "METHOD_NOT_ALLOWED",
    "UNSUPPORTED_MEDIA_TYPE",
    "BODY_TOO_LARGE",
    "INVALID_JSON",
    "JSON_LIMIT_EXCEEDED",
    "UNKNOWN_FIELD",
    "MISSING_FIELD",
    "INVALID_FIELD",
    "GRANT_INVALID",
    "GRANT_EXPIRED",
    "GRANT_ALREADY_REDEEMED",
    "OUTCOME_ALREADY_RECORDED",
    "NOT_REDEEMED",
    "STORE_UNAVAILABLE",
    "INTERNAL",
    "SHUTTING_DOWN",
    "INVALID_QUERY",
    "OVERLOADED",
    "OTHER"};

void
pdp_hist_observe(struct pdp_hist *h, double seconds)
{
    size_t i = 0;

    while (i < PDP_HIST_BUCKETS && seconds > bounds[i])
        i++;
    atomic_fetch_add(&h->bucket[i], 1);
    atomic_fetch_add(&h->count, 1);
    atomic_fetch_add(&h->sum_ns, (uint_fast64_t)(seconds * 1e9));
}

void
pdp_metrics_reject(struct pdp_metrics *m, const char *code)
{
    size_t i;

    for (i = 0; i < PDP_REJECT_CODES && reject_codes[i] != NULL; i++)
        if (strcmp(code, reject_codes[i]) == 0)
            break;
    if (i >= PDP_REJECT_CODES || reject_codes[i] == NULL) {
        for (i = 0; reject_codes[i] != NULL; i++)
            if (strcmp(reject_codes[i], "OTHER") == 0)
                break;
    }
    atomic_fetch_add(&m->rejected[i], 1);
}

enum ig_status
pdp_metrics_addf(struct ig_buf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(line))
        return IG_ERR_LIMIT;
    return ig_buf_add(b, line, (size_t)n);
}

static enum ig_status
render_hist(struct ig_buf *b, const char *name, const char *help,
            struct pdp_hist *h)
{
    uint_fast64_t cum = 0;
    enum ig_status st;
    size_t i;

    st = pdp_metrics_addf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help,
                          name);
    for (i = 0; st == IG_OK && i < PDP_HIST_BUCKETS; i++) {
        cum += atomic_load(&h->bucket[i]);
        st = pdp_metrics_addf(b, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i],
                              (unsigned long long)cum);
    }
    cum += atomic_load(&h->bucket[PDP_HIST_BUCKETS]);
    if (st == IG_OK)
        st = pdp_metrics_addf(
            b, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.9f\n%s_count %llu\n",
            name, (unsigned long long)cum, name,
            (double)atomic_load(&h->sum_ns) / 1e9, name,
            (unsigned long long)atomic_load(&h->count));
    return st;
}

enum ig_status
pdp_metrics_rows(struct ig_buf *b, const char *type,
                 const struct pdp_metric *rows, size_t n)
{
    enum ig_status st = IG_OK;
    size_t i;

    for (i = 0; st == IG_OK && i < n; i++)
        st = pdp_metrics_addf(b, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n",
                              rows[i].name, rows[i].help, rows[i].name, type,
                              rows[i].name,
                              (unsigned long long)atomic_load(rows[i].v));
    return st;
}

enum ig_status
pdp_metrics_family(struct ig_buf *b, const char *name, const char *help,
                   const char *label, const char *const *labels,
                   atomic_uint_fast64_t *v, size_t n)
{
    enum ig_status st;
    size_t i;

    st = pdp_metrics_addf(b, "# HELP %s %s\n# TYPE %s counter\n", name, help,
                          name);
    for (i = 0; st == IG_OK && i < n && labels[i] != NULL; i++)
        st = pdp_metrics_addf(b, "%s{%s=\"%s\"} %llu\n", name, label, labels[i],
                              (unsigned long long)atomic_load(&v[i]));
    return st;
}

enum ig_status
pdp_metrics_render(struct pdp_metrics *m, struct ig_buf *out)
{
    static const char *const verdicts[3] = {"BLOCK", "ALLOW", "ESCALATE"};
    const struct pdp_metric counters[] = {
        {"intentgate_policy_errors_total",
         "Evaluations that failed with POLICY_ERROR.", &m->policy_errors},
        {"intentgate_policy_limit_hits_total",
         "Evaluations stopped by a sandbox limit.", &m->policy_limits},
        {"intentgate_policy_reloads_total",
         "Policy bundles swapped in by a reload.", &m->reloads_ok},
        {"intentgate_policy_reloads_refused_total",
         "Reloads refused (load or tests failed).", &m->reloads_refused},
        {"intentgate_grants_redeemed_total", "Grants consumed by an executor.",
         &m->redeemed},
        {"intentgate_idempotent_replays_total",
         "Intents answered from an earlier submission.",
         &m->idempotent_replays},
        {"intentgate_store_commit_writes_total",
         "Writes made durable by group commits.", &m->commit_writes},
        {"intentgate_long_polls_capped_total",
         "Long polls answered at once: too many parked.", &m->waits_capped},
        {"intentgate_connections_cut_total",
         "Connections cut: request not arrived in time.", &m->connections_cut},
    };
    const struct pdp_metric gauges[] = {
        {"intentgate_connections_open", "Open HTTP connections.",
         &m->connections},
        {"intentgate_long_polls_parked", "Long polls waiting for a change.",
         &m->waiters},
        {"intentgate_requests_in_flight",
         "Requests routed and not yet answered (this one included).",
         &m->in_flight},
        {"intentgate_store_queue_depth",
         "Writes queued for the store's writer.", &m->queued},
    };
    enum ig_status st;

    st = pdp_metrics_family(out, "intentgate_decisions_total",
                            "Decisions made, by result.", "decision", verdicts,
                            m->decisions, 3);
    if (st == IG_OK)
        st = pdp_metrics_family(out, "intentgate_requests_rejected_total",
                                "Requests refused with an error, by code.",
                                "code", reject_codes, m->rejected,
                                PDP_REJECT_CODES);
    if (st == IG_OK)
        st = pdp_metrics_rows(out, "counter", counters,
                              sizeof(counters) / sizeof(counters[0]));
    if (st == IG_OK)
        st = pdp_metrics_rows(out, "gauge", gauges,
                              sizeof(gauges) / sizeof(gauges[0]));
    if (st == IG_OK)
        st = render_hist(out, "intentgate_decision_seconds",
                         "Intent request latency, body read to response.",
                         &m->decision_seconds);
    if (st == IG_OK)
        st = render_hist(out, "intentgate_policy_eval_seconds",
                         "Policy evaluation alone.", &m->policy_seconds);
    if (st == IG_OK)
        st = render_hist(out, "intentgate_store_commit_seconds",
                         "One group commit, begin to durable.",
                         &m->commit_seconds);
    if (st == IG_OK && m->more != NULL)
        st = m->more(m->more_ctx, out);
    return st;
}
