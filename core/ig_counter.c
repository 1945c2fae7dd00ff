/*
 * ig_counter.c - sliding-window hit counters in memory (ig_counter.h).
 *
 * How it works: keys live in a chained hash table (djb2, a fixed number
 * of slots). Each key holds an array of buckets (second, hits), oldest
 * first; live buckets are b[off .. len). A hit first drops the buckets
 * that fell out of max_window (advancing off, compacting when half the
 * array is dead), then adds to the newest bucket or appends one. Counting
 * walks back from the newest bucket while it is inside the window, so it
 * costs the buckets in the window, not the key's history. When the table
 * is full, every key with no bucket left inside max_window is freed
 * before a new key is refused.
 */
#include "ig_counter.h"

#include <stdlib.h>
#include <string.h>

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

struct ig_counter {
    struct entry *slot[NSLOTS];
    size_t nkeys, max_keys;
    size_t nbuckets, max_buckets; /* allocated, in all entries */
    int64_t max_window;
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

struct ig_counter *
ig_counter_new(size_t max_keys, int64_t max_window)
{
    struct ig_counter *c;

    if (max_window < 1)
        return NULL;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->max_keys = max_keys;
    c->max_buckets = IG_COUNTER_BUCKETS_DEFAULT;
    c->max_window = max_window;
    return c;
}

void
ig_counter_free(struct ig_counter *c)
{
    struct entry *e, *next;
    size_t i;

    if (c == NULL)
        return;
    for (i = 0; i < NSLOTS; i++)
        for (e = c->slot[i]; e != NULL; e = next) {
            next = e->next;
            entry_free(e);
        }
    free(c);
}

size_t
ig_counter_keys(const struct ig_counter *c)
{
    return c->nkeys;
}

size_t
ig_counter_buckets(const struct ig_counter *c)
{
    return c->nbuckets;
}

void
ig_counter_set_max_buckets(struct ig_counter *c, size_t max_buckets)
{
    c->max_buckets = max_buckets > 0 ? max_buckets : 1;
}

/* Drop buckets older than the longest window; compact when half empty,
   and give back the array's unused half when it is three-quarters free. */
static void
prune(struct ig_counter *c, struct entry *e, int64_t now)
{
    struct bucket *nb;

    while (e->off < e->len && e->b[e->off].sec <= now - c->max_window)
        e->off++;
    if (e->off > 0 && e->off * 2 >= e->len) {
        memmove(e->b, e->b + e->off, (e->len - e->off) * sizeof(e->b[0]));
        e->len -= e->off;
        e->off = 0;
    }
    if (e->cap > 8 && e->len * 4 <= e->cap &&
        (nb = realloc(e->b, e->cap / 2 * sizeof(*nb))) != NULL) {
        e->b = nb;
        c->nbuckets -= e->cap / 2;
        e->cap /= 2;
    }
}

static void evict_idle(struct ig_counter *c, int64_t now,
                       const struct entry *keep);

/* Add n hits at now (into the newest bucket when it is not older). */
static int
add_hits(struct ig_counter *c, struct entry *e, int64_t now, int64_t n)
{
    struct bucket *nb;
    size_t ncap;

    if (e->len > e->off && e->b[e->len - 1].sec >= now) {
        e->b[e->len - 1].hits += n;
        return 0;
    }
    if (e->len == e->cap) {
        ncap = e->cap ? e->cap * 2 : 8;
        if (c->nbuckets + (ncap - e->cap) > c->max_buckets)
            evict_idle(c, now, e); /* old buckets everywhere */
        if (e->len == e->cap && c->nbuckets + (ncap - e->cap) > c->max_buckets)
            return -1;
    }
    if (e->len == e->cap) {
        nb = realloc(e->b, ncap * sizeof(*nb));
        if (nb == NULL)
            return -1;
        e->b = nb;
        c->nbuckets += ncap - e->cap;
        e->cap = ncap;
    }
    e->b[e->len].sec = now;
    e->b[e->len].hits = n;
    e->len++;
    return 0;
}

/* Free every key but keep with no hit inside the longest window. */
static void
evict_idle(struct ig_counter *c, int64_t now, const struct entry *keep)
{
    struct entry **pp, *e;
    size_t i;

    for (i = 0; i < NSLOTS; i++) {
        pp = &c->slot[i];
        while ((e = *pp) != NULL) {
            prune(c, e, now);
            if (e->off == e->len && e != keep) {
                *pp = e->next;
                c->nbuckets -= e->cap;
                entry_free(e);
                c->nkeys--;
            } else {
                pp = &e->next;
            }
        }
    }
}

static struct entry *
find_or_add(struct ig_counter *c, const char *key, int64_t now)
{
    size_t h = hash_key(key);
    struct entry *e;

    for (e = c->slot[h]; e != NULL; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    if (c->nkeys >= c->max_keys)
        evict_idle(c, now, NULL);
    if (c->nkeys >= c->max_keys)
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

int64_t
ig_counter_hit(struct ig_counter *c, const char *key, int64_t window,
               int64_t now)
{
    struct entry *e = find_or_add(c, key, now);
    int64_t sum = 0;
    size_t i;

    if (e == NULL)
        return -1;
    if (window > c->max_window)
        window = c->max_window;
    prune(c, e, now);
    if (add_hits(c, e, now, 1) != 0)
        return -1;
    for (i = e->len; i > e->off && e->b[i - 1].sec > now - window; i--)
        sum += e->b[i - 1].hits;
    return sum;
}

int
ig_counter_load(struct ig_counter *c, const char *key, int64_t sec,
                int64_t hits)
{
    struct entry *e;

    if (hits < 1 || (e = find_or_add(c, key, sec)) == NULL)
        return -1;
    prune(c, e, sec);
    return add_hits(c, e, sec, hits);
}
