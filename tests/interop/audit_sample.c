/*
 * audit_sample.c - write a small signed audit log into a directory, for
 * checking it with another implementation (tests/interop/
 * verify_checkpoint.mjs) and for seeding the fuzzers.
 *
 *   audit_sample DIR          a fresh key; N leaves, a checkpoint, a proof,
 *                             the checkpoint cosigned by two witnesses
 *   audit_sample --fuzz DIR   the fixed fuzz key (seed 32 x 0x42, name
 *                             fuzz.example/log) and leaves "leaf <i>";
 *                             seed files for fuzz_note and fuzz_proof
 *   audit_sample --cosign SEED_HEX NAME TIME FILE
 *                             print the cosignature line (c2sp.org/
 *                             tlog-cosignature) of the checkpoint text in
 *                             FILE (a note: the text before its last
 *                             blank line) by the key of SEED_HEX as NAME
 *   audit_sample --check-cosig WVKEY_FILE NOTE_FILE
 *                             find the witness's valid cosignature in the
 *                             note (audit_cosig_find): "OK <time>", exit 0
 *
 * Files (normal mode): vkey (the verifier key), leaves.jsonl (one leaf a
 * line), checkpoint (the signed checkpoint of all leaves), leaf (the bytes
 * of leaf INDEX), proof.tlog-proof (its C2SP tlog-proof), index; w1.vkey
 * and w2.vkey (witness keys of the fixed seeds 32 x 0x01 and 32 x 0x02,
 * named w1.interop.example and w2.interop.example: the same in every
 * directory), checkpoint.cosigned (checkpoint with both witnesses' lines,
 * at times W1_TIME and W2_TIME), checkpoint.prev (the signed checkpoint
 * of all leaves but the last).
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_cosig.h"
#include "audit_mem.h"
#include "audit_note.h"
#include "ig_b64.h"
#include "ig_key.h"

#define NLEAVES 13
#define INDEX 5
#define LOG "interop.example/intentgate"
#define FUZZ_LOG "fuzz.example/log"
#define W1 "w1.interop.example"
#define W2 "w2.interop.example"
#define W1_TIME 1764000000u
#define W2_TIME 1764000001u

static void
die(const char *what)
{
    (void)fprintf(stderr, "audit_sample: %s\n", what);
    exit(1);
}

static void
write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    FILE *f;
    int len = snprintf(path, sizeof(path), "%s/%s", dir, name);

    if (len < 0 || (size_t)len >= sizeof(path))
        die("path too long");
    f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        die(path);
}

/* The key of a 32-byte seed. */
static struct ig_signing_key *
seed_key(const unsigned char seed[32])
{
    unsigned char pk[32], sk[64];
    char paserk[IG_PASERK_SECRET_STRLEN + 1];
    struct ig_signing_key *k = NULL;
    size_t n;

    if (crypto_sign_seed_keypair(pk, sk, seed) != 0)
        die("seed");
    memcpy(paserk, "k4.secret.", 10);
    n = 10 + ig_b64_encode(sk, sizeof(sk), paserk + 10, sizeof(paserk) - 10);
    if (ig_signing_key_from_paserk(paserk, n, &k, NULL) != IG_OK)
        die("key");
    sodium_memzero(sk, sizeof(sk));
    sodium_memzero(paserk, sizeof(paserk));
    return k;
}

static struct ig_signing_key *
fill_key(unsigned char byte)
{
    unsigned char seed[32];

    memset(seed, byte, sizeof(seed));
    return seed_key(seed);
}

static struct ig_signing_key *
fuzz_key(void)
{
    return fill_key(0x42);
}

/* A whole file into b (NUL-terminated). */
static void
read_file(const char *path, struct ig_buf *b)
{
    char chunk[4096];
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL)
        die(path);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (ig_buf_add(b, chunk, n) != IG_OK)
            die("file too large");
    if (ferror(f) || fclose(f) != 0 || ig_buf_addc(b, '\0') != IG_OK)
        die(path);
    b->len--;
}

/* The text of a note: up to and with the newline before its last blank
   line (the whole input when there is none). */
static size_t
note_text_len(const char *note, size_t len)
{
    size_t i;

    for (i = len; i >= 2; i--)
        if (note[i - 1] == '\n' && note[i - 2] == '\n')
            return i - 1;
    return len;
}

