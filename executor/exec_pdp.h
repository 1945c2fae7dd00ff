/*
 * exec_pdp.h - the executor's client for the PDP: redeem a grant, report
 * an outcome. libcurl, one easy handle per call (thread safe), short
 * timeouts, no redirects, responses capped. Fail closed: an unreachable
 * PDP, a timeout or any unexpected answer is a refusal, never a success.
 */
#ifndef EXEC_PDP_H
#define EXEC_PDP_H

#include <jansson.h>

#include "ig_error.h"

struct exec_pdp;

/*
 * base_url: "http://127.0.0.1:8700" (no trailing slash needed). token:
 * this executor's bearer token (kept in sodium_malloc'd memory, wiped on
 * free). curl_global_init must have been called.
 */
enum ig_status exec_pdp_new(const char *base_url, const char *token,
                            long timeout_ms, struct exec_pdp **out,
                            struct ig_err *err) IG_WUR;
void exec_pdp_free(struct exec_pdp *p);

/*
 * POST /v1/grants/redeem. IG_OK (200; *claims gets the PDP's claims, a new
 * reference, when not NULL); IG_ERR_EXISTS (409, already redeemed);
 * IG_ERR_EXPIRED (410); IG_ERR_CRYPTO (403, refused); IG_ERR_NOTFOUND
 * (404); IG_ERR_INVALID for another 4xx; IG_ERR_IO for the rest (5xx,
 * 401, 408, 429), the PDP unreachable included.
 * err carries the PDP's error code and message when it sent one.
 */
enum ig_status exec_pdp_redeem(struct exec_pdp *p, const char *grant,
                               const char *intent_id, json_t **claims,
                               struct ig_err *err) IG_WUR;

/*
 * POST /v1/executions/{id}/outcome with {"outcome", "detail"} (detail may
 * be NULL). IG_OK (recorded now, or the same outcome was already: the
 * PDP's "duplicate"); IG_ERR_IO when trying again may succeed (the PDP
 * unreachable, a timeout, 5xx, 401, 408, 429); IG_ERR_EXISTS (409: another
 * outcome is recorded, or this executor did not redeem the intent) and
 * IG_ERR_INVALID / IG_ERR_CRYPTO / IG_ERR_NOTFOUND / IG_ERR_EXPIRED (other
 * 4xx) when it never will. Not retried here: the spool retries.
 */
enum ig_status exec_pdp_outcome(struct exec_pdp *p, const char *intent_id,
                                const char *outcome, const json_t *detail,
                                struct ig_err *err) IG_WUR;

/*
 * GET /v1/intents/{intent_id}: *binding gets the recorded intent binding
 * (a new reference) and state (when not NULL, state_cap bytes) the
 * intent's state ("ALLOWED", "REDEEMED", ...), which the caller then
 * verifies a grant against:
 * what the PDP answers is trusted no further than that check. intent_id
 * must be a lowercase UUID (IG_ERR_INVALID otherwise, nothing sent).
 * Errors as exec_pdp_redeem (IG_ERR_NOTFOUND: no such intent, or not one
 * of this executor's actions).
 */
enum ig_status exec_pdp_intent(struct exec_pdp *p, const char *intent_id,
                               json_t **binding, char *state, size_t state_cap,
                               struct ig_err *err) IG_WUR;

/*
 * POST /v1/executor/events with event ({"event", "detail"}): the PDP
 * appends it to the audit log as this executor's. Errors as
 * exec_pdp_outcome (IG_ERR_IO: worth trying again).
 */
enum ig_status exec_pdp_event(struct exec_pdp *p, const json_t *event,
                              struct ig_err *err) IG_WUR;

/*
 * A call in another principal's name: the MCP gateway speaks to the PDP
 * for the agent whose bearer token it was given (GET /v1/whoami, POST
 * /v1/intents, GET /v1/intents/{id}?wait=N). GET when body is NULL, else
 * POST of body (JSON). timeout_ms 0 takes the client's. *status gets the
 * HTTP status and *reply (when not NULL) the answer parsed as JSON, or
 * NULL when it was not. The token lives in sodium_malloc'd memory for the
 * call only. IG_ERR_INVALID for a token that cannot go into a header;
 * IG_ERR_IO when the PDP could not be reached (nothing else is mapped:
 * the caller reads the status).
 */
enum ig_status exec_pdp_call_as(struct exec_pdp *p, const char *token,
                                const char *path, const char *body,
                                long timeout_ms, long *status, json_t **reply,
                                struct ig_err *err) IG_WUR;

#endif
