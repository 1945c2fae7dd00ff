/*
 * ig_env.c - take secrets out of the environment (see ig_env.h).
 *
 * Every `environ` entry "NAME=value" for name is found (there may be more
 * than one), its value bytes overwritten in place with sodium_memzero, and
 * then unsetenv drops the entries. The first entry's value is what
 * ig_env_take returns, as getenv would.
 */
#include "ig_env.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Wipe every value of name; copy the first into out when out != NULL.
   Returns the first value's length, or -1 when there is none. */
static long
wipe_all(const char *name, char *out, size_t cap, int *fits)
{
    size_t n = strlen(name), len;
    long first = -1;
    char **e;

    *fits = 1;
    for (e = environ; e != NULL && *e != NULL; e++) {
        if (strncmp(*e, name, n) != 0 || (*e)[n] != '=')
            continue;
        len = strlen(*e + n + 1);
        if (first < 0) {
            first = (long)len;
            if (out != NULL && len < cap)
                memcpy(out, *e + n + 1, len + 1);
            else
                *fits = 0;
        }
        sodium_memzero(*e + n + 1, len);
    }
    return first;
}

enum ig_status
ig_env_take(const char *name, char *out, size_t cap)
{
    int fits;
    long len;

    if (cap == 0)
        return IG_ERR_LIMIT;
    out[0] = '\0';
    len = wipe_all(name, out, cap, &fits);
    (void)unsetenv(name);
    if (len <= 0)
        return IG_ERR_NOTFOUND;
    if (!fits) {
        sodium_memzero(out, cap);
        out[0] = '\0';
        return IG_ERR_LIMIT;
    }
    return IG_OK;
}

void
ig_env_wipe(const char *name)
{
    int fits;

    (void)wipe_all(name, NULL, 0, &fits);
    (void)unsetenv(name);
}
