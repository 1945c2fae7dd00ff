/*
 * test_policy.c - the policy engine's contract (policies/pol.h): loading
 * and its errors, the revision, combining verdicts, verdict validation,
 * count(), config and the bundle test runner. main() also runs the
 * sandbox, helper and example-bundle groups (test_policy_sandbox.c,
 * test_policy_helpers.c, test_policy_bundle.c).
 */
#include "policy_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_hash.h"

static void
test_verdict_names(void **state)
{
    struct pol_decision d;

    (void)state;
    memset(&d, 0, sizeof(d));
    assert_int_equal(d.verdict, POL_BLOCK);
    assert_string_equal(pol_verdict_name(POL_ALLOW), "ALLOW");
    assert_string_equal(pol_verdict_name(POL_ESCALATE), "ESCALATE");
    assert_string_equal(pol_verdict_name(POL_BLOCK), "BLOCK");
}

/* Load dir and expect failure st with text in the message and line. */
static void
pt_load_fails(const char *const *files, enum ig_status st, const char *text,
              int line)
{
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = NULL;
    struct ig_err err;

    ig_err_clear(&err);
    assert_int_equal(pol_bundle_load(dir, NULL, &b, &err), st);
    assert_null(b);
    if (strstr(err.msg, text) == NULL)
        fail_msg("expected '%s' in '%s'", text, err.msg);
    assert_int_equal(err.line, line);
    pt_rmdir(dir);
}

static void
test_load_errors(void **state)
{
    const char *syntax[] = {"a.lua", "return function(i) return ALLOW end",
                            "p.lua", "return function(i)\n  if then\nend\n",
                            NULL};
    const char *nofn[] = {"p.lua", "return 42\n", NULL};
    const char *cfn[] = {"p.lua", "return tostring\n", NULL};
    const char *top[] = {"p.lua", "local x = nil\nlocal y = x.field\n", NULL};
    const char *loop[] = {"p.lua", "while true do end\n", NULL};
    const char *global[] = {"p.lua", "helper = 1\nreturn function() end\n",
                            NULL};
    const char *bytecode[] = {"p.lua", "\x1bLua\x54\x00 not text", NULL};
    const char *count[] = {"p.lua", "count('k', 60) return function() end",
                           NULL};
    const char *badname[] = {"bad name.lua", "return function() end", NULL};
    const char *tests_only[] = {"a_test.lua", "return {}", NULL};
    struct pol_bundle *b = NULL;
    json_t *array = json_array();
    struct ig_err err;

    (void)state;
    pt_load_fails(syntax, IG_ERR_INVALID, "p.lua:2: unexpected symbol", 2);
    pt_load_fails(nofn, IG_ERR_INVALID,
                  "p.lua: a policy file must return a function", 0);
    pt_load_fails(cfn, IG_ERR_INVALID, "must return a function", 0);
    pt_load_fails(top, IG_ERR_INVALID, "p.lua:2: attempt to index a nil", 2);
    /* Loading runs under the default budget: 1M instructions or 50 ms,
       whichever is spent first - on a loaded machine it can be the clock.
       Either is a budget failure at line 1. */
    pt_load_fails(loop, IG_ERR_INVALID, "budget exceeded", 1);
    pt_load_fails(global, IG_ERR_INVALID, "p.lua:1: cannot set global", 1);
    pt_load_fails(bytecode, IG_ERR_INVALID, "p.lua: attempt to load a binary",
                  0);
    pt_load_fails(count, IG_ERR_INVALID, "no counter is configured", 1);
    pt_load_fails(badname, IG_ERR_INVALID, "file names", 0);
    pt_load_fails(tests_only, IG_ERR_NOTFOUND, "no policy files", 0);
    ig_err_clear(&err);
    assert_int_equal(pol_bundle_load("/nonexistent/igpol", NULL, &b, &err),
                     IG_ERR_NOTFOUND);
    assert_int_equal(pol_bundle_load(IG_POLICY_BUNDLE_DIR, array, &b, &err),
                     IG_ERR_INVALID);
    json_decref(array);
}

