/*
 * audit_cosig.c - witness cosignatures (c2sp.org/tlog-cosignature,
 * cosignature/v1, Ed25519) and the tlog-witness add-checkpoint body.
 *
 * How it works. A cosignature line has the shape of any signed-note line
 * (audit_sig_line_split); what makes it a witness's is its name and its
 * key id, which hashes the type byte 0x04 where a log's note key hashes
 * 0x01. Its 76 bytes are the key id, a big-endian timestamp and an Ed25519
 * signature over "cosignature/v1\ntime <ts>\n" followed by the checkpoint
 * text. Verifying rebuilds that message in one allocation (Ed25519 wants
 * it whole) and compares nothing but through libsodium.
 *
 * The request body is parsed strictly, one spelling per request: "old N"
 * without leading zeros, proof lines of exactly 44 characters, one blank
 * line, then the note, which is the log key's to check.
 */
#include "audit_cosig.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_int.h"
#include "ig_limits.h"

#define HEADER "cosignature/v1\ntime "
#define HEADER_LEN (sizeof(HEADER) - 1)
#define COSIG_B64_LEN AUDIT_B64_LEN(AUDIT_COSIG_BYTES)
#define HASH_B64_LEN AUDIT_B64_LEN(AUDIT_HASH_BYTES)

/* ---- keys ---- */

uint32_t
audit_cosig_key_id(const char *name, const unsigned char pk[32])
{
    return audit_vkey_id(name, AUDIT_COSIG_TYPE, pk);
}

enum ig_status
audit_witness_key_init(struct audit_witness_key *w, const char *name,
                       const unsigned char pk[32])
{
    if (!audit_name_valid(name))
        return IG_ERR_INVALID;
    memset(w, 0, sizeof(*w));
    memcpy(w->name, name, strlen(name));
    memcpy(w->pk, pk, 32);
    w->key_id = audit_cosig_key_id(name, pk);
    return IG_OK;
}

enum ig_status
audit_witness_key_format(const char *name, const unsigned char pk[32],
                         char *out, size_t cap)
{
    return audit_vkey_format(name, AUDIT_COSIG_TYPE, pk, out, cap);
}

enum ig_status
audit_witness_key_parse(const char *text, size_t len,
                        struct audit_witness_key *out, struct ig_err *err)
{
    memset(out, 0, sizeof(*out));
    if (audit_vkey_parse(text, len, AUDIT_COSIG_TYPE, "witness key", out->name,
                         out->pk, err) != IG_OK)
        return IG_ERR_INVALID;
    out->key_id = audit_cosig_key_id(out->name, out->pk);
    return IG_OK;
}

/* ---- the signed message ---- */

/* "cosignature/v1\ntime <ts>\n" || text, malloc'd into *msg. */
static enum ig_status
message(uint64_t ts, const char *text, size_t len, unsigned char **msg,
        size_t *msg_len)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%" PRIu64 "\n", ts);
    unsigned char *m = malloc(HEADER_LEN + (size_t)n + len);

    *msg = NULL;
    if (m == NULL)
        return IG_ERR_NOMEM;
    memcpy(m, HEADER, HEADER_LEN);
    memcpy(m + HEADER_LEN, num, (size_t)n);
    memcpy(m + HEADER_LEN + (size_t)n, text, len);
    *msg = m;
    *msg_len = HEADER_LEN + (size_t)n + len;
    return IG_OK;
}

enum ig_status
audit_cosig_message(uint64_t ts, const char *text, size_t len,
                    struct ig_buf *out)
{
    unsigned char *m;
    size_t n;
    enum ig_status st = message(ts, text, len, &m, &n);

    if (st != IG_OK)
        return st;
    st = ig_buf_add(out, m, n);
    free(m);
    return st;
}

static void
put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t
get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

/* Checkpoint text as a cosignature signs it: ends in a newline, valid
   note text, and no blank line (that would end it). */
