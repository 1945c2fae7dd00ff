/*
 * fuzz_scrub.c - libFuzzer target for the credential scrubber and the
 * response shaping on untrusted upstream bytes.
 *
 * Input: [cred length][prefix length][flags] cred prefix body. The
 * property, beyond no crash and no leak: no spelling of the credential
 * (recomputed here, independently of exec_scrub's own list: base64 and
 * hex by libsodium, JSON by jansson, percent by hand) survives in what
 * exec_scrub_bytes returns, in a JSON body after exec_scrub_json, or in
 * any upstream-derived value of an exec_response result (body, decoded
 * body_b64url, content_type, field values and keys) in each mode; nor in
 * what any base64 run of those decodes to (libsodium's decoder, from each
 * of the run's first four characters), so base64 of the JSON-escaped or
 * percent-encoded credential is checked too.
 */
#define _GNU_SOURCE /* memmem */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_response.h"
#include "exec_scrub.h"
#include "ig_b64.h"
#include "ig_canon.h"
#include "ig_json.h"

#define LIST_MAX 160

struct list {
    char *s[LIST_MAX];
    size_t n[LIST_MAX];
    size_t count;
};

static void
add(struct list *l, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (l->count >= LIST_MAX || (l->s[l->count] = malloc(n)) == NULL)
        abort();
    memcpy(l->s[l->count], p, n);
    l->n[l->count++] = n;
}

static void
add_b64(struct list *l, const unsigned char *v, size_t n, int variant)
{
    char b[4 * 64 + 8];

    (void)sodium_bin2base64(b, sizeof(b), v, n, variant);
    add(l, b, strlen(b));
}

static void
add_percent(struct list *l, const unsigned char *v, size_t m, int keep,
            int upper)
{
    char b[3 * 64 + 1];
    size_t i, n = 0;

    for (i = 0; i < m; i++) {
        if (keep && v[i] != 0 &&
            strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   "0123456789-._~",
                   v[i]) != NULL)
            b[n++] = (char)v[i];
        else
            n += (size_t)snprintf(b + n, sizeof(b) - n,
                                  upper ? "%%%02X" : "%%%02x", v[i]);
    }
    add(l, b, n);
}

/* jansson's encoding without quotes, and with the \u digits' case
   swapped. */
static void
add_json(struct list *l, const unsigned char *v, size_t m, size_t flags)
{
    json_t *str = json_stringn((const char *)v, m);
    char *d, *p;
    size_t k;

    if (str == NULL)
        return;
    if ((d = json_dumps(str, JSON_ENCODE_ANY | flags)) == NULL)
        abort();
    add(l, d + 1, strlen(d) - 2);
    for (p = d + 1; (p = strchr(p, '\\')) != NULL; p += 2) {
        if (p[1] != 'u')
            continue;
        for (k = 2; k < 6; k++)
            if ((p[k] >= 'a' && p[k] <= 'f') || (p[k] >= 'A' && p[k] <= 'F'))
                p[k] = (char)(p[k] ^ 0x20);
    }
    add(l, d + 1, strlen(d) - 2);
    free(d);
    json_decref(str);
}

static void
spell_value(struct list *l, const unsigned char *v, size_t m)
{
    static const int nopad[] = {sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
                                sodium_base64_VARIANT_URLSAFE_NO_PADDING};
    static const int pad[] = {sodium_base64_VARIANT_ORIGINAL,
                              sodium_base64_VARIANT_URLSAFE};
    char hex[2 * 64 + 1];
    size_t a, k;

    add(l, (const char *)v, m);
    for (a = 0; a < 2; a++)
        for (k = 0; k < 3 && k < m; k++) {
            add_b64(l, v + k, (m - k) / 3 * 3, nopad[a]);
            add_b64(l, v + k, m - k, nopad[a]);
            add_b64(l, v + k, m - k, pad[a]);
        }
    for (k = 0; k < 4; k++)
        add_percent(l, v, m, (int)(k & 1), (int)(k >> 1));
    add_json(l, v, m, 0);
    add_json(l, v, m, JSON_ESCAPE_SLASH);
    add_json(l, v, m, JSON_ENSURE_ASCII);
    add_json(l, v, m, JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH);
    (void)sodium_bin2hex(hex, sizeof(hex), v, m);
    add(l, hex, 2 * m);
    for (k = 0; k < 2 * m; k++)
        if (hex[k] >= 'a')
            hex[k] = (char)(hex[k] - 32);
    add(l, hex, 2 * m);
}

