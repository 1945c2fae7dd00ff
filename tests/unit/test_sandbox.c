/*
 * test_sandbox.c - the exec handler's pieces: argv templates (placeholders,
 * numbers, allow, NUL bytes, limits), the process runner (output, exit
 * codes, caps, timeout and cancel killing the whole group, exec failure,
 * a clean environment, resource limits) and the sandbox: a root made of
 * an allowlist, a host secret (under the build tree, inside the clone)
 * unreachable by any path, capped tmpfs, read-only root and /dev, binds,
 * the switch to the sandbox user, no network unless asked. The sandbox
 * cases FAIL when bubblewrap cannot run here: nothing is skipped.
 */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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

/* bwrap must work here: the suite runs where the product runs. A host
   that cannot run it fails this test (and a sandboxed run is refused). */
static void
need_sandbox(void)
{
    static const char *const argv[] = {"/bin/true", NULL};
    struct exec_run_opts o;
    struct exec_run *r = NULL;
    struct ig_err e, e2;

    if (exec_sandbox_probe(&e) == IG_OK)
        return;
    opts_init(&o, argv);
    o.sandbox = 1;
    assert_int_not_equal(exec_run_start(&o, &r, &e2), IG_OK);
    assert_null(r);
    fail_msg("bubblewrap cannot run here (sandboxed runs are refused): %s",
             e.msg);
}

/* A directory under the current directory (the build tree, inside the
   clone - where dev.sh keeps its data) holding a 0600 secret file. */
struct planted {
    char dir[512], file[600], secret[64];
};

/* Plant a 0600 secret in a new directory under base (NULL: the current
   directory, the build tree). */
static void
plant_in(struct planted *p, const char *base)
{
    char cwd[400];
    FILE *f;

    assert_non_null(getcwd(cwd, sizeof(cwd)));
    (void)snprintf(p->dir, sizeof(p->dir), "%s/ig-sandbox-XXXXXX",
                   base != NULL ? base : cwd);
    assert_non_null(mkdtemp(p->dir));
    (void)snprintf(p->file, sizeof(p->file), "%s/secret.key", p->dir);
    (void)snprintf(p->secret, sizeof(p->secret), "planted-%ld-%d",
                   (long)time(NULL), (int)getpid());
    f = fopen(p->file, "w");
    assert_non_null(f);
    (void)fputs(p->secret, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(p->file, 0600), 0);
}

static void
plant(struct planted *p)
{
    plant_in(p, NULL);
}

static void
unplant(struct planted *p)
{
    (void)unlink(p->file);
    (void)rmdir(p->dir);
}

static void
test_sandbox_basic(void **state)
{
    static const char *const argv[] = {"sh", "-c",
                                       "echo hi; env; touch /usr/ig-x", NULL};
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    need_sandbox();
    assert_int_equal(setenv("IG_CANARY_SECRET", "s3cret", 1), 0);
    opts_init(&o, argv);
    o.sandbox = 1;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.outcome, EXEC_OUTCOME_COMPLETED);
    assert_int_not_equal(res.exit_code, 0); /* touch fails: read-only */
    assert_non_null(strstr(res.out, "hi\n"));
    assert_null(strstr(res.out, "IG_CANARY_SECRET"));
    assert_non_null(strstr(res.out, "HOME=" EXEC_SANDBOX_SCRATCH));
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
    need_sandbox();
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

/* The root holds only the allowlist; the cwd is a writable tmpfs. */
static void
test_sandbox_root_is_an_allowlist(void **state)
{
    static const char *const argv[] = {
        "sh", "-c",
        "pwd; echo data > f; cat f; ls -A / | tr '\\n' ' '; echo; "
        "ls /etc | tr '\\n' ' '; echo; id -u; cat /etc/passwd | wc -l",
        NULL};
    struct exec_run_opts o;
    struct exec_run_result res;
    const char *allowed[] = {"bin",   "dev",    "etc",  "lib",  "lib32",
                             "lib64", "libx32", "proc", "sbin", "scratch",
                             "tmp",   "usr",    NULL};
    char *line, *tok, *save = NULL;
    size_t i;

    (void)state;
    need_sandbox();
    opts_init(&o, argv);
    o.sandbox = 1;
    (void)run(&o, &res, NULL);
    assert_int_equal(res.exit_code, 0);
    assert_memory_equal(res.out, EXEC_SANDBOX_SCRATCH "\ndata\n", 14);
    line = strdup(res.out + 14);
    *strchr(line, '\n') = '\0';
    for (tok = strtok_r(line, " ", &save); tok != NULL;
         tok = strtok_r(NULL, " ", &save)) {
        for (i = 0; allowed[i] != NULL && strcmp(allowed[i], tok) != 0; i++)
            ;
        if (allowed[i] == NULL)
            fail_msg("the sandbox's / holds %s", tok);
    }
    free(line);
    /* /etc: the loader cache, stubs, nothing of the host's secrets. */
    assert_null(strstr(res.out, "shadow"));
    assert_null(strstr(res.out, "ssl"));
    assert_non_null(strstr(res.out, "passwd"));
    assert_non_null(strstr(res.out, "\n1000\n3\n"));
    exec_run_result_release(&res);
}

