/*
 * ig_grant.h - intentgate grants: single-use PASETO v4.public tokens bound
 * to exactly one intent.
 *
 *   payload  = RFC 8785 canonical JSON of the claims:
 *              iss aud sub jti iat nbf exp intent_id intent_hash action
 *              resource decision_id policy_revision
 *              (times RFC 3339 UTC, "YYYY-MM-DDTHH:MM:SSZ")
 *   footer   = canonical {"kid":"k4.pid.…"} of the signing key
 *   implicit = the intent_hash string, so a grant verifies only against the
 *              intent it was issued for.
 *
 * Issuing is the PDP's job, checking the executor's and the PDP's redeem;
 * single use is enforced by the store, not here.
 */
#ifndef IG_GRANT_H
#define IG_GRANT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_key.h"

/* What a grant says. All strings required and NUL-terminated. */
struct ig_grant_claims {
    const char *iss; /* issuing PDP */
    const char *aud; /* executor id that may redeem it */
    const char *sub; /* principal that asked */
    const char *jti; /* unique grant id (UUIDv4) */
    const char *intent_id;
    const char *intent_hash; /* "sha256:…" */
    const char *action;
    const char *resource;
    const char *decision_id;
    const char *policy_revision;
    int64_t iat, nbf, exp; /* seconds since the epoch */
};

/*
 * Sign a grant and append the token to out. IG_ERR_INVALID when a claim is
 * missing, intent_hash is malformed or exp <= nbf. Thread safe.
 */
enum ig_status ig_grant_sign(const struct ig_signing_key *k,
                             const struct ig_grant_claims *c,
                             struct ig_buf *out, struct ig_err *err) IG_WUR;

/*
 * Check a grant token against the intent hash the verifier recomputed
 * itself, its own audience, and the time now:
 *   footer kid found in kr (else IG_ERR_NOTFOUND), signature and implicit
 *   assertion (IG_ERR_CRYPTO), payload a strict JSON object with exactly the
 *   claims above, correctly typed (IG_ERR_INVALID), claim intent_hash equal
 *   to intent_hash and aud equal to aud (IG_ERR_CRYPTO), nbf <= now
 *   (IG_ERR_INVALID), now < exp (IG_ERR_EXPIRED).
 * On IG_OK *claims_out (when not NULL) receives the parsed claims object, a
 * new reference. Thread safe.
 */
enum ig_status ig_grant_verify(const struct ig_keyring *kr, const char *token,
                               size_t len, const char *intent_hash,
                               const char *aud, int64_t now,
                               json_t **claims_out, struct ig_err *err) IG_WUR;

/*
 * ig_grant_verify's checks WITHOUT the signature, for a token whose bytes
 * are known to be the ones this PDP signed and stored (the redeem compares
 * the presented token with the stored one in constant time first): the
 * footer's kid must still be in kr (a key removed from the keyring retires
 * its grants), and the payload is held to the same claims, intent hash,
 * audience and validity window, with the same errors. Never for a token
 * from outside. Thread safe.
 */
enum ig_status ig_grant_check_stored(const struct ig_keyring *kr,
                                     const char *token, size_t len,
                                     const char *intent_hash, const char *aud,
                                     int64_t now, json_t **claims_out,
                                     struct ig_err *err) IG_WUR;

#endif
