/*
 * exec_server.h - the executor's HTTP API: POST /v1/execute, POST
 * /v1/executions/{id}/cancel, GET /healthz, GET /metrics (exec_server.c,
 * exec_start.c).
 *
 * A few epoll threads serve every connection and never block; each
 * execution runs on one of max_concurrent worker threads (429 above that,
 * before anything is redeemed). Not thread safe: start and stop from one
 * thread.
 */
#ifndef EXEC_SERVER_H
#define EXEC_SERVER_H

#include "exec_config.h"
#include "ig_error.h"

struct exec_server;

/*
 * Load keys, registry, secrets and the PDP token; check the sandbox
 * (refusing to start when it could show the executor's files); open the
 * outcome spool; listen. err names what failed.
 */
enum ig_status exec_server_start(const struct exec_config *c,
                                 struct exec_server **out,
                                 struct ig_err *err) IG_WUR;
unsigned short exec_server_port(const struct exec_server *s);
/* Refuse new executions, cancel running exec actions, let every
   execution finish and report, stop listening, free. NULL is fine. */
void exec_server_stop(struct exec_server *s);

#endif
