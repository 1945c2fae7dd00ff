/*
 * appr_limiter.c - the failed sign-in counts behind appr_limiter.h: one
 * fixed array under one mutex, scanned linearly (a few thousand entries
 * of a short key and three numbers; a login costs an argon2id hash, far
 * more than the scan).
 */
#include "appr_limiter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct strike {
    char key[APPR_LIMITER_KEY_MAX + 1];
    int failures;  /* 0: a free entry */
    int64_t last;  /* the last failure */
    int64_t until; /* no try before this (0: none) */
};

struct appr_limiter {
    pthread_mutex_t mu;
    int max;
    int64_t window; /* ms */
    struct strike *v;
    size_t n;
};

struct appr_limiter *
appr_limiter_new(int max_failures, int64_t window_ms)
{
    struct appr_limiter *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    l->v = calloc(APPR_LIMITER_MAX, sizeof(*l->v));
    if (l->v == NULL) {
        free(l);
        return NULL;
    }
    (void)pthread_mutex_init(&l->mu, NULL);
    l->max = max_failures > 0 ? max_failures : 1;
    l->window = window_ms > 0 ? window_ms : 1;
    l->n = APPR_LIMITER_MAX;
    return l;
}

void
appr_limiter_free(struct appr_limiter *l)
{
    if (l == NULL)
        return;
    free(l->v);
    (void)pthread_mutex_destroy(&l->mu);
    free(l);
}

/* 1 when e holds nothing worth keeping at now. */
static int
forgotten(const struct appr_limiter *l, const struct strike *e, int64_t now)
{
    int64_t end = e->until > e->last ? e->until : e->last;

    return e->failures == 0 || now >= end + l->window;
}

/* The live entry of key, or NULL (a forgotten one is cleared). Under
   l->mu. */
static struct strike *
find(struct appr_limiter *l, const char *key, int64_t now)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        struct strike *e = &l->v[i];
        if (e->failures == 0 || strncmp(e->key, key, APPR_LIMITER_KEY_MAX) != 0)
            continue;
        if (!forgotten(l, e, now))
            return e;
        memset(e, 0, sizeof(*e));
        return NULL;
    }
    return NULL;
}

/* A free entry for key: a forgotten one, else the one with the oldest
   last failure. Under l->mu. */
static struct strike *
make(struct appr_limiter *l, const char *key, int64_t now)
{
    struct strike *old = NULL;
    size_t i;

    for (i = 0; i < l->n; i++) {
        struct strike *e = &l->v[i];
        if (forgotten(l, e, now)) {
            old = e;
            break;
        }
        if (old == NULL || e->last < old->last)
            old = e;
    }
    memset(old, 0, sizeof(*old));
    (void)snprintf(old->key, sizeof(old->key), "%s", key);
    return old;
}

int64_t
appr_limiter_wait(struct appr_limiter *l, const char *key, int64_t now)
{
    struct strike *e;
    int64_t wait = 0;

    (void)pthread_mutex_lock(&l->mu);
    e = find(l, key, now);
    if (e != NULL && e->until > now)
        wait = e->until - now;
    (void)pthread_mutex_unlock(&l->mu);
    return wait;
}

int
appr_limiter_failures(struct appr_limiter *l, const char *key, int64_t now)
{
    struct strike *e;
    int n;

    (void)pthread_mutex_lock(&l->mu);
    e = find(l, key, now);
    n = e != NULL ? e->failures : 0;
    (void)pthread_mutex_unlock(&l->mu);
    return n;
}

void
appr_limiter_fail(struct appr_limiter *l, const char *key, int64_t now)
{
    struct strike *e;
    int64_t wait;
    int over;

    (void)pthread_mutex_lock(&l->mu);
    e = find(l, key, now);
    if (e == NULL)
        e = make(l, key, now);
    if (e->failures < 1000000)
        e->failures++;
    e->last = now;
    over = e->failures - l->max;
    if (over >= 0) {
        /* IG_LOGIN_BACKOFF_FIRST_MS << over, at most the window. */
        wait = IG_LOGIN_BACKOFF_FIRST_MS;
        while (over-- > 0 && wait < l->window)
            wait *= 2;
        e->until = now + (wait < l->window ? wait : l->window);
    }
    (void)pthread_mutex_unlock(&l->mu);
}

void
appr_limiter_clear(struct appr_limiter *l, const char *key)
{
    size_t i;

    (void)pthread_mutex_lock(&l->mu);
    for (i = 0; i < l->n; i++)
        if (l->v[i].failures > 0 &&
            strncmp(l->v[i].key, key, APPR_LIMITER_KEY_MAX) == 0)
            memset(&l->v[i], 0, sizeof(l->v[i]));
    (void)pthread_mutex_unlock(&l->mu);
}
