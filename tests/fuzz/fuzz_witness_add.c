/*
 * fuzz_witness_add.c - libFuzzer target for the witness's whole
 * add-checkpoint path (witness/witness_add.c and witness_state.c): the
 * body a hostile client or log sends, through parsing, the log's
 * signature, the note kept, and the decision against a state that lives
 * on from one input to the next (an in-memory SQLite database).
 *
 * The log's key is fixed (Ed25519 seed of 32 bytes 0x4c, name and origin
 * FUZZ_LOG), as is the witness's (seed 0x57, FUZZ_WITNESS), so the seed
 * corpus (tests/fuzz/corpus/witness_add/) holds validly signed requests:
 * mutations of the old size, the proof and the signature lines reach the
 * state. Beyond "never crash": the answer is one of the spec's statuses;
 * a 200 is exactly one line, the witness's valid cosignature of the
 * note's text; a 409 is a size as text/x.tlog.size; every other answer
 * is one line of text.
 */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "witness_add.h"

#define FUZZ_LOG "fuzz.example/log"
#define FUZZ_WITNESS "fuzz.example/witness"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct witness_config cfg;
static struct witness_log log_cfg;
static struct witness_state *st;
static struct witness_signer sg;
static struct audit_witness_key wit;
static char wname[] = FUZZ_WITNESS;

static struct ig_signing_key *
key_from_seed(int byte, unsigned char pk[32])
{
    unsigned char seed[32], sk[64];
    char paserk[IG_PASERK_SECRET_STRLEN + 1];
    struct ig_signing_key *k = NULL;
    size_t n;

    memset(seed, byte, sizeof(seed));
    if (crypto_sign_seed_keypair(pk, sk, seed) != 0)
        abort();
    memcpy(paserk, "k4.secret.", 10);
    n = sodium_base64_ENCODED_LEN(64, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    (void)sodium_bin2base64(paserk + 10, n, sk, 64,
                            sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    if (ig_signing_key_from_paserk(paserk, strlen(paserk), &k, NULL) != IG_OK)
        abort();
    sodium_memzero(sk, sizeof(sk));
    sodium_memzero(paserk, sizeof(paserk));
    return k;
}

static void
init_once(void)
{
    struct witness_state_opts o;
    unsigned char pk[32];
    static int done;

    if (done)
        return;
    if (ig_crypto_init() != IG_OK)
        abort();
    ig_signing_key_free(key_from_seed(0x4c, pk));
    if (audit_verifier_init(&log_cfg.keys[0], FUZZ_LOG, pk) != IG_OK)
        abort();
    log_cfg.nkeys = 1;
    memcpy(log_cfg.origin, FUZZ_LOG, sizeof(FUZZ_LOG));
    cfg.name = wname;
    cfg.logs = &log_cfg;
    cfg.nlogs = 1;
    sg.name = FUZZ_WITNESS;
    sg.key = key_from_seed(0x57, pk); /* kept for the process */
    if (audit_witness_key_init(&wit, FUZZ_WITNESS, pk) != IG_OK)
        abort();
    memset(&o, 0, sizeof(o));
    o.path = ":memory:";
    o.evidence_max = 50;
    if (witness_state_open(&o, &st, NULL) != IG_OK)
        abort();
    done = 1;
}

/* A 200's body must be the witness's cosignature of the request note's
   text. */
static void
check_cosigned(const uint8_t *data, size_t size, const char *body, size_t len)
{
    struct audit_witness_req req;
    char line[AUDIT_COSIG_LINE_MAX + 1];
    const char *blank;
    uint64_t ts = 0;
    size_t text_len;

    if (audit_witness_req_parse((const char *)data, size, &req, NULL) != IG_OK)
        abort();
    /* the text is the note up to its blank line (a checkpoint has three
       lines, no extension: the first blank line is it) */
    blank = strstr(req.note, "\n\n");
    if (blank == NULL)
        abort();
    text_len = (size_t)(blank - req.note) + 1;
    if (audit_cosig_pick(body, len, req.note, text_len, &wit, line,
                         sizeof(line), &ts, NULL) != IG_OK ||
        strlen(line) != len || ts != 1000)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct witness_answer a;
    const char *body;
    uint64_t n;

    init_once();
    if (size > AUDIT_WITNESS_REQ_MAX)
        return 0; /* 413 before the body is read (witness_http.c) */
    witness_answer_init(&a);
    witness_add_checkpoint(&cfg, st, &sg, (const char *)data, size, 1000, &a);
    body = a.body.data != NULL ? a.body.data : "";
    switch (a.status) {
    case 200:
        check_cosigned(data, size, body, a.body.len);
        break;
    case 409:
        if (strcmp(a.type, WITNESS_TYPE_SIZE) != 0 ||
            audit_witness_size_parse(body, a.body.len, &n) != IG_OK)
            abort();
        break;
    case 400:
    case 403:
    case 404:
    case 422:
    case 500:
        if (a.body.len < 2 || body[a.body.len - 1] != '\n' ||
            memchr(body, '\n', a.body.len) != body + a.body.len - 1)
            abort();
        break;
    default:
        abort();
    }
    ig_buf_release(&a.body);
    return 0;
}
