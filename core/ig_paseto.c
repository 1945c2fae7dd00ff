/*
 * ig_paseto.c - PASETO v4.public: sign, verify, and peek at the footer
 * or (for a token this process minted and stored) the payload.
 *
 * Both directions build the message Ed25519 signs, the pre-authentication
 * encoding PAE("v4.public.", m, f, i), in one contiguous buffer laid out as
 *
 *   LE64(4) LE64(10) "v4.public." LE64(|m|) m LE64(|f|) f LE64(|i|) i
 *
 * On the stack when it fits (every token of at most IG_TOKEN_MAX_BYTES with
 * a short implicit assertion does), else malloc'd. Verify decodes the token
 * body (m || sig) straight into its place in that buffer, lifts the 64-byte
 * signature out, and writes the rest of the encoding over where it was, so
 * the payload is never copied before the signature is checked. Sign does
 * the reverse: after signing it writes sig right after m in the buffer and
 * base64url-encodes m || sig from there. Outputs are appended only after
 * everything succeeded. Token text goes through the table-driven
 * ig_b64_*_public codec: a token is public, and libsodium's constant-time
 * codec would cost a third of an Ed25519 check on a large token.
 */
#include "ig_paseto.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_limits.h"

#define HDR "v4.public."
#define HDR_LEN (sizeof(HDR) - 1)
#define SIG_BYTES crypto_sign_BYTES
/* LE64(4) LE64(10) "v4.public." LE64(|m|): the bytes before m. */
#define PAE_HEAD (8 + 8 + HDR_LEN + 8)
#define PAE_STACK IG_TOKEN_MAX_BYTES

/* The parts of a token text, not yet decoded. */
struct parts {
    const char *body; /* base64url of m || sig */
    size_t body_len;
    const char *foot; /* base64url of f, NULL when absent */
    size_t foot_len;
};

/* LE64 with the most significant bit cleared, as PAE wants. */
static void
put_le64(unsigned char *p, uint64_t n)
{
    int i;

    n &= UINT64_C(0x7fffffffffffffff);
    for (i = 0; i < 8; i++)
        p[i] = (unsigned char)(n >> (8 * i));
}

/* Bytes a valid base64url text of n characters decodes to. */
static size_t
decoded_len(size_t n)
{
    return n / 4 * 3 + (n % 4 > 1 ? n % 4 - 1 : 0);
}

/* Write the PAE bytes before m (4 pieces, the header, |m|). */
static void
pae_head(unsigned char *pae, size_t mlen)
{
    put_le64(pae, 4);
    put_le64(pae + 8, HDR_LEN);
    memcpy(pae + 16, HDR, HDR_LEN);
    put_le64(pae + 16 + HDR_LEN, mlen);
}

/* Write LE64(n) and n bytes at p; returns the end. */
static unsigned char *
pae_piece(unsigned char *p, const void *s, size_t n)
{
    put_le64(p, n);
    if (n > 0)
        memcpy(p + 8, s, n);
    return p + 8 + n;
}

/* A buffer of need bytes: the stack one when it fits, else *heap. */
static unsigned char *
pae_buffer(unsigned char *stack, size_t need, unsigned char **heap)
{
    *heap = NULL;
    if (need <= PAE_STACK)
        return stack;
    *heap = malloc(need);
    return *heap;
}

static enum ig_status
split(const char *t, size_t len, struct parts *p, struct ig_err *err)
{
    const char *rest, *dot;
    size_t rlen;

    p->body = p->foot = NULL;
    p->body_len = p->foot_len = 0;
    if (len > IG_TOKEN_MAX_BYTES)
        return ig_err_set(err, IG_ERR_INVALID, "token is over %d bytes",
                          IG_TOKEN_MAX_BYTES);
    if (len < HDR_LEN || memcmp(t, HDR, HDR_LEN) != 0)
        return ig_err_set(err, IG_ERR_INVALID, "not a v4.public token");
    rest = t + HDR_LEN;
    rlen = len - HDR_LEN;
    dot = memchr(rest, '.', rlen);
    p->body = rest;
    p->body_len = dot ? (size_t)(dot - rest) : rlen;
    p->foot = dot ? dot + 1 : NULL;
    p->foot_len = dot ? rlen - p->body_len - 1 : 0;
    if (dot != NULL && p->foot_len == 0)
        return ig_err_set(err, IG_ERR_INVALID, "token has an empty footer");
    if (dot != NULL && memchr(p->foot, '.', p->foot_len) != NULL)
        return ig_err_set(err, IG_ERR_INVALID, "token has too many parts");
    return IG_OK;
}