static void
check_plain(const struct list *l, const void *t, size_t n)
{
    size_t i;

    for (i = 0; i < l->count; i++)
        if (memmem(t, n, l->s[i], l->n[i]) != NULL)
            abort(); /* a spelling got through */
}

static int
b64_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '-' ||
           c == '_';
}

/* Every run of base64 or base64url characters in t, from each of its
   first four characters, decoded by libsodium ('-' and '_' as '+' and
   '/'; whole groups, with the tail when libsodium takes it): no
   spelling in the bytes. */
static void
check_b64(const struct list *l, const unsigned char *t, size_t n)
{
    size_t a = 0, e, o, i, len, dl;
    unsigned char *d;
    char *run;

    while (a < n) {
        if (!b64_char(t[a])) {
            a++;
            continue;
        }
        for (e = a; e < n && b64_char(t[e]); e++)
            ;
        if ((run = malloc(e - a)) == NULL || (d = malloc(e - a)) == NULL)
            abort();
        for (o = 0; o < 4 && a + o < e; o++) {
            len = e - a - o;
            for (i = 0; i < len; i++)
                run[i] = t[a + o + i] == '-'   ? '+'
                         : t[a + o + i] == '_' ? '/'
                                               : (char)t[a + o + i];
            if (sodium_base642bin(d, e - a, run, len, NULL, &dl, NULL,
                                  sodium_base64_VARIANT_ORIGINAL_NO_PADDING) !=
                    0 &&
                sodium_base642bin(d, e - a, run, len / 4 * 4, NULL, &dl, NULL,
                                  sodium_base64_VARIANT_ORIGINAL) != 0)
                abort();
            check_plain(l, d, dl);
        }
        free(run);
        free(d);
        a = e;
    }
}

static void
check(const struct list *l, const void *t, size_t n)
{
    check_plain(l, t, n);
    check_b64(l, t, n);
}

/* Every string, key and number (canonical text) inside v. */
static void
check_json(const struct list *l, const json_t *v)
{
    char num[IG_NUMBER_STRMAX];
    const char *key;
    json_t *x;
    size_t i, n;

    if (json_is_string(v))
        check(l, json_string_value(v), json_string_length(v));
    if (json_is_number(v) &&
        ig_canon_number(json_number_value(v), num, &n) == IG_OK)
        check(l, num, n);
    json_array_foreach(v, i, x) check_json(l, x);
    json_object_foreach(ig_json_unconst(v), key, x)
    {
        check(l, key, strlen(key));
        check_json(l, x);
    }
}

/* The values of a result's "fields" (the names come from the settings). */
static void
check_fields(const struct list *l, const json_t *fields)
{
    const char *name;
    json_t *v;

    json_object_foreach(ig_json_unconst(fields), name, v) check_json(l, v);
}

/* The detail's fields are the result's or the fixed "omitted" stub. */
static void
check_detail(const json_t *res, const json_t *det)
{
    const char *name;
    json_t *v;

    json_object_foreach(ig_json_unconst(det), name, v)
    {
        if (!json_equal(v, json_object_get(res, name)) &&
            (json_object_size(v) != 1 ||
             !json_is_string(json_object_get(v, "omitted"))))
            abort();
    }
}

static json_t *set[3];

