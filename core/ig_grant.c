/*
 * ig_grant.c - issue and check grants: PASETO v4.public tokens whose
 * payload is the canonical JSON of the grant claims, whose footer names the
 * signing key, and whose implicit assertion is the intent hash.
 *
 * Signing packs the claims into a jansson object (times formatted by
 * ig_time_format), writes it with the RFC 8785 serializer and signs it
 * with footer {"kid":"k4.pid.…"} - already canonical as a literal, since a
 * kid is base64url - and implicit assertion = intent_hash.
 *
 * Verifying trusts nothing before the signature: the footer is only read to
 * pick the key (strictly parsed, exactly one string member "kid"), then
 * ig_paseto_verify checks the signature over payload, footer and the
 * verifier's own intent hash. Only then is the payload parsed strictly and
 * held to exactly the 13 claims, all strings, times in the one RFC 3339
 * form; then audience, intent hash and the validity window are checked.
 */
#include "ig_grant.h"

#include <stdio.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "ig_paseto.h"
#include "ig_time.h"

#define NCLAIMS 13
#define FOOTER_MAX (sizeof("{\"kid\":\"\"}") + IG_PASERK_PID_STRLEN)

static const char *const claim_names[NCLAIMS] = {"iss",
                                                 "aud",
                                                 "sub",
                                                 "jti",
                                                 "iat",
                                                 "nbf",
                                                 "exp",
                                                 "intent_id",
                                                 "intent_hash",
                                                 "action",
                                                 "resource",
                                                 "decision_id",
                                                 "policy_revision"};

static enum ig_status
check_claims(const struct ig_grant_claims *c, struct ig_err *err)
{
    const char *const v[] = {c->iss,         c->aud,
                             c->sub,         c->jti,
                             c->intent_id,   c->intent_hash,
                             c->action,      c->resource,
                             c->decision_id, c->policy_revision};
    static const char *const names[] = {
        "iss",         "aud",    "sub",      "jti",         "intent_id",
        "intent_hash", "action", "resource", "decision_id", "policy_revision"};
    size_t i;

    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (v[i] == NULL || v[i][0] == '\0')
            return ig_err_set(err, IG_ERR_INVALID, "grant claim %s is missing",
                              names[i]);
    if (!ig_hash_is_valid(c->intent_hash))
        return ig_err_set(err, IG_ERR_INVALID,
                          "grant claim intent_hash is not sha256:<64 hex>");
    if (c->exp <= c->nbf)
        return ig_err_set(err, IG_ERR_INVALID,
                          "grant would expire before it is valid");
    return IG_OK;
}

/* Append the canonical JSON of the claims to out (members in canonical
   key order; ig_canon_obj refuses any other). */
static enum ig_status
write_payload(const struct ig_grant_claims *c, struct ig_buf *out,
              struct ig_err *err)
{
    char iat[IG_TIME_STRLEN + 1], nbf[IG_TIME_STRLEN + 1];
    char exp[IG_TIME_STRLEN + 1];
    struct ig_canon_obj o;

    if (ig_time_format(c->iat, iat) != IG_OK ||
        ig_time_format(c->nbf, nbf) != IG_OK ||
        ig_time_format(c->exp, exp) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID,
                          "grant time is outside years 0000-9999");
    ig_canon_obj_begin(&o, out, err);
    ig_canon_obj_str(&o, "action", c->action);
    ig_canon_obj_str(&o, "aud", c->aud);
    ig_canon_obj_str(&o, "decision_id", c->decision_id);
    ig_canon_obj_str(&o, "exp", exp);
    ig_canon_obj_str(&o, "iat", iat);
    ig_canon_obj_str(&o, "intent_hash", c->intent_hash);
    ig_canon_obj_str(&o, "intent_id", c->intent_id);
    ig_canon_obj_str(&o, "iss", c->iss);
    ig_canon_obj_str(&o, "jti", c->jti);
    ig_canon_obj_str(&o, "nbf", nbf);
    ig_canon_obj_str(&o, "policy_revision", c->policy_revision);
    ig_canon_obj_str(&o, "resource", c->resource);
    ig_canon_obj_str(&o, "sub", c->sub);
    return ig_canon_obj_end(&o);
}

