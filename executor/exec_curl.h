/*
 * exec_curl.h - one libcurl easy handle per thread, reused, so calls to
 * the PDP and to upstreams keep their connections alive instead of paying
 * a TCP handshake each time. The handle is reset (options cleared, the
 * connection cache kept) on every borrow and cleaned up at thread exit.
 * Every handle shares one connection and DNS cache, so a thread that lives
 * for one request still reuses the connections of those before it.
 */
#ifndef EXEC_CURL_H
#define EXEC_CURL_H

#include <curl/curl.h>

/* This thread's handle for kind (0: PDP, 1: upstreams), reset; NULL on
   out-of-memory. Do not clean it up. */
CURL *exec_curl_handle(int kind);

/* Attach h to the process-wide connection cache (a handle made with
   curl_easy_init; exec_curl_handle's are attached already). */
void exec_curl_share(CURL *h);

#endif
