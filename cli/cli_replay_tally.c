/*
 * cli_replay_tally.c - the counting maps of a replay's report
 * (cli_replay.h): text keys to counts, open addressing with linear
 * probing, grown to twice the size at half full, so a count is one hash
 * and a short probe whatever the number of keys (a database may hold a
 * million distinct actions). The hash is SipHash (crypto_shorthash) under
 * a key drawn at random for each map: the keys are texts agents chose,
 * and an unkeyed hash would let one pick actions that all collide.
 */
#include "cli_replay.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
hash(const struct replay_tally *t, const char *s)
{
    unsigned char h[crypto_shorthash_BYTES];
    uint64_t v = 0;
    size_t i;

    crypto_shorthash(h, (const unsigned char *)s, strlen(s), t->key);
    for (i = 0; i < sizeof(h); i++)
        v = v << 8 | h[i];
    return v;
}

static int
grow(struct replay_tally *t)
{
    size_t cap = t->cap == 0 ? 64 : t->cap * 2, i, j;
    struct replay_tally_slot *s = calloc(cap, sizeof(*s));

    if (s == NULL)
        return -1;
    if (t->cap == 0) /* the first add: nothing hashed under the key yet */
        randombytes_buf(t->key, sizeof(t->key));
    for (i = 0; i < t->cap; i++) {
        if (t->slot[i].key == NULL)
            continue;
        for (j = hash(t, t->slot[i].key) & (cap - 1); s[j].key != NULL;
             j = (j + 1) & (cap - 1))
            ;
        s[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = s;
    t->cap = cap;
    return 0;
}

int
replay_tally_add(struct replay_tally *t, const char *key)
{
    size_t i;

    if ((t->used + 1) * 2 > t->cap && grow(t) != 0)
        return -1;
    for (i = hash(t, key) & (t->cap - 1); t->slot[i].key != NULL;
         i = (i + 1) & (t->cap - 1))
        if (strcmp(t->slot[i].key, key) == 0) {
            t->slot[i].n++;
            return 0;
        }
    if ((t->slot[i].key = strdup(key)) == NULL)
        return -1;
    t->slot[i].n = 1;
    t->used++;
    return 0;
}

void
replay_tally_free(struct replay_tally *t)
{
    size_t i;

    for (i = 0; i < t->cap; i++)
        free(t->slot[i].key);
    free(t->slot);
}

static int
by_count(const void *a, const void *b)
{
    const struct replay_tally_slot *x = a, *y = b;

    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->key, y->key);
}

size_t
replay_tally_sorted(struct replay_tally *t)
{
    size_t i, n = 0;

    for (i = 0; i < t->cap; i++)
        if (t->slot[i].key != NULL)
            t->slot[n++] = t->slot[i];
    for (i = n; i < t->cap; i++)
        t->slot[i].key = NULL;
    if (n > 1) /* an empty map has no slots (NULL) */
        qsort(t->slot, n, sizeof(t->slot[0]), by_count);
    return n;
}
