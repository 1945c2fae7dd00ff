/*
 * cli_http_int.h - the transports behind cli_http.h, private to cli/.
 *
 * cli_http.c checks the URL, builds the header lines and parses the JSON
 * answer; one exchange is carried by one of two transports:
 *
 *   - http:// by cli_http_plain.c: one HTTP/1.1 request over a TCP socket
 *     (Connection: close), its answer read by a strict parser. No library
 *     beyond libc, nothing to initialise: what keeps `intentgate hook`
 *     small enough to start in about a millisecond.
 *   - https:// by cli_http_curl.c (libcurl with core's hardening), created
 *     on the first https call only. The small `intentgate` binary links
 *     cli_http_notls.c instead, which refuses: cli/main.c hands every
 *     https hook to the full binary before it reads anything.
 *
 * Both transports fill the same fields and fail with the same messages:
 * IG_ERR_IO "cannot reach BASE: why", IG_ERR_LIMIT "the answer from BASE
 * is larger than N bytes". Not thread safe; one owner.
 */
#ifndef CLI_HTTP_INT_H
#define CLI_HTTP_INT_H

#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_limits.h"

/* Largest status line plus header block of an answer, in bytes. */
#define CLI_HTTP_HEADER_MAX IG_CLI_HTTP_HEADER_MAX

/* One exchange, as cli_http_call hands it to a transport. */
struct cli_http_xfer {
    const char *base;   /* the base URL, as given (for messages) */
    const char *url;    /* base + path */
    const char *method; /* "GET", "POST", ... */
    const char *body;   /* NULL: none (a POST then sends 0 bytes) */
    size_t len;
    const char *auth;    /* "Authorization: Bearer ..." or NULL */
    struct ig_buf *resp; /* receives the answer's body; its max is the cap */
    long status;         /* out: the HTTP status */
};

/* ---- cli_http_plain.c ---- */

/* A parsed http:// URL: where to connect and what to put in requests. */
struct cli_http_target {
    char host[256];      /* name or address, without brackets */
    char port[6];        /* decimal, 1..65535 */
    char authority[264]; /* the Host header's value */
    size_t prefix;       /* bytes of the URL before its path */
};

/*
 * Split url ("http://HOST[:PORT][/PATH]"; HOST a name, an IPv4 address or
 * a bracketed IPv6 address) into t. IG_ERR_INVALID, with err saying why,
 * for anything else: user info, a query, a fragment, a bad port.
 */
enum ig_status cli_http_target_parse(const char *url, struct cli_http_target *t,
                                     struct ig_err *err) IG_WUR;

/*
 * Carry x over a new TCP connection to url's host, within the connect
 * and total timeouts of cli_http.h. Errors as above; IG_ERR_NOMEM.
 */
enum ig_status cli_http_plain_call(struct cli_http_xfer *x,
                                   struct ig_err *err) IG_WUR;

/* What cli_http_parse_answer found. */
enum cli_http_parsed {
    CLI_HTTP_MORE = 0, /* not whole yet: read more */
    CLI_HTTP_DONE,     /* whole: *status and body are set */
    CLI_HTTP_BAD,      /* not an HTTP/1.x answer we accept; err says why */
    CLI_HTTP_BIG       /* its body is larger than body->max */
};

/*
 * Parse the len bytes of an answer read so far (eof: the peer closed
 * after them). Strict: a status line HTTP/1.0 or HTTP/1.1 with three
 * digits; header lines NAME: VALUE with a token name and no control
 * characters, no folding, at most CLI_HTTP_HEADER_MAX bytes in all;
 * framing by one Content-Length (digits), or Transfer-Encoding exactly
 * "chunked" (no extensions), or the end of the connection; both at once
 * and bytes after the end are BAD. Interim 1xx answers (but 101) are
 * skipped. On DONE the body (decoded) is in body, which is reset first.
 */
enum cli_http_parsed cli_http_parse_answer(const char *raw, size_t len, int eof,
                                           long *status, struct ig_buf *body,
                                           struct ig_err *err) IG_WUR;

/* ---- cli_http_curl.c or cli_http_notls.c ---- */

struct cli_http_tls;

/*
 * Carry x over https with *tls (created on the first call, freed with
 * cli_http_tls_free). Errors as above; the small binary's version
 * refuses every call with IG_ERR_INVALID.
 */
enum ig_status cli_http_tls_call(struct cli_http_tls **tls,
                                 struct cli_http_xfer *x,
                                 struct ig_err *err) IG_WUR;

/* Free tls. NULL is fine. */
void cli_http_tls_free(struct cli_http_tls *tls);

#endif
