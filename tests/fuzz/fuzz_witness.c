/*
 * fuzz_witness.c - libFuzzer target for what a witness and a log read from
 * each other (audit_cosig.h): the add-checkpoint body a witness parses, a
 * witness's answer the PDP picks a cosignature from, the 409 size body,
 * a witness vkey from a config, a cosigned note `audit verify` reads.
 *
 * The witness key is fixed (the Ed25519 seed of 32 bytes 0x57, name
 * FUZZ_WITNESS), and the seed corpus (tests/fuzz/corpus/witness/) holds
 * real requests, answers and notes. Beyond "never crash": a request that
 * parses formats back to the same bytes (one spelling); a size body that
 * parses formats back; a vkey that parses formats back to the same key;
 * outputs of failed calls are zero.
 */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit_cosig.h"

#define FUZZ_WITNESS "fuzz.example/witness"
#define FUZZ_TEXT                                                              \
    "fuzz.example/log\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct audit_witness_key wit;
static struct audit_witness_req req;

static void
init_once(void)
{
    unsigned char seed[32], pk[32], sk[64];
    static int done;

    if (done)
        return;
    memset(seed, 0x57, sizeof(seed));
    if (sodium_init() < 0 || crypto_sign_seed_keypair(pk, sk, seed) != 0 ||
        audit_witness_key_init(&wit, FUZZ_WITNESS, pk) != IG_OK)
        abort();
    done = 1;
}

static void
check_request(const char *s, size_t n)
{
    struct ig_buf b;

    if (audit_witness_req_parse(s, n, &req, NULL) != IG_OK) {
        if (req.old != 0 || req.nproof != 0 || req.note != NULL)
            abort();
        return;
    }
    if (req.note < s || req.note + req.note_len != s + n || req.note_len == 0)
        abort();
    ig_buf_init(&b, AUDIT_WITNESS_REQ_MAX + 64);
    if (audit_witness_req_format(req.old, (const unsigned char(*)[32])req.proof,
                                 req.nproof, req.note, req.note_len,
                                 &b) != IG_OK ||
        b.len != n || memcmp(b.data, s, n) != 0)
        abort();
    ig_buf_release(&b);
}

static void
check_answer(const char *s, size_t n)
{
    char line[AUDIT_COSIG_LINE_MAX + 1];
    uint64_t ts;
    enum ig_status st;

    st = audit_cosig_pick(s, n, FUZZ_TEXT, strlen(FUZZ_TEXT), &wit, line,
                          sizeof(line), &ts, NULL);
    if (st != IG_OK && (ts != 0 || line[0] != '\0'))
        abort();
    if (st == IG_OK && (line[0] == '\0' || ts == 0))
        abort();
    st = audit_cosig_find(s, n, &wit, &ts, NULL);
    if (st != IG_OK && ts != 0)
        abort();
}

static void
check_size(const char *s, size_t n)
{
    char again[32];
    uint64_t v;

    if (audit_witness_size_parse(s, n, &v) != IG_OK) {
        if (v != 0)
            abort();
        return;
    }
    audit_witness_size_format(v, again, sizeof(again));
    if (strlen(again) != n || memcmp(again, s, n) != 0)
        abort();
}

static void
check_vkey(const char *s, size_t n)
{
    struct audit_witness_key k, k2;
    char out[AUDIT_NAME_MAX + 80];

    if (audit_witness_key_parse(s, n, &k, NULL) != IG_OK) {
        if (k.key_id != 0 || k.name[0] != '\0')
            abort();
        return;
    }
    if (audit_witness_key_format(k.name, k.pk, out, sizeof(out)) != IG_OK ||
        audit_witness_key_parse(out, strlen(out), &k2, NULL) != IG_OK ||
        memcmp(&k, &k2, sizeof(k)) != 0)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *name;
    size_t name_len;
    uint32_t id;
    uint64_t ts;

    init_once();
    check_request(s, size);
    check_answer(s, size);
    check_size(s, size);
    check_vkey(s, size);
    (void)audit_cosig_line_info(s, size, &name, &name_len, &id, &ts);
    return 0;
}
