/*
 * loadgen_run.c - the load generator's worker threads.
 *
 * Each worker owns a slice of the connections, one epoll set (edge-triggered,
 * each socket registered once for in+out) and one timerfd. A connection is a
 * small state machine:
 *
 *   CLOSED -> CONNECTING -> [IDLE ->] WRITING -> READING -> (next request)
 *
 * It has at most one request in flight (no pipelining). The response is
 * parsed incrementally from a fixed buffer: status line and headers, then a
 * Content-Length body, a chunked body (sizes, data, trailers) or a body that
 * ends when the server closes. Bodies are skipped, never stored.
 *
 * Closed loop: the next request goes out as soon as a response completes and
 * latency runs from the first write. With a rate, connection g of N sends at
 * t0 + (g + k N) / rate; latency runs from that scheduled time, so a slow
 * server is charged for the requests it delayed (no coordinated omission).
 * IDLE connections and reconnect back-offs wait on the timerfd, armed at the
 * earliest of their times after each scan of the connections.
 *
 * A server may close a keep-alive connection at any time: the worker opens a
 * new one. If that close hits a reused connection before any response byte,
 * the request is resent once on the new connection (as HTTP clients do);
 * otherwise it counts as an error. Connections are only closed inside event
 * handling by moving to CLOSED; the scan reconnects them, so an event still
 * queued in the same epoll batch never meets a different socket.
 */
#include "loadgen.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define RBUF_CAP 8192 /* longest response head or chunk-size line */
#define MAX_EVENTS 256
#define BACKOFF_NS 10000000ULL /* wait after a failed connect */
#define WAIT_MS 50             /* longest epoll wait: end-of-run check */

enum conn_state { ST_CLOSED, ST_CONNECTING, ST_IDLE, ST_WRITING, ST_READING };
enum resp_state {
    R_HEAD,
    R_BODY,
    R_CHUNK_SIZE,
    R_CHUNK_DATA,
    R_CHUNK_CRLF,
    R_TRAILER,
    R_UNTIL_EOF,
    R_DONE
};

struct resp {
    enum resp_state state;
    int status;
    int close;   /* the server closes after this response */
    int chunked; /* Transfer-Encoding: chunked */
    int has_length;
    uint64_t length; /* Content-Length */
    uint64_t remain; /* of the body or the current chunk */
    size_t nread;    /* bytes of this response received so far */
};

struct conn {
    int fd;
    enum conn_state state;
    unsigned index;   /* global, for the rate schedule */
    int opened;       /* has been connected once: later ones reconnect */
    int reused;       /* has completed a response on this socket */
    int retrying;     /* the request in wbuf waits to be resent */
    uint64_t next_at; /* CLOSED: reconnect time; IDLE: send time */
    uint64_t sched;   /* rate: scheduled send time of the next request */
    uint64_t start;   /* latency origin of the request in flight */
    char *wbuf;
    size_t wlen, woff;
    struct resp resp;
    size_t rlen;
    char rbuf[RBUF_CAP];
};

struct loop {
    struct lg_worker *w;
    const struct lg_plan *p;
    int epfd, tfd;
    int dirty;         /* some connection waits for a time: rescan */
    uint64_t interval; /* rate: ns between one connection's requests */
    struct conn *conns;
};

uint64_t
lg_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * LG_NS_PER_S + (uint64_t)ts.tv_nsec;
}

size_t
lg_find(const char *b, size_t from, size_t len, const char *pat, size_t plen)
{
    size_t i;

    for (i = from; i + plen <= len; i++)
        if (b[i] == pat[0] && memcmp(b + i, pat, plen) == 0)
            return i;
    return SIZE_MAX;
}

