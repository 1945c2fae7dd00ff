/*
 * exec_execute.h - POST /v1/execute: the order of checks that makes the
 * executor a separate trust domain.
 *
 *   exec_admit (on the HTTP thread; no I/O):
 *     recompute the intent hash -> verify the grant offline (kid,
 *     signature with that hash, audience, expiry, intent id/action/
 *     resource) -> action registered -> params valid (and, for http, the
 *     request they make: no empty or dot-only path segment, the URL fits)
 *     -> the handler can run here -> the credential exists -> a free
 *     execution slot (total and per action)
 *   exec_redeem (on a worker): write the "run" record to the outcome
 *     spool (cannot: stop, grant unspent) -> redeem at the PDP
 *     (unreachable or refused: stop, nothing ran)
 *   exec_finish (on the worker): the run record durable (else nothing
 *     runs) -> only now decrypt the credential and run the handler ->
 *     write the outcome to the spool -> answer.
 *   exec_report_send (on the worker, after the answer): deliver the
 *     outcome to the PDP through the spool (retried until acknowledged,
 *     also across restarts: exec_spool.h).
 *
 * Every refusal before the redemption leaves the grant unspent.
 */
#ifndef EXEC_EXECUTE_H
#define EXEC_EXECUTE_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "exec_config.h"
#include "exec_error.h"
#include "exec_metrics.h"
#include "exec_pdp.h"
#include "exec_registry.h"
#include "exec_runner.h"
#include "exec_secrets.h"
#include "exec_spool.h"
#include "ig_key.h"

struct exec_running; /* an exec action in flight, cancellable */
struct exec_mcp;     /* the MCP gateway (exec_mcp.h), NULL without one */
struct exec_slots;

struct exec_ctx {
    const struct exec_config *cfg;
    struct ig_keyring *keys;
    struct exec_registry *registry;
    struct exec_secrets *secrets;
    struct exec_pdp *pdp;
    struct exec_spool *spool;
    struct exec_metrics metrics;
    struct exec_runner_env run_env; /* work dir, sandbox user */
    atomic_long running;
    atomic_long git_running; /* git gateway requests on the pool */
    atomic_long git_open;    /* git gateway requests alive */
    pthread_mutex_t mu;      /* guards inflight and per_action */
    struct exec_running *inflight;
    struct exec_slots *per_action; /* running count per action */
    struct exec_mcp *mcp;
};

/*
 * Every check before the redemption, and an execution slot. NULL when
 * admitted: *act is the action and a slot is held - call exec_redeem
 * next. Else the error reply (new reference; *status set), nothing held.
 * No I/O: safe on an HTTP thread.
 */
json_t *exec_admit(struct exec_ctx *x, const json_t *body,
                   const struct exec_action **act, unsigned int *status);

/*
 * Write the run record, then redeem the admitted body's grant at the PDP
 * (blocks). NULL: the grant is spent and ours, *ticket names the run
 * record - call exec_finish exactly once. Else the error reply (*status
 * set: 503 SPOOL_UNAVAILABLE when the record cannot be written, the
 * grant unspent; the PDP's refusals) and the slot is given back.
 */
json_t *exec_redeem(struct exec_ctx *x, const json_t *body,
                    const struct exec_action *act, uint64_t *ticket,
                    unsigned int *status);

/* An outcome written to the spool, to deliver after the answer. */
struct exec_report {
    char intent_id[IG_INTENT_ID_MAX + 1];
    const char *outcome; /* a static name */
    json_t *detail;      /* what the PDP gets; NULL: {} */
    uint64_t ticket;     /* the spool's record */
    int spooled;         /* 0: the spool refused it; sent once, unspooled */
};

/*
 * Run the redeemed execution (streaming output through on_output when
 * not NULL), write the outcome to the spool, give the slot back, and
 * return the final reply {"intent_id", "outcome", "result",
 * "outcome_recorded"} (outcome_recorded: the spool has it and delivers
 * it). *rep is filled in: call exec_report_send(rep) exactly once, after
 * the reply has been handed over.
 */
json_t *exec_finish(struct exec_ctx *x, const json_t *body,
                    const struct exec_action *act, uint64_t ticket,
                    void (*on_output)(void *ctx, const char *stream,
                                      const char *data, size_t len),
                    void *ctx, struct exec_report *rep);

/*
 * The gateways' side of the same order (exec_gw_redeem.c): write the run
 * record for intent_id, spend grant at the PDP, make the record durable.
 * 0: spent and ours, *ticket names the record. -1 with why (cap bytes)
 * set: the grant is unspent; or, when the record could not be made
 * durable, spent with DEFINITELY_NOT_EXECUTED spooled into *rep and
 * *reported set (send it with exec_report_send after the answer).
 */
int exec_gw_redeem(struct exec_ctx *x, const char *grant, const char *intent_id,
                   uint64_t *ticket, char *why, size_t cap,
                   struct exec_report *rep, int *reported);

/* Spool outcome o of intent_id now (detail stolen) into *rep, counted in
   the metrics; exec_report_send delivers it after the answer. */
void exec_report_spool(struct exec_ctx *x, const char *intent_id,
                       enum exec_outcome o, json_t *detail,
                       struct exec_report *rep);

/* Deliver rep's outcome to the PDP (one attempt; the spool retries it)
   and release rep. Blocks on the PDP. */
void exec_report_send(struct exec_ctx *x, struct exec_report *rep);

/* exec_admit + exec_redeem + exec_finish in the caller's thread. */
json_t *exec_execute(struct exec_ctx *x, const json_t *body,
                     unsigned int *status);

/* Free the per-action counters (at shutdown). */
void exec_slots_free(struct exec_ctx *x);

/*
 * POST /v1/executions/{intent_id}/cancel with the same grant: kill the
 * running exec action's process group. 200 when it was running, 404 when
 * not (finished, unknown, or another grant).
 */
json_t *exec_cancel(struct exec_ctx *x, const char *intent_id,
                    const json_t *body, unsigned int *status);

/* Kill every running exec action (at shutdown). */
void exec_cancel_all(struct exec_ctx *x);

#endif