/* Characters of a token with an mlen-byte payload and flen-byte footer. */
static size_t
token_len(size_t mlen, size_t flen)
{
    return HDR_LEN + IG_B64_ENCODED_LEN(mlen + SIG_BYTES) +
           (flen > 0 ? 1 + IG_B64_ENCODED_LEN(flen) : 0);
}

/* Write the token text for m || sig (at ms) and f into tok; its length. */
static size_t
token_write(char *tok, size_t cap, const unsigned char *ms, size_t mlen,
            const void *footer, size_t flen)
{
    size_t n = HDR_LEN;

    memcpy(tok, HDR, HDR_LEN);
    n += ig_b64_encode_public(ms, mlen + SIG_BYTES, tok + n, cap - n);
    if (flen > 0) {
        tok[n++] = '.';
        n += ig_b64_encode_public(footer, flen, tok + n, cap - n);
    }
    return n;
}

enum ig_status
ig_paseto_sign(const struct ig_signing_key *k, const void *payload,
               size_t payload_len, const void *footer, size_t footer_len,
               const void *implicit, size_t implicit_len, struct ig_buf *out,
               struct ig_err *err)
{
    unsigned char stack[PAE_STACK], *heap = NULL, *pae, *q;
    unsigned char sig[SIG_BYTES];
    char tok[IG_TOKEN_MAX_BYTES + 1];
    size_t need, pae_len, tok_len;
    enum ig_status st = IG_OK;

    if (payload_len > IG_TOKEN_MAX_BYTES || footer_len > IG_TOKEN_MAX_BYTES ||
        token_len(payload_len, footer_len) > IG_TOKEN_MAX_BYTES)
        return ig_err_set(err, IG_ERR_LIMIT, "token would be over %d bytes",
                          IG_TOKEN_MAX_BYTES);
    if (implicit_len > SIZE_MAX / 2)
        return ig_err_set(err, IG_ERR_LIMIT, "implicit assertion too long");
    pae_len = PAE_HEAD + payload_len + 8 + footer_len + 8 + implicit_len;
    /* After signing, sig is written right after m: make room for it. */
    need = pae_len > PAE_HEAD + payload_len + SIG_BYTES
               ? pae_len
               : PAE_HEAD + payload_len + SIG_BYTES;
    pae = pae_buffer(stack, need, &heap);
    if (pae == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    pae_head(pae, payload_len);
    q = pae + PAE_HEAD;
    if (payload_len > 0)
        memcpy(q, payload, payload_len);
    q = pae_piece(q + payload_len, footer, footer_len);
    (void)pae_piece(q, implicit, implicit_len);
    ig_signing_key_sign(k, sig, pae, pae_len);
    memcpy(pae + PAE_HEAD + payload_len, sig, SIG_BYTES);
    tok_len = token_write(tok, sizeof(tok), pae + PAE_HEAD, payload_len, footer,
                          footer_len);
    st = ig_buf_add(out, tok, tok_len);
    if (st != IG_OK)
        (void)ig_err_set(err, st, "cannot append the token: %s",
                         ig_strerror(st));
    free(heap);
    return st;
}

/* Append payload (and footer) to the outputs, all or nothing. */
static enum ig_status
emit(const unsigned char *m, size_t mlen, const unsigned char *f, size_t flen,
     struct ig_buf *payload_out, struct ig_buf *footer_out, struct ig_err *err)
{
    size_t old = payload_out->len;
    enum ig_status st;

