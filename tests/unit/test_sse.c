/*
 * test_sse.c - the text/event-stream parser and writer (net/ig_sse.c),
 * hostile input first: caps, NUL bytes, CR|LF split across chunks, every
 * split point of a stream, a partial BOM; then the WHATWG examples.
 *
 * Every event dispatched is recorded as one text line
 * "TYPE|ID|RETRY|DATA" (DATA with "\n" as "\\n" and NUL as "\\0"), so a
 * test compares the whole sequence with one string.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_sse.h"

#define LOG_MAX 8192

struct rec {
    char log[LOG_MAX];
    size_t len;
    int stop_after; /* stop (return 1) at this event number; 0: never */
    int count;
};

static void
put(struct rec *r, const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const char *e = s[i] == '\n' ? "\\n" : s[i] == '\0' ? "\\0" : NULL;
        size_t k = e != NULL ? 2 : 1;

        assert_true(r->len + k < LOG_MAX);
        memcpy(r->log + r->len, e != NULL ? e : s + i, k);
        r->len += k;
    }
    r->log[r->len] = '\0';
}

static int
on_event(void *ctx, const struct ig_sse_event *ev)
{
    struct rec *r = ctx;
    char retry[32];

    assert_int_equal(ev->data[ev->data_len], '\0');
    put(r, ev->type, ev->type_len);
    put(r, "|", 1);
    put(r, ev->id, ev->id_len);
    (void)snprintf(retry, sizeof(retry), "|%ld|", ev->retry_ms);
    put(r, retry, strlen(retry));
    put(r, ev->data, ev->data_len);
    put(r, ";", 1);
    r->count++;
    return r->stop_after != 0 && r->count >= r->stop_after;
}

/* Parse n bytes of s fed in chunks cut at the cuts[] offsets (ncuts of
   them, ascending); the recorded log, or NULL when a feed failed (*st). */
static const char *
parse_cut(struct rec *r, const char *s, size_t n, const size_t *cuts,
          size_t ncuts, size_t max, enum ig_status *st)
{
    struct ig_sse p;
    size_t i, from = 0, to;
    struct ig_err err;

    memset(r, 0, sizeof(*r));
    ig_sse_init(&p, max);
    *st = IG_OK;
    for (i = 0; i <= ncuts && *st == IG_OK; i++) {
        to = i < ncuts ? cuts[i] : n;
        *st = ig_sse_feed(&p, s + from, to - from, on_event, r, &err);
        from = to;
    }
    ig_sse_release(&p);
    return *st == IG_OK ? r->log : NULL;
}

static const char *
parse_all(struct rec *r, const char *s, size_t n)
{
    enum ig_status st;
    const char *got = parse_cut(r, s, n, NULL, 0, 4096, &st);

    assert_int_equal(st, IG_OK);
    return got;
}

#define PARSE(r, lit) parse_all(r, lit, sizeof(lit) - 1)

/* ---- hostile input ---- */

static void
test_cap(void **state)
{
    struct ig_sse p;
    struct ig_err err;
    struct rec r;
    char big[64];

    (void)state;
    memset(&r, 0, sizeof(r));
    memset(big, 'a', sizeof(big));
    /* One line longer than the cap, with no line end ever. */
    ig_sse_init(&p, 16);
    assert_int_equal(ig_sse_feed(&p, "data: ", 6, on_event, &r, &err), IG_OK);
    assert_int_equal(ig_sse_feed(&p, big, 10, on_event, &r, &err), IG_OK);
    assert_int_equal(ig_sse_feed(&p, big, 1, on_event, &r, &err), IG_ERR_LIMIT);
    assert_non_null(strstr(err.msg, "16 bytes"));
    /* Unusable after: even a harmless feed fails. */
    assert_int_equal(ig_sse_feed(&p, "\n\n", 2, on_event, &r, &err),
                     IG_ERR_LIMIT);
    assert_int_equal(r.count, 0);
    ig_sse_release(&p);

    /* Short data lines that add up past the cap. */
    ig_sse_init(&p, 16);
    assert_int_equal(ig_sse_feed(&p, "data:aaaa\ndata:bbbb\ndata:cccc\n", 30,
                                 on_event, &r, &err),
                     IG_ERR_LIMIT);
    ig_sse_release(&p);

    /* Exactly at the cap: the data "aaaaaaa\n" (8) and "data:bbbbbbb" (12)
       would be 20; "data:aaaaaaaaaaa" is 16 with nothing buffered. */
    ig_sse_init(&p, 16);
    assert_int_equal(
        ig_sse_feed(&p, "data:aaaaaaaaaaa\n\n", 18, on_event, &r, &err), IG_OK);
    assert_string_equal(r.log, "message||-1|aaaaaaaaaaa;");
    ig_sse_release(&p);

    /* A comment is a line too: capped. */
    ig_sse_init(&p, 16);
    assert_int_equal(
        ig_sse_feed(&p, ":0123456789abcdefg", 18, on_event, &r, &err),
        IG_ERR_LIMIT);
    ig_sse_release(&p);

    /* Many short lines under the cap never add up (nothing buffered). */
    ig_sse_init(&p, 16);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(
            ig_sse_feed(&p, ": keep-alive\n", 13, on_event, &r, &err), IG_OK);
    ig_sse_release(&p);
}

