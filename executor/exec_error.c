/*
 * exec_error.c - the executor's error answer (see exec_error.h).
 */
#include "exec_error.h"

json_t *
exec_error(const char *code, const char *message)
{
    return json_pack("{s:{s:s, s:s}}", "error", "code", code, "message",
                     message);
}
