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

#define SIG_PREFIX "v0="
#define SIG_HEX 64
#define TS_DIGITS_MAX 12
#define FIELD_PREFIX "payload="
#define SECTION_MAX 3000 /* Slack's limit for a section's text */
#define KEY_MAX 40       /* bytes shown of a param name */
#define PARAMS_SHOWN 4
#define VOTES_SHOWN 10

/* ---- signature ---- */

static int
parse_timestamp(const char *s, int64_t *out)
{
    size_t i, n;
    long long v;
    char *end;

    if (s == NULL)
        return -1;
    n = strnlen(s, TS_DIGITS_MAX + 1);
    if (n == 0 || n > TS_DIGITS_MAX)
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
                          TS_DIGITS_MAX);
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

static int
hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

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
            hi = i + 2 < len ? hex_value(body[i + 1]) : -1;
            lo = i + 2 < len ? hex_value(body[i + 2]) : -1;
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
    if (idlen == 0 || idlen > APPR_SLACK_ID_MAX ||
        n - idlen - 1 != IG_HASH_STRLEN)
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

/* ---- messages ---- */

static const char *
vstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* appr_slack_escape with the output cut at max bytes. UTF-8 sequences
   (jansson hands us valid UTF-8) are copied whole or not at all. */
static enum ig_status
escape_cut(struct ig_buf *b, const char *text, size_t len, size_t max)
{
    size_t i = 0, start = b->len, n;
    const char *rep;
    enum ig_status st;

    while (i < len) {
        unsigned char c = (unsigned char)text[i];
        rep = c == '&'                  ? "&amp;"
              : c == '<'                ? "&lt;"
              : c == '>'                ? "&gt;"
              : (c < 0x20 || c == 0x7f) ? " "
                                        : NULL;
        n = rep != NULL ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (n > len - i)
            n = len - i;
        if (b->len - start + (rep != NULL ? strlen(rep) : n) > max)
            return ig_buf_adds(b, "...");
        st = rep != NULL ? ig_buf_adds(b, rep) : ig_buf_add(b, text + i, n);
        if (st != IG_OK)
            return st;
        i += n;
    }
    return IG_OK;
}

enum ig_status
appr_slack_escape(struct ig_buf *b, const char *text, size_t len)
{
    return escape_cut(b, text, len, APPR_SLACK_VALUE_MAX);
}

static enum ig_status
escape_str(struct ig_buf *b, const char *s, size_t max)
{
    return escape_cut(b, s != NULL ? s : "-", s != NULL ? strlen(s) : 1, max);
}

/* A param value as shown: strings as they are, numbers as JSON writes
   them (500, not 500.0), anything else as compact JSON. */
static enum ig_status
add_value(struct ig_buf *b, const json_t *v)
{
    char num[40];
    char *dump;
    double d;
    enum ig_status st;

    if (json_is_string(v))
        return escape_cut(b, json_string_value(v), json_string_length(v),
                          APPR_SLACK_VALUE_MAX);
    if (json_is_integer(v)) {
        (void)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
                       json_integer_value(v));
        return ig_buf_adds(b, num);
    }
    if (json_is_real(v)) {
        d = json_real_value(v);
        (void)snprintf(num, sizeof(num), "%.15g", d);
        if (strtod(num, NULL) != d)
            (void)snprintf(num, sizeof(num), "%.17g", d);
        return ig_buf_adds(b, num);
    }
    dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
    if (dump == NULL)
        return IG_ERR_NOMEM;
    st = escape_cut(b, dump, strlen(dump), APPR_SLACK_VALUE_MAX);
    free(dump);
    return st;
}

static enum ig_status
add_param(struct ig_buf *b, const char *key, const json_t *v, int first)
{
    enum ig_status st;

    if ((!first && (st = ig_buf_adds(b, ", ")) != IG_OK) ||
        (st = escape_str(b, key, KEY_MAX)) != IG_OK ||
        (st = ig_buf_adds(b, ": ")) != IG_OK)
        return st;
    return add_value(b, v);
}

