/*
 * test_policy_trace.c - the explain trace (policies/pol.h): which file
 * returned which verdict, in file order; nil files left out; a failing
 * file (error, limit, a non-verdict, a failure caught with pcall, merged
 * requirements over the cap) ends the trace with ERROR or LIMIT; a trace
 * is reset by each evaluation and outlives its engine; a NULL trace
 * decides exactly as a traced one.
 */
#include "policy_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bundle of files, an engine, a trace and the last decision. */
struct tt {
    char *dir;
    struct pol_bundle *b;
    struct pol_engine *e;
    struct pol_trace *t;
    struct pol_decision d;
    struct pt_counter counter;
};

static void
tt_open(struct tt *x, const char *const *files, const struct pol_limits *l,
        int with_count)
{
    memset(x, 0, sizeof(*x));
    x->counter.answer = 1;
    x->dir = pt_bundle_dir(files);
    x->b = pt_load(x->dir, NULL);
    x->e = pt_engine(x->b, l, with_count ? pt_count : NULL, &x->counter);
    x->t = pol_trace_new();
    assert_non_null(x->t);
}

static void
tt_close(struct tt *x)
{
    pol_trace_free(x->t);
    pol_engine_free(x->e);
    pol_bundle_unref(x->b);
    pt_rmdir(x->dir);
}

/* Evaluate intent traced, and check the untraced decision is the same. */
static void
tt_eval(struct tt *x, const char *intent)
{
    json_t *v = pt_json(intent);
    struct pol_decision plain;

    pol_engine_eval_traced(x->e, v, &x->d, x->t);
    pol_engine_eval(x->e, v, &plain);
    assert_int_equal(plain.verdict, x->d.verdict);
    assert_int_equal(plain.nreasons, x->d.nreasons);
    assert_memory_equal(plain.reasons, x->d.reasons, sizeof(plain.reasons));
    /* Not the message: pol_vm_pcall prefixes a failure with the file
       that was running before the call (the previous run's last), so the
       first failing run of an engine reads "c.lua: b.lua:1: boom" and
       the next "b.lua:1: boom" (reported, pol_vm.c is not ours). */
    json_decref(v);
}

/* The trace as compact JSON must be want. */
static void
tt_expect_json(const struct tt *x, const char *want)
{
    json_t *j = pol_trace_json(x->t);
    char *s;

    assert_non_null(j);
    s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_non_null(s);
    if (strcmp(s, want) != 0)
        fail_msg("trace %s, expected %s", s, want);
    free(s);
    json_decref(j);
}

