/*
 * test_slack.c - Slack signatures, click payloads and messages
 * (approval/appr_slack.c).
 *
 * Signatures, signify-style: Slack's published example verifies; the same
 * request with a trailing newline, any one hex digit changed, another
 * secret, a timestamp 301 s off either way, or a malformed header must
 * fail, each with its own status. Clicks: a good block_actions payload is
 * read field by field; every malformed form encoding or payload shape is
 * refused and leaves nothing behind. Messages: the buttons carry
 * "<approval id>:<intent hash>", values are escaped for mrkdwn, and a
 * resolved approval's update has no buttons. One click approves the whole
 * hash, so hostile params (backticks and ``` fences, <!channel>, forged
 * <https://…|links>, zero-width, bidi and tag characters, values longer
 * than a section, more params than fit) are either all shown - in code
 * blocks no value can close, within Slack's limits - or the message has
 * no Approve button.
 */
#include "testutil.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_slack.h"
#include "ig_json.h"

#define HASH                                                                   \
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define APPROVAL "5f0c2a9e-1b7d-4c3e-9a51-2d8e6f4b7c10"

struct vector {
    json_t *root;
    const char *secret, *ts, *body, *sig;
    int64_t now;
};

static void
vector_load(struct vector *v)
{
    size_t len;
    char *text = tu_read_vector("slack/signature.json", &len);
    struct ig_err err;

    assert_int_equal(ig_json_parse(text, len, &v->root, &err), IG_OK);
    free(text);
    v->secret = json_string_value(json_object_get(v->root, "signing_secret"));
    v->ts = json_string_value(json_object_get(v->root, "timestamp"));
    v->body = json_string_value(json_object_get(v->root, "body"));
    v->sig = json_string_value(json_object_get(v->root, "expected_signature"));
    assert_non_null(v->secret);
    assert_non_null(v->ts);
    assert_non_null(v->body);
    assert_non_null(v->sig);
    v->now = strtoll(v->ts, NULL, 10);
}

static enum ig_status
verify(const struct vector *v, const char *secret, const char *ts,
       const char *sig, const char *body, int64_t now)
{
    struct ig_err err;
    enum ig_status st;

    memset(&err, 0, sizeof(err));
    st = appr_slack_verify(secret, secret != NULL ? strlen(secret) : 0, ts, sig,
                           body, strlen(body), now, &err);
    if (st != IG_OK) {
        assert_true(strlen(err.msg) > 0);
        /* The detail never carries the secret. */
        assert_null(strstr(err.msg, v->secret));
    }
    return st;
}

static void
test_published_vector(void **state)
{
    struct vector v;
    (void)state;

    vector_load(&v);
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, v.body, v.now), IG_OK);
    /* Within the window either way. */
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, v.body, v.now + 300),
                     IG_OK);
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, v.body, v.now - 300),
                     IG_OK);
    json_decref(v.root);
}

static void
test_forgeries_fail(void **state)
{
    struct vector v;
    char body[2048], sig[128], other[64];
    size_t i;
    (void)state;

    vector_load(&v);
    /* One trailing newline on the body. */
    (void)snprintf(body, sizeof(body), "%s\n", v.body);
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, body, v.now),
                     IG_ERR_CRYPTO);
    /* Each hex digit changed in turn. */
    for (i = 3; i < strlen(v.sig); i++) {
        (void)snprintf(sig, sizeof(sig), "%s", v.sig);
        sig[i] = sig[i] == '0' ? '1' : '0';
        assert_int_equal(verify(&v, v.secret, v.ts, sig, v.body, v.now),
                         IG_ERR_CRYPTO);
    }
    /* Another secret, and the secret with one more byte. */
    assert_int_equal(verify(&v, "8f742231b10e8888abcd99yyyzzz85a6", v.ts, v.sig,
                            v.body, v.now),
                     IG_ERR_CRYPTO);
    (void)snprintf(other, sizeof(other), "%sx", v.secret);
    assert_int_equal(verify(&v, other, v.ts, v.sig, v.body, v.now),
                     IG_ERR_CRYPTO);
    /* The body of another request, or none. */
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, "", v.now),
                     IG_ERR_CRYPTO);
    /* The timestamp is signed: one second later does not verify. */
    (void)snprintf(other, sizeof(other), "%lld", (long long)v.now + 1);
    assert_int_equal(verify(&v, v.secret, other, v.sig, v.body, v.now),
                     IG_ERR_CRYPTO);
    json_decref(v.root);
}

static void
test_stale_requests_fail(void **state)
{
    struct vector v;
    (void)state;

    vector_load(&v);
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, v.body, v.now + 301),
                     IG_ERR_EXPIRED);
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, v.body, v.now - 301),
                     IG_ERR_EXPIRED);
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, v.body, 0),
                     IG_ERR_EXPIRED);
    /* Stale wins over a bad signature: no MAC work for old requests. */
    assert_int_equal(verify(&v, v.secret, v.ts, v.sig, "x", v.now + 3600),
                     IG_ERR_EXPIRED);
    json_decref(v.root);
}

