/*
 * exec_runner.c - the `exec` handler glue (see exec_runner.h): registry
 * settings -> argv and run options -> exec_run (exec_run.c) -> outcome
 * and a detail object; a scratch directory per run, removed after.
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

#define PATH_CAP 4096

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

static json_t *
detail_of(const struct exec_run_result *r)
{
    /* "o" steals the two strings. */
    return json_pack("{s:i, s:i, s:b, s:b, s:o, s:o, s:b, s:b}", "exit_code",
                     r->exit_code, "signal", r->term_signal, "timed_out",
                     r->timed_out, "cancelled", r->cancelled, "stdout",
                     text_value(r->out, r->out_len), "stderr",
                     text_value(r->err, r->err_len), "stdout_truncated",
                     r->out_truncated, "stderr_truncated", r->err_truncated);
}

static void
fail_before(struct exec_http_result *res, const char *why)
{
    res->outcome = EXEC_OUTCOME_FAILED_BEFORE_DISPATCH;
    res->detail = json_pack("{s:s}", "error", why);
}

void
exec_runner_run(const json_t *settings, const json_t *params,
                const char *work_dir, const struct exec_runner_hooks *hooks,
                struct exec_http_result *res)
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
    if (exec_argv_build(settings, params, &argv, &argc, &err) != IG_OK) {
        fail_before(res, err.msg);
        return;
    }
    (void)mkdir(work_dir != NULL ? work_dir : "work", 0700);
    if (snprintf(dir, sizeof(dir), "%s/run-XXXXXX",
                 work_dir != NULL ? work_dir : "work") >= PATH_CAP ||
        mkdtemp(dir) == NULL) {
        exec_argv_free(argv, argc);
        fail_before(res, "cannot create a scratch directory");
        return;
    }
    memset(&o, 0, sizeof(o));
    o.argv = argv;
    o.argc = argc;
    o.sandbox = exec_runner_needs_sandbox(settings);
    o.network = json_is_true(json_object_get(settings, "network"));
    o.timeout_ms = json_number_value(json_object_get(settings, "timeout_ms"));
    o.max_output_bytes = (size_t)json_number_value(
        json_object_get(settings, "max_output_bytes"));
    o.workdir = dir;
    o.env = json_object_get(settings, "env");
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
            res->detail = detail_of(&rr);
        }
        if (hooks != NULL && hooks->on_finished != NULL)
            hooks->on_finished(hooks->ctx, run);
    }
    exec_run_result_release(&rr);
    exec_run_free(run);
    exec_argv_free(argv, argc);
    remove_tree(dir, 0);
}
