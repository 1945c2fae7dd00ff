/*
 * exec_git_int.h - the git gateway's request state, shared by exec_git.c
 * (HTTP: routes, the body file, suspend/resume, the answer) and
 * exec_git_run.c (the pool worker: grant, PDP, upstream).
 *
 * A request is reference counted: the HTTP request holds one, the worker
 * one. `parked` (under mu) says the connection is suspended by us; the
 * worker sets `finished` and resumes it, under mu, exactly once.
 */
#ifndef EXEC_GIT_INT_H
#define EXEC_GIT_INT_H

#include <pthread.h>
#include <stdint.h>

#include "exec_git.h"
#include "exec_git_up.h"
#include "ig_buf.h"

enum exec_git_route { EXEC_GIT_REFS = 1, EXEC_GIT_RPC };
enum exec_git_service { EXEC_GIT_RECEIVE = 1, EXEC_GIT_UPLOAD };

struct exec_git_req {
    pthread_mutex_t mu;
    int refs;
    struct exec_ctx *x;
    struct MHD_Connection *conn;
    const struct exec_git_repo *repo;
    enum exec_git_route route;
    enum exec_git_service svc;
    char *grant;                          /* the bearer token (malloc'd) */
    char intent_id[IG_INTENT_ID_MAX + 1]; /* the grant's, once read */
    char git_protocol[128]; /* the Git-Protocol header to relay, or "" */
    int gzip;               /* the body is Content-Encoding: gzip */
    int body_fd;            /* -1 until the first byte */
    uint64_t body_len, body_cap;
    int too_large, io_error;
    int parked, started, finished;
    int counted; /* holds one of x->git_open */
    /* Streaming the upstream's answer (under mu): the answer is a 200 of
       the git type, its first safe_len bytes of reply_fd may go out. */
    int streaming, stream_failed;
    uint64_t safe_len, woken; /* woken: safe_len at the last wake-up */
    /* The answer, set by the worker. */
    unsigned int status;
    char content_type[80];
    int reply_fd; /* -1: the answer is reply_mem */
    uint64_t reply_len;
    struct ig_buf reply_mem;
    /* An outcome spooled by the worker, sent after the answer. */
    struct exec_report rep;
    int has_report;
    enum exec_git_result result; /* for the metrics */
};

/* ---- exec_git_req.c ---- */

/* Resume the connection if we parked it. Caller holds g->mu. */
void exec_git_wake_locked(struct exec_git_req *g);

/* Log a refusal (event git.refused: repository, service, reason, the
   intent when known, and ref when not NULL): the PDP records nothing of a
   push it never saw redeemed, so this line is the evidence. */
void exec_git_log_refusal(const struct exec_git_req *g, const char *why,
                          const char *ref);

/* The service's name: "git-receive-pack" or "git-upload-pack". */
const char *exec_git_service_name(enum exec_git_service s);

/* An unlinked temporary file for bodies and answers (in the spool
   directory), or -1 with errno set. */
int exec_git_tmpfile(const struct exec_ctx *x);

/* Set a small answer: status, content type, text (copied). */
void exec_git_answer(struct exec_git_req *g, unsigned int status,
                     const char *type, const char *text, size_t len);

/* The answer streams from reply_fd (its status and type set): wake the
   connection so that exec_git_step queues it; and more of it is safe to
   send. Worker thread. */
void exec_git_stream_start(struct exec_git_req *g);
void exec_git_stream_more(struct exec_git_req *g, uint64_t safe_len,
                          int failed);

/* The same with a text/plain text. */
void exec_git_answer_text(struct exec_git_req *g, unsigned int status,
                          const char *text);

/* ---- exec_git_fwd.c ---- */

/* Refuse as git shows it best for g's route: an ERR pkt-line (after the
   service header on info/refs), why in printable ASCII. */
void exec_git_refuse(struct exec_git_req *g, const char *why);

/* Write the run record and spend the grant at the PDP: 0, or -1 with why
   (cap bytes) set: the grant is unspent, or (the run record could not be
   made durable after the redemption) spent with its outcome
   DEFINITELY_NOT_EXECUTED spooled. */
int exec_git_redeem(struct exec_git_req *g, const char *intent_id,
                    uint64_t *ticket, char *why, size_t cap);

/* Spool the outcome of intent_id now (detail stolen); exec_git.c sends it
   after the answer. */
void exec_git_record(struct exec_git_req *g, const char *intent_id,
                     enum exec_outcome o, json_t *detail);

/* Forward g upstream with the credential; a 200 of the git type streams
   to the agent. 0 when it did; else -1 and g's answer says why. *up
   says what came back. */
int exec_git_forward(struct exec_git_req *g, struct exec_git_up *up);

/* ---- exec_git_push.c ---- */

/* POST git-receive-pack with a checked grant for its intent (binding). */
void exec_git_push_run(struct exec_git_req *g, const json_t *binding);

/* A push whose body went over the cap: refused with ng lines. */
void exec_git_push_too_large(struct exec_git_req *g);

/* The worker's whole job: fill the answer of g (exec_git_run.c). */
void exec_git_work(struct exec_git_req *g);

#endif