static int
text_ok(const char *text, size_t len)
{
    size_t i;

    if (len == 0 || text[len - 1] != '\n' || !audit_text_valid(text, len, 1))
        return 0;
    for (i = 0; i + 1 < len; i++)
        if (text[i] == '\n' && text[i + 1] == '\n')
            return 0;
    return text[0] != '\n';
}

enum ig_status
audit_cosig_sign(const char *text, size_t len, const char *name,
                 const struct ig_signing_key *k, uint64_t ts,
                 struct ig_buf *out)
{
    unsigned char sig[AUDIT_COSIG_BYTES], *msg;
    char b64[COSIG_B64_LEN + 1];
    struct ig_public_key pub;
    size_t msg_len, start = out->len;
    enum ig_status st;
    int i;

    if (!text_ok(text, len) || !audit_name_valid(name) || ts == 0 ||
        ts > (uint64_t)AUDIT_COSIG_TS_MAX)
        return IG_ERR_INVALID;
    st = message(ts, text, len, &msg, &msg_len);
    if (st != IG_OK)
        return st;
    ig_signing_key_public(k, &pub);
    put_u32(sig, audit_cosig_key_id(name, pub.pk));
    for (i = 0; i < 8; i++)
        sig[4 + i] = (unsigned char)(ts >> (56 - 8 * i));
    ig_signing_key_sign(k, sig + 12, msg, msg_len);
    free(msg);
    audit_b64_encode(sig, sizeof(sig), b64, sizeof(b64));
    st = ig_buf_adds(out, "\xe2\x80\x94 ");
    if (st == IG_OK)
        st = ig_buf_adds(out, name);
    if (st == IG_OK)
        st = ig_buf_adds(out, " ");
    if (st == IG_OK)
        st = ig_buf_adds(out, b64);
    if (st == IG_OK)
        st = ig_buf_adds(out, "\n");
    if (st != IG_OK) {
        out->len = start;
        if (out->data != NULL)
            out->data[start] = '\0';
    }
    return st;
}

/* ---- verifying ---- */

enum ig_status
audit_cosig_line_info(const char *line, size_t len, const char **name,
                      size_t *name_len, uint32_t *key_id, uint64_t *ts)
{
    unsigned char raw[AUDIT_COSIG_BYTES];
    const char *b64;
    size_t b64_len, raw_len, n;
    int i;

    *name = NULL;
    *name_len = 0;
    *key_id = 0;
    *ts = 0;
    if (audit_sig_line_split(line, len, name, name_len, &b64, &b64_len,
                             &raw_len, NULL) != IG_OK ||
        raw_len != AUDIT_COSIG_BYTES ||
        audit_b64_decode(b64, b64_len, raw, sizeof(raw), &n) != IG_OK) {
        *name = NULL;
        *name_len = 0;
        return IG_ERR_INVALID;
    }
    *key_id = get_u32(raw);
    for (i = 0; i < 8; i++)
        *ts = *ts << 8 | raw[4 + i];
    return IG_OK;
}

enum ig_status
audit_cosig_verify_line(const char *line, size_t len, const char *text,
                        size_t text_len, const struct audit_witness_key *w,
                        uint64_t *ts, struct ig_err *err)
{
    unsigned char raw[AUDIT_COSIG_BYTES], *msg;
    const char *name, *b64;
    size_t name_len, b64_len, raw_len, msg_len, n;
    uint64_t t = 0;
    int i, bad;

    *ts = 0;
    if (audit_sig_line_split(line, len, &name, &name_len, &b64, &b64_len,
                             &raw_len, err) != IG_OK)
        return IG_ERR_INVALID;
    if (name_len != strlen(w->name) || memcmp(name, w->name, name_len) != 0)
        return IG_ERR_NOTFOUND;
    if (audit_b64_decode(b64, 8, raw, sizeof(raw), &n) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "note: malformed signature");
    if (get_u32(raw) != w->key_id)
        return IG_ERR_NOTFOUND; /* the same name, another key */
    if (raw_len != AUDIT_COSIG_BYTES ||
        audit_b64_decode(b64, b64_len, raw, sizeof(raw), &n) != IG_OK ||
        n != AUDIT_COSIG_BYTES)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "cosignature by %s+%08" PRIx32
                          " is not %d bytes (key id, time, signature)",
                          w->name, w->key_id, AUDIT_COSIG_BYTES);
    for (i = 0; i < 8; i++)
        t = t << 8 | raw[4 + i];
    if (t > (uint64_t)AUDIT_COSIG_TS_MAX)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "cosignature by %s+%08" PRIx32
                          ": its time is over 2^63 - 1",
                          w->name, w->key_id);
    if (t == 0) /* tlog-witness: "MUST NOT omit the timestamp" */
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "cosignature by %s+%08" PRIx32
                          ": its time is 0 (a witness must timestamp it)",
                          w->name, w->key_id);
    if (!text_ok(text, text_len))
        return ig_err_set(err, IG_ERR_INVALID,
                          "cosignature: not checkpoint text");
    if (message(t, text, text_len, &msg, &msg_len) != IG_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    bad = crypto_sign_verify_detached(raw + 12, msg, msg_len, w->pk);
    free(msg);
    if (bad)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "cosignature by %s+%08" PRIx32 " does not verify",
                          w->name, w->key_id);
    *ts = t;
    return IG_OK;
}

