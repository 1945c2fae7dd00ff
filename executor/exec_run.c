/*
 * exec_run.c - spawn one command and supervise it to the end.
 *
 * Start: everything the child needs (resolved program path, argv with the
 * bwrap prefix when sandboxed, a minimal envp, resource limits) is built
 * in the parent, so the forked child only makes async-signal-safe system
 * calls: setsid, dup2 of /dev/null and two pipes onto 0/1/2, signal
 * reset, closing every other descriptor but those bwrap reads (the plan's
 * keep list), setrlimit (lowering only), chdir, for a sandbox dropping to
 * the sandbox user (groups, gid, uid, every capability), execve. If any of
 * these fails the child writes {stage, errno} down a close-on-exec status pipe;
 * the parent blocks on that pipe until it reads either that report
 * (FAILED_BEFORE_DISPATCH) or end-of-file (execve succeeded: from then on the
 * outcome can be unknown).
 *
 * Wait: poll the two output pipes and a wake pipe (for cancel) in slices
 * of at most 50 ms, reap with WNOHANG, and at the deadline or on cancel
 * SIGKILL the whole process group. Reaping and killing happen under the
 * run's mutex, so a kill never reaches a recycled pid. When the child
 * ends on its own, what is left of its group is killed too, then the
 * pipes are drained for at most a short grace period.
 */
#include "exec_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_run_int.h"
#include "ig_buf.h"
#include "ig_limits.h"

/* Serialises pipe creation and fork among our own runs. */
static pthread_mutex_t fork_mu = PTHREAD_MUTEX_INITIALIZER;

static double
now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* A close-on-exec pipe whose ends are both above 2. */
static int
pipe_cloexec(int fds[2])
{
    int raw[2], i;

    if (pipe(raw) != 0)
        return -1;
    for (i = 0; i < 2; i++) {
        fds[i] = fcntl(raw[i], F_DUPFD_CLOEXEC, 3);
        (void)close(raw[i]);
    }
    if (fds[0] >= 0 && fds[1] >= 0)
        return 0;
    if (fds[0] >= 0)
        (void)close(fds[0]);
    if (fds[1] >= 0)
        (void)close(fds[1]);
    return -1;
}

static void
close_fd(int *fd)
{
    if (*fd >= 0)
        (void)close(*fd);
    *fd = -1;
}

/* ---- in the child: async-signal-safe calls only ---- */

static _Noreturn void
child_fail(int status_fd, int stage)
{
    int msg[2];
    ssize_t n;

    msg[0] = stage;
    msg[1] = errno;
    /* A parent that cannot be told still sees the exit status 127. */
    n = write(status_fd, msg, sizeof(msg));
    (void)n;
    _exit(127);
}

static void
child_signals(void)
{
    static const int sigs[] = {SIGPIPE, SIGINT,  SIGQUIT, SIGTERM, SIGHUP,
                               SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP,
                               SIGTTIN, SIGTTOU, SIGXCPU, SIGXFSZ};
    struct sigaction sa;
    sigset_t none;
    size_t i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        (void)sigaction(sigs[i], &sa, NULL);
    (void)sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
}

static int
child_rlimits(const struct exec_plan *p)
{
    struct rlimit rl;
    size_t i;

    for (i = 0; i < EXEC_PLAN_NLIMITS; i++) {
        if (getrlimit(p->lim_res[i], &rl) != 0)
            return -1;
        if (rl.rlim_max == RLIM_INFINITY || p->lim_val[i] < rl.rlim_max)
            rl.rlim_max = p->lim_val[i];
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(p->lim_res[i], &rl) != 0)
            return -1;
    }
    return 0;
}

/* 1 when fd is one the plan keeps open for bwrap (or the status pipe). */
static int
child_keeps(const struct exec_plan *p, int fd, int st)
{
    size_t i;

    if (fd == st)
        return 1;
    for (i = 0; i < p->nkeep; i++)
        if (p->keep[i] == fd)
            return 1;
    return 0;
}

