/*
 * exec_mcp_int.h - the MCP gateway's state, shared by exec_mcp.c (HTTP:
 * the request, its answer, sessions, who the token is) and
 * exec_mcp_gate.c / exec_mcp_call.c (the methods, the gate).
 */
#ifndef EXEC_MCP_INT_H
#define EXEC_MCP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <time.h>

#include "exec_mcp.h"
#include "exec_mcp_rpc.h"
#include "exec_mcp_up.h"
#include "ig_buf.h"
#include "ig_pins.h"

#define EXEC_MCP_PRINCIPAL_MAX 128
#define EXEC_MCP_SESSION_LEN 64 /* hex of 32 random bytes */
#define EXEC_MCP_WHOAMI_SLOTS 64
#define EXEC_MCP_WORKERS 32

/* What the pin file was when an upstream's shown tools were decided. */
struct exec_mcp_stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

/* One upstream and what the gateway shows of it. */
struct exec_mcp_upc {
    struct exec_mcp_up *up;
    const struct exec_mcp_server *srv;
    pthread_mutex_t mu;
    int have; /* tools is a listing of generation gen */
    unsigned long gen;
    json_t *tools; /* the visible tools, renamed <alias>__<tool> */
    json_t *defs;  /* original name -> the upstream's definition */
    struct exec_mcp_stamp stamp;
    json_t *raw;    /* the upstream's whole listing of generation gen */
    json_t *hidden; /* tool -> hash of a changed definition, reported */
};

struct exec_mcp_sess {
    struct exec_mcp_sess *next;
    char id[EXEC_MCP_SESSION_LEN + 1];
    char principal[EXEC_MCP_PRINCIPAL_MAX + 1];
    char version[32];
    json_t *client_caps;
    double last_used;
};

struct exec_mcp_who {
    unsigned char token_hash[32];
    char principal[EXEC_MCP_PRINCIPAL_MAX + 1];
    double until; /* 0: empty slot */
};

struct exec_mcp {
    struct exec_ctx *x;
    struct exec_mcp_upc *ups;
    size_t nups;
    struct ig_pins *pins;
    pthread_mutex_t mu; /* sessions, who, waiting */
    struct exec_mcp_sess *sessions;
    size_t nsessions;
    struct exec_mcp_who who[EXEC_MCP_WHOAMI_SLOTS];
    json_t *waiting; /* call key -> intent id of an escalation not yet done */
    struct exec_mcp_req *active; /* gated calls in flight */
    json_t *outbox;    /* pin events the PDP has not acknowledged yet */
    atomic_long calls; /* requests on gateway threads */
    atomic_int stopping;
    /* Kept workers: a request goes to an idle one (its libcurl handles
       and their connections stay warm), else to a thread of its own. */
    pthread_mutex_t wmu;
    pthread_cond_t wcv;
    struct exec_mcp_req *jobs; /* handed to idle workers, not yet taken */
    int idle, wstop;
    pthread_t workers[EXEC_MCP_WORKERS];
    int nworkers, workers_up;
};

struct exec_mcp_req {
    pthread_mutex_t mu;
    int refs;
    struct exec_mcp *m;
    struct MHD_Connection *conn;
    char *token; /* the bearer token, sodium_malloc'd */
    int is_delete;
    char session[EXEC_MCP_SESSION_LEN + 1]; /* the request's header, or "" */
    int bad_session;                        /* the header was malformed */
    char version[32];                       /* MCP-Protocol-Version, or "" */
    struct ig_buf body;
    int too_large;
    int parked, started, finished;
    /* The answer (under mu once the worker runs). */
    unsigned int status;
    int streaming; /* an event stream: out grows until finished */
    int overflow;  /* a message did not fit: the stream ends broken */
    struct ig_buf out;
    char new_session[EXEC_MCP_SESSION_LEN + 1]; /* Mcp-Session-Id to send */
    /* Filled by the worker. */
    char principal[EXEC_MCP_PRINCIPAL_MAX + 1];
    json_t *client_caps;          /* the session's, when there is one */
    const json_t *progress_token; /* the client's, borrowed from the msg */
    double progress;
    struct exec_mcp_req *next_job; /* in m->jobs */
    /* A gated call in flight, in m->active (under m->mu) so that the
       agent's notifications/cancelled for its id in its session finds
       it. */
    struct exec_mcp_req *next_active;
    char rid[80]; /* the request id's canonical text */
    atomic_int cancelled;
    enum exec_mcp_result result; /* of the gated call, for /metrics */
    /* An outcome spooled by the worker, delivered after the answer. */
    struct exec_report rep;
    int has_report;
};

/* ---- exec_mcp_answer.c ---- */

/* Drop one reference to q (the last frees it). */
void exec_mcp_req_unref(struct exec_mcp_req *q);

/* Resume q's connection if it is parked. Caller holds q->mu. */
void exec_mcp_wake_locked(struct exec_mcp_req *q);

/* Answers (worker thread). A plain JSON answer with status; a JSON-RPC
   result or error for id (on the stream when one was started). */
void exec_mcp_answer_json(struct exec_mcp_req *q, unsigned int status,
                          const char *text, size_t len);
void exec_mcp_result(struct exec_mcp_req *q, const json_t *id,
                     const json_t *result);
void exec_mcp_error(struct exec_mcp_req *q, unsigned int http_status,
                    const json_t *id, int code, const char *message,
                    const json_t *data);
/* Switch the answer to an event stream (200) and send it; then each
   message (a notification or request text) goes out as one event. */
void exec_mcp_stream_start(struct exec_mcp_req *q);
void exec_mcp_stream_send(struct exec_mcp_req *q, const struct ig_buf *msg);

/* ---- exec_mcp_gate.c ---- */

/* Start the kept workers (exec_mcp_new) / stop and join them
   (exec_mcp_stop, once no request is left). */
void exec_mcp_workers_start(struct exec_mcp *m);
void exec_mcp_workers_stop(struct exec_mcp *m);

/* Run q on an idle kept worker, else on a thread of its own: 0, or -1
   (no thread: the caller answers). */
int exec_mcp_dispatch(struct exec_mcp_req *q);

/* The worker's whole job for one POST: parse, session, method. */
void exec_mcp_handle(struct exec_mcp_req *q);

/* ---- exec_mcp_call.c ---- */

/* tools/call, resources/read, prompts/get: the intent, the decision, the
   wait for a human, the redemption, the upstream call, the scrub. */
void exec_mcp_gate_call(struct exec_mcp_req *q, const struct exec_mcp_msg *msg,
                        struct exec_mcp_upc *uc, const char *action,
                        const char *resource, const json_t *params,
                        const char *up_method, const json_t *up_params);

#endif
