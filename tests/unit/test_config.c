/*
 * test_config.c - the PDP configuration file: a full valid file, defaults,
 * relative paths, token authentication, executor routing, the audit
 * anchor's default, every key landing in its own field, and every kind
 * of mistake (the INI reader's included) refused with the file and line
 * named.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_limits.h"
#include "pdp_addr.h"
#include "pdp_config.h"

#define HASH_A                                                                 \
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define HASH_B                                                                 \
    "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
#define HASH_C                                                                 \
    "fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13"

static char dir[64];

static int
setup(void **state)
{
    (void)state;
    (void)snprintf(dir, sizeof(dir), "/tmp/ig-config-XXXXXX");
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

/* Write len bytes of text to dir/c.conf and load it. */
static enum ig_status
load_bytes(const char *text, size_t len, struct pdp_config **c,
           struct ig_err *err)
{
    char path[128];
    FILE *f;

    (void)snprintf(path, sizeof(path), "%s/c.conf", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return pdp_config_load(path, c, err);
}

static enum ig_status
load(const char *text, struct pdp_config **c, struct ig_err *err)
{
    return load_bytes(text, strlen(text), c, err);
}

#define BASE                                                                   \
    "database = db.sqlite\nsigning_key = /etc/ig/signing.key\n"                \
    "policy_dir = policies\n"

static void
test_full_file(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    char want[128];
    (void)state;

    assert_int_equal(load("# comment\n" BASE "listen = 127.0.0.1:9000\n"
                          "intent_ttl = 30   # seconds\nthreads = 4\t# n\n"
                          "synchronous = normal\n"
                          "[policy]   # for policies\nquota_per_minute = 10\n"
                          "name = x y\nlabel = a#b\n"
                          "[agent bot-1]\ntenant = acme\n"
                          "token_sha256 = " HASH_A "\n"
                          "[executor ex-1]\ntoken_sha256 = " HASH_B "\n"
                          "actions = payments., payments.refund.big ,shell.\n"
                          "  [admin ops]  \ntoken_sha256 = " HASH_C "\n",
                          &c, &err),
                     IG_OK);
    assert_string_equal(c->listen_host, "127.0.0.1");
    assert_int_equal(c->listen_port, 9000);
    assert_int_equal(c->intent_ttl, 30);
    assert_int_equal(c->intent_ttl_max, 300); /* default */
    assert_int_equal(c->threads, 4);
    assert_int_equal(c->synchronous_full, 0);
    (void)snprintf(want, sizeof(want), "%s/db.sqlite", dir);
    assert_string_equal(c->database, want);
    assert_string_equal(c->signing_key, "/etc/ig/signing.key");
    assert_true(json_real_value(json_object_get(c->policy_settings,
                                                "quota_per_minute")) == 10);
    assert_string_equal(
        json_string_value(json_object_get(c->policy_settings, "name")), "x y");
    /* '#' inside a word is data; only " #" starts a comment. */
    assert_string_equal(
        json_string_value(json_object_get(c->policy_settings, "label")), "a#b");
    assert_int_equal(c->nprincipals, 3);
    /* "test" hashes to HASH_A: the agent. */
    assert_string_equal(pdp_config_authenticate(c, "test", 4)->id, "bot-1");
    assert_null(pdp_config_authenticate(c, "tesu", 4));
    assert_null(pdp_config_authenticate(c, "", 0));
    assert_string_equal(pdp_config_executor_for(c, "payments.refund")->id,
                        "ex-1");
    assert_null(pdp_config_executor_for(c, "git.push"));
    pdp_config_free(c);
}

static void
expect_error(const char *text, const char *line_and_msg)
{
    struct pdp_config *c = NULL;
    struct ig_err err;

    assert_int_equal(load(text, &c, &err), IG_ERR_INVALID);
    assert_null(c);
    if (strstr(err.msg, line_and_msg) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, line_and_msg);
}

static void
test_mistakes_name_the_line(void **state)
{
    (void)state;
    expect_error(BASE "bogus = 1\n", "c.conf:4: unknown key bogus");
    expect_error(BASE "database = x\n", ":4: duplicate key database");
    expect_error(BASE "no equals sign\n", ":4: expected key = value");
    expect_error(BASE "intent_ttl = 0\n", ":4: intent_ttl must be");
    expect_error(BASE "intent_ttl = 12x\n", ":4: intent_ttl must be");
    expect_error(BASE "listen = nowhere\n", ":4: listen must be HOST:PORT");
    expect_error(BASE "synchronous = maybe\n", ":4: synchronous must be");
    expect_error(BASE "[planet earth]\n", ":4: unknown section [planet]");
    expect_error(BASE "[agent]\n", ":4: [agent] needs an id");
    expect_error(BASE "[agent a b]\n", ":4: [agent] needs an id");
    expect_error(BASE "[agent a]\ntenant = t\n", ":4: a needs token_sha256");
    expect_error(BASE "[agent a]\ntoken_sha256 = " HASH_A "\n",
                 ":4: agent a needs a tenant");
    expect_error(BASE "[agent a]\ntenant = t\ntoken_sha256 = abc\n",
                 ":6: token_sha256 must be 64 hex digits");
    expect_error(BASE "[executor e]\ntoken_sha256 = " HASH_A "\n",
                 ":4: executor e needs actions");
    expect_error(BASE "[admin a]\ntoken_sha256 = " HASH_A "\ntenant = t\n",
                 ":6: unknown key tenant in [admin]");
    expect_error(BASE "[agent a]\ntenant = t\ntoken_sha256 = " HASH_A
                      "\n[admin b]\ntoken_sha256 = " HASH_A "\n",
                 "a and b share a token");
    expect_error(BASE "[admin a]\ntoken_sha256 = " HASH_A
                      "\n[admin a]\ntoken_sha256 = " HASH_B "\n",
                 "a is configured twice");
    expect_error("database = x\npolicy_dir = p\n", "missing signing_key");
    expect_error(BASE "intent_ttl = 400\n",
                 "intent_ttl is larger than intent_ttl_max");
    expect_error(BASE "[policy]\na = 1\na = 2\n", ":6: duplicate key a");
    expect_error(BASE "[policy x]\n", ":4: [policy] takes no id");
    expect_error(BASE "[slack]\n[slack]\n", ":5: [slack] appears twice");
    expect_error(BASE "[agent a]\ntenant = t\ntenant = u\n",
                 ":6: duplicate key tenant");
    expect_error(BASE "[approver a]\ngroups = g\nbogus = 1\n",
                 ":6: unknown key bogus in [approver]");
    expect_error(BASE "[audit]\nbogus = 1\n",
                 ":5: unknown key bogus in [audit]");
    expect_error(BASE "[agent a]\n[]\n", ":5: empty section header");
    expect_error(BASE "[agent a] b\n", ":4: malformed section header");
}

/* The INI reader's refusals reach the user with the file and line. */
static void
test_bad_bytes_name_the_line(void **state)
{
    static const char nul[] = BASE "issuer = a\0b\n";
    struct pdp_config *c = NULL;
    struct ig_err err;
    char *text;
    size_t n = strlen(BASE) + IG_INI_LINE_MAX + 2;
    (void)state;

    assert_int_equal(load_bytes(nul, sizeof(nul) - 1, &c, &err),
                     IG_ERR_INVALID);
    assert_null(c);
    assert_non_null(strstr(err.msg, "c.conf:4: NUL byte"));
    expect_error(BASE "issuer = \x01\n", ":4: control character 0x01");
    /* A line one byte over the limit is refused, never cut short. */
    text = malloc(n);
    assert_non_null(text);
    memcpy(text, BASE, strlen(BASE));
    memcpy(text + strlen(BASE), "issuer = ", 9);
    memset(text + strlen(BASE) + 9, 'x', IG_INI_LINE_MAX + 1 - 9);
    text[n - 1] = '\n';
    assert_int_equal(load_bytes(text, n, &c, &err), IG_ERR_INVALID);
    assert_null(c);
    assert_non_null(strstr(err.msg, "c.conf:4: line longer than"));
    free(text);
}

/* Keys are dispatched by name: each lands in its own field, whatever the
   order of the tables or of the file. */
static void
test_every_key_lands_in_its_field(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    (void)state;

    assert_int_equal(load(BASE "[approvals]\nsecure_cookies = true\n"
                               "login_window = 77\nlogin_max_failures = 9\n"
                               "session_max = 7000\nsession_idle = 600\n"
                               "quorum = 3\n"
                               "[audit]\ncheckpoint_interval = 11\n"
                               "checkpoint_every = 22\n"
                               "[limits]\nmax_write_queue = 99\n"
                               "max_waiters_per_principal = 5\n"
                               "max_waiters = 7\nrequest_timeout_ms = 1234\n"
                               "max_connections_per_address = 20\n"
                               "max_connections = 40\n",
                          &c, &err),
                     IG_OK);
    assert_int_equal(c->approval_quorum, 3);
    assert_int_equal(c->session_idle, 600);
    assert_int_equal(c->session_max, 7000);
    assert_int_equal(c->login_max_failures, 9);
    assert_int_equal(c->login_window, 77);
    assert_int_equal(c->secure_cookies, 1);
    assert_int_equal(c->checkpoint_every, 22);
    assert_int_equal(c->checkpoint_interval, 11);
    assert_int_equal(c->max_connections, 40);
    assert_int_equal(c->max_per_address, 20);
    assert_int_equal(c->request_timeout_ms, 1234);
    assert_int_equal(c->max_waiters, 7);
    assert_int_equal(c->max_waiters_per_principal, 5);
    assert_int_equal(c->max_write_queue, 99);
    pdp_config_free(c);
    c = NULL;
    assert_int_equal(load(BASE "issuer = me\nmax_body_bytes = 2048\n"
                               "approval_ttl = 40\ngrant_ttl = 20\n"
                               "intent_ttl_max = 50\nintent_ttl = 45\n"
                               "threads = 3\n"
                               "public_keys = a.pub, /b.pub\n",
                          &c, &err),
                     IG_OK);
    assert_string_equal(c->issuer, "me");
    assert_int_equal(c->max_body_bytes, 2048);
    assert_int_equal(c->intent_ttl, 45);
    assert_int_equal(c->intent_ttl_max, 50);
    assert_int_equal(c->grant_ttl, 20);
    assert_int_equal(c->approval_ttl, 40);
    assert_int_equal(c->threads, 3);
    assert_int_equal(c->npublic_keys, 2);
    assert_string_equal(c->public_keys[1], "/b.pub");
    pdp_config_free(c);
}

/* [limits]: defaults from ig_limits.h, values, and mistakes. */
static void
test_limits_section(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    (void)state;

    assert_int_equal(load(BASE, &c, &err), IG_OK);
    assert_int_equal(c->max_connections, IG_PDP_MAX_CONNECTIONS);
    assert_int_equal(c->max_per_address, IG_PDP_MAX_PER_ADDRESS);
    assert_int_equal(c->request_timeout_ms, IG_PDP_REQUEST_TIMEOUT_MS);
    assert_int_equal(c->max_waiters, IG_PDP_MAX_WAITERS);
    assert_int_equal(c->max_waiters_per_principal,
                     IG_PDP_MAX_WAITERS_PER_PRINCIPAL);
    assert_int_equal(c->max_write_queue, IG_PDP_WRITE_QUEUE);
    pdp_config_free(c);
    c = NULL;
    assert_int_equal(load(BASE "[limits]\nmax_connections = 100\n"
                               "max_connections_per_address = 500\n"
                               "request_timeout_ms = 2500\nmax_waiters = 0\n"
                               "max_waiters_per_principal = 3\n"
                               "max_write_queue = 64\n",
                          &c, &err),
                     IG_OK);
    assert_int_equal(c->max_connections, 100);
    assert_int_equal(c->max_per_address, 100); /* never above the total */
    assert_int_equal(c->request_timeout_ms, 2500);
    assert_int_equal(c->max_waiters, 0);
    assert_int_equal(c->max_waiters_per_principal, 3);
    assert_int_equal(c->max_write_queue, 64);
    pdp_config_free(c);
    expect_error(BASE "[limits]\nmax_connections = 8\n",
                 ":5: max_connections must be a whole number from 16");
    expect_error(BASE "[limits]\nrequest_timeout_ms = 50\n",
                 ":5: request_timeout_ms must be");
    expect_error(BASE "[limits]\nmax_write_queue = -1\n",
                 ":5: max_write_queue must be");
    expect_error(BASE "[limits]\nslots = 3\n", ":5: unknown key slots in");
    expect_error(BASE "[limits]\nmax_waiters = 1\nmax_waiters = 2\n",
                 ":6: duplicate key max_waiters");
    expect_error(BASE "[limits x]\n", ":4: [limits] takes no id");
    expect_error(BASE "[limits]\n[limits]\n", ":5: [limits] appears twice");
}

#define PWHASH                                                                 \
    "$argon2id$v=19$m=65536,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNo"

/* The escalation sections: every mistake names its line. */
static void
test_approval_sections(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    (void)state;

    assert_int_equal(load(BASE "[approvals]\nquorum = 2   # two people\n"
                               "[approver alice]\ngroups = finance, dba\n"
                               "password_hash = " PWHASH "\n"
                               "slack_user = U1\n",
                          &c, &err),
                     IG_OK);
    assert_int_equal(c->approval_quorum, 2);
    assert_int_equal(c->napprovers, 1);
    assert_string_equal(c->approvers[0].name, "alice"); /* default: id */
    assert_true(pdp_approver_in_group(pdp_config_approver(c, "alice"), "dba"));
    assert_non_null(pdp_config_approver_by_slack(c, "U1"));
    assert_null(pdp_config_approver_by_slack(c, "U2"));
    pdp_config_free(c);

    expect_error(BASE "[approvals]\nquorum = 0\n",
                 ":5: quorum must be a whole number from 1 to 16");
    expect_error(BASE "[approvals]\nbogus = 1\n",
                 ":5: unknown key bogus in [approvals]");
    expect_error(BASE "[approvals]\n[approvals]\n", ":5: [approvals] appears");
    expect_error(BASE "[approvals]\nsecure_cookies = yes\n",
                 ":5: secure_cookies must be true or false");
    expect_error(BASE "[approvals]\nsession_idle = 900\nsession_max = 600\n",
                 "session_idle is longer than session_max");
    expect_error(BASE "[approver a]\npassword_hash = " PWHASH "\n",
                 ":4: approver a needs groups");
    expect_error(BASE "[approver a]\ngroups = g\n",
                 ":4: approver a needs password_hash");
    expect_error(BASE "[approver a]\ngroups = g\npassword_hash = secret\n",
                 ":6: password_hash must be an argon2id hash");
    expect_error(BASE "[approver a]\ngroups = -g\n", ":5: group -g");
    expect_error(BASE "[approver a]\ngroups = g\ngroups = h\n",
                 ":6: duplicate key groups");
    expect_error(BASE "[approver a]\ngroups = g\npassword_hash = " PWHASH
                      "\n[approver a]\ngroups = g\npassword_hash = " PWHASH
                      "\n",
                 "approver a is configured twice");
    expect_error(BASE "[slack]\nchannel = C1\n",
                 "[slack] needs channel, bot_token_file and "
                 "signing_secret_file");
    expect_error(BASE "[slack]\napi_url = http://example.com\n",
                 ":5: api_url must be https://");
}

/* [approver ID] agents = (the agent principals this person runs: they may
   not approve those agents' intents) and [slack] ui_url = (where Slack
   messages link the web page). */
static void
test_approver_agents_and_ui_url(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    const struct pdp_approver *a;
    (void)state;

    assert_int_equal(load(BASE "[approver alice]\ngroups = finance\n"
                               "password_hash = " PWHASH "\n"
                               "agents = bot-1, bot-2\n"
                               "[approver bob]\ngroups = finance\n"
                               "password_hash = " PWHASH "\n"
                               "[agent bot-1]\ntenant = t\n"
                               "token_sha256 = " HASH_A "\n"
                               "[agent bot-2]\ntenant = t\n"
                               "token_sha256 = " HASH_B "\n"
                               "[slack]\nchannel = C1\n"
                               "bot_token_file = t\nsigning_secret_file = s\n"
                               "ui_url = https://pdp.example.com/\n",
                          &c, &err),
                     IG_OK);
    a = pdp_config_approver(c, "alice");
    assert_int_equal(a->nagents, 2);
    assert_string_equal(a->agents[1], "bot-2");
    assert_true(pdp_approver_runs(a, "bot-1"));
    assert_false(pdp_approver_runs(a, "bot-3"));
    assert_false(pdp_approver_runs(pdp_config_approver(c, "bob"), "bot-1"));
    assert_false(pdp_approver_runs(NULL, "bot-1"));
    /* The trailing slash is dropped: links append /ui/approvals/ID. */
    assert_string_equal(c->slack_ui_url, "https://pdp.example.com");
    pdp_config_free(c);

    /* Without ui_url there is none (messages name the path). */
    assert_int_equal(load(BASE "[slack]\nchannel = C1\n"
                               "bot_token_file = t\nsigning_secret_file = s\n",
                          &c, &err),
                     IG_OK);
    assert_null(c->slack_ui_url);
    pdp_config_free(c);

    /* A name that is no agent is a typo that would weaken the rule. */
    expect_error(BASE "[approver a]\ngroups = g\npassword_hash = " PWHASH
                      "\nagents = bot-9\n",
                 "approver a: agents names bot-9, which is no [agent]");
    expect_error(BASE "[approver a]\ngroups = g\nagents = x\nagents = y\n",
                 ":7: duplicate key agents");
    expect_error(BASE "[approver a]\ngroups = g\nagents = b@d!\n",
                 ":6: agents: b@d! is not a principal id");
    expect_error(BASE "[slack]\nui_url = http://pdp.example.com\n",
                 ":5: ui_url must be https://");
    expect_error(BASE "[slack]\nui_url = https://pdp.example.com/|x>\n",
                 ":5: ui_url must be https://");
    expect_error(BASE "[slack]\nui_url = https://pdp.example.com/ui?x=1\n",
                 ":5: ui_url must be https://");
}

/* trusted_proxies and refusal_log_interval (issue 12): defaults, a list
   of blocks, and each mistake named. */
static void
test_refusals_and_proxies(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    struct pdp_addr a;
    (void)state;

    assert_int_equal(load(BASE, &c, &err), IG_OK);
    assert_int_equal(c->refusal_log_interval, IG_REFUSAL_LOG_INTERVAL_DEFAULT);
    assert_int_equal(c->ntrusted_proxies, 0);
    pdp_config_free(c);

    assert_int_equal(load(BASE "refusal_log_interval = 5\n"
                               "trusted_proxies = 10.0.0.0/8, 192.0.2.1 ,"
                               "2001:db8::/32\n",
                          &c, &err),
                     IG_OK);
    assert_int_equal(c->refusal_log_interval, 5);
    assert_int_equal(c->ntrusted_proxies, 3);
    assert_int_equal(pdp_addr_parse("10.1.2.3", 8, &a), 0);
    assert_true(pdp_nets_contain(c->trusted_proxies, c->ntrusted_proxies, &a));
    assert_int_equal(pdp_addr_parse("192.0.2.2", 9, &a), 0);
    assert_false(pdp_nets_contain(c->trusted_proxies, c->ntrusted_proxies, &a));
    pdp_config_free(c);

    expect_error(BASE "refusal_log_interval = 0\n",
                 ":4: refusal_log_interval must be a whole number from 1 to "
                 "86400");
    expect_error(BASE "trusted_proxies = 10.0.0.1/8\n",
                 ":4: trusted_proxies: 10.0.0.1/8: the address has bits set "
                 "past the prefix length");
    expect_error(BASE "trusted_proxies = proxy.internal\n",
                 ":4: trusted_proxies: proxy.internal: not an IPv4 or IPv6 "
                 "address");
    expect_error(BASE "trusted_proxies = 10.0.0.0/8\n"
                      "trusted_proxies = 10.0.0.0/8\n",
                 ":5: duplicate key trusted_proxies");
}

/* [audit] anchor: beside the key by default, relative to the file when
   given, never without a key. */
static void
test_audit_anchor(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    char want[160];
    (void)state;

    assert_int_equal(
        load(BASE "[audit]\nkey = /run/cred/audit.key\n", &c, &err), IG_OK);
    assert_string_equal(c->audit_anchor, "/run/cred/audit.key.checkpoint");
    assert_int_equal(c->audit_anchor_adopt, 0);
    pdp_config_free(c);
    assert_int_equal(load(BASE "[audit]\nkey = keys/a.key\n", &c, &err), IG_OK);
    (void)snprintf(want, sizeof(want), "%s/keys/a.key.checkpoint", dir);
    assert_string_equal(c->audit_anchor, want);
    pdp_config_free(c);
    assert_int_equal(
        load(BASE "[audit]\nkey = /k\nanchor = state/cp\n", &c, &err), IG_OK);
    (void)snprintf(want, sizeof(want), "%s/state/cp", dir);
    assert_string_equal(c->audit_anchor, want);
    pdp_config_free(c);
    assert_int_equal(load(BASE "[audit]\nname = x.example/log\n", &c, &err),
                     IG_OK);
    assert_null(c->audit_anchor); /* no key: nothing is signed or anchored */
    pdp_config_free(c);
    assert_int_equal(load(BASE "[audit]\nanchor = /a/cp\n", &c, &err),
                     IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "anchor needs key"));
    assert_int_equal(load(BASE "[audit]\nkey = /k\nanchor =\n", &c, &err),
                     IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "anchor must not be empty"));
    assert_int_equal(
        load(BASE "[audit]\nkey = /k\nanchor = a\nanchor = b\n", &c, &err),
        IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "duplicate key anchor"));
}

