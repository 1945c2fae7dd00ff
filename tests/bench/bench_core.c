/*
 * bench_core.c - how fast are the core primitives on this machine?
 *
 *   build/release/tests/bench_core [SECONDS_PER_CASE]
 *
 * Measures ns/op, as the median of 5 timed rounds (each round runs the case
 * for about SECONDS_PER_CASE / 5, default 1 s per case in all), for:
 *   - SHA-256 of 64 bytes and of 1 KiB through core (ig_sha256_2:
 *     libcrypto), beside libsodium's crypto_hash_sha256 of the same bytes
 *   - canonicalize + hash of a typical ~1 KiB intent binding (parsed once)
 *   - parse + canonicalize + hash of the same binding from its text
 *   - PASETO v4.public sign and verify of a grant-sized payload, beside bare
 *     libsodium crypto_sign_detached / crypto_sign_verify_detached over the
 *     exact bytes PASETO signs (its PAE), and the ratio between them
 *   - full grant sign (claims -> canonical payload -> token) and verify
 *     (footer, kid lookup, signature, claims checks)
 * Prints one line per case. Not a test: numbers go in the issue notes.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_canon.h"
#include "ig_grant.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_key.h"
#include "ig_limits.h"
#include "ig_paseto.h"
#include "ig_time.h"

#define ROUNDS 5

typedef void (*bench_fn)(void *ctx);

static volatile unsigned long sink;

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

/* Median ns/op over ROUNDS rounds of about round_ns each. */
static double
measure(bench_fn fn, void *ctx, double round_ns)
{
    double t0, per[ROUNDS], elapsed;
    unsigned long n = 1, i;
    int r;

    /* Calibrate: double n until one batch takes >= 1/10 of a round. */
    for (;;) {
        t0 = now_ns();
        for (i = 0; i < n; i++)
            fn(ctx);
        elapsed = now_ns() - t0;
        if (elapsed >= round_ns / 10)
            break;
        n *= 2;
    }
    n = (unsigned long)((double)n * round_ns / elapsed) + 1;
    for (r = 0; r < ROUNDS; r++) {
        t0 = now_ns();
        for (i = 0; i < n; i++)
            fn(ctx);
        per[r] = (now_ns() - t0) / (double)n;
    }
    qsort(per, ROUNDS, sizeof(per[0]), cmp_double);
    return per[ROUNDS / 2];
}

static void
die(const char *what)
{
    (void)fprintf(stderr, "bench_core: %s\n", what);
    exit(1);
}

/* ---- the cases ---- */

struct ctx {
    json_t *binding;
    char *text;
    size_t text_len;
    struct ig_signing_key *key;
    struct ig_public_key pub;
    struct ig_keyring *ring;
    struct ig_grant_claims claims;
    char hash[IG_HASH_STRLEN + 1];
    struct ig_buf payload, token, grant, out;
    unsigned char pae[2048];
    size_t pae_len;
    unsigned char sig[64];
    unsigned char sk[64];
    unsigned char data[1024]; /* what the SHA-256 cases hash */
};

static void
sha256_core(struct ctx *c, size_t n)
{
    unsigned char h[IG_SHA256_BYTES];

    ig_sha256_2(c->data, n, NULL, 0, h);
    sink += h[0];
}

static void
sha256_sodium(struct ctx *c, size_t n)
{
    unsigned char h[IG_SHA256_BYTES];

    crypto_hash_sha256(h, c->data, n);
    sink += h[0];
}

static void
case_sha256_64(void *p)
{
    sha256_core(p, 64);
}

static void
case_sha256_1k(void *p)
{
    sha256_core(p, 1024);
}

static void
case_sodium_sha256_64(void *p)
{
    sha256_sodium(p, 64);
}

static void
case_sodium_sha256_1k(void *p)
{
    sha256_sodium(p, 1024);
}

