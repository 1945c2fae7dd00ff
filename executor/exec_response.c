/*
 * exec_response.c - the agent's result and the outcome detail of a
 * finished upstream call (exec_response.h).
 *
 * How it works. The body is settled first, the same way in every mode:
 * the kept bytes are scrubbed (cut-aware when truncated), an incomplete
 * UTF-8 character left at the cut is dropped, and in fields and body
 * modes a complete body that looks like JSON is parsed and scrubbed again
 * after decoding. Its digest is then taken. The result is assembled from
 * that body and the scrubbed content type; the detail is a second object
 * sharing the result's small values (never the body), with large field
 * values replaced by a stub and fields dropped, largest first, until the
 * canonical form fits.
 */
#include "exec_response.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_canon.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "ig_text.h"

enum mode { MODE_STATUS = 0, MODE_FIELDS, MODE_BODY };

#define MARKER_LEN (sizeof(EXEC_SCRUB_MARKER) - 1)

/* ---- settings ---- */

static int
name_valid(const char *s)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' ||
              s[i] == '-'))
            return 0;
    return i > 0 && i <= IG_EXEC_RESPONSE_NAME_MAX;
}

static enum ig_status
check_fields(const json_t *f, struct ig_err *err)
{
    const char *name;
    const json_t *p;

    if (!json_is_object(f) || json_object_size(f) == 0 ||
        json_object_size(f) > IG_EXEC_RESPONSE_FIELDS_MAX)
        return ig_err_set(err, IG_ERR_INVALID,
                          "http.response_fields: must be an object of 1 to "
                          "%d name: JSON pointer members",
                          IG_EXEC_RESPONSE_FIELDS_MAX);
    json_object_foreach(ig_json_unconst(f), name, p)
    {
        if (!name_valid(name))
            return ig_err_set(err, IG_ERR_INVALID,
                              "http.response_fields: a field name must be 1 "
                              "to %d of A-Z a-z 0-9 _ . -",
                              IG_EXEC_RESPONSE_NAME_MAX);
        if (!json_is_string(p) ||
            strlen(json_string_value(p)) != json_string_length(p) ||
            !ig_json_pointer_valid(json_string_value(p)))
            return ig_err_set(err, IG_ERR_INVALID,
                              "http.response_fields.%s: must be a JSON "
                              "pointer (\"\" or \"/a/0\", ~0 and ~1 escapes, "
                              "at most %d bytes)",
                              name, IG_AUDIT_POINTER_MAX);
    }
    return IG_OK;
}

enum ig_status
exec_response_settings_check(json_t *http, struct ig_err *err)
{
    const json_t *r = json_object_get(http, "response");
    const json_t *f = json_object_get(http, "response_fields");
    const char *m = json_string_value(r);

    if (r == NULL) {
        /* json_object_set_new steals the new string. */
        if (json_object_set_new(http, "response", json_string("status")) != 0)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        m = "status";
    } else if (m == NULL ||
               (strcmp(m, "status") != 0 && strcmp(m, "fields") != 0 &&
                strcmp(m, "body") != 0)) {
        return ig_err_set(err, IG_ERR_INVALID,
                          "http.response: must be \"status\", \"fields\" or "
                          "\"body\"");
    }
    if (strcmp(m, "fields") != 0)
        return f == NULL ? IG_OK
                         : ig_err_set(err, IG_ERR_INVALID,
                                      "http.response_fields: only with "
                                      "\"response\": \"fields\"");
    if (f == NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "http.response_fields: required with "
                          "\"response\": \"fields\"");
    return check_fields(f, err);
}

static enum mode
mode_of(const json_t *settings)
{
    const char *m = json_string_value(json_object_get(settings, "response"));

    if (m != NULL && strcmp(m, "fields") == 0)
        return MODE_FIELDS;
    if (m != NULL && strcmp(m, "body") == 0)
        return MODE_BODY;
    return MODE_STATUS;
}

/* ---- the body ---- */

struct body {
    struct ig_buf text;  /* the final body bytes */
    json_t *doc;         /* the scrubbed document, or NULL */
    enum ig_status json; /* why doc is NULL: IG_ERR_INVALID, _LIMIT */
    int found;
};

