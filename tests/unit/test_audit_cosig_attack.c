/*
 * test_audit_cosig_attack.c - audit/audit_cosig.h played against.
 *
 * The attacker here signs whatever bytes it likes with keys it holds (raw
 * libsodium, not our signer) and moves valid signatures between places:
 *
 *   - a cosignature with a valid Ed25519 signature over a time of 2^63 or
 *     2^64 - 1 (the signer refuses to make one; a forger does not ask it),
 *     or signed under another time than the line says (a time of 0 in a
 *     witness's answer is the PDP's to refuse: test_witness_attack.py
 *     HostileWitness.test_timestamp_zero);
 *   - key confusion: one Ed25519 key as the log's (0x01) and the witness's
 *     (0x04): a cosignature relabelled as a note signature and back, and a
 *     witness named like the domain separator, never open as a checkpoint;
 *   - a cosignature moved to another checkpoint that differs only in its
 *     origin, its size, or an extension line;
 *   - every byte of the key id flipped (test_audit_cosig.c flips the rest),
 *     non-canonical base64 in the last group, a CR, a second space;
 *   - hostile answers and request bodies in exact-size heap buffers (so
 *     the sanitizer build catches a read past the end): a NUL inside,
 *     101 lines with the valid one last, a line buffer too small, numbers
 *     that wrap in strtoull.
 */
#include "testutil.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_cosig.h"
#include "audit_util.h"

#define LOG "log.attack.example/audit"
#define WIT "witness.attack.example/w1"
#define DASH "\xe2\x80\x94 "
#define BUF                                                                    \
    {                                                                          \
        NULL, 0, 0, 1 << 20                                                    \
    }

/* A key the attacker holds: seed, libsodium pair, and our signing key. */
struct atk_key {
    unsigned char seed[32], pk[32], sk[64];
    struct ig_signing_key *k;
};

static void
atk_key_init(struct atk_key *a, unsigned char fill)
{
    memset(a->seed, fill, sizeof(a->seed));
    assert_int_equal(crypto_sign_seed_keypair(a->pk, a->sk, a->seed), 0);
    a->k = au_key_from_seed(a->seed);
}

static void
atk_key_release(struct atk_key *a)
{
    ig_signing_key_free(a->k);
    sodium_memzero(a->sk, sizeof(a->sk));
}

static uint32_t
kid(const char *name, unsigned char type, const unsigned char pk[32])
{
    crypto_hash_sha256_state st;
    unsigned char h[32], sep[2] = {'\n', 0};

    sep[1] = type;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, (const unsigned char *)name, strlen(name));
    crypto_hash_sha256_update(&st, sep, 2);
    crypto_hash_sha256_update(&st, pk, 32);
    crypto_hash_sha256_final(&st, h);
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 |
           (uint32_t)h[3];
}

/* "— name base64(raw)\n" into out. */
static void
sig_line(const char *name, const unsigned char *raw, size_t n, char *out,
         size_t cap)
{
    char b64[256];

    assert_true(sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL) <=
                sizeof(b64));
    sodium_bin2base64(b64, sizeof(b64), raw, n, sodium_base64_VARIANT_ORIGINAL);
    assert_true((size_t)snprintf(out, cap, DASH "%s %s\n", name, b64) < cap);
}

/* A cosignature line forged with raw libsodium: key id id, time ts, an
   Ed25519 signature over msg (msg NULL: the spec's message for text). */
static void
forge(const struct atk_key *a, const char *name, uint32_t id, uint64_t ts,
      const char *text, const char *msg, char *out, size_t cap)
{
    unsigned char raw[AUDIT_COSIG_BYTES];
    char *m;
    size_t mlen;
    int i;

    if (msg == NULL) {
        mlen = strlen(text) + 64;
        m = malloc(mlen);
        assert_non_null(m);
        mlen = (size_t)snprintf(m, mlen, "cosignature/v1\ntime %" PRIu64 "\n%s",
                                ts, text);
    } else {
        m = strdup(msg);
        assert_non_null(m);
        mlen = strlen(m);
    }
    raw[0] = (unsigned char)(id >> 24);
    raw[1] = (unsigned char)(id >> 16);
    raw[2] = (unsigned char)(id >> 8);
    raw[3] = (unsigned char)id;
    for (i = 0; i < 8; i++)
        raw[4 + i] = (unsigned char)(ts >> (56 - 8 * i));
    crypto_sign_detached(raw + 12, NULL, (const unsigned char *)m, mlen, a->sk);
    free(m);
    sig_line(name, raw, sizeof(raw), out, cap);
}

