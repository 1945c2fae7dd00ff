/*
 * exec_sandbox_probe.c - does bubblewrap work here? (exec_sandbox_probe in
 * exec_sandbox.h)
 *
 * Looks for bwrap and runs it once around /usr/bin/true, in the same
 * sandbox every action runs in (exec_layout.c), as the executor's own
 * user: a host that forbids user namespaces fails here, and the caller
 * then refuses every action that demands a sandbox. The answer is
 * computed under pthread_once and kept, in exec_sandbox.c, for the life
 * of the process; run plans read it there and refuse a sandboxed run
 * until it says yes. This file sits above exec_run.c (it starts a run);
 * nothing below calls it. (exec_selfcheck.c later proves, as the sandbox
 * user, that the sandbox sees nothing of ours.)
 */
#include "exec_sandbox.h"

#include "exec_run_int.h"

#include <pthread.h>
#include <stdio.h>

#include "ig_limits.h"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/* Run the real sandbox once around /usr/bin/true; record the verdict. */
static void
probe_run(const char *bwrap)
{
    static char prog[] = "/usr/bin/true";
    char *argv[2], why[IG_ERR_MSGMAX];
    struct exec_run_opts o = {0};
    struct exec_run_result res = {0};
    struct exec_run *r = NULL;
    enum ig_status st;
    struct ig_err e;

    argv[0] = prog;
    argv[1] = NULL;
    o.argv = argv;
    o.argc = 1;
    o.sandbox = 1;
    o.timeout_ms = IG_EXEC_PROBE_TIMEOUT_MS;
    o.max_output_bytes = 200;
    exec_sandbox_set_probing(1);
    st = exec_run_start(&o, &r, &e);
    if (st == IG_OK)
        st = exec_run_wait(r, NULL, NULL, &res, &e);
    exec_sandbox_set_probing(0);
    if (st != IG_OK) {
        (void)snprintf(why, sizeof(why), "%.60s: %.180s", bwrap, e.msg);
        st = IG_ERR_IO;
    } else if (res.outcome != EXEC_OUTCOME_COMPLETED || res.exit_code != 0) {
        (void)snprintf(
            why, sizeof(why), "%.60s fails (exit %d, signal %d): %.150s", bwrap,
            res.exit_code, res.term_signal, res.err != NULL ? res.err : "");
        st = IG_ERR_IO;
    }
    exec_sandbox_set_verdict(st, st == IG_OK ? "" : why);
    exec_run_result_release(&res);
    exec_run_free(r);
}

static void
probe_init(void)
{
    const char *bwrap = exec_sandbox_find_bwrap();

    if (bwrap == NULL)
        exec_sandbox_set_verdict(
            IG_ERR_NOTFOUND,
            "bwrap not found (/usr/bin, /usr/local/bin, PATH)");
    else
        probe_run(bwrap);
}

enum ig_status
exec_sandbox_probe(struct ig_err *err)
{
    if (pthread_once(&probe_once, probe_init) != 0)
        return ig_err_set(err, IG_ERR_IO, "sandbox probe: pthread_once");
    return exec_sandbox_verdict(err);
}