static void
test_stop(void **state)
{
    static const char s[] = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    struct ig_sse p;
    struct ig_err err;
    struct rec r;

    (void)state;
    memset(&r, 0, sizeof(r));
    r.stop_after = 2;
    ig_sse_init(&p, 64);
    assert_int_equal(ig_sse_feed(&p, s, sizeof(s) - 1, on_event, &r, &err),
                     IG_ERR_INVALID);
    assert_string_equal(r.log, "message||-1|1;message||-1|2;");
    assert_int_equal(ig_sse_feed(&p, s, 2, on_event, &r, &err), IG_ERR_INVALID);
    assert_int_equal(r.count, 2);
    ig_sse_release(&p);
}

static void
test_nul_bytes(void **state)
{
    static const char s[] = "data: a\0b\n\0bad\ndata\0: x\n\n";
    struct rec r;

    (void)state;
    /* NUL passes through in data; "\0bad" and "data\0" are unknown fields */
    assert_string_equal(PARSE(&r, s), "message||-1|a\\0b;");
}

static void
test_id_with_nul(void **state)
{
    static const char s[] = "id: 1\n\nid: a\0b\ndata: x\n\n";
    struct rec r;

    (void)state;
    assert_string_equal(PARSE(&r, s), "message|1|-1|x;");
}

static void
test_last_id(void **state)
{
    struct ig_sse p;
    struct ig_err err;
    struct rec r;
    size_t n;

    (void)state;
    memset(&r, 0, sizeof(r));
    ig_sse_init(&p, 64);
    assert_string_equal(ig_sse_last_id(&p, &n), "");
    assert_int_equal(n, 0);
    /* A block without data sets the last id; nothing is dispatched. */
    assert_int_equal(ig_sse_feed(&p, "id: 7\n\n", 7, on_event, &r, &err),
                     IG_OK);
    assert_string_equal(ig_sse_last_id(&p, &n), "7");
    assert_int_equal(r.count, 0);
    /* An id inside an unfinished block is not the last id yet. */
    assert_int_equal(
        ig_sse_feed(&p, "id: 8\ndata: x\n", 14, on_event, &r, &err), IG_OK);
    assert_string_equal(ig_sse_last_id(&p, NULL), "7");
    assert_int_equal(ig_sse_feed(&p, "\n", 1, on_event, &r, &err), IG_OK);
    assert_string_equal(ig_sse_last_id(&p, NULL), "8");
    /* The id persists across blocks that do not name one. */
    assert_int_equal(ig_sse_feed(&p, "data: y\n\n", 9, on_event, &r, &err),
                     IG_OK);
    assert_string_equal(r.log, "message|8|-1|x;message|8|-1|y;");
    ig_sse_release(&p);
}

static void
test_retry(void **state)
{
    static const char s[] = "retry: 1000\ndata: a\n\n"
                            "retry: 10a\ndata: b\n\n"
                            "retry: -5\ndata: c\n\n"
                            "retry:\ndata: d\n\n"
                            "retry: 99999999999999999999999\ndata: e\n\n"
                            "retry:  7\ndata: f\n\n"
                            "retry: 0\ndata: g\n\n";
    struct rec r;

    (void)state;
    assert_string_equal(PARSE(&r, s), "message||1000|a;message||1000|b;"
                                      "message||1000|c;message||1000|d;"
                                      "message||1000|e;message||1000|f;"
                                      "message||0|g;");
}