static void
test_malformed_headers_fail(void **state)
{
    static const char *const bad_ts[] = {
        "",
        "-1531420618",
        "+1531420618",
        " 1531420618",
        "1531420618 ",
        "1531420618\n",
        "0x5b47d2ca",
        "1531420618.5",
        "1e9",
        "1531420618000",
        "abc",
    };
    static const char *const bad_sig[] = {
        "",
        "v0=",
        "v1=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
        "V0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
        "v0=A2114D57B48EAC39B9AD189DD8316235A7B4A8D21A10BD27519666489C69B503",
        "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b50",
        "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b5033",
        "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b50g",
        "v0= a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b50",
        "a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
    };
    struct vector v;
    size_t i;
    (void)state;

    vector_load(&v);
    assert_int_equal(verify(&v, v.secret, NULL, v.sig, v.body, v.now),
                     IG_ERR_INVALID);
    assert_int_equal(verify(&v, v.secret, v.ts, NULL, v.body, v.now),
                     IG_ERR_INVALID);
    assert_int_equal(verify(&v, "", v.ts, v.sig, v.body, v.now),
                     IG_ERR_INVALID);
    assert_int_equal(verify(&v, NULL, v.ts, v.sig, v.body, v.now),
                     IG_ERR_INVALID);
    for (i = 0; i < sizeof(bad_ts) / sizeof(bad_ts[0]); i++)
        if (verify(&v, v.secret, bad_ts[i], v.sig, v.body, v.now) !=
            IG_ERR_INVALID)
            fail_msg("timestamp \"%s\" was not refused as malformed",
                     bad_ts[i]);
    for (i = 0; i < sizeof(bad_sig) / sizeof(bad_sig[0]); i++)
        if (verify(&v, v.secret, v.ts, bad_sig[i], v.body, v.now) !=
            IG_ERR_INVALID)
            fail_msg("signature \"%s\" was not refused as malformed",
                     bad_sig[i]);
    json_decref(v.root);
}

/* ---- click payloads ---- */

/* "payload=" + the percent-encoding of json (unreserved kept, ' ' as +). */
static char *
form(const char *json)
{
    size_t n = strlen(json), i, o = 8;
    char *out = malloc(8 + 3 * n + 1);

    assert_non_null(out);
    memcpy(out, "payload=", 8);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)json[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
            c == '~')
            out[o++] = (char)c;
        else if (c == ' ')
            out[o++] = '+';
        else
            o += (size_t)snprintf(out + o, 4, "%%%02X", c);
    }
    out[o] = '\0';
    return out;
}

static const char good_payload[] =
    "{\"type\": \"block_actions\", \"user\": {\"id\": \"UDEVAPPROVER\", "
    "\"username\": \"dev\"}, \"api_app_id\": \"A1\", \"token\": \"x\", "
    "\"container\": {\"type\": \"message\", \"message_ts\": "
    "\"1700000000.000100\", \"channel_id\": \"C0DEV\"}, \"channel\": "
    "{\"id\": \"C0DEV\", \"name\": \"approvals\"}, \"response_url\": "
    "\"https://hooks.slack.com/actions/T1/2/abc\", \"actions\": "
    "[{\"action_id\": \"approve\", \"block_id\": \"intentgate_vote\", "
    "\"value\": \"" APPROVAL ":" HASH "\", \"type\": \"button\", "
    "\"action_ts\": \"1700000001.1\"}]}";

static enum ig_status
parse_json(const char *json, struct appr_slack_click *c)
{
    char *body = form(json);
    struct ig_err err;
    enum ig_status st;

    memset(c, 0x5a, sizeof(*c));
    st = appr_slack_parse_click(body, strlen(body), c, &err);
    free(body);
    return st;
}

static void
assert_zeroed(const struct appr_slack_click *c)
{
    struct appr_slack_click zero;

    memset(&zero, 0, sizeof(zero));
    assert_memory_equal(c, &zero, sizeof(zero));
}

