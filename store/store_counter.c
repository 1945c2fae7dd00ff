/*
 * store_counter.c - quota counters for policies' count(key, window).
 *
 * Each key keeps a list of per-second buckets (second, hits), oldest first,
 * covering at most the longest window (one day). Counting sums the buckets
 * inside the window from the newest end, so a count costs O(buckets in the
 * window) and a key uses memory only for the seconds it was hit. Keys live
 * in a chained hash table under one mutex. Every hit is also added to a
 * pending list of (key, second, hits), which one writer job at a time
 * takes and adds to the counter_counts table - one row per key and second,
 * one statement per key and second per group commit, not one row per hit
 * (asynchronously: a lost last batch of hits at a crash under-counts by
 * that much). The last day of counts is loaded back at open, so quotas
 * survive a restart.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"

#define NSLOTS 4096 /* hash table slots */

struct bucket {
    int64_t sec;
    int64_t hits;
};

struct entry {
    char *key;
    struct bucket *b;
    size_t off, len, cap; /* live buckets are b[off .. len) */
    struct entry *next;
};

struct store_counter {
    pthread_mutex_t mu;
    struct entry *slot[NSLOTS];
    size_t nkeys;
    struct store_hits pending;
    int flush_queued; /* a writer job will take pending */
};

static size_t
hash_key(const char *k)
{
    size_t h = 5381;

    while (*k != '\0')
        h = h * 33 ^ (unsigned char)*k++;
    return h % NSLOTS;
}

static void
entry_free(struct entry *e)
{
    free(e->key);
    free(e->b);
    free(e);
}

/* Drop buckets older than the longest window; compact when half empty. */
static void
prune(struct entry *e, int64_t now)
{
    while (e->off < e->len &&
           e->b[e->off].sec <= now - IG_STORE_COUNT_WINDOW_MAX)
        e->off++;
    if (e->off > 0 && e->off * 2 >= e->len) {
        memmove(e->b, e->b + e->off, (e->len - e->off) * sizeof(e->b[0]));
        e->len -= e->off;
        e->off = 0;
    }
}

static int
add_hit(struct entry *e, int64_t now)
{
    struct bucket *nb;
    size_t ncap;

    if (e->len > e->off && e->b[e->len - 1].sec >= now) {
        e->b[e->len - 1].hits++;
        return 0;
    }
    if (e->len == e->cap) {
        ncap = e->cap ? e->cap * 2 : 8;
        nb = realloc(e->b, ncap * sizeof(*nb));
        if (nb == NULL)
            return -1;
        e->b = nb;
        e->cap = ncap;
    }
    e->b[e->len].sec = now;
    e->b[e->len].hits = 1;
    e->len++;
    return 0;
}

/* Free every key with no hit inside the longest window. */
static void
evict_idle(struct store_counter *c, int64_t now)
{
    struct entry **pp, *e;
    size_t i;

    for (i = 0; i < NSLOTS; i++) {
        pp = &c->slot[i];
        while ((e = *pp) != NULL) {
            prune(e, now);
            if (e->off == e->len) {
                *pp = e->next;
                entry_free(e);
                c->nkeys--;
            } else {
                pp = &e->next;
            }
        }
    }
}