/* A 0600 file under the clone, /run, /srv, /home, /root, /var, /proc of
   the host: nothing is reachable, by any path. */
static void
test_sandbox_hides_the_host(void **state)
{
    struct planted p;
    char script[4096];
    const char *argv[] = {"sh", "-c", script, NULL};
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    need_sandbox();
    plant(&p);
    (void)snprintf(
        script, sizeof(script),
        "for f in %s %s /proc/self/root%s /proc/1/root%s ../../..%s "
        "/etc/shadow /run /var /home /root /srv /sys /etc/intentgate; do "
        "  if [ -e \"$f\" ]; then echo \"SEEN $f\"; fi; "
        "  cat \"$f\" 2>/dev/null; ls \"$f\" 2>/dev/null; done; "
        "ls /proc | grep -c '^[0-9]'; "
        "grep -r -a -l -F '%s' / 2>/dev/null; echo end",
        p.file, p.dir, p.file, p.file, p.file, p.secret);
    opts_init(&o, argv);
    o.sandbox = 1;
    o.network = 1; /* the widest layout */
    o.timeout_ms = 60000;
    o.max_output_bytes = 1 << 20;
    (void)run(&o, &res, NULL);
    unplant(&p);
    assert_int_equal(res.outcome, EXEC_OUTCOME_COMPLETED);
    assert_null(strstr(res.out, "SEEN"));
    assert_null(strstr(res.out, p.secret));
    assert_null(strstr(res.err, p.secret));
    assert_non_null(strstr(res.out, "end\n"));
    /* Its own processes only: sh, grep's parent... not the host's. */
    assert_true(strtol(res.out, NULL, 10) < 10);
    exec_run_result_release(&res);
}

/* /tmp and /scratch are capped, / and /dev are read-only, no nested user
   namespace, no capability. */
static void
test_sandbox_limits(void **state)
{
    static const char *const argv[] = {
        "sh", "-c",
        "dd if=/dev/zero of=/tmp/big bs=65536 count=64 2>&1 | tail -1; "
        "dd if=/dev/zero of=big bs=65536 count=64 2>&1 | tail -1; "
        "echo x > /newfile || echo root-ro; echo x > /dev/newfile || echo "
        "dev-ro; unshare -U true || echo no-userns; "
        "grep CapEff /proc/self/status",
        NULL};
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    need_sandbox();
    opts_init(&o, argv);
    o.sandbox = 1;
    o.scratch_bytes = 1024 * 1024;
    (void)run(&o, &res, NULL);
    assert_non_null(strstr(res.out, "root-ro"));
    assert_non_null(strstr(res.out, "dev-ro"));
    assert_non_null(strstr(res.out, "no-userns"));
    assert_non_null(strstr(res.out, "CapEff:\t0000000000000000"));
    /* Both 4 MiB writes stop at the 1 MiB cap. */
    assert_int_equal(strstr(res.out, "copied") == NULL ||
                         strstr(res.out, "4194304 bytes") == NULL,
                     1);
    exec_run_result_release(&res);
}

