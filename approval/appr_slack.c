/*
 * appr_slack.c - Slack request signatures, click payloads and approval
 * messages (see appr_slack.h).
 *
 * How it works: the signature check parses the two headers strictly, then
 * checks the clock, then recomputes the HMAC over "v0:" ts ":" body with
 * libsodium and compares the hex in constant time; the state and the MAC
 * are wiped on the way out. A click body is form-decoded by hand (one
 * payload= field; %XX, '+'; raw bytes limited to printable ASCII), read
 * with the strict JSON reader, and each field used is copied into a fixed
 * buffer after a character-class check, so nothing from Slack is kept by
 * reference. Messages are jansson objects built with json_pack; their
 * mrkdwn text is assembled in a capped ig_buf from escaped, cut values.
 */
#include "appr_slack.h"

#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "ig_text.h"

#define SIG_PREFIX "v0="
#define SIG_HEX 64
#define FIELD_PREFIX "payload="

/* ---- signature ---- */

static int
parse_timestamp(const char *s, int64_t *out)
{
    size_t i, n;
    long long v;
    char *end;

    if (s == NULL)
        return -1;
    n = strnlen(s, IG_SLACK_TS_DIGITS_MAX + 1);
    if (n == 0 || n > IG_SLACK_TS_DIGITS_MAX)
        return -1;
    for (i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end != s + n)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static int
signature_shape_ok(const char *sig)
{
    size_t i, plen = sizeof(SIG_PREFIX) - 1;

    if (sig == NULL || strnlen(sig, plen + SIG_HEX + 1) != plen + SIG_HEX ||
        memcmp(sig, SIG_PREFIX, plen) != 0)
        return 0;
    for (i = plen; i < plen + SIG_HEX; i++)
        if (!((sig[i] >= '0' && sig[i] <= '9') ||
              (sig[i] >= 'a' && sig[i] <= 'f')))
            return 0;
    return 1;
}

enum ig_status
appr_slack_verify(const char *secret, size_t secret_len, const char *timestamp,
                  const char *signature, const void *body, size_t body_len,
                  int64_t now, struct ig_err *err)
{
    crypto_auth_hmacsha256_state st;
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    char hex[SIG_HEX + 1];
    int64_t ts, skew;
    enum ig_status rc = IG_OK;

    if (secret == NULL || secret_len == 0)
        return ig_err_set(err, IG_ERR_INVALID, "no signing secret");
    if (parse_timestamp(timestamp, &ts) != 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "X-Slack-Request-Timestamp must be 1 to %d digits",
                          IG_SLACK_TS_DIGITS_MAX);
    if (!signature_shape_ok(signature))
        return ig_err_set(err, IG_ERR_INVALID,
                          "X-Slack-Signature must be v0= and %d lowercase "
                          "hex digits",
                          SIG_HEX);
    skew = ts > now ? ts - now : now - ts;
    if (skew > APPR_SLACK_MAX_SKEW)
        return ig_err_set(err, IG_ERR_EXPIRED,
                          "request timestamp is %" PRId64
                          " s away from now (at most %d)",
                          skew, APPR_SLACK_MAX_SKEW);
    (void)crypto_auth_hmacsha256_init(&st, (const unsigned char *)secret,
                                      secret_len);
    (void)crypto_auth_hmacsha256_update(&st, (const unsigned char *)"v0:", 3);
    (void)crypto_auth_hmacsha256_update(&st, (const unsigned char *)timestamp,
                                        strlen(timestamp));
    (void)crypto_auth_hmacsha256_update(&st, (const unsigned char *)":", 1);
    if (body_len > 0)
        (void)crypto_auth_hmacsha256_update(&st, body, body_len);
    (void)crypto_auth_hmacsha256_final(&st, mac);
    (void)sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
    if (sodium_memcmp(hex, signature + sizeof(SIG_PREFIX) - 1, SIG_HEX) != 0)
        rc = ig_err_set(err, IG_ERR_CRYPTO,
                        "request signature does not "
                        "match");
    sodium_memzero(&st, sizeof(st));
    sodium_memzero(mac, sizeof(mac));
    sodium_memzero(hex, sizeof(hex));
    return rc;
}

/* ---- click payload ---- */

/*
 * Decode the one payload= field of a form body into a new malloc'd buffer
 * (*out, *outlen bytes, NUL-terminated). Raw bytes must be printable ASCII
 * other than '&' and '='; %XX must have two hex digits and not be NUL.
 */
static enum ig_status
form_payload(const char *body, size_t len, char **out, size_t *outlen,
             struct ig_err *err)
{
    size_t plen = sizeof(FIELD_PREFIX) - 1, i, n = 0;
    char *dst;
    int hi, lo;

    *out = NULL;
    if (len > APPR_SLACK_BODY_MAX)
        return ig_err_set(err, IG_ERR_LIMIT, "body is over %d bytes",
                          APPR_SLACK_BODY_MAX);
    if (len <= plen || memcmp(body, FIELD_PREFIX, plen) != 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "body must be one form field payload=");
    if ((dst = malloc(len - plen + 1)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    for (i = plen; i < len; i++) {
        unsigned char c = (unsigned char)body[i];
        if (c == '%') {
            hi = i + 2 < len ? ig_hex_digit(body[i + 1]) : -1;
            lo = i + 2 < len ? ig_hex_digit(body[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi | lo) == 0)
                goto bad;
            dst[n++] = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+') {
            dst[n++] = ' ';
        } else if (c > 0x20 && c < 0x7f && c != '&' && c != '=') {
            dst[n++] = (char)c;
        } else {
            goto bad;
        }
    }
    dst[n] = '\0';
    *out = dst;
    *outlen = n;
    return IG_OK;
bad:
    free(dst);
    return ig_err_set(err, IG_ERR_INVALID,
                      "malformed form body at byte %zu (one payload= field, "
                      "percent-encoded)",
                      i);
}

/* Characters allowed in the fields copied from a click. */
#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#define ID_CHARS ALNUM "_"                        /* user and channel ids */
#define UUID_CHARS ALNUM "-"                      /* approval ids */
#define TS_CHARS "0123456789."                    /* message ts */
#define URL_CHARS ALNUM "-._~:/?#[]@!$&'()*+,;=%" /* RFC 3986 */

/*
 * Copy the JSON string v into dst (cap bytes incl. the NUL): 0, or -1 when
 * v is not a string, is empty, is cap bytes or longer, or has a character
 * (a NUL included) not in allowed.
 */
static int
copy_checked(const json_t *v, char *dst, size_t cap, const char *allowed)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);

    if (s == NULL || n == 0 || n >= cap || strspn(s, allowed) != n)
        return -1;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

/* Like copy_checked, but an absent v (NULL) leaves dst empty. */
static int
copy_optional(const json_t *v, char *dst, size_t cap, const char *allowed)
{
    dst[0] = '\0';
    return v == NULL ? 0 : copy_checked(v, dst, cap, allowed);
}

/* 1 when v is the JSON string lit exactly (no embedded NUL). */
static int
str_is(const json_t *v, const char *lit)
{
    const char *s = json_string_value(v);

    return s != NULL && json_string_length(v) == strlen(lit) &&
           strcmp(s, lit) == 0;
}

/* "<approval id>:<intent hash>" into out. */
static int
split_value(const json_t *v, struct appr_slack_click *out)
{
    const char *s = json_string_value(v), *colon;
    size_t n, idlen;

    if (s == NULL)
        return -1;
    n = json_string_length(v);
    colon = memchr(s, ':', n);
    if (colon == NULL)
        return -1;
    idlen = (size_t)(colon - s);
    if (idlen == 0 || idlen > IG_ID_MAX || n - idlen - 1 != IG_HASH_STRLEN)
        return -1;
    memcpy(out->approval_id, s, idlen);
    out->approval_id[idlen] = '\0';
    memcpy(out->intent_hash, colon + 1, IG_HASH_STRLEN);
    out->intent_hash[IG_HASH_STRLEN] = '\0';
    return strspn(out->approval_id, UUID_CHARS) == idlen &&
                   ig_hash_is_valid(out->intent_hash)
               ? 0
               : -1;
}

/* Pick the fields of a parsed payload; a message naming the bad one. */
static const char *
click_fields(const json_t *p, struct appr_slack_click *out)
{
    const json_t *a, *id;

    if (!json_is_object(p))
        return "payload must be a JSON object";
    if (!str_is(json_object_get(p, "type"), "block_actions"))
        return "payload type must be block_actions";
    if (copy_checked(json_object_get(json_object_get(p, "user"), "id"),
                     out->user_id, sizeof(out->user_id), ID_CHARS) != 0)
        return "user.id must be a Slack user id";
    a = json_array_get(json_object_get(p, "actions"), 0);
    if (!json_is_object(a))
        return "actions must be an array of objects";
    id = json_object_get(a, "action_id");
    if (str_is(id, "approve"))
        out->approve = 1;
    else if (str_is(id, "deny"))
        out->approve = 0;
    else
        return "actions[0].action_id must be approve or deny";
    if (split_value(json_object_get(a, "value"), out) != 0)
        return "actions[0].value must be <approval id>:<intent hash>";
    if (copy_optional(json_object_get(p, "response_url"), out->response_url,
                      sizeof(out->response_url), URL_CHARS) != 0)
        return "response_url must be a URL";
    if (copy_optional(json_object_get(json_object_get(p, "channel"), "id"),
                      out->channel_id, sizeof(out->channel_id), ID_CHARS) != 0)
        return "channel.id must be a Slack channel id";
    if (copy_optional(
            json_object_get(json_object_get(p, "container"), "message_ts"),
            out->message_ts, sizeof(out->message_ts), TS_CHARS) != 0)
        return "container.message_ts must be a message timestamp";
    return NULL;
}

enum ig_status
appr_slack_parse_click(const char *body, size_t len,
                       struct appr_slack_click *out, struct ig_err *err)
{
    struct ig_err jerr;
    json_t *p = NULL;
    char *text = NULL;
    const char *why;
    size_t n = 0;
    enum ig_status st;

    memset(out, 0, sizeof(*out));
    if ((st = form_payload(body, len, &text, &n, err)) != IG_OK)
        return st;
    st = ig_json_parse(text, n, &p, &jerr);
    free(text);
    if (st != IG_OK)
        return ig_err_set(err, st, "payload: %s", jerr.msg);
    why = click_fields(p, out);
    json_decref(p);
    if (why != NULL) {
        memset(out, 0, sizeof(*out));
        return ig_err_set(err, IG_ERR_INVALID, "%s", why);
    }
    return IG_OK;
}