static void
case_canon_hash(void *p)
{
    struct ctx *c = p;

    if (ig_hash_json(c->binding, c->hash, NULL) != IG_OK)
        die("ig_hash_json failed");
    sink += (unsigned char)c->hash[7];
}

static void
case_parse_canon_hash(void *p)
{
    struct ctx *c = p;
    json_t *v;

    if (ig_json_parse(c->text, c->text_len, &v, NULL) != IG_OK)
        die("ig_json_parse failed");
    if (ig_hash_json(v, c->hash, NULL) != IG_OK)
        die("ig_hash_json failed");
    json_decref(v);
    sink += (unsigned char)c->hash[7];
}

static void
case_paseto_sign(void *p)
{
    struct ctx *c = p;

    ig_buf_reset(&c->out);
    if (ig_paseto_sign(c->key, c->payload.data, c->payload.len,
                       "{\"kid\":\"x\"}", 11, c->hash, IG_HASH_STRLEN, &c->out,
                       NULL) != IG_OK)
        die("ig_paseto_sign failed");
    sink += c->out.len;
}

static void
case_bare_sign(void *p)
{
    struct ctx *c = p;

    crypto_sign_detached(c->sig, NULL, c->pae, c->pae_len, c->sk);
    sink += c->sig[0];
}

static void
case_paseto_verify(void *p)
{
    struct ctx *c = p;

    ig_buf_reset(&c->out);
    if (ig_paseto_verify(&c->pub, c->token.data, c->token.len, c->hash,
                         IG_HASH_STRLEN, &c->out, NULL, NULL) != IG_OK)
        die("ig_paseto_verify failed");
    sink += c->out.len;
}

static void
case_bare_verify(void *p)
{
    struct ctx *c = p;

    if (crypto_sign_verify_detached(c->sig, c->pae, c->pae_len, c->pub.pk) != 0)
        die("crypto_sign_verify_detached failed");
    sink++;
}

static void
case_grant_sign(void *p)
{
    struct ctx *c = p;

    ig_buf_reset(&c->out);
    if (ig_grant_sign(c->key, &c->claims, &c->out, NULL) != IG_OK)
        die("ig_grant_sign failed");
    sink += c->out.len;
}

static void
case_grant_verify(void *p)
{
    struct ctx *c = p;
    json_t *claims;

    if (ig_grant_verify(c->ring, c->grant.data, c->grant.len, c->hash,
                        c->claims.aud, c->claims.iat + 1, &claims,
                        NULL) != IG_OK)
        die("ig_grant_verify failed");
    sink += json_object_size(claims);
    json_decref(claims);
}

/* ---- setup ---- */

static const char sample_binding[] =
    "{\"version\":\"intentgate.intent/1\","
    "\"intent_id\":\"4b0c6b9e-2f7a-4c1e-9d3a-8f2e5a1c7b60\","
    "\"principal\":\"agent:release-bot\",\"tenant\":\"acme\","
    "\"action\":\"payments.refund\",\"resource\":\"orders/ord_10293\","
    "\"created_at\":\"2026-11-29T17:00:00Z\","
    "\"expires_at\":\"2026-11-29T17:01:00Z\","
    "\"params\":{\"amount\":42.5,\"currency\":\"EUR\","
    "\"order_id\":\"ord_10293\",\"reason\":\"duplicate charge on the "
    "customer's card, confirmed by the payment provider\","
    "\"line_items\":[{\"sku\":\"SKU-1001\",\"qty\":1,\"price\":19.99},"
    "{\"sku\":\"SKU-2002\",\"qty\":2,\"price\":11.255},"
    "{\"sku\":\"SKU-3003\",\"qty\":1,\"price\":0.001}],"
    "\"notify_customer\":true,\"metadata\":{\"channel\":\"support\","
    "\"locale\":\"fr-FR\",\"note\":\"Remboursement partiel \\u00e9tabli "
    "apr\\u00e8s v\\u00e9rification\",\"retry\":null}},"
    "\"context\":{\"requested_by\":\"alice@example.com\","
    "\"ticket\":\"SUP-7731\",\"run_id\":\"run-2026-11-29-0042\","
    "\"session_id\":\"6f1d2c3b-aaaa-4bbb-8ccc-0123456789ab\","
    "\"tool_use_id\":\"toolu_01ABCDEFGHIJKLMNOPQRSTUV\","
    "\"cwd\":\"/home/agent/work/payments-service\","
    "\"labels\":[\"refund\",\"tier-1\",\"eu\",\"manual-review-skipped\"]}}";

