/*
 * exec_run_plan.c - turn exec_run_opts into the exact execve call, in the
 * parent, before fork.
 *
 * The program name is resolved against PATH=/usr/bin:/bin (the only PATH
 * the child gets); a name found nowhere means nothing is started. The
 * envp is built from scratch - PATH plus the registry entry's env - and
 * never copies the executor's own environment. With a sandbox the real
 * command becomes the tail of a bwrap command line whose options
 * exec_layout.c builds (a root made from an allowlist, tmpfs /scratch as
 * the cwd, every namespace unshared), and the child drops to the sandbox
 * user before it starts bwrap.
 */
#include "exec_run_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_json.h"
#include "ig_limits.h"

#define EXEC_PATH "/usr/bin:/bin"

/* The executable path for name, or NULL when it is found nowhere. */
static char *
resolve(const char *name, int must_exist)
{
    static const char *const dirs[] = {"/usr/bin/", "/bin/", NULL};
    struct exec_vec one;
    size_t i;

    if (strchr(name, '/') != NULL) {
        if (must_exist && access(name, X_OK) != 0)
            return NULL;
        return strdup(name);
    }
    for (i = 0; dirs[i] != NULL; i++) {
        if (exec_vec_init(&one, 1) != 0)
            return NULL;
        if (exec_vec_push(&one, dirs[i], name, NULL) == 0 &&
            access(one.v[0], X_OK) == 0) {
            char *found = one.v[0];
            free(one.v);
            return found;
        }
        exec_vec_free(one.v);
    }
    return NULL;
}

static enum ig_status
check_opts(const struct exec_run_opts *o, struct ig_err *err)
{
    const char *k;
    json_t *v;

    if (o->argv == NULL || o->argc == 0 || o->argc > IG_EXEC_MAX_ARGV ||
        o->argv[0] == NULL || o->argv[0][0] == '\0')
        return ig_err_set(err, IG_ERR_INVALID, "exec: empty argv");
    if (!isfinite(o->timeout_ms) || o->timeout_ms <= 0 ||
        o->timeout_ms > IG_EXEC_RUN_TIMEOUT_MAX_MS)
        return ig_err_set(err, IG_ERR_INVALID, "exec: bad timeout");
    if (o->max_output_bytes == 0 ||
        o->max_output_bytes > IG_EXEC_MAX_OUTPUT_BYTES)
        return ig_err_set(err, IG_ERR_INVALID, "exec: bad max_output_bytes");
    if (o->workdir != NULL && o->workdir[0] != '/')
        return ig_err_set(err, IG_ERR_INVALID,
                          "exec: workdir must be an absolute path");
    if (o->sandbox && o->workdir != NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "exec: a sandbox works in its own /scratch");
    if (o->scratch_bytes > IG_EXEC_SCRATCH_MAX ||
        o->nbinds > IG_EXEC_MAX_BINDS || (o->nbinds > 0 && o->binds == NULL))
        return ig_err_set(err, IG_ERR_INVALID, "exec: bad sandbox options");
    if (o->switch_user && (o->uid == 0 || o->gid == 0))
        return ig_err_set(err, IG_ERR_INVALID,
                          "exec: the sandbox user must not be root");
    if (o->env != NULL && !json_is_object(o->env))
        return ig_err_set(err, IG_ERR_INVALID, "exec: env: not an object");
    json_object_foreach(ig_json_unconst(o->env), k, v)
    {
        if (k[0] == '\0' || strchr(k, '=') != NULL || !json_is_string(v) ||
            strlen(json_string_value(v)) != json_string_length(v))
            return ig_err_set(err, IG_ERR_INVALID, "exec: env: bad entry");
    }
    return IG_OK;
}

/* envp: PATH (unless env sets it) and env, as "K=V". */
static int
build_envp(const struct exec_run_opts *o, struct exec_plan *p)
{
    struct exec_vec s;
    const char *k;
    json_t *v;

    if (exec_vec_init(&s, json_object_size(o->env) + 1) != 0)
        return -1;
    p->envp = s.v;
    if (json_object_get(o->env, "PATH") == NULL &&
        exec_vec_push(&s, "PATH=", EXEC_PATH, NULL) != 0)
        return -1;
    json_object_foreach(ig_json_unconst(o->env), k, v)
    {
        if (exec_vec_push(&s, k, "=", json_string_value(v)) != 0)
            return -1;
    }
    p->envc = s.n;
    return 0;
}

