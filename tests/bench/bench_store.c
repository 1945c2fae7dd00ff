/*
 * bench_store.c - the store's write path alone: what one ALLOW decision
 * costs the single writer thread, in time, CPU and bytes.
 *
 *   bench_store DIR [SECONDS] [THREADS]        (defaults: 10, 64)
 *
 * Opens a store at DIR/bench.db (synchronous=FULL, an audit key, a
 * checkpoint every 10,000 leaves, as `intentgate serve` does) and runs
 * THREADS threads that each submit, one at a time and waiting for its
 * commit, the records the PDP writes for an ALLOW: the intent with its
 * binding, the decision, the grant with its token, the quota hit and the
 * two audit events (sizes as the example bundle's payments.refund makes
 * them). No HTTP, no policy, no signing: the request threads' work is
 * left out, so the figures are the writer's ceiling. Prints
 *   decisions/s        committed ALLOW records per second
 *   cpu us/decision    the process's CPU time (writer and checkpointer;
 *                      the submitting threads only wait) per decision
 *   commits            group commits and decisions per commit
 *   write B/decision   bytes the process wrote (WAL, checkpoints, anchor)
 *   db B/decision      the database file's size per decision at the end
 * Use a release build without sanitizers, on a quiet machine.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <sodium.h>

#include "ig_b64.h"
#include "ig_hash.h"
#include "ig_key.h"
#include "ig_time.h"
#include "store.h"

#define NAME "bench.intentgate.example/audit"
#define TOKEN_BYTES 640 /* a v4.public grant is ~880 characters */

struct bench {
    struct store *store;
    double until;
    atomic_int_fast64_t done, failed, seq;
    atomic_int_fast64_t commits, committed;
};

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
on_commit(void *ctx, double seconds, size_t writes)
{
    struct bench *b = ctx;
    (void)seconds;

    atomic_fetch_add(&b->commits, 1);
    atomic_fetch_add(&b->committed, (int_fast64_t)writes);
}

/* The texts of one ALLOW, shaped like the PDP's for payments.refund. */
struct texts {
    char id[IG_UUID_STRLEN + 1], did[IG_UUID_STRLEN + 1];
    char jti[IG_UUID_STRLEN + 1], key[32], hash[IG_HASH_STRLEN + 1];
    char binding[512], received[1024], decided[1024], token[1024];
};

static int
make_texts(struct texts *t, int64_t seq, int64_t now)
{
    unsigned char raw[TOKEN_BYTES];
    char when[IG_TIME_STRLEN + 1], exp[IG_TIME_STRLEN + 1];
    int n;

    ig_uuid7(t->id);
    ig_uuid4(t->did);
    ig_uuid4(t->jti);
    (void)snprintf(t->key, sizeof(t->key), "bench-%" PRId64, seq);
    if (ig_time_format(now, when) != IG_OK ||
        ig_time_format(now + 60, exp) != IG_OK)
        return -1;
    n = snprintf(t->binding, sizeof(t->binding),
                 "{\"action\":\"payments.refund\",\"context\":{"
                 "\"requested_by\":\"bench\",\"ticket\":\"B-1\"},"
                 "\"created_at\":\"%s\",\"expires_at\":\"%s\","
                 "\"intent_id\":\"%s\",\"params\":{\"amount\":42,"
                 "\"currency\":\"EUR\",\"order_id\":\"o-%" PRId64 "\"},"
                 "\"principal\":\"bench\",\"resource\":\"orders/%" PRId64
                 "\",\"tenant\":\"bench\",\"version\":\"intentgate.intent/1\"}",
                 when, exp, t->id, seq, seq);
    if (n < 0 || (size_t)n >= sizeof(t->binding))
        return -1;
    ig_hash_bytes(t->binding, strlen(t->binding), t->hash);
    n = snprintf(t->received, sizeof(t->received),
                 "{\"intent\":%s,\"intent_hash\":\"%s\",\"intent_id\":\"%s\","
                 "\"principal\":\"bench\",\"tenant\":\"bench\",\"time\":\"%s\","
                 "\"type\":\"intent.received\"}",
                 t->binding, t->hash, t->id, when);
    if (n < 0 || (size_t)n >= sizeof(t->received))
        return -1;
    n = snprintf(t->decided, sizeof(t->decided),
                 "{\"decision\":\"ALLOW\",\"decision_id\":\"%s\",\"grant\":{"
                 "\"audience\":\"bench-exec\",\"expires_at\":\"%s\","
                 "\"jti\":\"%s\"},\"intent_id\":\"%s\",\"message\":"
                 "\"allowed by policy\",\"policy_revision\":\"sha256:"
                 "3b734f8b1c9653f58b3221ff99339d4be9c76aa035a4c2948af11f613a"
                 "a3dbf3\",\"reasons\":[],\"time\":\"%s\",\"type\":"
                 "\"intent.decided\"}",
                 t->did, exp, t->jti, t->id, when);
    if (n < 0 || (size_t)n >= sizeof(t->decided))
        return -1;
    randombytes_buf(raw, sizeof(raw));
    memcpy(t->token, "v4.public.", 10);
    return ig_b64_encode_public(raw, sizeof(raw), t->token + 10,
                                sizeof(t->token) - 10) > 0
               ? 0
               : -1;
}

