/*
 * bench_hook.c - wall time of one short-lived command, run N times:
 * what Claude Code waits for on each `intentgate hook claude-code`.
 *
 *   build/bench/tests/bench_hook N INPUT EXPECT -- COMMAND [ARGS...]
 *
 * Runs COMMAND N times (after 5 untimed warm-up runs), one after the
 * other, each with INPUT as its standard input and its standard output
 * read through a pipe, and times each from just before posix_spawn to
 * just after waitpid. A run whose status is not 0 or whose output does
 * not contain EXPECT ends the benchmark with status 1: a fast deny must
 * never pass for a fast allow. Prints min, median, p90, p99 and max in
 * milliseconds. tests/bench/bench_hook.sh drives it against a real PDP.
 * Not a test: numbers go in the issue notes.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 5
#define OUT_MAX 65536

extern char **environ;

static double
now_ms(void)
{
    struct timespec t;

    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Read all of fd into out (OUT_MAX bytes, NUL-terminated); 0 or -1. */
static int
drain(int fd, char *out)
{
    size_t used = 0;
    ssize_t n;

    for (;;) {
        n = read(fd, out + used, OUT_MAX - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        if (used == OUT_MAX - 1)
            return -1;
    }
    out[used] = '\0';
    return n < 0 ? -1 : 0;
}

/* One run: its wall time in ms, or -1 after printing why it failed. */
static double
run_once(char **argv, const char *input, const char *expect)
{
    static char out[OUT_MAX];
    posix_spawn_file_actions_t fa;
    int p[2], status = 0, ok;
    double t0, t;
    pid_t pid;

    if (pipe(p) != 0) {
        perror("pipe");
        return -1;
    }
    (void)posix_spawn_file_actions_init(&fa);
    (void)posix_spawn_file_actions_addopen(&fa, 0, input, O_RDONLY, 0);
    (void)posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    (void)posix_spawn_file_actions_addclose(&fa, p[0]);
    (void)posix_spawn_file_actions_addclose(&fa, p[1]);
    t0 = now_ms();
    ok = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0;
    (void)close(p[1]);
    ok = ok && drain(p[0], out) == 0 && waitpid(pid, &status, 0) == pid;
    t = now_ms() - t0;
    (void)close(p[0]);
    (void)posix_spawn_file_actions_destroy(&fa);
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        strstr(out, expect) == NULL) {
        (void)fprintf(stderr, "bench_hook: %s failed (status %d): %s\n",
                      argv[0], status, out);
        return -1;
    }
    return t;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
pct(const double *v, long n, double p)
{
    long i = (long)(p * (double)(n - 1) + 0.5);

    return v[i];
}

int
main(int argc, char **argv)
{
    double *t;
    char *end;
    long n, i;

    if (argc < 6 || strcmp(argv[4], "--") != 0) {
        (void)fprintf(stderr, "usage: bench_hook N INPUT EXPECT -- COMMAND "
                              "[ARGS...]\n");
        return 2;
    }
    errno = 0;
    n = strtol(argv[1], &end, 10);
    if (errno != 0 || *end != '\0' || n < 1 || n > 1000000) {
        (void)fprintf(stderr, "bench_hook: N must be 1..1000000\n");
        return 2;
    }
    if ((t = calloc((size_t)n, sizeof(*t))) == NULL)
        return 1;
    for (i = 0; i < WARMUP + n; i++) {
        double ms = run_once(argv + 5, argv[2], argv[3]);

        if (ms < 0) {
            free(t);
            return 1;
        }
        if (i >= WARMUP)
            t[i - WARMUP] = ms;
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_double);
    (void)printf("runs %ld  min %.2f  median %.2f  p90 %.2f  p99 %.2f  "
                 "max %.2f ms\n",
                 n, t[0], pct(t, n, 0.5), pct(t, n, 0.9), pct(t, n, 0.99),
                 t[n - 1]);
    free(t);
    return 0;
}
