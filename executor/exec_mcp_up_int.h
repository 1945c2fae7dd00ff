/*
 * exec_mcp_up_int.h - shared by exec_mcp_up.c (the client, the stdio
 * transport) and exec_mcp_http.c (the Streamable HTTP transport).
 */
#ifndef EXEC_MCP_UP_INT_H
#define EXEC_MCP_UP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "exec_mcp_up.h"

/* One request waiting for its answer (stdio: matched by id on the reader
   thread). */
struct exec_mcp_pending {
    struct exec_mcp_pending *next;
    uint64_t id;
    char token[32]; /* our progress token, "" when none */
    exec_mcp_note_fn fn;
    void *ctx;
    const atomic_int *cancel; /* the agent cancelled: NULL when it cannot */
    int done;
    json_t *result, *error;
    char why[200]; /* done without an answer: why */
};

enum exec_mcp_state { EXEC_MCP_DOWN = 0, EXEC_MCP_STARTING, EXEC_MCP_UP };

struct exec_mcp_up {
    struct exec_ctx *x;
    const struct exec_mcp_server *srv;
    struct exec_scrub *scrub;
    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;  /* state changes, answers */
    enum exec_mcp_state state;
    int closing;
    atomic_int stopping; /* closing, readable without mu (transfers) */
    double retry_at;     /* a failed start: not again before (ms, monotonic) */
    double backoff_ms;
    char down_why[200];
    unsigned long gen;
    uint64_t next_id;
    json_t *caps;
    char version[32];
    struct exec_mcp_pending *calls;
    /* stdio */
    struct exec_run *run;
    int in_fd, out_fd;
    pthread_t reader, waiter;
    int threads; /* reader and waiter were started and are not joined */
    int spawned; /* the waiter thread tried to start the server */
    int drained; /* the reader read the server's stdout to its end */
    int reaping; /* the starter joins the old server's threads: what they
                    say about it (it is already down) is stale */
    enum ig_status spawn_st;
    char spawn_why[200];
    pthread_mutex_t wmu; /* one line written at a time */
    /* Where a transport hands what the upstream sent
       (exec_mcp_up_dispatch; a pointer, so that exec_mcp_http.c below
       does not call back up into exec_mcp_up.c). */
    void (*deliver)(struct exec_mcp_up *u, const char *msg, size_t len,
                    struct exec_mcp_pending *only);
    /* http */
    char *cred_line; /* "Header: prefix+credential", sodium_malloc'd */
    char *session;   /* Mcp-Session-Id, malloc'd */
};

/* ---- exec_mcp_up.c ---- */

/* Deliver a message the upstream sent (a result, an error, a request or a
   notification). Caller does not hold mu. reply: where an answer to the
   upstream's own request goes (stdio: NULL, written to stdin). */
void exec_mcp_up_dispatch(struct exec_mcp_up *u, const char *line, size_t len,
                          struct exec_mcp_pending *only);

/* ---- exec_mcp_http.c ---- */

/* Get ready to initialize the HTTP upstream: forget any old session,
   build the credential's header line. Caller holds no lock. */
enum ig_status exec_mcp_http_start(struct exec_mcp_up *u,
                                   struct ig_err *err) IG_WUR;

/* POST one request (text: its JSON) and wait for its answer, delivering
   the SSE events on the way to p. */
enum ig_status exec_mcp_http_call(struct exec_mcp_up *u,
                                  struct exec_mcp_pending *p, const char *text,
                                  size_t len, struct ig_err *err) IG_WUR;

/* POST one notification (or response) to the upstream's session. */
enum ig_status exec_mcp_http_note(struct exec_mcp_up *u, const char *text,
                                  size_t len, struct ig_err *err) IG_WUR;

/* DELETE the session (best effort) and free the HTTP state. */
void exec_mcp_http_stop(struct exec_mcp_up *u);

#endif