/* The key params: amount, currency and order_id when any is there, else
   the first PARAMS_SHOWN members. */
static enum ig_status
add_params(struct ig_buf *b, const json_t *params)
{
    static const char *const keys[] = {"amount", "currency", "order_id"};
    const char *key;
    json_t *v;
    size_t i, shown = 0;
    enum ig_status st;

    if ((st = ig_buf_adds(b, "*Params:* ")) != IG_OK)
        return st;
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        v = json_object_get(params, keys[i]);
        if (v != NULL && (st = add_param(b, keys[i], v, shown++ == 0)) != IG_OK)
            return st;
    }
    if (shown == 0) {
        json_object_foreach(ig_json_unconst(params), key, v)
        {
            if (shown == PARAMS_SHOWN)
                break;
            if ((st = add_param(b, key, v, shown++ == 0)) != IG_OK)
                return st;
        }
    }
    if (shown == 0 && (st = ig_buf_adds(b, "none")) != IG_OK)
        return st;
    if (json_object_size(params) > shown &&
        (st = ig_buf_adds(b, ", ...")) != IG_OK)
        return st;
    return ig_buf_adds(b, "\n");
}

/* "*label:* value\n" with the value escaped. */
static enum ig_status
add_line(struct ig_buf *b, const char *label, const char *value)
{
    enum ig_status st;

    if ((st = ig_buf_adds(b, "*")) != IG_OK ||
        (st = ig_buf_adds(b, label)) != IG_OK ||
        (st = ig_buf_adds(b, ":* ")) != IG_OK ||
        (st = escape_str(b, value, APPR_SLACK_VALUE_MAX)) != IG_OK)
        return st;
    return ig_buf_adds(b, "\n");
}

/* The intent's field key, else the view's (the PDP keeps principal and
   tenant beside the binding). */
static const char *
intent_or_view(const json_t *v, const char *key)
{
    const char *s = vstr(json_object_get(v, "intent"), key);

    return s != NULL ? s : vstr(v, key);
}

/* A small count (integer or, as the PDP's records read back, real):
   0..9999, else 0. */
static int
count_of(const json_t *n)
{
    double d = json_number_value(n);

    return d >= 0 && d < 10000 ? (int)d : 0;
}

/* Groups joined with ", " (cut), and the quorum. */
static enum ig_status
add_needs(struct ig_buf *b, const json_t *req)
{
    const json_t *groups = json_object_get(req, "groups"), *g;
    int quorum = count_of(json_object_get(req, "quorum"));
    char num[32];
    size_t i, start = b->len;
    enum ig_status st;

    (void)snprintf(num, sizeof(num), "%d approval%s", quorum > 0 ? quorum : 1,
                   quorum > 1 ? "s" : "");
    if ((st = ig_buf_adds(b, "*Needs:* ")) != IG_OK ||
        (st = ig_buf_adds(b, num)) != IG_OK ||
        (st = ig_buf_adds(b, " from ")) != IG_OK)
        return st;
    start = b->len;
    json_array_foreach(groups, i, g)
    {
        if (b->len - start > APPR_SLACK_VALUE_MAX)
            break;
        if ((i > 0 && (st = ig_buf_adds(b, ", ")) != IG_OK) ||
            (st = escape_str(b, json_string_value(g), APPR_SLACK_ID_MAX)) !=
                IG_OK)
            return st;
    }
    return ig_buf_adds(b, "\n");
}

/* "*Why:* CODE, CODE - message" from the escalating decision. */
static enum ig_status
add_why(struct ig_buf *b, const json_t *dec)
{
    const char *msg = vstr(dec, "message");
    const json_t *r;
    size_t i;
    enum ig_status st;

    if ((st = ig_buf_adds(b, "*Why:* ")) != IG_OK)
        return st;
    json_array_foreach(json_object_get(dec, "reasons"), i, r)
    {
        if (i == 3)
            break;
        if ((i > 0 && (st = ig_buf_adds(b, ", ")) != IG_OK) ||
            (st = escape_str(b, json_string_value(r), APPR_SLACK_ID_MAX)) !=
                IG_OK)
            return st;
    }
    if (msg != NULL &&
        ((st = ig_buf_adds(b, " - ")) != IG_OK ||
         (st = escape_str(b, msg, APPR_SLACK_VALUE_MAX)) != IG_OK))
        return st;
    return ig_buf_adds(b, "\n");
}

