/*
 * test_form.c - the strict urlencoded form decoder: what a browser sends
 * is read right; everything malformed, oversized, duplicated or not UTF-8
 * is refused, with error text that never quotes a value.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_form.h"

static struct appr_form *
parse_ok(const char *body)
{
    struct appr_form *f = NULL;
    struct ig_err err;

    if (appr_form_parse(body, strlen(body), &f, &err) != IG_OK)
        fail_msg("refused %s: %s", body, err.msg);
    return f;
}

static void
refused(const char *body, size_t len, enum ig_status want, const char *msg)
{
    static char sentinel;
    struct appr_form *f = (struct appr_form *)(void *)&sentinel;
    struct ig_err err;

    assert_int_equal(appr_form_parse(body, len, &f, &err), want);
    assert_null(f);
    assert_non_null(strstr(err.msg, msg));
}

static void
test_browser_forms(void **state)
{
    struct appr_form *f;
    size_t n;
    (void)state;

    f = parse_ok("csrf=abc-_DEF&approver=alice&password=p%40ss+w%C3%B6rd%21");
    assert_int_equal(appr_form_count(f), 3);
    assert_string_equal(appr_form_get(f, "csrf", NULL), "abc-_DEF");
    assert_string_equal(appr_form_get(f, "approver", &n), "alice");
    assert_int_equal(n, 5);
    assert_string_equal(appr_form_get(f, "password", NULL),
                        "p@ss w\xC3\xB6rd!");
    assert_null(appr_form_get(f, "missing", NULL));
    assert_null(appr_form_get(f, "Csrf", NULL));
    appr_form_free(f);

    /* Empty values, escapes in both cases, CRLF from a textarea. */
    f = parse_ok("comment=line+1%0D%0Aline%202&vote=approve&x=&Y.z_-=%2b%2B");
    assert_string_equal(appr_form_get(f, "comment", NULL), "line 1\r\nline 2");
    assert_string_equal(appr_form_get(f, "x", &n), "");
    assert_int_equal(n, 0);
    assert_string_equal(appr_form_get(f, "Y.z_-", NULL), "++");
    appr_form_free(f);

    /* An escaped name; 4-byte UTF-8 in a value. */
    f = parse_ok("intent%5Fhash=%F0%9F%98%80");
    assert_string_equal(appr_form_get(f, "intent_hash", NULL),
                        "\xF0\x9F\x98\x80");
    appr_form_free(f);

    /* An empty body is a form without fields; NULL with len 0 too. */
    f = parse_ok("");
    assert_int_equal(appr_form_count(f), 0);
    appr_form_free(f);
    assert_int_equal(appr_form_parse(NULL, 0, &f, NULL), IG_OK);
    assert_int_equal(appr_form_count(f), 0);
    appr_form_free(f);
    appr_form_free(NULL);
}

static void
test_not_nul_terminated(void **state)
{
    struct appr_form *f;
    char *body = malloc(5);
    (void)state;

    memcpy(body, "a=b&c", 5); /* only "a=b" is given */
    assert_int_equal(appr_form_parse(body, 3, &f, NULL), IG_OK);
    assert_string_equal(appr_form_get(f, "a", NULL), "b");
    assert_int_equal(appr_form_count(f), 1);
    appr_form_free(f);
    free(body);
}

static void
test_malformed(void **state)
{
    (void)state;
    refused("a=1&&b=2", 8, IG_ERR_INVALID, "field 2 is empty");
    refused("a=1&", 4, IG_ERR_INVALID, "field 2 is empty");
    refused("&a=1", 4, IG_ERR_INVALID, "field 1 is empty");
    refused("a", 1, IG_ERR_INVALID, "no '='");
    refused("a=1&b", 5, IG_ERR_INVALID, "field 2 has no '='");
    refused("=1", 2, IG_ERR_INVALID, "a name is");
    refused("a%20b=1", 7, IG_ERR_INVALID, "a name is");
    refused("a<b=1", 5, IG_ERR_INVALID, "a name is");
    refused("a=%", 3, IG_ERR_INVALID, "malformed % escape in the value");
    refused("a=%4", 4, IG_ERR_INVALID, "malformed % escape");
    refused("a=%4g", 5, IG_ERR_INVALID, "malformed % escape");
    refused("a=%zz", 5, IG_ERR_INVALID, "malformed % escape");
    refused("%g1=x", 5, IG_ERR_INVALID, "in the name");
    refused("a=%00", 5, IG_ERR_INVALID, "NUL byte");
    refused("a=x\0y", 5, IG_ERR_INVALID, "byte 0x00");
    refused("a=x y", 5, IG_ERR_INVALID, "byte 0x20");
    refused("a=\xC3\xA9", 4, IG_ERR_INVALID, "byte 0xc3");
    refused("a=1\n", 4, IG_ERR_INVALID, "must be percent-encoded");
}