static _Noreturn void
child_exec(const struct exec_plan *p, int in, int out, int err, int st)
{
    struct rlimit rl;
    int fd, maxfd = 65536;
    size_t i;

    if (setsid() < 0)
        child_fail(st, EXEC_STAGE_SETSID);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        child_fail(st, EXEC_STAGE_FDS);
    child_signals();
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536)
        maxfd = (int)rl.rlim_cur;
    for (fd = 3; fd < maxfd; fd++)
        if (!child_keeps(p, fd, st))
            (void)close(fd);
    for (i = 0; i < p->nkeep; i++)
        if (fcntl(p->keep[i], F_SETFD, 0) != 0)
            child_fail(st, EXEC_STAGE_FDS);
    if (child_rlimits(p) != 0)
        child_fail(st, EXEC_STAGE_RLIMIT);
    if (chdir(p->cwd) != 0)
        child_fail(st, EXEC_STAGE_CHDIR);
    if (p->switch_user && exec_child_become(p->uid, p->gid) != 0)
        child_fail(st, EXEC_STAGE_USER);
    (void)execve(p->prog, p->argv, p->envp);
    child_fail(st, EXEC_STAGE_EXEC);
}

/* ---- in the parent ---- */

/* Read the child's {stage, errno} report, or EOF after a good execve. */
static void
read_status(struct exec_run *r, int fd)
{
    int msg[2];
    size_t got = 0;
    ssize_t n;

    while (got < sizeof(msg)) {
        n = read(fd, (char *)msg + got, sizeof(msg) - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got == sizeof(msg)) {
        r->spawn_failed = 1;
        r->spawn_stage = msg[0];
        r->spawn_errno = msg[1];
    }
}

/* Pipes, fork, and the status handshake. Under fork_mu. */
static enum ig_status
spawn_locked(struct exec_run *r, const struct exec_plan *p, struct ig_err *err)
{
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, stp[2] = {-1, -1};
    int inp[2] = {-1, -1};
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    enum ig_status st = IG_OK;

    if (devnull < 0 || pipe_cloexec(outp) != 0 || pipe_cloexec(errp) != 0 ||
        pipe_cloexec(stp) != 0 || (r->pipe_in && pipe_cloexec(inp) != 0)) {
        st = ig_err_set(err, IG_ERR_IO, "exec: pipe: %s", strerror(errno));
        goto out;
    }
    r->pid = fork();
    if (r->pid < 0) {
        st = ig_err_set(err, IG_ERR_IO, "exec: fork: %s", strerror(errno));
        goto out;
    }
    if (r->pid == 0)
        child_exec(p, r->pipe_in ? inp[0] : devnull, outp[1], errp[1], stp[1]);
    r->in_fd = inp[1];
    inp[1] = -1;
    r->out_fd = outp[0];
    r->err_fd = errp[0];
    outp[0] = errp[0] = -1;
    close_fd(&stp[1]);
    read_status(r, stp[0]);
out:
    close_fd(&devnull);
    close_fd(&inp[0]);
    close_fd(&inp[1]);
    close_fd(&outp[0]);
    close_fd(&outp[1]);
    close_fd(&errp[0]);
    close_fd(&errp[1]);
    close_fd(&stp[0]);
    close_fd(&stp[1]);
    return st;
}

enum ig_status
exec_run_start(const struct exec_run_opts *o, struct exec_run **out,
               struct ig_err *err)
{
    struct exec_plan plan;
    struct exec_run *r;
    enum ig_status st;

    *out = NULL;
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    r->pid = -1;
    r->out_fd = r->err_fd = r->wake[0] = r->wake[1] = r->in_fd = -1;
    r->pipe_in = o->pipe_stdin;
    r->timeout_ms = o->timeout_ms;
    r->max_output = o->max_output_bytes;
    if (pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r);
        return ig_err_set(err, IG_ERR_NOMEM, "exec: mutex");
    }
    r->t0 = now_ms();
    if ((st = exec_plan_build(o, &plan, err)) != IG_OK) {
        exec_run_free(r);
        return st;
    }
    if (pipe_cloexec(r->wake) != 0 ||
        fcntl(r->wake[1], F_SETFL, O_NONBLOCK) != 0) {
        st = ig_err_set(err, IG_ERR_IO, "exec: pipe: %s", strerror(errno));
    } else if (plan.prog_missing) {
        r->spawn_failed = 1;
        r->spawn_stage = EXEC_STAGE_EXEC;
        r->spawn_errno = ENOENT;
    } else {
        (void)pthread_mutex_lock(&fork_mu);
        st = spawn_locked(r, &plan, err);
        (void)pthread_mutex_unlock(&fork_mu);
    }
    exec_plan_release(&plan);
    if (st != IG_OK) {
        exec_run_free(r);
        return st;
    }
    *out = r;
    return IG_OK;
}