static void *
worker(void *arg)
{
    struct bench *b = arg;
    struct texts t;
    struct store_intent_rec r;
    const char *ev[2];
    char *replay = NULL;
    int64_t now, seq;

    while (now_s() < b->until) {
        seq = atomic_fetch_add(&b->seq, 1);
        now = ig_time_now();
        if (make_texts(&t, seq, now) != 0) {
            atomic_fetch_add(&b->failed, 1);
            continue;
        }
        ev[0] = t.received;
        ev[1] = t.decided;
        memset(&r, 0, sizeof(r));
        r.intent_id = t.id;
        r.principal = "bench";
        r.tenant = "bench";
        r.action = "payments.refund";
        r.resource = "orders/1";
        r.intent_hash = t.hash;
        r.binding = t.binding;
        r.idempotency_key = t.key;
        r.created_at = now;
        r.expires_at = now + 60;
        r.decision_id = t.did;
        r.decision = "ALLOW";
        r.reasons = "[]";
        r.message = "allowed by policy";
        r.policy_revision = "sha256:3b734f8b1c9653f58b3221ff99339d4be9c76aa0"
                            "35a4c2948af11f613aa3dbf3";
        r.grant_jti = t.jti;
        r.grant_aud = "bench-exec";
        r.grant_token = t.token;
        r.grant_expires_at = now + 30;
        r.events = ev;
        r.nevents = 2;
        if (store_count(b->store, "tenant:bench:payments", 60, now) < 0 ||
            store_put_intent(b->store, &r, &replay) != IG_OK) {
            atomic_fetch_add(&b->failed, 1);
            free(replay);
            replay = NULL;
            continue;
        }
        atomic_fetch_add(&b->done, 1);
    }
    return NULL;
}

static double
cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Bytes this process has passed to write(2) so far (/proc/self/io). */
static long long
written(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long long v = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "wchar: ", 7) == 0)
            v = strtoll(line + 7, NULL, 10);
    fclose(f);
    return v;
}

static int
run(struct bench *b, const char *dir, double secs, int nthreads)
{
    pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
    double t0, c0, elapsed, cpu;
    long long w0, w;
    int64_t n;
    int i;

    if (th == NULL)
        return 1;
    t0 = now_s();
    c0 = cpu_s();
    w0 = written();
    b->until = t0 + secs;
    for (i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, worker, b) != 0) {
            fprintf(stderr, "bench_store: cannot start thread %d\n", i);
            return 1;
        }
    for (i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    elapsed = now_s() - t0;
    cpu = cpu_s() - c0;
    w = written() - w0;
    free(th);
    n = atomic_load(&b->done);
    printf("store %s/bench.db: %d threads, %.1f s, synchronous=FULL\n", dir,
           nthreads, elapsed);
    printf("  decisions/s       %.0f (%" PRId64 " committed, %" PRId64
           " failed)\n",
           (double)n / elapsed, n, (int64_t)atomic_load(&b->failed));
    if (n == 0)
        return 1;
    printf("  cpu us/decision   %.1f\n", cpu * 1e6 / (double)n);
    printf(
        "  commits           %" PRId64 " (%.1f writes each)\n",
        (int64_t)atomic_load(&b->commits),
        (double)atomic_load(&b->committed) /
            (double)(atomic_load(&b->commits) ? atomic_load(&b->commits) : 1));
    printf("  write B/decision  %.0f\n", (double)w / (double)n);
    return atomic_load(&b->failed) != 0;
}

int
main(int argc, char **argv)
{
    struct bench b;
    struct store_opts o;
    struct ig_signing_key *key = NULL;
    struct ig_err err = {0};
    struct stat st;
    char path[4096];
    double secs = argc > 2 ? strtod(argv[2], NULL) : 10;
    int nthreads = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 64, rc;

    if (argc < 2 || secs <= 0 || nthreads < 1 || nthreads > 1024) {
        fprintf(stderr, "usage: bench_store DIR [SECONDS] [THREADS]\n");
        return 2;
    }
    if (sodium_init() < 0 || ig_signing_key_generate(&key) != IG_OK)
        return 1;
    (void)snprintf(path, sizeof(path), "%s/bench.db", argv[1]);
    memset(&b, 0, sizeof(b));
    memset(&o, 0, sizeof(o));
    o.path = path;
    o.synchronous_full = 1;
    o.audit_name = NAME;
    o.audit_key = key;
    o.checkpoint_every = 10000;
    if (store_open(&o, &b.store, &err) != IG_OK) {
        fprintf(stderr, "bench_store: %s\n", err.msg);
        return 1;
    }
    store_set_observer(b.store, on_commit, &b);
    rc = run(&b, argv[1], secs, nthreads);
    store_set_observer(b.store, NULL, NULL);
    store_close(b.store);
    ig_signing_key_free(key);
    if (rc == 0 && stat(path, &st) == 0)
        printf("  db B/decision     %.0f\n",
               (double)st.st_size / (double)atomic_load(&b.done));
    return rc;
}
