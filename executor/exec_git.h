/*
 * exec_git.h - the git gateway: plain git pushes and fetches through the
 * executor, which checks the grant, injects the repository credential and
 * lets through exactly the refs the grant's intent names
 * (docs/git-gateway.md).
 *
 * Routes, for each alias of the registry's "git" object:
 *   GET  /git/<alias>/info/refs?service=git-receive-pack|git-upload-pack
 *   POST /git/<alias>/git-receive-pack
 *   POST /git/<alias>/git-upload-pack
 * The grant comes as `Authorization: Bearer <grant>`. The HTTP thread
 * only collects the request (the body into an unlinked temporary file,
 * capped); a pool worker checks the grant, talks to the PDP and the
 * upstream, and leaves the answer in another temporary file that the
 * resumed connection then sends. exec_git_run.c holds the worker's part.
 */
#ifndef EXEC_GIT_H
#define EXEC_GIT_H

#include <microhttpd.h>

#include "exec_execute.h"
#include "exec_pool.h"

struct exec_git_req;

/* 1 when url is under /git/ (the request is the gateway's). */
int exec_git_path(const char *url);

/*
 * First call of a gateway request: allocate its state into *out (freed by
 * exec_git_done). When the request can be answered at once (unknown
 * route or alias, no grant, a body declared over the cap), the answer is
 * queued and *answered set; the body that follows is then dropped.
 */
enum MHD_Result exec_git_begin(struct exec_ctx *x, struct MHD_Connection *c,
                               const char *url, const char *method,
                               struct exec_git_req **out, int *answered);

/* Append upload bytes to the request's body file (past the cap they are
   counted and dropped; the request is then refused). */
void exec_git_body(struct exec_git_req *g, const char *data, size_t n);

/*
 * The whole request is in (or the connection was resumed): the first time,
 * suspend the connection and hand the request to a pool worker; once the
 * worker is done, queue its answer. Access-handler thread only.
 */
enum MHD_Result exec_git_step(struct exec_git_req *g, struct exec_pool *pool,
                              struct MHD_Connection *c);

/* The request ended: free its state (NULL is fine). */
void exec_git_done(struct exec_git_req *g);

#endif
