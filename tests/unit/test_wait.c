/*
 * test_wait.c - the long-poll registry (pdp_wait.c) without a daemon: the
 * caps in all and per principal, a slot given back when its request ends,
 * and the stop race - a poll that registers after the stop woke everyone
 * must not park (it would hold the stop for up to a minute).
 *
 * Only the registry's bookkeeping runs here: no test parks a request (that
 * suspends a real connection), so every request is a bare struct.
 */
#include "testutil.h"

#include <string.h>

#include "pdp_config.h"
#include "pdp_int.h"

#define ID "00000000-0000-4000-8000-000000000001"

struct fixture {
    struct pdp_config cfg;
    struct pdp_server srv;
    struct pdp_principal a, b;
    struct pdp_req req[8];
};

static int
setup(void **state)
{
    static struct fixture f;

    memset(&f, 0, sizeof(f));
    f.cfg.max_waiters = 3;
    f.cfg.max_waiters_per_principal = 2;
    f.srv.cfg = &f.cfg;
    if (pdp_waiters_new(&f.srv, &f.srv.waiters) != IG_OK)
        return -1;
    *state = &f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    pdp_waiters_free(f->srv.waiters);
    return 0;
}

static void
test_caps_and_slots_given_back(void **state)
{
    struct fixture *f = *state;
    struct pdp_waiters *ws = f->srv.waiters;

    assert_int_equal(pdp_waiters_add(ws, &f->req[0], ID, &f->a, 1e9), 0);
    assert_int_equal(pdp_waiters_add(ws, &f->req[1], ID, &f->a, 1e9), 0);
    /* The principal's cap, then the total. */
    assert_int_equal(pdp_waiters_add(ws, &f->req[2], ID, &f->a, 1e9), -2);
    assert_int_equal(pdp_waiters_add(ws, &f->req[3], ID, &f->b, 1e9), 0);
    assert_int_equal(pdp_waiters_add(ws, &f->req[4], ID, &f->b, 1e9), -2);
    assert_int_equal(pdp_waiters_parked(ws), 3);
    /* A request that ends (its client went away) gives its slot back. */
    pdp_waiters_remove(ws, &f->req[0]);
    assert_int_equal(pdp_waiters_parked(ws), 2);
    assert_int_equal(pdp_waiters_add(ws, &f->req[5], ID, &f->a, 1e9), 0);
    /* Woken before it parked: it answers now and leaves the registry. */
    pdp_waiters_notify(ws, ID);
    assert_int_equal(pdp_waiters_park(ws, &f->req[5], 1e9), -1);
    assert_int_equal(pdp_waiters_park(ws, &f->req[1], 1e9), -1);
    assert_int_equal(pdp_waiters_park(ws, &f->req[3], 1e9), -1);
    assert_int_equal(pdp_waiters_parked(ws), 0);
}

static void
test_no_poll_registers_after_the_stop(void **state)
{
    struct fixture *f = *state;
    struct pdp_waiters *ws = f->srv.waiters;

    /* Registered before the stop: woken by it, answers at once. */
    assert_int_equal(pdp_waiters_add(ws, &f->req[0], ID, &f->a, 1e9), 0);
    pdp_waiters_resume_all(ws);
    assert_int_equal(pdp_waiters_park(ws, &f->req[0], 1e9), -1);
    /* Past the request's own look at `stopping`, registering only after
       the stop woke everyone: refused, so it answers at once instead of
       parking until its deadline while the stop waits for it. */
    assert_int_not_equal(pdp_waiters_add(ws, &f->req[1], ID, &f->b, 1e9), 0);
    assert_int_equal(pdp_waiters_parked(ws), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_caps_and_slots_given_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_poll_registers_after_the_stop,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