/* SIGKILL the group (and the leader, in case it is not yet a leader).
   Caller holds r->mu; the child is not reaped. */
static void
kill_group_locked(struct exec_run *r)
{
    (void)kill(-r->pid, SIGKILL);
    (void)kill(r->pid, SIGKILL);
}

/* WNOHANG reap; on exit, kill what is left of the group. */
static void
try_reap(struct exec_run *r)
{
    pid_t w;

    (void)pthread_mutex_lock(&r->mu);
    if (!r->reaped && r->pid > 0) {
        w = waitpid(r->pid, &r->status, WNOHANG);
        if (w == r->pid || (w < 0 && errno == ECHILD)) {
            (void)kill(-r->pid, SIGKILL); /* stragglers */
            r->reaped = 1;
        }
    }
    (void)pthread_mutex_unlock(&r->mu);
}

/* Kill at the deadline or on a pending cancel, once. */
static void
enforce(struct exec_run *r, double now)
{
    (void)pthread_mutex_lock(&r->mu);
    if (!r->reaped && !r->killed) {
        if (r->cancel_req) {
            r->cancel_kill = r->killed = 1;
            kill_group_locked(r);
        } else if (now >= r->t0 + r->timeout_ms) {
            r->timeout_kill = r->killed = 1;
            kill_group_locked(r);
        }
    }
    (void)pthread_mutex_unlock(&r->mu);
}

void
exec_run_cancel(struct exec_run *r)
{
    if (r == NULL)
        return;
    (void)pthread_mutex_lock(&r->mu);
    r->cancel_req = 1;
    if (r->pid > 0 && !r->reaped && !r->killed) {
        r->cancel_kill = r->killed = 1;
        kill_group_locked(r);
    }
    (void)pthread_mutex_unlock(&r->mu);
    if (r->wake[1] >= 0) {
        /* A full pipe already holds a wake-up: nothing is lost. */
        ssize_t n = write(r->wake[1], "x", 1);
        (void)n;
    }
}

void
exec_run_free(struct exec_run *r)
{
    if (r == NULL)
        return;
    (void)pthread_mutex_lock(&r->mu);
    if (r->pid > 0 && !r->reaped) {
        kill_group_locked(r);
        while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
            ;
        r->reaped = 1;
    }
    (void)pthread_mutex_unlock(&r->mu);
    close_fd(&r->in_fd);
    close_fd(&r->out_fd);
    close_fd(&r->err_fd);
    close_fd(&r->wake[0]);
    close_fd(&r->wake[1]);
    (void)pthread_mutex_destroy(&r->mu);
    free(r);
}

/* One readable pipe: stream the chunk, keep what fits under the cap. */
static enum ig_status
read_chunk(struct exec_run *r, int *fd, const char *name, struct ig_buf *b,
           int *trunc, exec_output_fn fn, void *ctx)
{
    char chunk[16384];
    ssize_t n = read(*fd, chunk, sizeof(chunk));
    size_t keep;

    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? IG_OK : IG_ERR_IO;
    if (n == 0) {
        close_fd(fd);
        return IG_OK;
    }
    if (fn != NULL)
        fn(ctx, name, chunk, (size_t)n);
    keep = r->max_output - b->len;
    if ((size_t)n > keep)
        *trunc = 1;
    else
        keep = (size_t)n;
    return keep == 0 ? IG_OK : ig_buf_add(b, chunk, keep);
}

/* One poll slice over the open pipes and the wake pipe. */
static enum ig_status
poll_once(struct exec_run *r, double slice, struct exec_run_result *res,
          struct ig_buf bufs[2], exec_output_fn fn, void *ctx)
{
    struct pollfd pf[3];
    enum ig_status st = IG_OK;
    char sink[64];
    nfds_t n = 0;

