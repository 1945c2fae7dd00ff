/*
 * cli_http.c - the CLI's JSON client (cli_http.h).
 *
 * This file checks the base URL, keeps the bearer header line, and turns
 * an answer into JSON; the bytes travel by one of the transports of
 * cli_http_int.h: http:// over a plain socket (cli_http_plain.c), https://
 * with libcurl (cli_http_curl.c), which is initialised on the first https
 * call only. The bearer header line lives in sodium_malloc'd memory and is
 * wiped on free; the response buffer is wiped before release since a
 * login answer carries a session token.
 */
#include "cli_http.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_http_int.h"
#include "ig_buf.h"
#include "ig_json.h"
#include "ig_limits.h"

#define AUTH_PREFIX "Authorization: Bearer "
#define AUTH_MAX IG_CLI_AUTH_HEADER_MAX

struct cli_http {
    char base[CLI_HTTP_MAX_URL];
    char *auth; /* AUTH_PREFIX + token, sodium_malloc'd; NULL: none */
    int https;
    struct cli_http_tls *tls; /* the https transport, once used */
};

enum ig_status
cli_http_new(const char *base_url, struct cli_http **out, struct ig_err *err)
{
    struct cli_http_target t;
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
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    memcpy(h->base, base_url, n);
    h->base[n] = '\0';
    h->https = scheme == 8;
    if (!h->https && cli_http_target_parse(h->base, &t, err) != IG_OK) {
        free(h);
        return IG_ERR_INVALID;
    }
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
    cli_http_tls_free(h->tls);
    free(h);
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

enum ig_status
cli_http_call(struct cli_http *h, const char *method, const char *path,
              const char *body, size_t len, struct cli_http_reply *out,
              struct ig_err *err)
{
    char url[CLI_HTTP_MAX_URL];
    struct cli_http_xfer x;
    struct ig_err jerr;
    struct ig_buf resp;
    enum ig_status st;
    int n;

    out->status = 0;
    out->body = NULL;
    ig_buf_init(&resp, CLI_HTTP_MAX_RESPONSE);
    n = snprintf(url, sizeof(url), "%s%s", h->base, path);
    if (n < 0 || (size_t)n >= sizeof(url)) {
        st = ig_err_set(err, IG_ERR_INVALID, "the URL is too long");
        goto out;
    }
    memset(&x, 0, sizeof(x));
    x.base = h->base;
    x.url = url;
    x.method = method;
    x.body = body;
    x.len = len;
    x.auth = h->auth;
    x.resp = &resp;
    st = h->https ? cli_http_tls_call(&h->tls, &x, err)
                  : cli_http_plain_call(&x, err);
    if (st != IG_OK)
        goto out;
    out->status = x.status;
    if (resp.len > 0 &&
        ig_json_parse(resp.data, resp.len, &out->body, &jerr) != IG_OK)
        st = ig_err_set(err, IG_ERR_INVALID,
                        "HTTP %ld from %s%s is not JSON: %s", out->status,
                        h->base, path, jerr.msg);
out:
    ig_buf_release_secret(&resp);
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
