/*
 * ig_curl.c - libcurl hardening (see ig_curl.h).
 *
 * Every option is set and its result checked: a libcurl too old to know
 * one (CURLOPT_PROTOCOLS_STR needs 7.85) refuses the request instead of
 * sending it unprotected.
 */
#include "ig_curl.h"

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
