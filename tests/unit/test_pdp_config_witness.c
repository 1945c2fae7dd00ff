/*
 * test_pdp_config_witness.c - the PDP config's [witness ID] sections: a
 * vkey inline or from a file, defaults, the URL's final '/' dropped, and
 * every hostile or careless value refused naming the file and line: other
 * schemes, spaces, queries, a log key (type 01) or a key id that does not
 * match, two witnesses under one key name, more than IG_WITNESS_MAX, timeouts
 * out of range, witnesses without an audit key.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_cosig.h"
#include "audit_note.h"
#include "ig_limits.h"
#include "pdp_config.h"

static char dir[64];

static int
setup(void **state)
{
    (void)state;
    (void)snprintf(dir, sizeof(dir), "/tmp/ig-cfgw-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int
teardown(void **state)
{
    char cmd[128];
    (void)state;

    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static void
write_file(const char *name, const char *text)
{
    char path[160];
    FILE *f;

    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static enum ig_status
load(const char *text, struct pdp_config **c, struct ig_err *err)
{
    char path[160];

    write_file("c.conf", text);
    (void)snprintf(path, sizeof(path), "%s/c.conf", dir);
    return pdp_config_load(path, c, err);
}

#define BASE                                                                   \
    "database = db.sqlite\nsigning_key = /etc/ig/signing.key\n"                \
    "policy_dir = policies\n[audit]\nkey = /etc/ig/audit.key\n"

/* A witness vkey for name, its public key filled with byte b. */
static void
vkey(const char *name, unsigned char b, char *out, size_t cap)
{
    unsigned char pk[32];

    memset(pk, b, sizeof(pk));
    assert_int_equal(audit_witness_key_format(name, pk, out, cap), IG_OK);
}

/* load(text) must fail with want in the message (and a line number). */
static void
refused(const char *text, const char *want)
{
    struct pdp_config *c = NULL;
    struct ig_err err;

    assert_int_equal(load(text, &c, &err), IG_ERR_INVALID);
    assert_null(c);
    if (strstr(err.msg, want) == NULL)
        fail_msg("want \"%s\" in \"%s\"", want, err.msg);
    assert_non_null(strstr(err.msg, "c.conf"));
}

static void
test_inline_and_file_keys(void **state)
{
    struct pdp_config *c = NULL;
    char k1[PDP_WITNESS_VKEY_MAX], k2[PDP_WITNESS_VKEY_MAX], text[2048];
    struct ig_err err;
    (void)state;

    vkey("witness.example/w1", 1, k1, sizeof(k1));
    vkey("w2.example", 2, k2, sizeof(k2));
    (void)snprintf(text, sizeof(text), "%s\n", k2);
    write_file("w2.vkey", text);
    (void)snprintf(text, sizeof(text),
                   BASE "[witness w1]\nurl = https://w1.example/wit/\n"
                        "key = %s\n"
                        "[witness w2]\nurl = http://127.0.0.1:8801\n"
                        "key = w2.vkey\ntimeout_ms = 250\nretry_ms = 10\n",
                   k1);
    assert_int_equal(load(text, &c, &err), IG_OK);
    assert_int_equal(c->nwitnesses, 2);
    assert_string_equal(c->witnesses[0].id, "w1");
    assert_string_equal(c->witnesses[0].url, "https://w1.example/wit");
    assert_string_equal(c->witnesses[0].vkey, k1);
    assert_string_equal(c->witnesses[0].key.name, "witness.example/w1");
    assert_int_equal(c->witnesses[0].timeout_ms, IG_WITNESS_TIMEOUT_MS_DEFAULT);
    assert_int_equal(c->witnesses[0].retry_ms, IG_WITNESS_RETRY_MS_DEFAULT);
    assert_string_equal(c->witnesses[1].url, "http://127.0.0.1:8801");
    assert_string_equal(c->witnesses[1].vkey, k2);
    assert_int_equal(c->witnesses[1].timeout_ms, 250);
    assert_int_equal(c->witnesses[1].retry_ms, 10);
    pdp_config_free(c);
}

static void
test_bad_urls(void **state)
{
    char k[PDP_WITNESS_VKEY_MAX], text[4096], longurl[IG_WITNESS_URL_MAX];
    const char *bad[] = {"ftp://w.example",  "file:///etc/passwd",
                         "https://",         "https:///path",
                         "https://w.ex/a b", "https://w.ex/?q=1",
                         "https://w.ex/#f",  "w.example",
                         "gopher://w.ex",    "https://w.ex/a\"b"};
    size_t i;
    (void)state;

    vkey("w.example", 3, k, sizeof(k));
    for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        (void)snprintf(text, sizeof(text),
                       BASE "[witness w]\nurl = %s\nkey = %s\n", bad[i], k);
        refused(text, "url must be http:// or https://");
    }
    memset(longurl, 'a', sizeof(longurl) - 1);
    longurl[sizeof(longurl) - 1] = '\0';
    memcpy(longurl, "https://", 8);
    (void)snprintf(text, sizeof(text), BASE "[witness w]\nurl = %s\nkey = %s\n",
                   longurl, k);
    refused(text, "url must be");
}

