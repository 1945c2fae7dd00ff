/*
 * test_sandbox.c - the exec handler's pieces: argv templates (placeholders,
 * numbers, allow, NUL bytes, limits), the process runner (output, exit
 * codes, caps, timeout and cancel killing the whole group, exec failure,
 * a clean environment, resource limits) and, when bubblewrap works here,
 * the sandbox (read-only root, no network unless asked, writable workdir).
 * Sandbox cases print "SKIP: bubblewrap unavailable here: ..." and skip
 * when the probe fails; nothing else is skipped.
 */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_run_int.h"
#include "exec_sandbox.h"
#include "ig_json.h"
#include "ig_limits.h"

static json_t *
parse(const char *text)
{
    json_t *v = NULL;

    assert_int_equal(ig_json_parse(text, strlen(text), &v, NULL), IG_OK);
    return v;
}

/* ---- argv templates ---- */

static void
test_argv_fill(void **state)
{
    json_t *set = parse("{\"argv\":[\"tool\",\"-n\",\"{count}\",\"{name}\","
                        "\"{rest...}\",\"{none...}\",\"end\",\"{ratio}\"],"
                        "\"allow\":[\"tool\"]}");
    json_t *par = parse("{\"count\":3,\"name\":\"x y\",\"rest\":[\"a\",\"b\"],"
                        "\"ratio\":1.5}");
    static const char *const want[] = {"tool", "-n",  "3",   "x y", "a",
                                       "b",    "end", "1.5", NULL};
    struct ig_err e;
    char **argv;
    size_t argc, i;

    (void)state;
    assert_int_equal(exec_argv_build(set, par, &argv, &argc, &e), IG_OK);
    assert_int_equal(argc, 8);
    for (i = 0; want[i] != NULL; i++)
        assert_string_equal(argv[i], want[i]);
    assert_null(argv[argc]);
    exec_argv_free(argv, argc);
    json_decref(set);
    json_decref(par);
}

static void
test_argv_allow(void **state)
{
    json_t *set = parse("{\"argv\":[\"{prog}\",\"x\"],"
                        "\"allow\":[\"ls\",\"echo\"]}");
    json_t *bad = parse("{\"prog\":\"rm\"}");
    json_t *good = parse("{\"prog\":\"echo\"}");
    json_t *lit = parse("{\"argv\":[\"cat\"],\"allow\":[\"ls\"]}");
    struct ig_err e;
    char **argv;
    size_t argc;

    (void)state;
    assert_int_equal(exec_argv_build(set, bad, &argv, &argc, &e),
                     IG_ERR_INVALID);
    assert_null(argv);
    assert_non_null(strstr(e.msg, "\"rm\""));
    assert_int_equal(exec_argv_build(lit, NULL, &argv, &argc, &e),
                     IG_ERR_INVALID);
    assert_int_equal(exec_argv_build(set, good, &argv, &argc, &e), IG_OK);
    assert_int_equal(argc, 2);
    assert_string_equal(argv[0], "echo");
    exec_argv_free(argv, argc);
    json_decref(set);
    json_decref(bad);
    json_decref(good);
    json_decref(lit);
}

static void
test_argv_refusals(void **state)
{
    json_t *set = parse("{\"argv\":[\"echo\",\"{s}\",\"{a...}\"]}");
    json_t *par = json_object(), *arr = json_array();
    char big[EXEC_ARGV_ELEM_MAX + 2];
    struct ig_err e;
    char **argv;
    size_t argc, i;

    (void)state;
    /* Missing, mistyped, NUL byte. */
    assert_int_equal(exec_argv_build(set, par, &argv, &argc, &e),
                     IG_ERR_INVALID);
    json_object_set_new(par, "s", json_true()); /* steals */
    assert_int_equal(exec_argv_build(set, par, &argv, &argc, &e),
                     IG_ERR_INVALID);
    json_object_set_new(par, "s", json_stringn("a\0b", 3)); /* steals */
    assert_int_equal(exec_argv_build(set, par, &argv, &argc, &e),
                     IG_ERR_INVALID);
    assert_non_null(strstr(e.msg, "NUL"));
    /* One element too long. */
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    json_object_set_new(par, "s", json_string(big)); /* steals */
    assert_int_equal(exec_argv_build(set, par, &argv, &argc, &e), IG_ERR_LIMIT);
    /* Exactly at the cap is fine; too many elements is not. */
    big[EXEC_ARGV_ELEM_MAX] = '\0';
    json_object_set_new(par, "s", json_string(big)); /* steals */
    for (i = 0; i < IG_EXEC_MAX_ARGV - 2; i++)
        json_array_append_new(arr, json_string("a")); /* steals */
    json_object_set(par, "a", arr);
    assert_int_equal(exec_argv_build(set, par, &argv, &argc, &e), IG_OK);
    assert_int_equal(argc, IG_EXEC_MAX_ARGV);
    exec_argv_free(argv, argc);
    json_array_append_new(arr, json_string("a")); /* steals */
    assert_int_equal(exec_argv_build(set, par, &argv, &argc, &e), IG_ERR_LIMIT);
    json_decref(arr);
    json_decref(set);
    json_decref(par);
}

