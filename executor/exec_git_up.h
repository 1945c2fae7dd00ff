/*
 * exec_git_up.h - the git gateway's one call to an upstream repository
 * (exec_git_up.c): the credential injected, the body streamed from a file,
 * the answer written to a file, capped.
 */
#ifndef EXEC_GIT_UP_H
#define EXEC_GIT_UP_H

#include <stdint.h>

#include "exec_registry.h"
#include "exec_secrets.h"
#include "ig_error.h"

/* The longest credential spelling searched for in answers, in bytes. */
#define EXEC_GIT_NEEDLE_MAX 1024

struct exec_git_call {
    const struct exec_git_repo *repo;
    const struct exec_secrets *secrets;
    const char *url;          /* the repository URL + the endpoint */
    const char *content_type; /* of the body, or NULL (a GET) */
    int gzip;                 /* the body is gzip-encoded */
    const char *git_protocol; /* "" or the agent's Git-Protocol value */
    int body_fd;              /* -1: GET */
    uint64_t body_len;
    int reply_fd; /* the answer's body goes here, from offset 0 */
    /* Optional, called on the calling thread: the answer's status and
       content type when its first byte (or its end) arrives, and then
       the number of bytes written to reply_fd that may be passed on. */
    void (*on_start)(void *ctx, long status, const char *content_type);
    void (*on_progress)(void *ctx, uint64_t safe_len);
    void *ctx;
};

struct exec_git_up {
    long status;
    char content_type[96];
    uint64_t reply_len;
    int sent;      /* the request may have reached the upstream */
    int reflected; /* the answer held the credential: the call was cut */
};

/*
 * Make the call. IG_OK when the upstream answered (any status; *out says
 * what came back); IG_ERR_IO when it could not be reached, timed out,
 * answered more than max_reply_bytes, or the answer could not be
 * written (out->sent says whether the request may have gone out);
 * IG_ERR_NOMEM; the credential's own errors. The credential is wiped
 * from every buffer of ours before returning. Thread safe (one libcurl
 * handle per thread).
 */
enum ig_status exec_git_up_call(const struct exec_git_call *call,
                                struct exec_git_up *out,
                                struct ig_err *err) IG_WUR;

/*
 * The header line the upstream gets the credential in ("Authorization:
 * Basic ..." or "<header>: <prefix><credential>"), in ig_secmem memory:
 * the caller wipes it with ig_secmem_put. For git runs of our own
 * (exec_git_ff.c). IG_OK, or the credential's errors, IG_ERR_NOMEM.
 */
enum ig_status exec_git_up_credential(const struct exec_git_repo *repo,
                                      const struct exec_secrets *secrets,
                                      char **line, struct ig_err *err) IG_WUR;

#endif
