/*
 * store_counter.c - quota counters for policies' count(key, window).
 *
 * The counts themselves are a core/ig_counter.h counter (per-second
 * buckets per key, covering the longest window, one day) under one mutex.
 * Every hit is also added to a
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

#include "ig_counter.h"
#include "ig_limits.h"

struct store_counter {
    pthread_mutex_t mu;
    struct ig_counter *hits; /* core/ig_counter.h */
    struct store_hits pending;
    int flush_queued; /* a writer job will take pending */
};

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
    n = ig_counter_hit(c->hits, key, window, now);
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

enum ig_status
store_counters_load(struct store_sq *s, struct ig_err *err)
{
    sqlite3_stmt *st = NULL;
    enum ig_status rc = IG_OK;
    int step;

    s->counters = calloc(1, sizeof(*s->counters));
    if (s->counters == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    s->counters->hits =
        ig_counter_new(IG_STORE_COUNT_KEYS_MAX, IG_STORE_COUNT_WINDOW_MAX);
    if (s->counters->hits == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    /* The live quotas keep what the traffic gives them (at most a bucket
       per key and second of the last day): no budget that an agent could
       spend to make every count() fail. */
    ig_counter_set_max_buckets(s->counters->hits, SIZE_MAX);
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
            ig_counter_load(s->counters->hits, key, sqlite3_column_int64(st, 1),
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
    size_t i;

    if (s->counters == NULL)
        return;
    ig_counter_free(s->counters->hits);
    for (i = 0; i < s->counters->pending.n; i++)
        free(s->counters->pending.p[i].key);
    free(s->counters->pending.p);
    pthread_mutex_destroy(&s->counters->mu);
    free(s->counters);
    s->counters = NULL;
}