    st = ig_buf_add(payload_out, m, mlen);
    if (st == IG_OK && footer_out != NULL) {
        st = ig_buf_add(footer_out, f, flen);
        if (st != IG_OK) {
            payload_out->len = old;
            if (payload_out->data != NULL)
                payload_out->data[old] = '\0';
        }
    }
    if (st != IG_OK)
        return ig_err_set(err, st, "cannot append the token's contents: %s",
                          ig_strerror(st));
    return IG_OK;
}

enum ig_status
ig_paseto_verify(const struct ig_public_key *k, const char *token, size_t len,
                 const void *implicit, size_t implicit_len,
                 struct ig_buf *payload_out, struct ig_buf *footer_out,
                 struct ig_err *err)
{
    unsigned char stack[PAE_STACK], *heap = NULL, *pae, *m, *q;
    unsigned char sig[SIG_BYTES];
    size_t bmax, fmax, blen, mlen, flen;
    struct parts p;
    enum ig_status st;

    st = split(token, len, &p, err);
    if (st != IG_OK)
        return st;
    if (implicit_len > SIZE_MAX / 2)
        return ig_err_set(err, IG_ERR_LIMIT, "implicit assertion too long");
    bmax = decoded_len(p.body_len);
    fmax = decoded_len(p.foot_len);
    pae =
        pae_buffer(stack, PAE_HEAD + bmax + 8 + fmax + 8 + implicit_len, &heap);
    if (pae == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    m = pae + PAE_HEAD;
    if (ig_b64_decode_public(p.body, p.body_len, m, bmax, &blen) != IG_OK) {
        st = ig_err_set(err, IG_ERR_INVALID, "token body is not base64url");
        goto out;
    }
    if (blen < SIG_BYTES) {
        st = ig_err_set(err, IG_ERR_INVALID, "token is too short");
        goto out;
    }
    mlen = blen - SIG_BYTES;
    memcpy(sig, m + mlen, SIG_BYTES);
    q = m + mlen;
    if (ig_b64_decode_public(p.foot, p.foot_len, q + 8, fmax, &flen) != IG_OK) {
        st = ig_err_set(err, IG_ERR_INVALID, "token footer is not base64url");
        goto out;
    }
    pae_head(pae, mlen);
    put_le64(q, flen);
    q = pae_piece(q + 8 + flen, implicit, implicit_len);
    if (crypto_sign_verify_detached(sig, pae, (size_t)(q - pae), k->pk) != 0) {
        st = ig_err_set(err, IG_ERR_CRYPTO, "token signature does not verify");
        goto out;
    }
    st = emit(m, mlen, m + mlen + 8, flen, payload_out, footer_out, err);
out:
    free(heap);
    return st;
}

enum ig_status
ig_paseto_peek_footer(const char *token, size_t len, struct ig_buf *footer_out,
                      struct ig_err *err)
{
    unsigned char f[IG_TOKEN_MAX_BYTES];
    struct parts p;
    enum ig_status st;
    size_t flen;

    st = split(token, len, &p, err);
    if (st != IG_OK)
        return st;
    if (p.foot == NULL)
        return IG_OK;
    if (ig_b64_decode_public(p.foot, p.foot_len, f, sizeof(f), &flen) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "token footer is not base64url");
    st = ig_buf_add(footer_out, f, flen);
    if (st != IG_OK)
        return ig_err_set(err, st, "cannot append the token footer: %s",
                          ig_strerror(st));
    return IG_OK;
}

enum ig_status
ig_paseto_peek_payload(const char *token, size_t len,
                       struct ig_buf *payload_out, struct ig_err *err)
{
    unsigned char m[IG_TOKEN_MAX_BYTES];
    struct parts p;
    enum ig_status st;
    size_t blen;

    st = split(token, len, &p, err);
    if (st != IG_OK)
        return st;
    if (ig_b64_decode_public(p.body, p.body_len, m, sizeof(m), &blen) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "token body is not base64url");
    if (blen < SIG_BYTES)
        return ig_err_set(err, IG_ERR_INVALID, "token is too short");
    st = ig_buf_add(payload_out, m, blen - SIG_BYTES);
    if (st != IG_OK)
        return ig_err_set(err, st, "cannot append the token payload: %s",
                          ig_strerror(st));
    return IG_OK;
}