/* Binds: read-only and read-write, at their dest only. */
static void
test_sandbox_binds(void **state)
{
    struct planted p;
    char rw[560];
    static const char *const argv[] = {
        "sh", "-c",
        "cat /data/secret.key; echo; echo w > /data/new || echo ro-ok; "
        "echo w > /out/new && echo rw-ok; stat -c %u /out/new",
        NULL};
    struct exec_bind b[2];
    struct exec_run_opts o;
    struct exec_run_result res;

    (void)state;
    need_sandbox();
    plant(&p);
    assert_int_equal(chmod(p.file, 0644), 0);
    (void)snprintf(rw, sizeof(rw), "%s/out", p.dir);
    assert_int_equal(mkdir(rw, 0777), 0);
    assert_int_equal(chmod(rw, 0777), 0);
    b[0].src = p.dir;
    b[0].dest = "/data";
    b[0].rw = 0;
    b[1].src = rw;
    b[1].dest = "/out";
    b[1].rw = 1;
    opts_init(&o, argv);
    o.sandbox = 1;
    o.binds = b;
    o.nbinds = 2;
    (void)run(&o, &res, NULL);
    assert_non_null(strstr(res.out, p.secret));
    assert_non_null(strstr(res.out, "ro-ok"));
    assert_non_null(strstr(res.out, "rw-ok\n1000\n"));
    exec_run_result_release(&res);
    (void)snprintf(p.file, sizeof(p.file), "%s/new", rw);
    (void)unlink(p.file);
    (void)rmdir(rw);
    (void)snprintf(p.file, sizeof(p.file), "%s/secret.key", p.dir);
    unplant(&p);
}

/* The child drops to the sandbox user before bwrap: a host file of the
   executor's user (0600) stays unreadable even through a bind, and what
   it writes belongs to that user on the host. Only root (or CAP_SETUID)
   may switch; anyone else is refused, never run as itself. */
static void
test_sandbox_switch_user(void **state)
{
    struct planted p;
    static const char *const argv[] = {
        "sh", "-c", "cat /data/secret.key; echo x > /out/made; echo end", NULL};
    struct exec_bind b[2];
    struct exec_run_opts o;
    struct exec_run_result res;
    char out[600], made[620];
    struct stat sb;

    (void)state;
    need_sandbox();
    /* Under /tmp: bwrap, running as the sandbox user, must reach the bind
       sources, and a clone may sit in a directory only its owner can
       enter (mktemp -d). */
    plant_in(&p, "/tmp");
    /* A world-writable directory the sandbox user can reach. */
    (void)snprintf(out, sizeof(out), "%s-out", p.dir);
    (void)snprintf(made, sizeof(made), "%s/made", out);
    assert_int_equal(mkdir(out, 0777), 0);
    assert_int_equal(chmod(out, 0777), 0);
    b[0].src = p.dir;
    b[0].dest = "/data";
    b[0].rw = 0;
    b[1].src = out;
    b[1].dest = "/out";
    b[1].rw = 1;
    opts_init(&o, argv);
    o.sandbox = 1;
    o.binds = b;
    o.nbinds = 2;
    o.switch_user = 1;
    o.uid = 65534;
    o.gid = 65534;
    (void)run(&o, &res, NULL);
    if (geteuid() != 0) {
        assert_int_equal(res.outcome, EXEC_OUTCOME_FAILED_BEFORE_DISPATCH);
        assert_int_equal(res.spawn_errno, EPERM);
    } else {
        assert_int_equal(res.outcome, EXEC_OUTCOME_COMPLETED);
        assert_non_null(strstr(res.out, "end\n"));
        assert_null(strstr(res.out, p.secret));
        assert_non_null(strstr(res.err, "Permission denied"));
        assert_int_equal(stat(made, &sb), 0);
        assert_int_equal(sb.st_uid, 65534);
        assert_int_equal(sb.st_gid, 65534);
    }
    exec_run_result_release(&res);
    (void)unlink(made);
    (void)rmdir(out);
    unplant(&p);
    /* root (0) as the sandbox user is refused outright. */
    o.uid = 0;
    {
        struct exec_run *r = NULL;
        struct ig_err e;
        assert_int_equal(exec_run_start(&o, &r, &e), IG_ERR_INVALID);
    }
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
    need_sandbox();
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
    /* A workdir is for unsandboxed runs only. */
    {
        struct exec_run *r = NULL;
        struct ig_err e;
        o.workdir = "/tmp";
        assert_int_equal(exec_run_start(&o, &r, &e), IG_ERR_INVALID);
    }
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
        cmocka_unit_test(test_sandbox_root_is_an_allowlist),
        cmocka_unit_test(test_sandbox_hides_the_host),
        cmocka_unit_test(test_sandbox_limits),
        cmocka_unit_test(test_sandbox_binds),
        cmocka_unit_test(test_sandbox_switch_user),
        cmocka_unit_test(test_sandbox_timeout_and_missing),
    };

    /* Orphaned grandchildren come to us, so group_gone can reap them. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
