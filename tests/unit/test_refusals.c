/*
 * test_refusals.c - the refusal table (pdp/pdp_refusals.c) with an
 * injected clock and an injected log writer: a flood of 100,000 bad
 * tokens is one event per interval; keys are kept apart; a flood from
 * many addresses stays within max_keys plus one overflow key per kind;
 * a failed write loses nothing; stopping writes what is left; /metrics.
 */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"
#include "pdp_refusals.h"

/* The fake audit log: every event written, parsed; writes fail while
   failing > 0 (each failure counts one down). */
struct fake {
    int64_t now;
    json_t *events; /* array */
    int writes, failing;
};

static int64_t
fake_clock(void *ctx)
{
    return ((struct fake *)ctx)->now;
}

static enum ig_status
fake_write(void *ctx, const char *const *ev, size_t n)
{
    struct fake *f = ctx;
    json_error_t jerr;
    size_t i;

    if (f->failing > 0) {
        f->failing--;
        return IG_ERR_IO;
    }
    f->writes++;
    for (i = 0; i < n; i++) {
        json_t *v = json_loads(ev[i], 0, &jerr);
        if (v == NULL)
            fail_msg("not JSON: %s", ev[i]);
        /* json_array_append_new steals v. */
        assert_int_equal(json_array_append_new(f->events, v), 0);
    }
    return IG_OK;
}

static struct pdp_refusals *
table(struct fake *f, size_t max_keys)
{
    struct pdp_refusals_opts o;
    struct pdp_refusals *t;

    memset(f, 0, sizeof(*f));
    f->now = 1780000000; /* 2026-05-28T20:26:40Z */
    f->events = json_array();
    memset(&o, 0, sizeof(o));
    o.interval = 60;
    o.max_keys = max_keys;
    o.write = fake_write;
    o.write_ctx = f;
    o.clock = fake_clock;
    o.clock_ctx = f;
    t = pdp_refusals_new(&o);
    assert_non_null(t);
    return t;
}

static const char *
str(const json_t *ev, const char *k)
{
    return json_string_value(json_object_get(ev, k));
}

static json_int_t
num(const json_t *ev, const char *k)
{
    return json_integer_value(json_object_get(ev, k));
}

/* The sum of the counts of every written event of this type. */
static json_int_t
total(const struct fake *f, const char *type)
{
    json_int_t n = 0;
    size_t i;
    json_t *ev;

    json_array_foreach(f->events, i, ev) if (strcmp(str(ev, "type"), type) == 0)
        n += num(ev, "count");
    return n;
}

static void
test_a_flood_is_one_event_per_interval(void **state)
{
    struct fake f;
    struct pdp_refusals *t = table(&f, 16);
    json_t *ev;
    int i;
    (void)state;

    for (i = 0; i < 100000; i++) {
        pdp_refusals_note(t, PDP_REFUSED_AUTH, "198.51.100.7", NULL, NULL,
                          "UNAUTHENTICATED");
        if (i == 0)
            f.now += 5; /* the rest come 5 s later */
    }
    assert_int_equal(pdp_refusals_tick(t), 0); /* 5 s: not yet */
    f.now += 54;
    assert_int_equal(pdp_refusals_tick(t), 0); /* 59 s */
    assert_int_equal(f.writes, 0);
    f.now += 1;
    assert_int_equal(pdp_refusals_tick(t), 1); /* 60 s: written */
    assert_int_equal(json_array_size(f.events), 1);
    ev = json_array_get(f.events, 0);
    assert_string_equal(str(ev, "type"), "auth.refused");
    assert_string_equal(str(ev, "client"), "198.51.100.7");
    assert_string_equal(str(ev, "reason"), "UNAUTHENTICATED");
    assert_int_equal(num(ev, "count"), 100000);
    assert_string_equal(str(ev, "first"), "2026-05-28T20:26:40Z");
    assert_string_equal(str(ev, "last"), "2026-05-28T20:26:45Z");
    assert_string_equal(str(ev, "time"), "2026-05-28T20:27:40Z");
    assert_null(json_object_get(ev, "principal"));
    assert_null(json_object_get(ev, "overflow"));
    /* Nothing new: nothing written at the next interval. */
    f.now += 60;
    assert_int_equal(pdp_refusals_tick(t), 0);
    assert_int_equal(json_array_size(f.events), 1);
    /* A refusal now waits for a whole interval after the last write. */
    pdp_refusals_note(t, PDP_REFUSED_AUTH, "198.51.100.7", NULL, NULL,
                      "UNAUTHENTICATED");
    assert_int_equal(pdp_refusals_tick(t), 1);
    assert_int_equal(json_array_size(f.events), 2);
    pdp_refusals_free(t);
    json_decref(f.events);
}