static void
test_trace_verdicts(void **state)
{
    const char *files[] = {"a_allow.lua",
                           "return function(i) return ALLOW end",
                           "b_nil.lua",
                           "return function(i) return nil end",
                           "c_esc.lua",
                           "return function(i) return ESCALATE{reason="
                           "'PROTECTED_BRANCH', approvers={'leads'}} end",
                           "d_none.lua",
                           "return function(i) end",
                           "e_block.lua",
                           "return function(i) if i.action == 'x' then return "
                           "BLOCK{reason='NOPE', message='no'} end end",
                           "f_esc0.lua",
                           "return function(i) return ESCALATE() end",
                           NULL};
    struct tt x;
    size_t i;

    (void)state;
    tt_open(&x, files, NULL, 1);
    tt_eval(&x, pt_intent("x", NULL));
    pt_expect(&x.d, POL_BLOCK, "NOPE", "no");
    assert_int_equal(pol_trace_len(x.t), 4);
    assert_string_equal(pol_trace_policy(x.t, 0), "a_allow.lua");
    assert_int_equal(pol_trace_verdict(x.t, 0), POL_TRACE_ALLOW);
    assert_int_equal(pol_trace_nreasons(x.t, 0), 0);
    assert_string_equal(pol_trace_policy(x.t, 1), "c_esc.lua");
    assert_int_equal(pol_trace_verdict(x.t, 1), POL_TRACE_ESCALATE);
    assert_int_equal(pol_trace_nreasons(x.t, 1), 1);
    assert_string_equal(pol_trace_reason(x.t, 1, 0), "PROTECTED_BRANCH");
    assert_string_equal(pol_trace_reason(x.t, 1, 1), "");
    assert_string_equal(pol_trace_policy(x.t, 2), "e_block.lua");
    assert_int_equal(pol_trace_verdict(x.t, 2), POL_TRACE_BLOCK);
    assert_string_equal(pol_trace_reason(x.t, 2, 0), "NOPE");
    assert_string_equal(pol_trace_policy(x.t, 3), "f_esc0.lua");
    assert_int_equal(pol_trace_nreasons(x.t, 3), 0);
    for (i = 0; i < pol_trace_len(x.t); i++)
        assert_true(pol_trace_ns(x.t, i) >= 0);
    tt_expect_json(
        &x, "[{\"policy\":\"a_allow.lua\",\"verdict\":\"ALLOW\","
            "\"reasons\":[]},{\"policy\":\"c_esc.lua\",\"verdict\":"
            "\"ESCALATE\",\"reasons\":[\"PROTECTED_BRANCH\"]},{\"policy\":"
            "\"e_block.lua\",\"verdict\":\"BLOCK\",\"reasons\":[\"NOPE\"]},"
            "{\"policy\":\"f_esc0.lua\",\"verdict\":\"ESCALATE\","
            "\"reasons\":[]}]");

    /* Reuse: the next evaluation starts afresh (e_block has no opinion). */
    tt_eval(&x, pt_intent("y", NULL));
    pt_expect(&x.d, POL_ESCALATE, "PROTECTED_BRANCH", NULL);
    assert_int_equal(pol_trace_len(x.t), 3);
    assert_string_equal(pol_trace_policy(x.t, 2), "f_esc0.lua");
    /* Out of range reads are harmless. */
    assert_string_equal(pol_trace_policy(x.t, 3), "");
    assert_int_equal(pol_trace_nreasons(x.t, 99), 0);
    assert_int_equal(pol_trace_ns(x.t, 99), 0);
    tt_close(&x);
}

static void
test_trace_no_opinion(void **state)
{
    const char *files[] = {"a.lua", "return function(i) return nil end",
                           "b.lua", "return function(i) end", NULL};
    struct tt x;

    (void)state;
    tt_open(&x, files, NULL, 1);
    tt_eval(&x, pt_intent("x", NULL));
    pt_expect(&x.d, POL_BLOCK, "NO_POLICY_MATCHED", NULL);
    assert_int_equal(pol_trace_len(x.t), 0);
    tt_expect_json(&x, "[]");
    tt_close(&x);
}

/* a.lua allows; b.lua is src; c.lua would block but never runs. */
static void
tt_fails_in_b(const char *src, const struct pol_limits *l, int with_count,
              const char *verdict, const char *reason)
{
    const char *files[] = {
        "a.lua", "return function(i) return ALLOW end",     "b.lua", src,
        "c.lua", "return function(i) return BLOCK 'C' end", NULL};
    char want[512];
    struct tt x;

    tt_open(&x, files, l, with_count);
    tt_eval(&x, pt_intent("x", NULL));
    pt_expect(&x.d, POL_BLOCK, reason, "b.lua");
    assert_int_equal(x.d.nreasons, 1);
    (void)snprintf(want, sizeof(want),
                   "[{\"policy\":\"a.lua\",\"verdict\":\"ALLOW\",\"reasons\":"
                   "[]},{\"policy\":\"b.lua\",\"verdict\":\"%s\",\"reasons\":"
                   "[\"%s\"]}]",
                   verdict, reason);
    tt_expect_json(&x, want);
    assert_int_equal(pol_trace_verdict(x.t, 1), strcmp(verdict, "LIMIT") == 0
                                                    ? POL_TRACE_LIMIT
                                                    : POL_TRACE_ERROR);
    assert_true(pol_trace_ns(x.t, 1) >= 0);
    /* The engine recovers; the trace is reset. */
    tt_eval(&x, pt_intent("x", NULL));
    assert_int_equal(pol_trace_len(x.t), 2);
    tt_close(&x);
}

