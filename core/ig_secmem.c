/*
 * ig_secmem.c - a small free list of sodium_malloc'd blocks.
 *
 * Each block starts with a header naming its usable size; the caller's
 * pointer follows it, so an overrun still hits sodium's guard page at the
 * end of the allocation. Returned blocks are wiped whole before they go
 * back on the list (or are freed), so the list never holds a secret.
 */
#include "ig_secmem.h"

#include <pthread.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC UINT64_C(0x69677365636d656d) /* "igsecmem" */

struct head {
    uint64_t magic;
    uint64_t cap; /* usable bytes after the header */
    struct head *next;
    uint64_t pad; /* keep the user pointer 16-byte aligned */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct head *idle;
static size_t n_idle;

static struct head *
fresh(size_t cap)
{
    struct head *h;

    /* sodium_malloc aligns the end of the block to the guard page, so the
       start is aligned only when the size is a multiple of 16. */
    if (cap > SIZE_MAX - sizeof(*h) - 15)
        return NULL;
    cap = (cap + 15) & ~(size_t)15;
    h = sodium_malloc(sizeof(*h) + cap);

    if (h == NULL)
        return NULL;
    h->magic = MAGIC;
    h->cap = cap;
    h->next = NULL;
    h->pad = 0;
    sodium_memzero(h + 1, cap); /* sodium_malloc fills with 0xdb */
    return h;
}

void *
ig_secmem_get(size_t n)
{
    struct head *h = NULL;

    if (n > IG_SECMEM_BLOCK) {
        h = fresh(n);
    } else {
        (void)pthread_mutex_lock(&lock);
        if (idle != NULL) {
            h = idle;
            idle = h->next;
            n_idle--;
        }
        (void)pthread_mutex_unlock(&lock);
        if (h == NULL)
            h = fresh(IG_SECMEM_BLOCK);
    }
    if (h == NULL)
        return NULL;
    h->next = NULL; /* pooled blocks were wiped when they came back */
    return h + 1;
}

void
ig_secmem_put(void *p)
{
    struct head *h;

    if (p == NULL)
        return;
    h = (struct head *)p - 1;
    if (h->magic != MAGIC)
        abort(); /* not ours: never free or pool foreign memory */
    sodium_memzero(p, (size_t)h->cap);
    if (h->cap == IG_SECMEM_BLOCK) {
        (void)pthread_mutex_lock(&lock);
        if (n_idle < IG_SECMEM_KEEP) {
            h->next = idle;
            idle = h;
            n_idle++;
            h = NULL;
        }
        (void)pthread_mutex_unlock(&lock);
    }
    if (h != NULL) {
        h->magic = 0;
        sodium_free(h);
    }
}

void
ig_secmem_drain(void)
{
    struct head *h, *next;

    (void)pthread_mutex_lock(&lock);
    h = idle;
    idle = NULL;
    n_idle = 0;
    (void)pthread_mutex_unlock(&lock);
    for (; h != NULL; h = next) {
        next = h->next;
        h->magic = 0;
        sodium_free(h);
    }
}
