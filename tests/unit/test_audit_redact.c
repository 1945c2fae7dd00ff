/*
 * test_audit_redact.c - HMAC placeholders for sensitive values.
 *
 * Known answers (vectors/audit/redact.json, computed with Python's hmac
 * over hand-written RFC 8785 texts: spelling and member order do not
 * matter), then redaction at JSON pointers: escapes, array indexes, names
 * that are not there, outermost first, and refused pointers leaving the
 * document untouched.
 */
#include "testutil.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit_redact.h"
#include "audit_util.h"
#include "ig_json.h"
#include "ig_limits.h"

static unsigned char key[AUDIT_REDACT_KEY_BYTES];

static void
test_known_answers(void **state)
{
    json_t *doc = au_load_json("audit/redact.json"), *c;
    char out[AUDIT_REDACT_STRLEN + 1], want[AUDIT_REDACT_STRLEN + 1];
    unsigned char *k;
    struct ig_err err;
    size_t i, len;

    (void)state;
    k = tu_hex_decode(json_string_value(json_object_get(doc, "key_hex")), &len);
    assert_int_equal(len, sizeof(key));
    memcpy(key, k, len);
    free(k);
    json_array_foreach(json_object_get(doc, "cases"), i, c)
    {
        const char *in = json_string_value(json_object_get(c, "input"));
        const char *canon = json_string_value(json_object_get(c, "canonical"));

        (void)snprintf(want, sizeof(want), "hmac-sha256:%s",
                       json_string_value(json_object_get(c, "hmac")));
        if (audit_redact_text(in, strlen(in), key, out, &err) != IG_OK)
            fail_msg("%s: %s", in, err.msg);
        assert_string_equal(out, want);
        assert_int_equal(strlen(out), AUDIT_REDACT_STRLEN);
        assert_int_equal(
            audit_redact_text(canon, strlen(canon), key, out, &err), IG_OK);
        assert_string_equal(out, want);
    }
    /* Another key, another placeholder. */
    key[0] ^= 1;
    assert_int_equal(audit_redact_text("null", 4, key, out, NULL), IG_OK);
    assert_string_not_equal(out, want);
    key[0] ^= 1;
    /* Not JSON, or not I-JSON. */
    assert_int_equal(audit_redact_text("{", 1, key, out, &err), IG_ERR_INVALID);
    assert_string_equal(out, "");
    assert_int_equal(audit_redact_text("{\"a\":1,\"a\":2}", 13, key, out, &err),
                     IG_ERR_INVALID);
    json_decref(doc);
}

static const char *
placeholder(const char *json_text)
{
    static char out[AUDIT_REDACT_STRLEN + 1];

    assert_int_equal(
        audit_redact_text(json_text, strlen(json_text), key, out, NULL), IG_OK);
    return out;
}

static json_t *
parse(const char *text)
{
    json_t *v = NULL;

    assert_int_equal(ig_json_parse(text, strlen(text), &v, NULL), IG_OK);
    return v;
}

static const char *
str_at(json_t *v)
{
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static void
test_redact_pointers(void **state)
{
    static const char *ptrs[] = {
        "/card_number", "/account/iban",  "/items/1/sku", "/a~1b",
        "/m~0n",        "/missing",       "/items/5",     "/items/-",
        "/items/01",    "/card_number/x", "/n/0/0",       "/",
    };
    json_t *doc = parse("{\"card_number\":\"4111111111111111\","
                        "\"account\":{\"iban\":\"DE89370400440532013000\","
                        "\"name\":\"Ada\"},"
                        "\"items\":[{\"sku\":\"a\"},{\"sku\":{\"x\":[1]}}],"
                        "\"a/b\":1,\"m~n\":[2],\"n\":[[true]],\"\":\"empty\"}");
    struct ig_err err;

    (void)state;
    if (audit_redact(doc, ptrs, sizeof(ptrs) / sizeof(ptrs[0]), key, &err) !=
        IG_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(str_at(json_object_get(doc, "card_number")),
                        placeholder("\"4111111111111111\""));
    assert_string_equal(
        str_at(json_object_get(json_object_get(doc, "account"), "iban")),
        placeholder("\"DE89370400440532013000\""));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(doc, "account"), "name")),
                        "Ada");
    assert_string_equal(
        str_at(json_object_get(json_array_get(json_object_get(doc, "items"), 1),
                               "sku")),
        placeholder("{\"x\":[1]}"));
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(doc, "items"), 0), "sku")),
        "a");
    assert_string_equal(str_at(json_object_get(doc, "a/b")), placeholder("1"));
    assert_string_equal(str_at(json_object_get(doc, "m~n")),
                        placeholder("[2]"));
    assert_string_equal(
        str_at(json_array_get(json_array_get(json_object_get(doc, "n"), 0), 0)),
        placeholder("true"));
    /* "/" names the member with the empty key. */
    assert_string_equal(str_at(json_object_get(doc, "")),
                        placeholder("\"empty\""));
    assert_int_equal(json_array_size(json_object_get(doc, "items")), 2);
    assert_null(json_object_get(doc, "missing"));
    json_decref(doc);
}

static void
test_outermost_first(void **state)
{
    static const char *ptrs[] = {"/account/iban", "/account"};
    json_t *doc = parse("{\"account\":{\"name\":\"Ada\","
                        "\"iban\":\"DE89370400440532013000\"}}");

    (void)state;
    assert_int_equal(audit_redact(doc, ptrs, 2, key, NULL), IG_OK);
    assert_string_equal(str_at(json_object_get(doc, "account")),
                        placeholder("{\"iban\":\"DE89370400440532013000\","
                                    "\"name\":\"Ada\"}"));
    json_decref(doc);
}

static void
test_refused(void **state)
{
    char longp[IG_AUDIT_POINTER_MAX + 2];
    const char *bad[] = {"", "a", "/~2", "/a~", "/a\tb", "/\xff", "a/b", longp};
    const char *good = "/card";
    json_t *doc = parse("{\"card\":\"4111\"}"), *arr = parse("[1]");
    struct ig_err err;
    size_t i;

    (void)state;
    memset(longp, 'a', sizeof(longp));
    longp[0] = '/';
    longp[IG_AUDIT_POINTER_MAX + 1] = '\0';
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *two[2];

        two[0] = good;
        two[1] = bad[i];
        assert_false(audit_pointer_valid(bad[i]));
        assert_int_equal(audit_redact(doc, two, 2, key, &err), IG_ERR_INVALID);
        /* Nothing changed: pointers are checked first. */
        assert_string_equal(json_string_value(json_object_get(doc, "card")),
                            "4111");
    }
    longp[IG_AUDIT_POINTER_MAX] = '\0';
    assert_true(audit_pointer_valid(longp));
    assert_true(audit_pointer_valid("/"));
    assert_true(audit_pointer_valid("/~0~1/x"));
    assert_int_equal(audit_redact(arr, &good, 1, key, &err), IG_ERR_INVALID);
    assert_int_equal(audit_redact(doc, NULL, 0, key, &err), IG_OK);
    json_decref(doc);
    json_decref(arr);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_redact_pointers),
        cmocka_unit_test(test_outermost_first),
        cmocka_unit_test(test_refused),
    };

    unsigned i;

    for (i = 0; i < sizeof(key); i++)
        key[i] = (unsigned char)i; /* the key of redact.json */
    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
