/*
 * test_scrub.c - placeholder (issue 11): being written.
 */
#include "testutil.h"

int
main(void)
{
    return 1; /* not written yet: fails */
}
