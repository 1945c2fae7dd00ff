/*
 * ig_text.h - small text helpers the config readers and command lines
 * share: trimming a line, and reading a HOST:PORT listen address.
 */
#ifndef IG_TEXT_H
#define IG_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

/*
 * Decode one UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF) at s (len bytes available): its length with the
 * code point in *cp, or 0 when it is not well-formed.
 */
size_t ig_utf8_next(const unsigned char *s, size_t len, uint32_t *cp);

/*
 * 1 when the code point cp is shown as nothing, or changes how the text
 * around it reads: C0 and C1 controls, DEL, and the invisible format
 * characters (soft hyphen, zero-width and joiner characters, bidi marks,
 * embeddings, overrides and isolates, invisible operators, variation
 * selectors, Hangul fillers, the BOM, interlinear annotations, tag
 * characters, blank braille). Whoever shows an agent's text to a human
 * writes these as escapes (web page, Slack, terminal): one list for all.
 */
int ig_utf8_hidden(uint32_t cp);

/* 1 when the len bytes at s are well-formed UTF-8. */
int ig_utf8_valid(const void *s, size_t len);

/* 1 when s is an action name: ^[a-z][a-z0-9._:-]*$, at most
   IG_ACTION_MAX bytes (the PDP, the executor and agent tools agree). */
int ig_action_valid(const char *s);

/* The value of one hex digit (either case), or -1. */
int ig_hex_digit(int c);

/* Free the n malloc'd strings of list, then list (NULL when n is 0 is
   fine): the one way a config or a directory listing frees its lists. */
void ig_str_list_free(char **list, size_t n);

/* Strip leading and trailing whitespace in place; returns the new start. */
char *ig_trim(char *s);

/* Cut a config line at its comment: a '#' at the start or after a space
   or tab ends the line (so "key = value   # note" is "key = value"; a
   value cannot contain " #"). In place. */
void ig_strip_comment(char *line);

/*
 * Parse "HOST:PORT" (port 0-65535; "localhost" becomes "127.0.0.1").
 * *host receives a new malloc'd string the caller frees. IG_ERR_INVALID
 * for a malformed address, IG_ERR_NOMEM.
 */
enum ig_status ig_listen_parse(const char *s, char **host,
                               unsigned short *port) IG_WUR;

/* ig_listen_parse into a configured address: on success the old *host is
   freed and replaced; on failure nothing changes. */
enum ig_status ig_listen_set(const char *s, char **host,
                             unsigned short *port) IG_WUR;

#endif
