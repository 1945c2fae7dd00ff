/*
 * ig_conns.c - connection registry and request deadlines (see
 * ig_conns.h).
 *
 * An entry lives from MHD's STARTED to its CLOSED notification, linked in
 * a list under one mutex; the connection's socket_context points at it.
 * libmicrohttpd calls CLOSED before it closes the socket, and removing an
 * entry takes the same mutex the sweeper holds while it calls shutdown(),
 * so the sweeper never touches a descriptor that was closed (and perhaps
 * reused). The sweeper wakes every quarter of the timeout (at most every
 * 250 ms) and cuts each idle, not-yet-complete request past its deadline
 * with shutdown(SHUT_RDWR); libmicrohttpd then sees the end of the stream
 * and closes the connection in its own thread.
 */
#include "ig_conns.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

struct entry {
    int fd;
    double t0; /* when the current request's clock started, ms */
    int busy, cut;
    struct entry *prev, *next;
};

struct ig_conns {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct entry *head;
    size_t open;
    atomic_uint_fast64_t cut;
    double timeout_ms;
    int stop;
    pthread_t sweeper;
};

static double
now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void
sweep_locked(struct ig_conns *c, double now)
{
    struct entry *e;

    for (e = c->head; e != NULL; e = e->next) {
        if (e->busy || e->cut || now - e->t0 < c->timeout_ms)
            continue;
        (void)shutdown(e->fd, SHUT_RDWR);
        e->cut = 1;
        atomic_fetch_add(&c->cut, 1);
    }
}

static void *
sweeper_main(void *arg)
{
    struct ig_conns *c = arg;
    double slice = c->timeout_ms / 4 < 250 ? c->timeout_ms / 4 : 250;
    struct timespec ts;
    long ns;

    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        ns = ts.tv_nsec + (long)(slice * 1e6);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        sweep_locked(c, now_ms());
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

enum ig_status
ig_conns_new(double request_timeout_ms, struct ig_conns **out,
             struct ig_err *err)
{
    struct ig_conns *c = calloc(1, sizeof(*c));
    pthread_condattr_t ca;

    *out = NULL;
    if (c == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    /* The sweeper's timed wait is on the monotonic clock: a wall clock
       stepped back must not stop the deadlines for as long. */
    pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    c->timeout_ms = request_timeout_ms;
    if (pthread_create(&c->sweeper, NULL, sweeper_main, c) != 0) {
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        free(c);
        return ig_err_set(err, IG_ERR_IO, "cannot start a thread");
    }
    *out = c;
    return IG_OK;
}

void
ig_conns_free(struct ig_conns *c)
{
    struct entry *e, *next;

    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->sweeper, NULL);
    for (e = c->head; e != NULL; e = next) {
        next = e->next;
        free(e);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

void
ig_conns_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                enum MHD_ConnectionNotificationCode code)
{
    struct ig_conns *c = cls;
    const union MHD_ConnectionInfo *info;
    struct entry *e;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (info == NULL || (e = calloc(1, sizeof(*e))) == NULL)
            return; /* untracked: MHD's idle timeout still applies */
        e->fd = info->connect_fd;
        e->t0 = now_ms();
        pthread_mutex_lock(&c->mu);
        e->next = c->head;
        if (c->head != NULL)
            c->head->prev = e;
        c->head = e;
        c->open++;
        pthread_mutex_unlock(&c->mu);
        *socket_context = e;
        return;
    }
    if ((e = *socket_context) == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    if (e->prev != NULL)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next != NULL)
        e->next->prev = e->prev;
    c->open--;
    pthread_mutex_unlock(&c->mu);
    free(e);
    *socket_context = NULL;
}

void
ig_conns_busy(struct ig_conns *c, struct MHD_Connection *conn, int busy)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct entry *e = info != NULL ? info->socket_context : NULL;

    if (e == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    e->busy = busy;
    if (!busy)
        e->t0 = now_ms();
    pthread_mutex_unlock(&c->mu);
}

size_t
ig_conns_open(struct ig_conns *c)
{
    size_t n;

    pthread_mutex_lock(&c->mu);
    n = c->open;
    pthread_mutex_unlock(&c->mu);
    return n;
}

uint64_t
ig_conns_cut(struct ig_conns *c)
{
    return atomic_load(&c->cut);
}

long
ig_conns_fit_nofile(long want, long reserve)
{
    struct rlimit rl;
    long room;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return want;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
        (void)getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY)
        return want;
    room = (long)rl.rlim_cur - reserve;
    if (room >= want)
        return want;
    return room > 16 ? room : 16;
}