static void
settings(void)
{
    static const char fields[] =
        "{\"response\": \"fields\", \"response_fields\": {\"a\": \"\", "
        "\"b\": \"/a\", \"c\": \"/0\", \"d\": \"/a/b/0\", \"e\": \"/\"}}";
    static const char *const text[] = {"{}", "{\"response\": \"body\"}",
                                       fields};
    size_t i;

    if (sodium_init() < 0)
        abort();
    for (i = 0; i < 3; i++)
        if (ig_json_parse(text[i], strlen(text[i]), &set[i], NULL) != IG_OK ||
            exec_response_settings_check(set[i], NULL) != IG_OK)
            abort();
}

static void
response(const struct list *l, const struct exec_scrub *s, const json_t *st,
         const char *body, size_t n, int cut)
{
    char ct[41];
    struct exec_response_in in = {st, 200, ct, body, n, n + (cut ? 9 : 0), s};
    json_t *res = NULL, *det = NULL;
    const json_t *b;
    unsigned char *raw;
    size_t len;

    memcpy(ct, body, n < 40 ? n : 40);
    ct[n < 40 ? n : 40] = '\0';
    if (exec_response_build(&in, &res, &det, NULL) != IG_OK)
        abort();
    check_json(l, json_object_get(res, "body"));
    check_json(l, json_object_get(res, "content_type"));
    check_fields(l, json_object_get(res, "fields"));
    check_detail(json_object_get(res, "fields"),
                 json_object_get(det, "fields"));
    if ((b = json_object_get(res, "body_b64url")) != NULL) {
        if ((raw = malloc(json_string_length(b) + 1)) == NULL ||
            ig_b64_decode(json_string_value(b), json_string_length(b), raw,
                          json_string_length(b) + 1, &len) != IG_OK)
            abort();
        check(l, raw, len);
        free(raw);
    }
    json_decref(res);
    json_decref(det);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    size_t clen, plen, i, n;
    char prefix[16], both[80];
    struct exec_scrub *s = NULL;
    struct list l = {{NULL}, {0}, 0};
    struct ig_buf out;
    json_t *doc = NULL;
    const char *body;
    unsigned flags;
    int found;

    if (set[0] == NULL)
        settings();
    if (size < 3)
        return 0;
    clen = 1 + data[0] % 48;
    plen = data[1] % 12;
    flags = data[2];
    if (size < 3 + clen + plen)
        return 0;
    for (i = 0; i < plen; i++)
        prefix[i] = data[3 + clen + i] != 0 ? (char)data[3 + clen + i] : 'x';
    prefix[plen] = '\0';
    body = (const char *)data + 3 + clen + plen;
    n = size - 3 - clen - plen;
    if (exec_scrub_new(data + 3, clen, prefix, &s, NULL) != IG_OK)
        abort();
    spell_value(&l, data + 3, clen);
    if (plen > 0) {
        memcpy(both, prefix, plen);
        memcpy(both + plen, data + 3, clen);
        spell_value(&l, (const unsigned char *)both, plen + clen);
    }
    ig_buf_init(&out, 4 * n + 64);
    if (exec_scrub_bytes(s, body, n, flags & 3, &out, &found) != IG_OK)
        abort();
    if ((flags & EXEC_SCRUB_LITERAL) != 0)
        check_plain(&l, out.data, out.len); /* no views: no base64 view */
    else
        check(&l, out.data, out.len);
    if (!found && (flags & 1) == 0 &&
        (out.len != n || (n > 0 && memcmp(out.data, body, n) != 0)))
        abort(); /* nothing found, yet changed */
    ig_buf_release(&out);
    if (ig_json_parse(body, n, &doc, NULL) == IG_OK) {
        if (exec_scrub_json(s, &doc, &found) != IG_OK)
            abort();
        check_json(&l, doc);
        json_decref(doc);
    }
    response(&l, s, set[(flags >> 2) % 3], body, n, (int)(flags & 1));
    exec_scrub_free(s);
    for (i = 0; i < l.count; i++)
        free(l.s[i]);
    return 0;
}
