/*
 * exec_mcp_up.h - the MCP gateway's client for one upstream server of the
 * registry's "mcp" object: a stdio server the executor starts (under the
 * exec sandbox, its credential only in its environment, restarted when it
 * dies) or a Streamable HTTP server it calls (the credential as one
 * header). The gateway is the upstream's only client: it initializes it
 * once with its own capabilities (none: no roots, no sampling, no
 * elicitation, so nothing the agent's client offers widens what the
 * upstream may touch), multiplexes the agents' requests over it under its
 * own ids, and answers the upstream's own requests itself (ping; anything
 * else is refused).
 */
#ifndef EXEC_MCP_UP_H
#define EXEC_MCP_UP_H

#include <jansson.h>
#include <stdatomic.h>

#include "exec_execute.h"
#include "exec_registry.h"
#include "exec_scrub.h"
#include "ig_error.h"

struct exec_mcp_up;

/* A notification the upstream sent about one call (progress, log), with
   its params; called on a reader thread while the call waits. */
typedef void (*exec_mcp_note_fn)(void *ctx, const char *method,
                                 const json_t *params);

/*
 * A client for srv (nothing is started yet: the first call starts and
 * initializes it). With a credential, its scrubber is built now (the
 * credential must exist: IG_ERR_NOTFOUND naming it otherwise).
 */
enum ig_status exec_mcp_up_new(struct exec_ctx *x,
                               const struct exec_mcp_server *srv,
                               struct exec_mcp_up **out,
                               struct ig_err *err) IG_WUR;

/* Fail the calls in flight and refuse new ones (the server keeps running
   until exec_mcp_up_free). Any thread. */
void exec_mcp_up_close(struct exec_mcp_up *u);

/* Stop the server (stdio: close its stdin, kill its process group), fail
   the calls in flight, free. NULL is fine. */
void exec_mcp_up_free(struct exec_mcp_up *u);

/*
 * Send the request method(params) (params may be NULL) and wait for its
 * answer up to the server's timeout_ms. progress: when not NULL, a
 * progress token is set in params._meta and the upstream's
 * notifications/progress for it go to fn. IG_OK: *result (a result) or
 * *error (a JSON-RPC error object) holds a new reference, unscrubbed.
 * IG_ERR_IO: the server could not be started or reached, died, or sent
 * garbage; IG_ERR_EXPIRED: no answer within the timeout, or cancel (when
 * not NULL) was set meanwhile (the upstream is sent
 * notifications/cancelled). err says which.
 */
enum ig_status exec_mcp_up_call(struct exec_mcp_up *u, const char *method,
                                const json_t *params, exec_mcp_note_fn fn,
                                void *ctx, const atomic_int *cancel,
                                json_t **result, json_t **error,
                                struct ig_err *err) IG_WUR;

/* Wake the calls waiting on u, so that one whose cancel flag was set
   (exec_mcp_up_call) sees it now. */
void exec_mcp_up_wake(struct exec_mcp_up *u);

/* The credential's scrubber (NULL without a credential). */
const struct exec_scrub *exec_mcp_up_scrub(const struct exec_mcp_up *u);

/* Bumped each time the upstream says notifications/tools/list_changed or
   is (re)started: tools/list answers cached under an older value are
   stale. */
unsigned long exec_mcp_up_generation(struct exec_mcp_up *u);

/* The server's capabilities from its initialize result (a new reference,
   or NULL before the first successful start). */
json_t *exec_mcp_up_caps(struct exec_mcp_up *u);

/* Text the upstream sent (an error message, a version string), fit to
   quote in an error or a log line: scrubbed of the credential whole and
   only then cut to fit out (cap bytes, the NUL included; at a UTF-8
   boundary), so a cut never leaves part of the credential. "(none)" for
   NULL. */
void exec_mcp_up_quote(const struct exec_mcp_up *u, const char *text, char *out,
                       size_t cap);

/* Milliseconds of CLOCK_MONOTONIC. */
double exec_mcp_now_ms(void);

/* The registry entry. */
const struct exec_mcp_server *exec_mcp_up_server(const struct exec_mcp_up *u);

#endif
