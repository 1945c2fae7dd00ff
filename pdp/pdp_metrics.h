/*
 * pdp_metrics.h - the PDP's counters and histograms, rendered in the
 * Prometheus text exposition format on GET /metrics. Updates are lock-free
 * atomics, safe from any thread.
 */
#ifndef PDP_METRICS_H
#define PDP_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"

#define PDP_HIST_BUCKETS 14

struct pdp_hist {
    atomic_uint_fast64_t bucket[PDP_HIST_BUCKETS + 1]; /* last: +Inf */
    atomic_uint_fast64_t count;
    atomic_uint_fast64_t sum_ns;
};

/* Rejection codes counted by /metrics; pdp_metrics_reject() maps a code. */
#define PDP_REJECT_CODES 24

struct pdp_metrics {
    atomic_uint_fast64_t decisions[3]; /* by enum pol_verdict */
    atomic_uint_fast64_t policy_errors, policy_limits;
    atomic_uint_fast64_t reloads_ok, reloads_refused;
    atomic_uint_fast64_t redeemed, idempotent_replays;
    atomic_uint_fast64_t rejected[PDP_REJECT_CODES];
    struct pdp_hist decision_seconds;   /* request in → response queued */
    struct pdp_hist policy_seconds;     /* policy evaluation alone */
    struct pdp_hist commit_seconds;     /* one group commit */
    atomic_uint_fast64_t commit_writes; /* writes covered by commits */
    atomic_uint_fast64_t waits_capped;  /* long polls answered at once */
    /* Gauges, read just before rendering (pdp_route.c serve_metrics). */
    atomic_uint_fast64_t connections, connections_cut, waiters, queued;
    atomic_uint_fast64_t in_flight;
    /* Families rendered after these (the witness client's,
       pdp_witness_metrics), set before the daemon starts. NULL: none. */
    enum ig_status (*more)(void *ctx, struct ig_buf *out);
    void *more_ctx;
};

void pdp_hist_observe(struct pdp_hist *h, double seconds);
void pdp_metrics_reject(struct pdp_metrics *m, const char *code);

/* One line of exposition text (at most 511 bytes) appended to b. */
enum ig_status pdp_metrics_addf(struct ig_buf *b, const char *fmt, ...)
    IG_PRINTF(2, 3);

/* One metric of a table: its name, HELP text and value. */
struct pdp_metric {
    const char *name, *help;
    atomic_uint_fast64_t *v;
};

/* The n metrics of rows, each with its HELP and TYPE lines (type
   "counter" or "gauge"), in order; stops at the first failure. */
enum ig_status pdp_metrics_rows(struct ig_buf *b, const char *type,
                                const struct pdp_metric *rows, size_t n);
/* A counter labelled label="labels[i]" with value v[i], for i < n up to
   the first NULL label, after one HELP and TYPE line for name. */
enum ig_status pdp_metrics_family(struct ig_buf *b, const char *name,
                                  const char *help, const char *label,
                                  const char *const *labels,
                                  atomic_uint_fast64_t *v, size_t n);

/* Append the exposition text to out. */
enum ig_status pdp_metrics_render(struct pdp_metrics *m,
                                  struct ig_buf *out) IG_WUR;

#endif
