/*
 * cli_http_answer.c - the strict reader of an HTTP/1.x answer
 * (cli_http_parse_answer, cli_http_int.h) for the plain http transport.
 *
 * It is called again on the whole answer read so far each time more bytes
 * arrive, so it keeps no state: it walks the status line and header lines
 * (RFC 9112 shapes, without folding, bare LF or control characters), then
 * the body by the one framing the header chose, and says MORE until the
 * last byte is there. The bytes are the PDP's, or whatever answers on its
 * port: anything unexpected is BAD, never guessed at (the fuzz target
 * fuzz_http_answer feeds it arbitrary bytes).
 */
#include "cli_http_int.h"

#include <string.h>
#include <strings.h>

/* What the header block said about the body. */
struct head {
    long status;
    size_t len;     /* bytes of the status line and header block */
    int chunked;    /* Transfer-Encoding: chunked */
    int has_length; /* Content-Length given */
    size_t length;  /* its value */
    int length_big; /* its value does not fit a size_t */
};

static enum cli_http_parsed
bad(struct ig_err *err, const char *why)
{
    (void)ig_err_set(err, IG_ERR_INVALID, "bad HTTP answer: %s", why);
    return CLI_HTTP_BAD;
}

/* The line starting at p (n bytes left): its length without CRLF in *ll;
   1 found, 0 not yet, -1 a bare LF or a NUL. */
static int
line(const char *p, size_t n, size_t *ll)
{
    const char *lf = memchr(p, '\n', n);

    if (lf == NULL)
        return memchr(p, '\0', n) != NULL ? -1 : 0;
    *ll = (size_t)(lf - p);
    if (*ll == 0 || p[*ll - 1] != '\r' || memchr(p, '\0', *ll) != NULL)
        return -1;
    (*ll)--;
    return 1;
}

static int
tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Bytes a field value or reason phrase may hold: HTAB, SP, visible,
   obs-text. */
static int
text_ok(const char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 ? p[i] != '\t' : p[i] == 0x7f)
            return 0;
    return 1;
}

static int
status_line(const char *p, size_t n, long *status)
{
    if (n < 12 ||
        (memcmp(p, "HTTP/1.1 ", 9) != 0 && memcmp(p, "HTTP/1.0 ", 9) != 0))
        return -1;
    if (p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' ||
        p[11] > '9')
        return -1;
    if (n > 12 && (p[12] != ' ' || !text_ok(p + 13, n - 13)))
        return -1;
    *status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    return 0;
}

/* One "name: value" line into h; -1 when it is not one we accept. */
static int
field(const char *p, size_t n, struct head *h)
{
    size_t c = 0, v, e;

    while (c < n && tchar((unsigned char)p[c]))
        c++;
    if (c == 0 || c == n || p[c] != ':' || !text_ok(p + c + 1, n - c - 1))
        return -1;
    for (v = c + 1; v < n && (p[v] == ' ' || p[v] == '\t'); v++)
        ;
    for (e = n; e > v && (p[e - 1] == ' ' || p[e - 1] == '\t'); e--)
        ;
    if (c == 14 && strncasecmp(p, "content-length", 14) == 0) {
        if (h->has_length || e == v)
            return -1;
        h->has_length = 1;
        for (; v < e; v++) {
            if (p[v] < '0' || p[v] > '9')
                return -1;
            if (h->length > ((size_t)-1 - 9) / 10)
                h->length_big = 1;
            else
                h->length = h->length * 10 + (size_t)(p[v] - '0');
        }
    } else if (c == 17 && strncasecmp(p, "transfer-encoding", 17) == 0) {
        if (h->chunked || e - v != 7 || strncasecmp(p + v, "chunked", 7) != 0)
            return -1;
        h->chunked = 1;
    }
    return 0;
}

/* The status line and header block at raw (n bytes, at most max). */
static enum cli_http_parsed
parse_head(const char *raw, size_t n, size_t max, struct head *h,
           struct ig_err *err)
{
    size_t at = 0, ll;
    int r, first = 1;

    memset(h, 0, sizeof(*h));
    if (n > max)
        n = max;
    for (;;) {
        r = line(raw + at, n - at, &ll);
        if (r < 0)
            return bad(err, "a line ends without CRLF or holds a NUL");
        if (r == 0)
            return n == max ? bad(err, "the header is too large")
                            : CLI_HTTP_MORE;
        if (first ? status_line(raw, ll, &h->status) != 0
                  : ll > 0 && field(raw + at, ll, h) != 0)
            return bad(err, first ? "not an HTTP/1.x status line"
                                  : "a header line we do not accept");
        at += ll + 2;
        if (!first && ll == 0)
            break;
        first = 0;
    }
    if (h->chunked && h->has_length)
        return bad(err, "both Content-Length and chunked");
    h->len = at;
    return CLI_HTTP_DONE;
}

