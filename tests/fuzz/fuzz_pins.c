/*
 * fuzz_pins.c - libFuzzer target for the pin file reader
 * (core/ig_pins_log.c): the lines the MCP gateway and `intentgate mcp
 * tools` fold, whose definitions come from a hostile upstream.
 *
 * The input is a pin file. It is folded whole, and again in two reads
 * split at an offset taken from the input (as a reader meets a file
 * another process is appending to). Checked: the bytes used end at a
 * newline and the rest holds none; an error names a line; a split fold
 * reaches the same state as a whole one; every folded key is valid, its
 * pinned hash valid, its pending changes within the cap, distinct, never
 * the pinned hash, and each one's definition hashes to its hash. Any
 * broken property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_pins_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int ok, const char *what)
{
    if (ok)
        return;
    (void)fprintf(stderr, "fuzz_pins: %s\n", what);
    abort();
}

static void
check_state(const struct ig_pins_state *s)
{
    char h[IG_PIN_HASH_SIZE];
    const struct ig_pin_entry *e;
    size_t i, j, k;

    for (i = 0; i < s->n; i++) {
        e = s->v[i];
        check(ig_pins_key_valid(e->key), "an invalid key folded");
        check(i == 0 || strcmp(s->v[i - 1]->key, e->key) < 0,
              "keys out of order");
        check(ig_hash_is_valid(e->pinned), "an invalid pinned hash");
        check(e->npending <= IG_PIN_PENDING_MAX, "too many pending");
        for (j = 0; j < e->npending; j++) {
            check(strcmp(e->pending[j].hash, e->pinned) != 0,
                  "the pinned hash is pending");
            for (k = 0; k < j; k++)
                check(strcmp(e->pending[j].hash, e->pending[k].hash) != 0,
                      "a hash pending twice");
            check(ig_pins_hash(e->pending[j].def, h, NULL) == IG_OK &&
                      strcmp(h, e->pending[j].hash) == 0,
                  "a definition that does not hash to its hash");
        }
    }
}

/* Fold data in one read, or two split at cut; the status. */
static enum ig_status
fold(const char *data, size_t size, size_t cut, struct ig_pins_state *s,
     size_t *used)
{
    struct ig_err err;
    enum ig_status st;
    size_t u1 = 0, u2 = 0;

    memset(s, 0, sizeof(*s));
    st = ig_pins_state_feed(s, data, cut, &u1, &err);
    if (st == IG_OK)
        st = ig_pins_state_feed(s, data + u1, size - u1, &u2, &err);
    if (st != IG_OK)
        check(strncmp(err.msg, "line ", 5) == 0, "an error without a line");
    *used = u1 + u2;
    return st;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct ig_pins_state whole, split;
    enum ig_status st1, st2;
    size_t used1, used2, cut;

    if (size > IG_PIN_LINE_MAX * 2)
        return 0;
    cut = size > 0 ? (size_t)data[0] * size / 256 : 0;
    st1 = fold(text, size, size, &whole, &used1);
    st2 = fold(text, size, cut, &split, &used2);
    check(st1 == st2, "a split fold ends otherwise");
    check(whole.lines == split.lines, "a split fold reads other lines");
    check(whole.n == split.n, "a split fold has other keys");
    if (st1 == IG_OK) {
        check(used1 == used2, "a split fold uses other bytes");
        check(used1 == 0 || text[used1 - 1] == '\n', "used ends mid-line");
        check(memchr(text + used1, '\n', size - used1) == NULL,
              "a complete line left unread");
    }
    check_state(&whole);
    check_state(&split);
    ig_pins_state_release(&whole);
    ig_pins_state_release(&split);
    return 0;
}