/* --cosign SEED_HEX NAME TIME FILE */
static int
cosign_main(char **argv)
{
    unsigned char seed[32];
    struct ig_signing_key *k;
    struct ig_buf note, line;
    unsigned long long ts;
    size_t n;
    char *end;

    if (sodium_hex2bin(seed, sizeof(seed), argv[2], strlen(argv[2]), NULL, &n,
                       NULL) != 0 ||
        n != sizeof(seed))
        die("--cosign: the seed is 64 hex digits");
    ts = strtoull(argv[4], &end, 10);
    if (*end != '\0' || ts == 0)
        die("--cosign: bad time");
    k = seed_key(seed);
    ig_buf_init(&note, AUDIT_NOTE_MAX + 1);
    ig_buf_init(&line, AUDIT_COSIG_LINE_MAX + 1);
    read_file(argv[5], &note);
    if (audit_cosig_sign(note.data, note_text_len(note.data, note.len), argv[3],
                         k, ts, &line) != IG_OK ||
        fwrite(line.data, 1, line.len, stdout) != line.len)
        die("--cosign");
    ig_buf_release(&line);
    ig_buf_release(&note);
    ig_signing_key_free(k);
    sodium_memzero(seed, sizeof(seed));
    return 0;
}

/* --check-cosig WVKEY_FILE NOTE_FILE */
static int
check_main(char **argv)
{
    struct audit_witness_key w;
    struct ig_buf vkey, note;
    struct ig_err err;
    uint64_t ts = 0;
    enum ig_status st;

    ig_buf_init(&vkey, 4096);
    ig_buf_init(&note, AUDIT_NOTE_MAX + 1);
    read_file(argv[2], &vkey);
    read_file(argv[3], &note);
    ig_err_clear(&err);
    st = audit_witness_key_parse(vkey.data, vkey.len, &w, &err);
    if (st == IG_OK)
        st = audit_cosig_find(note.data, note.len, &w, &ts, &err);
    if (st == IG_OK)
        (void)printf("OK %llu\n", (unsigned long long)ts);
    else
        (void)printf("FAIL %s: %s\n", ig_strerror(st), err.msg);
    ig_buf_release(&vkey);
    ig_buf_release(&note);
    return st == IG_OK ? 0 : 1;
}

/* w*.vkey and checkpoint.cosigned. */
static void
write_cosigned(const char *dir, const struct ig_buf *note)
{
    static const struct {
        unsigned char seed;
        const char *name, *file;
        uint64_t ts;
    } ws[] = {{0x01, W1, "w1.vkey", W1_TIME}, {0x02, W2, "w2.vkey", W2_TIME}};
    struct ig_signing_key *k;
    struct ig_public_key pub;
    struct ig_buf out;
    char vkey[256];
    size_t i, text = note_text_len(note->data, note->len);

    ig_buf_init(&out, AUDIT_NOTE_MAX);
    if (ig_buf_add(&out, note->data, note->len) != IG_OK)
        die("cosigned");
    for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
        k = fill_key(ws[i].seed);
        ig_signing_key_public(k, &pub);
        if (audit_witness_key_format(ws[i].name, pub.pk, vkey,
                                     sizeof(vkey) - 1) != IG_OK ||
            audit_cosig_sign(note->data, text, ws[i].name, k, ws[i].ts, &out) !=
                IG_OK)
            die("cosign");
        (void)snprintf(vkey + strlen(vkey), sizeof(vkey) - strlen(vkey), "\n");
        write_file(dir, ws[i].file, vkey, strlen(vkey));
        ig_signing_key_free(k);
    }
    write_file(dir, "checkpoint.cosigned", out.data, out.len);
    ig_buf_release(&out);
}

/* The leaf text of index i. */
static size_t
leaf_text(int fuzz, uint64_t i, char *out, size_t cap)
{
    int n;

    if (fuzz)
        n = snprintf(out, cap, "leaf %" PRIu64, i);
    else
        n = snprintf(
            out, cap,
            "{\"seq\":%" PRIu64 ",\"type\":\"intent.decided\","
            "\"decision\":\"%s\",\"agent\":\"agent-\xc3\xa9t\xc3\xa9\","
            "\"note\":\"caf\xc3\xa9 \\u2014 \xf0\x9f\x94\x92\"}",
            i, i % 3 ? "allow" : "deny");
    if (n < 0 || (size_t)n >= cap)
        die("leaf");
    return (size_t)n;
}

static void
sign_checkpoint(const struct ig_signing_key *k, const char *name, uint64_t size,
                struct audit_mem *m, struct ig_buf *out)
{
    unsigned char root[32];
    struct ig_buf t;

    ig_buf_init(&t, AUDIT_NOTE_MAX);
    if (audit_root_at(size, audit_mem_fetch, m, root) != IG_OK ||
        audit_checkpoint_text(name, size, root, &t) != IG_OK ||
        audit_note_sign(t.data, t.len, name, k, out) != IG_OK)
        die("checkpoint");
    ig_buf_release(&t);
}

static void
write_proof(const char *dir, const char *file, uint64_t index, uint64_t size,
            struct audit_mem *m, const char *note)
{
    unsigned char proof[AUDIT_PROOF_MAX][32];
    struct ig_buf b;
    size_t n;

