/*
 * exec_git_ff.h - the git gateway's fast_forward_only check
 * (exec_git_ff.c): every update of a push must be a fast-forward of the
 * upstream's ref, as git itself decides it.
 */
#ifndef EXEC_GIT_FF_H
#define EXEC_GIT_FF_H

#include <stdint.h>

#include "exec_git_pkt.h"
#include "exec_registry.h"
#include "exec_secrets.h"

struct exec_git_ff_in {
    const struct exec_git_repo *repo;
    const struct exec_secrets *secrets;
    const char *spool_dir; /* the cache repositories live below it */
    const struct exec_git_push *push;
    int body_fd; /* the push's body (its file offset is moved) */
    uint64_t body_len;
};

/*
 * NULL when every update (old and new ids non-zero) of the push is a
 * fast-forward; else the reason, for git's ng lines ("intentgate: ..."):
 * not a fast-forward, or the check could not run (git missing, the
 * upstream unreachable or its ref moved, a broken pack): the push is then
 * refused. Blocks on git and the upstream; thread safe (one check at a
 * time).
 */
const char *exec_git_ff_check(const struct exec_git_ff_in *in);

#endif
