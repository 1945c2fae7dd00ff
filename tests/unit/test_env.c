/*
 * test_env.c - ig_env_take: a secret taken from the environment is gone
 * from getenv AND from /proc/self/environ (the bytes the kernel placed
 * at exec), which plain unsetenv leaves behind.
 *
 * The process re-executes itself once with the variables set at exec
 * time, so they live where a real service's would: in the initial
 * environment block.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_env.h"

#define SECRET "igt-secret-0123456789abcdef"
#define LONGSECRET "igt-long-secret-0123456789abcdef0123456789"

/* 1 when /proc/self/environ holds needle. */
static int
environ_has(const char *needle)
{
    size_t len = 0, n = strlen(needle), i;
    char *text = tu_read_file("/proc/self/environ", &len);
    int found = 0;

    for (i = 0; i + n <= len && !found; i++)
        found = memcmp(text + i, needle, n) == 0;
    free(text);
    return found;
}

static void
test_take_wipes_proc_environ(void **state)
{
    char out[128];

    (void)state;
    assert_true(environ_has(SECRET)); /* placed at exec */
    assert_int_equal(ig_env_take("IGT_SECRET", out, sizeof(out)), IG_OK);
    assert_string_equal(out, SECRET);
    assert_null(getenv("IGT_SECRET"));
    assert_false(environ_has(SECRET));
    /* Gone: a second take finds nothing. */
    assert_int_equal(ig_env_take("IGT_SECRET", out, sizeof(out)),
                     IG_ERR_NOTFOUND);
    assert_string_equal(out, "");
}

static void
test_take_too_long_still_wipes(void **state)
{
    char out[8];

    (void)state;
    assert_true(environ_has(LONGSECRET));
    assert_int_equal(ig_env_take("IGT_LONG", out, sizeof(out)), IG_ERR_LIMIT);
    assert_string_equal(out, "");
    assert_null(getenv("IGT_LONG"));
    assert_false(environ_has(LONGSECRET));
}

static void
test_wipe_and_unset_neighbours_kept(void **state)
{
    char out[64];

    (void)state;
    ig_env_wipe("IGT_WIPED");
    assert_null(getenv("IGT_WIPED"));
    assert_false(environ_has("wiped-value-42"));
    /* Another variable is untouched; an empty one counts as unset. */
    assert_string_equal(getenv("IGT_KEEP"), "keep-me");
    assert_true(environ_has("IGT_KEEP=keep-me"));
    assert_int_equal(ig_env_take("IGT_EMPTY", out, sizeof(out)),
                     IG_ERR_NOTFOUND);
    assert_int_equal(ig_env_take("IGT_NONE", out, sizeof(out)),
                     IG_ERR_NOTFOUND);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_wipes_proc_environ),
        cmocka_unit_test(test_take_too_long_still_wipes),
        cmocka_unit_test(test_wipe_and_unset_neighbours_kept),
    };
    static char e1[] = "IGT_SECRET=" SECRET, e2[] = "IGT_LONG=" LONGSECRET,
                e3[] = "IGT_WIPED=wiped-value-42", e4[] = "IGT_KEEP=keep-me",
                e5[] = "IGT_EMPTY=", e6[] = "IGT_CHILD=1";
    char *env[] = {e1, e2, e3, e4, e5, e6, NULL};

    if (getenv("IGT_CHILD") == NULL) {
        if (argc < 1)
            return 2;
        (void)execve("/proc/self/exe", argv, env);
        perror("execve");
        return 2;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
