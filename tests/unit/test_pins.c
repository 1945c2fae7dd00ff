/*
 * test_pins.c - pinned MCP tool definitions (core/ig_pins.h), attacked
 * first: a hostile upstream sends new, huge, deep or lying definitions; a
 * hand edit or a crash leaves the pin file in a state that must be
 * refused (naming the line) or, for a torn last line only, repaired. Then
 * the life of a pin: first seen, same, changed once, changed again,
 * accepted, and two handles on one file (the gateway and the CLI).
 * Every case works in a fresh directory whose path has spaces in it.
 */
#include "testutil.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_pins.h"

struct fx {
    char dir[PATH_MAX];
    char path[PATH_MAX + 32];
};

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/ig pins test XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/mcp pins.jsonl", f->dir);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;

    (void)unlink(f->path);
    (void)rmdir(f->dir);
    free(f);
    return 0;
}

/* A tool definition whose description is text. */
static json_t *
tool(const char *text)
{
    json_t *d = json_pack("{s:s, s:s, s:{s:s}}", "name", "search",
                          "description", text, "inputSchema", "type", "object");

    assert_non_null(d);
    return d;
}

static void
hash_of(const json_t *d, char out[IG_PIN_HASH_SIZE])
{
    struct ig_err err;

    assert_int_equal(ig_pins_hash(d, out, &err), IG_OK);
}

static struct ig_pins *
open_ok(const struct fx *f)
{
    struct ig_pins *p = NULL;
    struct ig_err err;

    if (ig_pins_open(f->path, &p, &err) != IG_OK)
        fail_msg("open: %s", err.msg);
    return p;
}

/* Check d for key; its state. */
static enum ig_pin_state
check(struct ig_pins *p, const char *key, const json_t *d)
{
    char h[IG_PIN_HASH_SIZE];
    enum ig_pin_state s;
    struct ig_err err;

    hash_of(d, h);
    if (ig_pins_check(p, key, h, d, &s, &err) != IG_OK)
        fail_msg("check %s: %s", key, err.msg);
    return s;
}

static size_t
file_size(const struct fx *f)
{
    struct stat sb;

    assert_int_equal(stat(f->path, &sb), 0);
    return (size_t)sb.st_size;
}

static void
append_raw(const struct fx *f, const char *text)
{
    int fd = open(f->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
}

/* Opening refuses the file with st and a message holding want. */
static void
open_refused(const struct fx *f, enum ig_status st, const char *want)
{
    struct ig_pins *p = (struct ig_pins *)1;
    struct ig_err err;

    assert_int_equal(ig_pins_open(f->path, &p, &err), st);
    assert_null(p);
    if (strstr(err.msg, want) == NULL)
        fail_msg("\"%s\" lacks \"%s\"", err.msg, want);
}

static size_t
npending(struct ig_pins *p)
{
    struct ig_err err;
    json_t *a;
    size_t n;

    assert_int_equal(ig_pins_pending(p, &a, &err), IG_OK);
    n = json_array_size(a);
    json_decref(a);
    return n;
}

static void
test_lifecycle(void **state)
{
    struct fx *f = *state;
    json_t *d1 = tool("one"), *d2 = tool("two"), *d3 = tool("three"), *a;
    char h1[IG_PIN_HASH_SIZE], h2[IG_PIN_HASH_SIZE], h3[IG_PIN_HASH_SIZE];
    struct ig_pins *p = open_ok(f);
    struct ig_err err;
    size_t size;

    hash_of(d1, h1);
    hash_of(d2, h2);
    hash_of(d3, h3);
    assert_int_equal(check(p, "gh/search", d1), IG_PIN_NEW);
    size = file_size(f);
    assert_int_equal(check(p, "gh/search", d1), IG_PIN_SAME);
    assert_int_equal(file_size(f), size); /* no write */
    assert_int_equal(check(p, "gh/search", d2), IG_PIN_CHANGED);
    size = file_size(f);
    assert_int_equal(check(p, "gh/search", d2), IG_PIN_CHANGED);
    assert_int_equal(file_size(f), size); /* once per (key, hash) */
    assert_int_equal(check(p, "gh/search", d3), IG_PIN_CHANGED);
    assert_true(file_size(f) > size);
    assert_int_equal(check(p, "gh/search", d1), IG_PIN_SAME);

    assert_int_equal(ig_pins_pending(p, &a, &err), IG_OK);
    assert_int_equal(json_array_size(a), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(a, 0), "hash")), h2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(a, 0), "pinned")), h1);
    assert_true(
        json_equal(json_object_get(json_array_get(a, 1), "definition"), d3));
    assert_non_null(json_object_get(json_array_get(a, 1), "seen_at"));
    json_decref(a);

    assert_int_equal(ig_pins_accept(p, "gh/search", h3, "alice", &err), IG_OK);
    assert_int_equal(check(p, "gh/search", d3), IG_PIN_SAME);
    assert_int_equal(npending(p), 1); /* h2 still pending */
    /* the old pin is a change now */
    assert_int_equal(check(p, "gh/search", d1), IG_PIN_CHANGED);
    assert_int_equal(npending(p), 2);
    ig_pins_free(p);

    p = open_ok(f); /* the fold of the file says the same */
    assert_int_equal(check(p, "gh/search", d3), IG_PIN_SAME);
    assert_int_equal(npending(p), 2);
    ig_pins_free(p);
    json_decref(d1);
    json_decref(d2);
    json_decref(d3);
}

