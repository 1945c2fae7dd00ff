/*
 * test_ini.c - the INI reader both config files use: what it hands to the
 * callbacks, and every malformed line refused with the name and line,
 * never cut short or skipped.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_ini.h"
#include "ig_limits.h"

/* The callbacks write "LINE [kind|id]" and "LINE key=value" lines here. */
struct trace {
    char text[1024];
    size_t len;
    int stop_at;     /* a key callback on this line fails */
    size_t last_len; /* the last value's length */
};

static void
add(struct trace *t, const char *s)
{
    size_t n = strlen(s);

    assert_true(n < sizeof(t->text) - t->len);
    memcpy(t->text + t->len, s, n + 1);
    t->len += n;
}

static enum ig_status
on_section(void *ctx, int line, const char *kind, const char *id)
{
    char s[128];

    (void)snprintf(s, sizeof(s), "%d [%s|%s]\n", line, kind,
                   id != NULL ? id : "-");
    add(ctx, s);
    return IG_OK;
}

/* A long value is traced as "(long)", its length kept. */
static enum ig_status
on_key(void *ctx, int line, const char *key, const char *value)
{
    struct trace *t = ctx;
    char s[64];

    if (line == t->stop_at)
        return IG_ERR_NOTFOUND;
    (void)snprintf(s, sizeof(s), "%d %s=", line, key);
    add(t, s);
    t->last_len = strlen(value);
    add(t, t->last_len < 100 ? value : "(long)");
    add(t, "\n");
    return IG_OK;
}

static const struct ig_ini_handler both = {on_section, on_key};
static const struct ig_ini_handler keys_only = {NULL, on_key};

static enum ig_status
parse(const char *text, size_t len, const struct ig_ini_handler *h,
      struct trace *t, struct ig_err *err)
{
    memset(t, 0, sizeof(*t));
    memset(err, 0, sizeof(*err));
    return ig_ini_parse("f.conf", text, len, h, t, err);
}

static void
test_what_the_callbacks_see(void **state)
{
    static const char text[] = "# comment\n"
                               "a = 1\n"
                               "\n"
                               "  b=two words   # note\r\n"
                               "label = x#y\n"
                               "empty =\n"
                               "[policy]   # section comment\n"
                               "[ agent \t bot-1 ]\n"
                               "c = last";
    struct trace t;
    struct ig_err err;
    (void)state;

    assert_int_equal(parse(text, strlen(text), &both, &t, &err), IG_OK);
    assert_string_equal(t.text, "2 a=1\n"
                                "4 b=two words\n"
                                "5 label=x#y\n"
                                "6 empty=\n"
                                "7 [policy|-]\n"
                                "8 [agent|bot-1]\n"
                                "9 c=last\n");
    /* Nothing at all is a valid, empty file. */
    assert_int_equal(parse("", 0, &both, &t, &err), IG_OK);
    assert_string_equal(t.text, "");
}

static void
expect(const char *text, size_t len, const struct ig_ini_handler *h,
       enum ig_status want, const char *msg, int line)
{
    struct trace t;
    struct ig_err err;

    assert_int_equal(parse(text, len, h, &t, &err), want);
    if (strstr(err.msg, msg) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, msg);
    assert_int_equal(err.line, line);
}

static void
test_malformed_lines(void **state)
{
    (void)state;
#define E(text, msg, line)                                                     \
    expect(text, sizeof(text) - 1, &both, IG_ERR_INVALID, msg, line)
    E("a = 1\njust words\n", "f.conf:2: expected key = value", 2);
    E("= 1\n", "f.conf:1: missing key before '='", 1);
    E("two words = 1\n", "f.conf:1: key \"two words\" contains a space", 1);
    E("[agent\n", "f.conf:1: malformed section header", 1);
    E("[agent] x\n", "f.conf:1: malformed section header", 1);
    E("[agent]]\n", "f.conf:1: malformed section header", 1);
    E("[ ]\n", "f.conf:1: empty section header", 1);
    E("a = 1\nb = x\0y\n", "f.conf:2: NUL byte", 2);
    E("a = \0\n", "f.conf:1: NUL byte", 1);
    E("a = 1\x1b[31m\n", "f.conf:1: control character 0x1b", 1);
    E("a = 1\rb = 2\n", "f.conf:1: control character 0x0d", 1);
    E("a = \xc3\x28\n", "f.conf:1: the line is not valid UTF-8", 1);
    E("x = \xed\xa0\x80\n", "f.conf:1: the line is not valid UTF-8", 1);
#undef E
    /* A file without sections refuses a header. */
    expect("a = 1\n[x]\n", 10, &keys_only, IG_ERR_INVALID,
           "f.conf:2: unexpected section header", 2);
}

/* A line of IG_INI_LINE_MAX bytes is read whole; one byte more is an
   error naming the line, never a shorter line. */
static void
test_long_lines(void **state)
{
    size_t n = 4 + IG_INI_LINE_MAX + 1;
    char *text = malloc(n + 1);
    struct trace t;
    struct ig_err err;
    (void)state;

    assert_non_null(text);
    memcpy(text, "a=1\n", 4);
    memcpy(text + 4, "k=", 2);
    memset(text + 6, 'v', IG_INI_LINE_MAX - 2);
    text[4 + IG_INI_LINE_MAX] = '\n';
    assert_int_equal(parse(text, n, &keys_only, &t, &err), IG_OK);
    assert_string_equal(t.text, "1 a=1\n2 k=(long)\n");
    assert_int_equal(t.last_len, IG_INI_LINE_MAX - 2);
    text[4 + IG_INI_LINE_MAX] = 'v';
    assert_int_equal(parse(text, n, &keys_only, &t, &err), IG_ERR_LIMIT);
    assert_non_null(strstr(err.msg, "f.conf:2: line longer than"));
    assert_int_equal(err.line, 2);
    assert_string_equal(t.text, "1 a=1\n"); /* nothing of line 2 */
    free(text);
}

/* A callback's failure stops the reading and is returned as it is. */
static void
test_callback_status(void **state)
{
    struct trace t;
    struct ig_err err;
    (void)state;

    memset(&t, 0, sizeof(t));
    t.stop_at = 2;
    assert_int_equal(ig_ini_parse("f", "a=1\nb=2\nc=3\n", 12, &both, &t, &err),
                     IG_ERR_NOTFOUND);
    assert_string_equal(t.text, "1 a=1\n");
}

static void
test_read_files(void **state)
{
    char dir[] = "/tmp/test_ini_XXXXXX", path[64];
    struct trace t;
    struct ig_err err;
    FILE *f;
    (void)state;

    assert_non_null(mkdtemp(dir));
    memset(&t, 0, sizeof(t));
    (void)snprintf(path, sizeof(path), "%s/missing.conf", dir);
    assert_int_equal(ig_ini_read(path, &both, &t, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, path));
    /* A directory and a FIFO are refused, the FIFO without blocking. */
    assert_int_equal(ig_ini_read(dir, &both, &t, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    (void)snprintf(path, sizeof(path), "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(ig_ini_read(path, &both, &t, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_int_equal(unlink(path), 0);
    (void)snprintf(path, sizeof(path), "%s/ok.conf", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs("[s]\nk = v\n", f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(ig_ini_read(path, &both, &t, &err), IG_OK);
    assert_string_equal(t.text, "1 [s|-]\n2 k=v\n");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_what_the_callbacks_see),
        cmocka_unit_test(test_malformed_lines),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_callback_status),
        cmocka_unit_test(test_read_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
