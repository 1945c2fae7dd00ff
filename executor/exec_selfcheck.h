/*
 * exec_selfcheck.h - the start-up proof that the sandbox shows nothing
 * of the executor's own (see exec_selfcheck.c for how).
 */
#ifndef EXEC_SELFCHECK_H
#define EXEC_SELFCHECK_H

#include <stddef.h>

#include "exec_registry.h"
#include "exec_runner.h"
#include "ig_error.h"

/*
 * Run the probe in the sandbox of every sandboxed exec action of r, as
 * env's sandbox user, for the nown paths own. IG_OK when none is visible;
 * IG_ERR_INVALID naming the action and the first visible path;
 * IG_ERR_IO (or another code) when a probe could not run or finish.
 * Needs a working bubblewrap (exec_sandbox_probe) when there is any such
 * action.
 */
enum ig_status exec_selfcheck(const struct exec_registry *r,
                              const struct exec_runner_env *env,
                              const char *const *own, size_t nown,
                              struct ig_err *err) IG_WUR;

/* 1 when arg is the probe's hidden verb (main.c dispatches on it). */
int exec_probe_verb(const char *arg);

/* The probe itself, inside the sandbox: argv[2..] are the paths. Exits
   0 when none is visible, 1 otherwise; prints what it saw. */
_Noreturn void exec_probe_main(int argc, char **argv);

#endif
