/*
 * bench_policy.c - how long does one policy evaluation take?
 *
 *   build/release/tests/bench_policy [RUNS [BUNDLE_DIR]]
 *
 * Loads the example bundle (policies/bundle, or BUNDLE_DIR: an older copy
 * of it gives a before/after comparison), makes one engine with a
 * counter that answers at once, and times pol_engine_eval() on typical
 * intents, one evaluation at a time (RUNS each, default 200000, after a
 * warm-up). Prints the median, 90th and 99th percentile ns/op per intent.
 * The target is a median of at most 3 us for every action. Not a test:
 * numbers go in the issue notes. On a shared machine, count instructions
 * instead: run it under `valgrind --tool=callgrind` with two RUNS values
 * and divide the difference in instructions by the difference in
 * evaluations (RUNS + RUNS / 10 + 100 each, with the warm-up).
 *
 * IG_BENCH_TRACE=1 times pol_engine_eval_traced() with a reused trace (what
 * the server does), IG_BENCH_TRACE=json also writes its canonical text each
 * time (pol_trace_canon, what intent.decided embeds): compare with a run
 * without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pol.h"

static int64_t
bench_count(void *ctx, const char *key, int64_t window)
{
    (void)ctx;
    (void)key;
    (void)window;
    return 1;
}

static void
die(const char *what)
{
    (void)fprintf(stderr, "bench_policy: %s\n", what);
    exit(1);
}

/* IG_BENCH_TRACE: the reused trace (NULL: not traced), and 1 when its
   JSON text is made too. */
static struct pol_trace *bench_trace;
static int bench_trace_json;
static struct ig_buf bench_text; /* its text, IG_BENCH_TRACE=json */

static void
bench_eval(struct pol_engine *e, const json_t *intent, struct pol_decision *d)
{
    pol_engine_eval_traced(e, intent, d, bench_trace);
    if (bench_trace_json) {
        ig_buf_reset(&bench_text);
        if (pol_trace_canon(bench_trace, &bench_text) != IG_OK)
            die("pol_trace_canon failed");
    }
}

static double
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void
bench_one(struct pol_engine *e, const char *name, const char *text,
          enum pol_verdict want, double *t, long runs)
{
    json_error_t je;
    json_t *intent = json_loads(text, 0, &je);
    struct pol_decision d;
    double t0;
    long i;

    if (intent == NULL)
        die(je.text);
    for (i = 0; i < runs / 10 + 100; i++)
        bench_eval(e, intent, &d);
    if (d.verdict != want) {
        (void)fprintf(stderr, "bench_policy: %s: got %s %s (%s)\n", name,
                      pol_verdict_name(d.verdict),
                      d.nreasons > 0 ? d.reasons[0] : "", d.message);
        exit(1);
    }
    for (i = 0; i < runs; i++) {
        t0 = now_ns();
        bench_eval(e, intent, &d);
        t[i] = now_ns() - t0;
    }
    qsort(t, (size_t)runs, sizeof(t[0]), cmp_double);
    (void)printf("%-28s median %7.0f ns/op   p90 %7.0f   p99 %7.0f   (%s)\n",
                 name, t[runs / 2], t[runs * 9 / 10], t[runs * 99 / 100],
                 pol_verdict_name(d.verdict));
    json_decref(intent);
}

#define BINDING(action, resource, params)                                      \
    "{\"version\":\"intentgate.intent/1\",\"intent_id\":"                      \
    "\"4b0c6b9e-2f7a-4c1e-9d3a-8f2e5a1c7b60\",\"principal\":"                  \
    "\"agent:release-bot\",\"tenant\":\"acme\",\"action\":\"" action           \
    "\",\"resource\":\"" resource "\",\"params\":" params                      \
    ",\"context\":{\"requested_by\":\"alice@example.com\",\"ticket\":"         \
    "\"SUP-7731\"},\"created_at\":\"2026-11-29T17:00:00Z\",\"expires_at\":"    \
    "\"2026-11-29T17:01:00Z\"}"

int
main(int argc, char **argv)
{
    long runs = 200000;
    char *end = NULL;
    const char *dir = IG_POLICY_BUNDLE_DIR;
    struct pol_bundle *b = NULL;
    struct pol_engine *e = NULL;
    struct ig_err err;
    double *t;

    if (argc > 1)
        runs = strtol(argv[1], &end, 10);
    if (runs < 100 || runs > 100000000 || (end != NULL && *end != '\0'))
        die("RUNS must be a number from 100 to 100000000");
    if (argc > 2)
        dir = argv[2];
    if (getenv("IG_BENCH_TRACE") != NULL) {
        bench_trace = pol_trace_new();
        bench_trace_json = strcmp(getenv("IG_BENCH_TRACE"), "json") == 0;
        ig_buf_init(&bench_text, 1 << 20);
        if (bench_trace == NULL)
            die("out of memory");
    }
    t = malloc((size_t)runs * sizeof(*t));
    if (t == NULL)
        die("out of memory");
    if (pol_bundle_load(dir, NULL, &b, &err) != IG_OK ||
        pol_engine_new(b, NULL, bench_count, NULL, &e, &err) != IG_OK)
        die(err.msg);
    (void)printf("bundle %s (%s), %ld runs each%s\n", dir,
                 pol_bundle_revision(b), runs,
                 bench_trace == NULL ? ""
                 : bench_trace_json  ? ", traced + JSON"
                                     : ", traced");
    bench_one(e, "payments.refund ALLOW",
              BINDING("payments.refund", "orders/ord_10293",
                      "{\"amount\":42.5,\"currency\":\"EUR\","
                      "\"order_id\":\"ord_10293\"}"),
              POL_ALLOW, t, runs);
    bench_one(e, "git.push ALLOW",
              BINDING("git.push", "repo/acme/app",
                      "{\"refs\":[\"refs/heads/agent/fix-1\","
                      "\"refs/heads/agent/fix-2\"]}"),
              POL_ALLOW, t, runs);
    bench_one(e, "http.request ALLOW",
              BINDING("http.request", "https://api.github.com/repos/a/b",
                      "{\"method\":\"GET\"}"),
              POL_ALLOW, t, runs);
    bench_one(e, "shell.exec ALLOW",
              BINDING("shell.exec", "host/ci-1",
                      "{\"argv\":[\"grep\",\"-rn\",\"--include=*.c\","
                      "\"TODO\",\"src\"]}"),
              POL_ALLOW, t, runs);
    bench_one(e, "db.write ALLOW",
              BINDING("db.write", "staging/orders",
                      "{\"statement\":\"UPDATE t SET x = 1\"}"),
              POL_ALLOW, t, runs);
    bench_one(e, "db.write ESCALATE",
              BINDING("db.write", "prod/orders",
                      "{\"statement\":\"UPDATE t SET x = 1\"}"),
              POL_ESCALATE, t, runs);
    bench_one(e, "git.push BLOCK",
              BINDING("git.push", "repo/acme/app",
                      "{\"refs\":[\"refs/heads/main\"]}"),
              POL_BLOCK, t, runs);
    pol_trace_free(bench_trace);
    ig_buf_release(&bench_text);
    pol_engine_free(e);
    pol_bundle_unref(b);
    free(t);
    return 0;
}