static void
test_invalid_utf8(void **state)
{
    static const char *const bad[] = {
        "a=%C3",          /* truncated */
        "a=%C3%28",       /* bad continuation */
        "a=%80",          /* stray continuation */
        "a=%C0%AF",       /* overlong "/" */
        "a=%E0%80%AF",    /* overlong, 3 bytes */
        "a=%F0%80%80%AF", /* overlong, 4 bytes */
        "a=%ED%A0%80",    /* surrogate U+D800 */
        "a=%F4%90%80%80", /* past U+10FFFF */
        "a=%F5%80%80%80", /* impossible lead byte */
        "a=%FF",          /* impossible byte */
        "%C3%A9%C3=x",    /* in a name */
        "a=ok&b=%E2%82",  /* in a later field */
    };
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        refused(bad[i], strlen(bad[i]), IG_ERR_INVALID, "UTF-8");
}

static void
test_duplicates(void **state)
{
    (void)state;
    refused("vote=approve&vote=deny", 22, IG_ERR_INVALID,
            "field 2: vote is given twice");
    /* The same name spelled with an escape is the same name. */
    refused("csrf=1&csr%66=2", 15, IG_ERR_INVALID, "csrf is given twice");
}

static void
test_limits(void **state)
{
    char *big = malloc(APPR_FORM_MAX_BYTES + 2);
    char many[1024];
    size_t i, n = 0;
    struct appr_form *f;
    (void)state;

    memset(big, 'x', APPR_FORM_MAX_BYTES + 2);
    big[0] = 'a';
    big[1] = '=';
    assert_int_equal(appr_form_parse(big, APPR_FORM_MAX_BYTES, &f, NULL),
                     IG_OK);
    assert_int_equal(strlen(appr_form_get(f, "a", NULL)),
                     APPR_FORM_MAX_BYTES - 2);
    appr_form_free(f);
    refused(big, APPR_FORM_MAX_BYTES + 1, IG_ERR_LIMIT, "larger than");
    free(big);

    for (i = 0; i < APPR_FORM_MAX_FIELDS; i++)
        n += (size_t)snprintf(many + n, sizeof(many) - n, "%sf%zu=%zu",
                              i > 0 ? "&" : "", i, i);
    assert_int_equal(appr_form_parse(many, n, &f, NULL), IG_OK);
    assert_int_equal(appr_form_count(f), APPR_FORM_MAX_FIELDS);
    assert_string_equal(appr_form_get(f, "f15", NULL), "15");
    appr_form_free(f);
    (void)snprintf(many + n, sizeof(many) - n, "&one=more");
    refused(many, strlen(many), IG_ERR_LIMIT, "more than");

    /* A name of the longest allowed length, and one byte more. */
    memset(many, 'n', sizeof(many));
    many[APPR_FORM_MAX_NAME] = '=';
    assert_int_equal(appr_form_parse(many, APPR_FORM_MAX_NAME + 1, &f, NULL),
                     IG_OK);
    appr_form_free(f);
    many[APPR_FORM_MAX_NAME] = 'n';
    many[APPR_FORM_MAX_NAME + 1] = '=';
    refused(many, APPR_FORM_MAX_NAME + 2, IG_ERR_INVALID, "a name is");
}

static void
test_errors_never_quote_values(void **state)
{
    struct appr_form *f;
    struct ig_err err;
    const char *body = "password=hunter2secret%zz";
    (void)state;

    assert_int_equal(appr_form_parse(body, strlen(body), &f, &err),
                     IG_ERR_INVALID);
    assert_null(strstr(err.msg, "hunter2"));
    body = "password=hunter2secret&password=again";
    assert_int_equal(appr_form_parse(body, strlen(body), &f, &err),
                     IG_ERR_INVALID);
    assert_null(strstr(err.msg, "hunter2"));
    assert_null(strstr(err.msg, "again"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_browser_forms),
        cmocka_unit_test(test_not_nul_terminated),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_errors_never_quote_values),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