static void
test_click_accepted(void **state)
{
    struct appr_slack_click c;
    char *deny;
    const char *p;
    (void)state;

    assert_int_equal(parse_json(good_payload, &c), IG_OK);
    assert_string_equal(c.user_id, "UDEVAPPROVER");
    assert_int_equal(c.approve, 1);
    assert_string_equal(c.approval_id, APPROVAL);
    assert_string_equal(c.intent_hash, HASH);
    assert_string_equal(c.response_url,
                        "https://hooks.slack.com/actions/T1/2/abc");
    assert_string_equal(c.channel_id, "C0DEV");
    assert_string_equal(c.message_ts, "1700000000.000100");

    deny = strdup(good_payload);
    assert_non_null(deny);
    p = strstr(deny, "\"approve\"");
    memcpy(deny + (p - deny), "\"deny\"   ", 9);
    assert_int_equal(parse_json(deny, &c), IG_OK);
    assert_int_equal(c.approve, 0);
    free(deny);

    /* Optional fields may be absent. */
    assert_int_equal(
        parse_json("{\"type\":\"block_actions\",\"user\":{\"id\":\"U1\"},"
                   "\"actions\":[{\"action_id\":\"deny\",\"value\":\"a-1:" HASH
                   "\"}]}",
                   &c),
        IG_OK);
    assert_string_equal(c.response_url, "");
    assert_string_equal(c.channel_id, "");
    assert_string_equal(c.message_ts, "");
}

/* The good payload with one substring replaced must be refused. */
static void
refused_with(const char *from, const char *to)
{
    const char *p = strstr(good_payload, from);
    char json[4096];
    struct appr_slack_click c;

    assert_non_null(p);
    (void)snprintf(json, sizeof(json), "%.*s%s%s", (int)(p - good_payload),
                   good_payload, to, p + strlen(from));
    if (parse_json(json, &c) == IG_OK)
        fail_msg("accepted: %s", json);
    assert_zeroed(&c);
}

static void
test_click_payload_refused(void **state)
{
    (void)state;
    refused_with("block_actions", "view_submission");
    refused_with("\"block_actions\"", "null");
    refused_with("\"UDEVAPPROVER\"", "\"U DEV\"");
    refused_with("\"UDEVAPPROVER\"", "\"\"");
    refused_with("\"UDEVAPPROVER\"", "42");
    refused_with("\"UDEVAPPROVER\"", "\"UDEV\\u0000X\"");
    refused_with("\"UDEVAPPROVER\"", "\"U<script>\"");
    refused_with("{\"id\": \"UDEVAPPROVER\", ", "{\"name\": \"x\", ");
    refused_with("\"approve\"", "\"approve \"");
    refused_with("\"approve\"", "\"APPROVE\"");
    refused_with("\"approve\"", "\"approve\\u0000\"");
    refused_with("\"action_id\"", "\"action\"");
    refused_with(APPROVAL ":", APPROVAL);
    refused_with(APPROVAL ":", ":");
    refused_with(APPROVAL, APPROVAL "/x");
    refused_with(APPROVAL, "00000000000000000000000000000000000000000000000"
                           "000000000000000000000");
    refused_with(HASH, "sha256:0123");
    refused_with(HASH, HASH "0");
    refused_with("sha256:0123", "sha256:0A23");
    refused_with("sha256:", "sha512:");
    refused_with("[{\"action_id\"", "[], \"x\": [{\"action_id\"");
    refused_with("\"https://hooks", "\"https:// hooks");
    refused_with("\"1700000000.000100\"", "\"1700000000;1\"");
    refused_with("{\"id\": \"C0DEV\"", "{\"id\": \"C0/DEV\"");
    /* Not JSON, duplicate keys, not an object. */
    refused_with("{\"type\"", "{\"type\": 1, \"type\"");
    refused_with("]}", "]}}");
}

static void
refused_body(const char *body, enum ig_status want)
{
    struct appr_slack_click c;
    struct ig_err err;
    enum ig_status st;

    memset(&c, 0x5a, sizeof(c));
    st = appr_slack_parse_click(body, strlen(body), &c, &err);
    if (st != want)
        fail_msg("\"%.80s\": status %d, want %d", body, st, want);
    assert_zeroed(&c);
    assert_true(strlen(err.msg) > 0);
}

