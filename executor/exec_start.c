/*
 * exec_start.c - start and stop the executor server, in this order:
 *
 *   keys, registry, secrets, the PDP token (file, or the environment -
 *   then wiped from /proc/self/environ) and the PDP client
 *   -> for sandboxed exec actions: bubblewrap works, no bind covers the
 *      executor's own files, and the self-check proves the sandbox sees
 *      none of them (exec_selfcheck.c) - any failure refuses the start
 *   -> the outcome spool (pending outcomes from an earlier run go out)
 *   -> the worker pool, the connection registry, and listening, with the
 *      descriptor limit raised so max_connections fits.
 *
 * Stop: no new executions (503), running exec actions cancelled, the
 * pool drained (every execution answers and hands its outcome to the
 * spool), then listening stops and the spool is closed.
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "exec_mcp.h"
#include "exec_server_int.h"

#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec_sandbox.h"
#include "exec_selfcheck.h"
#include "ig_env.h"
#include "ig_file.h"
#include "ig_hash.h"
#include "ig_limits.h"
#include "ig_log.h"
#include "ig_secmem.h"

#define OWN_PATHS_MAX (16 + EXEC_PROTECT_MAX)

/* The executor's PDP token, sodium_malloc'd (ig_file_free_secret frees
   it): from its file (ig_file_read_secret: private, regular, one line),
   else taken out of the environment. */
