/*
 * ig_buf.h - a growable byte buffer with a hard cap (after curl's dynbuf and
 * git's strbuf).
 *
 * A struct ig_buf is embedded by its owner: ig_buf_init() it with a cap,
 * append with the ig_buf_add*() functions, read data/len, and
 * ig_buf_release() it. The data is always NUL-terminated after an append
 * (the NUL is not counted in len), so text can be used as a C string.
 * Appending past the cap fails with IG_ERR_LIMIT and leaves the buffer as it
 * was. Not thread safe; one owner at a time.
 */
#ifndef IG_BUF_H
#define IG_BUF_H

#include <stddef.h>

#include "ig_error.h"

struct ig_buf {
    char *data; /* NULL until the first append */
    size_t len; /* bytes used, not counting the trailing NUL */
    size_t alloc;
    size_t max; /* most bytes len may reach */
};

/* Prepare an empty buffer that may grow to max bytes. */
void ig_buf_init(struct ig_buf *b, size_t max);

/* Free the storage; the buffer is empty and may be reused. NULL is fine. */
void ig_buf_release(struct ig_buf *b);

/* Wipe the contents with sodium_memzero, then release. For secrets. */
void ig_buf_release_secret(struct ig_buf *b);

/* Forget the contents but keep the storage. */
void ig_buf_reset(struct ig_buf *b);

/* Append n bytes. IG_ERR_LIMIT over the cap, IG_ERR_NOMEM. */
enum ig_status ig_buf_add(struct ig_buf *b, const void *p, size_t n) IG_WUR;

/* Append one byte. */
enum ig_status ig_buf_addc(struct ig_buf *b, char c) IG_WUR;

/* Append a NUL-terminated string. */
enum ig_status ig_buf_adds(struct ig_buf *b, const char *s) IG_WUR;

/*
 * Move the data out: returns the malloc'd, NUL-terminated bytes (an empty
 * string when nothing was appended; NULL only on out-of-memory) and leaves
 * the buffer empty. The caller frees the result.
 */
char *ig_buf_take(struct ig_buf *b, size_t *len);

#endif