static void
test_click_form_refused(void **state)
{
    char *good = form(good_payload), *big, *mod;
    size_t n = strlen(good);
    struct appr_slack_click c;
    struct ig_err err;
    (void)state;

    refused_body("", IG_ERR_INVALID);
    refused_body("payload=", IG_ERR_INVALID);
    refused_body("payload", IG_ERR_INVALID);
    refused_body("Payload=%7B%7D", IG_ERR_INVALID);
    refused_body("token=x&payload=%7B%7D", IG_ERR_INVALID);
    refused_body("payload=%7B%7D&token=x", IG_ERR_INVALID);
    refused_body("payload=%7B%7D=", IG_ERR_INVALID);
    refused_body("payload=%7B%7", IG_ERR_INVALID);
    refused_body("payload=%7B%", IG_ERR_INVALID);
    refused_body("payload=%7G%7D", IG_ERR_INVALID);
    refused_body("payload=%00", IG_ERR_INVALID);
    refused_body("payload={} ", IG_ERR_INVALID);
    refused_body("payload={}\n", IG_ERR_INVALID);
    refused_body("payload=\xc3\xa9", IG_ERR_INVALID);
    refused_body("payload=%7B%7D", IG_ERR_INVALID); /* no fields */
    refused_body("payload=%5B%5D", IG_ERR_INVALID); /* not an object */
    refused_body("payload=%FF%FE", IG_ERR_INVALID); /* not UTF-8 */
    refused_body("payload=nope", IG_ERR_INVALID);

    /* Not NUL-terminated: only len bytes are read. */
    mod = malloc(n + 5);
    assert_non_null(mod);
    memcpy(mod, good, n);
    memcpy(mod + n, "&x=1", 5);
    assert_int_equal(appr_slack_parse_click(mod, n, &c, &err), IG_OK);
    assert_int_not_equal(appr_slack_parse_click(mod, n + 4, &c, &err), IG_OK);
    /* Truncated anywhere: refused. */
    for (size_t cut = 0; cut < n; cut += 7)
        assert_int_not_equal(appr_slack_parse_click(good, cut, &c, &err),
                             IG_OK);
    free(mod);

    /* Over the cap. */
    big = malloc(APPR_SLACK_BODY_MAX + 2);
    assert_non_null(big);
    memcpy(big, "payload=", 8);
    memset(big + 8, 'a', APPR_SLACK_BODY_MAX - 7);
    big[APPR_SLACK_BODY_MAX + 1] = '\0';
    refused_body(big, IG_ERR_LIMIT);
    free(big);
    free(good);
}

/* ---- messages ---- */

/* An approval view as pdp_approval_get_by_intent() builds it (numbers
   from the store read back as reals). */
static json_t *
view(const char *status, int nvotes)
{
    json_t *v = json_pack(
        "{s:s, s:s, s:s, s:s, s:{s:[s], s:f}, s:s, s:s, s:i,"
        " s:{s:s, s:s, s:{s:f, s:s, s:s, s:s}, s:s, s:s},"
        " s:{s:s, s:[s], s:s}, s:[]}",
        "approval_id", APPROVAL, "intent_id", "int-1", "intent_hash", HASH,
        "status", status, "requirements", "groups", "finance", "quorum", 2.0,
        "created_at", "2026-01-01T00:00:00Z", "expires_at",
        "2026-01-01T01:00:00Z", "approvals", nvotes, "intent", "action",
        "payments.refund", "resource", "orders/<b>42</b>", "params", "amount",
        500.0, "currency", "EUR", "order_id", "<script>alert(1)</script>",
        "note", "hidden", "principal", "dev-agent", "tenant", "dev", "decision",
        "decision", "ESCALATE", "reasons", "REFUND_NEEDS_APPROVAL", "message",
        "refund & <@U123> ping", "votes");
    int i;

    assert_non_null(v);
    for (i = 0; i < nvotes; i++)
        assert_int_equal(
            json_array_append_new(
                json_object_get(v, "votes"),
                json_pack("{s:s, s:s, s:s, s:s, s:s}", "approver", "alice",
                          "name", "Alice <Admin>", "vote", "APPROVE", "channel",
                          "slack", "at", "2026-01-01T00:10:00Z")),
            0);
    if (strcmp(status, "PENDING") != 0)
        assert_int_equal(
            json_object_set_new(
                v, "resolution",
                json_pack("{s:s, s:s}", "result", status, "decision", "ALLOW")),
            0);
    return v;
}

/* The block of this type, or NULL. */
static json_t *
block(json_t *msg, const char *type)
{
    json_t *b;
    size_t i;

    json_array_foreach(json_object_get(msg, "blocks"), i, b)
    {
        if (strcmp(json_string_value(json_object_get(b, "type")), type) == 0)
            return b;
    }
    return NULL;
}

static const char *
block_text(json_t *msg, const char *type)
{
    json_t *b = block(msg, type);

    assert_non_null(b);
    if (strcmp(type, "section") == 0)
        return json_string_value(
            json_object_get(json_object_get(b, "text"), "text"));
    return json_string_value(json_object_get(
        json_array_get(json_object_get(b, "elements"), 0), "text"));
}

/* Each section's text, and the whole message's texts joined by "\n|\n". */
static char *
all_texts(json_t *msg, size_t *nsections)
{
    struct ig_buf b;
    json_t *bl, *t;
    size_t i;

    ig_buf_init(&b, 64 * 1024 * 1024);
    *nsections = 0;
    assert_true(json_array_size(json_object_get(msg, "blocks")) <= 50);
    json_array_foreach(json_object_get(msg, "blocks"), i, bl)
    {
        t = json_object_get(bl, "text");
        if (t == NULL)
            t = json_array_get(json_object_get(bl, "elements"), 0);
        if (strcmp(json_string_value(json_object_get(bl, "type")), "section") ==
            0) {
            (*nsections)++;
            /* Slack's limit for a section's text. */
            assert_true(json_string_length(json_object_get(t, "text")) <= 3000);
        }
        if (json_string_value(json_object_get(t, "text")) != NULL) {
            assert_int_equal(
                ig_buf_adds(&b, json_string_value(json_object_get(t, "text"))),
                IG_OK);
            assert_int_equal(ig_buf_adds(&b, "\n|\n"), IG_OK);
        }
    }
    return ig_buf_take(&b, NULL);
}