static char *
text_of(const char *origin, uint64_t size, unsigned char fill,
        const char *extension)
{
    unsigned char root[32];
    struct ig_buf b = BUF;

    memset(root, fill, sizeof(root));
    assert_int_equal(audit_checkpoint_text(origin, size, root, &b), IG_OK);
    if (extension != NULL)
        assert_int_equal(ig_buf_adds(&b, extension), IG_OK);
    return b.data;
}

static void
wkey(const struct atk_key *a, const char *name, struct audit_witness_key *w)
{
    assert_int_equal(audit_witness_key_init(w, name, a->pk), IG_OK);
}

/* verify_line on an exact-size heap copy of line (its newline cut). */
static enum ig_status
verify(const char *line, const char *text, const struct audit_witness_key *w,
       uint64_t *ts)
{
    size_t n = strlen(line);
    char *copy, *t;
    enum ig_status st;

    if (n > 0 && line[n - 1] == '\n')
        n--;
    copy = malloc(n ? n : 1);
    t = malloc(strlen(text));
    assert_non_null(copy);
    assert_non_null(t);
    memcpy(copy, line, n);
    memcpy(t, text, strlen(text));
    st = audit_cosig_verify_line(copy, n, t, strlen(text), w, ts, NULL);
    free(copy);
    free(t);
    return st;
}

/* audit_cosig_pick on an exact-size heap copy of body[0..len). */
static enum ig_status
pick(const char *body, size_t len, const char *text,
     const struct audit_witness_key *w, char *line, size_t cap, uint64_t *ts)
{
    char *copy = malloc(len ? len : 1);
    struct ig_err err;
    enum ig_status st;

    assert_non_null(copy);
    memcpy(copy, body, len);
    st =
        audit_cosig_pick(copy, len, text, strlen(text), w, line, cap, ts, &err);
    free(copy);
    return st;
}

/* ---- times a forger chooses ---- */

static void
test_forged_times(void **state)
{
    struct atk_key a;
    struct audit_witness_key w;
    char *text = text_of(LOG, 10, 1, NULL);
    char line[512], got[AUDIT_COSIG_LINE_MAX + 1];
    uint64_t ts = 99;

    (void)state;
    atk_key_init(&a, 1);
    wkey(&a, WIT, &w);
    /* The control: a forged line at an ordinary time verifies. */
    forge(&a, WIT, w.key_id, 1700000000, text, NULL, line, sizeof(line));
    assert_int_equal(verify(line, text, &w, &ts), IG_OK);
    assert_int_equal(ts, 1700000000);
    /* Valid signatures over times past the spec's 2^63 - 1. */
    forge(&a, WIT, w.key_id, (uint64_t)INT64_MAX + 1, text, NULL, line,
          sizeof(line));
    assert_int_equal(verify(line, text, &w, &ts), IG_ERR_CRYPTO);
    assert_int_equal(ts, 0);
    assert_int_equal(pick(line, strlen(line), text, &w, got, sizeof(got), &ts),
                     IG_ERR_CRYPTO);
    assert_string_equal(got, "");
    forge(&a, WIT, w.key_id, UINT64_MAX, text, NULL, line, sizeof(line));
    assert_int_equal(verify(line, text, &w, &ts), IG_ERR_CRYPTO);
    /* The time in the line and the one signed must agree. */
    {
        char msg[512];

        (void)snprintf(msg, sizeof(msg), "cosignature/v1\ntime 1700000001\n%s",
                       text);
        forge(&a, WIT, w.key_id, 1700000000, text, msg, line, sizeof(line));
        assert_int_equal(verify(line, text, &w, &ts), IG_ERR_CRYPTO);
        /* "time 01700000000": leading zeros are another message. */
        (void)snprintf(msg, sizeof(msg), "cosignature/v1\ntime 01700000000\n%s",
                       text);
        forge(&a, WIT, w.key_id, 1700000000, text, msg, line, sizeof(line));
        assert_int_equal(verify(line, text, &w, &ts), IG_ERR_CRYPTO);
    }
    free(text);
    atk_key_release(&a);
}

