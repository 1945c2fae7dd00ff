/*
 * bench_witness.c - how many checkpoints can an `intentgate witness`
 * cosign per second, durably?
 *
 *   bench_witness config LOGS             print the [log] sections of LOGS
 *                                         bench logs (their vkeys)
 *   bench_witness run URL WITNESS_VKEY FIRST LOGS CHECKPOINTS [STEP]
 *
 * `run` drives LOGS logs (numbers FIRST, FIRST + 1, ...; each log once per
 * witness state, since a witness remembers its size) at once, one thread each
 * (a witness serialises the requests of one log - its check-and-update is
 * atomic per origin - so more logs is more parallel work). Each log grows by
 * STEP leaves (default 100) between checkpoints and sends CHECKPOINTS of them
 * in turn to URL/add-checkpoint, each with the consistency proof from the last,
 * over one keep-alive connection, and checks every answer's cosignature
 * with the witness's vkey. The checkpoints, notes and proofs are made
 * before the clock starts; the clock times the HTTP round trips, during
 * which the witness verifies the log's signature and the proof, commits
 * its new state (synchronous=FULL) and cosigns. Prints cosignatures per
 * second over all logs and the p50/p99 latency of one request. The log
 * keys come from fixed seeds, so `config` and `run` agree.
 * Not a test: the figures go in the issue notes.
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_cosig.h"
#include "audit_mem.h"
#include "ig_b64.h"

#define LOG_FMT "bench.example/log%d"
#define MAX_LOGS 64

struct logrun {
    int id;
    const char *url;
    const struct audit_witness_key *wit;
    int ncp;
    uint64_t step;
    char **bodies; /* the add-checkpoint bodies, made before the clock */
    size_t *lens;
    char **texts; /* each checkpoint's text, to check the cosignature */
    double *lat;  /* seconds per request */
    int failed;
};

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static struct ig_signing_key *
log_key(int i, unsigned char pk[32])
{
    unsigned char seed[32], sk[64];
    char paserk[IG_PASERK_SECRET_STRLEN + 1];
    struct ig_signing_key *k = NULL;
    size_t n;

    memset(seed, 0, sizeof(seed));
    seed[0] = (unsigned char)i;
    seed[1] = 0xbe;
    if (crypto_sign_seed_keypair(pk, sk, seed) != 0)
        abort();
    memcpy(paserk, "k4.secret.", 10);
    n = 10 + ig_b64_encode(sk, sizeof(sk), paserk + 10, sizeof(paserk) - 10);
    if (ig_signing_key_from_paserk(paserk, n, &k, NULL) != IG_OK)
        abort();
    sodium_memzero(sk, sizeof(sk));
    return k;
}

static void
print_config(int logs)
{
    unsigned char pk[32];
    char name[64], vkey[256];
    int i;

    for (i = 0; i < logs; i++) {
        ig_signing_key_free(log_key(i, pk));
        (void)snprintf(name, sizeof(name), LOG_FMT, i);
        if (audit_verifier_format(name, pk, vkey, sizeof(vkey)) != IG_OK)
            abort();
        printf("[log %s]\nkey = %s\n\n", name, vkey);
    }
}

/* Make the log's checkpoints, notes and request bodies. */
static void
prepare(struct logrun *r)
{
    unsigned char pk[32], leaf[32], root[32];
    unsigned char proof[AUDIT_CPROOF_MAX][32];
    struct ig_signing_key *k = log_key(r->id, pk);
    struct audit_mem *m = NULL;
    struct ig_buf text, note, body;
    char name[64];
    uint64_t size, old = 0, j;
    size_t n;
    int c;

    (void)snprintf(name, sizeof(name), LOG_FMT, r->id);
    if (audit_mem_new(&m) != IG_OK)
        abort();
    r->bodies = calloc((size_t)r->ncp, sizeof(char *));
    r->lens = calloc((size_t)r->ncp, sizeof(size_t));
    r->texts = calloc((size_t)r->ncp, sizeof(char *));
    r->lat = calloc((size_t)r->ncp, sizeof(double));
    if (!r->bodies || !r->lens || !r->texts || !r->lat)
        abort();
    for (c = 0; c < r->ncp; c++) {
        for (j = 0; j < r->step; j++) {
            size = audit_mem_size(m);
            audit_leaf_hash(&size, sizeof(size), leaf);
            if (audit_mem_append(m, leaf) != IG_OK)
                abort();
        }
        size = audit_mem_size(m);
        audit_frontier_root(audit_mem_frontier(m), root);
        ig_buf_init(&text, 4096);
        ig_buf_init(&note, 4096);
        ig_buf_init(&body, 1 << 16);
        if (audit_checkpoint_text(name, size, root, &text) != IG_OK ||
            audit_note_sign(text.data, text.len, name, k, &note) != IG_OK)
            abort();
        n = 0;
        if (old > 0 && audit_consistency_proof(old, size, audit_mem_fetch, m,
                                               proof, &n) != IG_OK)
            abort();
        if (audit_witness_req_format(old, (const unsigned char(*)[32])proof, n,
                                     note.data, note.len, &body) != IG_OK)
            abort();
        r->bodies[c] = ig_buf_take(&body, &r->lens[c]);
        r->texts[c] = ig_buf_take(&text, &n);
        ig_buf_release(&note);
        old = size;
    }
    audit_mem_free(m);
    ig_signing_key_free(k);
}

