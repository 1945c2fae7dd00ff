/*
 * cli_http.h - the CLI's small JSON client for the PDP's HTTP API: http://
 * over a plain socket, https:// with libcurl (cli_http_int.h).
 *
 * One struct cli_http per command run: a base URL ("http://host:port", no
 * path), an optional bearer token, fixed timeouts, no redirects, http and
 * https only. A call sends at most one JSON body and reads a response of at
 * most CLI_HTTP_MAX_RESPONSE bytes, parsed with the strict reader
 * (ig_json_parse). Not thread safe; one owner.
 */
#ifndef CLI_HTTP_H
#define CLI_HTTP_H

#include <jansson.h>
#include <stddef.h>

#include "ig_error.h"
#include "ig_limits.h"

#define CLI_HTTP_MAX_RESPONSE IG_JSON_MAX_BYTES
#define CLI_HTTP_CONNECT_TIMEOUT_MS IG_CLI_HTTP_CONNECT_TIMEOUT_MS
#define CLI_HTTP_TIMEOUT_MS IG_CLI_HTTP_TIMEOUT_MS
#define CLI_HTTP_MAX_URL 2048

struct cli_http;

struct cli_http_reply {
    long status;  /* HTTP status */
    json_t *body; /* parsed body (new reference), NULL when it was empty */
};

/*
 * A client for base_url (must start with http:// or https://; trailing
 * slashes are dropped; an http:// URL must be HOST[:PORT][/PATH], without
 * user, query or escapes). *out is freed with cli_http_free().
 * IG_ERR_INVALID for a bad URL, IG_ERR_NOMEM. Nothing is initialised
 * here: libcurl starts on the first https call (IG_ERR_IO if it cannot).
 */
enum ig_status cli_http_new(const char *base_url, struct cli_http **out,
                            struct ig_err *err) IG_WUR;

/* Wipe the bearer token and free everything. NULL is fine. */
void cli_http_free(struct cli_http *h);

/*
 * Send "Authorization: Bearer TOKEN" from now on (token copied into
 * sodium_malloc'd memory; NULL stops sending it). IG_ERR_INVALID for a
 * token with characters a header cannot carry, IG_ERR_NOMEM.
 */
enum ig_status cli_http_set_bearer(struct cli_http *h,
                                   const char *token) IG_WUR;

/*
 * METHOD base_url+path (path starts with '/', already URL-safe) with len
 * bytes of body as application/json (body NULL: none). On IG_OK out holds
 * the status and the parsed body, whatever the status; release it with
 * cli_http_reply_release(). Errors (out->body NULL): IG_ERR_IO when the
 * server cannot be reached or the exchange fails or times out,
 * IG_ERR_LIMIT for a response over the cap, IG_ERR_INVALID for a response
 * that is not JSON; err names the URL and the reason. The response bytes
 * are wiped before they are freed (they may hold a session token).
 */
enum ig_status cli_http_call(struct cli_http *h, const char *method,
                             const char *path, const char *body, size_t len,
                             struct cli_http_reply *out,
                             struct ig_err *err) IG_WUR;

/* The same with a JSON value as the body (NULL: none), sent compact. */
enum ig_status cli_http_call_json(struct cli_http *h, const char *method,
                                  const char *path, const json_t *body,
                                  struct cli_http_reply *out,
                                  struct ig_err *err) IG_WUR;

/* Drop out's body. */
void cli_http_reply_release(struct cli_http_reply *out);

/*
 * The code and message of an error body {"error":{"code","message"}}: code
 * is NULL when the body has none; message is never NULL ("" when absent).
 * The strings belong to body.
 */
const char *cli_http_error_code(const json_t *body, const char **message);

#endif
