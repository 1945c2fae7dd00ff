/*
 * ig_curl.h - the one hardening applied to every outgoing libcurl request
 * of intentgate (the CLI to the PDP, the executor to the PDP and to
 * upstreams, the PDP to Slack). Each caller sets only what is its own
 * (URL, headers, body, write callback) after calling it, and never
 * loosens what it set.
 */
#ifndef IG_CURL_H
#define IG_CURL_H

#include <curl/curl.h>

#include "ig_error.h"

/*
 * On c (a fresh or curl_easy_reset handle):
 *   - http and https only, for the request and any redirect;
 *   - redirects not followed (a 3xx is the answer; credentials in a
 *     header never travel to the host a Location names);
 *   - no proxy, whatever http_proxy / https_proxy / all_proxy in the
 *     environment say (nothing in intentgate's configuration sets one), no
 *     .netrc;
 *   - TLS peer and host name verified, TLS 1.2 or later;
 *   - connect_ms to connect and total_ms for the whole request (both > 0);
 *   - no signals (safe in threads; timeouts do not use SIGALRM).
 * IG_ERR_INVALID for a timeout <= 0, IG_ERR_IO when libcurl refuses an
 * option (err names it): the caller must not perform the request then.
 * Thread safe for distinct handles.
 */
enum ig_status ig_curl_harden(CURL *c, long connect_ms, long total_ms,
                              struct ig_err *err) IG_WUR;

/*
 * A CURLOPT_WRITEFUNCTION that appends the response to the struct ig_buf
 * given as CURLOPT_WRITEDATA; past the buffer's cap it returns 0, which
 * ends the transfer with CURLE_WRITE_ERROR (never a silently cut body).
 */
size_t ig_curl_to_buf(char *p, size_t size, size_t n, void *buf);

/* Wipe every line of a header list (one carries a credential or token),
   then free it. NULL is fine. */
void ig_curl_headers_free(struct curl_slist *h);

#endif