static void
test_bad_keys(void **state)
{
    char k[PDP_WITNESS_VKEY_MAX], logkey[PDP_WITNESS_VKEY_MAX], text[2048];
    unsigned char pk[32];
    (void)state;

    vkey("w.example", 4, k, sizeof(k));
    memset(pk, 4, sizeof(pk));
    /* The log's kind of key (type 01) is not a witness key. */
    assert_int_equal(
        audit_verifier_format("w.example", pk, logkey, sizeof(logkey)), IG_OK);
    (void)snprintf(text, sizeof(text),
                   BASE "[witness w]\nurl = https://w.ex\nkey = %s\n", logkey);
    refused(text, "want 4");
    /* A key id that is not the key's. */
    k[strlen("w.example+")] = k[strlen("w.example+")] == '0' ? '1' : '0';
    (void)snprintf(text, sizeof(text),
                   BASE "[witness w]\nurl = https://w.ex\nkey = %s\n", k);
    refused(text, "key must be a witness vkey");
    refused(BASE "[witness w]\nurl = https://w.ex\nkey = nosuchfile\n",
            "no such file");
    write_file("bad.vkey", "not a key\n");
    refused(BASE "[witness w]\nurl = https://w.ex\nkey = bad.vkey\n",
            "does not hold a witness vkey");
    refused(BASE "[witness w]\nurl = https://w.ex\n", "witness w needs key");
    vkey("w.example", 4, k, sizeof(k));
    (void)snprintf(text, sizeof(text), BASE "[witness w]\nkey = %s\n", k);
    refused(text, "witness w needs url");
}

static void
test_section_rules(void **state)
{
    char k1[PDP_WITNESS_VKEY_MAX], k2[PDP_WITNESS_VKEY_MAX], *text;
    size_t cap = 64 * 1024, n, i;
    (void)state;

    vkey("same.example", 5, k1, sizeof(k1));
    vkey("same.example", 6, k2, sizeof(k2));
    text = malloc(cap);
    assert_non_null(text);
    /* Two witnesses under one key name: their cosignatures would collide. */
    (void)snprintf(text, cap,
                   BASE "[witness a]\nurl = https://a\nkey = %s\n"
                        "[witness b]\nurl = https://b\nkey = %s\n",
                   k1, k2);
    refused(text, "have the same key name same.example");
    (void)snprintf(text, cap,
                   BASE "[witness a]\nurl = https://a\nkey = %s\n"
                        "[witness a]\nurl = https://b\nkey = %s\n",
                   k1, k2);
    refused(text, "[witness a] appears twice");
    (void)snprintf(text, cap,
                   BASE "[witness a]\nurl = https://a\nkey = %s\n"
                        "url = https://b\n",
                   k1);
    refused(text, "duplicate key url");
    (void)snprintf(text, cap,
                   BASE "[witness a]\nurl = https://a\nkey = %s\nname = x\n",
                   k1);
    refused(text, "unknown key name in [witness]");
    (void)snprintf(text, cap,
                   BASE "[witness a]\nurl = https://a\nkey = %s\n"
                        "timeout_ms = 9\n",
                   k1);
    refused(text, "timeout_ms");
    (void)snprintf(text, cap,
                   BASE "[witness a]\nurl = https://a\nkey = %s\n"
                        "retry_ms = 0\n",
                   k1);
    refused(text, "retry_ms");
    (void)snprintf(text, cap,
                   BASE "[witness a]\nurl = https://a\nkey = %s\n"
                        "timeout_ms = 600001\n",
                   k1);
    refused(text, "timeout_ms");
    refused(BASE "[witness]\n", "[witness] needs an id");
    refused(BASE "[witness a b]\n", "[witness");
    /* Witnesses cosign what the audit key signs: none without it. */
    (void)snprintf(text, cap,
                   "database = d\nsigning_key = /k\npolicy_dir = p\n"
                   "[witness a]\nurl = https://a\nkey = %s\n",
                   k1);
    refused(text, "needs [audit] key");
    /* At most IG_WITNESS_MAX. */
    n = (size_t)snprintf(text, cap, BASE);
    for (i = 0; i <= IG_WITNESS_MAX; i++) {
        char name[32];
        (void)snprintf(name, sizeof(name), "w%zu.example", i);
        vkey(name, (unsigned char)i, k1, sizeof(k1));
        n += (size_t)snprintf(text + n, cap - n,
                              "[witness w%zu]\nurl = https://w%zu\nkey = %s\n",
                              i, i, k1);
        assert_true(n < cap);
    }
    refused(text, "more than 32 witnesses");
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inline_and_file_keys),
        cmocka_unit_test(test_bad_urls),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_section_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