static int
in_window(const struct loop *l, uint64_t now)
{
    return now >= l->p->warm_end && now < l->p->end;
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
header_line(struct resp *r, const char *s, size_t n)
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
parse_head(struct resp *r, const char *b, size_t n)
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

static enum resp_state
body_state(struct resp *r, int head_method)
{
    if (head_method || r->status == 204 || r->status == 304)
        return R_DONE;
    if (r->chunked)
        return R_CHUNK_SIZE;
    if (r->has_length) {
        r->remain = r->length;
        return r->remain ? R_BODY : R_DONE;
    }
    r->close = 1;
    return R_UNTIL_EOF;
}

/* One parsing step at b[*pos..len): 1 progressed, 0 needs more, -1 bad. */
static int
resp_step(struct resp *r, const char *b, size_t *pos, size_t len, int head)
{
    size_t e, n;

    switch (r->state) {
    case R_HEAD:
        if ((e = lg_find(b, *pos, len, "\r\n\r\n", 4)) == SIZE_MAX)
            return 0;
        if (parse_head(r, b + *pos, e + 4 - *pos) < 0)
            return -1;
        *pos = e + 4;
        if (r->status >= 200) /* else an interim 1xx: read the next head */
            r->state = body_state(r, head);
        return 1;
    case R_BODY:
    case R_CHUNK_DATA:
        n = len - *pos < r->remain ? len - *pos : (size_t)r->remain;
        *pos += n;
        r->remain -= n;
        if (r->remain == 0)
            r->state = r->state == R_BODY ? R_DONE : R_CHUNK_CRLF;
        return 1;
    case R_CHUNK_SIZE:
        if ((e = lg_find(b, *pos, len, "\r\n", 2)) == SIZE_MAX)
            return 0;
        n = *pos;
        while (n < e && b[n] != ';' && b[n] != ' ' && b[n] != '\t')
            n++;
        if (parse_u64(b + *pos, n - *pos, 16, &r->remain) < 0)
            return -1;
        *pos = e + 2;
        r->state = r->remain ? R_CHUNK_DATA : R_TRAILER;
        return 1;
    case R_CHUNK_CRLF:
        if (len - *pos < 2)
            return 0;
        if (b[*pos] != '\r' || b[*pos + 1] != '\n')
            return -1;
        *pos += 2;
        r->state = R_CHUNK_SIZE;
        return 1;
    case R_TRAILER:
        if ((e = lg_find(b, *pos, len, "\r\n", 2)) == SIZE_MAX)
            return 0;
        r->state = e == *pos ? R_DONE : R_TRAILER;
        *pos = e + 2;
        return 1;
    case R_UNTIL_EOF:
        *pos = len;
        return 1;
    case R_DONE:
        break;
    }
    return -1; /* bytes after a complete response: we never pipelined */
}

/* Consumes what it can of c->rbuf: 1 response complete, 0 more, -1 bad. */
static int
resp_feed(struct conn *c, int head_method)
{
    size_t pos = 0;
    int rc = 1;

    while (pos < c->rlen && rc > 0 && c->resp.state != R_DONE)
        rc = resp_step(&c->resp, c->rbuf, &pos, c->rlen, head_method);
    memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
    c->rlen -= pos;
    if (rc < 0 || (c->resp.state == R_DONE && c->rlen > 0))
        return -1;
    if (c->resp.state == R_DONE)
        return 1;
    return c->rlen == RBUF_CAP ? -1 : 0; /* a head or line too long */
}

static void
conn_close(struct loop *l, struct conn *c, uint64_t at)
{
    if (c->fd >= 0)
        close(c->fd); /* also leaves the epoll set */
    c->fd = -1;
    c->state = ST_CLOSED;
    c->next_at = at;
    c->rlen = 0;
    l->dirty = 1;
}

/* The connection broke: resend once or count an error, then reconnect. */
static void
conn_error(struct loop *l, struct conn *c, uint64_t now, int connecting)
{
    int busy = c->state == ST_WRITING || c->state == ST_READING;

    if (busy && c->reused && c->resp.nread == 0 && !c->retrying) {
        c->retrying = 1;
        if (in_window(l, now))
            l->w->stats.retries++;
        conn_close(l, c, now);
        return;
    }
    c->retrying = 0;
    if (in_window(l, now))
        l->w->stats.errors++;
    if (l->p->rate > 0 && c->sched <= now)
        c->sched += l->interval; /* that request's slot is lost */
    conn_close(l, c, connecting ? now + BACKOFF_NS : now);
}

static void
conn_build(struct loop *l, struct conn *c)
{
    const struct lg_plan *p = l->p;
    char num[24] = "";
    size_t nlen = 0, blen = p->body_len, off, pos = 0, at;
    int n;

    if (p->nseq > 0) {
        n = snprintf(num, sizeof num, "%" PRIu64,
                     atomic_fetch_add(p->seq, 1));
        nlen = n > 0 ? (size_t)n : 0;
        blen = p->body_len - p->nseq * LG_SEQ_MARK_LEN + p->nseq * nlen;
    }
    memcpy(c->wbuf, p->head, p->head_len);
    off = p->head_len;
    if (p->send_length) {
        n = snprintf(c->wbuf + off, 48, "Content-Length: %zu\r\n", blen);
        off += n > 0 ? (size_t)n : 0;
    }
    memcpy(c->wbuf + off, "\r\n", 2);
    off += 2;
    while (p->nseq > 0 && (at = lg_find(p->body, pos, p->body_len,
                                        LG_SEQ_MARK, LG_SEQ_MARK_LEN)) !=
                              SIZE_MAX) {
        memcpy(c->wbuf + off, p->body + pos, at - pos);
        memcpy(c->wbuf + off + (at - pos), num, nlen);
        off += at - pos + nlen;
        pos = at + LG_SEQ_MARK_LEN;
    }
    memcpy(c->wbuf + off, p->body + pos, p->body_len - pos);
    c->wlen = off + p->body_len - pos;
}

static void
conn_write(struct loop *l, struct conn *c, uint64_t now)
{
    ssize_t n;

    while (c->woff < c->wlen) {
        n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return; /* EPOLLOUT will call again */
        if (n < 0) {
            conn_error(l, c, now, 0);
            return;
        }
        c->woff += (size_t)n;
    }
    c->state = ST_READING;
}

/* Sends a new request (or the one to retry) now. */
static void
conn_send(struct loop *l, struct conn *c, uint64_t now)
{
    if (!c->retrying) {
        conn_build(l, c);
        c->start = l->p->rate > 0 ? c->sched : now;
    }
    memset(&c->resp, 0, sizeof c->resp);
    c->woff = 0;
    c->state = ST_WRITING;
    conn_write(l, c, now);
}

static void
conn_next(struct loop *l, struct conn *c, uint64_t now)
{
    if (l->p->rate > 0 && c->sched > now && !c->retrying) {
        c->state = ST_IDLE;
        c->next_at = c->sched;
        l->dirty = 1;
        return;
    }
    conn_send(l, c, now);
}

static void
conn_connect(struct loop *l, struct conn *c, uint64_t now)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP |
                                       EPOLLET,
                             .data.ptr = c};
    int one = 1, rc;

    if (c->opened && in_window(l, now))
        l->w->stats.reconnects++;
    c->opened = 1;
    c->reused = 0;
    c->state = ST_CONNECTING;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0 || fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0) {
        conn_error(l, c, now, 1);
        return;
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rc = connect(c->fd, (const struct sockaddr *)&l->p->addr,
                 sizeof l->p->addr);
    if ((rc < 0 && errno != EINPROGRESS) ||
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
        conn_error(l, c, now, 1);
    /* else EPOLLOUT reports the outcome, even if connect already did */
}

static void
conn_done(struct loop *l, struct conn *c, uint64_t now)
{
    struct lg_stats *s = &l->w->stats;
    int st = c->resp.status, expect = l->p->expect_status;

    if (in_window(l, now)) {
        lg_hist_add(&s->hist, now - c->start);
        s->status[st >= 100 && st < LG_STATUS_SLOTS ? st : 0]++;
        if (expect ? st == expect : st >= 200 && st < 300)
            s->ok++;
        if (expect && st != expect)
            s->unexpected++;
    }
    c->reused = 1;
    c->retrying = 0;
    if (l->p->rate > 0)
        c->sched += l->interval;
    if (c->resp.close)
        conn_close(l, c, now);
    else
        conn_next(l, c, now);
}

static void
conn_readable(struct loop *l, struct conn *c, uint64_t now)
{
    ssize_t n;
    int rc;

    for (;;) {
        n = read(c->fd, c->rbuf + c->rlen, RBUF_CAP - c->rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n == 0 && c->state == ST_IDLE)
            conn_close(l, c, now); /* idle keep-alive closed: fine */
        else if (n == 0 && c->resp.state == R_UNTIL_EOF)
            conn_done(l, c, now);
        else if (n <= 0 || c->state == ST_IDLE)
            conn_error(l, c, now, 0);
        if (n <= 0 || c->state == ST_IDLE)
            return;
        c->rlen += (size_t)n;
        c->resp.nread += (size_t)n;
        rc = resp_feed(c, l->p->head_method);
        if (rc < 0)
            conn_error(l, c, now, 0);
        else if (rc > 0)
            conn_done(l, c, now);
        if (rc != 0)
            return; /* the next response's data raises a new edge */
    }
}

static void
conn_event(struct loop *l, struct conn *c, uint32_t events, uint64_t now)
{
    int err = 0;
    socklen_t len = sizeof err;

    if (c->state == ST_CONNECTING) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 ||
            err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
            conn_error(l, c, now, 1);
            return;
        }
        conn_next(l, c, now);
    } else if (c->state == ST_WRITING) {
        conn_write(l, c, now);
    }
    if ((c->state == ST_READING || c->state == ST_IDLE) &&
        (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)))
        conn_readable(l, c, now);
}

