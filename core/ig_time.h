/*
 * ig_time.h - wall-clock time as intentgate records it: whole seconds since
 * the Unix epoch, written as RFC 3339 UTC "YYYY-MM-DDTHH:MM:SSZ"; and
 * random UUIDv4 identifiers.
 */
#ifndef IG_TIME_H
#define IG_TIME_H

#include <stdint.h>

#include "ig_error.h"

#define IG_TIME_STRLEN 20 /* "2026-11-29T17:00:00Z" */
#define IG_UUID_STRLEN 36

/* Seconds since the epoch, now. */
int64_t ig_time_now(void);

/* Write t as "YYYY-MM-DDTHH:MM:SSZ" (years 0000-9999; else IG_ERR_INVALID). */
enum ig_status ig_time_format(int64_t t, char out[IG_TIME_STRLEN + 1]) IG_WUR;

/*
 * Parse exactly the form ig_time_format writes (len chars); refuses other
 * offsets, fractions, and impossible dates. IG_ERR_INVALID.
 */
enum ig_status ig_time_parse(const char *s, size_t len, int64_t *out) IG_WUR;

/* A random (libsodium randombytes) RFC 4122 version 4 UUID, lowercase. */
void ig_uuid4(char out[IG_UUID_STRLEN + 1]);

#endif