/* 1 when the message has a button with this action_id. */
static int
has_button(json_t *msg, const char *action_id)
{
    json_t *acts = block(msg, "actions"), *bt;
    size_t i;

    json_array_foreach(json_object_get(acts, "elements"), i, bt)
    {
        if (strcmp(json_string_value(json_object_get(bt, "action_id")),
                   action_id) == 0)
            return 1;
    }
    return 0;
}

/* Inside every ``` fenced block of every text there is no other backtick:
   the agent cannot close the block and write mrkdwn after it. */
static void
assert_fences_hold(const char *texts)
{
    const char *p = texts, *end;

    while ((p = strstr(p, "```")) != NULL) {
        end = strstr(p + 3, "```");
        assert_non_null(end);
        for (p += 3; p < end; p++)
            assert_int_not_equal(*p, '`');
        p = end + 3;
    }
}

static json_t *
view_with_params(json_t *params)
{
    json_t *v = view("PENDING", 0);

    assert_int_equal(
        json_object_set_new(json_object_get(v, "intent"), "params", params), 0);
    return v;
}

static void
test_post_message(void **state)
{
    json_t *v = view("PENDING", 0), *msg, *acts, *bt;
    const char *sec, *params;
    char *dump;
    (void)state;

    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    assert_string_equal(json_string_value(json_object_get(msg, "channel")),
                        "C0DEV");
    assert_null(json_object_get(msg, "ts"));
    assert_non_null(strstr(json_string_value(json_object_get(msg, "text")),
                           "payments.refund"));
    acts = block(msg, "actions");
    assert_non_null(acts);
    assert_int_equal(json_array_size(json_object_get(acts, "elements")), 2);
    bt = json_array_get(json_object_get(acts, "elements"), 0);
    assert_string_equal(json_string_value(json_object_get(bt, "action_id")),
                        "approve");
    assert_string_equal(json_string_value(json_object_get(bt, "style")),
                        "primary");
    assert_string_equal(json_string_value(json_object_get(bt, "value")),
                        APPROVAL ":" HASH);
    bt = json_array_get(json_object_get(acts, "elements"), 1);
    assert_string_equal(json_string_value(json_object_get(bt, "action_id")),
                        "deny");
    assert_string_equal(json_string_value(json_object_get(bt, "style")),
                        "danger");
    assert_string_equal(json_string_value(json_object_get(bt, "value")),
                        APPROVAL ":" HASH);

    sec = block_text(msg, "section");
    assert_non_null(strstr(sec, "`payments.refund`"));
    assert_non_null(strstr(sec, "`\"orders/&lt;b&gt;42&lt;/b&gt;\"`"));
    assert_non_null(strstr(sec, "dev-agent (authenticated)"));
    /* The params: every one, in the next section. */
    params = json_string_value(json_object_get(
        json_object_get(json_array_get(json_object_get(msg, "blocks"), 1),
                        "text"),
        "text"));
    assert_non_null(params);
    assert_non_null(strstr(params, "\"amount\": 500"));
    assert_null(strstr(params, "500.0"));
    assert_non_null(strstr(params, "\"currency\": \"EUR\""));
    assert_non_null(
        strstr(params, "\"&lt;script&gt;alert(1)&lt;/script&gt;\""));
    assert_non_null(strstr(params, "\"note\": \"hidden\""));
    assert_non_null(
        strstr(sec, "REFUND_NEEDS_APPROVAL - refund &amp; &lt;@U123&gt; ping"));
    assert_non_null(strstr(sec, "dev-agent"));
    /* Counts read back from the store are reals: 2, not 2.0 or 0. */
    assert_non_null(strstr(sec, "2 approvals from finance"));
    assert_non_null(strstr(sec, "`" HASH "`")); /* the whole hash */
    assert_non_null(strstr(sec, "2026-01-01T01:00:00Z"));
    /* Links an agent wrote are not unfurled. */
    assert_true(json_is_false(json_object_get(msg, "unfurl_links")));
    assert_true(json_is_false(json_object_get(msg, "unfurl_media")));
    assert_non_null(strstr(block_text(msg, "context"), "0 of 2"));
    /* Nothing unescaped anywhere in the message. */
    dump = json_dumps(msg, JSON_COMPACT);
    assert_null(strstr(dump, "<script>"));
    assert_null(strstr(dump, "<@U123>"));
    free(dump);
    json_decref(msg);
    json_decref(v);
}

