/*
 * exec_sandbox.h - the `exec` handler's building blocks: fill an argv
 * template from validated parameters, check that bubblewrap works here,
 * and run a command (optionally inside bwrap) with a deadline, resource
 * limits, captured output and a cancel switch.
 *
 * No shell is ever involved: the argv goes to execve as built. The child
 * never sees the executor's environment (it holds secrets): its envp is
 * PATH=/usr/bin:/bin plus the registry entry's "env" object, nothing else.
 * The child runs in its own session and process group with stdin on
 * /dev/null and every other descriptor above 2 closed; a timeout or a
 * cancel kills the whole group with SIGKILL.
 */
#ifndef EXEC_SANDBOX_H
#define EXEC_SANDBOX_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "exec_http.h"     /* enum exec_outcome */
#include "exec_registry.h" /* struct exec_bind */
#include "ig_error.h"
#include "ig_limits.h"

/* Longest argv element, in bytes. (Count cap: IG_EXEC_MAX_ARGV.) */
#define EXEC_ARGV_ELEM_MAX IG_EXEC_ARGV_ELEM_MAX

/* Resource limit defaults, used when a field of exec_run_opts is 0. */
#define EXEC_RLIMIT_CPU_DEFAULT 10
#define EXEC_RLIMIT_AS_DEFAULT (1024ULL * 1024 * 1024)
#define EXEC_RLIMIT_NOFILE_DEFAULT 256
#define EXEC_RLIMIT_NPROC_DEFAULT 64

/*
 * Fill the "exec" settings' argv template with params (already checked by
 * exec_params_check): a literal element is copied, "{name}" becomes the
 * string or the canonical text of the number parameter, "{name...}"
 * splices an array-of-strings parameter (absent: nothing). The final
 * argv[0] must be one of "allow" when present. IG_ERR_INVALID for a
 * missing or mistyped parameter, a NUL byte, an empty argv or a refused
 * program (err names it); IG_ERR_LIMIT past IG_EXEC_MAX_ARGV elements or
 * EXEC_ARGV_ELEM_MAX bytes in one; IG_ERR_NOMEM. On success *argv_out is a
 * malloc'd, NULL-terminated array of *argc_out malloc'd strings (free with
 * exec_argv_free); on failure it is NULL. Thread safe.
 */
enum ig_status exec_argv_build(const json_t *settings, const json_t *params,
                               char ***argv_out, size_t *argc_out,
                               struct ig_err *err) IG_WUR;

/* Free an argv from exec_argv_build. NULL is fine. */
void exec_argv_free(char **argv, size_t argc);

/*
 * IG_OK when bubblewrap is installed (/usr/bin/bwrap, /usr/local/bin/bwrap,
 * then the executor's PATH) and really runs a fully unshared /bin/true
 * here; else IG_ERR_NOTFOUND (not installed) or IG_ERR_IO (it fails, e.g.
 * user namespaces are forbidden) with err saying why. Probed once per
 * process; later calls return the cached answer. Thread safe. A
 * sandboxed exec_run_start is refused until this has returned IG_OK once
 * (exec_sandbox_probe.c): call it first, as start-up and exec_admit do.
 */
enum ig_status exec_sandbox_probe(struct ig_err *err) IG_WUR;

/* The bwrap path found by a successful probe, else NULL. Static. */
const char *exec_sandbox_bwrap(void);

/* The sandbox's working directory (a tmpfs), and where the self-check's
   probe binary is bound. */
#define EXEC_SANDBOX_SCRATCH "/scratch"
#define EXEC_SANDBOX_PROBE "/.intentgate-probe"
/* The sandbox's own uid and gid, inside its user namespace. */
#define EXEC_SANDBOX_ID 1000

