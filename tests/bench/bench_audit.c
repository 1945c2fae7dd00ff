/*
 * bench_audit.c - how fast is the audit tree on this machine?
 *
 *   build/release/tests/bench_audit [LEAVES]
 *
 * Two figures, against the targets:
 *   - append: the leaf hash of a ~500-byte leaf plus a frontier append
 *     with a no-op on_node (what the PDP pays per event, without SQLite),
 *     in ns per leaf over 1,000,000 leaves (target <= 5 us);
 *   - verify: the offline verifier over LEAVES (default 1,000,000)
 *     in-memory ~400-byte leaves with a signed checkpoint every 10,000,
 *     in leaves per second on one core (target >= 300,000/s). The
 *     checkpoints are signed and the leaves built before the clock starts;
 *     opening the checkpoints (Ed25519) is timed with the leaves.
 * Each is the median of 3 runs. Not a test: numbers go in the issue notes.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_note.h"
#include "audit_tree.h"
#include "audit_verify.h"
#include "ig_key.h"

#define RUNS 3
#define APPEND_LEAVES 1000000
#define CP_EVERY 10000
#define LOG "bench.example/log"

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

static int
noop_node(void *ctx, unsigned level, uint64_t index,
          const unsigned char hash[AUDIT_HASH_BYTES])
{
    (void)ctx;
    (void)level;
    (void)index;
    (void)hash;
    return 0;
}

/* A JSON-looking leaf of about len bytes for sequence number i. */
static size_t
make_leaf(char *out, size_t len, uint64_t i)
{
    int n = snprintf(out, len,
                     "{\"seq\":%llu,\"type\":\"intent.decided\",\"decision\":"
                     "\"allow\",\"agent\":\"billing-agent\",\"pad\":\"",
                     (unsigned long long)i);
    size_t k = (size_t)n;

    for (; k < len - 3; k++)
        out[k] = (char)('a' + (i + k) % 26);
    out[k++] = '"';
    out[k++] = '}';
    out[k] = '\0';
    return k;
}

static double
bench_append(void)
{
    static char leaf[512];
    unsigned char h[AUDIT_HASH_BYTES];
    struct audit_frontier f;
    double t0, t[RUNS];
    size_t len = make_leaf(leaf, 500, 0);
    uint64_t i;
    int r;

    for (r = 0; r < RUNS; r++) {
        audit_frontier_init(&f);
        t0 = now_s();
        for (i = 0; i < APPEND_LEAVES; i++) {
            leaf[8] = (char)('0' + i % 10);
            audit_leaf_hash(leaf, len, h);
            if (audit_frontier_append(&f, h, noop_node, NULL) != IG_OK)
                abort();
        }
        t[r] = (now_s() - t0) / APPEND_LEAVES * 1e9;
    }
    qsort(t, RUNS, sizeof(t[0]), cmp_double);
    return t[RUNS / 2];
}

static double
bench_verify(uint64_t nleaves, uint64_t *checked)
{
    struct ig_signing_key *k = NULL;
    struct audit_verifier ver;
    struct ig_public_key pub;
    struct audit_frontier f;
    struct audit_report rep;
    struct audit_verify *v;
    unsigned char h[AUDIT_HASH_BYTES];
    size_t ncp = (size_t)(nleaves / CP_EVERY), c = 0, *lens;
    char **notes, *leaves;
    double t0, t[RUNS];
    struct ig_buf text, note;
    uint64_t i;
    int r;

    leaves = malloc((size_t)nleaves * 400);
    notes = calloc(ncp + 1, sizeof(*notes));
    lens = calloc(ncp + 1, sizeof(*lens));
    if (leaves == NULL || notes == NULL || lens == NULL ||
        ig_signing_key_generate(&k) != IG_OK)
        abort();
    ig_signing_key_public(k, &pub);
    if (audit_verifier_init(&ver, LOG, pub.pk) != IG_OK)
        abort();
    audit_frontier_init(&f);
    for (i = 0; i < nleaves; i++) {
        char *leaf = leaves + i * 400;

        (void)make_leaf(leaf, 400, i);
        audit_leaf_hash(leaf, 399, h);
        if (audit_frontier_append(&f, h, NULL, NULL) != IG_OK)
            abort();
        if (f.size % CP_EVERY == 0) {
            audit_frontier_root(&f, h);
            ig_buf_init(&text, 4096);
            ig_buf_init(&note, 4096);
            if (audit_checkpoint_text(LOG, f.size, h, &text) != IG_OK ||
                audit_note_sign(text.data, text.len, LOG, k, &note) != IG_OK)
                abort();
            notes[c] = ig_buf_take(&note, &lens[c]);
            c++;
            ig_buf_release(&text);
        }
    }
    for (r = 0; r < RUNS; r++) {
        t0 = now_s();
        if (audit_verify_start(&v, &ver, (const char *const *)notes, lens, c) !=
            IG_OK)
            abort();
        for (i = 0; i < nleaves; i++)
            audit_verify_leaf(v, leaves + i * 400, 399);
        audit_verify_end(v, &rep);
        t[r] = (double)nleaves / (now_s() - t0);
        audit_verify_free(v);
        if (rep.failure != AUDIT_OK)
            abort();
        *checked = rep.checked;
    }
    for (i = 0; i < c; i++)
        free(notes[i]);
    free(notes);
    free(lens);
    free(leaves);
    ig_signing_key_free(k);
    qsort(t, RUNS, sizeof(t[0]), cmp_double);
    return t[RUNS / 2];
}

int
main(int argc, char **argv)
{
    uint64_t nleaves = 1000000, checked = 0;
    double append_ns, verify_rate;
    char *end;

    if (argc > 1) {
        nleaves = strtoull(argv[1], &end, 10);
        if (*end != '\0' || nleaves == 0)
            return 2;
    }
    if (ig_crypto_init() != IG_OK)
        return 1;
    append_ns = bench_append();
    printf("append: %.0f ns/leaf (500-byte leaf hash + frontier append, "
           "median of %d x %d leaves; target <= 5000)\n",
           append_ns, RUNS, APPEND_LEAVES);
    verify_rate = bench_verify(nleaves, &checked);
    printf("verify: %.0f leaves/s (%llu 400-byte leaves, %llu checkpoints "
           "checked, median of %d runs; target >= 300000)\n",
           verify_rate, (unsigned long long)nleaves,
           (unsigned long long)checked, RUNS);
    return 0;
}
