/*
 * exec_scrub_spans.c - span lists of the credential scrubber (declared in
 * exec_scrub_int.h): sorted, disjoint [a, b) ranges, merged as they are
 * pushed and united list with list. A leaf: the finders (exec_scrub_find.c,
 * exec_scrub_b64.c) and the passes (exec_scrub.c) build on it.
 */
#include "exec_scrub_int.h"

#include <stdlib.h>

/* Add [a, b) (exec_scrub_spans_push in exec_scrub_int.h). Overlapping or
   touching spans merge; with ss->one every span joins the first. */
enum ig_status
exec_scrub_spans_push(struct scrub_spans *ss, size_t a, size_t b)
{
    struct scrub_span *v;

    if (ss->one && ss->n > 0) {
        ss->v[0].a = a < ss->v[0].a ? a : ss->v[0].a;
        ss->v[0].b = b > ss->v[0].b ? b : ss->v[0].b;
        return IG_OK;
    }
    while (ss->n > 0 && ss->v[ss->n - 1].b >= a) {
        ss->n--;
        if (ss->v[ss->n].a < a)
            a = ss->v[ss->n].a;
        if (ss->v[ss->n].b > b)
            b = ss->v[ss->n].b;
    }
    if (ss->n >= ss->max)
        return IG_ERR_LIMIT;
    if (ss->n == ss->cap) {
        ss->cap = ss->cap > 0 ? 2 * ss->cap : 16;
        v = realloc(ss->v, ss->cap * sizeof(*v));
        if (v == NULL)
            return IG_ERR_NOMEM;
        ss->v = v;
    }
    ss->v[ss->n].a = a;
    ss->v[ss->n].b = b;
    ss->n++;
    return IG_OK;
}

/* Unite the sorted, disjoint spans of add into ss (also sorted). */
enum ig_status
exec_scrub_spans_unite(struct scrub_spans *ss, const struct scrub_spans *add)
{
    struct scrub_spans u = {NULL, 0, 0, ss->max, ss->work, ss->one};
    size_t i = 0, j = 0;
    const struct scrub_span *next;
    enum ig_status st = IG_OK;

    while (st == IG_OK && (i < ss->n || j < add->n)) {
        if (j >= add->n || (i < ss->n && ss->v[i].a <= add->v[j].a))
            next = &ss->v[i++];
        else
            next = &add->v[j++];
        if (u.n > 0 && u.v[u.n - 1].b >= next->a) {
            if (next->b > u.v[u.n - 1].b)
                u.v[u.n - 1].b = next->b;
        } else {
            st = exec_scrub_spans_push(&u, next->a, next->b);
        }
    }
    if (st != IG_OK) {
        free(u.v);
        return st;
    }
    free(ss->v);
    ss->v = u.v;
    ss->n = u.n;
    ss->cap = u.cap;
    return IG_OK;
}
