/*
 * cli_http_curl.c - the https transport of the CLI's JSON client
 * (cli_http_int.h), with libcurl.
 *
 * One curl easy handle, created on the first https call (so an http://
 * run never initialises libcurl or its TLS library), reset before each
 * call and set up the same way: core's hardening (ig_curl_harden: no
 * redirects, http/https only, no proxy, TLS verified) with the CLI's
 * connect and total timeouts, the caller's method and body, and a write
 * callback that appends to the capped response buffer (refusing past the
 * cap ends the transfer).
 */
#include "cli_http_int.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "cli_http.h"
#include "ig_curl.h"

struct cli_http_tls {
    CURL *curl;
};

/* Where the write callback puts the answer. */
struct sink {
    struct ig_buf *buf;
    int over; /* the answer went past buf's cap */
};

static int curl_users; /* curl_global_init'ed while > 0 */

static enum ig_status
tls_new(struct cli_http_tls **out, struct ig_err *err)
{
    struct cli_http_tls *t;

    if (curl_users == 0 && curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot initialize libcurl");
    curl_users++;
    t = calloc(1, sizeof(*t));
    if (t == NULL || (t->curl = curl_easy_init()) == NULL) {
        free(t);
        if (--curl_users == 0)
            curl_global_cleanup();
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    *out = t;
    return IG_OK;
}

void
cli_http_tls_free(struct cli_http_tls *t)
{
    if (t == NULL)
        return;
    curl_easy_cleanup(t->curl);
    free(t);
    if (--curl_users == 0)
        curl_global_cleanup();
}

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
    struct sink *k = arg;
    enum ig_status st = size == 1 ? ig_buf_add(k->buf, p, n) : IG_ERR_LIMIT;

    if (st == IG_ERR_LIMIT)
        k->over = 1;
    return st == IG_OK ? n : 0; /* 0 ends it with CURLE_WRITE_ERROR */
}

/* The request's header lines, or NULL when out of memory. */
static struct curl_slist *
headers(const struct cli_http_xfer *x)
{
    struct curl_slist *l = NULL, *t;
    const char *lines[] = {
        "Accept: application/json",
        "Expect:", x->body != NULL ? "Content-Type: application/json" : NULL,
        x->auth};
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

static enum ig_status
setup(CURL *c, const struct cli_http_xfer *x, struct curl_slist *hdr,
      struct sink *resp, char *errbuf, struct ig_err *err)
{
    curl_easy_reset(c);
    if (ig_curl_harden(c, CLI_HTTP_CONNECT_TIMEOUT_MS, CLI_HTTP_TIMEOUT_MS,
                       err) != IG_OK)
        return IG_ERR_IO;
    (void)curl_easy_setopt(c, CURLOPT_URL, x->url);
    (void)curl_easy_setopt(c, CURLOPT_USERAGENT, "intentgate-cli");
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
    (void)curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    if (x->body != NULL || strcmp(x->method, "POST") == 0) {
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, x->body ? x->body : "");
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                               (curl_off_t)(x->body ? x->len : 0));
    } else {
        (void)curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    if (strcmp(x->method, "GET") != 0 && strcmp(x->method, "POST") != 0)
        (void)curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, x->method);
    return IG_OK;
}

enum ig_status
cli_http_tls_call(struct cli_http_tls **tls, struct cli_http_xfer *x,
                  struct ig_err *err)
{
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *hdr = NULL;
    struct sink resp = {x->resp, 0};
    enum ig_status st;
    CURLcode rc;

    errbuf[0] = '\0';
    if (*tls == NULL && (st = tls_new(tls, err)) != IG_OK)
        return st;
    if ((hdr = headers(x)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((st = setup((*tls)->curl, x, hdr, &resp, errbuf, err)) != IG_OK)
        goto out;
    rc = curl_easy_perform((*tls)->curl);
    if (rc == CURLE_WRITE_ERROR && resp.over)
        st = ig_err_set(err, IG_ERR_LIMIT,
                        "the answer from %s is larger than %zu bytes", x->base,
                        x->resp->max);
    else if (rc != CURLE_OK)
        st = ig_err_set(err, IG_ERR_IO, "cannot reach %s: %s", x->base,
                        errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else
        (void)curl_easy_getinfo((*tls)->curl, CURLINFO_RESPONSE_CODE,
                                &x->status);
out:
    ig_curl_headers_free(hdr);
    return st;
}
