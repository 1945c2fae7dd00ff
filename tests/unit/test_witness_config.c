/*
 * test_witness_config.c - the witness's config (witness/witness_config.c):
 * a good file with a vkey inline and one in a file, paths relative to the
 * config, and each refusal naming the file and line - no [log], a log key
 * named other than its origin, a bad vkey, a vkey of the wrong type, the
 * same origin twice, unknown keys and sections, out-of-range numbers.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_cosig.h"
#include "audit_util.h"
#include "witness_config.h"

#define ORIGIN "cfg.test.example/audit"

static char dir[64];
static char vkey[512], vkey2[512], wvkey[512], other_vkey[512];

static void
assert_vkey(const struct witness_log *l, size_t i, const char *want)
{
    char got[512];

    assert_true(i < l->nkeys);
    assert_int_equal(
        audit_verifier_format(l->keys[i].name, l->keys[i].pk, got, sizeof(got)),
        IG_OK);
    assert_string_equal(got, want);
    assert_string_equal(l->keys[i].name, l->origin);
}

static int
setup(void **state)
{
    struct ig_signing_key *k, *o, *k2;
    struct ig_public_key pub;
    (void)state;

    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)snprintf(dir, sizeof(dir), "/tmp/test_witness_cfg_XXXXXX");
    assert_non_null(mkdtemp(dir));
    k = au_key_new();
    o = au_key_new();
    ig_signing_key_public(k, &pub);
    assert_int_equal(audit_verifier_format(ORIGIN, pub.pk, vkey, sizeof(vkey)),
                     IG_OK);
    assert_int_equal(
        audit_witness_key_format(ORIGIN, pub.pk, wvkey, sizeof(wvkey)), IG_OK);
    ig_signing_key_public(o, &pub);
    assert_int_equal(audit_verifier_format("someone.else/log", pub.pk,
                                           other_vkey, sizeof(other_vkey)),
                     IG_OK);
    k2 = au_key_new();
    ig_signing_key_public(k2, &pub);
    assert_int_equal(
        audit_verifier_format(ORIGIN, pub.pk, vkey2, sizeof(vkey2)), IG_OK);
    ig_signing_key_free(k);
    ig_signing_key_free(o);
    ig_signing_key_free(k2);
    return 0;
}

static int
teardown(void **state)
{
    char p[128];
    (void)state;

    (void)snprintf(p, sizeof(p), "rm -rf '%s'", dir);
    assert_int_equal(system(p), 0);
    return 0;
}

static void
write_file(const char *name, const char *text)
{
    char p[128];
    FILE *fp;

    (void)snprintf(p, sizeof(p), "%s/%s", dir, name);
    fp = fopen(p, "w");
    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);
}

/* Load text as dir/w.conf: IG_OK, or the error must hold needle. */
static struct witness_config *
load(const char *text, const char *needle)
{
    struct witness_config *c = NULL;
    struct ig_err err;
    char p[128];
    enum ig_status st;

    write_file("w.conf", text);
    (void)snprintf(p, sizeof(p), "%s/w.conf", dir);
    ig_err_clear(&err);
    st = witness_config_load(p, &c, &err);
    if (needle == NULL) {
        if (st != IG_OK)
            fail_msg("refused: %s", err.msg);
        return c;
    }
    assert_int_not_equal(st, IG_OK);
    assert_null(c);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("error \"%s\" does not say \"%s\"", err.msg, needle);
    return NULL;
}

#define HEAD                                                                   \
    "[witness]\nname = w.test/w1\nkey = keys/w.key\ndatabase = state.db\n"

static void
test_good(void **state)
{
    struct witness_config *c;
    char text[2048], p[128];
    (void)state;

    write_file("log2.vkey", vkey); /* the same key, another origin below */
    (void)snprintf(text, sizeof(text),
                   HEAD "listen = 127.0.0.1:0\nrate = 5\n\n[limits]\n"
                        "max_connections = 100\nrequest_timeout_ms = 2000\n"
                        "\n[log %s]\nkey = %s\n",
                   ORIGIN, vkey);
    c = load(text, NULL);
    (void)snprintf(p, sizeof(p), "%s/keys/w.key", dir);
    assert_string_equal(c->key_path, p);
    (void)snprintf(p, sizeof(p), "%s/state.db", dir);
    assert_string_equal(c->database, p);
    assert_int_equal(c->rate, 5);
    assert_int_equal(c->listen_port, 0);
    assert_int_equal(c->max_connections, 100);
    assert_int_equal(c->max_per_address, 64);
    assert_int_equal(c->request_timeout_ms, 2000);
    assert_int_equal(c->nlogs, 1);
    assert_vkey(&c->logs[0], 0, vkey);
    assert_non_null(witness_config_log(c, ORIGIN, strlen(ORIGIN)));
    assert_null(witness_config_log(c, ORIGIN, strlen(ORIGIN) - 1));
    assert_non_null(witness_config_log_by_hash(c, c->logs[0].origin_hex, 64));
    witness_config_free(c);

    /* the vkey in a file, relative to the config */
    (void)snprintf(text, sizeof(text), HEAD "\n[log %s]\nkey = log2.vkey\n",
                   ORIGIN);
    c = load(text, NULL);
    assert_vkey(&c->logs[0], 0, vkey);
    assert_int_equal(c->nlogs, 1);
    assert_int_equal(c->logs[0].nkeys, 1);
    assert_int_equal(c->rate, WITNESS_RATE_DEFAULT);
    witness_config_free(c);

    /* two keys while the log rotates: inline and from a file */
    write_file("new.vkey", vkey2);
    (void)snprintf(text, sizeof(text), HEAD "\n[log %s]\nkey = %s, new.vkey\n",
                   ORIGIN, vkey);
    c = load(text, NULL);
    assert_int_equal(c->logs[0].nkeys, 2);
    assert_vkey(&c->logs[0], 0, vkey);
    assert_vkey(&c->logs[0], 1, vkey2);
    witness_config_free(c);
}