static void
test_keys_are_kept_apart(void **state)
{
    struct fake f;
    struct pdp_refusals *t = table(&f, 16);
    json_t *ev;
    size_t i;
    int seen = 0;
    (void)state;

    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.1", NULL, NULL,
                      "UNAUTHENTICATED");
    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.2", NULL, NULL,
                      "UNAUTHENTICATED");
    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.1", "bot", "agent",
                      "FORBIDDEN");
    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.1", "bot", "agent",
                      "FORBIDDEN");
    pdp_refusals_note(t, PDP_REFUSED_LOGIN, "192.0.2.1", "alice", "approver",
                      "LOGIN_FAILED");
    pdp_refusals_note(t, PDP_REFUSED_GRANT, "192.0.2.1", "ex", "executor",
                      "GRANT_ALREADY_REDEEMED");
    pdp_refusals_note(t, PDP_REFUSED_OUTCOME, "192.0.2.1", "ex", "executor",
                      "NOT_REDEEMED");
    pdp_refusals_note(t, PDP_REFUSED_SLACK, "192.0.2.1", NULL, NULL,
                      "SLACK_SIGNATURE_INVALID");
    assert_int_equal(pdp_refusals_flush(t), IG_OK);
    assert_int_equal(f.writes, 1); /* one append for all of them */
    assert_int_equal(json_array_size(f.events), 7);
    json_array_foreach(f.events, i, ev)
    {
        const json_t *p = json_object_get(ev, "principal");
        if (strcmp(str(ev, "reason"), "FORBIDDEN") == 0) {
            assert_int_equal(num(ev, "count"), 2);
            assert_string_equal(str(p, "id"), "bot");
            assert_string_equal(str(p, "role"), "agent");
            seen |= 1;
        } else if (strcmp(str(ev, "type"), "login.refused") == 0) {
            assert_string_equal(str(p, "id"), "alice");
            assert_string_equal(str(p, "role"), "approver");
            seen |= 2;
        } else if (strcmp(str(ev, "type"), "slack.refused") == 0) {
            assert_null(p);
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    assert_int_equal(total(&f, "grant.refused"), 1);
    assert_int_equal(total(&f, "outcome.refused"), 1);
    pdp_refusals_free(t);
    json_decref(f.events);
}

static void
test_many_addresses_overflow(void **state)
{
    struct fake f;
    struct pdp_refusals *t = table(&f, 4);
    char client[64];
    json_t *ev;
    size_t i, overflow = 0;
    (void)state;

    for (i = 0; i < 1000; i++) {
        (void)snprintf(client, sizeof(client), "10.0.%zu.%zu", i / 250,
                       i % 250);
        pdp_refusals_note(t, PDP_REFUSED_AUTH, client, NULL, NULL,
                          "UNAUTHENTICATED");
        pdp_refusals_note(t, PDP_REFUSED_SLACK, client, NULL, NULL,
                          "SLACK_SIGNATURE_INVALID");
    }
    assert_int_equal(pdp_refusals_flush(t), IG_OK);
    /* 4 keys, then one overflow key per kind. */
    assert_int_equal(json_array_size(f.events), 4 + 2);
    assert_int_equal(total(&f, "auth.refused"), 1000);
    assert_int_equal(total(&f, "slack.refused"), 1000);
    json_array_foreach(f.events, i, ev)
    {
        if (json_object_get(ev, "overflow") == NULL)
            continue;
        assert_true(json_is_true(json_object_get(ev, "overflow")));
        assert_string_equal(str(ev, "client"), "*");
        assert_string_equal(str(ev, "reason"), "*");
        overflow++;
    }
    assert_int_equal(overflow, 2);
    /* The keys are free again after a write. */
    json_array_clear(f.events);
    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.200", NULL, NULL,
                      "UNAUTHENTICATED");
    assert_int_equal(pdp_refusals_flush(t), IG_OK);
    assert_int_equal(json_array_size(f.events), 1);
    assert_string_equal(str(json_array_get(f.events, 0), "client"),
                        "192.0.2.200");
    pdp_refusals_free(t);
    json_decref(f.events);
}