static void
test_update_message(void **state)
{
    json_t *v = view("PENDING", 1), *msg;
    const char *ctx;
    (void)state;

    /* Still pending: buttons stay, the vote so far is shown. */
    assert_int_equal(
        appr_slack_message(v, "C0DEV", "1700000000.000100", NULL, &msg), IG_OK);
    assert_string_equal(json_string_value(json_object_get(msg, "ts")),
                        "1700000000.000100");
    assert_non_null(block(msg, "actions"));
    ctx = block_text(msg, "context");
    assert_non_null(strstr(ctx, "1 of 2"));
    assert_non_null(strstr(ctx, "approved by Alice &lt;Admin&gt; (alice"));
    json_decref(msg);
    json_decref(v);

    /* Resolved: no buttons, the result and who voted. */
    v = view("APPROVED", 2);
    assert_int_equal(
        appr_slack_message(v, "C0DEV", "1700000000.000100", NULL, &msg), IG_OK);
    assert_null(block(msg, "actions"));
    assert_non_null(strstr(block_text(msg, "section"), "*Approval request:*"));
    assert_non_null(strstr(json_string_value(json_object_get(msg, "text")),
                           "Approval closed"));
    ctx = block_text(msg, "context");
    assert_non_null(strstr(ctx, "APPROVED"));
    assert_non_null(strstr(ctx, "ALLOW"));
    assert_non_null(strstr(ctx, "alice"));
    json_decref(msg);
    json_decref(v);

    /* A view without the ids is refused. */
    v = json_pack("{s:s}", "status", "PENDING");
    msg = json_null();
    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg),
                     IG_ERR_INVALID);
    assert_null(msg);
    json_decref(v);
}

static void
test_params_of_every_type(void **state)
{
    json_t *v = view("PENDING", 0), *msg;
    size_t nsec;
    char *all;
    (void)state;

    assert_int_equal(
        json_object_set_new(json_object_get(v, "intent"), "params",
                            json_pack("{s:[i,i], s:b, s:n, s:s, s:s, s:s}",
                                      "argv", 1, 2, "flag", 1, "none", "c", "3",
                                      "d", "4", "e", "5")),
        0);
    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    all = all_texts(msg, &nsec);
    assert_non_null(strstr(all, "\"argv\": [\n    1,\n    2\n  ]"));
    assert_non_null(strstr(all, "\"flag\": true"));
    assert_non_null(strstr(all, "\"none\": null"));
    assert_non_null(strstr(all, "\"e\": \"5\""));
    assert_true(appr_slack_shows_all(v));
    free(all);
    json_decref(msg);
    json_decref(v);
}

/* Every value as long and as expanding as it gets: the message still
   builds and each text stays within Slack's 3000 characters. */
static void
test_worst_case_fits(void **state)
{
    char amp[2001], key[8], *all;
    json_t *v = view("PENDING", 0), *msg, *params, *groups, *reasons, *in;
    size_t nsec;
    int i;
    (void)state;

    memset(amp, '&', sizeof(amp) - 1);
    amp[sizeof(amp) - 1] = '\0';
    in = json_object_get(v, "intent");
    params = json_object();
    groups = json_array();
    reasons = json_array();
    for (i = 0; i < 20; i++) {
        (void)snprintf(key, sizeof(key), "k%02d", i);
        assert_int_equal(json_object_set_new(params, key, json_string(amp)), 0);
        assert_int_equal(json_array_append_new(groups, json_string(amp)), 0);
        assert_int_equal(json_array_append_new(reasons, json_string(amp)), 0);
        assert_int_equal(
            json_array_append_new(json_object_get(v, "votes"),
                                  json_pack("{s:s, s:s, s:s, s:s}", "approver",
                                            amp, "name", amp, "vote", "DENY",
                                            "channel", amp)),
            0);
    }
    assert_int_equal(json_object_set_new(params, amp, json_string(amp)), 0);
    assert_int_equal(json_object_set_new(in, "params", params), 0);
    assert_int_equal(json_object_set_new(in, "action", json_string(amp)), 0);
    assert_int_equal(json_object_set_new(in, "resource", json_string(amp)), 0);
    assert_int_equal(json_object_set_new(in, "principal", json_string(amp)), 0);
    assert_int_equal(json_object_set_new(in, "tenant", json_string(amp)), 0);
    assert_int_equal(json_object_set_new(json_object_get(v, "requirements"),
                                         "groups", groups),
                     0);
    assert_int_equal(
        json_object_set_new(json_object_get(v, "decision"), "reasons", reasons),
        0);
    assert_int_equal(json_object_set_new(json_object_get(v, "decision"),
                                         "message", json_string(amp)),
                     0);
    assert_int_equal(json_object_set_new(v, "expires_at", json_string(amp)), 0);
    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    all = all_texts(msg, &nsec); /* every section within Slack's limit */
    assert_true(strlen(block_text(msg, "context")) <= 3000);
    assert_true(strlen(json_string_value(json_object_get(msg, "text"))) <=
                3000);
    /* Far too large to show whole: no Approve. */
    assert_false(has_button(msg, "approve"));
    assert_true(has_button(msg, "deny"));
    assert_false(appr_slack_shows_all(v));
    assert_fences_hold(all);
    free(all);
    json_decref(msg);
    json_decref(v);
}