/* A text cut mid-character: drop the incomplete sequence at its end. */
static void
drop_cut_char(struct ig_buf *b)
{
    size_t k;

    if (b->len == 0 || ig_utf8_valid(b->data, b->len))
        return;
    for (k = 1; k <= 3 && k <= b->len; k++) {
        if (((unsigned char)b->data[b->len - k] & 0xC0) != 0x80)
            break; /* the lead byte of the last sequence */
    }
    if (k <= 3 && k <= b->len && (unsigned char)b->data[b->len - k] >= 0xC0 &&
        ig_utf8_valid(b->data, b->len - k)) {
        b->len -= k;
        b->data[b->len] = '\0';
    }
}

static int
looks_like_json(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n &&
           (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i < n && s[i] != '\0' && strchr("{[\"-0123456789tfn", s[i]) != NULL;
}

/* Parse the scrubbed body and scrub it decoded; in body mode a document
   that still held a spelling replaces the text by its canonical form. */
static enum ig_status
json_pass(const struct exec_response_in *in, enum mode mode, struct body *b)
{
    struct ig_buf canon;
    enum ig_status st;
    int found = 0;

    b->json = IG_ERR_INVALID;
    if (b->text.len > IG_JSON_MAX_BYTES) {
        b->json = IG_ERR_LIMIT;
        return IG_OK;
    }
    if (!looks_like_json(b->text.data, b->text.len))
        return IG_OK;
    st = ig_json_parse(b->text.data, b->text.len, &b->doc, NULL);
    if (st != IG_OK) {
        b->json = st;
        return st == IG_ERR_NOMEM ? st : IG_OK;
    }
    if ((st = exec_scrub_json(in->scrub, &b->doc, &found)) != IG_OK)
        return st;
    if (!found)
        return IG_OK;
    b->found = 1;
    if (mode != MODE_BODY)
        return IG_OK;
    /* The canonical text is scrubbed again: its quotes and escapes are
       new bytes. */
    ig_buf_init(&canon, IG_CANON_MAX_BYTES);
    st = ig_canon_write(b->doc, &canon, NULL);
    if (st != IG_ERR_NOMEM) {
        if (st != IG_OK) {
            ig_buf_reset(&canon);
            st = ig_buf_adds(&canon, EXEC_SCRUB_WITHHELD);
        }
        ig_buf_release(&b->text);
        ig_buf_init(&b->text,
                    canon.len * MARKER_LEN + sizeof(EXEC_SCRUB_WITHHELD));
        if (st == IG_OK)
            st = exec_scrub_bytes(in->scrub, canon.data, canon.len, 0, &b->text,
                                  &found);
    }
    ig_buf_release(&canon);
    return st;
}

static enum ig_status
settle_body(const struct exec_response_in *in, enum mode mode, int truncated,
            struct body *b)
{
    enum ig_status st;

    /* Markers may lengthen the text; past this it is withheld. */
    ig_buf_init(&b->text, 2 * in->kept + sizeof(EXEC_SCRUB_WITHHELD));
    b->doc = NULL;
    b->json = IG_ERR_INVALID;
    b->found = 0;
    st = exec_scrub_bytes(in->scrub, in->body != NULL ? in->body : "", in->kept,
                          truncated ? EXEC_SCRUB_CUT : 0, &b->text, &b->found);
    if (st == IG_OK && b->text.data == NULL)
        st = ig_buf_add(&b->text, "", 0);
    if (st != IG_OK)
        return st;
    if (truncated) {
        drop_cut_char(&b->text);
        return IG_OK; /* a cut text is not a JSON document */
    }
    return mode == MODE_STATUS ? IG_OK : json_pass(in, mode, b);
}

/* ---- the result ---- */

static enum ig_status
content_type(const struct exec_response_in *in, json_t **out, int *found)
{
    struct ig_buf a, b;
    enum ig_status st;
    size_t n, i;
    int f1 = 0, f2 = 0;

    *out = NULL;
    if (in->content_type == NULL)
        return (*out = json_null()) != NULL ? IG_OK : IG_ERR_NOMEM;
    n = strlen(in->content_type);
    ig_buf_init(&a, n * MARKER_LEN + sizeof(EXEC_SCRUB_WITHHELD));
    ig_buf_init(&b, a.max);
    st = exec_scrub_bytes(in->scrub, in->content_type, n, 0, &a, &f1);
    if (st == IG_OK && a.data == NULL)
        st = ig_buf_add(&a, "", 0);
    for (i = 0; st == IG_OK && i < a.len; i++)
        if ((unsigned char)a.data[i] < 0x20 || (unsigned char)a.data[i] > 0x7e)
            a.data[i] = '?';
    /* Again: a '?' may have completed a spelling. */
    if (st == IG_OK)
        st = exec_scrub_bytes(in->scrub, a.data, a.len, 0, &b, &f2);
    if (st == IG_OK) {
        n = b.len < IG_EXEC_RESPONSE_CONTENT_TYPE_MAX
                ? b.len
                : IG_EXEC_RESPONSE_CONTENT_TYPE_MAX;
        if ((*out = json_stringn(b.data != NULL ? b.data : "", n)) == NULL)
            st = IG_ERR_NOMEM;
        *found |= f1 | f2;
    }
    ig_buf_release(&a);
    ig_buf_release(&b);
    return st;
}

/* "fields", "fields_missing" and maybe "fields_error" into res. */
static enum ig_status
add_fields(json_t *res, const json_t *settings, const struct body *b,
           int truncated)
{
    const json_t *spec = json_object_get(settings, "response_fields"), *p;
    json_t *fields = json_object(), *missing = json_array();
    const char *name, *why = NULL;
    const json_t *v;
    int rc = fields == NULL || missing == NULL;

    if (truncated)
        why = "the body was cut at max_response_bytes";
    else if (b->doc == NULL && b->json == IG_ERR_LIMIT)
        why = "the body is over the JSON limits";
    else if (b->doc == NULL)
        why = "the body is not JSON";
    json_object_foreach(ig_json_unconst(spec), name, p)
    {
        if (rc != 0)
            break;
        v = b->doc != NULL ? ig_json_pointer_get(b->doc, json_string_value(p))
                           : NULL;
        /* json_array_append_new steals the new string. */
        rc = v != NULL ? json_object_set(fields, name, ig_json_unconst(v))
                       : json_array_append_new(missing, json_string(name));
    }
    /* json_object_set_new steals fields, missing and the new string, also
       when it fails. */
    rc |= json_object_set_new(res, "fields", fields);
    rc |= json_object_set_new(res, "fields_missing", missing);
    if (why != NULL)
        rc |= json_object_set_new(res, "fields_error", json_string(why));
    return rc == 0 ? IG_OK : IG_ERR_NOMEM;
}

static enum ig_status
add_body(json_t *res, const struct ig_buf *text)
{
    char *b64;
    size_t cap;
    int rc;

    if (ig_utf8_valid(text->data, text->len))
        /* json_object_set_new steals the new string. */
        return json_object_set_new(res, "body",
                                   json_stringn(text->data, text->len)) == 0
                   ? IG_OK
                   : IG_ERR_NOMEM;
    cap = IG_B64_ENCODED_LEN(text->len) + 1;
    if ((b64 = malloc(cap)) == NULL)
        return IG_ERR_NOMEM;
    (void)ig_b64_encode_public(text->data, text->len, b64, cap);
    rc = json_object_set_new(res, "body_b64url", json_string(b64));
    free(b64);
    return rc == 0 ? IG_OK : IG_ERR_NOMEM;
}

static enum ig_status
make_result(const struct exec_response_in *in, enum mode mode, int truncated,
            const struct body *b, json_t *ctype, int found, json_t **out)
{
    char hex[IG_SHA256_HEXLEN + 1];
    enum ig_status st = IG_OK;

    ig_sha256_hex(b->text.data != NULL ? b->text.data : "", b->text.len, hex);
    /* "O" takes a new reference to ctype. */
    *out = json_pack("{s:I, s:O, s:I, s:s, s:b, s:b}", "status",
                     (json_int_t)in->status, "content_type", ctype, "size",
                     (json_int_t)in->size, "sha256", hex, "truncated",
                     truncated, "credential_reflected", found);
    if (*out == NULL)
        return IG_ERR_NOMEM;
    if (mode == MODE_FIELDS)
        st = add_fields(*out, in->settings, b, truncated);
    else if (mode == MODE_BODY)
        st = add_body(*out, &b->text);
    if (st != IG_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return st;
}

/* ---- the detail ---- */

/* The canonical size of v when at most cap bytes, else cap + 1. */
static size_t
canon_size(const json_t *v, size_t cap)
{
    struct ig_buf b;
    size_t n;

    ig_buf_init(&b, cap);
    n = ig_canon_write(v, &b, NULL) == IG_OK ? b.len : cap + 1;
    ig_buf_release(&b);
    return n;
}

/* The detail's fields: each value, or a stub when it is too large. */
static json_t *
capped_fields(const json_t *fields)
{
    char why[64];
    json_t *out = json_object();
    const char *name;
    json_t *v;
    int rc = out == NULL;

    (void)snprintf(why, sizeof(why), "larger than %d bytes",
                   IG_EXEC_RESPONSE_FIELD_MAX_BYTES);
    json_object_foreach(ig_json_unconst(fields), name, v)
    {
        if (rc != 0)
            break;
        if (canon_size(v, IG_EXEC_RESPONSE_FIELD_MAX_BYTES) <=
            IG_EXEC_RESPONSE_FIELD_MAX_BYTES)
            rc = json_object_set(out, name, v);
        else /* json_object_set_new steals the new stub. */
            rc = json_object_set_new(out, name,
                                     json_pack("{s:s}", "omitted", why));
    }
    if (rc != 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Drop the field with the largest canonical form. */
static void
drop_largest(json_t *fields)
{
    const char *name, *worst = NULL;
    size_t n, most = 0;
    json_t *v;

    json_object_foreach(fields, name, v)
    {
        n = canon_size(v, IG_EXEC_RESPONSE_FIELD_MAX_BYTES);
        if (worst == NULL || n > most) {
            worst = name;
            most = n;
        }
    }
    if (worst != NULL)
        (void)json_object_del(fields, worst);
}

static enum ig_status
make_detail(const json_t *res, json_t **out)
{
    const char *key;
    json_t *v, *fields = NULL;
    int rc = 0;

    if ((*out = json_object()) == NULL)
        return IG_ERR_NOMEM;
    json_object_foreach(ig_json_unconst(res), key, v)
    {
        if (strcmp(key, "body") == 0 || strcmp(key, "body_b64url") == 0)
            continue;
        if (strcmp(key, "fields") != 0) {
            rc |= json_object_set(*out, key, v);
            continue;
        }
        /* json_object_set_new steals the new object. */
        rc |= (fields = capped_fields(v)) == NULL ||
              json_object_set_new(*out, key, fields) != 0;
    }
    while (rc == 0 && fields != NULL &&
           canon_size(*out, IG_OUTCOME_DETAIL_MAX_BYTES) >
               IG_OUTCOME_DETAIL_MAX_BYTES &&
           json_object_size(fields) > 0) {
        drop_largest(fields);
        rc |= json_object_set_new(*out, "fields_omitted", json_true());
    }
    if (rc != 0) {
        json_decref(*out);
        *out = NULL;
        return IG_ERR_NOMEM;
    }
    return IG_OK;
}

enum ig_status
exec_response_build(const struct exec_response_in *in, json_t **result,
                    json_t **detail, struct ig_err *err)
{
    enum mode mode = mode_of(in->settings);
    int truncated = in->size > in->kept, found = 0;
    json_t *ctype = NULL;
    struct body b;
    enum ig_status st;

    *result = *detail = NULL;
    ig_buf_init(&b.text, 0);
    b.doc = NULL;
    if (in->size < in->kept || (in->body == NULL && in->kept > 0))
        return ig_err_set(err, IG_ERR_INVALID, "inconsistent response sizes");
    if ((st = settle_body(in, mode, truncated, &b)) == IG_OK &&
        (st = content_type(in, &ctype, &found)) == IG_OK &&
        (st = make_result(in, mode, truncated, &b, ctype, found | b.found,
                          result)) == IG_OK)
        st = make_detail(*result, detail);
    if (st != IG_OK) {
        json_decref(*result);
        *result = NULL;
        (void)ig_err_set(err, st, "cannot build the response: %s",
                         ig_strerror(st));
    }
    json_decref(ctype);
    json_decref(b.doc);
    ig_buf_release(&b.text);
    return st;
}