static void
test_accept_refused(void **state)
{
    struct fx *f = *state;
    json_t *d1 = tool("one"), *d2 = tool("two"), *d3 = tool("three");
    char h1[IG_PIN_HASH_SIZE], h2[IG_PIN_HASH_SIZE], h3[IG_PIN_HASH_SIZE];
    struct ig_pins *p = open_ok(f);
    struct ig_err err;
    size_t size;

    hash_of(d1, h1);
    hash_of(d2, h2);
    hash_of(d3, h3);
    assert_int_equal(ig_pins_accept(p, "gh/search", h1, "alice", &err),
                     IG_ERR_NOTFOUND);
    assert_non_null(strstr(err.msg, "no tool gh/search"));
    assert_int_equal(check(p, "gh/search", d1), IG_PIN_NEW);
    assert_int_equal(ig_pins_accept(p, "gh/search", h1, "alice", &err),
                     IG_ERR_NOTFOUND);
    assert_non_null(strstr(err.msg, "nothing is pending"));
    assert_int_equal(check(p, "gh/search", d2), IG_PIN_CHANGED);
    size = file_size(f);
    assert_int_equal(ig_pins_accept(p, "gh/search", h3, "alice", &err),
                     IG_ERR_NOTFOUND);
    assert_non_null(strstr(err.msg, h2)); /* names what is pending */
    assert_int_equal(file_size(f), size);
    /* bad arguments */
    assert_int_equal(ig_pins_accept(p, "gh/search", h2, "al ice", &err),
                     IG_ERR_INVALID);
    assert_int_equal(ig_pins_accept(p, "gh/search", h2, "", &err),
                     IG_ERR_INVALID);
    assert_int_equal(ig_pins_accept(p, "gh/search", "sha256:AB", "a", &err),
                     IG_ERR_INVALID);
    assert_int_equal(file_size(f), size);
    assert_int_equal(ig_pins_accept(p, "gh/search", h2, "alice", &err), IG_OK);
    /* accepted once; not again */
    assert_int_equal(ig_pins_accept(p, "gh/search", h2, "alice", &err),
                     IG_ERR_NOTFOUND);
    ig_pins_free(p);
    json_decref(d1);
    json_decref(d2);
    json_decref(d3);
}

