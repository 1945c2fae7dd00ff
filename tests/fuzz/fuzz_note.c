/*
 * fuzz_note.c - libFuzzer target for everything in audit_note.h that reads
 * untrusted text: verifier keys, signed notes, checkpoints.
 *
 * The log key is fixed (the Ed25519 seed of 32 bytes 0x42, name FUZZ_LOG),
 * so the seed corpus (tests/fuzz/corpus/note/, written by audit_sample)
 * holds notes that really open. Beyond "never crash", it checks that one
 * thing has one spelling: a verifier key that parses formats back to the
 * same key; checkpoint text that parses is byte for byte what
 * audit_checkpoint_text writes for it; a note that opens has a text part
 * ending in a newline, and as a checkpoint its text parses the same way.
 * Outputs of failed calls must be left zeroed.
 */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "ig_b64.h"
#include "ig_key.h"

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

static int
all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;

    for (i = 0; i < n; i++)
        if (b[i] != 0)
            return 0;
    return 1;
}

static void
check_verifier(const char *s, size_t size)
{
    struct audit_verifier v, again;
    char out[AUDIT_NAME_MAX + 64];

    if (audit_verifier_parse(s, size, &v, NULL) != IG_OK) {
        if (!all_zero(&v, sizeof(v)))
            abort();
        return;
    }
    if (audit_key_id(v.name, v.pk) != v.key_id ||
        audit_verifier_format(v.name, v.pk, out, sizeof(out)) != IG_OK ||
        audit_verifier_parse(out, strlen(out), &again, NULL) != IG_OK ||
        memcmp(&v, &again, sizeof(v)) != 0)
        abort();
}

static void
check_checkpoint_text(const char *s, size_t size)
{
    struct audit_checkpoint c;
    struct ig_buf b;

    if (audit_checkpoint_parse(s, size, &c, NULL) != IG_OK) {
        if (!all_zero(&c, sizeof(c)))
            abort();
        return;
    }
    ig_buf_init(&b, AUDIT_NOTE_MAX);
    if (audit_checkpoint_text(c.origin, c.size, c.root, &b) != IG_OK ||
        b.len != size || memcmp(b.data, s, size) != 0)
        abort();
    ig_buf_release(&b);
}

static void
check_note(const char *s, size_t size)
{
    struct audit_checkpoint c, c2;
    size_t text_len;
    enum ig_status st;

    st = audit_note_open(s, size, &ver, &text_len, NULL);
    if (st != IG_OK) {
        if (text_len != 0)
            abort();
    } else if (text_len == 0 || text_len > size || s[text_len - 1] != '\n') {
        abort();
    }
    if (audit_checkpoint_open(s, size, &ver, &c, NULL) != IG_OK) {
        if (!all_zero(&c, sizeof(c)))
            abort();
        return;
    }
    if (st != IG_OK ||
        audit_checkpoint_parse(s, text_len, &c2, NULL) != IG_OK ||
        memcmp(&c, &c2, sizeof(c)) != 0 || strcmp(c.origin, FUZZ_LOG) != 0)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;

    init_once();
    check_verifier(s, size);
    check_checkpoint_text(s, size);
    check_note(s, size);
    return 0;
}