/* The section's mrkdwn text into b. */
static enum ig_status
section_text(struct ig_buf *b, const json_t *v, const char *status)
{
    const json_t *intent = json_object_get(v, "intent");
    const char *hash = vstr(v, "intent_hash");
    char prefix[7 + 12 + 4];
    enum ig_status st;

    (void)snprintf(prefix, sizeof(prefix), "%.19s...", hash);
    if ((st = ig_buf_adds(b, strcmp(status, "PENDING") == 0
                                 ? "*Approval needed:* "
                                 : "*Approval request:* ")) != IG_OK ||
        (st = escape_str(b, vstr(intent, "action"), APPR_SLACK_VALUE_MAX)) !=
            IG_OK ||
        (st = ig_buf_adds(b, "\n")) != IG_OK ||
        (st = add_line(b, "Resource", vstr(intent, "resource"))) != IG_OK ||
        (st = add_params(b, json_object_get(intent, "params"))) != IG_OK ||
        (st = add_line(b, "Requested by", intent_or_view(v, "principal"))) !=
            IG_OK ||
        (intent_or_view(v, "tenant") != NULL &&
         (st = add_line(b, "Tenant", intent_or_view(v, "tenant"))) != IG_OK) ||
        (st = add_why(b, json_object_get(v, "decision"))) != IG_OK ||
        (st = add_needs(b, json_object_get(v, "requirements"))) != IG_OK ||
        (st = add_line(b, "Intent", prefix)) != IG_OK)
        return st;
    return add_line(b, "Expires", vstr(v, "expires_at"));
}

/* One vote: "approved by NAME (id, via CHANNEL)". */
static enum ig_status
add_vote(struct ig_buf *b, const json_t *vote)
{
    const char *name = vstr(vote, "name"), *id = vstr(vote, "approver");
    enum ig_status st;

    if ((st = ig_buf_adds(b, str_is(json_object_get(vote, "vote"), "APPROVE")
                                 ? "approved by "
                                 : "denied by ")) != IG_OK ||
        (st = escape_str(b, name != NULL ? name : id, 80)) != IG_OK ||
        (st = ig_buf_adds(b, " (")) != IG_OK ||
        (st = escape_str(b, id, APPR_SLACK_ID_MAX)) != IG_OK ||
        (st = ig_buf_adds(b, ", via ")) != IG_OK ||
        (st = escape_str(b, vstr(vote, "channel"), 16)) != IG_OK)
        return st;
    return ig_buf_adds(b, ")");
}

/* The context line: status or result, approvals so far, the votes. */
static enum ig_status
context_text(struct ig_buf *b, const json_t *v, const char *status)
{
    const json_t *votes = json_object_get(v, "votes"), *vote;
    const json_t *res = json_object_get(v, "resolution");
    const char *decision = vstr(res, "decision");
    char num[96];
    size_t i;
    enum ig_status st;

    if (strcmp(status, "PENDING") == 0)
        (void)snprintf(num, sizeof(num), "*Pending:* %d of %d approvals",
                       count_of(json_object_get(v, "approvals")),
                       count_of(json_object_get(
                           json_object_get(v, "requirements"), "quorum")));
    else
        (void)snprintf(num, sizeof(num), "*Result:* %.16s%s%.8s", status,
                       decision != NULL ? ", decision " : "",
                       decision != NULL ? decision : "");
    if ((st = ig_buf_adds(b, num)) != IG_OK)
        return st;
    json_array_foreach(votes, i, vote)
    {
        if (i == VOTES_SHOWN)
            return ig_buf_adds(b, "; ...");
        if ((st = ig_buf_adds(b, i == 0 ? " - " : "; ")) != IG_OK ||
            (st = add_vote(b, vote)) != IG_OK)
            return st;
    }
    if (json_array_size(votes) == 0 && strcmp(status, "PENDING") == 0)
        return ig_buf_adds(b, " - no votes yet");
    return IG_OK;
}

