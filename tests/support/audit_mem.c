/*
 * audit_mem.c - the in-memory audit tree of audit_mem.h.
 *
 * Level l holds the hashes of the complete subtrees of 2^l leaves, in
 * order. audit_frontier_append reports each one as it is completed, with
 * the index that is the level's next slot. Room is reserved on every level
 * an append can touch before the append runs, so it cannot fail half way.
 */
#include "audit_mem.h"

#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"

struct mem_level {
    unsigned char (*h)[AUDIT_HASH_BYTES];
    uint64_t n, cap;
};

struct audit_mem {
    struct audit_frontier f;
    struct mem_level level[AUDIT_MAX_HEIGHT];
};

enum ig_status
audit_mem_new(struct audit_mem **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? IG_OK : IG_ERR_NOMEM;
}

void
audit_mem_free(struct audit_mem *m)
{
    unsigned l;

    if (m == NULL)
        return;
    for (l = 0; l < AUDIT_MAX_HEIGHT; l++)
        free(m->level[l].h);
    free(m);
}

static enum ig_status
reserve(struct mem_level *lv)
{
    void *p;
    uint64_t cap;

    if (lv->n < lv->cap)
        return IG_OK;
    cap = lv->cap ? lv->cap * 2 : 64;
    if (cap > SIZE_MAX / AUDIT_HASH_BYTES)
        return IG_ERR_NOMEM;
    p = realloc(lv->h, (size_t)cap * AUDIT_HASH_BYTES);
    if (p == NULL)
        return IG_ERR_NOMEM;
    lv->h = p;
    lv->cap = cap;
    return IG_OK;
}

static int
keep_node(void *ctx, unsigned level, uint64_t index,
          const unsigned char hash[AUDIT_HASH_BYTES])
{
    struct mem_level *lv = &((struct audit_mem *)ctx)->level[level];

    IG_ASSERT(index == lv->n && lv->n < lv->cap);
    memcpy(lv->h[lv->n++], hash, AUDIT_HASH_BYTES);
    return 0;
}

enum ig_status
audit_mem_append(struct audit_mem *m,
                 const unsigned char leaf[AUDIT_HASH_BYTES])
{
    uint64_t size = m->f.size;
    unsigned l = 0;
    enum ig_status st;

    if (size >= IG_AUDIT_MEM_MAX_LEAVES)
        return IG_ERR_LIMIT;
    /* The leaf's level, and one more per trailing set bit of size. */
    do {
        st = reserve(&m->level[l]);
        if (st != IG_OK)
            return st;
    } while ((size >> l++) & 1);
    return audit_frontier_append(&m->f, leaf, keep_node, m);
}

uint64_t
audit_mem_size(const struct audit_mem *m)
{
    return m->f.size;
}

const struct audit_frontier *
audit_mem_frontier(const struct audit_mem *m)
{
    return &m->f;
}

enum ig_status
audit_mem_fetch(void *ctx, unsigned level, uint64_t index,
                unsigned char out[AUDIT_HASH_BYTES])
{
    const struct audit_mem *m = ctx;

    if (level >= AUDIT_MAX_HEIGHT || index >= m->level[level].n)
        return IG_ERR_NOTFOUND;
    memcpy(out, m->level[level].h[index], AUDIT_HASH_BYTES);
    return IG_OK;
}
