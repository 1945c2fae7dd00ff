/*
 * test_cli_http.c - the CLI's plain http transport (cli/cli_http_int.h):
 * the strict reader of answers says MORE until an answer is whole, takes
 * Content-Length, chunked and read-until-close bodies, skips interim 1xx
 * answers, and refuses every shape it does not accept (and BIG past the
 * cap); the URL splitter takes HOST[:PORT][/PATH] and nothing else.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_http_int.h"

#define CAP 64

static enum cli_http_parsed
parse(const char *raw, size_t len, int eof, long *status, char *body)
{
    struct ig_buf b;
    struct ig_err err;
    enum cli_http_parsed r;

    ig_buf_init(&b, CAP);
    err.msg[0] = '\0';
    r = cli_http_parse_answer(raw, len, eof, status, &b, &err);
    if (r == CLI_HTTP_BAD && err.msg[0] == '\0')
        fail_msg("BAD without a reason: %s", raw);
    if (body != NULL) {
        memcpy(body, b.data != NULL ? b.data : "", b.len);
        body[b.len] = '\0';
    }
    ig_buf_release(&b);
    return r;
}

/* raw is whole exactly at its last byte, with this status and body. */
static void
expect_whole(const char *raw, long want_status, const char *want_body)
{
    size_t n = strlen(raw), i;
    char body[CAP + 1];
    long status = -1;

    for (i = 0; i < n; i++)
        if (parse(raw, i, 0, &status, NULL) != CLI_HTTP_MORE)
            fail_msg("not MORE at %zu of %s", i, raw);
    if (parse(raw, n, 0, &status, body) != CLI_HTTP_DONE)
        fail_msg("not DONE: %s", raw);
    assert_int_equal(status, want_status);
    assert_string_equal(body, want_body);
    for (i = 0; i < n; i++) /* cut short, then closed: never whole */
        if (parse(raw, i, 1, &status, NULL) != CLI_HTTP_BAD)
            fail_msg("truncated at %zu is not BAD: %s", i, raw);
}

static void
expect(const char *raw, int eof, enum cli_http_parsed want)
{
    long status = -1;

    if (parse(raw, strlen(raw), eof, &status, NULL) != want)
        fail_msg("want %d: %s", (int)want, raw);
    if (want != CLI_HTTP_DONE)
        assert_int_equal(status, 0);
}

static void
test_whole_answers(void **state)
{
    (void)state;
    expect_whole("HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
                 201, "{\"a\":1}");
    expect_whole("HTTP/1.1 200 OK\r\ncontent-length:\t2 \r\nX: y\r\n\r\n{}",
                 200, "{}");
    expect_whole("HTTP/1.0 404 \r\nContent-Length: 0\r\n\r\n", 404, "");
    expect_whole("HTTP/1.1 200\r\nTransfer-Encoding: Chunked\r\n\r\n"
                 "3\r\n{\"a\r\nA\r\n\":12345}  \r\n0\r\nT: 1\r\n\r\n",
                 200, "{\"a\":12345}  ");
    expect_whole("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"
                 "Content-Length: 2\r\n\r\n[]",
                 201, "[]");
    expect_whole("HTTP/1.1 204 No Content\r\n\r\n", 204, "");
}

static void
test_read_until_close(void **state)
{
    const char *raw = "HTTP/1.1 500 Oops\r\nServer: x\r\n\r\n{\"e\":1}";
    char body[CAP + 1];
    long status = 0;

    (void)state;
    expect(raw, 0, CLI_HTTP_MORE);
    assert_int_equal(parse(raw, strlen(raw), 1, &status, body), CLI_HTTP_DONE);
    assert_int_equal(status, 500);
    assert_string_equal(body, "{\"e\":1}");
}

static void
test_refused_shapes(void **state)
{
    static const char *const bad[] = {
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 600 X\r\n\r\n",
        "HTTP/1.1 200OK\r\n\r\n",
        "HTTP/1.1 200 O\x01K\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\n\n",
        "HTTP/1.1 200 OK\r\nA: b\n\r\n",
        "HTTP/1.1 200 OK\r\nA b\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: b\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA : b\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: \x7f\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
        "Content-Length: 3\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;x=y\r\na\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 1\r\na\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "000000001\r\na\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        "Content-Length: 1\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\n\r\n",
        "HTTP/1.1 100 Continue\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.1 204 No Content\r\n\r\n{}",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect(bad[i], 0, CLI_HTTP_BAD);
        expect(bad[i], 1, CLI_HTTP_BAD);
    }
    /* A NUL byte, which strlen would hide. */
    assert_int_equal(
        parse("HTTP/1.1 200 OK\r\nA: \0\r\n\r\n", 24, 0, &(long){0}, NULL),
        CLI_HTTP_BAD);
}

static void
test_caps(void **state)
{
    char raw[CLI_HTTP_HEADER_MAX + 64], big[256];
    size_t n;

    (void)state;
    (void)snprintf(big, sizeof(big),
                   "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", CAP + 1);
    expect(big, 0, CLI_HTTP_BIG);
    expect("HTTP/1.1 200 OK\r\nContent-Length: "
           "99999999999999999999999999\r\n\r\n",
           0, CLI_HTTP_BIG);
    expect("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           "41\r\n",
           0, CLI_HTTP_BIG);
    expect("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           "20\r\n01234567890123456789012345678901\r\n"
           "21\r\n012345678901234567890123456789012\r\n",
           0, CLI_HTTP_BIG);
    memset(big, 'x', sizeof(big));
    memcpy(big, "HTTP/1.1 200 OK\r\n\r\n", 19);
    big[sizeof(big) - 1] = '\0';
    expect(big, 1, CLI_HTTP_BIG);
    /* A header block that never ends within the cap. */
    n = (size_t)snprintf(raw, sizeof(raw), "HTTP/1.1 200 OK\r\n");
    while (n + 8 < sizeof(raw))
        n += (size_t)snprintf(raw + n, sizeof(raw) - n, "A: b\r\n");
    expect(raw, 0, CLI_HTTP_BAD);
}

static void
expect_target(const char *url, const char *host, const char *port,
              const char *authority, size_t prefix)
{
    struct cli_http_target t;
    struct ig_err err;

    if (cli_http_target_parse(url, &t, &err) != IG_OK)
        fail_msg("%s: %s", url, err.msg);
    assert_string_equal(t.host, host);
    assert_string_equal(t.port, port);
    assert_string_equal(t.authority, authority);
    assert_int_equal(t.prefix, prefix);
}

static void
test_targets(void **state)
{
    static const char *const bad[] = {
        "http://",        "http://:80",   "http://u@h",      "http://h:p@h",
        "http://h?x",     "http://h#x",   "http://h/%2e",    "http://h:0",
        "http://h:65536", "http://h:",    "http://h:123456", "http://[::1",
        "http://[]:80",   "http://[::g]", "http://h_x",      "http://h:80x",
        "https://h",      "ftp://h",      "http://h\\x",     "http://[::1]x",
    };
    struct cli_http_target t;
    struct ig_err err;
    size_t i;

    (void)state;
    expect_target("http://127.0.0.1:8700", "127.0.0.1", "8700",
                  "127.0.0.1:8700", 21);
    expect_target("http://localhost", "localhost", "80", "localhost", 16);
    expect_target("http://[::1]:9/pdp", "::1", "9", "[::1]:9", 14);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cli_http_target_parse(bad[i], &t, &err) != IG_ERR_INVALID)
            fail_msg("%s was taken", bad[i]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_answers),
        cmocka_unit_test(test_read_until_close),
        cmocka_unit_test(test_refused_shapes),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_targets),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
