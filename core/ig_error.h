/*
 * ig_error.h - the one status enum of intentgate's core, and the error
 * detail buffer every fallible function fills.
 *
 * Convention (git, Redis anet): a fallible function returns enum ig_status
 * and writes a one-line human description into a caller-owned struct ig_err.
 * Nothing is allocated on an error path. Passing err == NULL is allowed and
 * drops the detail text.
 */
#ifndef IG_ERROR_H
#define IG_ERROR_H

#include <stddef.h>

#include "ig_limits.h"

#define IG_WUR __attribute__((warn_unused_result))
#define IG_PRINTF(f, a) __attribute__((format(printf, f, a)))

enum ig_status {
    IG_OK = 0,
    IG_ERR_NOMEM,    /* allocation failed */
    IG_ERR_INVALID,  /* malformed or refused input */
    IG_ERR_LIMIT,    /* input over a limit named in ig_limits.h */
    IG_ERR_CRYPTO,   /* signature, key or token check failed */
    IG_ERR_IO,       /* file or system call failed */
    IG_ERR_NOTFOUND, /* a named thing does not exist */
    IG_ERR_EXPIRED,  /* a token or request is past its expiry */
    IG_ERR_EXISTS    /* already recorded: a duplicate or a replay */
};

/* Length of the detail text, including the terminating NUL. */
#define IG_ERR_MSGMAX IG_ERR_TEXT_MAX

/*
 * Detail of the last failure. line/column are 1-based positions in the
 * input text when the failure has one (JSON parsing), else 0.
 */
struct ig_err {
    char msg[IG_ERR_MSGMAX];
    int line;
    int column;
};

/* Static, never NULL, thread safe. */
const char *ig_strerror(enum ig_status st);

/*
 * Fill err (when not NULL) with a formatted message, line/column reset to 0,
 * and return st so callers can write `return ig_err_set(err, IG_ERR_X, ...)`.
 * Truncates silently at IG_ERR_MSGMAX - 1 bytes.
 */
enum ig_status ig_err_set(struct ig_err *err, enum ig_status st,
                          const char *fmt, ...) IG_PRINTF(3, 4);

/* Clear err (when not NULL). */
void ig_err_clear(struct ig_err *err);

/* Invariant check that stays on in release builds. */
#define IG_ASSERT(cond)                                                        \
    do {                                                                       \
        if (!(cond))                                                           \
            ig_assert_fail(#cond, __FILE__, __LINE__);                         \
    } while (0)

_Noreturn void ig_assert_fail(const char *expr, const char *file, int line);

#endif
