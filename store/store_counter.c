/*
 * store_counter.c - quota counters for policies' count(key, window).
 *
 * Each key keeps a list of per-second buckets (second, hits), oldest first,
 * covering at most the longest window (one day). Counting sums the buckets
 * inside the window from the newest end, so a count costs O(buckets in the
 * window) and a key uses memory only for the seconds it was hit. Keys live
 * in a chained hash table under one mutex. Every hit is also written to
 * the counter_hits table by the writer thread (asynchronously: a lost last
 * second of hits at a crash under-counts by that much), and the last day of
 * hits is loaded back at open, so quotas survive a restart.
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

int64_t
store_counter_hit(struct store *s, const char *key, int64_t window, int64_t now)
{
    int64_t n;

    pthread_mutex_lock(&s->counters->mu);
    n = hit_and_count(s->counters, key, window, now);
    pthread_mutex_unlock(&s->counters->mu);
    return n;
}

enum ig_status
store_counters_load(struct store *s, struct ig_err *err)
{
    sqlite3_stmt *st = NULL;
    enum ig_status rc = IG_OK;
    int step;

    s->counters = calloc(1, sizeof(*s->counters));
    if (s->counters == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&s->counters->mu, NULL);
    if (sqlite3_exec(s->wdb,
                     "DELETE FROM counter_hits WHERE at <= "
                     "CAST(strftime('%s','now') AS INTEGER) - 86400",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->wdb,
                           "SELECT key, at FROM counter_hits ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot load quota counters: %s",
                          sqlite3_errmsg(s->wdb));
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        if (key != NULL && hit_and_count(s->counters, key, 1,
                                         sqlite3_column_int64(st, 1)) < 0) {
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
store_counters_free(struct store *s)
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
    pthread_mutex_destroy(&s->counters->mu);
    free(s->counters);
    s->counters = NULL;
}
