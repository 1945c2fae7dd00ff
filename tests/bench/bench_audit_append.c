/*
 * bench_audit_append.c - the cost of one audit event through the PDP
 * store's real write path (store_put_events: writer thread, group
 * commit, event row, leaf hash, frontier, one audit_tiles row per 256
 * leaves).
 *
 *   bench_audit_append [N [BATCH [full|normal]]]
 *
 * writes N events (default 200000) of about 500 bytes, BATCH per write
 * call (default 1000), into a store on a fresh temp file, and prints per
 * leaf: the writer thread's busy time (the group commits, measured by the
 * store's commit observer: what serializes every request), the process's
 * CPU time (also the leaf hashing, which the store does on the submitting
 * thread), and the wall time. Then it times the tree's hashing alone
 * (leaf hash + frontier append with audit/ calls, no SQL) over as many
 * leaves: the product has no build without the tree, so that is the
 * tree's CPU share of each leaf; the rest of the tree's cost is the
 * audit_tiles rows (one 8 KiB row per 256 leaves; two audit_nodes rows
 * per leaf before issue 14) inside the same commits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "audit_tree.h"
#include "store.h"

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
cpu_seconds(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The commit observer: the writer's busy seconds, summed. */
static void
observe(void *ctx, double seconds, size_t writes)
{
    (void)writes;
    *(double *)ctx += seconds;
}

static long
arg_long(int argc, char **argv, int i, long def)
{
    char *end;
    long v;

    if (argc <= i)
        return def;
    v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v <= 0) {
        (void)fprintf(stderr, "bad number: %s\n", argv[i]);
        exit(2);
    }
    return v;
}

/* An event shaped like intent.received: ~500 bytes of canonical JSON. */
static void
make_event(char *out, size_t cap, long i)
{
    (void)snprintf(out, cap,
                   "{\"intent\":{\"action\":\"payments.refund\",\"context\":"
                   "{\"ticket\":\"SUP-%ld\"},\"expires_at\":\"2030-01-01T00:"
                   "01:00Z\",\"params\":{\"amount\":%ld,\"card_number\":"
                   "\"hmac-sha256:4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3"
                   "f2e1d0c9b8a7f6e5d4c3b\",\"currency\":\"EUR\"},\"resource\":"
                   "\"orders/%ld\",\"tenant\":\"acme\",\"version\":1},"
                   "\"intent_hash\":\"sha256:0123456789abcdef0123456789abcdef"
                   "0123456789abcdef0123456789ab%04ld\",\"intent_id\":"
                   "\"00000000-0000-4000-8000-%012ld\",\"principal\":"
                   "\"release-bot\",\"tenant\":\"acme\",\"time\":\"2030-01-"
                   "01T00:00:00Z\",\"type\":\"intent.received\"}",
                   i, i % 1000, i, i % 10000, i);
}

/* The tree alone: leaf hash and frontier append, no storage. */
static double
tree_only(long n)
{
    static char ev[1024];
    struct audit_frontier f;
    unsigned char leaf[AUDIT_HASH_BYTES];
    double t0 = now();
    long i;

    audit_frontier_init(&f);
    for (i = 0; i < n; i++) {
        make_event(ev, sizeof(ev), i);
        audit_leaf_hash(ev, strlen(ev), leaf);
        if (audit_frontier_append(&f, leaf, NULL, NULL) != IG_OK)
            return -1;
    }
    return (now() - t0) / (double)n;
}

int
main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 200000);
    long batch = arg_long(argc, argv, 2, 1000), i, j, k;
    int full = argc <= 3 || strcmp(argv[3], "normal") != 0;
    char dir[] = "/tmp/ig-bench-audit-XXXXXX", path[128], cmd[160];
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;
    char **texts = calloc((size_t)batch, sizeof(char *));
    double t0, t, c0, cpu, busy = 0;

    if (texts == NULL || mkdtemp(dir) == NULL)
        return 1;
    (void)snprintf(path, sizeof(path), "%s/bench.db", dir);
    memset(&o, 0, sizeof(o));
    o.path = path;
    o.synchronous_full = full;
    if (store_open(&o, &s, &err) != IG_OK) {
        (void)fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    store_set_observer(s, observe, &busy);
    for (j = 0; j < batch; j++)
        if ((texts[j] = malloc(1024)) == NULL)
            return 1;
    t = 0;
    c0 = cpu_seconds();
    for (i = 0; i < n; i += batch) {
        k = n - i < batch ? n - i : batch;
        for (j = 0; j < k; j++)
            make_event(texts[j], 1024, i + j);
        t0 = now();
        if (store_put_events(s, (const char *const *)texts, (size_t)k) !=
            IG_OK) {
            (void)fprintf(stderr, "write failed at %ld\n", i);
            return 1;
        }
        t += now() - t0;
    }
    cpu = cpu_seconds() - c0;
    store_close(s);
    (void)printf("store with tree:    ");
    (void)printf("%ld events, %ld per write, synchronous=%s:\n"
                 "  writer busy %.2f us/leaf, process CPU %.2f us/leaf, "
                 "wall %.2f us/leaf (%.0f leaves/s)\n",
                 n, batch, full ? "full" : "normal", busy / (double)n * 1e6,
                 cpu / (double)n * 1e6, t / (double)n * 1e6, (double)n / t);
    (void)printf("tree hashing alone (leaf hash + frontier): %.2f us/leaf\n",
                 tree_only(n) * 1e6);
    for (j = 0; j < batch; j++)
        free(texts[j]);
    free(texts);
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