/* ---- hostile params: what one click approves must all be shown ---- */

static void
test_every_param_shown(void **state)
{
    json_t *params = json_object(), *v, *msg;
    char key[16], val[32], want[64], *all;
    size_t nsec;
    int i;
    (void)state;

    for (i = 0; i < 40; i++) {
        (void)snprintf(key, sizeof(key), "k%02d", i);
        (void)snprintf(val, sizeof(val), "value-%02d", i);
        assert_int_equal(json_object_set_new(params, key, json_string(val)), 0);
    }
    v = view_with_params(params);
    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    all = all_texts(msg, &nsec);
    for (i = 0; i < 40; i++) {
        (void)snprintf(want, sizeof(want), "\"k%02d\": \"value-%02d\"", i, i);
        if (strstr(all, want) == NULL)
            fail_msg("param %d not shown in:\n%s", i, all);
    }
    /* The whole intent hash, not a prefix. */
    assert_non_null(strstr(all, HASH));
    assert_true(has_button(msg, "approve"));
    assert_fences_hold(all);
    free(all);
    json_decref(msg);
    json_decref(v);
}

static void
test_hostile_params_escaped(void **state)
{
    json_t *params = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "tick", "a`b``c", "fence",
        "```\n*Approved by the CFO* <!channel>\n```", "ping",
        "<!channel> <!here> <@U123> <!subteam^S1>", "link",
        "<https://evil.example|https://bank.example/refund>", "zw",
        "pay\xe2\x80\x8bpal\xe2\x80\xae"
        "cod.exe",
        "tag", "ok\xf3\xa0\x80\x81hidden", "amp", "&lt;already&gt; & more");
    json_t *v = view_with_params(params), *msg;
    size_t nsec;
    char *all, *dump;
    (void)state;

    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    all = all_texts(msg, &nsec);
    assert_fences_hold(all);
    /* No mention, no link: every < and > is escaped. */
    assert_null(strchr(all, '<'));
    assert_null(strchr(all, '>'));
    assert_non_null(
        strstr(all, "&lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt;"));
    assert_non_null(strstr(
        all, "&lt;https://evil.example|https://bank.example/refund&gt;"));
    assert_non_null(strstr(all, "&amp;lt;already&amp;gt; &amp; more"));
    /* Backticks inside values are written as JSON escapes. */
    assert_non_null(strstr(all, "a\\u0060b\\u0060\\u0060c"));
    assert_non_null(strstr(all, "*Approved by the CFO*"));
    /* Invisible and direction characters are shown, not hidden. */
    assert_null(strstr(all, "\xe2\x80\x8b"));
    assert_null(strstr(all, "\xe2\x80\xae"));
    assert_null(strstr(all, "\xf3\xa0\x80\x81"));
    assert_non_null(strstr(all, "pay\\u200bpal\\u202ecod.exe"));
    assert_non_null(strstr(all, "ok\\udb40\\udc01hidden"));
    assert_true(has_button(msg, "approve"));
    dump = json_dumps(msg, JSON_COMPACT);
    assert_null(strstr(dump, "<!channel>"));
    free(dump);
    free(all);
    json_decref(msg);
    json_decref(v);
}

static void
test_long_value_shown_whole(void **state)
{
    static char big[2501];
    json_t *v, *msg;
    size_t nsec;
    char *all;
    (void)state;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    v = view_with_params(json_pack("{s:s, s:i}", "payload", big, "n", 1));
    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    all = all_texts(msg, &nsec);
    assert_non_null(strstr(all, big));
    assert_true(has_button(msg, "approve"));
    free(all);
    json_decref(msg);
    json_decref(v);
}

/* Too much to show: the hash and where to look, Deny but no Approve. */
static void
assert_not_shown(json_t *v)
{
    json_t *msg;
    size_t nsec;
    char *all;

    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    all = all_texts(msg, &nsec);
    assert_false(has_button(msg, "approve"));
    assert_true(has_button(msg, "deny"));
    assert_non_null(strstr(all, HASH));
    assert_non_null(strstr(all, "/ui/approvals/" APPROVAL));
    assert_non_null(strstr(all, "cannot be approved in Slack"));
    assert_fences_hold(all);
    free(all);
    json_decref(msg);
}

