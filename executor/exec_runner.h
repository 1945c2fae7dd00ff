/*
 * exec_runner.h - the `exec` handler: the registry entry's argv template
 * filled with the validated params (whole elements, never a shell string),
 * run under bubblewrap (or without, only where the entry says sandbox =
 * none) in a fresh scratch directory, with limits and a timeout.
 */
#ifndef EXEC_RUNNER_H
#define EXEC_RUNNER_H

#include <jansson.h>

#include "exec_http.h"
#include "exec_registry.h"
#include "ig_error.h"
#include <sys/types.h>

/* 1 when the entry's settings demand a sandbox ("sandbox" is not "none"). */
int exec_runner_needs_sandbox(const json_t *settings);

struct exec_run;

/* Optional hooks around one run (all may be NULL). */
struct exec_runner_hooks {
    /* Each chunk of output as it arrives (for NDJSON streaming). */
    void (*on_output)(void *ctx, const char *stream, const char *data,
                      size_t len);
    /* The run exists (register it for cancel) / is about to be freed
       (unregister it: after this returns it must not be used). */
    void (*on_started)(void *ctx, struct exec_run *run);
    void (*on_finished)(void *ctx, struct exec_run *run);
    void *ctx;
};

/* Where and as whom exec actions run (from the executor's config). */
struct exec_runner_env {
    const char *work_dir; /* sandbox "none" only: scratch dirs made here */
    int switch_user;      /* sandboxed runs drop to uid/gid */
    uid_t uid;
    gid_t gid;
};

/*
 * Run act (an exec action) with params; fills *res: the outcome, the
 * agent's detail (exit_code, signal, timed_out, cancelled, stdout, stderr
 * and truncation flags) and the PDP's report (the same, with each stream
 * as {bytes, sha256, excerpt (IG_OUTCOME_EXCERPT_BYTES), truncated}).
 * A sandboxed run works in its own tmpfs /scratch; an unsandboxed one in
 * a scratch directory made under env->work_dir and removed afterwards.
 * hooks may be NULL. Release res with exec_result_release.
 */
void exec_runner_run(const struct exec_action *act, const json_t *params,
                     const struct exec_runner_env *env,
                     const struct exec_runner_hooks *hooks,
                     struct exec_result *res);

#endif
