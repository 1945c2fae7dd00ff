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
};

struct exec_git_up {
    long status;
    char content_type[96];
    uint64_t reply_len;
    int sent;      /* the request may have reached the upstream */
    int reflected; /* a 200 answer holds the credential: withhold it */
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

#endif
