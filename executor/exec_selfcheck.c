/*
 * exec_selfcheck.c - the executor proves, before it serves, that its
 * sandbox shows nothing of its own.
 *
 * For each sandboxed exec action, the executor's own binary is bound into
 * that action's real sandbox (the same layout, binds, network setting and
 * sandbox user) at EXEC_SANDBOX_PROBE and run as
 *     /.intentgate-probe __sandbox-probe PATH...
 * The probe (exec_probe_main, inside) tries to lstat, open and read (or
 * list) each path, as given and through /proc/self/root and
 * /proc/1/root, and prints "visible PATH" for each that answers, then
 * "probe done N". The paths are the executor's own files and directories
 * (config, registry, secrets, key, token, public keys, work and spool
 * directories, everything in `protect` - in dev mode the PDP's data
 * directory) and the host's /run, /var, /home, /root, /srv,
 * /etc/intentgate, /etc/intentgate-executor (skipped where a bind puts
 * something below them on purpose). Any visible path, a probe that does
 * not run, or one that does not finish, refuses the start - fail closed,
 * naming the action and the path.
 */
#include "exec_selfcheck.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_runner.h"
#include "exec_sandbox.h"
#include "ig_limits.h"

#define PROBE_VERB "__sandbox-probe"
#define PROBE_PATH_MAX IG_PATH_MAX
/* Paths probed per own path: as given, /proc/self/root, /proc/1/root. */
#define PROBE_VARIANTS 3

#define HOST_DIRS 8
static const char *const host_dirs[HOST_DIRS] = {"/run",
                                                 "/var",
                                                 "/home",
                                                 "/root",
                                                 "/srv",
                                                 "/etc/intentgate",
                                                 "/etc/intentgate-executor",
                                                 "/etc/shadow"};

/* ---- inside the sandbox ---- */

/* 1 when path answers lstat, open+read, or opendir. */
static int
probe_one(const char *path)
{
    struct stat sb;
    char byte;
    DIR *d;
    int fd, seen = lstat(path, &sb) == 0;

    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got;

        seen = 1;
        /* The open already saw it; the read only tries for more. */
        got = read(fd, &byte, 1);
        (void)got;
        (void)close(fd);
    }
    if ((d = opendir(path)) != NULL) {
        seen = 1;
        (void)closedir(d);
    }
    return seen;
}

_Noreturn void
exec_probe_main(int argc, char **argv)
{
    int i, n = 0;

    for (i = 2; i < argc; i++) {
        if (probe_one(argv[i])) {
            (void)printf("visible %s\n", argv[i]);
            n++;
        }
    }
    (void)printf("probe done %d\n", argc - 2);
    (void)fflush(stdout);
    _exit(n > 0 ? 1 : 0); /* no atexit work inside the sandbox */
}

/* ---- outside ---- */

/* 1 when some bind of the action puts its dest at or below dir. */
static int
bind_below(const struct exec_bind *b, size_t nb, const char *dir)
{
    size_t i, n = strlen(dir);

    for (i = 0; i < nb; i++)
        if (strncmp(b[i].dest, dir, n) == 0 &&
            (b[i].dest[n] == '\0' || b[i].dest[n] == '/'))
            return 1;
    return 0;
}

