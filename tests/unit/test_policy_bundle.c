/*
 * test_policy_bundle.c - the example bundle (policies/bundle/) as the PDP
 * runs it: its own *_test.lua cases under each kind of [policy] settings
 * (none, the project_roots fixture file_test.lua knows, an operator's
 * roots, dev mode's), malformed project_roots refusing the load, and a
 * few intents evaluated from JSON the way the PDP hands them over (a
 * forged context.cwd, a NUL byte in argv).
 */
#include "policy_util.h"

#include <stdio.h>
#include <string.h>

/* The setting file_test.lua recognises and runs its root cases under. */
#define PB_FIXTURE "/home/dev/proj, /srv/app/"

/* Print the FAIL lines of a test run. */
static void
pb_print_failures(const char *out)
{
    const char *p = out, *nl;

    while ((p = strstr(p, "FAIL ")) != NULL) {
        nl = strchr(p, '\n');
        print_message("%.*s\n", nl != NULL ? (int)(nl - p) : (int)strlen(p), p);
        p += 5;
    }
}

/* Run the bundle's tests with settings (JSON text or NULL); all must pass.
 * Returns the output in out. */
static void
pb_run(const char *settings, char *out, size_t outsz)
{
    json_t *s = settings != NULL ? pt_json(settings) : NULL;
    int rc = pt_bundle_test(IG_POLICY_BUNDLE_DIR, s, out, outsz);

    json_decref(s);
    if (rc != 0) {
        pb_print_failures(out);
        fail_msg("example bundle tests with %s: %d failed",
                 settings != NULL ? settings : "no settings", rc);
    }
}

static void
test_example_bundle(void **state)
{
    static char out[131072];

    (void)state;
    pb_run(NULL, out, sizeof(out));
    assert_non_null(strstr(out, "ok   file_test.lua: below the session's "
                                "cwd\n"));
    assert_null(strstr(out, "below the first root"));
    pb_run("{\"project_roots\": \"" PB_FIXTURE "\"}", out, sizeof(out));
    assert_non_null(strstr(out, "ok   file_test.lua: below the first root\n"));
    assert_non_null(strstr(out, "ok   file_test.lua: forged cwd = home\n"));
    assert_null(strstr(out, "below the session's cwd"));
    /* An operator's roots: only the cases that hold under any roots. */
    pb_run("{\"project_roots\": \"/opt/acme/repo\", \"quota_per_minute\": 60}",
           out, sizeof(out));
    assert_non_null(strstr(out, "ok   file_test.lua: relative path\n"));
    assert_null(strstr(out, "below the first root"));
    assert_null(strstr(out, "below the session's cwd"));
    /* Dev mode's settings. */
    pb_run("{\"quota_per_minute\": 6000}", out, sizeof(out));
    pb_run("{\"project_roots\": \"\"}", out, sizeof(out));
}

/* Loading the example bundle with project_roots = value (JSON text) is
 * refused, naming file.lua and the setting. */
static void
pb_roots_refused(const char *value)
{
    char text[512];
    json_t *s;
    struct pol_bundle *b = NULL;
    struct ig_err err;

    (void)snprintf(text, sizeof(text), "{\"project_roots\": %s}", value);
    s = pt_json(text);
    ig_err_clear(&err);
    if (pol_bundle_load(IG_POLICY_BUNDLE_DIR, s, &b, &err) != IG_ERR_INVALID)
        fail_msg("project_roots = %s was accepted", value);
    json_decref(s);
    assert_null(b);
    if (strstr(err.msg, "file.lua") == NULL ||
        strstr(err.msg, "project_roots") == NULL)
        fail_msg("project_roots = %s: unexpected message '%s'", value, err.msg);
}

