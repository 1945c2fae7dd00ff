/*
 * pdp_delay.c - requests answered later on purpose: a login slowed for
 * its client address, or waiting for a free password-check slot.
 *
 * A delayed request's connection is suspended (no HTTP thread is held:
 * there are only a few) and kept in a list sorted by due time; one timer
 * thread sleeps until the first is due and resumes it, and MHD then calls
 * the request's on_resume on an HTTP thread. Suspending happens under the
 * list's lock, so the timer never resumes a connection not yet
 * suspended. At shutdown everyone is resumed at once, and later delays
 * are refused (the caller answers at once), so no connection is left
 * suspended when the daemon stops. The list holds one entry per
 * suspended connection: the connection limits bound it.
 */
#include "pdp_int.h"

#include <stdlib.h>
#include <time.h>

struct delayed {
    struct pdp_req *r;
    double due; /* monotonic seconds */
    struct delayed *next;
};

struct pdp_delays {
    pthread_mutex_t mu;
    pthread_cond_t cv;    /* monotonic */
    struct delayed *head; /* by due time */
    pthread_t timer;
    int stop;
};

/* Resume and free every entry due at now (mu held). */
static void
resume_due(struct pdp_delays *d, double now)
{
    struct delayed *e;

    while ((e = d->head) != NULL && e->due <= now) {
        d->head = e->next;
        pdp_req_resume(e->r);
        free(e);
    }
}

static void *
timer_main(void *arg)
{
    struct pdp_delays *d = arg;
    struct timespec ts;

    (void)pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        resume_due(d, pdp_mono_seconds());
        if (d->head == NULL) {
            (void)pthread_cond_wait(&d->cv, &d->mu);
            continue;
        }
        ts.tv_sec = (time_t)d->head->due;
        ts.tv_nsec = (long)((d->head->due - (double)ts.tv_sec) * 1e9);
        (void)pthread_cond_timedwait(&d->cv, &d->mu, &ts);
    }
    (void)pthread_mutex_unlock(&d->mu);
    return NULL;
}

enum ig_status
pdp_delays_new(struct pdp_delays **out)
{
    struct pdp_delays *d = calloc(1, sizeof(*d));
    pthread_condattr_t ca;

    *out = NULL;
    if (d == NULL)
        return IG_ERR_NOMEM;
    (void)pthread_mutex_init(&d->mu, NULL);
    (void)pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&d->cv, &ca);
    (void)pthread_condattr_destroy(&ca);
    if (pthread_create(&d->timer, NULL, timer_main, d) != 0) {
        (void)pthread_mutex_destroy(&d->mu);
        (void)pthread_cond_destroy(&d->cv);
        free(d);
        return IG_ERR_IO;
    }
    *out = d;
    return IG_OK;
}

int
pdp_delays_add(struct pdp_delays *d, struct pdp_req *r, double due,
               void (*on_resume)(struct pdp_req *r))
{
    struct delayed *e = calloc(1, sizeof(*e)), **pp;

    if (e == NULL)
        return -1;
    e->r = r;
    e->due = due;
    (void)pthread_mutex_lock(&d->mu);
    if (d->stop) {
        (void)pthread_mutex_unlock(&d->mu);
        free(e);
        return -1;
    }
    for (pp = &d->head; *pp != NULL && (*pp)->due <= due; pp = &(*pp)->next)
        ;
    e->next = *pp;
    *pp = e;
    pdp_req_suspend(r, on_resume);
    (void)pthread_cond_signal(&d->cv);
    (void)pthread_mutex_unlock(&d->mu);
    return 0;
}

void
pdp_delays_resume_all(struct pdp_delays *d)
{
    if (d == NULL)
        return;
    (void)pthread_mutex_lock(&d->mu);
    d->stop = 1;
    resume_due(d, 1e300);
    (void)pthread_cond_signal(&d->cv);
    (void)pthread_mutex_unlock(&d->mu);
}

void
pdp_delays_free(struct pdp_delays *d)
{
    if (d == NULL)
        return;
    pdp_delays_resume_all(d);
    (void)pthread_join(d->timer, NULL);
    (void)pthread_mutex_destroy(&d->mu);
    (void)pthread_cond_destroy(&d->cv);
    free(d);
}
