/*
 * exec_response.c - placeholder (issue 11): being written.
 */
#include "exec_response.h"

/* ISO C forbids an empty translation unit. */
typedef int exec_response_placeholder;
