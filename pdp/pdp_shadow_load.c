/*
 * pdp_shadow_load.c - a shadow bundle's reload, loaded and tested on a
 * thread of its own, so that no bundle's test run - however long its
 * author made it - holds the signal thread (the live reload) or the stop.
 *
 * The load owns copies of what it reads (the directory, the [policy]
 * settings) and is shared by two ends, the loading thread and the shadow
 * that asked (pdp_shadow.c), each releasing its reference; the last one
 * frees it. The shadow polls for the result; at a stop it releases its end
 * without waiting, and a test run still going finishes on its own
 * (detached) and frees what it holds, touching nothing of the server.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "pdp_shadow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdp_int.h"

struct pdp_shadow_load {
    pthread_mutex_t mu; /* guards refs, done, bundle, why */
    int refs;
    int done;
    char *dir;
    json_t *settings;
    struct pol_bundle *bundle; /* the result: tested, or NULL */
    char why[sizeof(((struct ig_err *)0)->msg)];
};

static void
load_free(struct pdp_shadow_load *l)
{
    pol_bundle_unref(l->bundle);
    json_decref(l->settings);
    free(l->dir);
    (void)pthread_mutex_destroy(&l->mu);
    free(l);
}

/* Drop one end's reference (the caller holds l->mu). */
static void
unref_locked(struct pdp_shadow_load *l)
{
    int last = --l->refs == 0;

    pthread_mutex_unlock(&l->mu);
    if (last)
        load_free(l);
}

static void *
load_main(void *arg)
{
    struct pdp_shadow_load *l = arg;
    struct pol_bundle *b = NULL;
    struct ig_err err;

    (void)pthread_setname_np(pthread_self(), "ig-shadow-load");
    ig_err_clear(&err);
    if (pdp_policies_load(l->dir, l->settings, &b, &err) != IG_OK)
        b = NULL;
    pthread_mutex_lock(&l->mu);
    l->bundle = b;
    if (b == NULL)
        (void)snprintf(l->why, sizeof(l->why), "%s",
                       err.msg[0] != '\0' ? err.msg : "cannot load");
    l->done = 1;
    unref_locked(l);
    return NULL;
}

struct pdp_shadow_load *
pdp_shadow_load_start(const char *dir, const json_t *settings)
{
    struct pdp_shadow_load *l = calloc(1, sizeof(*l));
    pthread_attr_t attr;
    pthread_t t;
    int rc;

    if (l == NULL)
        return NULL;
    l->refs = 2; /* the thread's and the caller's */
    l->dir = strdup(dir);
    l->settings = settings != NULL ? json_deep_copy(settings) : NULL;
    if (l->dir == NULL || (settings != NULL && l->settings == NULL) ||
        pthread_mutex_init(&l->mu, NULL) != 0) {
        json_decref(l->settings);
        free(l->dir);
        free(l);
        return NULL;
    }
    if (pthread_attr_init(&attr) != 0) {
        load_free(l);
        return NULL;
    }
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &attr, load_main, l);
    (void)pthread_attr_destroy(&attr);
    if (rc != 0) {
        load_free(l);
        return NULL;
    }
    return l;
}

int
pdp_shadow_load_poll(struct pdp_shadow_load *l, struct pol_bundle **out,
                     char *why, size_t cap)
{
    int done;

    pthread_mutex_lock(&l->mu);
    done = l->done;
    if (done) {
        *out = l->bundle;
        l->bundle = NULL;
        (void)snprintf(why, cap, "%s", l->why);
    }
    pthread_mutex_unlock(&l->mu);
    return done;
}

void
pdp_shadow_load_release(struct pdp_shadow_load *l)
{
    if (l == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    unref_locked(l);
}
