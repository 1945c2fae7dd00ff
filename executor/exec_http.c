/*
 * exec_http.c - the `http` handler (see exec_http.h).
 *
 * Building the request never lets a parameter change where it goes: path
 * placeholders are percent-encoded whole (a "/" or "?" in a value stays
 * data) and may not be empty or only dots, query values likewise, the
 * body is the canonical JSON of the declared fields, and libcurl sends the
 * path as built (PATH_AS_IS). After the call the outcome is classified
 * from what libcurl reports: no connection -> FAILED_BEFORE_DISPATCH; an
 * error once the request was (even partly) sent -> UNKNOWN_AFTER_DISPATCH;
 * a response -> COMPLETED, and exec_response.c turns it into the agent's
 * result and the PDP's report with the credential scrubbed out of every
 * byte (exec_scrub.c).
 */
#include "exec_http.h"

#include <curl/curl.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "exec_curl.h"
#include "exec_response.h"
#include "exec_scrub.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_curl.h"
#include "ig_limits.h"
#include "ig_secmem.h"

const char *
exec_outcome_name(enum exec_outcome o)
{
    switch (o) {
    case EXEC_OUTCOME_COMPLETED:
        return "COMPLETED";
    case EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH:
        return "UNKNOWN_AFTER_DISPATCH";
    case EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED:
        return "DEFINITELY_NOT_EXECUTED";
    case EXEC_OUTCOME_FAILED_BEFORE_DISPATCH:
        break;
    }
    return "FAILED_BEFORE_DISPATCH";
}

void
exec_result_release(struct exec_result *r)
{
    json_decref(r->detail);
    json_decref(r->report);
    r->detail = r->report = NULL;
}

/* Append a parameter's value, percent-encoded (RFC 3986 unreserved kept). */
static enum ig_status
add_encoded(struct ig_buf *b, const json_t *v)
{
    char num[IG_NUMBER_STRMAX], esc[4];
    const char *s;
    size_t i, n;

    if (json_is_string(v)) {
        s = json_string_value(v);
        n = json_string_length(v);
    } else if (json_is_number(v) &&
               ig_canon_number(json_number_value(v), num, &n) == IG_OK) {
        s = num;
    } else {
        return IG_ERR_INVALID;
    }
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
            c == '~') {
            if (ig_buf_addc(b, (char)c) != IG_OK)
                return IG_ERR_LIMIT;
            continue;
        }
        (void)snprintf(esc, sizeof(esc), "%%%02X", c);
        if (ig_buf_add(b, esc, 3) != IG_OK)
            return IG_ERR_LIMIT;
    }
    return IG_OK;
}

/* A path placeholder's value may not be empty or made only of dots: "",
   "." and ".." (and "...", which some servers also fold) would change
   which path the request names. Numbers are never that. */
static int
segment_ok(const json_t *v)
{
    const char *s = json_string_value(v);
    size_t i, n = json_string_length(v);

    if (!json_is_string(v))
        return json_is_number(v);
    for (i = 0; i < n && s[i] == '.'; i++)
        ;
    return n > 0 && i < n;
}

/* The URL template with {name} replaced, then ?query fields. */
static enum ig_status
build_url(const json_t *settings, const json_t *params, struct ig_buf *url,
          struct ig_err *err)
{
    const char *t = json_string_value(json_object_get(settings, "url"));
    const json_t *q = json_object_get(settings, "query_fields"), *v;
    const char *close, *sep = strchr(t != NULL ? t : "", '?') ? "&" : "?";
    char name[128];
    size_t i, n;

    if (t == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "no url in the registry");
    while (*t != '\0') {
        if (*t != '{') {
            if (ig_buf_addc(url, *t++) != IG_OK)
                return ig_err_set(err, IG_ERR_LIMIT, "URL too long");
            continue;
        }
        close = strchr(t, '}');
        n = close != NULL ? (size_t)(close - t - 1) : 0;
        if (close == NULL || n == 0 || n >= sizeof(name))
            return ig_err_set(err, IG_ERR_INVALID, "bad URL placeholder");
        memcpy(name, t + 1, n);
        name[n] = '\0';
        if (!segment_ok(json_object_get(params, name)))
            return ig_err_set(err, IG_ERR_INVALID,
                              "parameter %s: a path segment may not be "
                              "empty or only dots",
                              name);
        if (add_encoded(url, json_object_get(params, name)) != IG_OK)
            return ig_err_set(err, IG_ERR_INVALID,
                              "parameter %s cannot fill the URL", name);
        t = close + 1;
    }
    for (i = 0; i < json_array_size(q); i++) {
        const char *k = json_string_value(json_array_get(q, i));
        v = json_object_get(params, k != NULL ? k : "");
        if (v == NULL)
            continue; /* optional and absent */
        if (ig_buf_adds(url, sep) != IG_OK || ig_buf_adds(url, k) != IG_OK ||
            ig_buf_addc(url, '=') != IG_OK || add_encoded(url, v) != IG_OK)
            return ig_err_set(err, IG_ERR_INVALID,
                              "parameter %s cannot fill the query", k);
        sep = "&";
    }
    return IG_OK;
}

