/*
 * fuzz_http_answer.c - libFuzzer target for the CLI's reader of HTTP/1.x
 * answers over plain http (cli_http_parse_answer, cli/cli_http_int.h):
 * whatever listens on the PDP's port writes these bytes.
 *
 * The bytes are read as a whole answer, once still open and once closed
 * after them, with a small body cap so BIG is reached too:
 *   - the verdict is one of the four; closed, it is never MORE;
 *   - DONE gives a status 200..599 and a body no longer than the cap or
 *     the input, and anything else gives status 0 and no body;
 *   - an answer that is whole while still open is whole only with its
 *     last byte: one byte less reads as MORE, and closed after all of
 *     its bytes it reads the same.
 * Any broken property aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_http_int.h"

#define CAP 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum cli_http_parsed
parse(const uint8_t *data, size_t size, int eof, long *status,
      struct ig_buf *body)
{
    struct ig_err err;
    enum cli_http_parsed r;

    r = cli_http_parse_answer((const char *)data, size, eof, status, body,
                              &err);
    if (r != CLI_HTTP_MORE && r != CLI_HTTP_DONE && r != CLI_HTTP_BAD &&
        r != CLI_HTTP_BIG)
        abort();
    if (r == CLI_HTTP_DONE &&
        (*status < 200 || *status > 599 || body->len > CAP || body->len > size))
        abort();
    if (r != CLI_HTTP_DONE && (*status != 0 || body->len != 0))
        abort();
    if (r == CLI_HTTP_BAD && err.msg[0] == '\0')
        abort();
    return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ig_buf body, again;
    long status, st2;

    ig_buf_init(&body, CAP);
    ig_buf_init(&again, CAP);
    if (parse(data, size, 1, &status, &body) == CLI_HTTP_MORE)
        abort();
    if (parse(data, size, 0, &status, &body) == CLI_HTTP_DONE) {
        if (size == 0 ||
            parse(data, size - 1, 0, &st2, &again) != CLI_HTTP_MORE)
            abort();
        if (parse(data, size, 1, &st2, &again) != CLI_HTTP_DONE ||
            st2 != status || again.len != body.len ||
            (body.len > 0 && memcmp(body.data, again.data, body.len) != 0))
            abort();
    }
    ig_buf_release(&body);
    ig_buf_release(&again);
    return 0;
}