/* Starts what is due, arms the timer for what is not. */
static void
loop_scan(struct loop *l, uint64_t now)
{
    struct itimerspec its;
    uint64_t min = UINT64_MAX;
    unsigned i;

    for (i = 0; i < l->w->nconn; i++) {
        struct conn *c = &l->conns[i];
        if (c->state == ST_CLOSED && c->next_at <= now)
            conn_connect(l, c, now);
        else if (c->state == ST_IDLE && c->next_at <= now)
            conn_send(l, c, now);
        if ((c->state == ST_CLOSED || c->state == ST_IDLE) &&
            c->next_at < min)
            min = c->next_at;
    }
    l->dirty = 0;
    memset(&its, 0, sizeof its);
    if (min != UINT64_MAX) {
        min = min > 0 ? min : 1; /* zero would disarm */
        its.it_value.tv_sec = (time_t)(min / LG_NS_PER_S);
        its.it_value.tv_nsec = (long)(min % LG_NS_PER_S);
    }
    timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static int
loop_init(struct loop *l, struct lg_worker *w)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    const struct lg_plan *p = w->plan;
    unsigned i;

    memset(l, 0, sizeof *l);
    l->w = w;
    l->p = p;
    l->epfd = epoll_create1(0);
    l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    l->conns = calloc(w->nconn, sizeof *l->conns);
    if (l->epfd < 0 || l->tfd < 0 || l->conns == NULL ||
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->tfd, &ev) < 0)
        return -1;
    if (p->rate > 0)
        l->interval = (uint64_t)((double)p->conns_total * 1e9 / p->rate);
    for (i = 0; i < w->nconn; i++) {
        struct conn *c = &l->conns[i];
        c->fd = -1;
        c->index = w->first + i;
        c->next_at = p->t0;
        if (p->rate > 0)
            c->sched = p->t0 + (uint64_t)((double)c->index * 1e9 / p->rate);
        if ((c->wbuf = malloc(p->req_cap)) == NULL)
            return -1;
    }
    l->dirty = 1;
    return 0;
}

