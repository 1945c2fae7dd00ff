/*
 * cli_http.c - the CLI's JSON client (cli_http.h).
 *
 * One curl easy handle, reset before each call and set up the same way:
 * core's hardening (ig_curl_harden: no redirects, http/https only, no
 * proxy, TLS verified) with the CLI's connect and total timeouts, the
 * caller's method and body, and a write callback that appends to a
 * capped buffer (refusing past the cap ends the transfer). The bearer
 * header line lives in sodium_malloc'd memory and is wiped on free; the
 * response buffer is wiped before release since a login answer carries a
 * session token.
 */
#include "cli_http.h"

#include <curl/curl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_buf.h"
#include "ig_curl.h"
#include "ig_json.h"
#include "ig_limits.h"

#define AUTH_PREFIX "Authorization: Bearer "
#define AUTH_MAX IG_CLI_AUTH_HEADER_MAX

struct cli_http {
    CURL *curl;
    char base[CLI_HTTP_MAX_URL];
    char *auth; /* AUTH_PREFIX + token, sodium_malloc'd; NULL: none */
};

/* Where the write callback puts the answer. */
struct sink {
    struct ig_buf buf;
    int over; /* the answer went past buf's cap */
};

static int curl_users; /* curl_global_init'ed while > 0 */

enum ig_status
cli_http_new(const char *base_url, struct cli_http **out, struct ig_err *err)
{
    struct cli_http *h;
    size_t n = strlen(base_url), scheme, i;

    *out = NULL;
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    scheme = strncmp(base_url, "https://", 8) == 0 ? 8 : 7;
    if ((scheme == 7 && strncmp(base_url, "http://", 7) != 0) || n <= scheme)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the URL must be http://HOST[:PORT] or https://...");
    for (i = 0; i < n; i++)
        if ((unsigned char)base_url[i] <= 0x20 ||
            (unsigned char)base_url[i] >= 0x7f)
            return ig_err_set(err, IG_ERR_INVALID,
                              "the URL holds a space or a control character");
    if (n >= CLI_HTTP_MAX_URL / 2)
        return ig_err_set(err, IG_ERR_INVALID, "the URL is too long");
    if (curl_users == 0 && curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot initialize libcurl");
    curl_users++;
    h = calloc(1, sizeof(*h));
    if (h == NULL || (h->curl = curl_easy_init()) == NULL) {
        cli_http_free(h);
        if (h == NULL && --curl_users == 0)
            curl_global_cleanup();
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    memcpy(h->base, base_url, n);
    h->base[n] = '\0';
    *out = h;
    return IG_OK;
}

void
cli_http_free(struct cli_http *h)
{
    if (h == NULL)
        return;
    if (h->auth != NULL)
        sodium_free(h->auth); /* sodium_free wipes */
    if (h->curl != NULL)
        curl_easy_cleanup(h->curl);
    free(h);
    if (--curl_users == 0)
        curl_global_cleanup();
}

enum ig_status
cli_http_set_bearer(struct cli_http *h, const char *token)
{
    size_t i, n;

    if (h->auth != NULL)
        sodium_free(h->auth);
    h->auth = NULL;
    if (token == NULL)
        return IG_OK;
    n = strlen(token);
    if (n == 0 || n > AUTH_MAX)
        return IG_ERR_INVALID;
    for (i = 0; i < n; i++)
        if ((unsigned char)token[i] <= 0x20 || (unsigned char)token[i] >= 0x7f)
            return IG_ERR_INVALID;
    h->auth = sodium_malloc(sizeof(AUTH_PREFIX) + n);
    if (h->auth == NULL)
        return IG_ERR_NOMEM;
    memcpy(h->auth, AUTH_PREFIX, sizeof(AUTH_PREFIX) - 1);
    memcpy(h->auth + sizeof(AUTH_PREFIX) - 1, token, n + 1);
    return IG_OK;
}

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
    struct sink *k = arg;
    enum ig_status st = size == 1 ? ig_buf_add(&k->buf, p, n) : IG_ERR_LIMIT;

    if (st == IG_ERR_LIMIT)
        k->over = 1;
    return st == IG_OK ? n : 0; /* 0 ends it with CURLE_WRITE_ERROR */
}

static enum ig_status
setup(struct cli_http *h, const char *url, const char *method, const char *body,
      size_t len, struct curl_slist *hdr, struct sink *resp, char *errbuf,
      struct ig_err *err)
{
    CURL *c = h->curl;

    curl_easy_reset(c);
    if (ig_curl_harden(c, CLI_HTTP_CONNECT_TIMEOUT_MS, CLI_HTTP_TIMEOUT_MS,
                       err) != IG_OK)
        return IG_ERR_IO;
    (void)curl_easy_setopt(c, CURLOPT_URL, url);
    (void)curl_easy_setopt(c, CURLOPT_USERAGENT, "intentgate-cli");
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
    (void)curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    if (body != NULL || strcmp(method, "POST") == 0) {
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                               (curl_off_t)(body ? len : 0));
    } else {
        (void)curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0)
        (void)curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    return IG_OK;
}

