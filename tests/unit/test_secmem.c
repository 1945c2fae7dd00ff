/*
 * test_secmem.c - the pooled secret buffers: zeroed on get, wiped on put,
 * reused, large requests on their own allocation, many threads at once.
 */
#include "testutil.h"

#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "ig_secmem.h"

static int
all_zero(const unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

static void
test_get_is_zeroed_and_put_wipes(void **state)
{
    unsigned char *p, *q;
    (void)state;

    assert_int_equal(sodium_init() >= 0, 1);
    p = ig_secmem_get(100);
    assert_non_null(p);
    assert_true(all_zero(p, IG_SECMEM_BLOCK));
    memset(p, 'S', IG_SECMEM_BLOCK); /* the whole block is usable */
    ig_secmem_put(p);
    /* The pool hands the same block back, wiped. */
    q = ig_secmem_get(IG_SECMEM_BLOCK);
    assert_ptr_equal(q, p);
    assert_true(all_zero(q, IG_SECMEM_BLOCK));
    ig_secmem_put(q);
    ig_secmem_put(NULL);
    ig_secmem_drain();
}

static void
test_large_request_gets_its_own_block(void **state)
{
    size_t n = IG_SECMEM_BLOCK * 3 + 7;
    unsigned char *p;
    (void)state;

    p = ig_secmem_get(n);
    assert_non_null(p);
    assert_true(all_zero(p, n));
    memset(p, 'L', n);
    ig_secmem_put(p); /* freed, not pooled */
    ig_secmem_drain();
}

static void
test_pool_keeps_at_most_keep(void **state)
{
    unsigned char *p[IG_SECMEM_KEEP + 8];
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        p[i] = ig_secmem_get(16);
        assert_non_null(p[i]);
        p[i][0] = 1;
    }
    for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        ig_secmem_put(p[i]);
    /* Every block given out now is wiped, pooled or fresh. */
    for (i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        p[i] = ig_secmem_get(16);
        assert_non_null(p[i]);
        assert_int_equal(p[i][0], 0);
    }
    for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        ig_secmem_put(p[i]);
    ig_secmem_drain();
}

static void *
churn(void *arg)
{
    int i, *bad = arg;

    for (i = 0; i < 2000; i++) {
        unsigned char *p = ig_secmem_get(64);

        if (p == NULL || !all_zero(p, 64)) {
            *bad = 1;
            return NULL;
        }
        memset(p, 0xAA, 64);
        ig_secmem_put(p);
    }
    return NULL;
}

static void
test_threads(void **state)
{
    pthread_t t[8];
    int bad[8] = {0}, i;
    (void)state;

    for (i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, &bad[i]), 0);
    for (i = 0; i < 8; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(bad[i], 0);
    }
    ig_secmem_drain();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_is_zeroed_and_put_wipes),
        cmocka_unit_test(test_large_request_gets_its_own_block),
        cmocka_unit_test(test_pool_keeps_at_most_keep),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