static void
test_missing_file(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    (void)state;

    assert_int_equal(pdp_config_load("/nonexistent/ig.conf", &c, &err),
                     IG_ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent/ig.conf"));
}

static void
test_new_token_matches_its_hash(void **state)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    char tok[48], hex[65], text[512];
    (void)state;

    pdp_token_new(tok, hex);
    assert_int_equal(strncmp(tok, "igt_", 4), 0);
    assert_int_equal(strlen(tok), 47);
    (void)snprintf(text, sizeof(text),
                   BASE "[agent a]\ntenant = t\ntoken_sha256 = %s\n", hex);
    assert_int_equal(load(text, &c, &err), IG_OK);
    assert_non_null(pdp_config_authenticate(c, tok, strlen(tok)));
    pdp_config_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_file),
        cmocka_unit_test(test_mistakes_name_the_line),
        cmocka_unit_test(test_bad_bytes_name_the_line),
        cmocka_unit_test(test_every_key_lands_in_its_field),
        cmocka_unit_test(test_limits_section),
        cmocka_unit_test(test_approval_sections),
        cmocka_unit_test(test_approver_agents_and_ui_url),
        cmocka_unit_test(test_refusals_and_proxies),
        cmocka_unit_test(test_audit_anchor),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_new_token_matches_its_hash),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