/* The request's header lines, or NULL when out of memory. */
static struct curl_slist *
headers(const struct cli_http *h, int has_body)
{
    struct curl_slist *l = NULL, *t;
    const char *lines[] = {
        "Accept: application/json",
        "Expect:", has_body ? "Content-Type: application/json" : NULL, h->auth};
    size_t i;

    for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        if (lines[i] == NULL)
            continue;
        if ((t = curl_slist_append(l, lines[i])) == NULL) {
            ig_curl_headers_free(l);
            return NULL;
        }
        l = t;
    }
    return l;
}

enum ig_status
cli_http_call(struct cli_http *h, const char *method, const char *path,
              const char *body, size_t len, struct cli_http_reply *out,
              struct ig_err *err)
{
    char url[CLI_HTTP_MAX_URL], errbuf[CURL_ERROR_SIZE];
    struct curl_slist *hdr = NULL;
    struct ig_err jerr;
    struct sink resp;
    enum ig_status st;
    CURLcode rc;
    int n;

    out->status = 0;
    out->body = NULL;
    errbuf[0] = '\0';
    ig_buf_init(&resp.buf, CLI_HTTP_MAX_RESPONSE);
    resp.over = 0;
    n = snprintf(url, sizeof(url), "%s%s", h->base, path);
    if (n < 0 || (size_t)n >= sizeof(url)) {
        st = ig_err_set(err, IG_ERR_INVALID, "the URL is too long");
        goto out;
    }
    if ((hdr = headers(h, body != NULL)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((st = setup(h, url, method, body, len, hdr, &resp, errbuf, err)) !=
        IG_OK)
        goto out;
    rc = curl_easy_perform(h->curl);
    if (rc == CURLE_WRITE_ERROR && resp.over) {
        st = ig_err_set(err, IG_ERR_LIMIT,
                        "the answer from %s is larger than %zu bytes", h->base,
                        resp.buf.max);
        goto out;
    }
    if (rc != CURLE_OK) {
        st = ig_err_set(err, IG_ERR_IO, "cannot reach %s: %s", h->base,
                        errbuf[0] ? errbuf : curl_easy_strerror(rc));
        goto out;
    }
    (void)curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &out->status);
    st = IG_OK;
    if (resp.buf.len > 0 &&
        ig_json_parse(resp.buf.data, resp.buf.len, &out->body, &jerr) != IG_OK)
        st = ig_err_set(err, IG_ERR_INVALID,
                        "HTTP %ld from %s%s is not JSON: %s", out->status,
                        h->base, path, jerr.msg);
out:
    ig_curl_headers_free(hdr);
    ig_buf_release_secret(&resp.buf);
    return st;
}

enum ig_status
cli_http_call_json(struct cli_http *h, const char *method, const char *path,
                   const json_t *body, struct cli_http_reply *out,
                   struct ig_err *err)
{
    enum ig_status st;
    char *text = NULL;
    size_t len = 0;

    if (body != NULL) {
        text = json_dumps(body, JSON_COMPACT);
        if (text == NULL) {
            out->status = 0;
            out->body = NULL;
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        }
        len = strlen(text);
    }
    st = cli_http_call(h, method, path, text, len, out, err);
    if (text != NULL)
        sodium_memzero(text, len);
    free(text);
    return st;
}

void
cli_http_reply_release(struct cli_http_reply *out)
{
    json_decref(out->body);
    out->body = NULL;
}

const char *
cli_http_error_code(const json_t *body, const char **message)
{
    const json_t *e = json_object_get(body, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));

    *message = msg != NULL ? msg : "";
    return code;
}
