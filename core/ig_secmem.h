/*
 * ig_secmem.h - short-lived secret buffers without a system call per use.
 *
 * sodium_malloc gives guard pages, mlock and a canary, but every call is an
 * mmap + mlock + mprotect and every sodium_free an munlock + munmap; in a
 * threaded server each unmap is a TLB shootdown on every core. A secret
 * that lives for one request (a decrypted credential, the header line that
 * carries it) takes a block from this pool instead: blocks are
 * sodium_malloc'd once, wiped whole on every return, and at most
 * IG_SECMEM_KEEP of them are kept. A request larger than a block falls back
 * to its own sodium_malloc. Thread safe.
 */
#ifndef IG_SECMEM_H
#define IG_SECMEM_H

#include <stddef.h>

#define IG_SECMEM_BLOCK 16384 /* usable bytes per pooled block */
#define IG_SECMEM_KEEP 64     /* most idle blocks kept */

/* n usable bytes of sodium_malloc'd memory, zeroed; NULL when out of
   memory. Needs ig_crypto_init() (sodium_init) first. */
void *ig_secmem_get(size_t n);

/* Wipe and give back p (from ig_secmem_get; NULL is fine). */
void ig_secmem_put(void *p);

/* Free every idle block (at exit, for leak checkers). */
void ig_secmem_drain(void);

#endif
