/*
 * loadgen_http.c - the HTTP/1.1 wire format for the load generator: build a
 * request from the plan, and parse a response as its bytes arrive.
 *
 * The parser keeps its position in struct lg_resp and consumes what it can
 * of the caller's buffer, leaving a partial line (at most the buffer's
 * capacity) at its front for the next read. It understands a status line,
 * headers (Content-Length, Transfer-Encoding: chunked, Connection), interim
 * 1xx responses, bodies by length, chunked bodies with extensions and
 * trailers, and bodies that end when the server closes (no length given).
 * Bodies are skipped, never stored. Anything else is a protocol error.
 */
#include "loadgen.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

size_t
lg_find(const char *b, size_t from, size_t len, const char *pat, size_t plen)
{
    size_t i;

    for (i = from; i + plen <= len; i++)
        if (b[i] == pat[0] && memcmp(b + i, pat, plen) == 0)
            return i;
    return SIZE_MAX;
}

/* Case-insensitive: does v[0..n) contain the word w? */
static int
has_token(const char *v, size_t n, const char *w)
{
    size_t i, wl = strlen(w);

    for (i = 0; i + wl <= n; i++)
        if (strncasecmp(v + i, w, wl) == 0)
            return 1;
    return 0;
}

static int
parse_u64(const char *s, size_t n, int base, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;
    int d;

    if (n == 0 || n > 15)
        return -1;
    for (i = 0; i < n; i++) {
        char ch = s[i];
        if (ch >= '0' && ch <= '9')
            d = ch - '0';
        else if (base == 16 && ch >= 'a' && ch <= 'f')
            d = ch - 'a' + 10;
        else if (base == 16 && ch >= 'A' && ch <= 'F')
            d = ch - 'A' + 10;
        else
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

static int
header_line(struct lg_resp *r, const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    size_t nl, vl;
    const char *v;

    if (colon == NULL)
        return -1;
    nl = (size_t)(colon - s);
    v = colon + 1;
    vl = n - nl - 1;
    while (vl > 0 && (*v == ' ' || *v == '\t'))
        v++, vl--;
    while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
        vl--;
    if (nl == 14 && strncasecmp(s, "content-length", nl) == 0) {
        r->has_length = 1;
        return parse_u64(v, vl, 10, &r->length);
    }
    if (nl == 17 && strncasecmp(s, "transfer-encoding", nl) == 0)
        r->chunked = has_token(v, vl, "chunked");
    if (nl == 10 && strncasecmp(s, "connection", nl) == 0) {
        if (has_token(v, vl, "close"))
            r->close = 1;
        else if (has_token(v, vl, "keep-alive"))
            r->close = 0;
    }
    return 0;
}

/* Parses a head b[0..n) that ends with its blank line. */
static int
parse_head(struct lg_resp *r, const char *b, size_t n)
{
    size_t pos, eol;
    int i;

    if (n < 16 || memcmp(b, "HTTP/1.", 7) != 0 ||
        (b[7] != '0' && b[7] != '1') || b[8] != ' ')
        return -1;
    for (i = 9; i < 12; i++)
        if (b[i] < '0' || b[i] > '9')
            return -1;
    r->status = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
    r->close = b[7] == '0'; /* HTTP/1.0 closes unless it says keep-alive */
    r->chunked = r->has_length = 0;
    pos = lg_find(b, 0, n, "\r\n", 2) + 2;
    while ((eol = lg_find(b, pos, n, "\r\n", 2)) != SIZE_MAX && eol > pos) {
        if (header_line(r, b + pos, eol - pos) < 0)
            return -1;
        pos = eol + 2;
    }
    return 0;
}

static enum lg_resp_state
body_state(struct lg_resp *r, int head_method)
{
    if (head_method || r->status == 204 || r->status == 304)
        return LG_R_DONE;
    if (r->chunked)
        return LG_R_CHUNK_SIZE;
    if (r->has_length) {
        r->remain = r->length;
        return r->remain ? LG_R_BODY : LG_R_DONE;
    }
    r->close = 1;
    return LG_R_UNTIL_EOF;
}

/* One parsing step at b[*pos..len): 1 progressed, 0 needs more, -1 bad. */
static int
resp_step(struct lg_resp *r, const char *b, size_t *pos, size_t len, int head)
{
    size_t e, n;

    switch (r->state) {
    case LG_R_HEAD:
        if ((e = lg_find(b, *pos, len, "\r\n\r\n", 4)) == SIZE_MAX)
            return 0;
        if (parse_head(r, b + *pos, e + 4 - *pos) < 0)
            return -1;
        *pos = e + 4;
        if (r->status >= 200) /* else an interim 1xx: read the next head */
            r->state = body_state(r, head);
        return 1;
    case LG_R_BODY:
    case LG_R_CHUNK_DATA:
        n = len - *pos < r->remain ? len - *pos : (size_t)r->remain;
        *pos += n;
        r->remain -= n;
        if (r->remain == 0)
            r->state = r->state == LG_R_BODY ? LG_R_DONE : LG_R_CHUNK_CRLF;
        return 1;
    case LG_R_CHUNK_SIZE:
        if ((e = lg_find(b, *pos, len, "\r\n", 2)) == SIZE_MAX)
            return 0;
        n = *pos;
        while (n < e && b[n] != ';' && b[n] != ' ' && b[n] != '\t')
            n++;
        if (parse_u64(b + *pos, n - *pos, 16, &r->remain) < 0)
            return -1;
        *pos = e + 2;
        r->state = r->remain ? LG_R_CHUNK_DATA : LG_R_TRAILER;
        return 1;
    case LG_R_CHUNK_CRLF:
        if (len - *pos < 2)
            return 0;
        if (b[*pos] != '\r' || b[*pos + 1] != '\n')
            return -1;
        *pos += 2;
        r->state = LG_R_CHUNK_SIZE;
        return 1;
    case LG_R_TRAILER:
        if ((e = lg_find(b, *pos, len, "\r\n", 2)) == SIZE_MAX)
            return 0;
        r->state = e == *pos ? LG_R_DONE : LG_R_TRAILER;
        *pos = e + 2;
        return 1;
    case LG_R_UNTIL_EOF:
        *pos = len;
        return 1;
    case LG_R_DONE:
        break;
    }
    return -1; /* bytes after a complete response: we never pipelined */
}

int
lg_resp_feed(struct lg_resp *r, char *buf, size_t *len, size_t cap,
             int head_method)
{
    size_t pos = 0;
    int rc = 1;

    while (pos < *len && rc > 0 && r->state != LG_R_DONE)
        rc = resp_step(r, buf, &pos, *len, head_method);
    memmove(buf, buf + pos, *len - pos);
    *len -= pos;
    if (rc < 0 || (r->state == LG_R_DONE && *len > 0))
        return -1;
    if (r->state == LG_R_DONE)
        return 1;
    return *len == cap ? -1 : 0; /* a head or line too long */
}

size_t
lg_request_build(const struct lg_plan *p, char *out)
{
    char num[24] = "";
    size_t nlen = 0, blen = p->body_len, off, pos = 0, at;
    int n;

    if (p->nseq > 0) {
        n = snprintf(num, sizeof num, "%" PRIu64, atomic_fetch_add(p->seq, 1));
        nlen = n > 0 ? (size_t)n : 0;
        blen = p->body_len - p->nseq * LG_SEQ_MARK_LEN + p->nseq * nlen;
    }
    memcpy(out, p->head, p->head_len);
    off = p->head_len;
    if (p->send_length) {
        n = snprintf(out + off, 48, "Content-Length: %zu\r\n", blen);
        off += n > 0 ? (size_t)n : 0;
    }
    memcpy(out + off, "\r\n", 2);
    off += 2;
    while (p->nseq > 0 && (at = lg_find(p->body, pos, p->body_len, LG_SEQ_MARK,
                                        LG_SEQ_MARK_LEN)) != SIZE_MAX) {
        memcpy(out + off, p->body + pos, at - pos);
        memcpy(out + off + (at - pos), num, nlen);
        off += at - pos + nlen;
        pos = at + LG_SEQ_MARK_LEN;
    }
    memcpy(out + off, p->body + pos, p->body_len - pos);
    return off + p->body_len - pos;
}