static void
loop_release(struct loop *l)
{
    unsigned i;

    for (i = 0; l->conns != NULL && i < l->w->nconn; i++) {
        if (l->conns[i].fd >= 0)
            close(l->conns[i].fd);
        free(l->conns[i].wbuf);
    }
    free(l->conns);
    if (l->tfd >= 0)
        close(l->tfd);
    if (l->epfd >= 0)
        close(l->epfd);
}

void *
lg_worker_run(void *arg)
{
    struct lg_worker *w = arg;
    struct epoll_event ev[MAX_EVENTS];
    struct loop l;
    uint64_t now, expired;
    int i, n, ms;

    if (loop_init(&l, w) < 0) {
        perror("loadgen: worker setup");
        w->failed = 1;
        loop_release(&l);
        return NULL;
    }
    while ((now = lg_now()) < w->plan->end) {
        if (l.dirty)
            loop_scan(&l, now);
        ms = (int)((w->plan->end - now + 999999) / 1000000);
        n = epoll_wait(l.epfd, ev, MAX_EVENTS, ms < WAIT_MS ? ms : WAIT_MS);
        now = lg_now();
        for (i = 0; i < n; i++) {
            if (ev[i].data.ptr == NULL) {
                if (read(l.tfd, &expired, sizeof expired) < 0)
                    expired = 0;
                l.dirty = 1;
            } else {
                conn_event(&l, ev[i].data.ptr, ev[i].events, now);
            }
        }
    }
    loop_release(&l);
    return NULL;
}
