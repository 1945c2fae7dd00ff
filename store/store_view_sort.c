/*
 * store_view_sort.c - what both backends' audit views share: an array of
 * events put in log order (store_audit_view.h's intent events are
 * gathered by two searches, then sorted).
 */
#include "store_audit_view.h"

#include <stdlib.h>

static int
by_seq(const void *a, const void *b)
{
    json_int_t x =
        json_integer_value(json_object_get(*(json_t *const *)a, "seq"));
    json_int_t y =
        json_integer_value(json_object_get(*(json_t *const *)b, "seq"));

    return x < y ? -1 : x > y;
}

enum ig_status
store_view_sort_by_seq(json_t *arr)
{
    size_t n = json_array_size(arr), i;
    json_t **v;
    enum ig_status st = IG_OK;

    if (n < 2)
        return IG_OK;
    if ((v = malloc(n * sizeof(*v))) == NULL)
        return IG_ERR_NOMEM;
    for (i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof(*v), by_seq);
    for (i = 0; i < n; i++)
        if (json_array_set_new(arr, i, v[i]) != 0)
            st = IG_ERR_NOMEM;
    free(v);
    return st;
}
