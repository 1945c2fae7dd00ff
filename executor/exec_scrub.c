/*
 * exec_scrub.c - placeholder (issue 11): being written.
 */
#include "exec_scrub.h"

/* ISO C forbids an empty translation unit. */
typedef int exec_scrub_placeholder;
