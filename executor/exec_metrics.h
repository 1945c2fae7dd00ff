/*
 * exec_metrics.h - the executor's counters, rendered in the Prometheus
 * text exposition format on GET /metrics. Updates are lock-free atomics,
 * safe from any thread. Nothing here is secret: counts only.
 */
#ifndef EXEC_METRICS_H
#define EXEC_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "exec_http.h" /* enum exec_outcome */
#include "ig_buf.h"
#include "ig_error.h"

#define EXEC_OUTCOMES 4 /* enum exec_outcome values */
/* What became of a git gateway request. */
enum exec_git_result {
    EXEC_GIT_REFUSED = 0, /* the gateway refused it (zero: the default) */
    EXEC_GIT_FORWARDED,   /* the upstream's answer was relayed */
    EXEC_GIT_FAILED       /* the upstream failed or answered an error */
};
#define EXEC_GIT_RESULTS 3
/* What became of a gated MCP call (tools/call, resources/read,
   prompts/get). */
enum exec_mcp_result {
    EXEC_MCP_R_REFUSED = 0, /* refused by the gateway or not approved */
    EXEC_MCP_R_BLOCKED,     /* the PDP said BLOCK */
    EXEC_MCP_R_HELD,        /* escalated; still pending when the wait ended */
    EXEC_MCP_R_FORWARDED,   /* the upstream's answer was relayed */
    EXEC_MCP_R_FAILED       /* sent upstream, no answer came back */
};
#define EXEC_MCP_RESULTS 5

struct exec_metrics {
    atomic_uint_fast64_t executions[EXEC_OUTCOMES]; /* by outcome */
    atomic_uint_fast64_t refused;              /* answered before running */
    atomic_uint_fast64_t credential_reflected; /* upstream echoed it */
    /* Git gateway requests by service (receive-pack, upload-pack) and
       result (enum exec_git_result). */
    atomic_uint_fast64_t git[2][EXEC_GIT_RESULTS];
    /* MCP gateway calls by result (enum exec_mcp_result). */
    atomic_uint_fast64_t mcp[EXEC_MCP_RESULTS];
};

/* Gauges and counters owned by other parts, read at render time. */
struct exec_metrics_view {
    uint64_t outcomes_pending, outcomes_delivered, outcome_retries,
        outcomes_undeliverable;
    uint64_t connections, connections_cut, running;
};

/* Append the exposition text to out. */
enum ig_status exec_metrics_render(const struct exec_metrics *m,
                                   const struct exec_metrics_view *v,
                                   struct ig_buf *out) IG_WUR;

#endif
