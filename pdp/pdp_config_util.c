/*
 * pdp_config_util.c - what every part of the config reader shares: errors
 * that name the file and line, value parsers, and dispatch of a key to its
 * setter by name. The leaf of pdp_config*.c: it calls none of the others.
 */
#include "pdp_config_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_ini.h"
#include "ig_limits.h"

int
pdp_cfg_error(struct pdp_cfg_parse *p, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = ig_ini_verror(p->err, p->path, p->line, fmt, ap);
    va_end(ap);
    return r;
}

int
pdp_cfg_dispatch(struct pdp_cfg_parse *p, const struct pdp_cfg_key *keys,
                 size_t n, unsigned *seen, const char *key, const char *v)
{
    size_t i;

    /* One bit of *seen per key. */
    IG_ASSERT(n <= sizeof(*seen) * 8);
    for (i = 0; i < n; i++) {
        if (strcmp(key, keys[i].name) != 0)
            continue;
        if (*seen & (1u << i))
            return pdp_cfg_error(p, "duplicate key %s", key);
        *seen |= 1u << i;
        return keys[i].set(p, &keys[i], v);
    }
    if (p->sec == NULL)
        return pdp_cfg_error(p, "unknown key %s", key);
    return pdp_cfg_error(p, "unknown key %s in [%s]", key, p->sec->kind);
}

/* The field of struct pdp_config a generic key sets. */
static void *
field(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k)
{
    return (char *)p->c + k->off;
}

int
pdp_cfg_set_str(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                const char *v)
{
    return pdp_cfg_string(p, k->name, v, field(p, k));
}

int
pdp_cfg_set_i64(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                const char *v)
{
    return pdp_cfg_int(p, k->name, v, k->lo, k->hi, field(p, k));
}

int
pdp_cfg_set_int(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                const char *v)
{
    int64_t n = 0;

    IG_ASSERT(k->lo >= 0 && k->hi <= INT32_MAX);
    if (pdp_cfg_int(p, k->name, v, k->lo, k->hi, &n) != 0)
        return -1;
    *(int *)field(p, k) = (int)n;
    return 0;
}

int
pdp_cfg_set_size(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                 const char *v)
{
    int64_t n = 0;

    IG_ASSERT(k->lo >= 0);
    if (pdp_cfg_int(p, k->name, v, k->lo, k->hi, &n) != 0)
        return -1;
    *(size_t *)field(p, k) = (size_t)n;
    return 0;
}

int
pdp_cfg_set_bool(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                 const char *v)
{
    if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
        return pdp_cfg_error(p, "%s must be true or false", k->name);
    *(int *)field(p, k) = v[0] == 't';
    return 0;
}

int
pdp_cfg_int(struct pdp_cfg_parse *p, const char *key, const char *v, int64_t lo,
            int64_t hi, int64_t *out)
{
    char *end;
    long long n;

    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi)
        return pdp_cfg_error(p, "%s must be a whole number from %lld to %lld",
                             key, (long long)lo, (long long)hi);
    *out = n;
    return 0;
}

int
pdp_cfg_string(struct pdp_cfg_parse *p, const char *key, const char *v,
               char **dst)
{
    char *s;

    if (v[0] == '\0')
        return pdp_cfg_error(p, "%s must not be empty", key);
    s = strdup(v);
    if (s == NULL)
        return pdp_cfg_error(p, "out of memory");
    free(*dst);
    *dst = s;
    return 0;
}

int
pdp_cfg_list(struct pdp_cfg_parse *p, const char *key, const char *v,
             char ***out, size_t *n)
{
    const char *s = v, *e;
    char **arr;

    while (*s != '\0') {
        while (*s == ' ' || *s == ',' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        e = s;
        while (*e != '\0' && *e != ',')
            e++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        arr = realloc(*out, (*n + 1) * sizeof(*arr));
        if (arr == NULL)
            return pdp_cfg_error(p, "out of memory");
        *out = arr;
        arr[*n] = strndup(s, (size_t)(e - s));
        if (arr[*n] == NULL)
            return pdp_cfg_error(p, "out of memory");
        (*n)++;
        s = e;
    }
    if (*n == 0)
        return pdp_cfg_error(p, "%s must list at least one value", key);
    return 0;
}

int
pdp_cfg_valid_id(const char *id)
{
    size_t i, n = strlen(id);

    if (n == 0 || n > IG_ID_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        char ch = id[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') ||
              (i > 0 && strchr("._:@-", ch) != NULL)))
            return 0;
    }
    return 1;
}

int
pdp_cfg_resolve(struct pdp_cfg_parse *p, char **pp)
{
    size_t n;
    char *s;

    if (*pp == NULL || (*pp)[0] == '/')
        return 0;
    n = strlen(p->dir) + strlen(*pp) + 2;
    s = malloc(n);
    if (s == NULL)
        return pdp_cfg_error(p, "out of memory");
    (void)snprintf(s, n, "%s/%s", p->dir, *pp);
    free(*pp);
    *pp = s;
    return 0;
}