/* argv for the probe: verb and each path in its variants. */
static enum ig_status
probe_argv(const struct exec_action *a, const char *const *own, size_t nown,
           char ***out, size_t *argc, struct ig_err *err)
{
    static const char *const pre[PROBE_VARIANTS] = {"", "/proc/self/root",
                                                    "/proc/1/root"};
    size_t cap = 2 + PROBE_VARIANTS * (nown + HOST_DIRS), n = 0, i, k, nb;
    const struct exec_bind *b = exec_action_binds(a, &nb);
    char **v = calloc(cap + 1, sizeof(*v)), buf[PROBE_PATH_MAX];

    if (v == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    v[n++] = strdup(EXEC_SANDBOX_PROBE);
    v[n++] = strdup(PROBE_VERB);
    for (i = 0; i < nown + HOST_DIRS; i++) {
        const char *p = i < nown ? own[i] : host_dirs[i - nown];
        if (i >= nown && bind_below(b, nb, p))
            continue;
        for (k = 0; k < PROBE_VARIANTS && n < cap; k++) {
            (void)snprintf(buf, sizeof(buf), "%s%s", pre[k], p);
            v[n++] = strdup(buf);
        }
    }
    *argc = n;
    *out = v;
    for (i = 0; i < n; i++)
        if (v[i] == NULL)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

/* The probe's verdict from its output. */
static enum ig_status
verdict(const struct exec_action *a, const struct exec_run_result *rr,
        struct ig_err *err)
{
    const char *v = rr->out != NULL ? strstr(rr->out, "visible ") : NULL;
    size_t n;

    if (v != NULL) {
        v += 8;
        n = strcspn(v, "\n");
        return ig_err_set(err, IG_ERR_INVALID,
                          "sandbox self-check: action \"%.64s\" can see "
                          "%.*s from inside its sandbox: refusing to start "
                          "(move the file out of what the sandbox binds, "
                          "or fix the bind)",
                          exec_action_name(a), (int)(n > 300 ? 300 : n), v);
    }
    if (rr->outcome != EXEC_OUTCOME_COMPLETED || rr->exit_code != 0 ||
        rr->out == NULL || strstr(rr->out, "probe done ") == NULL)
        return ig_err_set(err, IG_ERR_IO,
                          "sandbox self-check: action \"%.64s\": the probe "
                          "did not run (exit %d, signal %d%s): %.200s",
                          exec_action_name(a), rr->exit_code, rr->term_signal,
                          rr->spawn_errno != 0 ? ", could not switch to the "
                                                 "sandbox user or start bwrap"
                                               : "",
                          rr->err != NULL ? rr->err : "");
    return IG_OK;
}

/* Probe one action's sandbox. */
static enum ig_status
check_action(const struct exec_action *a, const struct exec_runner_env *env,
             const char *exe, const char *const *own, size_t nown,
             struct ig_err *err)
{
    const json_t *settings = exec_action_settings(a);
    struct exec_run_opts o;
    struct exec_run_result rr;
    struct exec_run *run = NULL;
    enum ig_status st;
    char **argv = NULL;
    size_t argc = 0;

    memset(&rr, 0, sizeof(rr));
    st = probe_argv(a, own, nown, &argv, &argc, err);
    memset(&o, 0, sizeof(o));
    o.argv = argv;
    o.argc = argc;
    o.sandbox = 1;
    o.network = json_is_true(json_object_get(settings, "network"));
    o.timeout_ms = 20000;
    o.max_output_bytes = 64 * 1024;
    /* Our own binary with fixed arguments: no address-space cap (a
       sanitizer build reserves terabytes of shadow memory). */
    o.address_space_bytes = RLIM_INFINITY;
    o.binds = exec_action_binds(a, &o.nbinds);
    o.probe_exe = exe;
    o.switch_user = env->switch_user;
    o.uid = env->uid;
    o.gid = env->gid;
    if (st == IG_OK && (st = exec_run_start(&o, &run, err)) == IG_OK &&
        (st = exec_run_wait(run, NULL, NULL, &rr, err)) == IG_OK)
        st = verdict(a, &rr, err);
    exec_run_result_release(&rr);
    exec_run_free(run);
    exec_argv_free(argv, argc);
    return st;
}

enum ig_status
exec_selfcheck(const struct exec_registry *r, const struct exec_runner_env *env,
               const char *const *own, size_t nown, struct ig_err *err)
{
    char exe[PROBE_PATH_MAX];
    const struct exec_action *a;
    enum ig_status st;
    ssize_t n;
    size_t i;

    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return ig_err_set(err, IG_ERR_IO,
                          "sandbox self-check: cannot find my own binary");
    exe[n] = '\0';
    for (i = 0; (a = exec_registry_at(r, i)) != NULL; i++) {
        if (exec_action_handler(a) != EXEC_HANDLER_EXEC ||
            !exec_runner_needs_sandbox(exec_action_settings(a)))
            continue;
        if ((st = check_action(a, env, exe, own, nown, err)) != IG_OK)
            return st;
    }
    return IG_OK;
}

int
exec_probe_verb(const char *arg)
{
    return strcmp(arg, PROBE_VERB) == 0;
}
