/*
 * exec_execute.h - POST /v1/execute: the order of checks that makes the
 * executor a separate trust domain.
 *
 *   recompute the intent hash -> verify the grant offline (kid, signature
 *   with that hash, audience, expiry, intent id/action/resource) -> action
 *   registered -> params valid -> a free execution slot -> the handler can
 *   run here -> redeem at the PDP (unreachable or refused: stop, nothing
 *   ran) -> only now decrypt the credential and run the handler -> report
 *   the outcome to the PDP (once, never retried) -> answer.
 *
 * Every refusal before the redemption leaves the grant unspent.
 */
#ifndef EXEC_EXECUTE_H
#define EXEC_EXECUTE_H

#include <jansson.h>
#include <stdatomic.h>

#include "exec_config.h"
#include "exec_pdp.h"
#include "exec_registry.h"
#include "exec_secrets.h"
#include "ig_key.h"

#include <pthread.h>

#include "exec_runner.h"

struct exec_running; /* an exec action in flight, cancellable */
struct exec_slots;

struct exec_ctx {
    const struct exec_config *cfg;
    struct ig_keyring *keys;
    struct exec_registry *registry;
    struct exec_secrets *secrets;
    struct exec_pdp *pdp;
    atomic_long running;
    pthread_mutex_t mu; /* guards inflight and per_action */
    struct exec_running *inflight;
    struct exec_slots *per_action; /* running count per action */
};

/* Run one execution for body (a parsed JSON object). *status gets the HTTP
   status; the return value is the reply object (new reference). */
json_t *exec_execute(struct exec_ctx *x, const json_t *body,
                     unsigned int *status);

/*
 * The two halves, for streaming: exec_prepare does every check, takes an
 * execution slot and redeems; NULL means the grant is spent and the slot
 * held, and *act is the action: call exec_finish exactly once. Else the
 * error reply (nothing spent, no slot held). exec_finish runs the handler
 * (streaming output through on_output when not NULL), reports the outcome,
 * frees the slot and returns the final reply.
 */
json_t *exec_prepare(struct exec_ctx *x, const json_t *body,
                     const struct exec_action **act, unsigned int *status);
json_t *exec_finish(struct exec_ctx *x, const json_t *body,
                    const struct exec_action *act,
                    void (*on_output)(void *ctx, const char *stream,
                                      const char *data, size_t len),
                    void *ctx);

/* Free the per-action counters (at shutdown). */
void exec_slots_free(struct exec_ctx *x);

/*
 * POST /v1/executions/{intent_id}/cancel with the same grant: kill the
 * running exec action's process group. 200 when it was running, 404 when
 * not (finished, unknown, or another grant).
 */
json_t *exec_cancel(struct exec_ctx *x, const char *intent_id,
                    const json_t *body, unsigned int *status);

/* {"error":{"code","message"}}. */
json_t *exec_error(const char *code, const char *message);

#endif
