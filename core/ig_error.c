/*
 * ig_error.c - status strings and the error detail buffer.
 */
#include "ig_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *
ig_strerror(enum ig_status st)
{
    switch (st) {
    case IG_OK:
        return "ok";
    case IG_ERR_NOMEM:
        return "out of memory";
    case IG_ERR_INVALID:
        return "invalid input";
    case IG_ERR_LIMIT:
        return "input over a limit";
    case IG_ERR_CRYPTO:
        return "cryptographic check failed";
    case IG_ERR_IO:
        return "input/output error";
    case IG_ERR_NOTFOUND:
        return "not found";
    case IG_ERR_EXPIRED:
        return "expired";
    case IG_ERR_EXISTS:
        return "already exists";
    }
    return "unknown error";
}

enum ig_status
ig_err_set(struct ig_err *err, enum ig_status st, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return st;
    err->line = 0;
    err->column = 0;
    va_start(ap, fmt);
    /* Truncation is acceptable for a diagnostic line. */
    (void)vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return st;
}

void
ig_err_clear(struct ig_err *err)
{
    if (err == NULL)
        return;
    err->msg[0] = '\0';
    err->line = 0;
    err->column = 0;
}

void
ig_assert_fail(const char *expr, const char *file, int line)
{
    (void)fprintf(stderr, "intentgate: assertion failed: %s (%s:%d)\n", expr,
                  file, line);
    abort();
}
