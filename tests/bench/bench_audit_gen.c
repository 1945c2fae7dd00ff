/*
 * bench_audit_gen.c - build an audit log of N leaves for
 * bench_audit_verify.sh, through the PDP store's real append path.
 *
 *   bench_audit_gen DB N KEY_OUT
 *   bench_audit_gen --open DB
 *
 * Opens (creates) the store at DB with a fresh Ed25519 audit key and a
 * checkpoint every 10,000 leaves, appends N events of about 400 bytes
 * (intent.received / intent.decided pairs shaped like the PDP's, canonical
 * JSON) in batches of 1,000 with store_put_events - so the store
 * hashes every leaf, stores the tree as tiles (audit_tiles) and signs the
 * checkpoints as it does in production - closes it (a last checkpoint),
 * and writes the log's verifier key to KEY_OUT.
 *
 * --open times what every PDP start does before it serves: opening the
 * store recomputes every leaf and subtree from the events and checks them
 * against audit_tiles and the checkpoints (store_audit_check.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_note.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_hash.h"
#include "ig_key.h"
#include "ig_time.h"
#include "store.h"

#define BATCH 1000
#define EVERY 10000
#define NAME "bench.intentgate.example/audit"

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One event's canonical text into out (reset first). */
static int
event_text(uint64_t i, struct ig_buf *out)
{
    char id[IG_UUID_STRLEN + 1], when[IG_TIME_STRLEN + 1],
        h[IG_HASH_STRLEN + 1];
    char jti[IG_UUID_STRLEN + 1], order[32];
    json_t *ev;
    int rc;

    ig_uuid4(id);
    ig_uuid4(jti);
    /* Logged now, as the PDP would (its checkpoints are signed now). */
    if (ig_time_format(ig_time_now(), when) != IG_OK)
        return -1;
    (void)snprintf(order, sizeof(order), "order/%llu",
                   (unsigned long long)(i / 2));
    ig_hash_bytes(id, sizeof(id), h);
    if (i % 2 == 0)
        ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, "
                       "s:{s:i, s:s}, s:{s:s}}}",
                       "type", "intent.received", "time", when, "intent_id", id,
                       "principal", "release-bot", "tenant", "acme",
                       "intent_hash", h, "intent", "version",
                       "intentgate.intent/1", "action", "payments.refund",
                       "resource", order, "params", "amount", 125, "currency",
                       "EUR", "context", "requested_by", "alice@example.com");
    else
        ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[s], s:s, s:s, "
                       "s:{s:s, s:s, s:s}}",
                       "type", "intent.decided", "time", when, "intent_id", id,
                       "decision_id", jti, "decision", "ALLOW", "reasons",
                       "WITHIN_LIMITS", "message", "refund within the limits",
                       "policy_revision", h, "grant", "jti", jti, "audience",
                       "executor-1", "expires_at", when);
    if (ev == NULL)
        return -1;
    ig_buf_reset(out);
    rc = ig_canon_write(ev, out, NULL) == IG_OK ? 0 : -1;
    json_decref(ev);
    return rc;
}

static int
write_key(const char *path, const struct ig_signing_key *k)
{
    struct ig_public_key pub;
    char text[AUDIT_NAME_MAX + 128];
    FILE *f;
    int rc;

    ig_signing_key_public(k, &pub);
    if (audit_verifier_format(NAME, pub.pk, text, sizeof(text)) != IG_OK ||
        (f = fopen(path, "w")) == NULL)
        return -1;
    rc = fprintf(f, "%s\n", text) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

static int
append_all(struct store *s, uint64_t n)
{
    struct ig_buf bufs[BATCH];
    const char *ev[BATCH];
    uint64_t done = 0;
    size_t k, m;
    int rc = 0;

    for (k = 0; k < BATCH; k++)
        ig_buf_init(&bufs[k], 64 * 1024);
    while (rc == 0 && done < n) {
        m = n - done < BATCH ? (size_t)(n - done) : BATCH;
        for (k = 0; k < m && rc == 0; k++) {
            rc = event_text(done + k, &bufs[k]);
            ev[k] = bufs[k].data;
        }
        if (rc == 0 && store_put_events(s, ev, m) != IG_OK)
            rc = -1;
        done += m;
    }
    for (k = 0; k < BATCH; k++)
        ig_buf_release(&bufs[k]);
    return rc;
}

static int
time_open(const char *path)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;
    uint64_t size = 0;
    unsigned char root[32];
    double t0 = now_s(), t1;

    memset(&o, 0, sizeof(o));
    o.path = path;
    if (ig_crypto_init() != IG_OK || store_open(&o, &s, &err) != IG_OK) {
        (void)fprintf(stderr, "bench_audit_gen: %s\n", err.msg);
        return 1;
    }
    t1 = now_s();
    if (store_audit_head(s, &size, root) != IG_OK)
        size = 0;
    store_close(s);
    (void)printf("open-time check: %llu leaves in %.2f s (%.0f leaves/s)\n",
                 (unsigned long long)size, t1 - t0, (double)size / (t1 - t0));
    return 0;
}

int
main(int argc, char **argv)
{
    struct store_opts o;
    struct ig_signing_key *key = NULL;
    struct store *s = NULL;
    struct ig_err err;
    unsigned long long n;
    char *end;
    double t0;

    if (argc == 3 && strcmp(argv[1], "--open") == 0)
        return time_open(argv[2]);
    if (argc != 4) {
        (void)fputs("usage: bench_audit_gen DB N KEY_OUT | --open DB\n",
                    stderr);
        return 2;
    }
    errno = 0;
    n = strtoull(argv[2], &end, 10);
    if (errno != 0 || *end != '\0' || n == 0) {
        (void)fputs("bench_audit_gen: N must be a positive number\n", stderr);
        return 2;
    }
    if (ig_crypto_init() != IG_OK || ig_signing_key_generate(&key) != IG_OK ||
        write_key(argv[3], key) != 0) {
        (void)fputs("bench_audit_gen: cannot make the key\n", stderr);
        return 1;
    }
    memset(&o, 0, sizeof(o));
    o.path = argv[1];
    o.audit_name = NAME;
    o.audit_key = key;
    o.checkpoint_every = EVERY;
    if (store_open(&o, &s, &err) != IG_OK) {
        (void)fprintf(stderr, "bench_audit_gen: %s\n", err.msg);
        ig_signing_key_free(key);
        return 1;
    }
    t0 = now_s();
    if (append_all(s, n) != 0) {
        (void)fputs("bench_audit_gen: append failed\n", stderr);
        store_close(s);
        ig_signing_key_free(key);
        return 1;
    }
    store_close(s);
    ig_signing_key_free(key);
    (void)printf("appended %llu leaves in %.2f s (%.0f leaves/s)\n", n,
                 now_s() - t0, (double)n / (now_s() - t0));
    return 0;
}