/* ---- one key as the log's and the witness's ---- */

static void
test_key_confusion(void **state)
{
    struct atk_key a;
    struct audit_witness_key w;
    struct audit_verifier v;
    struct audit_checkpoint cp;
    struct ig_buf note = BUF, b = BUF;
    char *text = text_of(LOG, 10, 2, NULL);
    char line[512], msg[512];
    size_t tlen;
    uint64_t ts;

    (void)state;
    atk_key_init(&a, 2);
    /* The same key and name in both roles: two key ids. */
    wkey(&a, LOG, &w);
    assert_int_equal(audit_verifier_init(&v, LOG, a.pk), IG_OK);
    assert_int_not_equal(v.key_id, w.key_id);
    assert_int_equal(w.key_id, kid(LOG, 0x04, a.pk));
    assert_int_equal(v.key_id, kid(LOG, 0x01, a.pk));

    /* A cosignature relabelled with the note key id: no log signature. */
    assert_int_equal(
        audit_cosig_sign(text, strlen(text), LOG, a.k, 1700000000, &b), IG_OK);
    {
        unsigned char raw[AUDIT_COSIG_BYTES];
        size_t n;

        assert_int_equal(sodium_base642bin(raw, sizeof(raw),
                                           b.data + 4 + strlen(LOG) + 1, 104,
                                           NULL, &n, NULL,
                                           sodium_base64_VARIANT_ORIGINAL),
                         0);
        raw[0] = (unsigned char)(v.key_id >> 24);
        raw[1] = (unsigned char)(v.key_id >> 16);
        raw[2] = (unsigned char)(v.key_id >> 8);
        raw[3] = (unsigned char)v.key_id;
        /* As a 76-byte line, then cut to the 68 bytes a note signature
           has (key id, the 64 signature bytes: the time dropped). */
        sig_line(LOG, raw, sizeof(raw), line, sizeof(line));
        assert_int_equal(ig_buf_adds(&note, text), IG_OK);
        assert_int_equal(ig_buf_adds(&note, "\n"), IG_OK);
        assert_int_equal(ig_buf_adds(&note, line), IG_OK);
        assert_int_not_equal(
            audit_note_open(note.data, note.len, &v, &tlen, NULL), IG_OK);
        memmove(raw + 4, raw + 12, 64);
        sig_line(LOG, raw, 68, line, sizeof(line));
        note.len = 0;
        assert_int_equal(ig_buf_adds(&note, text), IG_OK);
        assert_int_equal(ig_buf_adds(&note, "\n"), IG_OK);
        assert_int_equal(ig_buf_adds(&note, line), IG_OK);
        assert_int_equal(audit_note_open(note.data, note.len, &v, &tlen, NULL),
                         IG_ERR_CRYPTO);
        assert_int_not_equal(
            audit_checkpoint_open(note.data, note.len, &v, &cp, NULL), IG_OK);
    }
    /* A log signature relabelled with the witness key id and a time: the
       message differs (no "cosignature/v1" line). */
    forge(&a, LOG, w.key_id, 1700000000, text, text, line, sizeof(line));
    assert_int_equal(verify(line, text, &w, &ts), IG_ERR_CRYPTO);

    /* The domain separator as everybody's name: a cosignature is a valid
       note signature over "cosignature/v1\ntime T\n<text>", but that text
       never opens as a checkpoint (its second line is not a size). */
    {
        const char *sep = "cosignature/v1";
        struct audit_verifier vs;
        unsigned char raw[68];
        char *inner;
        size_t n;

        assert_int_equal(audit_verifier_init(&vs, sep, a.pk), IG_OK);
        (void)snprintf(msg, sizeof(msg), "cosignature/v1\ntime 7\n%s", text);
        inner = msg;
        n = strlen(inner);
        raw[0] = (unsigned char)(vs.key_id >> 24);
        raw[1] = (unsigned char)(vs.key_id >> 16);
        raw[2] = (unsigned char)(vs.key_id >> 8);
        raw[3] = (unsigned char)vs.key_id;
        crypto_sign_detached(raw + 4, NULL, (const unsigned char *)inner, n,
                             a.sk);
        sig_line(sep, raw, sizeof(raw), line, sizeof(line));
        note.len = 0;
        assert_int_equal(ig_buf_adds(&note, inner), IG_OK);
        assert_int_equal(ig_buf_adds(&note, "\n"), IG_OK);
        assert_int_equal(ig_buf_adds(&note, line), IG_OK);
        assert_int_equal(audit_note_open(note.data, note.len, &vs, &tlen, NULL),
                         IG_OK);
        assert_int_equal(
            audit_checkpoint_open(note.data, note.len, &vs, &cp, NULL),
            IG_ERR_INVALID);
        assert_int_equal(cp.size, 0);
    }
    ig_buf_release(&note);
    ig_buf_release(&b);
    free(text);
    atk_key_release(&a);
}

