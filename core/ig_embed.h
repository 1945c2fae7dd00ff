/*
 * ig_embed.h - files compiled into a binary (cmake/embed.cmake generates
 * the arrays), e.g. the example policy bundle that dev mode writes out.
 */
#ifndef IG_EMBED_H
#define IG_EMBED_H

#include <stddef.h>

struct ig_embedded_file {
    const char *name;          /* base name; NULL ends the array */
    const unsigned char *data; /* len bytes (plus a NUL) */
    size_t len;
};

#endif