/* A chunk size line: 1-8 hex digits; -1 otherwise. */
static long
chunk_size(const char *p, size_t ll)
{
    long v = 0;
    size_t i;

    if (ll == 0 || ll > 8)
        return -1;
    for (i = 0; i < ll; i++) {
        int d = p[i] >= '0' && p[i] <= '9'   ? p[i] - '0'
                : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10
                : p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 10
                                             : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static enum cli_http_parsed
add(struct ig_buf *body, const char *p, size_t n, struct ig_err *err)
{
    enum ig_status st = ig_buf_add(body, p, n);

    if (st == IG_ERR_LIMIT)
        return CLI_HTTP_BIG;
    return st == IG_OK ? CLI_HTTP_DONE : bad(err, "out of memory");
}

/* The chunked body at p (n bytes) into body. */
static enum cli_http_parsed
chunked(const char *p, size_t n, struct ig_buf *body, struct ig_err *err)
{
    enum cli_http_parsed r2;
    struct head trailer;
    size_t at = 0, ll;
    long size;
    int r;

    for (;;) {
        r = line(p + at, n - at, &ll);
        if (r <= 0)
            return r < 0 ? bad(err, "a chunk size line without CRLF")
                         : CLI_HTTP_MORE;
        if ((size = chunk_size(p + at, ll)) < 0)
            return bad(err, "a chunk size that is not 1-8 hex digits");
        at += ll + 2;
        if (size == 0)
            break;
        if (n - at < (size_t)size + 2)
            return (size_t)size > body->max ? CLI_HTTP_BIG : CLI_HTTP_MORE;
        if (p[at + (size_t)size] != '\r' || p[at + (size_t)size + 1] != '\n')
            return bad(err, "a chunk longer than its size");
        if ((r2 = add(body, p + at, (size_t)size, err)) != CLI_HTTP_DONE)
            return r2;
        at += (size_t)size + 2;
    }
    /* Trailer lines, then the blank line that ends the answer. */
    for (;;) {
        r = line(p + at, n - at, &ll);
        if (r <= 0)
            return r < 0 ? bad(err, "a trailer line without CRLF")
                         : CLI_HTTP_MORE;
        memset(&trailer, 0, sizeof(trailer));
        at += ll + 2;
        if (ll == 0)
            break;
        if (field(p + at - ll - 2, ll, &trailer) != 0 || trailer.chunked ||
            trailer.has_length)
            return bad(err, "a trailer line we do not accept");
    }
    return at == n ? CLI_HTTP_DONE : bad(err, "bytes after the answer");
}

/* The body after h at p (n bytes), framed as h says. */
static enum cli_http_parsed
parse_body(const struct head *h, const char *p, size_t n, int eof,
           struct ig_buf *body, struct ig_err *err)
{
    if (h->status == 204 || h->status == 304)
        return n == 0 ? CLI_HTTP_DONE : bad(err, "a body where none may be");
    if (h->has_length) {
        if (h->length_big || h->length > body->max)
            return CLI_HTTP_BIG;
        if (n < h->length)
            return CLI_HTTP_MORE;
        if (n > h->length)
            return bad(err, "bytes after the answer");
        return add(body, p, n, err);
    }
    if (h->chunked)
        return chunked(p, n, body, err);
    return eof ? add(body, p, n, err) : CLI_HTTP_MORE;
}

enum cli_http_parsed
cli_http_parse_answer(const char *raw, size_t len, int eof, long *status,
                      struct ig_buf *body, struct ig_err *err)
{
    enum cli_http_parsed r;
    struct head h;
    size_t at = 0;

    ig_buf_reset(body);
    *status = 0;
    for (;;) {
        r = parse_head(raw + at, len - at, CLI_HTTP_HEADER_MAX - at, &h, err);
        if (r != CLI_HTTP_DONE)
            break;
        if (h.status >= 200)
            break;
        if (h.status == 101 || h.has_length || h.chunked)
            return bad(err, "a 101 or an interim answer with a body");
        at += h.len; /* an interim 1xx answer: the real one follows */
    }
    if (r == CLI_HTTP_DONE) {
        *status = h.status;
        r = parse_body(&h, raw + at + h.len, len - at - h.len, eof, body, err);
    }
    if (r == CLI_HTTP_MORE && eof)
        r = bad(err, "the answer ended early");
    if (r != CLI_HTTP_DONE) {
        *status = 0;
        ig_buf_reset(body);
    }
    return r;
}
