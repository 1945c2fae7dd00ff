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

struct exec_ctx {
    const struct exec_config *cfg;
    struct ig_keyring *keys;
    struct exec_registry *registry;
    struct exec_secrets *secrets;
    struct exec_pdp *pdp;
    atomic_long running;
};

/* Run one execution for body (a parsed JSON object). *status gets the HTTP
   status; the return value is the reply object (new reference). */
json_t *exec_execute(struct exec_ctx *x, const json_t *body,
                     unsigned int *status);

/* {"error":{"code","message"}}. */
json_t *exec_error(const char *code, const char *message);

#endif