/* ---- the runner ---- */

struct sink {
    size_t out, err;
};

static void
count_output(void *ctx, const char *stream, const char *data, size_t len)
{
    struct sink *s = ctx;

    (void)data;
    if (strcmp(stream, "stdout") == 0)
        s->out += len;
    else
        s->err += len;
}

static void
opts_init(struct exec_run_opts *o, const char *const *argv)
{
    memset(o, 0, sizeof(*o));
    for (o->argc = 0; argv[o->argc] != NULL; o->argc++)
        ;
    o->argv = (char *const *)(uintptr_t)argv; /* never written */
    o->timeout_ms = 10000;
    o->max_output_bytes = 65536;
}

/* Run to the end; returns the pgid the child had. */
static pid_t
run(const struct exec_run_opts *o, struct exec_run_result *res, struct sink *s)
{
    struct exec_run *r = NULL;
    struct ig_err e;
    pid_t pid;

    if (exec_run_start(o, &r, &e) != IG_OK)
        fail_msg("exec_run_start: %s", e.msg);
    pid = r->pid;
    if (exec_run_wait(r, s != NULL ? count_output : NULL, s, res, &e) != IG_OK)
        fail_msg("exec_run_wait: %s", e.msg);
    exec_run_free(r);
    return pid;
}

static void
test_run_echo(void **state)
{
    static const char *const argv[] = {"/bin/echo", "hi", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    struct sink s = {0, 0};

    (void)state;
    opts_init(&o, argv);
    (void)run(&o, &res, &s);
    assert_int_equal(res.outcome, EXEC_OUTCOME_COMPLETED);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out, "hi\n");
    assert_int_equal(res.out_len, 3);
    assert_int_equal(s.out, 3);
    assert_string_equal(res.err, "");
    assert_false(res.out_truncated);
    exec_run_result_release(&res);
}

static void
test_run_exit_and_stderr(void **state)
{
    static const char *const argv[] = {"sh", "-c", "echo oops >&2; exit 3",
                                       NULL};
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    opts_init(&o, argv);
    (void)run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_COMPLETED);
    assert_int_equal(res.exit_code, 3);
    assert_int_equal(res.term_signal, 0);
    assert_string_equal(res.out, "");
    assert_string_equal(res.err, "oops\n");
    exec_run_result_release(&res);
}

