/*
 * appr_form.c - strict application/x-www-form-urlencoded decoding (see
 * appr_form.h for the rules).
 *
 * One allocation holds the field table and every decoded byte: decoding
 * never grows a pair ('=' becomes the name's NUL, each escape shrinks), so
 * len + one NUL per field + 1 bytes always suffice. Pairs are decoded left
 * to right; the first refusal stops, and nothing of the body is kept.
 */
#include "appr_form.h"
#include "ig_text.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

struct appr_field {
    const char *name, *value;
    size_t value_len;
};

struct appr_form {
    size_t n;
    struct appr_field f[APPR_FORM_MAX_FIELDS];
    size_t cap; /* bytes in data */
    char data[];
};

/* Decode n bytes of src (one name or value) into dst; *outlen gets the
   decoded length. what/idx name the part in error text. */
static enum ig_status
decode_part(const char *src, size_t n, char *dst, size_t *outlen,
            const char *what, size_t idx, struct ig_err *err)
{
    size_t i, o = 0;
    int hi, lo;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];

        if (c == '+') {
            dst[o++] = ' ';
        } else if (c == '%') {
            if (n - i < 3 ||
                (hi = ig_hex_digit((unsigned char)src[i + 1])) < 0 ||
                (lo = ig_hex_digit((unsigned char)src[i + 2])) < 0)
                return ig_err_set(err, IG_ERR_INVALID,
                                  "field %zu: malformed %% escape in the %s",
                                  idx, what);
            if (hi == 0 && lo == 0)
                return ig_err_set(err, IG_ERR_INVALID,
                                  "field %zu: NUL byte in the %s", idx, what);
            dst[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else if (c < 0x21 || c > 0x7E) {
            return ig_err_set(err, IG_ERR_INVALID,
                              "field %zu: byte 0x%02x in the %s must be "
                              "percent-encoded",
                              idx, c, what);
        } else {
            dst[o++] = (char)c;
        }
    }
    if (!ig_utf8_valid(dst, o))
        return ig_err_set(err, IG_ERR_INVALID,
                          "field %zu: the %s is not valid UTF-8", idx, what);
    dst[o] = '\0';
    *outlen = o;
    return IG_OK;
}

static int
name_valid(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n > APPR_FORM_MAX_NAME)
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* Decode one pair (n > 0 bytes at p) into f's data at *used. */
static enum ig_status
add_pair(struct appr_form *f, const char *p, size_t n, size_t *used,
         struct ig_err *err)
{
    const char *eq = memchr(p, '=', n);
    size_t idx = f->n + 1, nlen, vlen, i;
    char *name = f->data + *used, *value;
    enum ig_status st;

    if (f->n >= APPR_FORM_MAX_FIELDS)
        return ig_err_set(err, IG_ERR_LIMIT, "more than %d fields",
                          APPR_FORM_MAX_FIELDS);
    if (eq == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "field %zu has no '='", idx);
    st = decode_part(p, (size_t)(eq - p), name, &nlen, "name", idx, err);
    if (st != IG_OK)
        return st;
    if (!name_valid(name, nlen))
        return ig_err_set(err, IG_ERR_INVALID,
                          "field %zu: a name is 1 to %d of A-Z a-z 0-9 _ . -",
                          idx, APPR_FORM_MAX_NAME);
    for (i = 0; i < f->n; i++)
        if (strcmp(f->f[i].name, name) == 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "field %zu: %s is given twice", idx, name);
    value = name + nlen + 1;
    st = decode_part(eq + 1, n - (size_t)(eq - p) - 1, value, &vlen, "value",
                     idx, err);
    if (st != IG_OK)
        return st;
    f->f[f->n].name = name;
    f->f[f->n].value = value;
    f->f[f->n].value_len = vlen;
    f->n++;
    *used += nlen + vlen + 2;
    return IG_OK;
}

enum ig_status
appr_form_parse(const char *body, size_t len, struct appr_form **out,
                struct ig_err *err)
{
    struct appr_form *f = NULL;
    size_t pos = 0, used = 0, cap;
    enum ig_status st = IG_OK;

    *out = NULL;
    ig_err_clear(err);
    if (len > APPR_FORM_MAX_BYTES)
        return ig_err_set(err, IG_ERR_LIMIT, "the form is larger than %d bytes",
                          APPR_FORM_MAX_BYTES);
    cap = len + APPR_FORM_MAX_FIELDS + 1;
    f = calloc(1, sizeof(*f) + cap);
    if (f == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    f->cap = cap;
    while (len > 0 && pos <= len) {
        const char *p = body + pos;
        const char *amp = memchr(p, '&', len - pos);
        size_t n = amp != NULL ? (size_t)(amp - p) : len - pos;

        if (n == 0) {
            st =
                ig_err_set(err, IG_ERR_INVALID, "field %zu is empty", f->n + 1);
            goto out;
        }
        if ((st = add_pair(f, p, n, &used, err)) != IG_OK)
            goto out;
        pos += n + 1; /* past the '&'; len + 1 ends the loop */
    }
    *out = f;
    f = NULL;
out:
    appr_form_free(f);
    return st;
}

const char *
appr_form_get(const struct appr_form *f, const char *name, size_t *len)
{
    size_t i;

    for (i = 0; i < f->n; i++) {
        if (strcmp(f->f[i].name, name) == 0) {
            if (len != NULL)
                *len = f->f[i].value_len;
            return f->f[i].value;
        }
    }
    return NULL;
}

size_t
appr_form_count(const struct appr_form *f)
{
    return f->n;
}

const char *
appr_form_name(const struct appr_form *f, size_t i)
{
    return i < f->n ? f->f[i].name : NULL;
}

void
appr_form_free(struct appr_form *f)
{
    if (f == NULL)
        return;
    sodium_memzero(f->data, f->cap);
    free(f);
}
