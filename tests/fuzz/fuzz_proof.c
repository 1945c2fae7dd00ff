/*
 * fuzz_proof.c - libFuzzer target for the C2SP tlog-proof reader and the
 * proof verifiers behind it: audit_proof_parse, then audit_checkpoint_open
 * of the note it carries with the fixed fuzz key (seed 32 x 0x42, name
 * FUZZ_LOG), then audit_verify_inclusion of the leaf "leaf <index>" - the
 * leaves audit_sample used for the seed corpus (tests/fuzz/corpus/proof/),
 * so real proofs reach the verifier. Whatever parses is also run through
 * both verifiers with the sizes and hashes it claims, checked or not.
 *
 * Properties: a proof without an "extra" line formats back to the same
 * bytes; a failed parse leaves its outputs empty; a verifying inclusion
 * proof stops verifying when its leaf changes.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "audit_tree.h"

#define FUZZ_LOG "fuzz.example/log"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct audit_verifier ver;

static void
init_once(void)
{
    unsigned char seed[32], pk[32], sk[64];
    static int done;

    if (done)
        return;
    memset(seed, 0x42, sizeof(seed));
    if (sodium_init() < 0 || crypto_sign_seed_keypair(pk, sk, seed) != 0 ||
        audit_verifier_init(&ver, FUZZ_LOG, pk) != IG_OK)
        abort();
    done = 1;
}

/* format(parse(s)) == s when there is no extra line and no NUL. */
static void
check_round_trip(const char *s, size_t size, uint64_t index,
                 const unsigned char proof[][32], size_t n, const char *note,
                 size_t note_len)
{
    struct ig_buf b;
    char *cp;

    if (size > 23 && memcmp(s + 23, "extra ", 6) == 0)
        return;
    if (memchr(note, '\0', note_len) != NULL)
        return;
    cp = malloc(note_len + 1);
    if (cp == NULL)
        abort();
    memcpy(cp, note, note_len);
    cp[note_len] = '\0';
    ig_buf_init(&b, size + 1);
    if (audit_proof_format(index, proof, n, cp, &b) != IG_OK || b.len != size ||
        memcmp(b.data, s, size) != 0)
        abort();
    ig_buf_release(&b);
    free(cp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char proof[AUDIT_PROOF_MAX][32], leaf[32];
    const char *s = (const char *)data, *note;
    struct audit_checkpoint c;
    size_t n, note_len, len;
    char text[48];
    uint64_t index;

    init_once();
    memset(proof, 0, sizeof(proof));
    if (audit_proof_parse(s, size, &index, proof, &n, &note, &note_len, NULL) !=
        IG_OK) {
        if (index != 0 || n != 0 || note != NULL || note_len != 0)
            abort();
        return 0;
    }
    if (note < s || note + note_len != s + size || n > AUDIT_PROOF_MAX)
        abort();
    check_round_trip(s, size, index, (const unsigned char(*)[32])proof, n, note,
                     note_len);
    len = (size_t)snprintf(text, sizeof(text), "leaf %" PRIu64, index);
    audit_leaf_hash(text, len, leaf);
    if (audit_checkpoint_open(note, note_len, &ver, &c, NULL) == IG_OK &&
        audit_verify_inclusion(leaf, index, c.size,
                               (const unsigned char(*)[32])proof, n,
                               c.root) == IG_OK) {
        leaf[0] ^= 1;
        if (audit_verify_inclusion(leaf, index, c.size,
                                   (const unsigned char(*)[32])proof, n,
                                   c.root) == IG_OK)
            abort();
    }
    /* Unchecked claims: arithmetic on any index, size and proof length. */
    (void)audit_verify_inclusion(proof[0], index, index + (n & 7) + 1,
                                 (const unsigned char(*)[32])proof, n,
                                 proof[n ? n - 1 : 0]);
    (void)audit_verify_consistency(index, index + (uint64_t)n * 977, proof[0],
                                   proof[n ? n - 1 : 0],
                                   (const unsigned char(*)[32])proof, n);
    return 0;
}
