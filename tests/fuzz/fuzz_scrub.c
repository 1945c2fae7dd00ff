/*
 * fuzz_scrub.c - placeholder (issue 11): being written.
 */
#include <stddef.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    (void)data;
    (void)size;
    return 0;
}
