/*
 * fuzz_form.c - libFuzzer target for the strict urlencoded form decoder.
 *
 * Each input is decoded with appr_form_parse(). A refusal must leave no
 * form and a one-line message. An acceptance must agree with a naive
 * reference decoder run on the same bytes: the same number of pairs, in
 * order, each name and value byte for byte (and every value found by name
 * with its length); the input must have been printable ASCII only; no
 * decoded part may hold a NUL; names must be distinct. Any broken property
 * aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_form.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int ok, const char *what)
{
    if (ok)
        return;
    (void)fprintf(stderr, "fuzz_form: %s\n", what);
    abort();
}

static int
hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Naive decoding of n bytes (assumes well-formed escapes) into out. */
static size_t
naive(const uint8_t *p, size_t n, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        if (p[i] == '+') {
            out[o++] = ' ';
        } else if (p[i] == '%' && i + 2 < n) {
            out[o++] = (char)(hexval(p[i + 1]) << 4 | hexval(p[i + 2]));
            i += 2;
        } else {
            out[o++] = (char)p[i];
        }
    }
    return o;
}

static void
check_accepted(const struct appr_form *f, const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1), *value = malloc(size + 1);
    const char *got;
    size_t pos = 0, i = 0, j, nlen, vlen, glen;

    check(name != NULL && value != NULL, "out of memory");
    for (j = 0; j < size; j++)
        check(data[j] > 0x20 && data[j] < 0x7F, "accepted a raw byte");
    while (size > 0 && pos <= size) {
        const uint8_t *p = data + pos;
        const uint8_t *amp = memchr(p, '&', size - pos);
        size_t n = amp != NULL ? (size_t)(amp - p) : size - pos;
        const uint8_t *eq = memchr(p, '=', n);

        check(eq != NULL, "accepted a pair without '='");
        nlen = naive(p, (size_t)(eq - p), name);
        vlen = naive(eq + 1, n - (size_t)(eq - p) - 1, value);
        check(appr_form_name(f, i) != NULL, "fewer fields than pairs");
        check(strlen(appr_form_name(f, i)) == nlen &&
                  memcmp(appr_form_name(f, i), name, nlen) == 0,
              "name differs from the reference");
        name[nlen] = '\0';
        got = appr_form_get(f, name, &glen);
        check(got != NULL && glen == vlen && memcmp(got, value, vlen) == 0,
              "value differs from the reference");
        check(strlen(got) == glen, "NUL inside a value");
        for (j = 0; j < i; j++)
            check(strcmp(appr_form_name(f, j), name) != 0, "duplicate name");
        i++;
        pos += n + 1;
    }
    check(appr_form_count(f) == i, "more fields than pairs");
    check(appr_form_name(f, i) == NULL, "a name past the last field");
    free(name);
    free(value);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct appr_form *f = NULL;
    struct ig_err err;
    enum ig_status st;

    st = appr_form_parse((const char *)data, size, &f, &err);
    if (st != IG_OK) {
        check(f == NULL, "form left on failure");
        check(st == IG_ERR_INVALID || st == IG_ERR_LIMIT || st == IG_ERR_NOMEM,
              "unexpected status");
        check(err.msg[0] != '\0' && strchr(err.msg, '\n') == NULL,
              "no one-line message");
        return 0;
    }
    check(size <= APPR_FORM_MAX_BYTES, "accepted an oversized body");
    check_accepted(f, data, size);
    appr_form_free(f);
    return 0;
}
