/*
 * pdp.h - the policy decision point server (`intentgate serve`).
 *
 * pdp_server_start() opens the store, loads the signing key and the policy
 * bundle (whose tests must pass), and starts the HTTP API on the configured
 * address; it returns once the server is answering. The caller owns
 * signals: it calls pdp_server_reload_policies() on SIGHUP and
 * pdp_server_stop() on SIGTERM. Not thread safe between these calls.
 */
#ifndef PDP_H
#define PDP_H

#include "ig_error.h"
#include "pdp_config.h"

struct pdp_server;

/*
 * Start serving with config c (borrowed; must outlive the server). *out
 * receives the running server. Errors name the failing part (database,
 * key file, policy bundle, listen address).
 */
enum ig_status pdp_server_start(const struct pdp_config *c,
                                struct pdp_server **out,
                                struct ig_err *err) IG_WUR;

/* The TCP port actually bound (useful with port 0). */
unsigned short pdp_server_port(const struct pdp_server *s);

/*
 * Load the bundle from the configured policy_dir again and run its tests;
 * swap it in only if both succeed, else keep the running one. Logs either
 * way. IG_OK when swapped.
 */
enum ig_status pdp_server_reload_policies(struct pdp_server *s,
                                          struct ig_err *err) IG_WUR;

/* Stop accepting, answer or resume everything in flight, stop, free. */
void pdp_server_stop(struct pdp_server *s);

/* One JSON log line on stderr: {"time","level","event", ...fields}.
   fields (may be NULL) is stolen. Thread safe. */
void pdp_log(const char *level, const char *event, json_t *fields);

#endif
