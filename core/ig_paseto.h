/*
 * ig_paseto.h - PASETO v4.public tokens (Ed25519), as specified in the
 * PASETO v4 spec:
 *
 *   token = "v4.public." b64url(m || sig) [ "." b64url(f) ]
 *   sig   = Ed25519-Sign(sk, PAE("v4.public.", m, f, i))
 *   PAE   = LE64(count) || for each piece: LE64(len) || piece
 *           (LE64 with its most significant bit cleared)
 *
 * m is the payload, f the footer (omitted from the token when empty), i the
 * implicit assertion (never in the token; both sides must know it). Only
 * v4.public is implemented: "v4.local." and every other header is refused.
 */
#ifndef IG_PASETO_H
#define IG_PASETO_H

#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_key.h"

/*
 * Sign and append the token to out. footer and implicit may be empty
 * (length 0, pointer may then be NULL). IG_ERR_LIMIT when the token would
 * exceed IG_TOKEN_MAX_BYTES or out's cap. Thread safe.
 */
enum ig_status ig_paseto_sign(const struct ig_signing_key *k,
                              const void *payload, size_t payload_len,
                              const void *footer, size_t footer_len,
                              const void *implicit, size_t implicit_len,
                              struct ig_buf *out, struct ig_err *err) IG_WUR;

/*
 * Verify a token (len chars) with public key k and the implicit assertion.
 * On IG_OK the payload is appended to payload_out and, when footer_out is
 * not NULL, the decoded footer to footer_out. Refuses with IG_ERR_INVALID a
 * malformed token (wrong header, bad base64url, too short, over
 * IG_TOKEN_MAX_BYTES) and with IG_ERR_CRYPTO a signature that does not
 * verify. Nothing is appended on failure. Thread safe.
 */
enum ig_status ig_paseto_verify(const struct ig_public_key *k,
                                const char *token, size_t len,
                                const void *implicit, size_t implicit_len,
                                struct ig_buf *payload_out,
                                struct ig_buf *footer_out,
                                struct ig_err *err) IG_WUR;

/*
 * Decode the footer of a v4.public token WITHOUT verifying anything, to
 * find the kid of the key that should verify it. Untrusted until
 * ig_paseto_verify succeeds. Appends nothing when the token has no footer.
 */
enum ig_status ig_paseto_peek_footer(const char *token, size_t len,
                                     struct ig_buf *footer_out,
                                     struct ig_err *err) IG_WUR;

/*
 * Decode the payload of a v4.public token WITHOUT verifying the signature.
 * Only for a token whose bytes are known to be ones this process signed
 * (the PDP's redeem compares the presented token with the one it stored);
 * never to trust a token from outside. Same refusals as ig_paseto_verify's
 * malformed cases; nothing appended on failure.
 */
enum ig_status ig_paseto_peek_payload(const char *token, size_t len,
                                      struct ig_buf *payload_out,
                                      struct ig_err *err) IG_WUR;

#endif