enum ig_status
ig_grant_sign(const struct ig_signing_key *k, const struct ig_grant_claims *c,
              struct ig_buf *out, struct ig_err *err)
{
    struct ig_public_key pub;
    struct ig_buf payload;
    char footer[FOOTER_MAX];
    enum ig_status st;
    int n;

    st = check_claims(c, err);
    if (st != IG_OK)
        return st;
    ig_buf_init(&payload, IG_TOKEN_MAX_BYTES);
    st = write_payload(c, &payload, err);
    if (st != IG_OK)
        goto out;
    ig_signing_key_public(k, &pub);
    n = snprintf(footer, sizeof(footer), "{\"kid\":\"%s\"}", pub.kid);
    IG_ASSERT(n > 0 && (size_t)n < sizeof(footer));
    st = ig_paseto_sign(k, payload.data, payload.len, footer, (size_t)n,
                        c->intent_hash, strlen(c->intent_hash), out, err);
out:
    ig_buf_release(&payload);
    return st;
}

/* Pick the key named by the (unverified) footer's kid. */
static enum ig_status
find_key(const struct ig_keyring *kr, const char *token, size_t len,
         const struct ig_public_key **key, struct ig_err *err)
{
    struct ig_buf f;
    json_t *obj = NULL, *kid;
    enum ig_status st;

    ig_buf_init(&f, IG_TOKEN_MAX_BYTES);
    st = ig_paseto_peek_footer(token, len, &f, err);
    if (st != IG_OK)
        goto out;
    if (f.len == 0) {
        st = ig_err_set(err, IG_ERR_INVALID, "grant has no footer");
        goto out;
    }
    st = ig_json_parse(f.data, f.len, &obj, err);
    if (st == IG_ERR_LIMIT)
        st = IG_ERR_INVALID;
    if (st != IG_OK)
        goto out;
    kid = json_object_get(obj, "kid");
    if (!json_is_object(obj) || json_object_size(obj) != 1 ||
        !json_is_string(kid)) {
        st = ig_err_set(err, IG_ERR_INVALID,
                        "grant footer is not {\"kid\": string}");
        goto out;
    }
    *key = ig_keyring_find(kr, json_string_value(kid), json_string_length(kid));
    if (*key == NULL)
        st = ig_err_set(err, IG_ERR_NOTFOUND, "grant signed by an unknown key");
out:
    json_decref(obj);
    ig_buf_release(&f);
    return st;
}

static int
str_equal(const json_t *v, const char *s)
{
    size_t n = strlen(s);

    return json_string_length(v) == n &&
           memcmp(json_string_value(v), s, n) == 0;
}

/* The 13 claims, all strings; times parsed into t (iat, nbf, exp). */
static enum ig_status
check_shape(const json_t *obj, int64_t t[3], struct ig_err *err)
{
    const json_t *v;
    size_t i;

    if (!json_is_object(obj) || json_object_size(obj) != NCLAIMS)
        return ig_err_set(err, IG_ERR_INVALID,
                          "grant payload is not an object of the %d claims",
                          NCLAIMS);
    for (i = 0; i < NCLAIMS; i++) {
        v = json_object_get(obj, claim_names[i]);
        if (!json_is_string(v))
            return ig_err_set(err, IG_ERR_INVALID,
                              "grant claim %s is missing or not a string",
                              claim_names[i]);
    }
    for (i = 0; i < 3; i++) {
        v = json_object_get(obj, claim_names[4 + i]); /* iat nbf exp */
        if (ig_time_parse(json_string_value(v), json_string_length(v), &t[i]) !=
            IG_OK)
            return ig_err_set(err, IG_ERR_INVALID,
                              "grant claim %s is not YYYY-MM-DDTHH:MM:SSZ",
                              claim_names[4 + i]);
    }
    return IG_OK;
}

