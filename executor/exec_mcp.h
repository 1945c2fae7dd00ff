/*
 * exec_mcp.h - the MCP gateway (docs/mcp.md): the executor serves the
 * Model Context Protocol's Streamable HTTP transport (2025-11-25) at /mcp
 * and fronts the upstream servers of the registry's "mcp" object. The
 * agent authenticates with its own PDP bearer token; every tools/call,
 * resources/read and prompts/get becomes an intent the PDP decides, and
 * only an allowed (or approved) one reaches the upstream, with the
 * upstream's credential held here and scrubbed from what comes back.
 *
 * The HTTP thread only collects the request (checks that need no I/O:
 * path, method, Origin and Host, Accept, Content-Type, a bearer token, the
 * body's size); a gateway thread does the rest while the connection is
 * suspended, and the answer goes out as one JSON object or as an event
 * stream that grows while the call runs (progress while an escalation
 * waits for a human).
 */
#ifndef EXEC_MCP_H
#define EXEC_MCP_H

#include <microhttpd.h>

#include "exec_execute.h"

struct exec_mcp;
struct exec_mcp_req;

/* The gateway's state for x (its upstreams are started on first use);
   *out NULL when the registry has no "mcp" servers. Opens the pin file.
   IG_ERR_* with err naming the problem (a credential that does not
   exist, a pin file that cannot be opened or is corrupt). */
enum ig_status exec_mcp_new(struct exec_ctx *x, struct exec_mcp **out,
                            struct ig_err *err) IG_WUR;

/* Refuse new gateway requests, fail the upstream calls in flight, and
   wait until every gateway thread has set its answer. NULL is fine. */
void exec_mcp_stop(struct exec_mcp *m);

/* Stop every upstream server and free (after the HTTP server stopped).
   NULL is fine. */
void exec_mcp_free(struct exec_mcp *m);

/* 1 when url is the gateway's ("/mcp"). */
int exec_mcp_path(const char *url);

/* First call of a gateway request: *out gets its state (freed by
   exec_mcp_done); when it can be answered at once the answer is queued
   and *answered set. m may be NULL (no gateway: 404). */
enum MHD_Result exec_mcp_begin(struct exec_mcp *m, struct MHD_Connection *c,
                               const char *method, struct exec_mcp_req **out,
                               int *answered);

/* Upload bytes (past the cap: counted, dropped, then refused). */
void exec_mcp_body(struct exec_mcp_req *q, const char *data, size_t n);

/* The whole request is in, or the connection was resumed. */
enum MHD_Result exec_mcp_step(struct exec_mcp_req *q, struct MHD_Connection *c);

/* The request ended (NULL is fine). */
void exec_mcp_done(struct exec_mcp_req *q);

#endif
