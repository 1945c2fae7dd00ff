/*
 * fuzz_json.c - libFuzzer target for the strict JSON reader and the RFC 8785
 * serializer.
 *
 * Each input is parsed with ig_json_parse(). When it is accepted it is
 * canonicalized; the canonical text must parse again, be json_equal() to
 * the first value, and canonicalize to the very same bytes (canonical form
 * is a fixed point). When it is refused, the pre-scan must not have been
 * stricter than it should: if jansson alone (same flags) accepts the text,
 * our refusal must be a limit the value really breaks, or a NUL byte
 * (which jansson wrongly skips after a number or literal). Any broken
 * property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_json.h"
#include "ig_limits.h"

#define FLAGS                                                                  \
    (JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL |       \
     JSON_DECODE_ANY)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int ok, const char *what, const struct ig_err *err)
{
    if (ok)
        return;
    (void)fprintf(stderr, "fuzz_json: %s (%s at %d:%d)\n", what, err->msg,
                  err->line, err->column);
    abort();
}

/* 1 when v breaks a limit of ig_limits.h (depth counts containers). */
static int
over_limits(json_t *v, int depth, size_t *values)
{
    size_t i, n;
    const char *k;
    json_t *e;

    if (++*values > IG_JSON_MAX_VALUES)
        return 1;
    if (!json_is_object(v) && !json_is_array(v))
        return 0;
    if (++depth > IG_JSON_MAX_DEPTH)
        return 1;
    if (json_is_array(v)) {
        n = json_array_size(v);
        if (n > IG_JSON_MAX_ARRAY_LENGTH)
            return 1;
        for (i = 0; i < n; i++)
            if (over_limits(json_array_get(v, i), depth, values))
                return 1;
        return 0;
    }
    if (json_object_size(v) > IG_JSON_MAX_OBJECT_MEMBERS)
        return 1;
    json_object_foreach(v, k, e)
    {
        if (over_limits(e, depth, values))
            return 1;
    }
    return 0;
}

/* ig_json_parse refused data with st: was that right? */
static void
check_refusal(const uint8_t *data, size_t size, enum ig_status st,
              const struct ig_err *err)
{
    json_error_t je;
    json_t *j = json_loadb((const char *)data, size, FLAGS, &je);
    size_t values = 0;

    if (j == NULL)
        return;
    if (st == IG_ERR_LIMIT) {
        if (size <= IG_JSON_MAX_BYTES && !over_limits(j, 0, &values))
            check(0, "limit refusal of a value within the limits", err);
    } else if (memchr(data, '\0', size) == NULL) {
        check(0, "refused what jansson accepts", err);
    }
    json_decref(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ig_buf once, twice;
    struct ig_err err;
    json_t *v = NULL, *w = NULL;
    enum ig_status st;

    st = ig_json_parse((const char *)data, size, &v, &err);
    if (st != IG_OK) {
        check(v == NULL, "value left on failure", &err);
        check(err.line >= 1 && err.column >= 1, "no error position", &err);
        check(strchr(err.msg, '\n') == NULL, "multi-line message", &err);
        check_refusal(data, size, st, &err);
        return 0;
    }
    ig_buf_init(&once, IG_CANON_MAX_BYTES);
    ig_buf_init(&twice, IG_CANON_MAX_BYTES);
    check(ig_canon_write(v, &once, &err) == IG_OK, "canon failed", &err);
    check(ig_json_parse(once.data, once.len, &w, &err) == IG_OK,
          "canonical text refused", &err);
    check(json_equal(v, w), "canonical text reads back different", &err);
    check(ig_canon_write(w, &twice, &err) == IG_OK, "re-canon failed", &err);
    check(once.len == twice.len && memcmp(once.data, twice.data, once.len) == 0,
          "canonical form is not a fixed point", &err);
    ig_buf_release(&once);
    ig_buf_release(&twice);
    json_decref(v);
    json_decref(w);
    return 0;
}