/*
 * Each line of lines[0..len) (every one ending in a newline, at most
 * IG_AUDIT_NOTE_MAX_SIGS) checked as w's cosignature of text. *found is
 * the number of w's lines; *ts the latest; when line is not NULL the
 * first valid one is copied there. A line by w that fails stops it.
 */
static enum ig_status
scan(const char *lines, size_t len, const char *text, size_t text_len,
     const struct audit_witness_key *w, int *found, uint64_t *ts, char *line,
     size_t cap, struct ig_err *err)
{
    const char *nl;
    size_t count = 0, n;
    enum ig_status st;
    uint64_t t;

    *found = 0;
    *ts = 0;
    if (len == 0 || lines[len - 1] != '\n')
        return ig_err_set(err, IG_ERR_INVALID,
                          "signature lines must end with a newline");
    while (len > 0) {
        if (++count > IG_AUDIT_NOTE_MAX_SIGS)
            return ig_err_set(err, IG_ERR_INVALID, "over %d signature lines",
                              IG_AUDIT_NOTE_MAX_SIGS);
        nl = memchr(lines, '\n', len);
        n = (size_t)(nl - lines);
        st = audit_cosig_verify_line(lines, n, text, text_len, w, &t, err);
        if (st == IG_OK) {
            if (line != NULL && *found == 0) {
                if (n + 2 > cap)
                    return ig_err_set(err, IG_ERR_INVALID,
                                      "cosignature line too long");
                memcpy(line, lines, n + 1);
                line[n + 1] = '\0';
            }
            (*found)++;
            if (t > *ts)
                *ts = t;
        } else if (st != IG_ERR_NOTFOUND) {
            return st;
        }
        len -= n + 1;
        lines = nl + 1;
    }
    return IG_OK;
}

enum ig_status
audit_cosig_find(const char *note, size_t len,
                 const struct audit_witness_key *w, uint64_t *ts,
                 struct ig_err *err)
{
    const char *sigs;
    size_t text_len, sigs_len;
    enum ig_status st;
    int found;

    *ts = 0;
    st = audit_note_split(note, len, &text_len, &sigs, &sigs_len, err);
    if (st != IG_OK)
        return st;
    st = scan(sigs, sigs_len, note, text_len, w, &found, ts, NULL, 0, err);
    if (st != IG_OK) {
        *ts = 0;
        return st;
    }
    if (found == 0)
        return ig_err_set(err, IG_ERR_NOTFOUND,
                          "no cosignature by %s+%08" PRIx32, w->name,
                          w->key_id);
    return IG_OK;
}

