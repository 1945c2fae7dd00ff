/*
 * witness_rate.c - token buckets per client address (witness_rate.h).
 *
 * The table is an array of slots; an address hashes (keyed BLAKE2b, a
 * fresh key per process, so nobody picks addresses that collide) to a
 * set of WAYS neighbouring slots. It takes the slot holding it, else an
 * empty one, else the one seen longest ago. A bucket holds up to
 * 2 x rate tokens, refilled at rate a second.
 */
#include "witness_rate.h"

#include <math.h>
#include <pthread.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WAYS 8
#define ADDR_MAX 16

struct slot {
    unsigned char addr[ADDR_MAX];
    size_t len; /* 0: empty */
    double tokens;
    double seen; /* last refill */
};

struct witness_rate {
    pthread_mutex_t mu;
    double rate, burst;
    size_t nslots;
    unsigned char key[crypto_shorthash_KEYBYTES];
    struct slot *slots;
};

enum ig_status
witness_rate_new(double rate, size_t slots, struct witness_rate **out)
{
    struct witness_rate *r;

    *out = NULL;
    if (!(rate > 0) || slots == 0)
        return IG_ERR_INVALID;
    if (slots < WAYS)
        slots = WAYS;
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return IG_ERR_NOMEM;
    r->slots = calloc(slots, sizeof(*r->slots));
    if (r->slots == NULL || pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r->slots);
        free(r);
        return IG_ERR_NOMEM;
    }
    r->rate = rate;
    r->burst = 2 * rate;
    r->nslots = slots;
    randombytes_buf(r->key, sizeof(r->key));
    *out = r;
    return IG_OK;
}

void
witness_rate_free(struct witness_rate *r)
{
    if (r == NULL)
        return;
    pthread_mutex_destroy(&r->mu);
    free(r->slots);
    free(r);
}

/* The slot for addr: its own, an empty one, or the stalest of its set. */
static struct slot *
find(struct witness_rate *r, const unsigned char *addr, size_t len)
{
    unsigned char h[crypto_shorthash_BYTES];
    struct slot *s, *pick = NULL;
    uint64_t v = 0;
    size_t i, base;

    crypto_shorthash(h, addr, len, r->key);
    memcpy(&v, h, sizeof(v) < sizeof(h) ? sizeof(v) : sizeof(h));
    base = (size_t)(v % r->nslots);
    for (i = 0; i < WAYS; i++) {
        s = &r->slots[(base + i) % r->nslots];
        if (s->len == len && memcmp(s->addr, addr, len) == 0)
            return s;
        if (pick == NULL ||
            (pick->len != 0 && (s->len == 0 || s->seen < pick->seen)))
            pick = s;
    }
    memset(pick, 0, sizeof(*pick));
    memcpy(pick->addr, addr, len);
    pick->len = len;
    pick->tokens = r->burst;
    return pick;
}

int
witness_rate_take(struct witness_rate *r, const void *addr, size_t len,
                  double now, unsigned *retry_after)
{
    struct slot *s;
    double wait;
    int ok;

    *retry_after = 0;
    if (len > ADDR_MAX)
        len = ADDR_MAX;
    pthread_mutex_lock(&r->mu);
    s = find(r, addr, len);
    if (s->seen > 0 && now > s->seen)
        s->tokens += (now - s->seen) * r->rate;
    if (s->tokens > r->burst)
        s->tokens = r->burst;
    s->seen = now;
    ok = s->tokens >= 1;
    if (ok) {
        s->tokens -= 1;
    } else {
        wait = ceil((1 - s->tokens) / r->rate);
        *retry_after = wait < 1 ? 1 : (unsigned)wait;
    }
    pthread_mutex_unlock(&r->mu);
    return ok;
}
