/*
 * exec_verify.h - the executor's offline checks of a grant, before it asks
 * the PDP to redeem it (DESIGN.md: "verify signature offline").
 *
 * Given the intent binding the agent forwarded and the grant, in order:
 * recompute the intent hash with core (never trust a hash the agent sends);
 * find the PDP key named by the grant's footer kid; verify the signature
 * with the recomputed hash as implicit assertion; check the grant's
 * audience is this executor, its validity window, and that its intent id,
 * action and resource are the binding's. Each refusal has a stable code.
 */
#ifndef EXEC_VERIFY_H
#define EXEC_VERIFY_H

#include <jansson.h>
#include <stdint.h>

#include "ig_error.h"
#include "ig_hash.h"
#include "ig_key.h"

/* Stable refusal codes (the zero value refuses too). */
enum exec_refusal {
    EXEC_REFUSE_INTERNAL = 0,
    EXEC_ACCEPT,
    EXEC_REFUSE_NO_GRANT,
    EXEC_REFUSE_GRANT_MALFORMED,
    EXEC_REFUSE_INTENT_INVALID,
    EXEC_REFUSE_INTENT_CHANGED,
    EXEC_REFUSE_UNKNOWN_KID,
    EXEC_REFUSE_BAD_SIGNATURE,
    EXEC_REFUSE_WRONG_AUDIENCE,
    EXEC_REFUSE_GRANT_EXPIRED,
    EXEC_REFUSE_GRANT_NOT_YET_VALID
};

/* "GRANT_MALFORMED" etc.; "ACCEPTED" for EXEC_ACCEPT. Static. */
const char *exec_refusal_code(enum exec_refusal r);

/*
 * Run the checks. grant may be NULL. On EXEC_ACCEPT *claims receives the
 * verified claims (new reference) and hash the recomputed intent hash.
 * err explains any refusal in one line (no secrets: grants are not).
 */
enum exec_refusal exec_verify_grant(const struct ig_keyring *keys,
                                    const json_t *intent, const char *grant,
                                    const char *self_id, int64_t now,
                                    json_t **claims,
                                    char hash[IG_HASH_STRLEN + 1],
                                    struct ig_err *err);

/*
 * The checks that need no intent: the grant verified with the intent hash
 * it claims as implicit assertion (so a token the PDP did not sign for
 * that hash fails), its key, audience and validity window. For refusing a
 * forged or foreign token before any I/O; the intent still has to be
 * checked with exec_verify_grant. Same codes, *claims as there.
 */
enum exec_refusal exec_verify_token(const struct ig_keyring *keys,
                                    const char *grant, const char *self_id,
                                    int64_t now, json_t **claims,
                                    struct ig_err *err);

#endif