static enum ig_status
check_payload(const json_t *obj, const char *intent_hash, const char *aud,
              int64_t now, struct ig_err *err)
{
    enum ig_status st;
    int64_t t[3];

    st = check_shape(obj, t, err);
    if (st != IG_OK)
        return st;
    if (!str_equal(json_object_get(obj, "intent_hash"), intent_hash))
        return ig_err_set(err, IG_ERR_CRYPTO, "grant is for another intent");
    if (!str_equal(json_object_get(obj, "aud"), aud))
        return ig_err_set(err, IG_ERR_CRYPTO, "grant is for another audience");
    if (now < t[1])
        return ig_err_set(err, IG_ERR_INVALID, "grant is not yet valid");
    if (now >= t[2])
        return ig_err_set(err, IG_ERR_EXPIRED, "grant has expired");
    return IG_OK;
}

/* Parse the payload and hold it to the claims' shape, intent hash,
   audience and validity window; on IG_OK *claims_out (when not NULL) gets
   the claims object. */
static enum ig_status
payload_claims(const struct ig_buf *payload, const char *intent_hash,
               const char *aud, int64_t now, json_t **claims_out,
               struct ig_err *err)
{
    json_t *obj = NULL;
    enum ig_status st;

    st = ig_json_parse(payload->data ? payload->data : "", payload->len, &obj,
                       err);
    if (st == IG_ERR_LIMIT)
        st = IG_ERR_INVALID;
    if (st == IG_OK)
        st = check_payload(obj, intent_hash, aud, now, err);
    if (st == IG_OK && claims_out != NULL) {
        *claims_out = obj; /* the caller's reference now */
        obj = NULL;
    }
    json_decref(obj);
    return st;
}

/* Arguments both entry points check first. */
static enum ig_status
check_args(const char *intent_hash, const char *aud, json_t **claims_out,
           struct ig_err *err)
{
    if (claims_out != NULL)
        *claims_out = NULL;
    if (intent_hash == NULL || !ig_hash_is_valid(intent_hash))
        return ig_err_set(err, IG_ERR_INVALID, "intent hash is malformed");
    if (aud == NULL || aud[0] == '\0')
        return ig_err_set(err, IG_ERR_INVALID, "audience is missing");
    return IG_OK;
}

enum ig_status
ig_grant_verify(const struct ig_keyring *kr, const char *token, size_t len,
                const char *intent_hash, const char *aud, int64_t now,
                json_t **claims_out, struct ig_err *err)
{
    const struct ig_public_key *key = NULL;
    struct ig_buf payload;
    enum ig_status st;

    st = check_args(intent_hash, aud, claims_out, err);
    if (st == IG_OK)
        st = find_key(kr, token, len, &key, err);
    if (st != IG_OK)
        return st;
    ig_buf_init(&payload, IG_TOKEN_MAX_BYTES);
    st = ig_paseto_verify(key, token, len, intent_hash, strlen(intent_hash),
                          &payload, NULL, err);
    if (st == IG_OK)
        st = payload_claims(&payload, intent_hash, aud, now, claims_out, err);
    ig_buf_release(&payload);
    return st;
}

enum ig_status
ig_grant_check_stored(const struct ig_keyring *kr, const char *token,
                      size_t len, const char *intent_hash, const char *aud,
                      int64_t now, json_t **claims_out, struct ig_err *err)
{
    const struct ig_public_key *key = NULL;
    struct ig_buf payload;
    enum ig_status st;

    st = check_args(intent_hash, aud, claims_out, err);
    if (st == IG_OK) /* a key taken out of the keyring retires its grants */
        st = find_key(kr, token, len, &key, err);
    if (st != IG_OK)
        return st;
    ig_buf_init(&payload, IG_TOKEN_MAX_BYTES);
    st = ig_paseto_peek_payload(token, len, &payload, err);
    if (st == IG_OK)
        st = payload_claims(&payload, intent_hash, aud, now, claims_out, err);
    ig_buf_release(&payload);
    return st;
}
