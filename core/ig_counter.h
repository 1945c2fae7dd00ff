/*
 * ig_counter.h - sliding-window hit counters in memory: what a policy's
 * count(key, window) reads. The store keeps one (store_counter.c, under
 * its mutex, with the hits also written to the database); a replay of
 * recorded intents (`intentgate policy replay`) and a shadow bundle in the
 * server each keep their own, so neither reads nor moves the live quotas.
 *
 * Each key keeps per-second buckets (second, hits), oldest first, covering
 * at most max_window seconds before the newest hit; counting sums the
 * buckets inside the window from the newest end. Time is whatever the
 * caller says it is: the wall clock in the server, each intent's
 * created_at in a replay. A hit older than the key's newest bucket is
 * counted in that bucket (time never runs backwards inside a key).
 *
 * Not thread safe: one counter belongs to one thread, or to a caller that
 * holds a lock around every call.
 */
#ifndef IG_COUNTER_H
#define IG_COUNTER_H

#include <stddef.h>
#include <stdint.h>

struct ig_counter;

/* Buckets a new counter may hold in all, by default: 16 MiB of them. A
   policy calling count() on many keys per evaluation adds a bucket per key
   and second; the memory is outside the Lua heap cap, so it has its own. */
#define IG_COUNTER_BUCKETS_DEFAULT ((size_t)1 << 20)

/* A counter of at most max_keys keys, each remembering max_window seconds
   (> 0), holding at most IG_COUNTER_BUCKETS_DEFAULT buckets. NULL when out
   of memory. */
struct ig_counter *ig_counter_new(size_t max_keys, int64_t max_window);

/* Change the bucket budget (>= 1): past it, the buckets older than
   max_window are dropped everywhere, and then a hit that needs a new
   bucket fails (-1). */
void ig_counter_set_max_buckets(struct ig_counter *c, size_t max_buckets);

/* NULL is fine. */
void ig_counter_free(struct ig_counter *c);

/*
 * Record one hit of key at second now and return the hits of key in the
 * window seconds ending at now (this one included): buckets with
 * second > now - window. window is capped at max_window. -1 when out of
 * memory, when key would be key number max_keys + 1 and no key is idle
 * for max_window, or when the bucket budget is spent (a quota that cannot
 * be counted must not pass).
 */
int64_t ig_counter_hit(struct ig_counter *c, const char *key, int64_t window,
                       int64_t now);

/* Add hits (>= 1) of key at second sec without counting: loading counts
   back, oldest first. -1 when out of memory, full, or hits < 1. */
int ig_counter_load(struct ig_counter *c, const char *key, int64_t sec,
                    int64_t hits);

/* How many keys, and how many buckets (allocated), the counter holds. */
size_t ig_counter_keys(const struct ig_counter *c);
size_t ig_counter_buckets(const struct ig_counter *c);

#endif