    pf[n].fd = r->wake[0];
    pf[n++].events = POLLIN;
    pf[n].fd = r->out_fd;
    pf[n++].events = POLLIN;
    pf[n].fd = r->err_fd; /* a negative fd is ignored by poll */
    pf[n++].events = POLLIN;
    if (poll(pf, n, (int)(slice < 0 ? 0 : slice)) <= 0)
        return IG_OK;
    if (pf[0].revents != 0) {
        /* Only draining wake-ups: cancel_req says what they meant. */
        ssize_t got = read(r->wake[0], sink, sizeof(sink));
        (void)got;
    }
    if (pf[1].revents != 0)
        st = read_chunk(r, &r->out_fd, "stdout", &bufs[0], &res->out_truncated,
                        fn, ctx);
    if (st == IG_OK && pf[2].revents != 0)
        st = read_chunk(r, &r->err_fd, "stderr", &bufs[1], &res->err_truncated,
                        fn, ctx);
    return st;
}

/* Outcome, exit status and captured text from a finished run. */
static enum ig_status
fill_result(struct exec_run *r, struct exec_run_result *res,
            struct ig_buf bufs[2], struct ig_err *err)
{
    res->exit_code = -1;
    res->elapsed_ms = now_ms() - r->t0;
    res->timed_out = r->timeout_kill;
    res->cancelled = r->cancel_kill;
    if (r->pid > 0 && WIFEXITED(r->status))
        res->exit_code = WEXITSTATUS(r->status);
    else if (r->pid > 0 && WIFSIGNALED(r->status))
        res->term_signal = WTERMSIG(r->status);
    if (r->spawn_failed) {
        res->outcome = EXEC_OUTCOME_FAILED_BEFORE_DISPATCH;
        res->spawn_errno = r->spawn_errno;
    } else if (r->killed) {
        res->outcome = EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH;
    } else {
        res->outcome = EXEC_OUTCOME_COMPLETED;
    }
    res->out = ig_buf_take(&bufs[0], &res->out_len);
    res->err = ig_buf_take(&bufs[1], &res->err_len);
    if (res->out == NULL || res->err == NULL) {
        exec_run_result_release(res);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    return IG_OK;
}

enum ig_status
exec_run_wait(struct exec_run *r, exec_output_fn fn, void *ctx,
              struct exec_run_result *res, struct ig_err *err)
{
    struct ig_buf bufs[2];
    enum ig_status st = IG_OK;
    double now, reaped_at = 0, slice;

    memset(res, 0, sizeof(*res));
    ig_buf_init(&bufs[0], r->max_output);
    ig_buf_init(&bufs[1], r->max_output);
    for (;;) {
        now = now_ms();
        enforce(r, now);
        try_reap(r);
        if (r->reaped || r->pid <= 0) {
            if (reaped_at == 0)
                reaped_at = now;
            if ((r->out_fd < 0 && r->err_fd < 0) ||
                now - reaped_at >= IG_EXEC_DRAIN_GRACE_MS)
                break;
        }
        slice = r->t0 + r->timeout_ms - now;
        if (r->killed || slice > IG_EXEC_POLL_SLICE_MS)
            slice = IG_EXEC_POLL_SLICE_MS;
        if ((st = poll_once(r, slice, res, bufs, fn, ctx)) != IG_OK) {
            st = ig_err_set(err, st, "exec: reading output: %s",
                            st == IG_ERR_NOMEM ? "out of memory"
                                               : strerror(errno));
            break;
        }
    }
    if (st == IG_OK) {
        st = fill_result(r, res, bufs, err);
    } else {
        (void)pthread_mutex_lock(&r->mu);
        if (r->pid > 0 && !r->reaped)
            kill_group_locked(r);
        r->killed = 1;
        (void)pthread_mutex_unlock(&r->mu);
        res->outcome = r->spawn_failed ? EXEC_OUTCOME_FAILED_BEFORE_DISPATCH
                                       : EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH;
    }
    ig_buf_release(&bufs[0]);
    ig_buf_release(&bufs[1]);
    close_fd(&r->out_fd);
    close_fd(&r->err_fd);
    return st;
}

void
exec_run_take_stdio(struct exec_run *r, int *in_fd, int *out_fd)
{
    *in_fd = r->in_fd;
    *out_fd = r->out_fd;
    r->in_fd = r->out_fd = -1;
}

void
exec_run_result_release(struct exec_run_result *res)
{
    if (res == NULL)
        return;
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
    res->out_len = res->err_len = 0;
}