static void
test_bad_project_roots(void **state)
{
    (void)state;
    pb_roots_refused("\"/\"");
    pb_roots_refused("\"//\"");
    pb_roots_refused("\"home/dev/proj\"");
    pb_roots_refused("\"~/proj\"");
    pb_roots_refused("\"/home/dev/../proj\"");
    pb_roots_refused("\"/home//dev\"");
    pb_roots_refused("\"/home/./dev\"");
    pb_roots_refused("\"/a, /b,\"");
    pb_roots_refused("\"/a,,/b\"");
    pb_roots_refused("\"/a, relative\"");
    pb_roots_refused("\"/a\\n/b\"");
    pb_roots_refused("42");
    pb_roots_refused("true");
    pb_roots_refused("[\"/a\"]");
}

/* Evaluate intent (JSON text) with the example bundle loaded with
 * settings, expecting verdict v and first reason (or NULL). */
static void
pb_expect(const char *settings, const char *intent, enum pol_verdict v,
          const char *reason)
{
    json_t *s = settings != NULL ? pt_json(settings) : NULL;
    struct pol_bundle *b = pt_load(IG_POLICY_BUNDLE_DIR, s);
    struct pt_counter c = {1, 0, "", 0};
    struct pol_engine *e = pt_engine(b, NULL, pt_count, &c);
    struct pol_decision d;

    json_decref(s);
    pt_eval(e, intent, &d);
    pt_expect(&d, v, reason, NULL);
    pol_engine_free(e);
    pol_bundle_unref(b);
}

#define PB_ROOTS "{\"project_roots\": \"" PB_FIXTURE "\"}"
#define PB_WRITE(path, ctx)                                                    \
    "{\"action\":\"file.write\",\"principal\":\"p\",\"resource\":\"" path      \
    "\",\"params\":{},\"context\":" ctx "}"
#define PB_SHELL(argv)                                                         \
    "{\"action\":\"shell.exec\",\"principal\":\"p\",\"resource\":\"h\","       \
    "\"params\":{\"argv\":" argv "},\"context\":{}}"

static void
test_decisions_from_json(void **state)
{
    (void)state;
    /* The agent's cwd decides nothing, with or without roots. */
    pb_expect(PB_ROOTS,
              PB_WRITE("/home/user/.bashrc", "{\"cwd\":\"/home/user\"}"),
              POL_ESCALATE, "PATH_OUTSIDE_PROJECT");
    pb_expect(NULL,
              PB_WRITE("/home/dev/proj/a.c", "{\"cwd\":\"/home/dev/proj\"}"),
              POL_ESCALATE, "PATH_OUTSIDE_PROJECT");
    pb_expect(PB_ROOTS, PB_WRITE("/home/dev/proj/a.c", "{\"cwd\":\"/\"}"),
              POL_ALLOW, NULL);
    pb_expect(PB_ROOTS, PB_WRITE("/srv/app/x", "{}"), POL_ALLOW, NULL);
    pb_expect(PB_ROOTS, PB_WRITE("/home/dev/proj/a\\u0000.c", "{}"), POL_BLOCK,
              "INVALID_PARAMS");
    /* A NUL survives JSON to Lua: never truncated into something allowed. */
    pb_expect(NULL, PB_SHELL("[\"cat\", \"x\\u0000/etc/shadow\"]"), POL_BLOCK,
              "INVALID_PARAMS");
    pb_expect(NULL, PB_SHELL("[\"cat\\u0000\", \"x\"]"), POL_BLOCK,
              "INVALID_PARAMS");
    pb_expect(NULL, PB_SHELL("[\"cat\", \"notes.txt\"]"), POL_ALLOW, NULL);
    pb_expect(NULL, PB_SHELL("[\"cat\", \"../../secrets.key\"]"), POL_ESCALATE,
              "PATH_OUTSIDE_SCRATCH");
    pb_expect(NULL, PB_SHELL("[\"git\", \"status\"]"), POL_ESCALATE,
              "COMMAND_NOT_ALLOWLISTED");
    pb_expect(NULL, PB_SHELL("[\"wc\", \"--files0-from=x\"]"), POL_ESCALATE,
              "ARGUMENT_NOT_ALLOWED");
}

int
pt_run_bundle_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_bundle),
        cmocka_unit_test(test_bad_project_roots),
        cmocka_unit_test(test_decisions_from_json),
    };

    return cmocka_run_group_tests_name("example bundle", tests, NULL, NULL);
}