static void
put_le64(unsigned char *p, size_t n)
{
    int i;

    for (i = 0; i < 8; i++)
        p[i] = (unsigned char)(((unsigned long long)n >> (8 * i)) & 0xff);
    p[7] &= 0x7f;
}

static void
add_piece(struct ctx *c, const void *p, size_t n)
{
    if (c->pae_len + 8 + n > sizeof(c->pae))
        die("PAE buffer too small");
    put_le64(c->pae + c->pae_len, n);
    memcpy(c->pae + c->pae_len + 8, p, n);
    c->pae_len += 8 + n;
}

static void
setup(struct ctx *c)
{
    struct ig_buf canon;
    char sk_paserk[IG_PASERK_SECRET_STRLEN + 1];
    size_t sklen;

    if (ig_crypto_init() != IG_OK)
        die("sodium_init failed");
    c->text = strdup(sample_binding);
    c->text_len = strlen(sample_binding);
    if (ig_json_parse(c->text, c->text_len, &c->binding, NULL) != IG_OK)
        die("sample binding does not parse");
    ig_buf_init(&canon, IG_CANON_MAX_BYTES);
    if (ig_canon_write(c->binding, &canon, NULL) != IG_OK)
        die("sample binding does not canonicalize");
    printf("intent binding: %zu bytes canonical\n", canon.len);
    ig_buf_release(&canon);
    if (ig_hash_json(c->binding, c->hash, NULL) != IG_OK)
        die("hash failed");

    if (ig_signing_key_generate(&c->key) != IG_OK)
        die("keygen failed");
    ig_signing_key_public(c->key, &c->pub);
    ig_signing_key_to_paserk(c->key, sk_paserk, sizeof(sk_paserk));
    if (sodium_base642bin(c->sk, sizeof(c->sk), sk_paserk + 10,
                          strlen(sk_paserk + 10), NULL, &sklen, NULL,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        sklen != 64)
        die("cannot decode own secret key");
    sodium_memzero(sk_paserk, sizeof(sk_paserk));
    if (ig_keyring_new(&c->ring) != IG_OK ||
        ig_keyring_add(c->ring, &c->pub) != IG_OK)
        die("keyring failed");

    c->claims.iss = "pdp-1";
    c->claims.aud = "executor-payments";
    c->claims.sub = "agent:release-bot";
    c->claims.jti = "0d7e3c52-6f0b-4b8e-9a51-2c4f6d8e1a3b";
    c->claims.intent_id = "4b0c6b9e-2f7a-4c1e-9d3a-8f2e5a1c7b60";
    c->claims.intent_hash = c->hash;
    c->claims.action = "payments.refund";
    c->claims.resource = "orders/ord_10293";
    c->claims.decision_id = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
    c->claims.policy_revision =
        "sha256:"
        "1111111111111111111111111111111111111111111111111111111111111111";
    c->claims.iat = ig_time_now();
    c->claims.nbf = c->claims.iat;
    c->claims.exp = c->claims.iat + 3600;

    ig_buf_init(&c->grant, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&c->out, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&c->token, IG_TOKEN_MAX_BYTES);
    ig_buf_init(&c->payload, IG_TOKEN_MAX_BYTES);
    if (ig_grant_sign(c->key, &c->claims, &c->grant, NULL) != IG_OK)
        die("grant sign failed");
    /* A grant-sized payload: the claims of the grant just made. */
    if (ig_paseto_verify(&c->pub, c->grant.data, c->grant.len, c->hash,
                         IG_HASH_STRLEN, &c->payload, NULL, NULL) != IG_OK)
        die("own grant does not verify");
    if (ig_paseto_sign(c->key, c->payload.data, c->payload.len,
                       "{\"kid\":\"x\"}", 11, c->hash, IG_HASH_STRLEN,
                       &c->token, NULL) != IG_OK)
        die("paseto sign failed");
    put_le64(c->pae, 4);
    c->pae_len = 8;
    add_piece(c, "v4.public.", 10);
    add_piece(c, c->payload.data, c->payload.len);
    add_piece(c, "{\"kid\":\"x\"}", 11);
    add_piece(c, c->hash, IG_HASH_STRLEN);
    crypto_sign_detached(c->sig, NULL, c->pae, c->pae_len, c->sk);
    printf("grant payload: %zu bytes, token: %zu bytes, PAE: %zu bytes\n",
           c->payload.len, c->grant.len, c->pae_len);
}

int
main(int argc, char **argv)
{
    struct ctx c;
    double secs = 1.0, round_ns, ps, bs, pv, bv;
    char *end;

    memset(&c, 0, sizeof(c));
    if (argc > 1) {
        secs = strtod(argv[1], &end);
        if (*end != '\0' || secs <= 0 || secs > 60)
            die("usage: bench_core [SECONDS_PER_CASE (0-60)]");
    }
    round_ns = secs * 1e9 / ROUNDS;
    setup(&c);
    randombytes_buf(c.data, sizeof(c.data));

    printf("%-40s %10.0f ns/op\n", "sha256 64 B (core: libcrypto)",
           measure(case_sha256_64, &c, round_ns));
    printf("%-40s %10.0f ns/op\n", "sha256 1 KiB (core: libcrypto)",
           measure(case_sha256_1k, &c, round_ns));
    printf("%-40s %10.0f ns/op\n", "sha256 64 B (libsodium)",
           measure(case_sodium_sha256_64, &c, round_ns));
    printf("%-40s %10.0f ns/op\n", "sha256 1 KiB (libsodium)",
           measure(case_sodium_sha256_1k, &c, round_ns));
    printf("%-40s %10.0f ns/op\n", "canonicalize+hash (parsed binding)",
           measure(case_canon_hash, &c, round_ns));
    printf("%-40s %10.0f ns/op\n", "parse+canonicalize+hash (from text)",
           measure(case_parse_canon_hash, &c, round_ns));
    ps = measure(case_paseto_sign, &c, round_ns);
    bs = measure(case_bare_sign, &c, round_ns);
    pv = measure(case_paseto_verify, &c, round_ns);
    bv = measure(case_bare_verify, &c, round_ns);
    printf("%-40s %10.0f ns/op\n", "paseto v4.public sign", ps);
    printf("%-40s %10.0f ns/op\n", "libsodium crypto_sign_detached (PAE)", bs);
    printf("%-40s %10.3f\n", "  sign ratio paseto/bare", ps / bs);
    printf("%-40s %10.0f ns/op\n", "paseto v4.public verify", pv);
    printf("%-40s %10.0f ns/op\n", "libsodium crypto_sign_verify_detached", bv);
    printf("%-40s %10.3f\n", "  verify ratio paseto/bare", pv / bv);
    printf("%-40s %10.0f ns/op\n", "grant sign (claims -> token)",
           measure(case_grant_sign, &c, round_ns));
    printf("%-40s %10.0f ns/op\n", "grant verify (token -> claims)",
           measure(case_grant_verify, &c, round_ns));

    json_decref(c.binding);
    free(c.text);
    ig_signing_key_free(c.key);
    ig_keyring_free(c.ring);
    sodium_memzero(c.sk, sizeof(c.sk));
    ig_buf_release(&c.grant);
    ig_buf_release(&c.out);
    ig_buf_release(&c.token);
    ig_buf_release(&c.payload);
    return (int)(sink & 0);
}