static enum ig_status
load_token(const struct exec_config *c, char **out, struct ig_err *err)
{
    const size_t cap = IG_EXEC_PDP_TOKEN_MAX_BYTES + 1;
    enum ig_status st;
    size_t n = 0;

    if (c->pdp_token_file != NULL)
        return ig_file_read_secret(c->pdp_token_file,
                                   IG_EXEC_PDP_TOKEN_MAX_BYTES, out, &n, err);
    if ((*out = sodium_malloc(cap)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    st = ig_env_take("INTENTGATE_EXECUTOR_TOKEN", *out, cap);
    if (st == IG_ERR_LIMIT)
        st = ig_err_set(err, st, "INTENTGATE_EXECUTOR_TOKEN is over %d bytes",
                        IG_EXEC_PDP_TOKEN_MAX_BYTES);
    else if (st != IG_OK)
        st = ig_err_set(err, IG_ERR_NOTFOUND,
                        "no PDP token: set pdp_token_file or "
                        "INTENTGATE_EXECUTOR_TOKEN");
    if (st != IG_OK) {
        ig_file_free_secret(*out);
        *out = NULL;
    }
    return st;
}

static enum ig_status
load_parts(struct exec_server *s, const struct exec_config *c,
           struct ig_err *err)
{
    struct ig_public_key pub;
    char *token = NULL;
    enum ig_status st;
    size_t i;

    if (ig_crypto_init() != IG_OK || ig_sha256_check() != IG_OK ||
        ig_keyring_new(&s->x.keys) != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize crypto");
    for (i = 0; i < c->npublic_keys; i++) {
        if (ig_public_key_load_file(c->public_keys[i], &pub, err) != IG_OK)
            return IG_ERR_IO;
        if (ig_keyring_find(s->x.keys, pub.kid, strlen(pub.kid)) == NULL &&
            ig_keyring_add(s->x.keys, &pub) != IG_OK)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    if (exec_registry_load(c->registry, &s->x.registry, err) != IG_OK ||
        exec_secrets_open(c->secrets, c->secrets_key, &s->x.secrets, err) !=
            IG_OK)
        return IG_ERR_INVALID;
    st = load_token(c, &token, err);
    if (st == IG_OK)
        st = exec_pdp_new(c->pdp_url, token, c->pdp_timeout_ms, &s->x.pdp, err);
    ig_file_free_secret(token); /* wipes */
    /* Whether used or not, neither secret may outlive start-up in the
       environment (nor in /proc/self/environ). */
    ig_env_wipe(EXEC_SECRETS_KEY_ENV);
    ig_env_wipe("INTENTGATE_EXECUTOR_TOKEN");
    return st;
}

/* The executor's own files and directories: no bind may cover them and
   the sandbox must not see them. Each as written, and resolved (realpath,
   or against the working directory) when that differs, so the probe
   looks where the sandbox could: absolute paths only. */
struct own {
    const char *p[2 * OWN_PATHS_MAX];
    char *made[2 * OWN_PATHS_MAX];
    size_t n, nmade;
};

static void
own_add(struct own *o, const char *path)
{
    char real[PATH_MAX], cwd[PATH_MAX], *abs = NULL;

    if (path == NULL || o->n + 2 > 2 * OWN_PATHS_MAX)
        return;
    if (path[0] == '/')
        o->p[o->n++] = path;
    if (realpath(path, real) != NULL)
        abs = strdup(real);
    else if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL &&
             (abs = malloc(strlen(cwd) + strlen(path) + 2)) != NULL)
        (void)snprintf(abs, strlen(cwd) + strlen(path) + 2, "%s/%s", cwd, path);
    if (abs != NULL && (path[0] != '/' || strcmp(abs, path) != 0)) {
        o->made[o->nmade++] = abs;
        o->p[o->n++] = abs;
    } else {
        free(abs);
    }
}

static void
own_paths(const struct exec_config *c, struct own *o)
{
    size_t i;

    memset(o, 0, sizeof(*o));
    own_add(o, c->path);
    own_add(o, c->registry);
    own_add(o, c->secrets);
    own_add(o, c->secrets_key);
    own_add(o, c->pdp_token_file);
    own_add(o, c->work_dir);
    own_add(o, c->spool_dir);
    for (i = 0; i < c->npublic_keys; i++)
        own_add(o, c->public_keys[i]);
    for (i = 0; i < c->nprotect; i++)
        own_add(o, c->protect[i]);
}

static void
own_release(struct own *o)
{
    size_t i;

    for (i = 0; i < o->nmade; i++)
        free(o->made[i]);
}

/* 1 when the registry has an exec action that runs sandboxed. */
static int
has_sandboxed(const struct exec_registry *r)
{
    const struct exec_action *a;
    size_t i;

    for (i = 0; (a = exec_registry_at(r, i)) != NULL; i++)
        if (exec_action_handler(a) == EXEC_HANDLER_EXEC &&
            exec_runner_needs_sandbox(exec_action_settings(a)))
            return 1;
    for (i = 0; i < exec_registry_mcp_size(r); i++)
        if (!exec_registry_mcp_at(r, i)->http &&
            exec_registry_mcp_at(r, i)->sandbox)
            return 1;
    return 0;
}

/* bwrap works, binds are clean, the sandbox sees nothing of ours. */
static enum ig_status
check_sandbox(struct exec_server *s, struct ig_err *err)
{
    const struct exec_config *c = s->x.cfg;
    struct ig_err probe;
    enum ig_status st = IG_OK;
    struct own *own = malloc(sizeof(*own));

    if (own == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    own_paths(c, own);
    if (exec_registry_check_binds(s->x.registry, own->p, own->n, err) !=
        IG_OK) {
        st = IG_ERR_INVALID;
    } else if (!has_sandboxed(s->x.registry)) {
        st = IG_OK;
    } else if (exec_sandbox_probe(&probe) != IG_OK) {
        /* Sandboxed actions are refused (503) before redemption. */
        ig_log("error", "sandbox.unavailable",
               json_pack("{s:s}", "reason", probe.msg));
    } else if (exec_selfcheck(s->x.registry, &s->x.run_env, own->p, own->n,
                              err) != IG_OK) {
        st = IG_ERR_INVALID;
    } else {
        ig_log("info", "sandbox.checked",
               json_pack("{s:i, s:s}", "paths", (int)own->n, "sandbox_user",
                         c->sandbox_self ? "self" : c->sandbox_user));
    }
    own_release(own);
    free(own);
    return st;
}

/* Raise the soft descriptor limit to the hard one; lower max_connections
   when it still would not fit. */
static void
fit_connections(struct exec_server *s)
{
    s->max_connections =
        ig_conns_fit_nofile(s->x.cfg->max_connections, IG_EXEC_FD_RESERVE);
    if (s->max_connections < s->x.cfg->max_connections)
        ig_log("warn", "connections.limited",
               json_pack("{s:I, s:I}", "max_connections",
                         (json_int_t)s->max_connections, "wanted",
                         (json_int_t)s->x.cfg->max_connections));
}

/* The spool's delivery: the PDP's outcome endpoint. */
static enum ig_status
send_outcome(void *ctx, const char *intent_id, const char *outcome,
             const json_t *detail, struct ig_err *err)
{
    struct exec_server *s = ctx;

    return exec_pdp_outcome(s->x.pdp, intent_id, outcome, detail, err);
}

static enum ig_status
open_spool(struct exec_server *s, struct ig_err *err)
{
    struct exec_spool_opts o;

    memset(&o, 0, sizeof(o));
    o.send = send_outcome;
    o.ctx = s;
    o.retry_initial_ms = s->x.cfg->outcome_retry_ms;
    return exec_spool_open(s->x.cfg->spool_dir, &o, &s->x.spool, err);
}

enum ig_status
exec_server_start(const struct exec_config *c, struct exec_server **out,
                  struct ig_err *err)
{
    struct exec_server *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (s == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    s->x.cfg = c;
    s->x.run_env.work_dir = c->work_dir;
    s->x.run_env.switch_user = !c->sandbox_self;
    s->x.run_env.uid = c->sandbox_uid;
    s->x.run_env.gid = c->sandbox_gid;
    pthread_mutex_init(&s->x.mu, NULL);
    pthread_rwlock_init(&s->gate, NULL);
    fit_connections(s);
    if (load_parts(s, c, err) != IG_OK || check_sandbox(s, err) != IG_OK ||
        open_spool(s, err) != IG_OK ||
        /* Twice the slots: a finished execution's worker still reports
           its outcome after the answer (exec_pool.h). */
        exec_pool_new(2 * (size_t)c->max_concurrent, &s->pool, err) != IG_OK ||
        ig_conns_new((double)c->request_timeout_ms, &s->conns, err) != IG_OK ||
        exec_mcp_new(&s->x, &s->x.mcp, err) != IG_OK ||
        (s->mhd = exec_server_listen(s, err)) == NULL)
        goto fail;
    *out = s;
    return IG_OK;
fail:
    exec_server_stop(s);
    return IG_ERR_INVALID;
}

unsigned short
exec_server_port(const struct exec_server *s)
{
    return s->port;
}

/* Every execution has ended; give their replies (at most about two
   seconds) to reach the clients before the connections close. */
static void
let_replies_out(struct exec_server *s)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    int i;

    for (i = 0; i < 200 && atomic_load(&s->live_jobs) > 0; i++)
        (void)nanosleep(&ts, NULL);
}

void
exec_server_stop(struct exec_server *s)
{
    if (s == NULL)
        return;
    pthread_rwlock_wrlock(&s->gate);
    s->stopping = 1;
    pthread_rwlock_unlock(&s->gate);
    exec_cancel_all(&s->x);
    exec_pool_free(s->pool); /* every execution ran to its end */
    exec_mcp_stop(s->x.mcp); /* every gateway thread has answered */
    let_replies_out(s);
    if (s->mhd != NULL)
        MHD_stop_daemon(s->mhd);
    exec_mcp_free(s->x.mcp);
    ig_conns_free(s->conns);
    exec_spool_close(s->x.spool);
    exec_slots_free(&s->x);
    exec_pdp_free(s->x.pdp);
    exec_secrets_free(s->x.secrets);
    exec_registry_free(s->x.registry);
    ig_keyring_free(s->x.keys);
    pthread_rwlock_destroy(&s->gate);
    pthread_mutex_destroy(&s->x.mu);
    free(s);
}
