/*
 * exec_metrics.c - render the executor's counters (see exec_metrics.h).
 */
#include "exec_metrics.h"

#include <inttypes.h>
#include <stdio.h>

/* One "# HELP/# TYPE" block with a single unlabelled sample. */
static enum ig_status
one(struct ig_buf *out, const char *name, const char *type, const char *help,
    uint64_t v)
{
    char line[512];
    int n = snprintf(line, sizeof(line),
                     "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name, help,
                     name, type, name, v);

    if (n < 0 || (size_t)n >= sizeof(line))
        return IG_ERR_LIMIT;
    return ig_buf_add(out, line, (size_t)n);
}

static enum ig_status
executions(const struct exec_metrics *m, struct ig_buf *out)
{
    static const enum exec_outcome order[EXEC_OUTCOMES] = {
        EXEC_OUTCOME_COMPLETED, EXEC_OUTCOME_FAILED_BEFORE_DISPATCH,
        EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH,
        EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED};
    char line[256];
    enum ig_status st;
    size_t i;
    int n;

    st = ig_buf_adds(out, "# HELP intentgate_executor_executions_total "
                          "Executions run, by outcome.\n"
                          "# TYPE intentgate_executor_executions_total "
                          "counter\n");
    for (i = 0; st == IG_OK && i < EXEC_OUTCOMES; i++) {
        n = snprintf(line, sizeof(line),
                     "intentgate_executor_executions_total{outcome=\"%s\"} "
                     "%" PRIu64 "\n",
                     exec_outcome_name(order[i]),
                     (uint64_t)atomic_load(&m->executions[order[i]]));
        st = n > 0 && (size_t)n < sizeof(line)
                 ? ig_buf_add(out, line, (size_t)n)
                 : IG_ERR_LIMIT;
    }
    return st;
}

static enum ig_status
git_requests(const struct exec_metrics *m, struct ig_buf *out)
{
    static const char *const svc[2] = {"git-receive-pack", "git-upload-pack"};
    static const char *const res[EXEC_GIT_RESULTS] = {"refused", "forwarded",
                                                      "failed"};
    char line[256];
    enum ig_status st;
    size_t i, j;
    int n;

    st = ig_buf_adds(out, "# HELP intentgate_executor_git_requests_total "
                          "Git gateway requests, by service and result.\n"
                          "# TYPE intentgate_executor_git_requests_total "
                          "counter\n");
    for (i = 0; st == IG_OK && i < 2; i++)
        for (j = 0; st == IG_OK && j < EXEC_GIT_RESULTS; j++) {
            n = snprintf(line, sizeof(line),
                         "intentgate_executor_git_requests_total{service="
                         "\"%s\",result=\"%s\"} %" PRIu64 "\n",
                         svc[i], res[j], (uint64_t)atomic_load(&m->git[i][j]));
            st = n > 0 && (size_t)n < sizeof(line)
                     ? ig_buf_add(out, line, (size_t)n)
                     : IG_ERR_LIMIT;
        }
    return st;
}

static enum ig_status
mcp_calls(const struct exec_metrics *m, struct ig_buf *out)
{
    static const char *const res[EXEC_MCP_RESULTS] = {
        "refused", "blocked", "held", "forwarded", "failed"};
    char line[200];
    enum ig_status st;
    size_t j;
    int n;

    st = ig_buf_adds(out, "# HELP intentgate_executor_mcp_calls_total "
                          "MCP gateway calls (tools/call, resources/read, "
                          "prompts/get), by result.\n"
                          "# TYPE intentgate_executor_mcp_calls_total "
                          "counter\n");
    for (j = 0; st == IG_OK && j < EXEC_MCP_RESULTS; j++) {
        n = snprintf(line, sizeof(line),
                     "intentgate_executor_mcp_calls_total{result=\"%s\"} "
                     "%" PRIu64 "\n",
                     res[j], (uint64_t)atomic_load(&m->mcp[j]));
        st = n > 0 && (size_t)n < sizeof(line)
                 ? ig_buf_add(out, line, (size_t)n)
                 : IG_ERR_LIMIT;
    }
    return st;
}

enum ig_status
exec_metrics_render(const struct exec_metrics *m,
                    const struct exec_metrics_view *v, struct ig_buf *out)
{
    enum ig_status st = executions(m, out);

    if (st == IG_OK)
        st = git_requests(m, out);
    if (st == IG_OK)
        st = mcp_calls(m, out);

#define ONE(name, type, help, val)                                             \
    if (st == IG_OK)                                                           \
    st = one(out, "intentgate_executor_" name, type, help, val)
    ONE("refused_total", "counter",
        "Execute requests refused before anything ran.",
        (uint64_t)atomic_load(&m->refused));
    ONE("credential_reflected_total", "counter",
        "Upstream answers that echoed the credential (removed before they "
        "left).",
        (uint64_t)atomic_load(&m->credential_reflected));
    ONE("running", "gauge", "Executions running now.", v->running);
    ONE("outcomes_pending", "gauge",
        "Outcomes spooled and not yet acknowledged by the PDP.",
        v->outcomes_pending);
    ONE("outcomes_delivered_total", "counter", "Outcomes the PDP acknowledged.",
        v->outcomes_delivered);
    ONE("outcome_retries_total", "counter",
        "Outcome deliveries retried after a failure.", v->outcome_retries);
    ONE("outcomes_undeliverable_total", "counter",
        "Outcomes the PDP refused for good (see the log).",
        v->outcomes_undeliverable);
    ONE("connections", "gauge", "HTTP connections open now.", v->connections);
    ONE("connections_cut_total", "counter",
        "Connections cut because a request did not arrive in time.",
        v->connections_cut);
#undef ONE
    return st;
}
