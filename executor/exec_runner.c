/*
 * exec_runner.c - the `exec` handler glue (see exec_runner.h): registry
 * settings -> argv and run options -> exec_run (exec_run.c) -> outcome,
 * the agent's detail and the PDP's shorter report. A sandboxed run's
 * scratch is its own tmpfs; an unsandboxed one gets a host directory,
 * removed after.
 */
#include "exec_runner.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_sandbox.h"
#include "ig_hash.h"
#include "ig_limits.h"

#define PATH_CAP IG_PATH_MAX

int
exec_runner_needs_sandbox(const json_t *settings)
{
    const char *s = json_string_value(json_object_get(settings, "sandbox"));

    return s == NULL || strcmp(s, "none") != 0;
}

/* Remove dir and everything below it (no symlink is followed). */
static void
remove_tree(const char *dir, int depth)
{
    char path[PATH_CAP];
    struct dirent *e;
    struct stat sb;
    DIR *d;

    if (depth > 32 || (d = opendir(dir)) == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= PATH_CAP)
            continue;
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            remove_tree(path, depth + 1);
        else
            (void)unlink(path);
    }
    (void)closedir(d);
    (void)rmdir(dir);
}

/* A string value for the detail: the text, or a note when not UTF-8. */
static json_t *
text_value(const char *p, size_t n)
{
    json_t *v = json_stringn(p != NULL ? p : "", p != NULL ? n : 0);

    return v != NULL ? v : json_string("(output is not UTF-8)");
}

/* One stream for the report: size, digest, a UTF-8-safe excerpt. */
static json_t *
stream_report(const char *p, size_t n, int truncated)
{
    char hex[IG_SHA256_HEXLEN + 1];
    size_t keep = n < IG_OUTCOME_EXCERPT_BYTES ? n : IG_OUTCOME_EXCERPT_BYTES;
    json_t *ex;

    ig_sha256_hex(p != NULL ? p : "", p != NULL ? n : 0, hex);
    /* Back off to a character boundary (at most 3 bytes). */
    while (keep > 0 && keep < n && ((unsigned char)p[keep] & 0xC0) == 0x80)
        keep--;
    ex = json_stringn(p != NULL ? p : "", keep);
    if (ex == NULL)
        ex = json_string("(output is not UTF-8)");
    /* "o" steals the excerpt. */
    return json_pack("{s:I, s:s, s:o, s:b}", "bytes", (json_int_t)n, "sha256",
                     hex, "excerpt", ex, "truncated", truncated || keep < n);
}

static void
detail_of(const struct exec_run_result *r, struct exec_result *res)
{
    /* "o" steals the new values. */
    res->detail = json_pack(
        "{s:i, s:i, s:b, s:b, s:o, s:o, s:b, s:b}", "exit_code", r->exit_code,
        "signal", r->term_signal, "timed_out", r->timed_out, "cancelled",
        r->cancelled, "stdout", text_value(r->out, r->out_len), "stderr",
        text_value(r->err, r->err_len), "stdout_truncated", r->out_truncated,
        "stderr_truncated", r->err_truncated);
    res->report = json_pack(
        "{s:i, s:i, s:b, s:b, s:o, s:o}", "exit_code", r->exit_code, "signal",
        r->term_signal, "timed_out", r->timed_out, "cancelled", r->cancelled,
        "stdout", stream_report(r->out, r->out_len, r->out_truncated), "stderr",
        stream_report(r->err, r->err_len, r->err_truncated));
}

static void
fail_before(struct exec_result *res, const char *why)
{
    res->outcome = EXEC_OUTCOME_FAILED_BEFORE_DISPATCH;
    res->detail = json_pack("{s:s}", "error", why);
}

/* The options of one run of act; a host scratch dir only without sandbox.
   dir receives that directory ("" when none). */
static enum ig_status
plan_opts(const struct exec_action *act, const struct exec_runner_env *env,
          char **argv, size_t argc, struct exec_run_opts *o, char dir[PATH_CAP])
{
    const json_t *settings = exec_action_settings(act);
    const char *work =
        env != NULL && env->work_dir != NULL ? env->work_dir : "work";

    memset(o, 0, sizeof(*o));
    dir[0] = '\0';
    o->argv = argv;
    o->argc = argc;
    o->sandbox = exec_runner_needs_sandbox(settings);
    o->network = json_is_true(json_object_get(settings, "network"));
    o->timeout_ms = json_number_value(json_object_get(settings, "timeout_ms"));
    o->max_output_bytes = (size_t)json_number_value(
        json_object_get(settings, "max_output_bytes"));
    o->env = json_object_get(settings, "env");
    if (o->sandbox) {
        o->scratch_bytes = (unsigned long long)json_number_value(
            json_object_get(settings, "scratch_bytes"));
        o->binds = exec_action_binds(act, &o->nbinds);
        o->switch_user = env != NULL && env->switch_user;
        o->uid = env != NULL ? env->uid : 0;
        o->gid = env != NULL ? env->gid : 0;
        return IG_OK;
    }
    (void)mkdir(work, 0700);
    if (snprintf(dir, PATH_CAP, "%s/run-XXXXXX", work) >= PATH_CAP ||
        mkdtemp(dir) == NULL) {
        dir[0] = '\0';
        return IG_ERR_IO;
    }
    o->workdir = dir;
    return IG_OK;
}

void
exec_runner_run(const struct exec_action *act, const json_t *params,
                const struct exec_runner_env *env,
                const struct exec_runner_hooks *hooks, struct exec_result *res)
{
    struct exec_run_opts o;
    struct exec_run_result rr;
    struct exec_run *run = NULL;
    struct ig_err err;
    char dir[PATH_CAP], **argv = NULL;
    size_t argc = 0;

    memset(res, 0, sizeof(*res));
    memset(&rr, 0, sizeof(rr));
    ig_err_clear(&err);
    if (exec_argv_build(exec_action_settings(act), params, &argv, &argc,
                        &err) != IG_OK) {
        fail_before(res, err.msg);
        return;
    }
    if (plan_opts(act, env, argv, argc, &o, dir) != IG_OK) {
        exec_argv_free(argv, argc);
        fail_before(res, "cannot create a scratch directory");
        return;
    }
    if (exec_run_start(&o, &run, &err) != IG_OK) {
        fail_before(res, err.msg);
    } else {
        if (hooks != NULL && hooks->on_started != NULL)
            hooks->on_started(hooks->ctx, run);
        if (exec_run_wait(run, hooks != NULL ? hooks->on_output : NULL,
                          hooks != NULL ? hooks->ctx : NULL, &rr,
                          &err) != IG_OK) {
            fail_before(res, err.msg); /* the group was killed */
        } else {
            res->outcome = rr.outcome;
            detail_of(&rr, res);
        }
        if (hooks != NULL && hooks->on_finished != NULL)
            hooks->on_finished(hooks->ctx, run);
    }
    exec_run_result_release(&rr);
    exec_run_free(run);
    exec_argv_free(argv, argc);
    if (dir[0] != '\0')
        remove_tree(dir, 0);
}