static void
test_too_large_has_no_approve(void **state)
{
    static char huge[6001];
    json_t *params = json_object(), *v;
    char key[16];
    int i;
    (void)state;

    /* One value longer than a section. */
    memset(huge, 'y', sizeof(huge) - 1);
    huge[sizeof(huge) - 1] = '\0';
    v = view_with_params(json_pack("{s:s}", "blob", huge));
    assert_not_shown(v);
    json_decref(v);

    /* More params than 50 blocks of 3000 characters hold. */
    for (i = 0; i < 1000; i++) {
        (void)snprintf(key, sizeof(key), "key%04d", i);
        assert_int_equal(
            json_object_set_new(params, key, json_string(huge + 5800)), 0);
    }
    v = view_with_params(params);
    assert_not_shown(v);
    json_decref(v);
}

/* The short form links the web page under ui_url; a ui_url that could
   end the link or add one is not used. */
static void
test_link_to_the_web_page(void **state)
{
    static char huge[6001];
    json_t *v, *msg;
    size_t nsec;
    char *all;
    (void)state;

    memset(huge, 'y', sizeof(huge) - 1);
    huge[sizeof(huge) - 1] = '\0';
    v = view_with_params(json_pack("{s:s}", "blob", huge));
    assert_int_equal(
        appr_slack_message(v, "C0DEV", NULL, "https://pdp.example.com", &msg),
        IG_OK);
    all = all_texts(msg, &nsec);
    assert_non_null(strstr(all,
                           "<https://pdp.example.com/ui/approvals/" APPROVAL
                           "|open the request>"));
    free(all);
    json_decref(msg);
    assert_int_equal(appr_slack_message(v, "C0DEV", NULL,
                                        "https://x.example|<!channel>", &msg),
                     IG_OK);
    all = all_texts(msg, &nsec);
    assert_null(strchr(all, '<'));
    assert_non_null(strstr(all, "`/ui/approvals/" APPROVAL "`"));
    free(all);
    json_decref(msg);
    json_decref(v);
}

static void
test_context_is_labelled_a_claim(void **state)
{
    json_t *v = view("PENDING", 0), *msg;
    size_t nsec;
    char *all;
    (void)state;

    assert_int_equal(json_object_set_new(json_object_get(v, "intent"),
                                         "context",
                                         json_pack("{s:s, s:s}", "requested_by",
                                                   "bob", "ticket", "T-1")),
                     0);
    assert_int_equal(appr_slack_message(v, "C0DEV", NULL, NULL, &msg), IG_OK);
    all = all_texts(msg, &nsec);
    assert_non_null(strstr(all, "claimed by the agent"));
    assert_non_null(strstr(all, "\"requested_by\": \"bob\""));
    /* The principal is what the PDP authenticated. */
    assert_non_null(strstr(all, "dev-agent"));
    assert_non_null(strstr(all, "authenticated"));
    free(all);
    json_decref(msg);
    json_decref(v);
}

static void
test_escape(void **state)
{
    struct ig_buf b;
    char long_text[1000];
    size_t i;
    (void)state;

    ig_buf_init(&b, 4096);
    /* A NUL inside the text counts as a control character. */
    assert_int_equal(appr_slack_escape(&b, "a&b<c>d\n\001\000e", 11), IG_OK);
    assert_string_equal(b.data, "a&amp;b&lt;c&gt;d   e");
    ig_buf_reset(&b);
    /* Cut on a UTF-8 boundary: 2-byte characters never split. */
    for (i = 0; i + 1 < sizeof(long_text); i += 2)
        memcpy(long_text + i, "\xc3\xa9", 2);
    assert_int_equal(appr_slack_escape(&b, long_text, sizeof(long_text) - 2),
                     IG_OK);
    assert_true(b.len <= APPR_SLACK_VALUE_MAX + 3);
    assert_string_equal(b.data + b.len - 3, "...");
    assert_int_equal((b.len - 3) % 2, 0);
    ig_buf_reset(&b);
    /* '&' expands: the cut counts output bytes. */
    memset(long_text, '&', sizeof(long_text));
    assert_int_equal(appr_slack_escape(&b, long_text, sizeof(long_text)),
                     IG_OK);
    assert_true(b.len <= APPR_SLACK_VALUE_MAX + 3);
    ig_buf_release(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_vector),
        cmocka_unit_test(test_forgeries_fail),
        cmocka_unit_test(test_stale_requests_fail),
        cmocka_unit_test(test_malformed_headers_fail),
        cmocka_unit_test(test_click_accepted),
        cmocka_unit_test(test_click_payload_refused),
        cmocka_unit_test(test_click_form_refused),
        cmocka_unit_test(test_post_message),
        cmocka_unit_test(test_update_message),
        cmocka_unit_test(test_params_of_every_type),
        cmocka_unit_test(test_worst_case_fits),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_every_param_shown),
        cmocka_unit_test(test_hostile_params_escaped),
        cmocka_unit_test(test_long_value_shown_whole),
        cmocka_unit_test(test_too_large_has_no_approve),
        cmocka_unit_test(test_link_to_the_web_page),
        cmocka_unit_test(test_context_is_labelled_a_claim),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