enum ig_status
audit_cosig_pick(const char *body, size_t len, const char *text,
                 size_t text_len, const struct audit_witness_key *w, char *line,
                 size_t cap, uint64_t *ts, struct ig_err *err)
{
    enum ig_status st;
    int found;

    *ts = 0;
    if (cap > 0)
        line[0] = '\0';
    if (len > AUDIT_NOTE_MAX)
        return ig_err_set(err, IG_ERR_INVALID, "answer over %d bytes",
                          AUDIT_NOTE_MAX);
    if (!audit_text_valid(body, len, 1))
        return ig_err_set(err, IG_ERR_INVALID,
                          "answer: not UTF-8, or a control character");
    st = scan(body, len, text, text_len, w, &found, ts, line, cap, err);
    if (st == IG_OK && found == 0)
        st = ig_err_set(err, IG_ERR_NOTFOUND,
                        "no cosignature by %s+%08" PRIx32 " in the answer",
                        w->name, w->key_id);
    if (st != IG_OK) {
        *ts = 0;
        if (cap > 0)
            line[0] = '\0';
    }
    return st;
}

/* ---- the add-checkpoint request ---- */

enum ig_status
audit_witness_req_format(uint64_t old, const unsigned char proof[][32],
                         size_t n, const char *note, size_t note_len,
                         struct ig_buf *out)
{
    char num[32], b64[HASH_B64_LEN + 1];
    size_t i, start = out->len;
    enum ig_status st;

    if (n > AUDIT_WITNESS_PROOF_MAX || note_len == 0)
        return IG_ERR_INVALID;
    (void)snprintf(num, sizeof(num), "old %" PRIu64 "\n", old);
    st = ig_buf_adds(out, num);
    for (i = 0; st == IG_OK && i < n; i++) {
        audit_b64_encode(proof[i], 32, b64, sizeof(b64));
        st = ig_buf_adds(out, b64);
        if (st == IG_OK)
            st = ig_buf_adds(out, "\n");
    }
    if (st == IG_OK)
        st = ig_buf_adds(out, "\n");
    if (st == IG_OK)
        st = ig_buf_add(out, note, note_len);
    if (st != IG_OK) {
        out->len = start;
        if (out->data != NULL)
            out->data[start] = '\0';
    }
    return st;
}

enum ig_status
audit_witness_req_parse(const char *body, size_t len,
                        struct audit_witness_req *out, struct ig_err *err)
{
    const char *line, *what = NULL;
    size_t pos = 0, n, got;

    memset(out, 0, sizeof(*out));
    if (len > AUDIT_WITNESS_REQ_MAX) {
        what = "body too large";
        goto out;
    }
    if (!audit_next_line(body, len, &pos, &line, &n) || n < 5 ||
        memcmp(line, "old ", 4) != 0 ||
        audit_parse_u64(line + 4, n - 4, &out->old) != IG_OK) {
        what = "the first line must be \"old <size>\"";
        goto out;
    }
    for (;;) {
        if (!audit_next_line(body, len, &pos, &line, &n)) {
            what = "no blank line before the checkpoint";
            goto out;
        }
        if (n == 0)
            break;
        if (out->nproof == AUDIT_WITNESS_PROOF_MAX) {
            what = "over 63 proof lines";
            goto out;
        }
        if (n != HASH_B64_LEN ||
            audit_b64_decode(line, n, out->proof[out->nproof], 32, &got) !=
                IG_OK ||
            got != 32) {
            what = "a proof line is not base64 of a 32-byte hash";
            goto out;
        }
        out->nproof++;
    }
    if (pos == len) {
        what = "no checkpoint after the blank line";
        goto out;
    }
    out->note = body + pos;
    out->note_len = len - pos;
out:
    if (what == NULL)
        return IG_OK;
    memset(out, 0, sizeof(*out));
    return ig_err_set(err, IG_ERR_INVALID, "add-checkpoint: %s", what);
}

void
audit_witness_size_format(uint64_t size, char *out, size_t cap)
{
    (void)snprintf(out, cap, "%" PRIu64 "\n", size);
}

enum ig_status
audit_witness_size_parse(const char *body, size_t len, uint64_t *size)
{
    *size = 0;
    if (len < 2 || body[len - 1] != '\n' ||
        audit_parse_u64(body, len - 1, size) != IG_OK) {
        *size = 0;
        return IG_ERR_INVALID;
    }
    return IG_OK;
}
