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

/* A counter of at most max_keys keys, each remembering max_window seconds
   (> 0). NULL when out of memory. */
struct ig_counter *ig_counter_new(size_t max_keys, int64_t max_window);

/* NULL is fine. */
void ig_counter_free(struct ig_counter *c);

/*
 * Record one hit of key at second now and return the hits of key in the
 * window seconds ending at now (this one included): buckets with
 * second > now - window. window is capped at max_window. -1 when out of
 * memory or when key would be key number max_keys + 1 and no key is idle
 * for max_window (a quota that cannot be counted must not pass).
 */
int64_t ig_counter_hit(struct ig_counter *c, const char *key, int64_t window,
                       int64_t now);

/* Add hits (>= 1) of key at second sec without counting: loading counts
   back, oldest first. -1 when out of memory, full, or hits < 1. */
int ig_counter_load(struct ig_counter *c, const char *key, int64_t sec,
                    int64_t hits);

/* How many keys the counter holds. */
size_t ig_counter_keys(const struct ig_counter *c);

#endif
