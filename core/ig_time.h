/*
 * ig_time.h - the clocks intentgate reads: wall-clock time as it records it
 * (whole seconds since the Unix epoch, written as RFC 3339 UTC
 * "YYYY-MM-DDTHH:MM:SSZ") and the monotonic clock of intervals and
 * windows; and random UUIDv4 identifiers.
 *
 * Every product read of either clock for expiry, intervals and windows goes
 * through ig_time_now / ig_time_mono, and every sleep until such a deadline
 * takes its end from ig_time_wait_until: that is what lets the test clock
 * move them all. The test clock exists only in builds configured with
 * -DIG_TEST_CLOCK=ON (never in production; docs/operations.md): when
 * IG_TEST_CLOCK_FILE names a file at start-up (exec), both clocks run
 * ahead by the whole seconds that file holds, and the process logs the
 * warning "test_clock.active" once. See ig_time.c for the file's rules.
 */
#ifndef IG_TIME_H
#define IG_TIME_H

#include <stdint.h>
#include <time.h>

#include "ig_error.h"

#define IG_TIME_STRLEN 20 /* "2026-11-29T17:00:00Z" */
#define IG_UUID_STRLEN 36

/* Seconds since the epoch, now (plus the test clock's offset). Thread
   safe. */
int64_t ig_time_now(void);

/* Milliseconds since the epoch, now (plus the test clock's offset): for
   counts that several machines share (a monotonic clock differs between
   them). Thread safe. */
int64_t ig_time_now_ms(void);

/* Seconds on CLOCK_MONOTONIC (plus the test clock's offset): for
   intervals and windows, deaf to wall clock steps. Thread safe. */
double ig_time_mono(void);

/*
 * The absolute CLOCK_MONOTONIC time at which a pthread_cond_timedwait (on a
 * condition variable whose clock is CLOCK_MONOTONIC) should give up when
 * the caller wants to sleep until ig_time_mono() reaches due. A due in the
 * past gives now. With the test clock active the sleep is cut to a tick of
 * 0.1 s, so that a sleeper notices a jump of the test clock within a tick:
 * callers re-check their deadline after every wake-up (as they must
 * anyway, for spurious ones). Thread safe.
 */
void ig_time_wait_until(double due, struct timespec *out);

/* Write t as "YYYY-MM-DDTHH:MM:SSZ" (years 0000-9999; else IG_ERR_INVALID). */
enum ig_status ig_time_format(int64_t t, char out[IG_TIME_STRLEN + 1]) IG_WUR;

/*
 * Parse exactly the form ig_time_format writes (len chars); refuses other
 * offsets, fractions, and impossible dates. IG_ERR_INVALID.
 */
enum ig_status ig_time_parse(const char *s, size_t len, int64_t *out) IG_WUR;

/* A random (libsodium randombytes) RFC 4122 version 4 UUID, lowercase. */
void ig_uuid4(char out[IG_UUID_STRLEN + 1]);

/*
 * A RFC 9562 version 7 UUID: the real clock's Unix milliseconds, then 74
 * random bits. Intent ids use it: ids created in time order land at the
 * right edge of the store's unique index instead of on a random page, so
 * a group commit dirties one index page instead of one per intent. The
 * random part keeps them as hard to guess as a version 4 UUID is for a
 * given millisecond; the time part says no more than created_at does.
 */
void ig_uuid7(char out[IG_UUID_STRLEN + 1]);

#endif