/* argv: [bwrap options --] program args... */
static enum ig_status
build_argv(const struct exec_run_opts *o, struct exec_plan *p,
           struct ig_err *err)
{
    const char *bwrap = NULL;
    struct exec_vec s;
    enum ig_status st;
    size_t i, cap = o->argc;
    int bad = 0;

    if (o->sandbox) {
        if ((bwrap = exec_sandbox_bwrap()) == NULL)
            return exec_sandbox_verdict(err); /* not probed, or failed */
        cap +=
            EXEC_LAYOUT_MAX_OPTS + 3 * (json_object_size(o->env) + o->nbinds);
    }
    if (exec_vec_init(&s, cap) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    p->argv = s.v;
    if (bwrap != NULL) {
        bad = exec_vec_push(&s, bwrap, NULL, NULL);
        if (bad == 0 && (st = exec_layout_push(o, &s, p, err)) != IG_OK) {
            p->argc = s.n;
            return st;
        }
        bad |= exec_vec_push(&s, "--", NULL, NULL);
    }
    /* In the sandbox the program runs by its resolved path. */
    bad |= exec_vec_push(&s, bwrap != NULL ? p->prog : o->argv[0], NULL, NULL);
    for (i = 1; i < o->argc; i++)
        bad |= exec_vec_push(&s, o->argv[i], NULL, NULL);
    p->argc = s.n;
    if (bad)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

enum ig_status
exec_plan_build(const struct exec_run_opts *o, struct exec_plan *p,
                struct ig_err *err)
{
    static const int res[EXEC_PLAN_NLIMITS] = {RLIMIT_CPU, RLIMIT_AS,
                                               RLIMIT_NOFILE, RLIMIT_NPROC};
    enum ig_status st;
    size_t i;

    memset(p, 0, sizeof(*p));
    if ((st = check_opts(o, err)) != IG_OK)
        return st;
    /* Fail closed: no working sandbox (or none probed yet), no run. */
    if (o->sandbox && !exec_sandbox_probing() &&
        (st = exec_sandbox_verdict(err)) != IG_OK)
        return st;
    p->cwd = o->workdir != NULL ? o->workdir : "/";
    p->switch_user = o->sandbox && o->switch_user;
    p->uid = o->uid;
    p->gid = o->gid;
    for (i = 0; i < EXEC_PLAN_NLIMITS; i++)
        p->lim_res[i] = res[i];
    p->lim_val[0] = o->cpu_seconds ? o->cpu_seconds : EXEC_RLIMIT_CPU_DEFAULT;
    p->lim_val[1] = o->address_space_bytes ? o->address_space_bytes
                                           : EXEC_RLIMIT_AS_DEFAULT;
    p->lim_val[2] = o->open_files ? o->open_files : EXEC_RLIMIT_NOFILE_DEFAULT;
    p->lim_val[3] = o->processes ? o->processes : EXEC_RLIMIT_NPROC_DEFAULT;
    if (o->sandbox && o->probe_exe != NULL &&
        strcmp(o->argv[0], EXEC_SANDBOX_PROBE) == 0)
        p->prog = strdup(EXEC_SANDBOX_PROBE); /* exists inside only */
    else
        p->prog = resolve(o->argv[0], o->sandbox);
    if (p->prog == NULL) {
        p->prog_missing = 1; /* nothing will be started */
        return IG_OK;
    }
    if ((st = build_argv(o, p, err)) != IG_OK ||
        (st = build_envp(o, p) == 0 ? IG_OK : IG_ERR_NOMEM) != IG_OK) {
        exec_plan_release(p);
        return st == IG_ERR_NOMEM ? ig_err_set(err, st, "out of memory") : st;
    }
    if (o->sandbox) {
        free(p->prog); /* execve runs bwrap; argv[0] is its path */
        p->prog = strdup(p->argv[0]);
        if (p->prog == NULL) {
            exec_plan_release(p);
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        }
    }
    return IG_OK;
}

void
exec_plan_release(struct exec_plan *p)
{
    size_t i;

    for (i = 0; i < p->nkeep; i++)
        (void)close(p->keep[i]);
    free(p->prog);
    exec_vec_free(p->argv);
    exec_vec_free(p->envp);
    memset(p, 0, sizeof(*p));
}