struct exec_run_opts {
    char *const *argv; /* argv[0]: a path, or a name looked up in
                          /usr/bin:/bin */
    size_t argc;
    int sandbox;       /* 1: inside bwrap (fails closed when the probe fails) */
    int network;       /* sandbox only: 1 keeps the host network */
    double timeout_ms; /* wall clock; > 0 */
    size_t max_output_bytes; /* captured per stream; > 0 */
    const char *workdir;     /* without a sandbox: NULL or an existing
                                directory, the cwd; with one: must be NULL
                                (the cwd is a fresh tmpfs, /scratch) */
    const json_t *env;       /* NULL or an object of strings */
    /* Sandbox only: the size of /scratch and /tmp (0: the default), extra
       binds, and a file to bind at EXEC_SANDBOX_PROBE (the self-check). */
    unsigned long long scratch_bytes;
    const struct exec_bind *binds;
    size_t nbinds;
    const char *probe_exe;
    /* Sandbox only: the child drops to this host uid/gid before it starts
       bwrap, so what it runs is not the executor's user. */
    int switch_user;
    uid_t uid;
    gid_t gid;
    /* Resource limits; 0 takes the EXEC_RLIMIT_*_DEFAULT. Only lowered: a
       value above the current hard limit is clamped to it. */
    unsigned long cpu_seconds;
    unsigned long long address_space_bytes;
    unsigned long open_files;
    unsigned long processes; /* RLIMIT_NPROC: counts all processes of the
                                user (and the kernel exempts root) */
    /* 1: stdin is a pipe, not /dev/null (a long-lived server that talks
       over stdio: take both ends with exec_run_take_stdio). */
    int pipe_stdin;
};

/* Called for every chunk read, as it arrives (all of it, beyond the cap). */
typedef void (*exec_output_fn)(void *ctx, const char *stream, const char *data,
                               size_t len);

struct exec_run_result {
    enum exec_outcome outcome;
    int exit_code;   /* when it exited, else -1 */
    int term_signal; /* the signal that ended it, else 0 */
    int timed_out;   /* we killed it at the deadline */
    int cancelled;   /* we killed it on exec_run_cancel */
    int spawn_errno; /* FAILED_BEFORE_DISPATCH: why, when a call failed */
    char *out;       /* stdout, NUL-terminated, malloc'd (may be NULL) */
    size_t out_len;
    int out_truncated;
    char *err; /* stderr, likewise */
    size_t err_len;
    int err_truncated;
    double elapsed_ms;
};

struct exec_run;

/*
 * Spawn the command described by o (copied; o and its strings may go
 * after the call). IG_OK: *out is a run to wait for, even when the
 * program could not be executed (exec_run_wait then reports
 * FAILED_BEFORE_DISPATCH). Errors (nothing was started): IG_ERR_INVALID
 * for bad options, IG_ERR_NOTFOUND / IG_ERR_IO when a sandbox is demanded
 * but bwrap does not work here, IG_ERR_IO when fork or pipe fails,
 * IG_ERR_NOMEM. Thread safe.
 */
enum ig_status exec_run_start(const struct exec_run_opts *o,
                              struct exec_run **out, struct ig_err *err) IG_WUR;

/*
 * Block until the child is reaped: stream its output to fn (may be NULL),
 * capture up to max_output_bytes of each stream, kill the process group
 * at the deadline, and fill *res (release with exec_run_result_release).
 * When the child ends by itself, stragglers left in its group are killed
 * too. Call once per run, from one thread. IG_OK whenever an outcome was
 * determined; IG_ERR_NOMEM / IG_ERR_IO otherwise (the group is killed).
 */
enum ig_status exec_run_wait(struct exec_run *r, exec_output_fn fn, void *ctx,
                             struct exec_run_result *res,
                             struct ig_err *err) IG_WUR;

/*
 * Kill the run's process group; the waiter reports cancelled = 1 when the
 * child had not ended yet. Any thread, any time before exec_run_free.
 */
void exec_run_cancel(struct exec_run *r);

/* Kill (if still running), reap and free. NULL is fine. */
void exec_run_free(struct exec_run *r);

/*
 * Take the write end of the child's stdin (with pipe_stdin; else -1) and
 * the read end of its stdout: the caller owns and closes both, and
 * exec_run_wait then captures stderr only. Call before exec_run_wait.
 */
void exec_run_take_stdio(struct exec_run *r, int *in_fd, int *out_fd);

/* Free the captured output. NULL is fine. */
void exec_run_result_release(struct exec_run_result *res);

#endif