/* The gateway and the CLI, each with a handle on one file. */
static void
test_two_handles(void **state)
{
    struct fx *f = *state;
    json_t *d1 = tool("one"), *d2 = tool("two"), *d3 = tool("three"), *a;
    char h2[IG_PIN_HASH_SIZE];
    struct ig_pins *gw = open_ok(f), *cli = open_ok(f);
    struct ig_err err;

    hash_of(d2, h2);
    assert_int_equal(check(gw, "gh/search", d1), IG_PIN_NEW);
    assert_int_equal(check(cli, "gh/search", d1), IG_PIN_SAME);
    assert_int_equal(check(gw, "gh/search", d2), IG_PIN_CHANGED);
    assert_int_equal(ig_pins_pending(cli, &a, &err), IG_OK);
    assert_int_equal(json_array_size(a), 1);
    json_decref(a);
    /* both see the change as pending: the CLI's check writes nothing */
    assert_int_equal(check(cli, "gh/search", d2), IG_PIN_CHANGED);
    assert_int_equal(npending(gw), 1);
    assert_int_equal(ig_pins_accept(cli, "gh/search", h2, "bob", &err), IG_OK);
    assert_int_equal(check(gw, "gh/search", d2), IG_PIN_SAME);
    assert_int_equal(check(gw, "gh/search", d1), IG_PIN_CHANGED);
    assert_int_equal(check(gw, "other/x", d3), IG_PIN_NEW);
    assert_int_equal(check(cli, "other/x", d3), IG_PIN_SAME);
    assert_int_equal(npending(cli), 1);
    ig_pins_free(gw);
    ig_pins_free(cli);
    json_decref(d1);
    json_decref(d2);
    json_decref(d3);
}

#define TORN "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinn"

static void
test_torn_line(void **state)
{
    struct fx *f = *state;
    json_t *d1 = tool("one"), *d2 = tool("two");
    struct ig_pins *p = open_ok(f), *q;
    size_t size, size2;

    assert_int_equal(check(p, "gh/search", d1), IG_PIN_NEW);
    size = file_size(f);
    ig_pins_free(p);
    append_raw(f, TORN);
    p = open_ok(f); /* ignored when reading */
    q = open_ok(f);
    assert_int_equal(check(p, "gh/search", d1), IG_PIN_SAME);
    assert_int_equal(npending(p), 0);
    assert_int_equal(file_size(f), size + strlen(TORN));
    /* the next writer cuts it away and appends after the last newline */
    assert_int_equal(check(p, "gh/search", d2), IG_PIN_CHANGED);
    size2 = file_size(f);
    ig_pins_free(p);
    p = open_ok(f);
    assert_int_equal(npending(p), 1);
    assert_int_equal(npending(q), 1); /* the other handle follows */
    assert_int_equal(file_size(f), size2);
    ig_pins_free(p);
    ig_pins_free(q);
    json_decref(d1);
    json_decref(d2);
}

#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define LINE_PINNED                                                            \
    "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"          \
    "\"sha256:" H64 "\",\"key\":\"gh/search\"}\n"

static void
test_corrupt_middle(void **state)
{
    struct fx *f = *state;

    append_raw(f, LINE_PINNED);
    append_raw(f, "{\"garbage\n");
    append_raw(f, LINE_PINNED);
    open_refused(f, IG_ERR_INVALID, "line 2:");
}

/* Each text as the second line of a file is refused naming line 2. */
static void
test_bad_lines(void **state)
{
    static const char *const bad[] = {
        "\n",
        " " LINE_PINNED,
        "{\"event\":\"pinned\",\"at\":\"2026-12-02T10:00:00Z\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"x/y\"}\n", /* not canonical */
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"x/y\",\"x\":1}\n", /* extra member */
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"x/y\",\"key\":\"x/z\"}\n", /* dup */
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"x/\\u0000y\"}\n", /* NUL */
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"x y/z\"}\n", /* space */
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"xyz\"}\n", /* no slash */
        "{\"at\":\"2026-12-02T10:00:00+01:00\",\"event\":\"pinned\","
        "\"hash\":\"sha256:" H64 "\",\"key\":\"x/y\"}\n",
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"
        "\"sha256:" H64 "0\",\"key\":\"x/y\"}\n", /* long hash */
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"Pinned\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"x/y\"}\n",
        LINE_PINNED, /* pinned twice */
        "{\"at\":\"2026-12-02T10:00:00Z\",\"definition\":{},\"event\":"
        "\"changed\",\"hash\":\"sha256:" H64 "\",\"key\":\"gh/search\"}\n",
        "{\"at\":\"2026-12-02T10:00:00Z\",\"by\":\"root\",\"event\":"
        "\"pinned\",\"hash\":\"sha256:" H64 "\",\"key\":\"x/y\"}\n",
        "[]\n",
        "{\"at\":\"2026-12-02T10:00:00Z\",\"event\":\"pinned\",\"hash\":"
        "\"sha256:" H64 "\",\"key\":\"x/y\"}\r\n",
    };
    struct fx *f = *state;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        (void)unlink(f->path);
        append_raw(f, LINE_PINNED);
        append_raw(f, bad[i]);
        open_refused(f, IG_ERR_INVALID, "line 2:");
    }
}

