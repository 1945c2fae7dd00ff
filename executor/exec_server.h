/*
 * exec_server.h - the executor's HTTP API (POST /v1/execute, GET /healthz).
 *
 * Thread-per-connection libmicrohttpd: an execution blocks its thread
 * while it redeems, runs and reports, and at most max_concurrent run at
 * once (429 above that, before anything is redeemed).
 */
#ifndef EXEC_SERVER_H
#define EXEC_SERVER_H

#include "exec_config.h"
#include "ig_error.h"

struct exec_server;

/* Load keys, registry, secrets and the PDP token; listen. */
enum ig_status exec_server_start(const struct exec_config *c,
                                 struct exec_server **out,
                                 struct ig_err *err) IG_WUR;
unsigned short exec_server_port(const struct exec_server *s);
void exec_server_stop(struct exec_server *s);

#endif
