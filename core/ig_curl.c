/*
 * ig_curl.c - libcurl hardening, and the two small pieces every caller
 * needs around it: a capped response sink and a wiping header free (see
 * ig_curl.h).
 *
 * Every option is set and its result checked: a libcurl too old to know
 * one (CURLOPT_PROTOCOLS_STR needs 7.85) refuses the request instead of
 * sending it unprotected.
 */
#include "ig_curl.h"

#include <sodium.h>
#include <string.h>

#include "ig_buf.h"

#define SET(opt, val)                                                          \
    do {                                                                       \
        if (curl_easy_setopt(c, opt, val) != CURLE_OK)                         \
            return ig_err_set(err, IG_ERR_IO, "libcurl refused %s", #opt);     \
    } while (0)

enum ig_status
ig_curl_harden(CURL *c, long connect_ms, long total_ms, struct ig_err *err)
{
    if (connect_ms <= 0 || total_ms <= 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "HTTP timeouts must be positive");
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_MAXREDIRS, 0L);
    /* "" is libcurl's "no proxy at all", environment variables included. */
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    SET(CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    SET(CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    SET(CURLOPT_TIMEOUT_MS, total_ms);
    return IG_OK;
}

size_t
ig_curl_to_buf(char *p, size_t size, size_t n, void *buf)
{
    return ig_buf_add(buf, p, size * n) == IG_OK ? size * n : 0;
}

void
ig_curl_headers_free(struct curl_slist *h)
{
    struct curl_slist *t;

    for (t = h; t != NULL; t = t->next)
        if (t->data != NULL)
            sodium_memzero(t->data, strlen(t->data));
    curl_slist_free_all(h);
}
