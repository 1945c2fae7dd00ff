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
#include "ig_error.h"

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

/*
 * Run it; fills *res like the http handler (outcome and a detail object:
 * exit_code, signal, timed_out, cancelled, stdout, stderr and truncation
 * flags). The scratch directory is made under work_dir and removed
 * afterwards. hooks may be NULL.
 */
void exec_runner_run(const json_t *settings, const json_t *params,
                     const char *work_dir,
                     const struct exec_runner_hooks *hooks,
                     struct exec_http_result *res);

#endif
