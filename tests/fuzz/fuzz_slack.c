/*
 * fuzz_slack.c - libFuzzer target for what the PDP reads from Slack before
 * trusting it: the v0 request signature check and the click payload
 * parser (approval/appr_slack.c).
 *
 * The whole input is parsed as an interaction body. A click that parses
 * must have well-formed fields, and a message built for it must carry
 * "<approval id>:<intent hash>" on its buttons. The input is also read as
 * "TIMESTAMP\nSIGNATURE\nBODY" and checked with a fixed secret at a fixed
 * time: the signature computed here for (TIMESTAMP, BODY) must verify when
 * the timestamp is well-formed and fresh, and the fuzzed one only when it
 * is that very signature. The seed corpus (tests/fuzz/corpus/slack/) holds
 * clicks and Slack's published example, which verifies at FUZZ_NOW.
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
    if (view == NULL || appr_slack_message(view, "C0", NULL, &msg) != IG_OK)
        abort();
    (void)snprintf(value, sizeof(value), "%s:%s", c.approval_id, c.intent_hash);
    dump = json_dumps(msg, JSON_COMPACT);
    if (dump == NULL || strstr(dump, value) == NULL)
        abort();
    free(dump);
    json_decref(msg);
    json_decref(view);
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
    return 0;
}