static void
test_run_output_cap(void **state)
{
    static const char *const argv[] = {"head", "-c", "1000000", "/dev/zero",
                                       NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    struct sink s = {0, 0};

    (void)state;
    opts_init(&o, argv);
    o.max_output_bytes = 1000;
    (void)run(&o, &res, &s);
    assert_int_equal(res.outcome, EXEC_OUTCOME_COMPLETED);
    assert_int_equal(res.exit_code, 0); /* drained: no SIGPIPE */
    assert_int_equal(res.out_len, 1000);
    assert_true(res.out_truncated);
    assert_int_equal(s.out, 1000000);
    exec_run_result_release(&res);
}

/*
 * 1 when no process of group pgid is left within 2 s. Orphans are
 * re-parented to us (main makes this process a child subreaper) and
 * reaped here, as this host's pid 1 does not reap zombies.
 */
static int
group_gone(pid_t pgid)
{
    int i, status;

    for (i = 0; i < 200; i++) {
        while (waitpid(-1, &status, WNOHANG) > 0)
            ;
        if (kill(-pgid, 0) != 0 && errno == ESRCH)
            return 1;
        (void)nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return 0;
}

static void
test_run_timeout(void **state)
{
    static const char *const argv[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    pid_t pgid;

    (void)state;
    opts_init(&o, argv);
    o.timeout_ms = 300;
    pgid = run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH);
    assert_true(res.timed_out);
    assert_false(res.cancelled);
    assert_int_equal(res.term_signal, SIGKILL);
    assert_true(res.elapsed_ms >= 300 && res.elapsed_ms < 1300);
    assert_true(group_gone(pgid));
    exec_run_result_release(&res);
}

static void *
cancel_later(void *arg)
{
    (void)nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    exec_run_cancel(arg);
    return NULL;
}

static void
test_run_cancel(void **state)
{
    static const char *const argv[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    struct exec_run *r = NULL;
    struct ig_err e;
    pthread_t t;
    pid_t pgid;

    (void)state;
    opts_init(&o, argv);
    assert_int_equal(exec_run_start(&o, &r, &e), IG_OK);
    pgid = r->pid;
    assert_int_equal(pthread_create(&t, NULL, cancel_later, r), 0);
    assert_int_equal(exec_run_wait(r, NULL, NULL, &res, &e), IG_OK);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(res.outcome, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH);
    assert_true(res.cancelled);
    assert_false(res.timed_out);
    assert_true(res.elapsed_ms < 2000);
    assert_true(group_gone(pgid));
    exec_run_result_release(&res);
    exec_run_free(r);
}

static void
test_run_missing_program(void **state)
{
    static const char *const abs[] = {"/nonexistent/prog", NULL};
    static const char *const bare[] = {"no-such-program-ig", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    opts_init(&o, abs);
    (void)run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_FAILED_BEFORE_DISPATCH);
    assert_int_equal(res.spawn_errno, ENOENT);
    exec_run_result_release(&res);
    opts_init(&o, bare);
    (void)run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_FAILED_BEFORE_DISPATCH);
    exec_run_result_release(&res);
}

static void
test_run_clean_env(void **state)
{
    static const char *const argv[] = {"/usr/bin/env", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    json_t *env = parse("{\"LANG\":\"C\",\"IG_GIVEN\":\"yes\"}");

    (void)state;
    assert_int_equal(setenv("IG_CANARY_SECRET", "s3cret", 1), 0);
    opts_init(&o, argv);
    o.env = env;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.exit_code, 0);
    assert_null(strstr(res.out, "IG_CANARY_SECRET"));
    assert_null(strstr(res.out, "s3cret"));
    assert_non_null(strstr(res.out, "PATH=/usr/bin:/bin\n"));
    assert_non_null(strstr(res.out, "IG_GIVEN=yes\n"));
    assert_non_null(strstr(res.out, "LANG=C\n"));
    exec_run_result_release(&res);
    json_decref(env);
}

static void
test_run_rlimits(void **state)
{
    static const char *const argv[] = {"sh", "-c", "ulimit -n; ulimit -t",
                                       NULL};
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    opts_init(&o, argv);
    o.open_files = 100;
    o.cpu_seconds = 7;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out, "100\n7\n");
    exec_run_result_release(&res);
    /* Defaults. */
    o.open_files = 0;
    o.cpu_seconds = 0;
    (void)run(&o, &res, NULL);
    assert_string_equal(res.out, "256\n10\n");
    exec_run_result_release(&res);
}

static void
test_run_bad_opts(void **state)
{
    static const char *const argv[] = {"/bin/true", NULL};
    struct exec_run_opts o;
    struct exec_run *r = NULL;
    struct ig_err e;

    (void)state;
    opts_init(&o, argv);
    o.timeout_ms = 0;
    assert_int_equal(exec_run_start(&o, &r, &e), IG_ERR_INVALID);
    assert_null(r);
    opts_init(&o, argv);
    o.workdir = "relative";
    assert_int_equal(exec_run_start(&o, &r, &e), IG_ERR_INVALID);
}

/* ---- the sandbox ---- */

/* 1 when bwrap works; else say so, and check a sandboxed run is refused
   (fails closed) before the caller skips. */
static int
sandbox_or_skip(void)
{
    static const char *const argv[] = {"/bin/true", NULL};
    struct exec_run_opts o;
    struct exec_run *r = NULL;
    struct ig_err e, e2;

    if (exec_sandbox_probe(&e) == IG_OK)
        return 1;
    printf("SKIP: bubblewrap unavailable here: %s\n", e.msg);
    opts_init(&o, argv);
    o.sandbox = 1;
    assert_int_not_equal(exec_run_start(&o, &r, &e2), IG_OK);
    assert_null(r);
    return 0;
}

static void
test_sandbox_basic(void **state)
{
    static const char *const argv[] = {"sh", "-c",
                                       "echo hi; env; touch /usr/ig-x", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    if (!sandbox_or_skip())
        skip();
    assert_int_equal(setenv("IG_CANARY_SECRET", "s3cret", 1), 0);
    opts_init(&o, argv);
    o.sandbox = 1;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_COMPLETED);
    assert_int_not_equal(res.exit_code, 0); /* touch fails: read-only */
    assert_non_null(strstr(res.out, "hi\n"));
    assert_null(strstr(res.out, "IG_CANARY_SECRET"));
    assert_non_null(strstr(res.err, "Read-only file system"));
    assert_int_not_equal(access("/usr/ig-x", F_OK), 0);
    exec_run_result_release(&res);
}

/* Interfaces in a /proc/net/dev text other than lo. */
static int
non_lo_interfaces(const char *text)
{
    const char *line = text, *colon;
    int n = 0;

    for (; line != NULL && *line != '\0'; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        while (*line == ' ')
            line++;
        colon = strchr(line, ':');
        if (colon != NULL && strchr(line, '\n') > colon &&
            strncmp(line, "lo:", 3) != 0 && strchr(line, '|') == NULL)
            n++;
    }
    return n;
}

static void
test_sandbox_network(void **state)
{
    static const char *const argv[] = {"cat", "/proc/net/dev", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    char *host;

    (void)state;
    if (!sandbox_or_skip())
        skip();
    opts_init(&o, argv);
    o.sandbox = 1;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out, "lo:"));
    assert_int_equal(non_lo_interfaces(res.out), 0);
    exec_run_result_release(&res);
    /* network=1 sees the host's interfaces. */
    host = tu_read_file("/proc/net/dev", NULL);
    o.network = 1;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(non_lo_interfaces(res.out), non_lo_interfaces(host));
    exec_run_result_release(&res);
    free(host);
}