/* ---- a cosignature moved to another checkpoint ---- */

static void
test_moved_cosignature(void **state)
{
    struct atk_key a;
    struct audit_witness_key w;
    char *text = text_of(LOG, 10, 3, NULL);
    char *others[] = {
        text_of("log.attack.example/other", 10, 3, NULL), /* origin */
        text_of(LOG, 11, 3, NULL),                        /* size */
        text_of(LOG, 10, 4, NULL),                        /* root */
        text_of(LOG, 10, 3, "extension\n"),               /* an extension */
    };
    char line[512];
    struct ig_buf b = BUF;
    uint64_t ts;
    size_t i;

    (void)state;
    atk_key_init(&a, 3);
    wkey(&a, WIT, &w);
    assert_int_equal(
        audit_cosig_sign(text, strlen(text), WIT, a.k, 1700000000, &b), IG_OK);
    assert_int_equal(verify(b.data, text, &w, &ts), IG_OK);
    for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        assert_int_equal(verify(b.data, others[i], &w, &ts), IG_ERR_CRYPTO);
    /* And the other way: the cosignature of the extended text covers its
       extension line, so it does not carry over to the bare checkpoint. */
    forge(&a, WIT, w.key_id, 1700000000, others[3], NULL, line, sizeof(line));
    assert_int_equal(verify(line, others[3], &w, &ts), IG_OK);
    assert_int_equal(verify(line, text, &w, &ts), IG_ERR_CRYPTO);
    /* torchwood's old message (only the first three lines) is refused on
       an extended checkpoint. */
    {
        char msg[512];

        (void)snprintf(msg, sizeof(msg), "cosignature/v1\ntime 1700000000\n%s",
                       text);
        forge(&a, WIT, w.key_id, 1700000000, others[3], msg, line,
              sizeof(line));
        assert_int_equal(verify(line, others[3], &w, &ts), IG_ERR_CRYPTO);
    }
    ig_buf_release(&b);
    for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        free(others[i]);
    free(text);
    atk_key_release(&a);
}

/* ---- the line's bytes ---- */