static void
test_trace_failures(void **state)
{
    struct pol_limits l;

    (void)state;
    tt_fails_in_b("return function(i) error('boom') end", NULL, 1, "ERROR",
                  "POLICY_ERROR");
    tt_fails_in_b("return function(i) return i.nope.deeper end", NULL, 1,
                  "ERROR", "POLICY_ERROR");
    /* Not a verdict: pol_acc_add refuses it. */
    tt_fails_in_b("return function(i) return 'ALLOW' end", NULL, 1, "ERROR",
                  "POLICY_ERROR");
    tt_fails_in_b("return function(i) return BLOCK end", NULL, 1, "ERROR",
                  "POLICY_ERROR");
    /* A bad verdict constructor call. */
    tt_fails_in_b("return function(i) return BLOCK{reason='lower'} end", NULL,
                  1, "ERROR", "POLICY_ERROR");
    pol_limits_default(&l);
    l.instructions = 100000;
    tt_fails_in_b("return function(i) while true do end end", &l, 1, "LIMIT",
                  "POLICY_LIMIT");
    tt_fails_in_b("return function(i) local t = {} "
                  "for k = 1, 1e9 do t[k] = string.rep('x', 1000) .. k end end",
                  NULL, 1, "LIMIT", "POLICY_LIMIT");
    /* Caught with pcall: the failure is sticky and still this file's. */
    tt_fails_in_b("return function(i) pcall(function() while true do end "
                  "end) return ALLOW end",
                  &l, 1, "LIMIT", "POLICY_LIMIT");
    tt_fails_in_b("return function(i) pcall(count, 'k', 60) return ALLOW end",
                  NULL, 0, "ERROR", "POLICY_ERROR");
}

/* b.lua's ESCALATE fits alone but not merged with a.lua's: b fails. */
static void
test_trace_merge_overflow(void **state)
{
    const char *files[] = {
        "a.lua",
        "return function(i) return ESCALATE{approvers={'g1','g2',"
        "'g3','g4','g5','g6','g7','g8'}} end",
        "b.lua",
        "return function(i) return ESCALATE{reason='B',"
        "approvers={'h1'}} end",
        NULL};
    struct tt x;

    (void)state;
    tt_open(&x, files, NULL, 1);
    tt_eval(&x, pt_intent("x", NULL));
    pt_expect(&x.d, POL_BLOCK, "POLICY_ERROR", "approver groups");
    tt_expect_json(&x, "[{\"policy\":\"a.lua\",\"verdict\":\"ESCALATE\","
                       "\"reasons\":[]},{\"policy\":\"b.lua\",\"verdict\":"
                       "\"ERROR\",\"reasons\":[\"POLICY_ERROR\"]}]");
    tt_close(&x);
}

/* Failures no file caused leave the trace empty (and reset it). */
static void
test_trace_not_a_file(void **state)
{
    const char *files[] = {"a.lua", "return function(i) return ALLOW end",
                           NULL};
    json_t *arr = json_array();
    struct tt x;

    (void)state;
    tt_open(&x, files, NULL, 1);
    tt_eval(&x, pt_intent("x", NULL));
    assert_int_equal(pol_trace_len(x.t), 1);
    pol_engine_eval_traced(x.e, arr, &x.d, x.t);
    pt_expect(&x.d, POL_BLOCK, "POLICY_ERROR", "not a JSON object");
    assert_int_equal(pol_trace_len(x.t), 0);
    pol_engine_eval_traced(x.e, NULL, &x.d, x.t);
    assert_int_equal(pol_trace_len(x.t), 0);
    json_decref(arr);
    tt_close(&x);
}