static void
test_a_failed_write_loses_nothing(void **state)
{
    struct fake f;
    struct pdp_refusals *t = table(&f, 16);
    json_t *ev;
    (void)state;

    pdp_refusals_note(t, PDP_REFUSED_GRANT, "192.0.2.9", "ex", "executor",
                      "GRANT_EXPIRED");
    f.failing = 1;
    assert_int_equal(pdp_refusals_flush(t), IG_ERR_IO);
    f.now += 10;
    pdp_refusals_note(t, PDP_REFUSED_GRANT, "192.0.2.9", "ex", "executor",
                      "GRANT_EXPIRED");
    assert_int_equal(pdp_refusals_flush(t), IG_OK);
    assert_int_equal(json_array_size(f.events), 1);
    ev = json_array_get(f.events, 0);
    assert_int_equal(num(ev, "count"), 2);
    assert_string_equal(str(ev, "first"), "2026-05-28T20:26:40Z");
    assert_string_equal(str(ev, "last"), "2026-05-28T20:26:50Z");
    /* tick reports the failure too, and keeps the counts. */
    pdp_refusals_note(t, PDP_REFUSED_GRANT, "192.0.2.9", "ex", "executor",
                      "GRANT_EXPIRED");
    f.now += 60;
    f.failing = 1;
    assert_int_equal(pdp_refusals_tick(t), -1);
    assert_int_equal(pdp_refusals_tick(t), 1);
    assert_int_equal(total(&f, "grant.refused"), 3);
    pdp_refusals_free(t);
    json_decref(f.events);
}

static void
test_clock_going_back_writes(void **state)
{
    struct fake f;
    struct pdp_refusals *t = table(&f, 16);
    (void)state;

    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.1", NULL, NULL,
                      "UNAUTHENTICATED");
    f.now -= 3600; /* the wall clock was set back an hour */
    assert_int_equal(pdp_refusals_tick(t), 1);
    assert_int_equal(total(&f, "auth.refused"), 1);
    pdp_refusals_free(t);
    json_decref(f.events);
}

static void
test_stop_writes_what_is_left(void **state)
{
    struct fake f;
    struct pdp_refusals *t = table(&f, 16);
    char longer[300];
    (void)state;

    assert_int_equal(pdp_refusals_start(t), IG_OK);
    pdp_refusals_note(t, PDP_REFUSED_LOGIN, "192.0.2.1", NULL, NULL,
                      "UNKNOWN_APPROVER");
    /* Over-long values are cut to fit, never refused. */
    memset(longer, 'x', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    pdp_refusals_note(t, PDP_REFUSED_LOGIN, longer, longer, longer, longer);
    pdp_refusals_free(t); /* stops the thread, writes */
    assert_int_equal(total(&f, "login.refused"), 2);
    json_decref(f.events);
}

static void
test_metrics(void **state)
{
    struct fake f;
    struct pdp_refusals *t = table(&f, 1);
    struct ig_buf b;
    (void)state;

    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.1", NULL, NULL,
                      "UNAUTHENTICATED");
    pdp_refusals_note(t, PDP_REFUSED_AUTH, "192.0.2.2", NULL, NULL,
                      "UNAUTHENTICATED");
    pdp_refusals_note(t, PDP_REFUSED_LOGIN, "192.0.2.2", NULL, NULL,
                      "UNKNOWN_APPROVER");
    pdp_refusals_throttled(t, PDP_THROTTLE_DELAYED);
    pdp_refusals_throttled(t, PDP_THROTTLE_DEVICE);
    pdp_refusals_throttled(t, PDP_THROTTLE_DEVICE);
    assert_int_equal(pdp_refusals_flush(t), IG_OK);
    ig_buf_init(&b, 1 << 16);
    assert_int_equal(pdp_refusals_render(t, &b), IG_OK);
    assert_int_equal(ig_buf_add(&b, "", 1), IG_OK);
    assert_non_null(strstr(b.data, "intentgate_refusals_total{kind=\"auth\"} "
                                   "2\n"));
    assert_non_null(strstr(b.data, "intentgate_refusals_total{kind=\"login\"} "
                                   "1\n"));
    assert_non_null(strstr(b.data, "intentgate_refusals_overflow_total 2\n"));
    assert_non_null(strstr(b.data, "intentgate_refusal_events_total 3\n"));
    assert_non_null(strstr(b.data, "intentgate_login_delayed_total 1\n"));
    assert_non_null(strstr(b.data, "intentgate_login_device_bypass_total 2\n"));
    ig_buf_release(&b);
    pdp_refusals_free(t);
    json_decref(f.events);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_flood_is_one_event_per_interval),
        cmocka_unit_test(test_keys_are_kept_apart),
        cmocka_unit_test(test_many_addresses_overflow),
        cmocka_unit_test(test_a_failed_write_loses_nothing),
        cmocka_unit_test(test_clock_going_back_writes),
        cmocka_unit_test(test_stop_writes_what_is_left),
        cmocka_unit_test(test_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