/* The canonical JSON body of the declared body fields (none: no body). */
static enum ig_status
build_body(const json_t *settings, const json_t *params, struct ig_buf *body,
           int *has_body)
{
    const json_t *f = json_object_get(settings, "body_fields");
    json_t *obj;
    enum ig_status st;
    size_t i;

    *has_body = json_array_size(f) > 0;
    if (!*has_body)
        return IG_OK;
    obj = json_object();
    if (obj == NULL)
        return IG_ERR_NOMEM;
    for (i = 0; i < json_array_size(f); i++) {
        const char *k = json_string_value(json_array_get(f, i));
        json_t *v = json_object_get(params, k != NULL ? k : "");
        /* A field lost to out-of-memory must not send a different body. */
        if (v != NULL && json_object_set(obj, k, v) != 0) {
            json_decref(obj);
            return IG_ERR_NOMEM;
        }
    }
    st = ig_canon_write(obj, body, NULL);
    json_decref(obj);
    return st;
}

struct sink {
    struct ig_buf body;
    uint64_t total; /* every byte offered, kept or not */
};

static size_t
on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t n = size * nmemb, room = s->body.max - s->body.len;

    s->total += n;
    if (n > room) {
        if (room > 0 && ig_buf_add(&s->body, ptr, room) != IG_OK)
            return 0;
        return n; /* keep reading, keep nothing more */
    }
    return ig_buf_add(&s->body, ptr, n) == IG_OK ? n : 0;
}

/* "Header: prefix+credential" in ig_secmem memory, or NULL. */
static char *
credential_header(const json_t *settings, const unsigned char *cred,
                  size_t cred_len, size_t *alloc)
{
    const char *h =
        json_string_value(json_object_get(settings, "credential_header"));
    const char *pre =
        json_string_value(json_object_get(settings, "credential_prefix"));
    size_t n;
    char *line;

    if (h == NULL || cred == NULL)
        return NULL;
    if (pre == NULL)
        pre = "";
    n = strlen(h) + 2 + strlen(pre) + cred_len + 1;
    line = ig_secmem_get(n);
    if (line == NULL)
        return NULL;
    (void)snprintf(line, n, "%s: %s", h, pre);
    memcpy(line + strlen(line), cred, cred_len);
    line[n - 1] = '\0';
    *alloc = n;
    return line;
}

/* Classify a finished call; fill out. A response becomes the agent's
   result and the PDP's report (exec_response.c), scrubbed of every
   spelling of the credential. */
static enum ig_status
classify(CURL *c, CURLcode rc, const json_t *settings, struct sink *sink,
         const struct exec_scrub *scrub, struct exec_result *out,
         struct ig_err *err)
{
    struct exec_response_in in;
    curl_off_t sent = 0;
    const char *ctype = NULL;
    long status = 0;

    (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    (void)curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
    if (rc == CURLE_OK) {
        (void)curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ctype);
        out->outcome = EXEC_OUTCOME_COMPLETED;
        out->status = status;
        in.settings = settings;
        in.status = status;
        in.content_type = ctype;
        in.body = sink->body.data;
        in.kept = sink->body.len;
        in.size = sink->total;
        in.scrub = scrub;
        if (exec_response_build(&in, &out->detail, &out->report, err) !=
            IG_OK) {
            /* It ran; only its answer is lost. Say so, with nothing of
               the body. */
            out->detail = json_pack("{s:i, s:s}", "status", (int)status,
                                    "error", "the answer could not be read");
            return IG_OK;
        }
        out->credential_reflected =
            json_is_true(json_object_get(out->detail, "credential_reflected"));
        return IG_OK;
    }
    out->outcome =
        (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
         rc == CURLE_COULDNT_RESOLVE_PROXY || sent == 0)
            ? EXEC_OUTCOME_FAILED_BEFORE_DISPATCH
            : EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH;
    out->detail = json_pack("{s:s}", "error", curl_easy_strerror(rc));
    return IG_OK;
}

enum ig_status
exec_http_check(const json_t *settings, const json_t *params,
                struct ig_err *err)
{
    struct ig_buf url;
    enum ig_status st;

    ig_buf_init(&url, IG_EXEC_URL_MAX);
    st = build_url(settings, params, &url, err);
    ig_buf_release(&url);
    return st;
}

/* The URL, the body (*has_body: one is sent) and, with a credential,
   the scrubber its answer goes through (*scrub; NULL without one). err
   says what could not be built. */
static enum ig_status
prepare(const json_t *settings, const json_t *params, const unsigned char *cred,
        size_t cred_len, struct ig_buf *url, struct ig_buf *body, int *has_body,
        struct exec_scrub **scrub, struct ig_err *err)
{
    enum ig_status st = build_url(settings, params, url, err);