static void
test_refused(void **state)
{
    char text[2048];
    (void)state;

    (void)load(HEAD, "w.conf: no [log ORIGIN] section");
    (void)load("[log x.example/l]\nkey = a\n", "w.conf:2:");
    (void)snprintf(text, sizeof(text), "[log %s]\nkey = %s\n", ORIGIN, vkey);
    (void)load(text, "no [witness] section");
    (void)snprintf(text, sizeof(text), HEAD "[log %s]\nkey = %s\n", ORIGIN,
                   other_vkey);
    (void)load(text, "w.conf:6: the key is named someone.else/log");
    (void)snprintf(text, sizeof(text), HEAD "[log %s]\nkey = %s\n", ORIGIN,
                   wvkey); /* type 04: a witness key, not a log's */
    (void)load(text, "w.conf:6: key:");
    (void)snprintf(text, sizeof(text), HEAD "[log %s]\nkey = %.*sA\n", ORIGIN,
                   (int)strlen(vkey) - 1, vkey);
    (void)load(text, "w.conf:6: key:");
    (void)snprintf(text, sizeof(text), HEAD "[log %s]\nkey = missing.vkey\n",
                   ORIGIN);
    (void)load(text, "w.conf:6: key must be the log's vkey");
    (void)snprintf(text, sizeof(text),
                   HEAD "[log %s]\nkey = %s\n[log %s]\nkey = %s\n", ORIGIN,
                   vkey, ORIGIN, vkey);
    (void)load(text, "w.conf:7: [log " ORIGIN "] appears twice");
    (void)snprintf(text, sizeof(text), HEAD "[log %s]\n", ORIGIN);
    (void)load(text, "w.conf:5: [log " ORIGIN "] needs key");
    (void)load(HEAD "[log]\nkey = x\n", "w.conf:5: [log ORIGIN] needs");
    (void)snprintf(text, sizeof(text), HEAD "[log %s]\nkey = %s %s\n", ORIGIN,
                   vkey, vkey);
    (void)load(text, "w.conf:6: key: the same key");
    (void)snprintf(text, sizeof(text), HEAD "[log %s]\nkey = %s %s\n", ORIGIN,
                   vkey, other_vkey);
    (void)load(text, "w.conf:6: the key is named someone.else/log");
    (void)load(HEAD "[log a.example/l]\nkey = , ,\n",
               "w.conf:6: key must not be empty");
    (void)load(HEAD "[log bad name]\nkey = x\n", "w.conf:5:");
    (void)load(HEAD "rate = 0\n", "w.conf:5: rate must be");
    (void)load(HEAD "rate = 10x\n", "w.conf:5: rate must be");
    (void)load(HEAD "name = again\n", "w.conf:5: duplicate key name");
    (void)load(HEAD "colour = blue\n", "w.conf:5: unknown key colour");
    (void)load(HEAD "name2 = x\n", "unknown key");
    (void)load(HEAD "[witness]\n", "w.conf:5: [witness] appears twice");
    (void)load(HEAD "[extra]\n", "w.conf:5: unknown section [extra]");
    (void)load(HEAD "[limits x]\n", "w.conf:5: [limits] takes no id");
    (void)load(HEAD "[limits]\nmax_connections = 1\n",
               "w.conf:6: max_connections must be");
    (void)load("[witness]\nname = a b\n", "w.conf:2: name must be");
    (void)load("[witness]\nname = w\ndatabase = d\n[log a/b]\nkey = x\n",
               "w.conf:5:");
    (void)load("name = w\n", "w.conf:1: name outside a section");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_refused),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
