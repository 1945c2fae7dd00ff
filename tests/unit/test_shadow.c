/*
 * test_shadow.c - the pieces of the shadow bundle's bookkeeping
 * (pdp/pdp_shadow_tally.c): the comparison and its counts, the cap on distinct
 * action labels (an agent choosing ever new actions cannot grow /metrics),
 * label escaping, and the newest-first list of disagreements.
 */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"
#include "pdp_shadow.h"

static char *
rendered(struct pdp_shadow_tally *t)
{
    struct ig_buf b;
    char *s;

    ig_buf_init(&b, 1 << 20);
    assert_int_equal(pdp_shadow_tally_render(t, &b), IG_OK);
    s = ig_buf_take(&b, NULL);
    ig_buf_release(&b);
    assert_non_null(s);
    return s;
}

/* Agreements are evaluated, not disagreements; counts by (action, live,
   shadow). */
static void
test_compare_and_count(void **state)
{
    struct pdp_shadow_tally t;
    char *m;
    json_t *v;
    (void)state;

    assert_int_equal(pdp_shadow_tally_init(&t), 0);
    assert_int_equal(pdp_shadow_tally_add(&t, "i1", "payments.refund",
                                          POL_ALLOW, POL_ALLOW, 100),
                     0);
    assert_int_equal(pdp_shadow_tally_add(&t, "i2", "payments.refund",
                                          POL_ALLOW, POL_BLOCK, 101),
                     1);
    assert_int_equal(pdp_shadow_tally_add(&t, "i3", "payments.refund",
                                          POL_ALLOW, POL_BLOCK, 102),
                     1);
    assert_int_equal(pdp_shadow_tally_add(&t, "i4", "git.push", POL_ESCALATE,
                                          POL_ALLOW, 103),
                     1);
    assert_int_equal(atomic_load(&t.evaluated), 4);
    assert_int_equal(atomic_load(&t.disagreed), 3);
    m = rendered(&t);
    assert_non_null(strstr(m, "\nintentgate_shadow_evaluations_total 4\n"));
    assert_non_null(strstr(m, "\nintentgate_shadow_disagreements_total{action="
                              "\"payments.refund\",live=\"ALLOW\",shadow="
                              "\"BLOCK\"} 2\n"));
    assert_non_null(strstr(m, "\nintentgate_shadow_disagreements_total{action="
                              "\"git.push\",live=\"ESCALATE\",shadow="
                              "\"ALLOW\"} 1\n"));
    assert_null(strstr(m, "live=\"ALLOW\",shadow=\"ALLOW\""));
    free(m);
    v = pdp_shadow_tally_json(&t);
    assert_non_null(v);
    assert_int_equal(json_integer_value(json_object_get(v, "evaluated")), 4);
    assert_int_equal(json_integer_value(json_object_get(v, "disagreed")), 3);
    assert_int_equal(json_array_size(json_object_get(v, "by")), 2);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(v, "recent"), 0), "intent_id")),
        "i4");
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(v, "recent"), 0), "at")),
        "1970-01-01T00:01:43Z");
    json_decref(v);
    pdp_shadow_tally_release(&t);
}

/* An agent inventing actions: the first IG_SHADOW_ACTIONS_MAX keep their
   label, the rest (and an action literally named "other") count as
   "other"; the exposition stays bounded. */