    if (st == IG_OK && build_body(settings, params, body, has_body) != IG_OK)
        st = ig_err_set(err, IG_ERR_INVALID, "cannot build the request body");
    if (st == IG_OK && cred != NULL &&
        (st = exec_scrub_new(
             cred, cred_len,
             json_string_value(json_object_get(settings, "credential_prefix")),
             scrub, err)) != IG_OK)
        (void)ig_err_set(err, st, "cannot prepare the credential's scrubber");
    return st;
}

/* The header lines into *out: the credential's (libcurl copies it; NULL:
   none) and, with a body, its content type. 0, or -1 when any could not
   be appended (then nothing is kept: a call without its credential must
   not go out). */
static int
header_list(const char *cred_line, int has_body, struct curl_slist **out)
{
    struct curl_slist *h = NULL, *t;

    *out = NULL;
    if (cred_line != NULL) {
        if ((t = curl_slist_append(h, cred_line)) == NULL)
            return -1;
        h = t;
    }
    if (has_body) {
        if ((t = curl_slist_append(h, "Content-Type: application/json")) ==
            NULL) {
            ig_curl_headers_free(h);
            return -1;
        }
        h = t;
    }
    *out = h;
    return 0;
}

/* Every option of the call on c: core's hardening (http and https only,
   no redirects, no proxy, TLS verified) with the action's timeout, the
   URL exactly as built, the method, the headers h, the body (NULL: none),
   and the sink that keeps the answer. libcurl copies the URL and the
   method: either lost to out-of-memory would send another request (no
   URL, or GET), so every result is checked and nothing goes out unless
   all are set. */
static enum ig_status
set_options(CURL *c, const json_t *settings, const char *url,
            struct curl_slist *h, const char *body, struct sink *sink,
            struct ig_err *err)
{
    const char *method = json_string_value(json_object_get(settings, "method"));
    /* The registry writes its numbers as reals (I-JSON): read them so. */
    double timeout = json_number_value(json_object_get(settings, "timeout_ms"));
    long ms = timeout > 0 ? (long)timeout : IG_EXEC_HTTP_TIMEOUT_MS;

    if (ig_curl_harden(c, ms, ms, err) != IG_OK)
        return IG_ERR_IO;
    if (method == NULL || curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK ||
        /* Send the path exactly as built: libcurl must not fold "/./" or
           "/../" (the template's own; values cannot hold them). */
        curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h) != CURLE_OK ||
        (body != NULL &&
         curl_easy_setopt(c, CURLOPT_POSTFIELDS, body) != CURLE_OK) ||
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEDATA, sink) != CURLE_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot set up the HTTP call");
    return IG_OK;
}

enum ig_status
exec_http_run(const json_t *settings, const json_t *params,
              const unsigned char *cred, size_t cred_len,
              struct exec_result *out, struct ig_err *err)
{
    double cap =
        json_number_value(json_object_get(settings, "max_response_bytes"));
    struct curl_slist *h = NULL;
    struct exec_scrub *scrub = NULL;
    struct ig_buf url, body;
    struct sink sink;
    char *cred_line = NULL;
    size_t cred_alloc = 0;
    enum ig_status st;
    int has_body = 0;
    CURL *c = NULL;
    CURLcode rc;

    memset(out, 0, sizeof(*out));
    ig_buf_init(&url, IG_EXEC_URL_MAX);
    ig_buf_init(&body, IG_JSON_MAX_BYTES);
    ig_buf_init(&sink.body,
                cap > 0 ? (size_t)cap : IG_EXEC_HTTP_RESPONSE_DEFAULT_BYTES);
    sink.total = 0;
    st = prepare(settings, params, cred, cred_len, &url, &body, &has_body,
                 &scrub, err);
    if (st != IG_OK)
        goto out;
    cred_line = credential_header(settings, cred, cred_len, &cred_alloc);
    if (cred != NULL && json_object_get(settings, "credential_header") &&
        cred_line == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    c = exec_curl_handle(1);
    /* Every header or none: never a call without its credential. */
    if (c == NULL || header_list(cred_line, has_body, &h) != 0) {
        st = ig_err_set(err, IG_ERR_NOMEM, "cannot start an HTTP call");
        goto out;
    }
    st = set_options(c, settings, url.data, h, has_body ? body.data : NULL,
                     &sink, err);
    if (st != IG_OK)
        goto out;
    rc = curl_easy_perform(c);
    st = classify(c, rc, settings, &sink, scrub, out, err);
out:
    exec_scrub_free(scrub);
    /* curl_slist_append copied the credential line: wipe it. */
    ig_curl_headers_free(h);
    if (cred_line != NULL)
        ig_secmem_put(cred_line); /* wipes */
    ig_buf_release(&url);
    ig_buf_release(&body);
    /* The body may hold the credential as the upstream echoed it. */
    if (sink.body.data != NULL)
        sodium_memzero(sink.body.data, sink.body.len);
    ig_buf_release(&sink.body);
    return st;
}
