/*
 * testutil.h - small helpers shared by the cmocka unit tests: reading test
 * vector files and hex strings. Test code only; failures abort the test
 * through cmocka's fail_msg.
 */
#ifndef IG_TESTUTIL_H
#define IG_TESTUTIL_H

#include <stddef.h>

/*
 * cmocka needs these before <cmocka.h>; every test file includes this
 * header first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>

/*
 * Read a whole file below IG_VECTORS_DIR ("jcs/input/arrays.json") into a
 * malloc'd, NUL-terminated buffer; *len (when not NULL) gets its size.
 * Fails the running test when the file cannot be read.
 */
char *tu_read_vector(const char *relpath, size_t *len);

/* Read any file by path, as tu_read_vector. */
char *tu_read_file(const char *path, size_t *len);

/*
 * Decode a hex string into a malloc'd buffer; *len gets its size. Fails the
 * running test on odd length or a non-hex digit.
 */
unsigned char *tu_hex_decode(const char *hex, size_t *len);

#endif