static void
test_label_cap(void **state)
{
    struct pdp_shadow_tally t;
    char action[64], *m;
    const char *p;
    size_t lines = 0;
    int i;
    (void)state;

    assert_int_equal(pdp_shadow_tally_init(&t), 0);
    for (i = 0; i < 10000; i++) {
        (void)snprintf(action, sizeof(action), "x.a%d", i);
        (void)pdp_shadow_tally_add(&t, "id", action, POL_ALLOW, POL_BLOCK, 1);
    }
    (void)pdp_shadow_tally_add(&t, "id", "other", POL_ALLOW, POL_BLOCK, 1);
    (void)pdp_shadow_tally_add(&t, "id", "x.a0", POL_ALLOW, POL_BLOCK, 1);
    assert_int_equal(t.nactions, IG_SHADOW_ACTIONS_MAX);
    m = rendered(&t);
    for (p = m;
         (p = strstr(p, "intentgate_shadow_disagreements_total{")) != NULL; p++)
        lines++;
    assert_int_equal(lines, IG_SHADOW_ACTIONS_MAX + 1);
    assert_non_null(strstr(m, "{action=\"x.a0\",live=\"ALLOW\",shadow="
                              "\"BLOCK\"} 2\n"));
    (void)snprintf(action, sizeof(action), "{action=\"x.a%d\"",
                   IG_SHADOW_ACTIONS_MAX - 1);
    assert_non_null(strstr(m, action));
    (void)snprintf(action, sizeof(action), "{action=\"x.a%d\"",
                   IG_SHADOW_ACTIONS_MAX);
    assert_null(strstr(m, action));
    (void)snprintf(action, sizeof(action), "} %d\n",
                   10000 - IG_SHADOW_ACTIONS_MAX + 1);
    p = strstr(m, "{action=\"other\",live=\"ALLOW\",shadow=\"BLOCK\"}");
    assert_non_null(p);
    assert_memory_equal(strchr(p, '}'), action, strlen(action));
    free(m);
    pdp_shadow_tally_release(&t);
}

/* Label values are escaped: a quote, a backslash or a newline cannot end
   the label or the line. */
static void
test_label_escaped(void **state)
{
    struct pdp_shadow_tally t;
    struct ig_buf b;
    char *m;
    (void)state;

    ig_buf_init(&b, 1024);
    assert_int_equal(pdp_shadow_label(&b, "a\"b\\c\nd"), IG_OK);
    assert_int_equal(ig_buf_addc(&b, '\0'), IG_OK);
    assert_string_equal((char *)b.data, "a\\\"b\\\\c\\nd");
    ig_buf_release(&b);

    assert_int_equal(pdp_shadow_tally_init(&t), 0);
    (void)pdp_shadow_tally_add(&t, "id", "x\"} 99\nfake_metric 1", POL_ALLOW,
                               POL_BLOCK, 1);
    m = rendered(&t);
    assert_null(strstr(m, "\nfake_metric"));
    assert_non_null(strstr(m, "{action=\"x\\\"} 99\\nfake_metric 1\","));
    free(m);
    pdp_shadow_tally_release(&t);
}

/* The recent list keeps the newest IG_SHADOW_RECENT_MAX, newest first. */
static void
test_recent_ring(void **state)
{
    struct pdp_shadow_tally t;
    char id[32];
    json_t *v, *recent;
    size_t i;
    (void)state;

    assert_int_equal(pdp_shadow_tally_init(&t), 0);
    for (i = 0; i < 3 * IG_SHADOW_RECENT_MAX + 7; i++) {
        (void)snprintf(id, sizeof(id), "i%zu", i);
        (void)pdp_shadow_tally_add(&t, id, "a.b", POL_BLOCK, POL_ALLOW,
                                   (int64_t)i);
    }
    v = pdp_shadow_tally_json(&t);
    assert_non_null(v);
    recent = json_object_get(v, "recent");
    assert_int_equal(json_array_size(recent), IG_SHADOW_RECENT_MAX);
    for (i = 0; i < IG_SHADOW_RECENT_MAX; i++) {
        (void)snprintf(id, sizeof(id), "i%zu",
                       3 * IG_SHADOW_RECENT_MAX + 6 - i);
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(recent, i), "intent_id")),
                            id);
    }
    json_decref(v);
    pdp_shadow_tally_release(&t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_and_count),
        cmocka_unit_test(test_label_cap),
        cmocka_unit_test(test_label_escaped),
        cmocka_unit_test(test_recent_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