static void
test_sandbox_workdir(void **state)
{
    static const char *const argv[] = {
        "sh", "-c", "pwd; echo data > f; cat f; ls /tmp | wc -l", NULL};
    char dir[] = "/tmp/ig-sandbox-XXXXXX", path[64], *text, want[128];
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    if (!sandbox_or_skip())
        skip();
    assert_non_null(mkdtemp(dir));
    opts_init(&o, argv);
    o.sandbox = 1;
    o.workdir = dir;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.exit_code, 0);
    /* cwd is the workdir; /tmp holds only the workdir's parent path. */
    (void)snprintf(want, sizeof(want), "%s\ndata\n1\n", dir);
    assert_string_equal(res.out, want);
    (void)snprintf(path, sizeof(path), "%s/f", dir);
    text = tu_read_file(path, NULL);
    assert_string_equal(text, "data\n");
    free(text);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    exec_run_result_release(&res);
}

static void
test_sandbox_timeout_and_missing(void **state)
{
    static const char *const slow[] = {"sleep", "30", NULL};
    static const char *const none[] = {"no-such-program-ig", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    pid_t pgid;

    (void)state;
    if (!sandbox_or_skip())
        skip();
    opts_init(&o, slow);
    o.sandbox = 1;
    o.timeout_ms = 300;
    pgid = run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH);
    assert_true(res.timed_out);
    assert_true(res.elapsed_ms < 1300);
    assert_true(group_gone(pgid));
    exec_run_result_release(&res);
    opts_init(&o, none);
    o.sandbox = 1;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_FAILED_BEFORE_DISPATCH);
    exec_run_result_release(&res);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argv_fill),
        cmocka_unit_test(test_argv_allow),
        cmocka_unit_test(test_argv_refusals),
        cmocka_unit_test(test_run_echo),
        cmocka_unit_test(test_run_exit_and_stderr),
        cmocka_unit_test(test_run_output_cap),
        cmocka_unit_test(test_run_timeout),
        cmocka_unit_test(test_run_cancel),
        cmocka_unit_test(test_run_missing_program),
        cmocka_unit_test(test_run_clean_env),
        cmocka_unit_test(test_run_rlimits),
        cmocka_unit_test(test_run_bad_opts),
        cmocka_unit_test(test_sandbox_basic),
        cmocka_unit_test(test_sandbox_network),
        cmocka_unit_test(test_sandbox_workdir),
        cmocka_unit_test(test_sandbox_timeout_and_missing),
    };

    /* Orphaned grandchildren come to us, so group_gone can reap them. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
