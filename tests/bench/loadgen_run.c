/*
 * loadgen_run.c - the load generator's worker threads.
 *
 * Each worker owns a slice of the connections, one epoll set (edge-triggered,
 * each socket registered once for in+out) and one timerfd. A connection is a
 * small state machine:
 *
 *   CLOSED -> CONNECTING -> [IDLE ->] WRITING -> READING -> (next request)
 *
 * It has at most one request in flight (no pipelining); its response is
 * read into a fixed buffer and parsed as it arrives (loadgen_http.c).
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
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    struct lg_resp resp;
    size_t rlen;
    char rbuf[RBUF_CAP];
};

struct loop {
    struct lg_worker *w;
    const struct lg_plan *p;
    int epfd, tfd;
    int dirty;         /* a connection waits for a time before armed */
    uint64_t armed;    /* when the timer fires; 0: not armed */
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

static int
in_window(const struct loop *l, uint64_t now)
{
    return now >= l->p->warm_end && now < l->p->end;
}

/* c waits until at: rescan unless the timer fires before then anyway.
 * (Re-arming a timerfd costs ~30 us on some VMs, so it is done rarely.) */
static void
loop_wake(struct loop *l, uint64_t at)
{
    if (l->armed == 0 || at < l->armed)
        l->dirty = 1;
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
    loop_wake(l, at);
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
        c->wlen = lg_request_build(l->p, c->wbuf);
        c->start = l->p->rate > 0 ? c->sched : lg_now();
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
        loop_wake(l, c->next_at);
        return;
    }
    conn_send(l, c, now);
}

static void
conn_connect(struct loop *l, struct conn *c, uint64_t now)
{
    struct epoll_event ev = {
        .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c};
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
    rc =
        connect(c->fd, (const struct sockaddr *)&l->p->addr, sizeof l->p->addr);
    if ((rc < 0 && errno != EINPROGRESS) ||
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
        conn_error(l, c, now, 1);
    /* else EPOLLOUT reports the outcome, even if connect already did */
}

static void
conn_done(struct loop *l, struct conn *c)
{
    struct lg_stats *s = &l->w->stats;
    uint64_t now = lg_now();
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
    int rc = 0;

    while (rc == 0) {
        n = read(c->fd, c->rbuf + c->rlen, RBUF_CAP - c->rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0 || c->state == ST_IDLE)
            break;
        c->rlen += (size_t)n;
        c->resp.nread += (size_t)n;
        rc = lg_resp_feed(&c->resp, c->rbuf, &c->rlen, RBUF_CAP,
                          l->p->head_method);
        if (rc < 0)
            conn_error(l, c, now, 0);
        else if (rc > 0)
            conn_done(l, c);
    }
    if (rc != 0)
        return; /* the next response's data raises a new edge */
    if (c->state == ST_IDLE && n <= 0)
        conn_close(l, c, now); /* an idle keep-alive closed: fine */
    else if (n == 0 && c->resp.state == LG_R_UNTIL_EOF)
        conn_done(l, c);
    else
        conn_error(l, c, now, 0);
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

/* Starts what is due, arms the timer for the earliest of what is not. */
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
        if ((c->state == ST_CLOSED || c->state == ST_IDLE) && c->next_at < min)
            min = c->next_at;
    }
    l->dirty = 0;
    if (min == UINT64_MAX || (l->armed != 0 && l->armed <= min))
        return; /* an early expiry only costs a rescan */
    memset(&its, 0, sizeof its);
    its.it_value.tv_sec = (time_t)(min / LG_NS_PER_S);
    its.it_value.tv_nsec = (long)(min % LG_NS_PER_S);
    if (timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
        l->armed = min;
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
    for (i = 0; l->conns != NULL && i < w->nconn; i++)
        l->conns[i].fd = -1;
    if (l->epfd < 0 || l->tfd < 0 || l->conns == NULL ||
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->tfd, &ev) < 0)
        return -1;
    if (p->rate > 0)
        l->interval = (uint64_t)((double)p->conns_total * 1e9 / p->rate);
    for (i = 0; i < w->nconn; i++) {
        struct conn *c = &l->conns[i];
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
                l.armed = 0;
                l.dirty = 1;
            } else {
                conn_event(&l, ev[i].data.ptr, ev[i].events, now);
            }
        }
    }
    for (i = 0; i < (int)w->nconn; i++)
        if (l.conns[i].state == ST_WRITING || l.conns[i].state == ST_READING)
            w->stats.in_flight++;
    loop_release(&l);
    return NULL;
}