static struct entry *
find_or_add(struct store_counter *c, const char *key, int64_t now)
{
    size_t h = hash_key(key);
    struct entry *e;

    for (e = c->slot[h]; e != NULL; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    if (c->nkeys >= IG_STORE_COUNT_KEYS_MAX)
        evict_idle(c, now);
    if (c->nkeys >= IG_STORE_COUNT_KEYS_MAX)
        return NULL;
    e = calloc(1, sizeof(*e));
    if (e == NULL || (e->key = strdup(key)) == NULL) {
        free(e);
        return NULL;
    }
    e->next = c->slot[h];
    c->slot[h] = e;
    c->nkeys++;
    return e;
}

/* Record a hit and count the window; -1 on error. Caller holds c->mu. */
static int64_t
hit_and_count(struct store_counter *c, const char *key, int64_t window,
              int64_t now)
{
    struct entry *e = find_or_add(c, key, now);
    int64_t sum = 0;
    size_t i;

    if (e == NULL)
        return -1;
    prune(e, now);
    if (add_hit(e, now) != 0)
        return -1;
    for (i = e->len; i > e->off && e->b[i - 1].sec > now - window; i--)
        sum += e->b[i - 1].hits;
    return sum;
}

/* Add one hit of key at sec to h; -1 when out of memory. The last few
   entries are searched: a busy key hits the same second many times. */
static int
pending_add(struct store_hits *h, const char *key, int64_t sec)
{
    struct store_pending_hit *np;
    size_t i, ncap;

    for (i = h->n; i > 0 && i + 8 > h->n; i--)
        if (h->p[i - 1].sec == sec && strcmp(h->p[i - 1].key, key) == 0) {
            h->p[i - 1].hits++;
            return 0;
        }
    if (h->n == h->cap) {
        ncap = h->cap ? h->cap * 2 : 16;
        if ((np = realloc(h->p, ncap * sizeof(*np))) == NULL)
            return -1;
        h->p = np;
        h->cap = ncap;
    }
    if ((h->p[h->n].key = strdup(key)) == NULL)
        return -1;
    h->p[h->n].sec = sec;
    h->p[h->n].hits = 1;
    h->n++;
    return 0;
}

int64_t
store_counter_hit(struct store_sq *s, const char *key, int64_t window,
                  int64_t now, int *queue_flush)
{
    struct store_counter *c = s->counters;
    int64_t n;

    *queue_flush = 0;
    pthread_mutex_lock(&c->mu);
    n = hit_and_count(c, key, window, now);
    if (n >= 0 && pending_add(&c->pending, key, now) != 0)
        n = -1;
    if (n >= 0 && !c->flush_queued)
        *queue_flush = c->flush_queued = 1;
    pthread_mutex_unlock(&c->mu);
    return n;
}

void
store_hits_free(struct store_hits *h)
{
    size_t i;

    if (h == NULL)
        return;
    for (i = 0; i < h->n; i++)
        free(h->p[i].key);
    free(h->p);
    free(h);
}

struct store_hits *
store_counter_take(struct store_sq *s)
{
    struct store_counter *c = s->counters;
    struct store_hits *h = calloc(1, sizeof(*h));

    pthread_mutex_lock(&c->mu);
    c->flush_queued = 0; /* the next hit queues the next job */
    if (h != NULL) {
        *h = c->pending;
        memset(&c->pending, 0, sizeof(c->pending));
    }
    pthread_mutex_unlock(&c->mu);
    return h;
}

void
store_counter_queue_failed(struct store_sq *s)
{
    pthread_mutex_lock(&s->counters->mu);
    s->counters->flush_queued = 0;
    pthread_mutex_unlock(&s->counters->mu);
}

/* Add n hits at sec (a loaded row); -1 on error. Caller holds c->mu. */
static int
load_hits(struct store_counter *c, const char *key, int64_t sec, int64_t n)
{
    struct entry *e = find_or_add(c, key, sec);

    if (e == NULL || n < 1)
        return -1;
    prune(e, sec);
    if (add_hit(e, sec) != 0)
        return -1;
    e->b[e->len - 1].hits += n - 1;
    return 0;
}

enum ig_status
store_counters_load(struct store_sq *s, struct ig_err *err)
{
    sqlite3_stmt *st = NULL;
    enum ig_status rc = IG_OK;
    int step;

    s->counters = calloc(1, sizeof(*s->counters));
    if (s->counters == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&s->counters->mu, NULL);
    /* Oldest second first, as the buckets are kept. */
    if (sqlite3_exec(s->wdb,
                     "DELETE FROM counter_counts WHERE at <= "
                     "CAST(strftime('%s','now') AS INTEGER) - 86400",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->wdb,
                           "SELECT key, at, hits FROM counter_counts "
                           "ORDER BY at",
                           -1, &st, NULL) != SQLITE_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot load quota counters: %s",
                          sqlite3_errmsg(s->wdb));
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        if (key != NULL &&
            load_hits(s->counters, key, sqlite3_column_int64(st, 1),
                      sqlite3_column_int64(st, 2)) < 0) {
            rc = ig_err_set(err, IG_ERR_NOMEM, "cannot load quota counters");
            break;
        }
    }
    if (rc == IG_OK && step != SQLITE_DONE)
        rc = ig_err_set(err, IG_ERR_IO, "cannot load quota counters: %s",
                        sqlite3_errmsg(s->wdb));
    sqlite3_finalize(st);
    return rc;
}

void
store_counters_free(struct store_sq *s)
{
    struct entry *e, *next;
    size_t i;

    if (s->counters == NULL)
        return;
    for (i = 0; i < NSLOTS; i++)
        for (e = s->counters->slot[i]; e != NULL; e = next) {
            next = e->next;
            entry_free(e);
        }
    for (i = 0; i < s->counters->pending.n; i++)
        free(s->counters->pending.p[i].key);
    free(s->counters->pending.p);
    pthread_mutex_destroy(&s->counters->mu);
    free(s->counters);
    s->counters = NULL;
}
