/*
 * pdp_wait.c - the long-poll registry behind GET /v1/intents/{id}?wait=N.
 *
 * A waiting request registers (intent id, deadline) BEFORE it reads the
 * intent's state, then parks: its connection is suspended unless a commit
 * touched the intent in between, in which case it answers at once. The
 * store's commit hook wakes every parked waiter of an intent; a ticker
 * thread wakes those whose deadline passed (suspended connections never
 * time out by themselves). Waking = unregister + MHD_resume_connection, so
 * each waiter is resumed exactly once. At shutdown everyone is woken.
 *
 * A parked poll holds a connection and a registry entry for up to a
 * minute, so they are capped: max_waiters in all and
 * max_waiters_per_principal for one principal ([limits]). Over a cap the
 * poll is not registered and answers at once with the current state.
 * Once the stop woke everyone (resume_all), nothing registers: a poll that
 * looked at `stopping` just before it was set answers at once too, rather
 * than park until its deadline while the stop waits for it.
 */
#include "pdp_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_limits.h"

#define TICK_NS (IG_PDP_WAIT_TICK_MS * 1000000L) /* deadline resolution */

struct waiter {
    struct pdp_req *r;
    const struct pdp_principal *who;
    char intent_id[IG_UUID_STRLEN + 1];
    double deadline;
    int parked, woken;
    struct waiter *next;
};

struct pdp_waiters {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct waiter *head;
    size_t n;            /* registered */
    size_t max, max_per; /* the caps */
    pthread_t ticker;
    int stop;
    int closed; /* the server is stopping: nothing registers any more */
};

/* Wake w (caller holds mu): resume if parked, else mark for park(). */
static void
wake(struct waiter *w)
{
    w->woken = 1;
    if (w->parked) {
        w->parked = 0;
        pdp_req_resume(w->r);
    }
}

/* Unlink and free every woken waiter that is not parked (caller holds mu).
   A woken-but-unparked waiter stays until park() or remove() sees it. */
static void
unlink_waiter(struct pdp_waiters *ws, struct waiter *target)
{
    struct waiter **pp = &ws->head;

    while (*pp != NULL && *pp != target)
        pp = &(*pp)->next;
    if (*pp != NULL) {
        *pp = target->next;
        free(target);
        ws->n--;
    }
}

static void *
ticker_main(void *arg)
{
    struct pdp_waiters *ws = arg;
    struct waiter *w, *next;
    struct timespec ts;
    double now;

    pthread_mutex_lock(&ws->mu);
    while (!ws->stop) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += TICK_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&ws->cv, &ws->mu, &ts);
        now = pdp_mono_seconds();
        for (w = ws->head; w != NULL; w = next) {
            next = w->next;
            if (w->parked && w->deadline <= now) {
                wake(w);
                unlink_waiter(ws, w);
            }
        }
    }
    pthread_mutex_unlock(&ws->mu);
    return NULL;
}

enum ig_status
pdp_waiters_new(struct pdp_server *s, struct pdp_waiters **out)
{
    struct pdp_waiters *ws = calloc(1, sizeof(*ws));
    pthread_condattr_t ca;

    *out = NULL;
    if (ws == NULL)
        return IG_ERR_NOMEM;
    ws->max = (size_t)s->cfg->max_waiters;
    ws->max_per = (size_t)s->cfg->max_waiters_per_principal;
    pthread_mutex_init(&ws->mu, NULL);
    /* The ticker's timed wait is on the monotonic clock: a wall clock
       stepped back must not leave parked polls past their deadline. */
    pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ws->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&ws->ticker, NULL, ticker_main, ws) != 0) {
        pthread_mutex_destroy(&ws->mu);
        pthread_cond_destroy(&ws->cv);
        free(ws);
        return IG_ERR_NOMEM;
    }
    *out = ws;
    return IG_OK;
}

