/*
 * ig_buf.c - growable capped byte buffer. Grows by doubling up to the cap;
 * one spare byte always holds a NUL terminator.
 */
#include "ig_buf.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

void
ig_buf_init(struct ig_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    b->max = max;
}

void
ig_buf_release(struct ig_buf *b)
{
    if (b == NULL)
        return;
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
}

void
ig_buf_release_secret(struct ig_buf *b)
{
    if (b == NULL)
        return;
    if (b->data != NULL)
        sodium_memzero(b->data, b->alloc);
    ig_buf_release(b);
}

void
ig_buf_reset(struct ig_buf *b)
{
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

static enum ig_status
grow(struct ig_buf *b, size_t need)
{
    size_t n;
    char *p;

    if (need <= b->alloc)
        return IG_OK;
    n = b->alloc ? b->alloc : 64;
    while (n < need)
        n *= 2;
    if (n > b->max + 1)
        n = b->max + 1;
    p = realloc(b->data, n);
    if (p == NULL)
        return IG_ERR_NOMEM;
    b->data = p;
    b->alloc = n;
    return IG_OK;
}

enum ig_status
ig_buf_add(struct ig_buf *b, const void *p, size_t n)
{
    enum ig_status st;

    if (n > b->max || b->len > b->max - n)
        return IG_ERR_LIMIT;
    st = grow(b, b->len + n + 1);
    if (st != IG_OK)
        return st;
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return IG_OK;
}

enum ig_status
ig_buf_addc(struct ig_buf *b, char c)
{
    return ig_buf_add(b, &c, 1);
}

enum ig_status
ig_buf_adds(struct ig_buf *b, const char *s)
{
    return ig_buf_add(b, s, strlen(s));
}

char *
ig_buf_take(struct ig_buf *b, size_t *len)
{
    char *p = b->data;

    if (p == NULL) {
        p = malloc(1);
        if (p == NULL)
            return NULL;
        p[0] = '\0';
    }
    if (len != NULL)
        *len = b->len;
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    return p;
}
