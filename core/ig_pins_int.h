/*
 * ig_pins_int.h - the pin file's folded state and its line reader
 * (ig_pins_log.c), shared with ig_pins.c and the fuzz target. Not a
 * public API.
 */
#ifndef IG_PINS_INT_H
#define IG_PINS_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_pins.h"
#include "ig_time.h"

enum ig_pin_event { PIN_EV_PINNED = 1, PIN_EV_CHANGED, PIN_EV_ACCEPTED };

/* A change seen and not accepted. */
struct ig_pin_pending {
    char hash[IG_PIN_HASH_SIZE];
    char at[IG_TIME_STRLEN + 1]; /* first seen */
    json_t *def;                 /* owned */
};

/* One key. Invariant: pinned is set; no pending hash equals pinned or
   another pending hash. */
struct ig_pin_entry {
    char *key; /* owned */
    char pinned[IG_PIN_HASH_SIZE];
    struct ig_pin_pending pending[IG_PIN_PENDING_MAX];
    size_t npending;
};

/* The fold so far: entries sorted by key (strcmp), and lines read. */
struct ig_pins_state {
    struct ig_pin_entry **v;
    size_t n, alloc;
    uint64_t lines;
};

/* One parsed line; strings borrowed from doc. */
struct ig_pin_line {
    json_t *doc; /* owned: json_decref */
    enum ig_pin_event event;
    const char *key, *hash, *at, *by;
    const json_t *def;
};

void ig_pins_state_release(struct ig_pins_state *s);

/* The entry of key, or NULL. */
struct ig_pin_entry *ig_pins_state_find(const struct ig_pins_state *s,
                                        const char *key);

/* The index of hash among e's pending changes, or -1. */
int ig_pins_entry_pending(const struct ig_pin_entry *e, const char *hash);

/* Parse len bytes (one line, no newline) into *out: strict JSON, exactly
   the members of its event, every value checked, canonical bytes, and
   for "changed" the definition's hash. IG_ERR_INVALID / IG_ERR_LIMIT /
   IG_ERR_NOMEM without a line number (the caller adds it). */
enum ig_status ig_pins_line_parse(const char *line, size_t len,
                                  struct ig_pin_line *out,
                                  struct ig_err *err) IG_WUR;

/*
 * Fold the complete lines of data (len bytes) into s: each parsed and
 * applied in turn; *used gets the bytes up to and including the last
 * newline (the rest is a torn line, left alone). The first bad line
 * stops it: IG_ERR_INVALID (or LIMIT, NOMEM) with "line N: ..." counted
 * from s->lines; s then holds the lines before it.
 */
enum ig_status ig_pins_state_feed(struct ig_pins_state *s, const char *data,
                                  size_t len, size_t *used,
                                  struct ig_err *err) IG_WUR;

/* 1 when s is 1 to max bytes of 0x21-0x7E, else 0. */
int ig_pins_word_valid(const char *s, size_t max);

#endif
