/*
 * fuzz_slack.c - libFuzzer target for what the PDP reads from Slack before
 * trusting it: the v0 request signature check and the click payload
 * parser (approval/appr_slack.c).
 *
 * The whole input is parsed as an interaction body. A click that parses
 * must have well-formed fields, and a message built for it must carry
 * "<approval id>:<intent hash>" on its buttons. The input (when it is
 * UTF-8) is also an agent's param and context value in a message: every
 * section stays within Slack's limits, nothing in it can mention or link
 * (no '<'), no value closes a code block, and the message offers Approve
 * exactly when appr_slack_shows_all() says it shows the whole intent. The input
 * is also read as "TIMESTAMP\nSIGNATURE\nBODY" and checked with a fixed secret
 * at a fixed time: the signature computed here for (TIMESTAMP, BODY) must
 * verify when the timestamp is well-formed and fresh, and the fuzzed one only
 * when it is that very signature. The seed corpus (tests/fuzz/corpus/slack/)
 * holds clicks and Slack's published example, which verifies at FUZZ_NOW.
 */
#include <jansson.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_slack.h"

#define FUZZ_SECRET "8f742231b10e8888abcd99yyyzzz85a5"
#define FUZZ_NOW INT64_C(1531420618)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_click(const char *data, size_t size)
{
    struct appr_slack_click c;
    json_t *view, *msg = NULL;
    char value[APPR_SLACK_ID_MAX + IG_HASH_STRLEN + 2];
    char *dump;

    if (appr_slack_parse_click(data, size, &c, NULL) != IG_OK)
        return;
    if (c.user_id[0] == '\0' || c.approval_id[0] == '\0' ||
        !ig_hash_is_valid(c.intent_hash) || (c.approve != 0 && c.approve != 1))
        abort();
    view = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:{s:s}}}", "approval_id",
                     c.approval_id, "intent_hash", c.intent_hash, "status",
                     "PENDING", "intent", "action", c.user_id, "resource",
                     c.response_url, "params", "order_id", c.message_ts);
    if (view == NULL ||
        appr_slack_message(view, "C0", NULL, NULL, &msg) != IG_OK)
        abort();
    (void)snprintf(value, sizeof(value), "%s:%s", c.approval_id, c.intent_hash);
    dump = json_dumps(msg, JSON_COMPACT);
    if (dump == NULL || strstr(dump, value) == NULL)
        abort();
    free(dump);
    json_decref(msg);
    json_decref(view);
}

/* The texts of msg's blocks hold no '<' and no backtick between fences;
   each section is within 3000 bytes; 1 when it has an approve button. */
static int
check_blocks(const json_t *msg)
{
    const json_t *b, *t, *e;
    const char *s, *p, *end;
    size_t i, j;
    int approve = 0;

    if (json_array_size(json_object_get(msg, "blocks")) > 50)
        abort();
    json_array_foreach(json_object_get(msg, "blocks"), i, b)
    {
        t = json_object_get(json_object_get(b, "text"), "text");
        s = json_string_value(t);
        if (s != NULL && (strlen(s) > 3000 || strchr(s, '<') != NULL))
            abort();
        for (p = s != NULL ? strstr(s, "```") : NULL; p != NULL;
             p = strstr(end + 3, "```")) {
            end = strstr(p + 3, "```");
            if (end == NULL || memchr(p + 3, '`', (size_t)(end - p - 3)))
                abort();
        }
        json_array_foreach(json_object_get(b, "elements"), j, e)
        {
            s = json_string_value(json_object_get(e, "action_id"));
            approve |= s != NULL && strcmp(s, "approve") == 0;
        }
    }
    return approve;
}

/* data as a param and a context value of a pending approval's message. */
static void
check_message(const char *data, size_t size)
{
    json_t *text = json_stringn(data, size), *view, *msg = NULL;

    if (text == NULL)
        return; /* not UTF-8: views come from parsed JSON */
    /* "O" adds references to text. */
    view = json_pack(
        "{s:s, s:s, s:s, s:{s:s, s:O, s:{s:O, s:i}, s:{s:O}}}", "approval_id",
        "5f0c2a9e-1b7d-4c3e-9a51-2d8e6f4b7c10", "intent_hash",
        "sha256:0123456789abcdef0123456789abcdef0123456789abcdef"
        "0123456789abcdef",
        "status", "PENDING", "intent", "action", "a.b", "resource", text,
        "params", "p", text, "n", 1, "context", "requested_by", text);
    if (view == NULL ||
        appr_slack_message(view, "C0", NULL, NULL, &msg) != IG_OK ||
        check_blocks(msg) != appr_slack_shows_all(view))
        abort();
    json_decref(msg);
    json_decref(view);
    json_decref(text);
}

/* "v0=" + hex HMAC of "v0:" ts ":" body, as Slack signs. */
static void
sign(const char *ts, const char *body, size_t len, char out[68])
{
    crypto_auth_hmacsha256_state st;
    unsigned char mac[crypto_auth_hmacsha256_BYTES];

    (void)crypto_auth_hmacsha256_init(&st, (const unsigned char *)FUZZ_SECRET,
                                      strlen(FUZZ_SECRET));
    (void)crypto_auth_hmacsha256_update(&st, (const unsigned char *)"v0:", 3);
    (void)crypto_auth_hmacsha256_update(&st, (const unsigned char *)ts,
                                        strlen(ts));
    (void)crypto_auth_hmacsha256_update(&st, (const unsigned char *)":", 1);
    (void)crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, len);
    (void)crypto_auth_hmacsha256_final(&st, mac);
    memcpy(out, "v0=", 3);
    (void)sodium_bin2hex(out + 3, 65, mac, sizeof(mac));
}

static void
check_signature(const char *data, size_t size)
{
    const char *nl1, *nl2, *body;
    char *ts, *sig, good[68];
    size_t len;
    enum ig_status st, st_good;

    nl1 = memchr(data, '\n', size);
    if (nl1 == NULL)
        return;
    nl2 = memchr(nl1 + 1, '\n', size - (size_t)(nl1 + 1 - data));
    if (nl2 == NULL)
        return;
    ts = strndup(data, (size_t)(nl1 - data));
    sig = strndup(nl1 + 1, (size_t)(nl2 - nl1 - 1));
    if (ts == NULL || sig == NULL)
        abort();
    body = nl2 + 1;
    len = size - (size_t)(body - data);
    st = appr_slack_verify(FUZZ_SECRET, strlen(FUZZ_SECRET), ts, sig, body, len,
                           FUZZ_NOW, NULL);
    sign(ts, body, len, good);
    st_good = appr_slack_verify(FUZZ_SECRET, strlen(FUZZ_SECRET), ts, good,
                                body, len, FUZZ_NOW, NULL);
    /* The right signature never fails as a forgery; a fuzzed one verifies
       only when it is the right one (and the timestamp is good). */
    if (st_good == IG_ERR_CRYPTO ||
        (st == IG_OK && (st_good != IG_OK || strcmp(sig, good) != 0)))
        abort();
    free(ts);
    free(sig);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;

    if (!ready) {
        if (sodium_init() < 0)
            abort();
        ready = 1;
    }
    check_click((const char *)data, size);
    check_signature((const char *)data, size);
    check_message((const char *)data, size);
    return 0;
}