/* A "changed" line whose hash is its definition's, for d. */
static void
changed_line(const json_t *d, const char *key, char *out, size_t n)
{
    char h[IG_PIN_HASH_SIZE];
    char *def = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);

    hash_of(d, h);
    assert_non_null(def);
    assert_true((size_t)snprintf(out, n,
                                 "{\"at\":\"2026-12-02T10:00:00Z\","
                                 "\"definition\":%s,\"event\":\"changed\","
                                 "\"hash\":\"%s\",\"key\":\"%s\"}\n",
                                 def, h, key) < n);
    free(def);
}

static void
test_edited_accept(void **state)
{
    struct fx *f = *state;
    json_t *d = tool("two");
    char line[1024];

    append_raw(f, LINE_PINNED);
    changed_line(d, "gh/search", line, sizeof(line));
    append_raw(f, line);
    ig_pins_free(open_ok(f)); /* so far so good */
    /* accepting a hash nobody saw: a hand edit */
    append_raw(f, "{\"at\":\"2026-12-02T10:00:00Z\",\"by\":\"root\","
                  "\"event\":\"accepted\",\"hash\":\"sha256:" H64 "\","
                  "\"key\":\"gh/search\"}\n");
    open_refused(f, IG_ERR_INVALID, "line 3:");
    json_decref(d);
}

/* A definition edited after it was seen no longer has its hash. */
static void
test_edited_definition(void **state)
{
    struct fx *f = *state;
    json_t *d = tool("two");
    char line[1024], *at;

    append_raw(f, LINE_PINNED);
    changed_line(d, "gh/search", line, sizeof(line));
    at = strstr(line, "\"two\"");
    assert_non_null(at);
    at[1] = 'T';
    append_raw(f, line);
    open_refused(f, IG_ERR_INVALID, "line 2: \"hash\" is not the definition");
    json_decref(d);
}

/* What a hostile upstream sends is refused before anything is written. */
static void
test_hostile_definitions(void **state)
{
    struct fx *f = *state;
    struct ig_pins *p = open_ok(f);
    json_t *d1 = tool("one"), *big, *deep, *v;
    char h[IG_PIN_HASH_SIZE], *text;
    enum ig_pin_state s = IG_PIN_SAME;
    struct ig_err err;
    size_t size, i;

    assert_int_equal(check(p, "gh/search", d1), IG_PIN_NEW);
    size = file_size(f);
    /* too large */
    text = malloc(IG_PIN_DEFINITION_MAX_BYTES + 1);
    assert_non_null(text);
    memset(text, 'a', IG_PIN_DEFINITION_MAX_BYTES);
    text[IG_PIN_DEFINITION_MAX_BYTES] = '\0';
    big = tool(text);
    free(text);
    hash_of(big, h);
    assert_int_equal(ig_pins_check(p, "gh/search", h, big, &s, &err),
                     IG_ERR_LIMIT);
    assert_int_equal(s, 0);
    /* as deep as a definition may be, hence one too deep for its line */
    deep = json_object();
    for (v = deep, i = 0; i < IG_JSON_MAX_DEPTH - 1; i++) {
        json_t *c = json_object();
        assert_int_equal(json_object_set_new(v, "a", c), 0);
        v = c;
    }
    hash_of(deep, h);
    assert_int_equal(ig_pins_check(p, "gh/search", h, deep, &s, &err),
                     IG_ERR_LIMIT);
    assert_int_equal(s, 0);
    /* a hash that is not the definition's, no definition, not an object */
    hash_of(d1, h);
    h[10] = h[10] == '0' ? '1' : '0';
    assert_int_equal(ig_pins_check(p, "gh/search", h, d1, &s, &err),
                     IG_ERR_INVALID);
    assert_int_equal(ig_pins_check(p, "gh/search", h, NULL, &s, &err),
                     IG_ERR_INVALID);
    v = json_string("x");
    hash_of(v, h);
    assert_int_equal(ig_pins_check(p, "gh/search", h, v, &s, &err),
                     IG_ERR_INVALID);
    assert_int_equal(file_size(f), size);
    assert_int_equal(npending(p), 0);
    ig_pins_free(p);
    json_decref(v);
    json_decref(d1);
    json_decref(big);
    json_decref(deep);
}

