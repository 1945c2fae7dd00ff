/*
 * test_exec_config.c - the executor's config file: every key, the
 * defaults, paths relative to the file, and each mistake refused with the
 * file and line named. The sandbox user in particular: self, a name, a
 * UID:GID, never root.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_config.h"

static char dir[] = "/tmp/test_exec_config_XXXXXX";
static char path[64];

static enum ig_status
load(const char *text, struct exec_config **c, struct ig_err *err)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    return exec_config_load(path, c, err);
}

#define BASE                                                                   \
    "id = e1\npdp_url = http://127.0.0.1:8700\npdp_public_keys = k.pub\n"      \
    "registry = r.json\nsecrets = s.enc\n"

static void
test_defaults_and_relative_paths(void **state)
{
    struct exec_config *c = NULL;
    struct ig_err err;
    char want[128];

    (void)state;
    assert_int_equal(load(BASE, &c, &err), IG_OK);
    assert_string_equal(c->listen_host, "127.0.0.1");
    assert_int_equal(c->listen_port, 8701);
    (void)snprintf(want, sizeof(want), "%s/spool", dir);
    assert_string_equal(c->spool_dir, want);
    (void)snprintf(want, sizeof(want), "%s/work", dir);
    assert_string_equal(c->work_dir, want);
    (void)snprintf(want, sizeof(want), "%s/r.json", dir);
    assert_string_equal(c->registry, want);
    /* The sandbox user defaults to nobody, never to the executor's own. */
    assert_false(c->sandbox_self);
    assert_true(c->sandbox_uid != 0 && c->sandbox_gid != 0);
    assert_int_equal(c->max_concurrent, 32);
    assert_int_equal(c->threads, 2);
    assert_int_equal(c->max_connections, 4096);
    assert_int_equal(c->max_per_address, 2048);
    assert_int_equal(c->request_timeout_ms, 10000);
    assert_int_equal(c->outcome_retry_ms, 500);
    assert_int_equal(c->mcp_wait_ms, IG_EXEC_MCP_WAIT_MS);
    assert_int_equal(c->mcp_max_sessions, IG_EXEC_MCP_SESSIONS);
    assert_null(c->mcp_approval_url);
    assert_int_equal(c->nprotect, 0);
    exec_config_free(c);
}

static void
test_every_key(void **state)
{
    struct exec_config *c = NULL;
    struct ig_err err;

    (void)state;
    assert_int_equal(load(BASE "listen = 127.0.0.1:9999\nspool_dir = /srv/sp\n"
                               "work_dir = w\nsandbox_user = 4242:4343\n"
                               "protect = /var/lib/intentgate, /etc/ig\n"
                               "protect = /srv/x\nthreads = 4\n"
                               "max_connections = 100\n"
                               "max_connections_per_address = 10\n"
                               "request_timeout_ms = 1500\n"
                               "outcome_retry_ms = 50\nmax_concurrent = 8\n",
                          &c, &err),
                     IG_OK);
    assert_int_equal(c->listen_port, 9999);
    assert_string_equal(c->spool_dir, "/srv/sp");
    assert_false(c->sandbox_self);
    assert_int_equal(c->sandbox_uid, 4242);
    assert_int_equal(c->sandbox_gid, 4343);
    assert_int_equal(c->nprotect, 3);
    assert_string_equal(c->protect[0], "/var/lib/intentgate");
    assert_string_equal(c->protect[1], "/etc/ig");
    assert_string_equal(c->protect[2], "/srv/x");
    assert_int_equal(c->threads, 4);
    assert_int_equal(c->max_connections, 100);
    assert_int_equal(c->max_per_address, 10);
    assert_int_equal(c->request_timeout_ms, 1500);
    assert_int_equal(c->outcome_retry_ms, 50);
    exec_config_free(c);
    assert_int_equal(load(BASE "sandbox_user = self\n", &c, &err), IG_OK);
    assert_true(c->sandbox_self);
    exec_config_free(c);
    assert_int_equal(load(BASE "sandbox_user = nobody\n", &c, &err), IG_OK);
    assert_false(c->sandbox_self);
    assert_int_not_equal(c->sandbox_uid, 0);
    exec_config_free(c);
}

static void
test_mistakes_name_their_line(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {BASE "sandbox_user = root\n", ":6: bad value for sandbox_user"},
        {BASE "sandbox_user = 0:0\n", ":6: bad value for sandbox_user"},
        {BASE "sandbox_user = 0:5\n", "bad value for sandbox_user"},
        {BASE "sandbox_user = 5:0\n", "bad value for sandbox_user"},
        {BASE "sandbox_user = 12\n", "bad value for sandbox_user"},
        {BASE "sandbox_user = 12:x\n", "bad value for sandbox_user"},
        {BASE "sandbox_user = no-such-user-ig\n", "bad value for sandbox_user"},
        {BASE "protect = relative/path\n", ":6: bad value for protect"},
        {BASE "threads = 0\n", "bad value for threads"},
        {BASE "max_connections = 5\n", "bad value for max_connections"},
        {BASE "max_connections_per_address = 0\n",
         "bad value for max_connections_per_address"},
        {BASE "request_timeout_ms = 10\n", "bad value for request_timeout_ms"},
        {BASE "outcome_retry_ms = 1\n", "bad value for outcome_retry_ms"},
        {BASE "mcp_escalation_wait_ms = -1\n",
         "bad value for mcp_escalation_wait_ms"},
        {BASE "mcp_escalation_wait_ms = 3600001\n",
         "bad value for mcp_escalation_wait_ms"},
        {BASE "mcp_max_sessions = 0\n", "bad value for mcp_max_sessions"},
        {BASE "mcp_pins = a\nmcp_pins = b\n", "duplicate key mcp_pins"},
        {BASE "spool_dir =\n", "bad value for spool_dir"},
        {BASE "colour = blue\n", ":6: unknown key colour"},
        {BASE "threads = 2\nthreads = 3\n", ":7: duplicate key threads"},
        {BASE "id = e2\n", ":6: duplicate key id"},
        {BASE "[server]\n", ":6: unexpected section header"},
        {BASE "no equals sign\n", ":6: expected key = value"},
        {BASE "listen = \x7f\n", ":6: control character 0x7f"},
        {"id = e1\n", "are required"},
        {NULL, NULL}};
    struct exec_config *c = NULL;
    struct ig_err err;
    size_t i;

    (void)state;
    for (i = 0; cases[i].text != NULL; i++) {
        memset(&err, 0, sizeof(err));
        assert_int_not_equal(load(cases[i].text, &c, &err), IG_OK);
        assert_null(c);
        if (strstr(err.msg, cases[i].want) == NULL)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg,
                     cases[i].want);
    }
}

static int
setup(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dir));
    (void)snprintf(path, sizeof(path), "%s/executor.conf", dir);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    (void)unlink(path);
    (void)rmdir(dir);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_relative_paths),
        cmocka_unit_test(test_every_key),
        cmocka_unit_test(test_mistakes_name_their_line),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
