/*
 * exec_vec.c - NULL-terminated string vectors with a capacity fixed up
 * front (struct exec_vec in exec_run_int.h): the argv and envp a run
 * plan builds, and the bwrap options of the layout. A leaf.
 */
#include "exec_run_int.h"

#include <stdlib.h>
#include <string.h>

int
exec_vec_push(struct exec_vec *s, const char *a, const char *b, const char *c)
{
    const char *parts[3];
    size_t len[3], total = 0, i;
    char *d;

    parts[0] = a;
    parts[1] = b;
    parts[2] = c;
    if (s->n + 1 >= s->cap)
        return -1; /* capacity is computed up front */
    for (i = 0; i < 3; i++)
        total += len[i] = parts[i] != NULL ? strlen(parts[i]) : 0;
    if ((d = malloc(total + 1)) == NULL)
        return -1;
    for (total = 0, i = 0; i < 3; total += len[i++])
        if (len[i] > 0)
            memcpy(d + total, parts[i], len[i]);
    d[total] = '\0';
    s->v[s->n++] = d;
    s->v[s->n] = NULL;
    return 0;
}

void
exec_vec_free(char **v)
{
    size_t i;

    for (i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

int
exec_vec_init(struct exec_vec *s, size_t cap)
{
    s->n = 0;
    s->cap = cap + 1;
    s->v = calloc(s->cap, sizeof(*s->v));
    return s->v == NULL ? -1 : 0;
}