static void
test_bad_keys(void **state)
{
    static const char *const bad[] = {
        "",      "nokey", "/x",     "x/",         "a b/c",
        "a/b\n", "a/\tb", "a/\x7f", "a/\xc3\xa9",
    };
    struct fx *f = *state;
    struct ig_pins *p = open_ok(f);
    json_t *d = tool("one");
    char h[IG_PIN_HASH_SIZE], key[IG_PIN_KEY_MAX + 2];
    enum ig_pin_state s;
    struct ig_err err;
    size_t i;

    hash_of(d, h);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(ig_pins_check(p, bad[i], h, d, &s, &err),
                         IG_ERR_INVALID);
    assert_int_equal(ig_pins_check(p, NULL, h, d, &s, &err), IG_ERR_INVALID);
    memset(key, 'k', sizeof(key) - 1);
    key[1] = '/';
    key[IG_PIN_KEY_MAX + 1] = '\0';
    assert_int_equal(ig_pins_check(p, key, h, d, &s, &err), IG_ERR_INVALID);
    key[IG_PIN_KEY_MAX] = '\0';
    assert_int_equal(ig_pins_check(p, key, h, d, &s, &err), IG_OK);
    assert_int_equal(s, IG_PIN_NEW);
    /* bad hashes */
    assert_int_equal(ig_pins_check(p, "a/b", "sha256:" H64 "0", d, &s, &err),
                     IG_ERR_INVALID);
    assert_int_equal(ig_pins_check(p, "a/b", NULL, d, &s, &err),
                     IG_ERR_INVALID);
    assert_int_equal(
        ig_pins_check(p, "a/b",
                      "sha256:0123456789ABCDEF0123456789abcdef0123456789abcde"
                      "f0123456789abcdef",
                      d, &s, &err),
        IG_ERR_INVALID);
    assert_int_equal(s, 0);
    ig_pins_free(p);
    p = open_ok(f); /* the 300-byte key reads back */
    assert_int_equal(ig_pins_check(p, key, h, d, &s, &err), IG_OK);
    assert_int_equal(s, IG_PIN_SAME);
    ig_pins_free(p);
    json_decref(d);
}

/* A server changing a tool again and again fills at most its quota. */
static void
test_pending_cap(void **state)
{
    struct fx *f = *state;
    struct ig_pins *p = open_ok(f);
    char text[32];
    json_t *d;
    size_t i, size = 0;

    for (i = 0; i <= IG_PIN_PENDING_MAX + 2; i++) {
        (void)snprintf(text, sizeof(text), "v%zu", i);
        d = tool(text);
        assert_int_equal(check(p, "gh/search", d),
                         i == 0 ? IG_PIN_NEW : IG_PIN_CHANGED);
        json_decref(d);
        if (i == IG_PIN_PENDING_MAX)
            size = file_size(f);
    }
    assert_int_equal(file_size(f), size);
    assert_int_equal(npending(p), IG_PIN_PENDING_MAX);
    ig_pins_free(p);
    p = open_ok(f);
    assert_int_equal(npending(p), IG_PIN_PENDING_MAX);
    ig_pins_free(p);
}

