/*
 * testutil.c - file and hex helpers for the unit tests, and the
 * IG_TEST_FILTER environment variable: every test program links this
 * file, so `IG_TEST_FILTER='test_dup*' build/release/tests/test_json`
 * runs only the cases whose names match (cmocka's * and ? globs).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Before main(): cmocka reads the filter when the group runs. */
__attribute__((constructor)) static void
tu_filter_from_env(void)
{
    const char *pattern = getenv("IG_TEST_FILTER");

    if (pattern != NULL && pattern[0] != '\0')
        cmocka_set_test_filter(pattern);
}

char *
tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;

    if (f == NULL)
        fail_msg("cannot open %s", path);
    do {
        if (cap - n < 4096) {
            cap = cap ? cap * 2 : 8192;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (ferror(f))
        fail_msg("cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

char *
tu_read_vector(const char *relpath, size_t *len)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", IG_VECTORS_DIR, relpath);

    if (n < 0 || (size_t)n >= sizeof(path))
        fail_msg("vector path too long: %s", relpath);
    return tu_read_file(path, len);
}

static int
hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

unsigned char *
tu_hex_decode(const char *hex, size_t *len)
{
    size_t n = strlen(hex), i;
    unsigned char *out;

    if (n % 2 != 0)
        fail_msg("odd-length hex string");
    out = malloc(n / 2 + 1);
    assert_non_null(out);
    for (i = 0; i < n / 2; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            fail_msg("bad hex digit in %s", hex);
        out[i] = (unsigned char)(hi * 16 + lo);
    }
    *len = n / 2;
    return out;
}