void
pdp_waiters_free(struct pdp_waiters *ws)
{
    struct waiter *w;

    if (ws == NULL)
        return;
    pthread_mutex_lock(&ws->mu);
    ws->stop = 1;
    pthread_cond_signal(&ws->cv);
    pthread_mutex_unlock(&ws->mu);
    pthread_join(ws->ticker, NULL);
    while ((w = ws->head) != NULL) {
        ws->head = w->next;
        free(w);
    }
    pthread_mutex_destroy(&ws->mu);
    pthread_cond_destroy(&ws->cv);
    free(ws);
}

/* Registered waiters of principal who (caller holds mu). */
static size_t
count_of(struct pdp_waiters *ws, const struct pdp_principal *who)
{
    struct waiter *w;
    size_t n = 0;

    for (w = ws->head; w != NULL; w = w->next)
        n += w->who == who;
    return n;
}

int
pdp_waiters_add(struct pdp_waiters *ws, struct pdp_req *r,
                const char *intent_id, const struct pdp_principal *who,
                double deadline)
{
    struct waiter *w;
    size_t n = strlen(intent_id);

    if (n >= sizeof(w->intent_id) || (w = calloc(1, sizeof(*w))) == NULL)
        return -1;
    w->r = r;
    w->who = who;
    memcpy(w->intent_id, intent_id, n + 1);
    w->deadline = deadline;
    pthread_mutex_lock(&ws->mu);
    if (ws->closed || ws->n >= ws->max || count_of(ws, who) >= ws->max_per) {
        int rc = ws->closed ? -3 : -2;

        pthread_mutex_unlock(&ws->mu);
        free(w);
        return rc;
    }
    w->next = ws->head;
    ws->head = w;
    ws->n++;
    pthread_mutex_unlock(&ws->mu);
    return 0;
}

size_t
pdp_waiters_parked(struct pdp_waiters *ws)
{
    size_t n;

    pthread_mutex_lock(&ws->mu);
    n = ws->n;
    pthread_mutex_unlock(&ws->mu);
    return n;
}

static struct waiter *
find(struct pdp_waiters *ws, struct pdp_req *r)
{
    struct waiter *w;

    for (w = ws->head; w != NULL; w = w->next)
        if (w->r == r)
            return w;
    return NULL;
}

int
pdp_waiters_park(struct pdp_waiters *ws, struct pdp_req *r, double deadline)
{
    struct waiter *w;
    int rc = -1;

    pthread_mutex_lock(&ws->mu);
    w = find(ws, r);
    if (w != NULL && !w->woken) {
        w->parked = 1;
        w->deadline = deadline;
        r->phase = PH_WAITING;
        MHD_suspend_connection(r->conn);
        rc = 0;
    } else if (w != NULL) {
        unlink_waiter(ws, w);
    }
    pthread_mutex_unlock(&ws->mu);
    return rc;
}

void
pdp_waiters_remove(struct pdp_waiters *ws, struct pdp_req *r)
{
    struct waiter *w;

    if (ws == NULL)
        return;
    pthread_mutex_lock(&ws->mu);
    w = find(ws, r);
    if (w != NULL)
        unlink_waiter(ws, w);
    pthread_mutex_unlock(&ws->mu);
}

void
pdp_waiters_notify(void *ctx, const char *intent_id)
{
    struct pdp_waiters *ws = ctx;
    struct waiter *w, *next;

    pthread_mutex_lock(&ws->mu);
    for (w = ws->head; w != NULL; w = next) {
        next = w->next;
        if (intent_id != NULL && strcmp(w->intent_id, intent_id) != 0)
            continue;
        if (w->parked) {
            wake(w);
            unlink_waiter(ws, w);
        } else {
            w->woken = 1; /* park() will answer at once */
        }
    }
    pthread_mutex_unlock(&ws->mu);
}

void
pdp_waiters_resume_all(struct pdp_waiters *ws)
{
    struct waiter *w, *next;

    pthread_mutex_lock(&ws->mu);
    ws->closed = 1;
    for (w = ws->head; w != NULL; w = next) {
        next = w->next;
        if (w->parked) {
            wake(w);
            unlink_waiter(ws, w);
        } else {
            w->woken = 1;
        }
    }
    pthread_mutex_unlock(&ws->mu);
}
