/*
 * exec_error.h - the executor's error answer, {"error":{"code","message"}},
 * shared by every route and check. A leaf: it depends on nothing of the
 * executor's.
 */
#ifndef EXEC_ERROR_H
#define EXEC_ERROR_H

#include <jansson.h>

/* A new {"error":{"code","message"}} (the caller owns it); NULL when out
   of memory. Thread safe. */
json_t *exec_error(const char *code, const char *message);

#endif
