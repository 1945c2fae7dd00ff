/*
 * ig_sse.c - Server-sent events: the incremental parser and the writer
 * (see ig_sse.h).
 *
 * How the parser works. A feed first settles the stream's start: bytes
 * matching EF BB BF are held back one at a time; a full match is dropped,
 * a mismatch replays the held bytes as ordinary ones. Then the bytes are
 * cut at each CR or LF: the piece before goes to the line buffer, the end
 * of line processes the line (one field, a comment or a dispatch). A CR
 * sets after_cr, so an LF that follows it, in this chunk or the next, is
 * skipped: CRLF is one line end wherever the chunk boundary falls. The cap
 * is checked where bytes arrive, on the sum of the data buffer and the
 * line buffer, so no buffer can grow past it whatever the server sends.
 */
#include "ig_sse.h"

#include <limits.h>
#include <string.h>

static const char bom_bytes[3] = {'\xEF', '\xBB', '\xBF'};

void
ig_sse_init(struct ig_sse *p, size_t max_event_bytes)
{
    IG_ASSERT(max_event_bytes > 0);
    memset(p, 0, sizeof(*p));
    p->max = max_event_bytes;
    ig_buf_init(&p->line, max_event_bytes);
    ig_buf_init(&p->data, max_event_bytes);
    ig_buf_init(&p->type, max_event_bytes);
    ig_buf_init(&p->id, max_event_bytes);
    ig_buf_init(&p->last_id, max_event_bytes);
    p->retry_ms = -1;
}

void
ig_sse_release(struct ig_sse *p)
{
    ig_buf_release(&p->line);
    ig_buf_release(&p->data);
    ig_buf_release(&p->type);
    ig_buf_release(&p->id);
    ig_buf_release(&p->last_id);
}

const char *
ig_sse_last_id(const struct ig_sse *p, size_t *len)
{
    if (len != NULL)
        *len = p->last_id.len;
    return p->last_id.data != NULL ? p->last_id.data : "";
}

static enum ig_status
over_cap(struct ig_sse *p, struct ig_err *err)
{
    return ig_err_set(err, IG_ERR_LIMIT,
                      "an event stream's event is larger than %zu bytes",
                      p->max);
}

static enum ig_status
nomem(struct ig_err *err)
{
    return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
}

/* Replace b's contents with n bytes of s. */
static enum ig_status
set_buf(struct ig_buf *b, const char *s, size_t n, struct ig_err *err)
{
    enum ig_status st;

    ig_buf_reset(b);
    st = ig_buf_add(b, s, n);
    return st == IG_OK ? IG_OK : ig_err_set(err, st, "%s", ig_strerror(st));
}

/* retry: only ASCII digits (at least one) that fit a long count. */
static void
take_retry(struct ig_sse *p, const char *v, size_t n)
{
    long ms = 0;
    size_t i;

    if (n == 0)
        return;
    for (i = 0; i < n; i++) {
        int d = v[i] - '0';

        if (d < 0 || d > 9 || ms > (LONG_MAX - d) / 10)
            return;
        ms = ms * 10 + d;
    }
    p->retry_ms = ms;
}

static int
field_is(const char *name, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(name, want, n) == 0;
}

/* One "NAME:VALUE" line (value already without its leading space). */
static enum ig_status
take_field(struct ig_sse *p, const char *name, size_t nlen, const char *v,
           size_t vlen, struct ig_err *err)
{
    enum ig_status st;

    if (field_is(name, nlen, "data")) {
        if (vlen + 1 > p->max - p->data.len)
            return over_cap(p, err);
        if ((st = ig_buf_add(&p->data, v, vlen)) != IG_OK ||
            (st = ig_buf_addc(&p->data, '\n')) != IG_OK)
            return st == IG_ERR_LIMIT ? over_cap(p, err) : nomem(err);
    } else if (field_is(name, nlen, "event")) {
        return set_buf(&p->type, v, vlen, err);
    } else if (field_is(name, nlen, "id")) {
        if (vlen == 0 || memchr(v, '\0', vlen) == NULL)
            return set_buf(&p->id, v, vlen, err);
    } else if (field_is(name, nlen, "retry")) {
        take_retry(p, v, vlen);
    }
    return IG_OK;
}

/* An empty line: dispatch the event being built, if it has data. */
static enum ig_status
dispatch(struct ig_sse *p, ig_sse_fn fn, void *ctx, struct ig_err *err)
{
    struct ig_sse_event ev;
    enum ig_status st;
    int stop;

    if ((st = set_buf(&p->last_id, p->id.data, p->id.len, err)) != IG_OK)
        return st;
    if (p->data.len == 0) {
        ig_buf_reset(&p->type);
        return IG_OK;
    }
    p->data.data[--p->data.len] = '\0'; /* the last "\n" */
    ev.type = p->type.len > 0 ? p->type.data : "message";
    ev.type_len = p->type.len > 0 ? p->type.len : strlen("message");
    ev.data = p->data.data;
    ev.data_len = p->data.len;
    ev.id = ig_sse_last_id(p, &ev.id_len);
    ev.retry_ms = p->retry_ms;
    stop = fn(ctx, &ev);
    ig_buf_reset(&p->data);
    ig_buf_reset(&p->type);
    if (stop != 0)
        return ig_err_set(err, IG_ERR_INVALID, "the event handler stopped");
    return IG_OK;
}

