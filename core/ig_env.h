/*
 * ig_env.h - taking a secret out of the process environment for good.
 *
 * unsetenv() only unlinks a variable from `environ`: the bytes the kernel
 * placed on the stack at exec stay where they were, and
 * /proc/<pid>/environ (readable by the same user and by root) keeps
 * showing them for the life of the process. ig_env_take copies the value
 * out, overwrites those bytes with zeros, then unsets the variable, so
 * after it neither getenv nor /proc/<pid>/environ has the secret.
 */
#ifndef IG_ENV_H
#define IG_ENV_H

#include <stddef.h>

#include "ig_error.h"

/*
 * Copy the value of the environment variable name into out (cap bytes,
 * NUL-terminated), wipe it from the process and unset it. IG_ERR_NOTFOUND
 * when it is unset or empty (out is ""), IG_ERR_LIMIT when the value does
 * not fit (it is wiped and unset all the same; out is wiped). Not thread
 * safe (no function touching the environment is): call at start-up.
 */
enum ig_status ig_env_take(const char *name, char *out, size_t cap) IG_WUR;

/* Wipe and unset name without reading it (for variables that must not
   outlive start-up). */
void ig_env_wipe(const char *name);

#endif
