/*
 * exec_gw_redeem.c - what the gateways (git, MCP) share of the execute
 * path's order (exec_execute.h): write the run record, spend the grant at
 * the PDP, make the record durable; and spool an outcome now, to be
 * delivered after the answer with exec_report_send.
 */
#include "exec_execute.h"

#include <stdio.h>
#include <string.h>

void
exec_report_spool(struct exec_ctx *x, const char *intent_id,
                  enum exec_outcome o, json_t *detail, struct exec_report *rep)
{
    struct ig_err err;

    memset(rep, 0, sizeof(*rep));
    (void)snprintf(rep->intent_id, sizeof(rep->intent_id), "%s", intent_id);
    rep->outcome = exec_outcome_name(o);
    rep->detail = detail; /* steals */
    ig_err_clear(&err);
    rep->spooled =
        exec_spool_outcome_write(x->spool, intent_id, rep->outcome, detail,
                                 &rep->ticket, &err) == IG_OK;
    atomic_fetch_add(&x->metrics.executions[o], 1);
}

int
exec_gw_redeem(struct exec_ctx *x, const char *grant, const char *intent_id,
               uint64_t *ticket, char *why, size_t cap, struct exec_report *rep,
               int *reported)
{
    struct ig_err err;
    enum ig_status st;

    ig_err_clear(&err);
    st = exec_spool_run_write(x->spool, intent_id, ticket, &err);
    if (st != IG_OK) {
        (void)snprintf(why, cap, "%s",
                       st == IG_ERR_EXISTS
                           ? "this intent is already being executed here"
                           : "the executor cannot record executions now; "
                             "the grant was not spent");
        return -1;
    }
    st = exec_pdp_redeem(x->pdp, grant, intent_id, NULL, &err);
    if (st != IG_OK) {
        exec_spool_run_cancel(x->spool, intent_id);
        (void)snprintf(why, cap, "%s",
                       st == IG_ERR_EXISTS    ? "grant already used"
                       : st == IG_ERR_EXPIRED ? "grant expired"
                       : st == IG_ERR_IO      ? "the PDP cannot be reached; "
                                                "the grant was not spent"
                                              : "grant refused by the PDP");
        return -1;
    }
    if (exec_spool_run_durable(x->spool, *ticket, &err) != IG_OK) {
        (void)snprintf(why, cap,
                       "the executor cannot record executions "
                       "now; nothing was sent");
        exec_report_spool(x, intent_id, EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED,
                          json_pack("{s:s}", "error", why), rep);
        *reported = 1;
        return -1;
    }
    return 0;
}