static void
test_load_limits(void **state)
{
    const char *files[] = {"p.lua", "return function() end", NULL};
    char *dir = pt_bundle_dir(files), *big, name[32];
    struct pol_bundle *b = NULL;
    struct ig_err err;
    int i;

    (void)state;
    big = malloc(300 * 1024);
    assert_non_null(big);
    memset(big, ' ', 300 * 1024 - 1);
    big[300 * 1024 - 1] = '\0';
    pt_write(dir, "big.lua", big);
    assert_int_equal(pol_bundle_load(dir, NULL, &b, &err), IG_ERR_LIMIT);
    assert_non_null(strstr(err.msg, "big.lua"));
    pt_write(dir, "big.lua", "return function() end");
    for (i = 0; i < 260; i++) {
        (void)snprintf(name, sizeof(name), "f%03d.lua", i);
        pt_write(dir, name, "return function() end");
    }
    assert_int_equal(pol_bundle_load(dir, NULL, &b, &err), IG_ERR_LIMIT);
    free(big);
    pt_rmdir(dir);
}

/* The revision is the documented hash, stable, and follows every file. */
static void
test_revision(void **state)
{
    const char *files[] = {"b.lua", "return function() end\n", "a_test.lua",
                           "return {}\n", NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b1 = pt_load(dir, NULL), *b2 = pt_load(dir, NULL), *b3;
    static const char expect_in[] = "a_test.lua\0"
                                    "10\0"
                                    "return {}\n"
                                    "b.lua\0"
                                    "22\0"
                                    "return function() end\n";
    char want[IG_HASH_STRLEN + 1], r1[IG_HASH_STRLEN + 1];
    char r3[IG_HASH_STRLEN + 1];

    (void)state;
    ig_hash_bytes(expect_in, sizeof(expect_in) - 1, want);
    assert_string_equal(pol_bundle_revision(b1), want);
    assert_true(ig_hash_is_valid(pol_bundle_revision(b1)));
    assert_string_equal(pol_bundle_revision(b1), pol_bundle_revision(b2));
    (void)snprintf(r1, sizeof(r1), "%s", pol_bundle_revision(b1));
    pt_write(dir, "a_test.lua", "return {} \n");
    b3 = pt_load(dir, NULL);
    assert_string_not_equal(pol_bundle_revision(b3), r1);
    pol_bundle_unref(b3);
    pt_write(dir, "a_test.lua", "return {}\n");
    b3 = pt_load(dir, NULL);
    assert_string_equal(pol_bundle_revision(b3), r1);
    pol_bundle_unref(b3);
    pt_write(dir, "c.lua", "return function() end\n");
    b3 = pt_load(dir, NULL);
    assert_string_not_equal(pol_bundle_revision(b3), r1);
    (void)snprintf(r3, sizeof(r3), "%s", pol_bundle_revision(b3));
    pol_bundle_unref(b3);
    pt_write(dir, "notes.txt", "ignored");
    pt_write(dir, ".hidden.lua", "ignored");
    b3 = pt_load(dir, NULL);
    assert_string_equal(pol_bundle_revision(b3), r3);
    pol_bundle_unref(b3);
    pol_bundle_ref(b1);
    pol_bundle_unref(b1);
    pol_bundle_unref(b1);
    pol_bundle_unref(b2);
    pol_bundle_unref(NULL);
    pt_rmdir(dir);
}

/* Files: a allows, b and c escalate, d blocks - each when its flag is
   set in params. */
static const char *const pt_combo_files[] = {
    "a.lua",
    "return function(i) if i.params.a then return ALLOW end end\n",
    "b.lua",
    "return function(i)\n"
    "  if i.params.b then\n"
    "    return ESCALATE{approvers = {'x'}, quorum = 2, ttl = 600,\n"
    "                    reason = 'NEEDS_X', message = 'b says'}\n"
    "  end\n"
    "end\n",
    "c.lua",
    "return function(i)\n"
    "  if i.params.c then\n"
    "    return ESCALATE{groups = {'y', 'x'}, ttl = 300, reason = 'NEEDS_Y'}\n"
    "  end\n"
    "end\n",
    "d.lua",
    "return function(i)\n"
    "  if i.params.d then return BLOCK{reason = 'NO_D', message = 'd!'} end\n"
    "  if i.params.d2 then return BLOCK 'NO_D2' end\n"
    "end\n",
    "e.lua",
    "return function(i) if i.params.e then return ESCALATE() end end\n",
    NULL};

static void
test_combination(void **state)
{
    char *dir = pt_bundle_dir((const char *const *)pt_combo_files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_engine *e = pt_engine(b, NULL, NULL, NULL);
    struct pol_decision d;

    (void)state;
    assert_ptr_equal(pol_engine_bundle(e), b);
    pt_eval(e, pt_intent("x", "{}"), &d);
    pt_expect(&d, POL_BLOCK, "NO_POLICY_MATCHED", NULL);
    pt_eval(e, pt_intent("x", "{\"a\":true}"), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    assert_int_equal(d.nreasons, 0);
    pt_eval(e, pt_intent("x", "{\"a\":true,\"b\":true,\"c\":true}"), &d);
    pt_expect(&d, POL_ESCALATE, "NEEDS_X", "b says");
    assert_int_equal(d.nreasons, 2);
    assert_string_equal(d.reasons[1], "NEEDS_Y");
    assert_int_equal(d.ngroups, 2);
    assert_string_equal(d.groups[0], "x");
    assert_string_equal(d.groups[1], "y");
    assert_int_equal(d.quorum, 2);
    assert_int_equal(d.ttl_seconds, 300);
    pt_eval(e, pt_intent("x", "{\"c\":true}"), &d);
    pt_expect(&d, POL_ESCALATE, "NEEDS_Y", NULL);
    assert_int_equal(d.quorum, 0); /* none named: the PDP's default */
    pt_eval(e, pt_intent("x", "{\"e\":true}"), &d);
    pt_expect(&d, POL_ESCALATE, NULL, NULL);
    assert_int_equal(d.nreasons, 0);
    assert_int_equal(d.quorum, 0);
    assert_int_equal(d.ttl_seconds, 0);
    assert_int_equal(d.ngroups, 0);
    pt_eval(e, pt_intent("x", "{\"a\":true,\"b\":true,\"d\":true,\"d2\":1}"),
            &d);
    pt_expect(&d, POL_BLOCK, "NO_D", "d!");
    assert_int_equal(d.nreasons, 1);
    assert_int_equal(d.ngroups, 0);
    assert_int_equal(d.quorum, 0);
    pt_eval(e, pt_intent("x", "{\"d2\":true,\"b\":true}"), &d);
    pt_expect(&d, POL_BLOCK, "NO_D2", NULL);
    assert_string_equal(d.message, "");
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

static void
test_bad_returns(void **state)
{
    static const struct {
        const char *ret, *msg;
    } cases[] = {
        {"42", "p.lua: policy returned a number"},
        {"'ALLOW'", "returned a string"},
        {"{verdict = 'ALLOW'}", "returned a table"},
        {"BLOCK", "returned a function (expected ALLOW, ESCALATE{...}, "
                  "BLOCK{...} or nil); call it"},
        {"true", "returned a boolean"},
        {"null", "returned a userdata"},
        {"BLOCK{reason = 'bad'}", "p.lua:1: BLOCK: reason must be an "
                                  "UPPER_SNAKE code"},
        {"BLOCK{reason = 'A_" /* 64 characters: one too many */
         "123456789012345678901234567890123456789012345678901234567890XY'}",
         "at most 63 characters"},
        {"BLOCK{}", "BLOCK: a reason code is required"},
        {"BLOCK{reasn = 'X'}", "BLOCK: unknown field 'reasn'"},
        {"BLOCK{reason = 'X', message = 7}", "message must be a string"},
        {"BLOCK(7)", "BLOCK: expected"},
        {"ESCALATE{quorum = 0}", "quorum must be an integer from 1 to 16"},
        {"ESCALATE{quorum = 1.5}", "quorum must be an integer"},
        {"ESCALATE{ttl = -1}", "ttl must be an integer"},
        {"ESCALATE{approvers = 'x'}", "approvers must be an array"},
        {"ESCALATE{approvers = {'bad group'}}", "not a group name"},
        {"ESCALATE{approvers = {'a'}, groups = {'b'}}", "not both"},
        {"ESCALATE{approvers = {'a','b','c','d','e','f','g','h','i'}}",
         "more than 8 approver groups"},
        {"ESCALATE{reason = 'lower'}", "UPPER_SNAKE"},
        {"ESCALATE{[1] = 'X'}", "unknown field 'number'"},
        {"ESCALATE(true)", "ESCALATE: expected"},
    };
    struct pol_decision d;
    char src[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        (void)snprintf(src, sizeof(src), "return function(i) return %s end",
                       cases[i].ret);
        print_message("return %s\n", cases[i].ret);
        pt_eval1(src, pt_intent("x", NULL), &d);
        pt_expect(&d, POL_BLOCK, "POLICY_ERROR", cases[i].msg);
        assert_int_equal(d.nreasons, 1);
    }
}

/* Errors name the file and line; the message is sanitized text. */
static void
test_runtime_errors(void **state)
{
    const char *files[] = {"a.lua", "return function(i) return nil end\n",
                           "refund.lua",
                           "return function(i)\n"
                           "  if i.action == 'nil' then\n"
                           "    return i.params.missing.field\n"
                           "  elseif i.action == 'obj' then\n"
                           "    error({})\n"
                           "  elseif i.action == 'raw' then\n"
                           "    error('bad\\n\\1byte \\xff', 0)\n"
                           "  end\n"
                           "  return ALLOW\n"
                           "end\n",
                           NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_engine *e = pt_engine(b, NULL, NULL, NULL);
    struct pol_decision d;

    (void)state;
    pt_eval(e, pt_intent("nil", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR",
              "refund.lua:3: attempt to index a nil value (field 'missing')");
    pt_eval(e, pt_intent("obj", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR",
              "refund.lua: (error object is a table value)");
    pt_eval(e, pt_intent("raw", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "refund.lua: bad??byte ?");
    pt_eval(e, pt_intent("ok", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

static int64_t
pt_count_fails(void *ctx, const char *key, int64_t window)
{
    (void)ctx;
    (void)key;
    (void)window;
    return -1;
}

static void
test_count(void **state)
{
    const char *files[] = {
        "q.lua",
        "return function(i)\n"
        "  if i.action == 'caught' then\n"
        "    pcall(count, 'k', 60) return ALLOW\n"
        "  elseif i.action == 'window0' then count('k', 0)\n"
        "  elseif i.action == 'window' then count('k', 86401)\n"
        "  elseif i.action == 'nokey' then count('', 60)\n"
        "  elseif i.action == 'longkey' then count(('k'):rep(257), 60)\n"
        "  elseif i.action == 'fullkey' then\n"
        "    return count(('k'):rep(256), 60) and ALLOW\n"
        "  end\n"
        "  local n = count('intents:' .. i.principal, 60)\n"
        "  if n > 3 then return BLOCK 'QUOTA_EXCEEDED' end\n"
        "  return ALLOW\n"
        "end\n",
        NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pt_counter c = {2, 0, "", 0};
    struct pol_engine *e = pt_engine(b, NULL, pt_count, &c), *e0, *ebad;
    struct pol_decision d;

    (void)state;
    pt_eval(e, pt_intent("x", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    assert_int_equal(c.calls, 1);
    assert_string_equal(c.key, "intents:agent:t");
    assert_int_equal(c.window, 60);
    c.answer = 4;
    pt_eval(e, pt_intent("x", NULL), &d);
    pt_expect(&d, POL_BLOCK, "QUOTA_EXCEEDED", NULL);
    pt_eval(e, pt_intent("window0", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "window must be 1 to 86400");
    pt_eval(e, pt_intent("window", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "window must be");
    pt_eval(e, pt_intent("nokey", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "key must be");
    pt_eval(e, pt_intent("longkey", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "key must be 1 to 256 bytes");
    pt_eval(e, pt_intent("fullkey", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    e0 = pt_engine(b, NULL, NULL, NULL);
    pt_eval(e0, pt_intent("x", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR",
              "q.lua:11: count(): no counter is configured");
    pt_eval(e0, pt_intent("caught", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "no counter is configured");
    ebad = pt_engine(b, NULL, pt_count_fails, NULL);
    pt_eval(ebad, pt_intent("caught", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "count(): the counter failed");
    pol_engine_free(ebad);
    pol_engine_free(e0);
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

static void
test_config(void **state)
{
    const char *files[] = {
        "p.lua",
        "local q = config.quota_per_minute\n"
        "return function(i)\n"
        "  assert(q == 10 and config.nested.list[2] == 'b')\n"
        "  assert(not pcall(function() config.quota_per_minute = 1 end))\n"
        "  return ALLOW\n"
        "end\n",
        NULL};
    char *dir = pt_bundle_dir(files);
    json_t *settings = pt_json(
        "{\"quota_per_minute\":10,\"nested\":{\"list\":[\"a\",\"b\"]}}");
    struct pol_bundle *b = pt_load(dir, settings);
    struct pol_engine *e = pt_engine(b, NULL, NULL, NULL);
    struct pol_limits l;
    struct pol_decision d;
    struct ig_err err;

    (void)state;
    json_decref(settings); /* the bundle keeps its own copy */
    pt_eval(e, pt_intent("x", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    pol_engine_free(e);
    pol_limits_default(&l);
    l.memory_bytes = 1024;
    e = NULL;
    assert_int_equal(pol_engine_new(b, &l, NULL, NULL, &e, &err),
                     IG_ERR_INVALID);
    assert_null(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

static void
test_bundle_runner(void **state)
{
    const char *files[] = {
        "p.lua",
        "return function(i)\n"
        "  if i.action == 'q' then\n"
        "    return count('intents:' .. i.principal, 60) > 5\n"
        "           and BLOCK 'QUOTA' or ALLOW\n"
        "  end\n"
        "  if i.params.x == null then return BLOCK{reason = 'NULL_X'} end\n"
        "  return ALLOW\n"
        "end\n",
        "p_test.lua",
        "return {\n"
        "  {name = 'passes', intent = {action = 'a'}, expect = 'ALLOW'},\n"
        "  {name = 'wrong', intent = {action = 'a'}, expect = 'BLOCK',\n"
        "   reasons = {'NOPE'}},\n"
        "  {name = 'null', intent = {action = 'a', params = {x = null}},\n"
        "   expect = 'BLOCK', reasons = {'NULL_X'}},\n"
        "  {name = 'counts', intent = {action = 'q'}, expect = 'BLOCK',\n"
        "   counts = {['intents:test-agent'] = 6}},\n"
        "  {name = 'count default', intent = {action = 'q'},\n"
        "   expect = 'ALLOW'},\n"
        "  {name = 'typo', intent = {action = 'a'}, expct = 'ALLOW'},\n"
        "  {name = 'no action', intent = {}, expect = 'ALLOW'},\n"
        "  {name = 'mixed', intent = {action = 'a', params = {1, x = 2}},\n"
        "   expect = 'ALLOW'},\n"
        "}\n",
        "q_test.lua",
        "error('broken test file')\n",
        NULL};
    const char *none[] = {"p.lua", "return function() end", NULL};
    char *dir = pt_bundle_dir(files), out[8192];

    (void)state;
    assert_int_equal(pt_bundle_test(dir, NULL, out, sizeof(out)), 5);
    print_message("%s", out);
    assert_non_null(strstr(out, "ok   p_test.lua: passes\n"));
    assert_non_null(strstr(out, "FAIL p_test.lua: wrong: expected BLOCK "
                                "[NOPE], got ALLOW []\n"));
    assert_non_null(strstr(out, "ok   p_test.lua: null\n"));
    assert_non_null(strstr(out, "ok   p_test.lua: counts\n"));
    assert_non_null(strstr(out, "ok   p_test.lua: count default\n"));
    assert_non_null(strstr(out, "FAIL p_test.lua: typo: bad test case"));
    assert_non_null(strstr(out, "FAIL p_test.lua: no action: bad test"));
    assert_non_null(strstr(out, "FAIL p_test.lua: mixed: bad test case"));
    assert_non_null(strstr(out, "FAIL q_test.lua: q_test.lua:1: broken"));
    assert_non_null(strstr(out, "4 passed, 5 failed\n"));
    pt_rmdir(dir);
    dir = pt_bundle_dir(none);
    assert_int_equal(pt_bundle_test(dir, NULL, out, sizeof(out)), -1);
    assert_non_null(strstr(out, "no *_test.lua files"));
    pt_rmdir(dir);
}

static void *
pt_thread(void *arg)
{
    struct pol_bundle *b = arg;
    struct pt_counter c = {1, 0, "", 0};
    struct pol_engine *e = NULL;
    struct pol_decision d;
    json_t *intent = pt_json("{\"action\":\"payments.refund\",\"principal\":"
                             "\"p\",\"params\":{\"amount\":5}}");
    int i, ok = 1;

    if (pol_engine_new(b, NULL, pt_count, &c, &e, NULL) != IG_OK)
        ok = 0;
    for (i = 0; ok && i < 500; i++) {
        pol_engine_eval(e, intent, &d);
        ok = d.verdict == POL_ALLOW;
    }
    pol_engine_free(e);
    json_decref(intent);
    return ok ? arg : NULL;
}

/* One bundle, one engine per thread. */
static void
test_threads(void **state)
{
    struct pol_bundle *b = pt_load(IG_POLICY_BUNDLE_DIR, NULL);
    pthread_t t[4];
    void *ret;
    int i;

    (void)state;
    for (i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, pt_thread, b), 0);
    for (i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_ptr_equal(ret, b);
    }
    pol_bundle_unref(b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_names),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_load_limits),
        cmocka_unit_test(test_revision),
        cmocka_unit_test(test_combination),
        cmocka_unit_test(test_bad_returns),
        cmocka_unit_test(test_runtime_errors),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_bundle_runner),
        cmocka_unit_test(test_threads),
    };
    int failed =
        cmocka_run_group_tests_name("policy engine", tests, NULL, NULL);

    failed += pt_run_sandbox_tests();
    failed += pt_run_helper_tests();
    failed += pt_run_bundle_tests();
    failed += pt_run_net_tests();
    failed += pt_run_text_tests();
    return failed != 0;
}