/* Another process appends a bad line: the handle stops answering. */
static void
test_bad_append_later(void **state)
{
    struct fx *f = *state;
    struct ig_pins *p = open_ok(f);
    json_t *d = tool("one");
    char h[IG_PIN_HASH_SIZE];
    enum ig_pin_state s;
    struct ig_err err;

    hash_of(d, h);
    assert_int_equal(check(p, "gh/search", d), IG_PIN_NEW);
    append_raw(f, "{}\n");
    assert_int_equal(ig_pins_check(p, "gh/search", h, d, &s, &err),
                     IG_ERR_INVALID);
    assert_int_equal(s, 0);
    assert_non_null(strstr(err.msg, "line 2:"));
    assert_int_equal(ig_pins_check(p, "gh/search", h, d, &s, &err),
                     IG_ERR_INVALID);
    ig_pins_free(p);
    json_decref(d);
}

/* The file shrinking under a handle (a rewrite) is refused. */
static void
test_shrunk(void **state)
{
    struct fx *f = *state;
    struct ig_pins *p = open_ok(f);
    json_t *d = tool("one");
    char h[IG_PIN_HASH_SIZE];
    enum ig_pin_state s;
    struct ig_err err;

    hash_of(d, h);
    assert_int_equal(check(p, "gh/search", d), IG_PIN_NEW);
    assert_int_equal(truncate(f->path, 0), 0);
    assert_int_equal(ig_pins_check(p, "gh/search", h, d, &s, &err),
                     IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "shrank"));
    ig_pins_free(p);
    json_decref(d);
}

static void
test_modes(void **state)
{
    struct fx *f = *state;
    char link[PATH_MAX + 40];
    struct stat sb;
    mode_t old;

    old = umask(0);
    ig_pins_free(open_ok(f));
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    (void)unlink(f->path);
    (void)umask(0277);
    ig_pins_free(open_ok(f));
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    (void)umask(old);
    assert_int_equal(chmod(f->path, 0620), 0);
    open_refused(f, IG_ERR_IO, "written by group or others");
    assert_int_equal(chmod(f->path, 0644), 0); /* readable is fine */
    ig_pins_free(open_ok(f));
    /* a symlink at the path is refused */
    (void)snprintf(link, sizeof(link), "%s/link", f->dir);
    assert_int_equal(symlink(f->path, link), 0);
    {
        struct ig_pins *p = NULL;
        struct ig_err err;

        assert_int_equal(ig_pins_open(link, &p, &err), IG_ERR_IO);
        assert_null(p);
    }
    (void)unlink(link);
    /* a directory is refused */
    (void)unlink(f->path);
    assert_int_equal(mkdir(f->path, 0700), 0);
    open_refused(f, IG_ERR_IO, f->path);
    assert_int_equal(rmdir(f->path), 0);
}

/* Threads checking through one handle: each key is pinned once. */
struct worker {
    struct ig_pins *p;
    int ok;
};

static void *
worker_run(void *arg)
{
    struct worker *w = arg;
    char key[32], h[IG_PIN_HASH_SIZE];
    enum ig_pin_state s;
    struct ig_err err;
    json_t *d = tool("one");
    int i;

    w->ok = ig_pins_hash(d, h, &err) == IG_OK;
    for (i = 0; i < 50 && w->ok; i++) {
        (void)snprintf(key, sizeof(key), "a/t%d", i);
        w->ok = ig_pins_check(w->p, key, h, d, &s, &err) == IG_OK &&
                (s == IG_PIN_NEW || s == IG_PIN_SAME);
    }
    json_decref(d);
    return NULL;
}

static void
test_threads(void **state)
{
    struct fx *f = *state;
    struct ig_pins *p = open_ok(f), *q = open_ok(f);
    struct worker w[4] = {{p, 0}, {p, 0}, {q, 0}, {q, 0}};
    pthread_t t[4];
    char *text;
    size_t i, n = 0, len;

    for (i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
    for (i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_true(w[i].ok);
    }
    text = tu_read_file(f->path, &len);
    for (i = 0; i < len; i++)
        n += text[i] == '\n';
    assert_int_equal(n, 50); /* one "pinned" per key */
    free(text);
    ig_pins_free(p);
    ig_pins_free(q);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_accept_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_middle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edited_accept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edited_definition, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hostile_definitions, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_append_later, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shrunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
