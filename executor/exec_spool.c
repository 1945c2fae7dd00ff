/*
 * exec_spool.c - placeholder (issue 11): being written.
 */
#include "exec_spool.h"

/* ISO C forbids an empty translation unit. */
typedef int exec_spool_placeholder;