static void
test_comments_and_unknown(void **state)
{
    static const char s[] = ":comment\n: \n:\ndata: a\n:between\ndata: b\n"
                            "foo: bar\nData: no\n\n";
    struct rec r;

    (void)state;
    assert_string_equal(PARSE(&r, s), "message||-1|a\\nb;");
}

static void
test_line_ends(void **state)
{
    static const char s[] = "data: a\r\rdata: b\n\ndata: c\r\n\r\n"
                            "data: d\r\ndata: e\r\r\n";
    struct rec r;

    (void)state;
    /* "\r\r\n" is CR, then CRLF: two line ends, so d\ne is dispatched. */
    assert_string_equal(PARSE(&r, s), "message||-1|a;message||-1|b;"
                                      "message||-1|c;message||-1|d\\ne;");
}

static void
test_crlf_split(void **state)
{
    struct rec r;
    enum ig_status st;
    const char *got;
    static const char s[] = "data: a\r\ndata: b\r\n\r\n";
    size_t cut1 = 8, cuts2[] = {8, 17};

    (void)state;
    /* Split between CR and LF: one line end, not two (an extra empty line
       would dispatch "a" alone). */
    got = parse_cut(&r, s, sizeof(s) - 1, &cut1, 1, 64, &st);
    assert_string_equal(got, "message||-1|a\\nb;");
    got = parse_cut(&r, s, sizeof(s) - 1, cuts2, 2, 64, &st);
    assert_string_equal(got, "message||-1|a\\nb;");
}

static void
test_bom(void **state)
{
    struct rec r;
    enum ig_status st;
    static const char s[] = "\xEF\xBB\xBF"
                            "data: x\n\n";
    size_t cuts[] = {1, 2, 3};

    (void)state;
    assert_string_equal(PARSE(&r, s), "message||-1|x;");
    assert_string_equal(parse_cut(&r, s, sizeof(s) - 1, cuts, 3, 64, &st),
                        "message||-1|x;");
    /* Only one BOM is skipped: the second one is part of the field name. */
    assert_string_equal(PARSE(&r, "\xEF\xBB\xBF\xEF\xBB\xBF"
                                  "data: x\n\n"),
                        "");
    /* A partial BOM is not dropped: its bytes start the first line. */
    assert_string_equal(PARSE(&r, "\xEF"
                                  "data: x\n\n"),
                        "");
    assert_string_equal(
        parse_cut(&r, "\xEF\xBB\ndata: y\n\n", 12, cuts, 2, 64, &st),
        "message||-1|y;");
    /* A BOM later in the stream is data. */
    assert_string_equal(PARSE(&r, "data: \xEF\xBB\xBF\n\n"),
                        "message||-1|\xEF\xBB\xBF;");
}

/* A stream using everything, parsed whole, then cut into three chunks at
   every pair of offsets, then fed one byte at a time: the same events. */
static void
test_every_split(void **state)
{
    static const char s[] = "\xEF\xBB\xBF: hello\r\n"
                            "retry: 250\r"
                            "id: e1\nevent: add\ndata: one\r\ndata:two\r\r"
                            "data\n\n"
                            "id: e2\r\n\r\n"
                            "event: x\n:c\ndata:  three\n\r"
                            "data: tail-not-dispatched";
    static const char want[] = "add|e1|250|one\\ntwo;message|e1|250|;"
                               "x|e2|250| three;";
    size_t n = sizeof(s) - 1, i, j, cuts[2];
    enum ig_status st;
    struct rec r;
    const char *got;

    (void)state;
    assert_string_equal(PARSE(&r, s), want);
    for (i = 0; i <= n; i++)
        for (j = i; j <= n; j++) {
            cuts[0] = i;
            cuts[1] = j;
            got = parse_cut(&r, s, n, cuts, 2, 4096, &st);
            if (got == NULL || strcmp(got, want) != 0)
                fail_msg("cut at %zu and %zu: %s", i, j, got ? got : "error");
        }
    {
        size_t one[sizeof(s)];

        for (i = 0; i < n - 1; i++)
            one[i] = i + 1;
        got = parse_cut(&r, s, n, one, n - 1, 4096, &st);
        assert_non_null(got);
        assert_string_equal(got, want);
    }
}

/* ---- the WHATWG examples (HTML, "Server-sent events", 9.2.6) ---- */

