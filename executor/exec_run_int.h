/*
 * exec_run_int.h - private to exec_run.c and exec_run_plan.c: the state of
 * one run, and the spawn plan built in the parent before fork.
 */
#ifndef EXEC_RUN_INT_H
#define EXEC_RUN_INT_H

#include <pthread.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "exec_sandbox.h"
#include "ig_limits.h"

/* Where the child failed before its program ran. */
enum exec_stage {
    EXEC_STAGE_SETSID = 1,
    EXEC_STAGE_FDS,
    EXEC_STAGE_RLIMIT,
    EXEC_STAGE_CHDIR,
    EXEC_STAGE_USER,
    EXEC_STAGE_EXEC
};

#define EXEC_PLAN_NLIMITS 4
/* Descriptors the child keeps open for bwrap: the two stub files, the
   self-check's probe binary and one per bind. */
#define EXEC_PLAN_MAX_FDS (3 + IG_EXEC_MAX_BINDS)

/* A NULL-terminated vector of malloc'd strings with a fixed capacity. */
struct exec_vec {
    char **v;
    size_t n, cap;
};

/* Room for cap strings (and the NULL); -1 when out of memory. */
int exec_vec_init(struct exec_vec *s, size_t cap);
/* Append the concatenation of a, b and c (b, c may be NULL); -1 when out
   of memory or past the capacity. */
int exec_vec_push(struct exec_vec *s, const char *a, const char *b,
                  const char *c);
/* Free a NULL-terminated vector of strings. NULL is fine. */
void exec_vec_free(char **v);

/* Everything the forked child needs, so it allocates nothing. */
struct exec_plan {
    char *prog;  /* path given to execve */
    char **argv; /* NULL-terminated */
    char **envp; /* NULL-terminated */
    size_t argc, envc;
    const char *cwd;  /* workdir or "/"; borrowed from the options */
    int prog_missing; /* the program was not found: do not fork */
    int lim_res[EXEC_PLAN_NLIMITS];
    rlim_t lim_val[EXEC_PLAN_NLIMITS];
    int keep[EXEC_PLAN_MAX_FDS]; /* opened for bwrap; closed by release */
    size_t nkeep;
    int switch_user; /* the child becomes uid/gid before execve */
    uid_t uid;
    gid_t gid;
};

/*
 * Append the sandbox's bwrap options for o (everything between the bwrap
 * path and "--"; see exec_layout.c) to s, opening the descriptors bwrap
 * reads (stub /etc files, binds, the probe binary) into p->keep.
 * IG_ERR_NOMEM, IG_ERR_IO (a bind's source cannot be opened).
 */
enum ig_status exec_layout_push(const struct exec_run_opts *o,
                                struct exec_vec *s, struct exec_plan *p,
                                struct ig_err *err) IG_WUR;

/*
 * In a forked child, async-signal-safe: become uid/gid for good - no
 * supplementary groups, real/effective/saved ids, no capability in any
 * set, no_new_privs - and check it took. 0, or -1 with errno
 * (exec_run_user.c).
 */
int exec_child_become(uid_t uid, gid_t gid);

/* The bubblewrap state (exec_sandbox.c), written by the probe
   (exec_sandbox_probe.c) and read by run plans. */

/* The first executable bwrap (fixed paths, then PATH), kept; NULL. */
const char *exec_sandbox_find_bwrap(void);
/* Mark this thread as planning the probe's own run (1) or not (0). */
void exec_sandbox_set_probing(int on);
/* 1 while this thread plans the probe's own run (it must not wait for a
   verdict). */
int exec_sandbox_probing(void);
/* Record the probe's verdict (why: one line, when it failed). Once. */
void exec_sandbox_set_verdict(enum ig_status st, const char *why);
/* IG_OK once the probe has passed; else why not (not probed yet: IG_ERR_IO).
   Thread safe. */
enum ig_status exec_sandbox_verdict(struct ig_err *err) IG_WUR;

/* Most bwrap options exec_layout_push appends, without env and binds. */
#define EXEC_LAYOUT_MAX_OPTS 160

/*
 * Build the plan from o: resolve argv[0], prefix bwrap when sandboxed
 * (only once the probe has passed: fails closed), copy argv and env.
 * IG_ERR_INVALID, IG_ERR_NOMEM, or the probe's error. Release with
 * exec_plan_release.
 */
enum ig_status exec_plan_build(const struct exec_run_opts *o,
                               struct exec_plan *p, struct ig_err *err) IG_WUR;
void exec_plan_release(struct exec_plan *p);

struct exec_run {
    pthread_mutex_t mu; /* guards pid reaping, killing and the flags */
    pid_t pid;          /* -1 when nothing was forked */
    int status;         /* from waitpid */
    int reaped, killed, cancel_req, cancel_kill, timeout_kill;
    int spawn_failed, spawn_stage, spawn_errno;
    int out_fd, err_fd, wake[2];
    int pipe_in, in_fd;    /* stdin is a pipe whose write end is in_fd */
    double t0, timeout_ms; /* CLOCK_MONOTONIC, ms */
    size_t max_output;
};

#endif