/* A trace holds copies: it outlives its engine and bundle. */
static void
test_trace_outlives_engine(void **state)
{
    const char *files[] = {"long-name_1.2.lua",
                           "return function(i) return BLOCK 'R' end", NULL};
    struct tt x;
    json_t *j;

    (void)state;
    tt_open(&x, files, NULL, 1);
    tt_eval(&x, pt_intent("x", NULL));
    pol_engine_free(x.e);
    pol_bundle_unref(x.b);
    x.e = NULL;
    x.b = NULL;
    assert_string_equal(pol_trace_policy(x.t, 0), "long-name_1.2.lua");
    j = pol_trace_entry_json(x.t, 0);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                        "BLOCK");
    json_decref(j);
    tt_close(&x);
}

/* Timings: a busy file takes longer than an idle one. */
static void
test_trace_time(void **state)
{
    const char *files[] = {
        "a.lua", "return function(i) return ALLOW end", "b.lua",
        "return function(i) local s = 0 for k = 1, 200000 do "
        "s = s + k end return ALLOW end",
        NULL};
    struct tt x;

    (void)state;
    tt_open(&x, files, NULL, 1);
    tt_eval(&x, pt_intent("x", NULL));
    assert_int_equal(pol_trace_len(x.t), 2);
    assert_true(pol_trace_ns(x.t, 1) > 0);
    assert_true(pol_trace_ns(x.t, 1) > pol_trace_ns(x.t, 0));
    tt_close(&x);
}

static void
test_trace_names(void **state)
{
    (void)state;
    assert_string_equal(pol_trace_verdict_name(POL_TRACE_ALLOW), "ALLOW");
    assert_string_equal(pol_trace_verdict_name(POL_TRACE_BLOCK), "BLOCK");
    assert_string_equal(pol_trace_verdict_name(POL_TRACE_ESCALATE), "ESCALATE");
    assert_string_equal(pol_trace_verdict_name(POL_TRACE_ERROR), "ERROR");
    assert_string_equal(pol_trace_verdict_name(POL_TRACE_LIMIT), "LIMIT");
    pol_trace_free(NULL);
}

/* The example bundle, traced: each decision names the files behind it. */
static void
test_trace_example_bundle(void **state)
{
    struct pol_bundle *b = pt_load(IG_POLICY_BUNDLE_DIR, NULL);
    struct pt_counter counter = {1, 0, "", 0};
    struct pol_engine *e = pt_engine(b, NULL, pt_count, &counter);
    struct pol_trace *t = pol_trace_new();
    struct pol_decision d;
    json_t *v = pt_json(pt_intent("payments.refund", "{\"amount\":42,"
                                                     "\"currency\":\"EUR\"}"));
    size_t i, allow = 0;

    (void)state;
    assert_non_null(t);
    pol_engine_eval_traced(e, v, &d, t);
    assert_true(pol_trace_len(t) >= 1);
    for (i = 0; i < pol_trace_len(t); i++) {
        assert_true(strstr(pol_trace_policy(t, i), ".lua") != NULL);
        if (pol_trace_verdict(t, i) == POL_TRACE_ALLOW)
            allow++;
    }
    if (d.verdict == POL_ALLOW)
        assert_true(allow >= 1);
    json_decref(v);
    pol_trace_free(t);
    pol_engine_free(e);
    pol_bundle_unref(b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_verdicts),
        cmocka_unit_test(test_trace_no_opinion),
        cmocka_unit_test(test_trace_failures),
        cmocka_unit_test(test_trace_merge_overflow),
        cmocka_unit_test(test_trace_not_a_file),
        cmocka_unit_test(test_trace_outlives_engine),
        cmocka_unit_test(test_trace_time),
        cmocka_unit_test(test_trace_names),
        cmocka_unit_test(test_trace_example_bundle),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