static void
test_line_bytes(void **state)
{
    struct atk_key a;
    struct audit_witness_key w;
    char *text = text_of(LOG, 10, 5, NULL);
    unsigned char raw[AUDIT_COSIG_BYTES];
    char line[512], bad[520];
    size_t n, i, start = 4 + strlen(WIT) + 1, b64_len;
    uint64_t ts;
    static const char alpha[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    (void)state;
    atk_key_init(&a, 5);
    wkey(&a, WIT, &w);
    forge(&a, WIT, w.key_id, 1700000000, text, NULL, line, sizeof(line));
    assert_int_equal(verify(line, text, &w, &ts), IG_OK);
    assert_int_equal(sodium_base642bin(raw, sizeof(raw), line + start, 104,
                                       NULL, &n, NULL,
                                       sodium_base64_VARIANT_ORIGINAL),
                     0);
    /* Each key id byte flipped: not w's line, never valid. */
    for (i = 0; i < 4; i++) {
        raw[i] ^= 0x80;
        sig_line(WIT, raw, sizeof(raw), bad, sizeof(bad));
        assert_int_equal(verify(bad, text, &w, &ts), IG_ERR_NOTFOUND);
        raw[i] ^= 0x80;
    }
    /* 76 bytes end in "XY==": Y carries 2 data bits and 4 zero bits. Set
       one: the same bytes to a lax decoder. */
    b64_len = strlen(line) - 1 - start;
    assert_int_equal(b64_len, 104);
    memcpy(bad, line, sizeof(bad) < sizeof(line) ? sizeof(bad) : sizeof(line));
    {
        char *y = bad + start + 101;
        const char *p = strchr(alpha, *y);

        assert_non_null(p);
        assert_int_equal((p - alpha) & 15, 0);
        *y = alpha[(p - alpha) | 1];
    }
    assert_int_not_equal(verify(bad, text, &w, &ts), IG_OK);
    /* A CR before the newline, a second space, a trailing space, a tab,
       a hyphen for the em dash, another dash. */
    {
        static const char *const edits[][2] = {
            {"\n", "\r\n"},
            {" ", "  "},
            {"\n", " \n"},
            {"\n", "\t\n"},
        };

        for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
            const char *at = strrchr(line, edits[i][0][0]);
            size_t pre = (size_t)(at - line);

            assert_true(pre + strlen(edits[i][1]) + strlen(at + 1) <
                        sizeof(bad));
            memcpy(bad, line, pre);
            (void)snprintf(bad + pre, sizeof(bad) - pre, "%s%s", edits[i][1],
                           at + 1);
            assert_int_not_equal(verify(bad, text, &w, &ts), IG_OK);
            assert_int_not_equal(pick(bad, strlen(bad), text, &w, NULL, 0, &ts),
                                 IG_OK);
        }
        (void)snprintf(bad, sizeof(bad), "-%s", line + 3);
        assert_int_equal(verify(bad, text, &w, &ts), IG_ERR_INVALID);
        (void)snprintf(bad, sizeof(bad), "\xe2\x80\x93%s", line + 3);
        assert_int_equal(verify(bad, text, &w, &ts), IG_ERR_INVALID);
    }
    free(text);
    atk_key_release(&a);
}

/* ---- hostile answers (audit_cosig_pick) and notes (audit_cosig_find) ---- */

static void
test_hostile_answers(void **state)
{
    struct atk_key a, o;
    struct audit_witness_key w;
    char *text = text_of(LOG, 10, 6, NULL);
    char line[512], other[512], got[AUDIT_COSIG_LINE_MAX + 1];
    struct ig_buf body = BUF;
    uint64_t ts;
    size_t i;

    (void)state;
    atk_key_init(&a, 6);
    atk_key_init(&o, 7);
    wkey(&a, WIT, &w);
    forge(&a, WIT, w.key_id, 1700000000, text, NULL, line, sizeof(line));
    forge(&o, "other.example/w", kid("other.example/w", 4, o.pk), 5, text, NULL,
          other, sizeof(other));
    /* The control. */
    assert_int_equal(pick(line, strlen(line), text, &w, got, sizeof(got), &ts),
                     IG_OK);
    assert_string_equal(got, line);
    /* 100 other lines, then the valid one: over the line limit. */
    for (i = 0; i < IG_AUDIT_NOTE_MAX_SIGS; i++)
        assert_int_equal(ig_buf_adds(&body, other), IG_OK);
    assert_int_equal(ig_buf_adds(&body, line), IG_OK);
    assert_int_equal(pick(body.data, body.len, text, &w, got, sizeof(got), &ts),
                     IG_ERR_INVALID);
    assert_string_equal(got, "");
    /* Over AUDIT_NOTE_MAX bytes, the valid line first. */
    body.len = 0;
    assert_int_equal(ig_buf_adds(&body, line), IG_OK);
    while (body.len <= AUDIT_NOTE_MAX)
        assert_int_equal(ig_buf_adds(&body, "x"), IG_OK);
    assert_int_equal(ig_buf_adds(&body, "\n"), IG_OK);
    assert_int_equal(pick(body.data, body.len, text, &w, got, sizeof(got), &ts),
                     IG_ERR_INVALID);
    /* A NUL after the valid line, and one inside it. */
    body.len = 0;
    assert_int_equal(ig_buf_adds(&body, line), IG_OK);
    assert_int_equal(ig_buf_add(&body, "\0\n", 2), IG_OK);
    assert_int_equal(pick(body.data, body.len, text, &w, got, sizeof(got), &ts),
                     IG_ERR_INVALID);
    body.len = 0;
    assert_int_equal(ig_buf_add(&body, line, 10), IG_OK);
    assert_int_equal(ig_buf_add(&body, "\0", 1), IG_OK);
    assert_int_equal(ig_buf_adds(&body, line + 10), IG_OK);
    assert_int_equal(pick(body.data, body.len, text, &w, got, sizeof(got), &ts),
                     IG_ERR_INVALID);
    /* The valid line without its newline. */
    assert_int_equal(
        pick(line, strlen(line) - 1, text, &w, got, sizeof(got), &ts),
        IG_ERR_INVALID);
    /* A valid line then a failing line by w: refused, nothing copied. */
    body.len = 0;
    assert_int_equal(ig_buf_adds(&body, line), IG_OK);
    line[strlen(line) - 3] ^= 0x01; /* a base64 digit of the signature */
    assert_int_equal(ig_buf_adds(&body, line), IG_OK);
    line[strlen(line) - 3] ^= 0x01;
    assert_int_not_equal(
        pick(body.data, body.len, text, &w, got, sizeof(got), &ts), IG_OK);
    assert_string_equal(got, "");
    /* A line buffer too small for the line: refused, never overrun. */
    {
        char small[40];

        memset(small, 'z', sizeof(small));
        assert_int_not_equal(
            pick(line, strlen(line), text, &w, small, sizeof(small), &ts),
            IG_OK);
        assert_int_equal(small[0], '\0');
    }
    ig_buf_release(&body);
    free(text);
    atk_key_release(&a);
    atk_key_release(&o);
}

