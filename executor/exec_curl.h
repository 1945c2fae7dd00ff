/*
 * exec_curl.h - one libcurl easy handle per thread, reused, so calls to
 * the PDP and to upstreams keep their connections alive instead of paying
 * a TCP handshake each time. The handle is reset (options cleared, the
 * connection cache kept) on every borrow and cleaned up at thread exit.
 */
#ifndef EXEC_CURL_H
#define EXEC_CURL_H

#include <curl/curl.h>

/* This thread's handle for kind (0: PDP, 1: upstreams), reset; NULL on
   out-of-memory. Do not clean it up. */
CURL *exec_curl_handle(int kind);

#endif