/* The line in p->line is complete. */
static enum ig_status
end_line(struct ig_sse *p, ig_sse_fn fn, void *ctx, struct ig_err *err)
{
    const char *s = p->line.data, *colon, *v;
    size_t n = p->line.len, vlen;
    enum ig_status st;

    if (n == 0)
        return dispatch(p, fn, ctx, err);
    if (s[0] == ':') {
        st = IG_OK; /* a comment */
    } else if ((colon = memchr(s, ':', n)) == NULL) {
        st = take_field(p, s, n, "", 0, err);
    } else {
        v = colon + 1;
        vlen = n - (size_t)(v - s);
        if (vlen > 0 && v[0] == ' ') {
            v++;
            vlen--;
        }
        st = take_field(p, s, (size_t)(colon - s), v, vlen, err);
    }
    ig_buf_reset(&p->line);
    return st;
}

static enum ig_status
line_add(struct ig_sse *p, const char *s, size_t n, struct ig_err *err)
{
    enum ig_status st;

    if (n == 0)
        return IG_OK;
    if (p->line.len + p->data.len > p->max ||
        n > p->max - p->line.len - p->data.len)
        return over_cap(p, err);
    if ((st = ig_buf_add(&p->line, s, n)) != IG_OK)
        return st == IG_ERR_LIMIT ? over_cap(p, err) : nomem(err);
    return IG_OK;
}

/* Bytes after the stream's start: cut into lines. */
static enum ig_status
parse(struct ig_sse *p, const char *buf, size_t n, ig_sse_fn fn, void *ctx,
      struct ig_err *err)
{
    enum ig_status st;
    size_t i = 0, j;

    while (i < n) {
        if (p->after_cr) {
            p->after_cr = 0;
            if (buf[i] == '\n') {
                i++;
                continue;
            }
        }
        for (j = i; j < n && buf[j] != '\r' && buf[j] != '\n'; j++)
            ;
        if ((st = line_add(p, buf + i, j - i, err)) != IG_OK)
            return st;
        if (j == n)
            break;
        p->after_cr = buf[j] == '\r';
        i = j + 1;
        if ((st = end_line(p, fn, ctx, err)) != IG_OK)
            return st;
    }
    return IG_OK;
}

/* Skip a leading BOM, matched across chunks; *used: bytes of buf taken. */
static enum ig_status
start(struct ig_sse *p, const char *buf, size_t n, size_t *used, ig_sse_fn fn,
      void *ctx, struct ig_err *err)
{
    *used = 0;
    while (!p->started && *used < n) {
        if (buf[*used] == bom_bytes[p->bom]) {
            (*used)++;
            if (++p->bom == sizeof(bom_bytes))
                p->started = 1;
            continue;
        }
        p->started = 1;
        return parse(p, bom_bytes, p->bom, fn, ctx, err);
    }
    return IG_OK;
}

enum ig_status
ig_sse_feed(struct ig_sse *p, const char *buf, size_t n, ig_sse_fn fn,
            void *ctx, struct ig_err *err)
{
    enum ig_status st;
    size_t used;

    if (p->failed != IG_OK)
        return ig_err_set(err, (enum ig_status)p->failed,
                          "the event stream failed before");
    st = start(p, buf, n, &used, fn, ctx, err);
    if (st == IG_OK)
        st = parse(p, buf + used, n - used, fn, ctx, err);
    p->failed = (int)st;
    return st;
}

/* 1 when the n bytes of s hold c. */
static int
holds(const char *s, size_t n, char c)
{
    return n > 0 && memchr(s, c, n) != NULL;
}

static enum ig_status
write_field(struct ig_buf *out, const char *name, const char *v, size_t n)
{
    enum ig_status st;

    if ((st = ig_buf_adds(out, name)) != IG_OK ||
        (st = ig_buf_add(out, ": ", 2)) != IG_OK ||
        (st = ig_buf_add(out, v, n)) != IG_OK)
        return st;
    return ig_buf_addc(out, '\n');
}

static enum ig_status
write_event(struct ig_buf *out, const char *type, const char *id,
            const char *data, size_t len)
{
    enum ig_status st = IG_OK;
    const char *nl;
    size_t i = 0, n;

    if (id != NULL && (st = write_field(out, "id", id, strlen(id))) != IG_OK)
        return st;
    if (type != NULL &&
        (st = write_field(out, "event", type, strlen(type))) != IG_OK)
        return st;
    do {
        nl = len > i ? memchr(data + i, '\n', len - i) : NULL;
        n = nl != NULL ? (size_t)(nl - (data + i)) : len - i;
        if ((st = write_field(out, "data", data + i, n)) != IG_OK)
            return st;
        i += n + 1;
    } while (nl != NULL);
    return ig_buf_addc(out, '\n');
}

enum ig_status
ig_sse_write(struct ig_buf *out, const char *type, const char *id,
             const char *data, size_t len)
{
    size_t was = out->len;
    enum ig_status st;

    if ((id != NULL &&
         (holds(id, strlen(id), '\r') || holds(id, strlen(id), '\n'))) ||
        (type != NULL && (holds(type, strlen(type), '\r') ||
                          holds(type, strlen(type), '\n'))) ||
        (len > 0 && data == NULL) || holds(data, len, '\r'))
        return IG_ERR_INVALID;
    st = write_event(out, type, id, data != NULL ? data : "", len);
    if (st != IG_OK && out->data != NULL) {
        out->len = was;
        out->data[was] = '\0';
    }
    return st;
}