static void
test_find_in_notes(void **state)
{
    struct atk_key a, lg;
    struct audit_witness_key w;
    char *text = text_of(LOG, 10, 8, NULL), *note;
    char line[512], dup_name[512];
    struct ig_buf all = BUF;
    size_t len;
    uint64_t ts;

    (void)state;
    atk_key_init(&a, 8);
    atk_key_init(&lg, 9);
    wkey(&a, WIT, &w);
    note = au_sign_text(lg.k, LOG, text, &len);
    forge(&a, WIT, w.key_id, 1700000000, text, NULL, line, sizeof(line));
    /* w's name with another key's id and signature: not w's line. */
    forge(&lg, WIT, kid(WIT, 4, lg.pk), 1700000001, text, NULL, dup_name,
          sizeof(dup_name));
    assert_int_equal(ig_buf_adds(&all, note), IG_OK);
    assert_int_equal(ig_buf_adds(&all, dup_name), IG_OK);
    assert_int_equal(audit_cosig_find(all.data, all.len, &w, &ts, NULL),
                     IG_ERR_NOTFOUND);
    assert_int_equal(ig_buf_adds(&all, line), IG_OK);
    assert_int_equal(audit_cosig_find(all.data, all.len, &w, &ts, NULL), IG_OK);
    assert_int_equal(ts, 1700000000);
    /* The witness line above the log's: the log's signature still needed
       by whoever opens the note, and the cosignature still found. */
    all.len = 0;
    assert_int_equal(ig_buf_adds(&all, text), IG_OK);
    assert_int_equal(ig_buf_adds(&all, "\n"), IG_OK);
    assert_int_equal(ig_buf_adds(&all, line), IG_OK);
    assert_int_equal(audit_cosig_find(all.data, all.len, &w, &ts, NULL), IG_OK);
    {
        struct audit_verifier v;
        size_t tlen;

        au_verifier(lg.k, LOG, &v);
        assert_int_equal(audit_note_open(all.data, all.len, &v, &tlen, NULL),
                         IG_ERR_CRYPTO);
    }
    /* A second blank line: the note splits at the last one, so the text
       an attacker extends with "\n\n— ..." lines is not the checkpoint. */
    all.len = 0;
    assert_int_equal(ig_buf_adds(&all, note), IG_OK);
    assert_int_equal(ig_buf_adds(&all, "\n"), IG_OK);
    assert_int_equal(ig_buf_adds(&all, line), IG_OK);
    assert_int_not_equal(audit_cosig_find(all.data, all.len, &w, &ts, NULL),
                         IG_OK);
    ig_buf_release(&all);
    free(note);
    free(text);
    atk_key_release(&a);
    atk_key_release(&lg);
}

/* ---- request bodies and 409 sizes in exact-size buffers ---- */

static enum ig_status
req_parse(const char *body, size_t len, struct audit_witness_req *r)
{
    char *copy = malloc(len ? len : 1);
    enum ig_status st;

    assert_non_null(copy);
    memcpy(copy, body, len);
    st = audit_witness_req_parse(copy, len, r, NULL);
    if (st == IG_OK)
        r->note = NULL; /* it pointed into copy */
    free(copy);
    return st;
}

