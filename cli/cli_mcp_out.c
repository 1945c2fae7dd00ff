/*
 * cli_mcp_out.c - the bridge's output (cli_mcp.h): stdout carries only
 * MCP messages, one per line; stderr one line per problem.
 *
 * Each line is built whole in memory, then written with write(2) under
 * the bridge's output mutex, so lines from the threads of concurrent
 * requests and of the GET stream never interleave. A server message is
 * re-serialised (RFC 8785, ig_canon_write) from its strict parse: a JSON
 * text spread over lines, or holding a raw newline in a string (which
 * ig_json_parse refuses), can never split a stdout line.
 */
#include "cli_mcp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_json.h"

/* A stderr line's text, bytes. */
#define LOG_MAX 512

/* Write all n bytes to fd; errors are dropped (a closed stdout means the
   client is gone: the bridge ends when stdin does). */
static void
write_all(int fd, const char *p, size_t n)
{
    ssize_t w;

    while (n > 0) {
        w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void
locked_write(struct mcp_bridge *b, int fd, const char *p, size_t n)
{
    (void)pthread_mutex_lock(&b->out);
    write_all(fd, p, n);
    (void)pthread_mutex_unlock(&b->out);
}

void
mcp_log(struct mcp_bridge *b, const char *fmt, ...)
{
    char line[LOG_MAX];
    va_list ap;
    int n = snprintf(line, sizeof(line), "intentgate mcp: ");
    int m, i;

    va_start(ap, fmt);
    m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    if ((size_t)m > sizeof(line) - (size_t)n - 2)
        m = (int)(sizeof(line) - (size_t)n - 2); /* cut to fit */
    for (i = n; i < n + m; i++) /* server text: no terminal escapes */
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[n + m] = '\n';
    locked_write(b, 2, line, (size_t)(n + m + 1));
}

int
mcp_line(struct mcp_bridge *b, const json_t *msg)
{
    struct ig_buf out;
    struct ig_err err;
    enum ig_status st;

    ig_buf_init(&out, IG_CANON_MAX_BYTES + 1);
    st = ig_canon_write(msg, &out, &err);
    if (st == IG_OK)
        st = ig_buf_addc(&out, '\n');
    if (st == IG_OK)
        locked_write(b, 1, out.data, out.len);
    else
        mcp_log(b, "a message could not be written: %s", err.msg);
    ig_buf_release(&out);
    return st == IG_OK ? 0 : -1;
}

/* The length of s cut to at most max bytes at a UTF-8 boundary. */
static size_t
utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

void
mcp_error_line(struct mcp_bridge *b, const json_t *id, int code,
               const char *fmt, ...)
{
    char text[2 * (IG_MCP_ERROR_MESSAGE_MAX + 128)];
    va_list ap;
    json_t *m;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (n < 0)
        text[0] = '\0';
    /* Cut well inside the buffer, so the byte at the cut is a real one. */
    text[utf8_cut(text, strlen(text), IG_MCP_ERROR_MESSAGE_MAX + 128)] = '\0';
    m = json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
                  ig_json_unconst(id), "error", "code", code, "message", text);
    if (m == NULL || mcp_line(b, m) != 0)
        mcp_log(b, "cannot write an error answer (out of memory?)");
    json_decref(m);
}

void
mcp_rpc_message(const char *body, size_t len, char *out, size_t size)
{
    json_t *doc = NULL;
    const json_t *msg;
    size_t n;

    out[0] = '\0';
    if (size == 0 || ig_json_parse(body, len, &doc, NULL) != IG_OK)
        return;
    msg = ig_json_pointer_get(doc, "/error/message");
    if (json_is_string(msg)) {
        const char *s = json_string_value(msg);

        n = strnlen(s, json_string_length(msg)); /* up to a NUL */
        n = utf8_cut(s, n,
                     size - 1 < IG_MCP_ERROR_MESSAGE_MAX
                         ? size - 1
                         : IG_MCP_ERROR_MESSAGE_MAX);
        memcpy(out, s, n);
        out[n] = '\0';
    }
    json_decref(doc);
}
