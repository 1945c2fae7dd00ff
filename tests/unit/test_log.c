/*
 * test_log.c - ig_log (core/ig_log.c): one JSON object per line, and never
 * a line that silently lost a field. Every allocation jansson makes while
 * one line is written is failed in turn; each time the line written must
 * be either the whole line or the fixed log_lost line naming the event.
 */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_log.h"

/* Allocations jansson may still make; negative: no limit. */
static long allocs_left = -1;
static long allocs_made;

static void *
counting_malloc(size_t n)
{
    allocs_made++;
    if (allocs_left == 0)
        return NULL;
    if (allocs_left > 0)
        allocs_left--;
    return malloc(n);
}

/* Run ig_log with stderr sent to a file; return what it wrote (malloc'd). */
static char *
log_captured(const char *event, json_t *fields, long budget)
{
    char path[] = "/tmp/ig_test_log_XXXXXX";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    char *text;

    assert_true(fd >= 0 && saved >= 0);
    (void)fflush(stderr);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    allocs_left = budget;
    allocs_made = 0;
    json_set_alloc_funcs(counting_malloc, free);
    ig_log("info", event, fields);
    json_set_alloc_funcs(malloc, free);
    allocs_left = -1;
    (void)fflush(stderr);
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    (void)close(saved);
    (void)close(fd);
    text = tu_read_file(path, NULL);
    (void)unlink(path);
    return text;
}

/* A fields object made with the normal allocator. */
static json_t *
fields_new(void)
{
    json_t *f = json_pack("{s:s, s:I}", "intent_id", "abc", "count", 7);

    assert_non_null(f);
    return f;
}

static void
test_whole_line(void **state)
{
    char *text = log_captured("test.event", fields_new(), -1);
    json_error_t jerr;
    json_t *line;

    (void)state;
    assert_non_null(strchr(text, '\n'));
    assert_true(strchr(text, '\n')[1] == '\0'); /* exactly one line */
    line = json_loads(text, 0, &jerr);
    assert_non_null(line);
    assert_string_equal(json_string_value(json_object_get(line, "event")),
                        "test.event");
    assert_string_equal(json_string_value(json_object_get(line, "level")),
                        "info");
    assert_non_null(json_object_get(line, "time"));
    assert_string_equal(json_string_value(json_object_get(line, "intent_id")),
                        "abc");
    assert_int_equal(json_integer_value(json_object_get(line, "count")), 7);
    json_decref(line);
    free(text);
}

/* Fail the k-th allocation for every k ig_log makes: whole or log_lost. */
static void
test_out_of_memory_never_short(void **state)
{
    long k, needed;
    char *text;
    json_t *line;
    int lost = 0;

    (void)state;
    free(log_captured("test.event", fields_new(), -1));
    needed = allocs_made;
    assert_true(needed > 0);
    for (k = 0; k < needed; k++) {
        text = log_captured("test.event", fields_new(), k);
        line = json_loads(text, 0, NULL);
        if (line == NULL)
            fail_msg("budget %ld: not one JSON line: %s", k, text);
        if (json_object_get(line, "lost_event") != NULL) {
            assert_string_equal(
                json_string_value(json_object_get(line, "event")), "log_lost");
            assert_string_equal(
                json_string_value(json_object_get(line, "lost_event")),
                "test.event");
            lost++;
        } else {
            if (json_object_get(line, "time") == NULL ||
                json_object_get(line, "level") == NULL ||
                json_object_get(line, "event") == NULL ||
                json_object_get(line, "intent_id") == NULL ||
                json_object_get(line, "count") == NULL)
                fail_msg("budget %ld: a line missing a field: %s", k, text);
        }
        json_decref(line);
        free(text);
    }
    assert_true(lost > 0); /* the failures were reached */
}

/* An event name that is not plain text is not copied into log_lost. */
static void
test_lost_event_name_quoted_safely(void **state)
{
    char *text = log_captured("bad\"name", NULL, 0);
    json_t *line = json_loads(text, 0, NULL);

    (void)state;
    assert_non_null(line);
    assert_string_equal(json_string_value(json_object_get(line, "lost_event")),
                        "?");
    json_decref(line);
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_line),
        cmocka_unit_test(test_out_of_memory_never_short),
        cmocka_unit_test(test_lost_event_name_quoted_safely),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