static void
test_hostile_requests(void **state)
{
#define H44 "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="
    static const char *const bad[] = {
        "old -18446744073709551611\n\nn\n", /* strtoull wraps to 5 */
        "old +5\n\nn\n",
        "old 0x5\n\nn\n",
        "old 5 \n\nn\n",
        "old 5\t\n\nn\n",
        "old \xd9\xa5\n\nn\n", /* an Arabic-Indic five */
        "old 99999999999999999999\n\nn\n",
        "old 000000000000000000005\n\nn\n",
        "old 5\n" H44 " \n\nn\n",
        "old 5\n " H44 "\n\nn\n",
        "old 5\n" H44 "\r\n\nn\n",
        "old 5\n-wcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n\nn\n",
        "old 5\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc\n=\n\nn\n",
        "old 5\n============================================\n\nn\n",
        "old 5\nBwcHBwcHBwcHBwcHBwcH=wcHBwcHBwcHBwcHBwcHBwc=\n\nn\n",
        "old 5\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw==\n\nn\n",
        "old 5\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwd=\n\nn\n",
        "old 5\n" H44 "\n \nn\n",
        "old 5\n" H44 "\n\r\nn\n",
        "old 5\r\n\r\nn\n",
        "old 5",
        "old 5\n" H44,
        "old 5\n" H44 "\n",
    };
    struct audit_witness_req *r = malloc(sizeof(*r));
    size_t i;

    (void)state;
    assert_non_null(r);
    /* The control. */
    assert_int_equal(
        req_parse("old 5\n" H44 "\n\nn\n", strlen("old 5\n" H44 "\n\nn\n"), r),
        IG_OK);
    assert_int_equal(r->old, 5);
    assert_int_equal(r->nproof, 1);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (req_parse(bad[i], strlen(bad[i]), r) != IG_ERR_INVALID)
            fail_msg("accepted %s", bad[i]);
        assert_int_equal(r->old, 0);
        assert_int_equal(r->nproof, 0);
        assert_null(r->note);
    }
    /* NULs: in the old line, in a proof line. */
    assert_int_equal(req_parse("old 5\0\n\nn\n", 10, r), IG_ERR_INVALID);
    assert_int_equal(req_parse("old 5\n" H44 "\0\n\nn\n", 6 + 44 + 5, r),
                     IG_ERR_INVALID);
    /* Over AUDIT_WITNESS_REQ_MAX, well formed. */
    {
        size_t len = AUDIT_WITNESS_REQ_MAX + 1;
        char *big = malloc(len);

        assert_non_null(big);
        memcpy(big, "old 5\n\n", 7);
        memset(big + 7, 'n', len - 8);
        big[len - 1] = '\n';
        assert_int_equal(req_parse(big, len, r), IG_ERR_INVALID);
        free(big);
    }
    free(r);
#undef H44
}

static void
test_hostile_sizes(void **state)
{
    static const char *const bad[] = {
        "+3\n",
        "-0\n",
        " 3\n",
        "3 \n",
        "0x3\n",
        "3\r\n",
        "\xd9\xa3\n",
        "99999999999999999999\n",
        "-18446744073709551613\n",
        "3\n3\n",
        "\n3\n",
        "3\0\n",
    };
    uint64_t n = 7;
    size_t i, len;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *copy;

        len = i == sizeof(bad) / sizeof(bad[0]) - 1 ? 3 : strlen(bad[i]);
        copy = malloc(len);
        assert_non_null(copy);
        memcpy(copy, bad[i], len);
        if (audit_witness_size_parse(copy, len, &n) != IG_ERR_INVALID)
            fail_msg("accepted %s", bad[i]);
        assert_int_equal(n, 0);
        free(copy);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forged_times),
        cmocka_unit_test(test_key_confusion),
        cmocka_unit_test(test_moved_cosignature),
        cmocka_unit_test(test_line_bytes),
        cmocka_unit_test(test_hostile_answers),
        cmocka_unit_test(test_find_in_notes),
        cmocka_unit_test(test_hostile_requests),
        cmocka_unit_test(test_hostile_sizes),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
