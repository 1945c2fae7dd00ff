/*
 * fuzz_sse.c - libFuzzer target for the text/event-stream parser
 * (net/ig_sse.c), which reads a hostile MCP server's bytes.
 *
 * The first two input bytes choose two cut points; the rest is the stream,
 * fed whole and then in three chunks cut there. Properties beyond no crash
 * and no leak: both feeds dispatch the same events (type, data, id, retry)
 * and end with the same status (IG_OK or IG_ERR_LIMIT) and last id; no
 * event's data or type is larger than the cap; a type is never empty. Writer
 * round trip: the stream's bytes with every CR removed, written as one event
 * with ig_sse_write and parsed back, give one event with exactly that data,
 * type and id.
 */
#include <stdlib.h>
#include <string.h>

#include "ig_sse.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c))                                                              \
            abort();                                                           \
    } while (0)

#define CAP 256

/* Every event as bytes: type, id, retry, data, each length-prefixed. */
struct rec {
    struct ig_buf log;
};

static void
put(struct rec *r, const void *p, size_t n)
{
    CHECK(ig_buf_add(&r->log, &n, sizeof(n)) == IG_OK);
    CHECK(ig_buf_add(&r->log, p, n) == IG_OK);
}

static int
on_event(void *ctx, const struct ig_sse_event *ev)
{
    struct rec *r = ctx;

    CHECK(ev->data_len <= CAP && ev->type_len <= CAP);
    CHECK(ev->type_len > 0 && ev->data[ev->data_len] == '\0');
    put(r, ev->type, ev->type_len);
    put(r, ev->id, ev->id_len);
    put(r, &ev->retry_ms, sizeof(ev->retry_ms));
    put(r, ev->data, ev->data_len);
    return 0;
}

static enum ig_status
run(const char *s, size_t n, const size_t *cuts, size_t ncuts, struct rec *r,
    struct ig_buf *last)
{
    struct ig_sse p;
    enum ig_status st = IG_OK;
    size_t i, from = 0, to, idlen;
    const char *id;

    ig_sse_init(&p, CAP);
    for (i = 0; i <= ncuts && st == IG_OK; i++) {
        to = i < ncuts ? cuts[i] : n;
        st = ig_sse_feed(&p, s + from, to - from, on_event, r, NULL);
        from = to;
    }
    id = ig_sse_last_id(&p, &idlen);
    CHECK(ig_buf_add(last, id, idlen) == IG_OK);
    ig_sse_release(&p);
    return st;
}

struct one {
    int count;
    struct ig_buf data;
};

static int
on_one(void *ctx, const struct ig_sse_event *ev)
{
    struct one *o = ctx;

    CHECK(ev->type_len == 1 && ev->type[0] == 't');
    CHECK(ev->id_len == 2 && memcmp(ev->id, "i1", 2) == 0);
    o->count++;
    CHECK(ig_buf_add(&o->data, ev->data, ev->data_len) == IG_OK);
    return 0;
}

static void
round_trip(const char *s, size_t n)
{
    struct ig_buf clean, out;
    struct ig_sse p;
    struct one o = {0, {NULL, 0, 0, 0}};
    size_t i;

    ig_buf_init(&clean, n);
    for (i = 0; i < n; i++)
        if (s[i] != '\r')
            CHECK(ig_buf_addc(&clean, s[i]) == IG_OK);
    ig_buf_init(&out, 8 * n + 64);
    CHECK(ig_sse_write(&out, "t", "i1", clean.data, clean.len) == IG_OK);
    ig_buf_init(&o.data, n + 1);
    ig_sse_init(&p, 2 * out.len + 2);
    CHECK(ig_sse_feed(&p, out.data, out.len, on_one, &o, NULL) == IG_OK);
    CHECK(o.count == 1 && o.data.len == clean.len);
    CHECK(clean.len == 0 || memcmp(o.data.data, clean.data, clean.len) == 0);
    ig_sse_release(&p);
    ig_buf_release(&o.data);
    ig_buf_release(&out);
    ig_buf_release(&clean);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct rec whole, cut;
    struct ig_buf last1, last2;
    size_t cuts[2], n;
    const char *s;
    enum ig_status st1, st2;

    if (size < 2)
        return 0;
    s = (const char *)data + 2;
    n = size - 2;
    cuts[0] = n > 0 ? data[0] % (n + 1) : 0;
    cuts[1] = n > 0 ? data[1] % (n + 1) : 0;
    if (cuts[1] < cuts[0]) {
        size_t t = cuts[0];
        cuts[0] = cuts[1];
        cuts[1] = t;
    }
    ig_buf_init(&whole.log, 1u << 24);
    ig_buf_init(&cut.log, 1u << 24);
    ig_buf_init(&last1, n);
    ig_buf_init(&last2, n);
    st1 = run(s, n, NULL, 0, &whole, &last1);
    st2 = run(s, n, cuts, 2, &cut, &last2);
    /* A cap failure happens in the same line however the bytes are cut:
       the same events came before it. */
    CHECK(st1 == st2 && (st1 == IG_OK || st1 == IG_ERR_LIMIT));
    CHECK(whole.log.len == cut.log.len);
    CHECK(whole.log.len == 0 ||
          memcmp(whole.log.data, cut.log.data, whole.log.len) == 0);
    CHECK(last1.len == last2.len);
    CHECK(last1.len == 0 || memcmp(last1.data, last2.data, last1.len) == 0);
    ig_buf_release(&whole.log);
    ig_buf_release(&cut.log);
    ig_buf_release(&last1);
    ig_buf_release(&last2);
    round_trip(s, n);
    return 0;
}