/* The actions block with both buttons carrying value. */
static json_t *
buttons(const char *value)
{
    return json_pack("{s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:{s:s, s:s}},"
                     " {s:s, s:s, s:s, s:s, s:{s:s, s:s}}]}",
                     "type", "actions", "block_id", "intentgate_vote",
                     "elements", "type", "button", "action_id", "approve",
                     "style", "primary", "value", value, "text", "type",
                     "plain_text", "text", "Approve", "type", "button",
                     "action_id", "deny", "style", "danger", "value", value,
                     "text", "type", "plain_text", "text", "Deny");
}

/* Fallback text for notifications: "Approval needed: ACTION on RES". */
static enum ig_status
fallback_text(struct ig_buf *b, const json_t *v, const char *status)
{
    const json_t *intent = json_object_get(v, "intent");
    enum ig_status st;

    if ((st = ig_buf_adds(b, strcmp(status, "PENDING") == 0
                                 ? "Approval needed: "
                                 : "Approval closed: ")) != IG_OK ||
        (st = escape_str(b, vstr(intent, "action"), APPR_SLACK_VALUE_MAX)) !=
            IG_OK ||
        (st = ig_buf_adds(b, " on ")) != IG_OK)
        return st;
    return escape_str(b, vstr(intent, "resource"), APPR_SLACK_VALUE_MAX);
}

enum ig_status
appr_slack_message(const json_t *v, const char *channel, const char *ts,
                   json_t **out)
{
    const char *id = vstr(v, "approval_id"), *hash = vstr(v, "intent_hash");
    const char *status = vstr(v, "status");
    struct ig_buf sec, ctx, fb, val;
    json_t *blocks = NULL, *msg = NULL;
    enum ig_status st = IG_ERR_INVALID;

    *out = NULL;
    ig_buf_init(&sec, SECTION_MAX);
    ig_buf_init(&ctx, SECTION_MAX);
    ig_buf_init(&fb, SECTION_MAX);
    ig_buf_init(&val, APPR_SLACK_ID_MAX + IG_HASH_STRLEN + 2);
    if (id == NULL || hash == NULL || status == NULL || channel == NULL)
        goto out;
    if ((st = section_text(&sec, v, status)) != IG_OK ||
        (st = context_text(&ctx, v, status)) != IG_OK ||
        (st = fallback_text(&fb, v, status)) != IG_OK ||
        (st = ig_buf_adds(&val, id)) != IG_OK ||
        (st = ig_buf_adds(&val, ":")) != IG_OK ||
        (st = ig_buf_adds(&val, hash)) != IG_OK)
        goto out;
    st = IG_ERR_NOMEM;
    blocks =
        json_pack("[{s:s, s:{s:s, s:s}}, {s:s, s:[{s:s, s:s}]}]", "type",
                  "section", "text", "type", "mrkdwn", "text", sec.data, "type",
                  "context", "elements", "type", "mrkdwn", "text", ctx.data);
    if (blocks == NULL)
        goto out;
    /* json_array_append_new steals the buttons (NULL: fails). */
    if (strcmp(status, "PENDING") == 0 &&
        json_array_append_new(blocks, buttons(val.data)) != 0)
        goto out;
    /* "o" steals blocks, also when json_pack fails. */
    msg = json_pack("{s:s, s:s, s:o}", "channel", channel, "text", fb.data,
                    "blocks", blocks);
    blocks = NULL;
    if (msg == NULL ||
        (ts != NULL && json_object_set_new(msg, "ts", json_string(ts)) != 0))
        goto out;
    *out = msg;
    msg = NULL;
    st = IG_OK;
out:
    json_decref(blocks);
    json_decref(msg);
    ig_buf_release(&sec);
    ig_buf_release(&ctx);
    ig_buf_release(&fb);
    ig_buf_release(&val);
    return st;
}
