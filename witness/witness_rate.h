/*
 * witness_rate.h - a token bucket per client address, in a table of fixed
 * size: each address may make `rate` requests a second, with bursts up to
 * twice that. The table holds at most `slots` addresses; a new one takes
 * the slot of the address seen longest ago among the few it may use, so
 * many addresses cost no memory (an evicted address starts afresh: the
 * limit is a courtesy to the witness's disk, not a security boundary).
 */
#ifndef WITNESS_RATE_H
#define WITNESS_RATE_H

#include <stddef.h>

#include "ig_error.h"

struct witness_rate;

/* rate > 0 tokens a second; slots > 0. IG_ERR_NOMEM. */
enum ig_status witness_rate_new(double rate, size_t slots,
                                struct witness_rate **out) IG_WUR;

/* NULL is fine. */
void witness_rate_free(struct witness_rate *r);

/* Take a token for the address addr[0..len) (at most 16 bytes) at time now
   (seconds, monotonic). 1: go on. 0: over the limit, *retry_after (whole
   seconds, >= 1) until a token is there. Thread safe. */
int witness_rate_take(struct witness_rate *r, const void *addr, size_t len,
                      double now, unsigned *retry_after);

#endif