static void
test_whatwg_examples(void **state)
{
    struct rec r;

    (void)state;
    assert_string_equal(PARSE(&r, "data: YHOO\ndata: +2\ndata: 10\n\n"),
                        "message||-1|YHOO\\n+2\\n10;");
    assert_string_equal(PARSE(&r, ": test stream\n\ndata: first event\n"
                                  "id: 1\n\ndata:second event\nid\n\n"
                                  "data:  third event\n\n"),
                        "message|1|-1|first event;message||-1|second event;"
                        "message||-1| third event;");
    assert_string_equal(PARSE(&r, "data\n\ndata\ndata\n\ndata:"),
                        "message||-1|;message||-1|\\n;");
    assert_string_equal(PARSE(&r, "data:test\n\ndata: test\n\n"),
                        "message||-1|test;message||-1|test;");
    assert_string_equal(PARSE(&r, "event: add\ndata: 73857293\n\n"
                                  "event: remove\ndata: 2153\n\n"
                                  "event: add\ndata: 113411\n\n"),
                        "add||-1|73857293;remove||-1|2153;add||-1|113411;");
}

static void
test_type_reset(void **state)
{
    struct rec r;

    (void)state;
    /* An event type without data is forgotten at the empty line. */
    assert_string_equal(PARSE(&r, "event: x\n\ndata: y\n\nevent:\ndata: z\n\n"),
                        "message||-1|y;message||-1|z;");
}

/* ---- the writer ---- */

static void
round_trip(const char *data, size_t len)
{
    struct ig_buf out;
    struct rec r;
    struct ig_sse p;
    struct ig_err err;
    struct rec want;

    memset(&want, 0, sizeof(want));
    put(&want, "t|i|-1|", 7);
    put(&want, data, len);
    put(&want, ";", 1);
    memset(&r, 0, sizeof(r));
    ig_buf_init(&out, 4096);
    assert_int_equal(ig_sse_write(&out, "t", "i", data, len), IG_OK);
    ig_sse_init(&p, 4096);
    assert_int_equal(ig_sse_feed(&p, out.data, out.len, on_event, &r, &err),
                     IG_OK);
    assert_string_equal(r.log, want.log);
    ig_sse_release(&p);
    ig_buf_release(&out);
}

static void
test_write(void **state)
{
    struct ig_buf out;

    (void)state;
    ig_buf_init(&out, 4096);
    assert_int_equal(ig_sse_write(&out, "t", "1", "a\nb", 3), IG_OK);
    assert_string_equal(out.data, "id: 1\nevent: t\ndata: a\ndata: b\n\n");
    ig_buf_reset(&out);
    assert_int_equal(ig_sse_write(&out, NULL, NULL, NULL, 0), IG_OK);
    assert_string_equal(out.data, "data: \n\n");
    ig_buf_reset(&out);
    assert_int_equal(ig_sse_write(&out, "a\rb", NULL, "x", 1), IG_ERR_INVALID);
    assert_int_equal(ig_sse_write(&out, NULL, "a\nb", "x", 1), IG_ERR_INVALID);
    assert_int_equal(ig_sse_write(&out, NULL, NULL, "x\ry", 3), IG_ERR_INVALID);
    assert_int_equal(out.len, 0);
    ig_buf_release(&out);
    /* Past the cap: out as it was. */
    ig_buf_init(&out, 12);
    assert_int_equal(ig_buf_adds(&out, "keep"), IG_OK);
    assert_int_equal(ig_sse_write(&out, NULL, NULL, "0123456789", 10),
                     IG_ERR_LIMIT);
    assert_string_equal(out.data, "keep");
    ig_buf_release(&out);

    round_trip("", 0);
    round_trip("\n", 1);
    round_trip("\n\n", 2);
    round_trip(" lead", 5);
    round_trip("a\0b\nc", 5);
    round_trip("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", 36);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_id_with_nul),
        cmocka_unit_test(test_last_id),
        cmocka_unit_test(test_retry),
        cmocka_unit_test(test_comments_and_unknown),
        cmocka_unit_test(test_line_ends),
        cmocka_unit_test(test_crlf_split),
        cmocka_unit_test(test_bom),
        cmocka_unit_test(test_every_split),
        cmocka_unit_test(test_whatwg_examples),
        cmocka_unit_test(test_type_reset),
        cmocka_unit_test(test_write),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
