/*
 * test_clock.c - the test clock (core/ig_time.c), in the two kinds of
 * build. The clock file is read at start-up, so each case runs this
 * program again as a child ("child MODE") with IG_TEST_CLOCK_FILE set and
 * its stderr in a file, and looks at how it ended and what it logged.
 *
 * Built with -DIG_TEST_CLOCK=ON: both clocks move by the file's offset,
 * at once and for every thread; deadline sleeps are cut to a tick; the
 * warning is logged once; a clock going back, a file that is gone or not a
 * number end the process. Built without it: the file changes nothing and
 * nothing is logged - the hook does not exist.
 */
#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ig_time.h"

#define NTHREADS 4

static double
mono_real(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
ts_seconds(const struct timespec *ts)
{
    return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

/* Write offset to path the way tests must: a new file renamed over. */
static int
clock_write(const char *path, const char *text)
{
    char tmp[512];
    FILE *f;
    int n = snprintf(tmp, sizeof(tmp), "%s.new", path);

    if (n < 0 || (size_t)n >= sizeof(tmp) || (f = fopen(tmp, "w")) == NULL)
        return -1;
    if (fputs(text, f) < 0) {
        (void)fclose(f);
        return -1;
    }
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

/* ---- the child: checks that need the environment at start-up ---- */

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            (void)fprintf(stderr, "check failed at line %d: %s\n", __LINE__,   \
                          #c);                                                 \
            return 1;                                                          \
        }                                                                      \
    } while (0)

/* The whole seconds ig_time_mono adds now: got - after is at most the
   offset and less than a second below it (unless this thread stood still
   for a second between two reads). */
static int64_t
mono_offset(void)
{
    double got = ig_time_mono(), after = mono_real();
    double x = got - after;
    int64_t k = (int64_t)x;

    if ((double)k < x - 1e-6)
        k++;
    return k;
}

static int
wall_offset_is(int64_t want)
{
    int64_t t0 = (int64_t)time(NULL), now = ig_time_now();
    int64_t t1 = (int64_t)time(NULL);

    return now >= t0 + want && now <= t1 + want;
}

#ifdef IG_TEST_CLOCK
struct reader {
    int64_t final;
    int backwards;
};

/* Read both clocks until the final offset shows, checking that the
   offset never goes back on this thread. */
static void *
reader_main(void *arg)
{
    struct reader *r = arg;
    int64_t last = -1, off;
    long i;

    for (i = 0; i < 2000000; i++) {
        off = mono_offset();
        if (off < last)
            r->backwards = 1;
        last = off;
        if (off == r->final && wall_offset_is(r->final))
            break;
    }
    if (last != r->final)
        r->final = -1;
    return NULL;
}
#endif

static int
child_offsets(const char *path)
{
#ifdef IG_TEST_CLOCK
    pthread_t th[NTHREADS];
    struct reader rd[NTHREADS];
    struct timespec ts;
    char text[32];
    int i, n;

    CHECK(wall_offset_is(0) && mono_offset() == 0);
    CHECK(clock_write(path, "100\n") == 0);
    /* The next read after the rename sees it: no window. */
    CHECK(wall_offset_is(100) && mono_offset() == 100);
    /* A sleep until 10 s from now is cut to the tick. */
    ig_time_wait_until(ig_time_mono() + 10, &ts);
    CHECK(ts_seconds(&ts) - mono_real() <= 0.11);
    ig_time_wait_until(ig_time_mono() - 5, &ts);
    CHECK(ts_seconds(&ts) <= mono_real());
    /* Threads see the clock only go forward, and reach the end. */
    for (i = 0; i < NTHREADS; i++) {
        rd[i].final = 150;
        rd[i].backwards = 0;
        CHECK(pthread_create(&th[i], NULL, reader_main, &rd[i]) == 0);
    }
    for (n = 101; n <= 150; n++) {
        (void)snprintf(text, sizeof(text), "%d", n);
        CHECK(clock_write(path, text) == 0);
    }
    for (i = 0; i < NTHREADS; i++) {
        CHECK(pthread_join(th[i], NULL) == 0);
        CHECK(!rd[i].backwards && rd[i].final == 150);
    }
    /* The same file rewritten with the same size is seen too. */
    CHECK(clock_write(path, "151") == 0);
    CHECK(wall_offset_is(151));
#else
    struct timespec ts;

    /* No hook: the file says 100, the clocks do not care. */
    CHECK(clock_write(path, "100\n") == 0);
    CHECK(wall_offset_is(0) && mono_offset() == 0);
    ig_time_wait_until(ig_time_mono() + 10, &ts);
    CHECK(ts_seconds(&ts) - mono_real() > 9.0);
#endif
    return 0;
}

static int
child_back(const char *path)
{
    CHECK(clock_write(path, "50") == 0);
    (void)ig_time_now(); /* the test clock aborts here */
    return 0;
}

static int
child(const char *mode, const char *path)
{
    if (strcmp(mode, "offsets") == 0)
        return child_offsets(path);
    if (strcmp(mode, "back") == 0)
        return child_back(path);
    if (strcmp(mode, "start") == 0) /* only start-up */
        return wall_offset_is(0) ? 0 : 1;
    return 2;
}

/* ---- the parent ---- */

struct run {
    int status;
    char *err; /* the child's stderr */
};

static char dir[] = "/tmp/ig-clock-XXXXXX";

/* Run "child mode" with IG_TEST_CLOCK_FILE=dir/clock (or unset when
   content is NULL; the file is left missing when content is ""). */
static void
run_child(const char *mode, const char *content, struct run *out)
{
    char clock[256], err[256];
    pid_t pid;
    FILE *f;

    (void)snprintf(clock, sizeof(clock), "%s/clock", dir);
    (void)snprintf(err, sizeof(err), "%s/stderr", dir);
    (void)unlink(clock);
    if (content != NULL && content[0] != '\0')
        assert_int_equal(clock_write(clock, content), 0);
    (void)fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if ((f = freopen(err, "w", stderr)) == NULL)
            _exit(3);
        if (content != NULL)
            (void)setenv("IG_TEST_CLOCK_FILE", clock, 1);
        else
            (void)unsetenv("IG_TEST_CLOCK_FILE");
        (void)execl("/proc/self/exe", "test_clock", "child", mode, clock,
                    (char *)NULL);
        _exit(4);
    }
    assert_int_equal(waitpid(pid, &out->status, 0), pid);
    out->err = tu_read_file(err, NULL);
}

static int
count(const char *hay, const char *needle)
{
    int n = 0;

    while ((hay = strstr(hay, needle)) != NULL) {
        n++;
        hay += strlen(needle);
    }
    return n;
}

static void
expect_exit0(const struct run *r)
{
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
        fail_msg("child status %d, stderr: %s", r->status, r->err);
}

#ifdef IG_TEST_CLOCK
static void
expect_abort(const struct run *r, const char *why)
{
    if (!WIFSIGNALED(r->status) || WTERMSIG(r->status) != SIGABRT)
        fail_msg("child status %d, not an abort; stderr: %s", r->status,
                 r->err);
    assert_int_equal(count(r->err, "\"event\":\"test_clock.broken\""), 1);
    assert_int_equal(count(r->err, "\"level\":\"error\""), 1);
    if (strstr(r->err, why) == NULL)
        fail_msg("no \"%s\" in: %s", why, r->err);
}
#endif

static void
test_offsets(void **state)
{
    struct run r;
    (void)state;

    run_child("offsets", "0", &r);
    expect_exit0(&r);
#ifdef IG_TEST_CLOCK
    /* One warning, at start-up, before anything else. */
    assert_int_equal(count(r.err, "\"event\":\"test_clock.active\""), 1);
    assert_int_equal(strncmp(r.err, "{\"detail\":", 10), 0);
    assert_non_null(strstr(r.err, "\"level\":\"warn\""));
    assert_non_null(strstr(r.err, "never run this in production"));
#else
    assert_int_equal(count(r.err, "test_clock"), 0);
#endif
    free(r.err);
}

static void
test_without_the_variable(void **state)
{
    struct run r;
    (void)state;

    run_child("start", NULL, &r);
    expect_exit0(&r);
    assert_string_equal(r.err, "");
    free(r.err);
}

static void
test_refusals(void **state)
{
    static const char *const bad[] = {"soon",        "",    "-1", "12 ", "1e3",
                                      "99999999999", "0x10"};
    struct run r;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        /* "" leaves the file missing. */
        run_child("start", bad[i], &r);
#ifdef IG_TEST_CLOCK
        expect_abort(&r, bad[i][0] == '\0' ? "cannot open" : "whole seconds");
#else
        expect_exit0(&r);
        assert_string_equal(r.err, "");
#endif
        free(r.err);
    }
    run_child("back", "100", &r);
#ifdef IG_TEST_CLOCK
    expect_abort(&r, "may not go back");
#else
    expect_exit0(&r);
#endif
    free(r.err);
}

static int
setup(void **state)
{
    (void)state;
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
    char p[256];
    (void)state;

    (void)snprintf(p, sizeof(p), "%s/clock", dir);
    (void)unlink(p);
    (void)snprintf(p, sizeof(p), "%s/stderr", dir);
    (void)unlink(p);
    return rmdir(dir);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_without_the_variable),
        cmocka_unit_test(test_refusals),
    };

    if (argc == 4 && strcmp(argv[1], "child") == 0)
        return child(argv[2], argv[3]);
    return cmocka_run_group_tests(tests, setup, teardown);
}
