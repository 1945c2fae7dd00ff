/*
 * exec_verify.c - offline grant checks (see exec_verify.h).
 *
 * To tell "the intent was changed" from "the grant is forged", the grant's
 * payload is first read WITHOUT trusting it: when its intent_hash differs
 * from the recomputed one the refusal is INTENT_CHANGED. Either way nothing
 * unverified is used to accept: acceptance needs ig_grant_verify to pass
 * with the recomputed hash and this executor as audience.
 */
#include "exec_verify.h"

#include <string.h>

#include "ig_b64.h"
#include "ig_grant.h"
#include "ig_json.h"
#include "ig_limits.h"

static const char *const codes[] = {
    [EXEC_REFUSE_INTERNAL] = "INTERNAL",
    [EXEC_ACCEPT] = "ACCEPTED",
    [EXEC_REFUSE_NO_GRANT] = "NO_GRANT",
    [EXEC_REFUSE_GRANT_MALFORMED] = "GRANT_MALFORMED",
    [EXEC_REFUSE_INTENT_INVALID] = "INTENT_INVALID",
    [EXEC_REFUSE_INTENT_CHANGED] = "INTENT_CHANGED",
    [EXEC_REFUSE_UNKNOWN_KID] = "UNKNOWN_KID",
    [EXEC_REFUSE_BAD_SIGNATURE] = "BAD_SIGNATURE",
    [EXEC_REFUSE_WRONG_AUDIENCE] = "WRONG_AUDIENCE",
    [EXEC_REFUSE_GRANT_EXPIRED] = "GRANT_EXPIRED",
    [EXEC_REFUSE_GRANT_NOT_YET_VALID] = "GRANT_NOT_YET_VALID",
};

const char *
exec_refusal_code(enum exec_refusal r)
{
    if ((size_t)r >= sizeof(codes) / sizeof(codes[0]) || codes[r] == NULL)
        return "INTERNAL";
    return codes[r];
}

/* The grant's claims, NOT verified: decode "v4.public.<b64>[.footer]". */
static json_t *
peek_claims(const char *grant)
{
    static const char hdr[] = "v4.public.";
    unsigned char body[IG_TOKEN_MAX_BYTES];
    const char *p, *dot;
    size_t n, len;
    json_t *v = NULL;

    if (strncmp(grant, hdr, sizeof(hdr) - 1) != 0)
        return NULL;
    p = grant + sizeof(hdr) - 1;
    dot = strchr(p, '.');
    len = dot != NULL ? (size_t)(dot - p) : strlen(p);
    if (ig_b64_decode_public(p, len, body, sizeof(body), &n) != IG_OK ||
        n <= 64)
        return NULL;
    if (ig_json_parse((const char *)body, n - 64, &v, NULL) != IG_OK)
        return NULL;
    return v;
}

static const char *
str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static int
same(const json_t *a, const json_t *b, const char *k)
{
    const char *x = str(a, k), *y = str(b, k);

    return x != NULL && y != NULL && strcmp(x, y) == 0;
}

/* Verify with the claimed audience, then compare it with ours. */
static enum exec_refusal
verify(const struct ig_keyring *keys, const char *grant, const char *hash,
       const char *claimed_aud, const char *self_id, int64_t now,
       json_t **claims, struct ig_err *err)
{
    enum ig_status st;

    st = ig_grant_verify(keys, grant, strlen(grant), hash, claimed_aud, now,
                         claims, err);
    switch (st) {
    case IG_OK:
        break;
    case IG_ERR_NOTFOUND:
        return EXEC_REFUSE_UNKNOWN_KID;
    case IG_ERR_EXPIRED:
        return EXEC_REFUSE_GRANT_EXPIRED;
    case IG_ERR_CRYPTO:
        return EXEC_REFUSE_BAD_SIGNATURE;
    default:
        return strstr(err != NULL ? err->msg : "", "not yet valid") != NULL
                   ? EXEC_REFUSE_GRANT_NOT_YET_VALID
                   : EXEC_REFUSE_GRANT_MALFORMED;
    }
    if (strcmp(claimed_aud, self_id) != 0) {
        json_decref(*claims);
        *claims = NULL;
        (void)ig_err_set(err, IG_ERR_CRYPTO,
                         "the grant is for executor %.64s, not this one",
                         claimed_aud);
        return EXEC_REFUSE_WRONG_AUDIENCE;
    }
    return EXEC_ACCEPT;
}

enum exec_refusal
exec_verify_grant(const struct ig_keyring *keys, const json_t *intent,
                  const char *grant, const char *self_id, int64_t now,
                  json_t **claims, char hash[IG_HASH_STRLEN + 1],
                  struct ig_err *err)
{
    enum exec_refusal r;
    json_t *peek = NULL;
    const char *aud;

    *claims = NULL;
    if (grant == NULL || grant[0] == '\0') {
        (void)ig_err_set(err, IG_ERR_INVALID, "no grant: ask the PDP first");
        return EXEC_REFUSE_NO_GRANT;
    }
    if (!json_is_object(intent) || ig_hash_json(intent, hash, err) != IG_OK) {
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "the intent must be the binding object the PDP "
                         "returned");
        return EXEC_REFUSE_INTENT_INVALID;
    }
    peek = peek_claims(grant);
    aud = str(peek, "aud");
    if (peek == NULL || aud == NULL) {
        json_decref(peek);
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "the grant is not a v4.public intentgate grant");
        return EXEC_REFUSE_GRANT_MALFORMED;
    }
    if (str(peek, "intent_hash") == NULL ||
        strcmp(str(peek, "intent_hash"), hash) != 0) {
        json_decref(peek);
        (void)ig_err_set(err, IG_ERR_CRYPTO,
                         "the intent differs from the one the grant was "
                         "issued for");
        return EXEC_REFUSE_INTENT_CHANGED;
    }
    r = verify(keys, grant, hash, aud, self_id, now, claims, err);
    json_decref(peek);
    if (r == EXEC_ACCEPT && (!same(*claims, intent, "intent_id") ||
                             !same(*claims, intent, "action") ||
                             !same(*claims, intent, "resource"))) {
        json_decref(*claims);
        *claims = NULL;
        (void)ig_err_set(err, IG_ERR_CRYPTO,
                         "the grant names another intent, action or "
                         "resource");
        return EXEC_REFUSE_INTENT_CHANGED;
    }
    return r;
}

enum exec_refusal
exec_verify_token(const struct ig_keyring *keys, const char *grant,
                  const char *self_id, int64_t now, json_t **claims,
                  struct ig_err *err)
{
    json_t *peek = NULL;
    enum exec_refusal r;
    const char *aud, *hash;

    *claims = NULL;
    if (grant == NULL || grant[0] == '\0') {
        (void)ig_err_set(err, IG_ERR_INVALID, "no grant: ask the PDP first");
        return EXEC_REFUSE_NO_GRANT;
    }
    peek = peek_claims(grant);
    aud = str(peek, "aud");
    hash = str(peek, "intent_hash");
    if (peek == NULL || aud == NULL || hash == NULL) {
        json_decref(peek);
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "the grant is not a v4.public intentgate grant");
        return EXEC_REFUSE_GRANT_MALFORMED;
    }
    /* The signature covers the claimed hash as implicit assertion: only
       a token the PDP signed for that hash passes. */
    r = verify(keys, grant, hash, aud, self_id, now, claims, err);
    json_decref(peek);
    return r;
}
