/*
 * appr_limiter.h - failed sign-ins counted per key (an approver id, a
 * device token, a client address), in memory.
 *
 * A key with max_failures failures must wait before its next try: first
 * IG_LOGIN_BACKOFF_FIRST_MS, twice as long after each further failure,
 * never longer than window. Its failures are forgotten a window after
 * both its last failure and its wait are over. A success
 * clears the key. The caller decides what a count means: an approver id
 * waits (appr_limiter_wait), a client address is only slowed
 * (appr_limiter_failures, pdp_login.c).
 *
 * Capacity is fixed (APPR_LIMITER_MAX keys, keys cut at
 * APPR_LIMITER_KEY_MAX bytes); when it is full a new key takes the place
 * of a forgotten one, else of the one whose last failure is oldest.
 * Times are milliseconds on a clock of the caller's (a monotonic one:
 * testable without sleeping, deaf to wall clock steps).
 * Thread safe.
 */
#ifndef APPR_LIMITER_H
#define APPR_LIMITER_H

#include <stdint.h>

#include "ig_limits.h"

#define APPR_LIMITER_MAX IG_LOGIN_LIMITER_KEYS
#define APPR_LIMITER_KEY_MAX IG_LOGIN_LIMITER_KEY_MAX

struct appr_limiter;

/* max_failures >= 1, window >= 1 ms. NULL on out of memory. */
struct appr_limiter *appr_limiter_new(int max_failures, int64_t window_ms);
void appr_limiter_free(struct appr_limiter *l);

/* Milliseconds key must still wait at now before it may try; 0: it
   may. */
int64_t appr_limiter_wait(struct appr_limiter *l, const char *key, int64_t now);

/* The failures key has now (0 once forgotten). */
int appr_limiter_failures(struct appr_limiter *l, const char *key, int64_t now);

/* One more failure of key at now. */
void appr_limiter_fail(struct appr_limiter *l, const char *key, int64_t now);

/* A success: forget key's failures. */
void appr_limiter_clear(struct appr_limiter *l, const char *key);

#endif