static size_t
collect(char *p, size_t size, size_t nmemb, void *ctx)
{
    struct ig_buf *b = ctx;

    return ig_buf_add(b, p, size * nmemb) == IG_OK ? size * nmemb : 0;
}

static void *
run_log(void *arg)
{
    struct logrun *r = arg;
    char url[512], line[AUDIT_COSIG_LINE_MAX + 1];
    struct curl_slist *hdr = NULL;
    struct ig_buf ans;
    CURL *h = curl_easy_init();
    uint64_t ts;
    long code;
    double t0;
    int c;

    (void)snprintf(url, sizeof(url), "%s/add-checkpoint", r->url);
    hdr = curl_slist_append(hdr, "Content-Type: text/plain");
    ig_buf_init(&ans, 1 << 16);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ans);
    for (c = 0; c < r->ncp; c++) {
        ig_buf_reset(&ans);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->bodies[c]);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)r->lens[c]);
        t0 = now_s();
        if (curl_easy_perform(h) != CURLE_OK ||
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK ||
            code != 200) {
            fprintf(stderr, "log %d checkpoint %d: HTTP %ld %.*s\n", r->id, c,
                    code, (int)ans.len, ans.data ? ans.data : "");
            r->failed = 1;
            break;
        }
        r->lat[c] = now_s() - t0;
        if (audit_cosig_pick(ans.data, ans.len, r->texts[c],
                             strlen(r->texts[c]), r->wit, line, sizeof(line),
                             &ts, NULL) != IG_OK) {
            fprintf(stderr, "log %d checkpoint %d: no valid cosignature\n",
                    r->id, c);
            r->failed = 1;
            break;
        }
    }
    ig_buf_release(&ans);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

static int
run(const char *url, const char *vkey, int first, int logs, int ncp,
    uint64_t step)
{
    struct logrun r[MAX_LOGS];
    pthread_t th[MAX_LOGS];
    struct audit_witness_key wit;
    struct ig_err err;
    double t0, secs, *all;
    size_t n = 0;
    int i, c, failed = 0;

    if (audit_witness_key_parse(vkey, strlen(vkey), &wit, &err) != IG_OK) {
        fprintf(stderr, "bench_witness: %s\n", err.msg);
        return 2;
    }
    memset(r, 0, sizeof(r));
    for (i = 0; i < logs; i++) {
        r[i].id = first + i;
        r[i].url = url;
        r[i].wit = &wit;
        r[i].ncp = ncp;
        r[i].step = step;
        prepare(&r[i]);
    }
    t0 = now_s();
    for (i = 0; i < logs; i++)
        if (pthread_create(&th[i], NULL, run_log, &r[i]) != 0)
            abort();
    for (i = 0; i < logs; i++)
        pthread_join(th[i], NULL);
    secs = now_s() - t0;
    all = calloc((size_t)(logs * ncp), sizeof(double));
    for (i = 0; i < logs; i++) {
        failed |= r[i].failed;
        for (c = 0; c < ncp; c++)
            all[n++] = r[i].lat[c];
    }
    if (failed) {
        fprintf(stderr, "bench_witness: a request failed\n");
        return 1;
    }
    qsort(all, n, sizeof(double), cmp_double);
    printf("logs %d, checkpoints %d each (+%" PRIu64 " leaves each): "
           "%.0f cosignatures/s; latency p50 %.2f ms, p99 %.2f ms\n",
           logs, ncp, step, (double)n / secs, all[n / 2] * 1e3,
           all[(n * 99) / 100] * 1e3);
    free(all);
    for (i = 0; i < logs; i++) {
        for (c = 0; c < ncp; c++) {
            free(r[i].bodies[c]);
            free(r[i].texts[c]);
        }
        free(r[i].bodies);
        free(r[i].lens);
        free(r[i].texts);
        free(r[i].lat);
    }
    return 0;
}

static long
num(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    return *s != '\0' && *end == '\0' ? v : -1;
}

int
main(int argc, char **argv)
{
    long logs, first, ncp, step = 100;

    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return 2;
    if (argc == 3 && strcmp(argv[1], "config") == 0) {
        logs = num(argv[2]);
        if (logs < 1 || logs > MAX_LOGS)
            return 2;
        print_config((int)logs);
        return 0;
    }
    if ((argc == 7 || argc == 8) && strcmp(argv[1], "run") == 0) {
        first = num(argv[4]);
        logs = num(argv[5]);
        ncp = num(argv[6]);
        if (argc == 8)
            step = num(argv[7]);
        if (first >= 0 && logs >= 1 && first + logs <= MAX_LOGS && ncp >= 1 &&
            ncp <= 1000000 && step >= 1)
            return run(argv[2], argv[3], (int)first, (int)logs, (int)ncp,
                       (uint64_t)step);
    }
    fprintf(stderr, "usage: bench_witness config LOGS\n"
                    "       bench_witness run URL WITNESS_VKEY FIRST LOGS "
                    "CHECKPOINTS [STEP]\n");
    return 2;
}