    ig_buf_init(&b, 1 << 20);
    if (audit_inclusion_proof(index, size, audit_mem_fetch, m, proof, &n) !=
            IG_OK ||
        audit_proof_format(index, (const unsigned char(*)[32])proof, n, note,
                           &b) != IG_OK)
        die("proof");
    write_file(dir, file, b.data, b.len);
    ig_buf_release(&b);
}

int
main(int argc, char **argv)
{
    int fuzz = argc == 3 && strcmp(argv[1], "--fuzz") == 0;
    const char *dir = argv[argc - 1], *name = fuzz ? FUZZ_LOG : LOG;
    char text[512], vkey[600], file[64];
    struct ig_signing_key *k = NULL;
    struct ig_public_key pub;
    struct audit_mem *m = NULL;
    struct ig_buf jsonl, note;
    unsigned char h[32];
    uint64_t i, s;
    size_t len;

    if (argc >= 2 && ig_crypto_init() != IG_OK)
        die("init");
    if (argc == 6 && strcmp(argv[1], "--cosign") == 0)
        return cosign_main(argv);
    if (argc == 4 && strcmp(argv[1], "--check-cosig") == 0)
        return check_main(argv);
    if (argc != 2 && !fuzz)
        die("usage: audit_sample [--fuzz] DIR");
    if (audit_mem_new(&m) != IG_OK)
        die("init");
    if (fuzz)
        k = fuzz_key();
    else if (ig_signing_key_generate(&k) != IG_OK)
        die("key");
    ig_signing_key_public(k, &pub);
    if (audit_verifier_format(name, pub.pk, vkey, sizeof(vkey)) != IG_OK)
        die("vkey");
    ig_buf_init(&jsonl, 1 << 20);
    for (i = 0; i < NLEAVES; i++) {
        len = leaf_text(fuzz, i, text, sizeof(text));
        audit_leaf_hash(text, len, h);
        if (audit_mem_append(m, h) != IG_OK ||
            ig_buf_add(&jsonl, text, len) != IG_OK ||
            ig_buf_addc(&jsonl, '\n') != IG_OK)
            die("append");
    }
    if (fuzz) {
        /* fuzz_note seeds: the key, checkpoints, a bare checkpoint text. */
        write_file(dir, "note-vkey", vkey, strlen(vkey));
        for (s = 0; s <= NLEAVES; s += 4) {
            ig_buf_init(&note, AUDIT_NOTE_MAX);
            sign_checkpoint(k, name, s, m, &note);
            (void)snprintf(file, sizeof(file), "note-checkpoint-%" PRIu64, s);
            write_file(dir, file, note.data, note.len);
            (void)snprintf(file, sizeof(file), "note-text-%" PRIu64, s);
            write_file(dir, file, note.data,
                       (size_t)(strstr(note.data, "\n\n") - note.data) + 1);
            ig_buf_release(&note);
        }
        /* fuzz_proof seeds: every leaf of the 13-leaf tree. */
        ig_buf_init(&note, AUDIT_NOTE_MAX);
        sign_checkpoint(k, name, NLEAVES, m, &note);
        for (i = 0; i < NLEAVES; i++) {
            (void)snprintf(file, sizeof(file), "proof-%" PRIu64, i);
            write_proof(dir, file, i, NLEAVES, m, note.data);
        }
    } else {
        (void)snprintf(vkey + strlen(vkey), sizeof(vkey) - strlen(vkey), "\n");
        write_file(dir, "vkey", vkey, strlen(vkey));
        write_file(dir, "leaves.jsonl", jsonl.data, jsonl.len);
        ig_buf_init(&note, AUDIT_NOTE_MAX);
        sign_checkpoint(k, name, NLEAVES, m, &note);
        write_file(dir, "checkpoint", note.data, note.len);
        write_cosigned(dir, &note);
        ig_buf_release(&note);
        ig_buf_init(&note, AUDIT_NOTE_MAX);
        sign_checkpoint(k, name, NLEAVES - 1, m, &note);
        write_file(dir, "checkpoint.prev", note.data, note.len);
        ig_buf_release(&note);
        ig_buf_init(&note, AUDIT_NOTE_MAX);
        sign_checkpoint(k, name, NLEAVES, m, &note);
        len = leaf_text(fuzz, INDEX, text, sizeof(text));
        write_file(dir, "leaf", text, len);
        write_proof(dir, "proof.tlog-proof", INDEX, NLEAVES, m, note.data);
        (void)snprintf(file, sizeof(file), "%d\n", INDEX);
        write_file(dir, "index", file, strlen(file));
    }
    ig_buf_release(&note);
    ig_buf_release(&jsonl);
    audit_mem_free(m);
    ig_signing_key_free(k);
    return 0;
}
