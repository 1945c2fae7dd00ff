/*
 * exec_http.h - the `http` handler: one HTTP request to the URL pinned by
 * the registry entry, with the credential injected as a header.
 *
 * The agent supplies only parameter values: they fill declared {name}
 * path segments (percent-encoded), declared query fields and declared JSON
 * body fields. Method, scheme, host and port come from the registry. No
 * redirects are followed; only http and https; connect and total timeouts;
 * the response body is kept up to max_response_bytes. The credential is
 * copied into sodium_malloc'd memory for the call, and every copy we hand
 * libcurl is wiped after (libcurl's own transient send buffer is freed,
 * not wiped: a limit of using libcurl).
 */
#ifndef EXEC_HTTP_H
#define EXEC_HTTP_H

#include <jansson.h>
#include <stddef.h>

#include "ig_error.h"

/* What happened, as the PDP records it. */
enum exec_outcome {
    EXEC_OUTCOME_FAILED_BEFORE_DISPATCH = 0, /* zero: nothing was sent */
    EXEC_OUTCOME_COMPLETED,
    EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH,
    EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED
};

/* "COMPLETED" etc. Static. */
const char *exec_outcome_name(enum exec_outcome o);

/* What one handler run produced (http or exec). */
struct exec_result {
    enum exec_outcome outcome;
    long status;    /* HTTP status when COMPLETED */
    json_t *detail; /* the agent's "result": scrubbed, never the
                       credential */
    json_t *report; /* the outcome detail for the PDP and its audit log:
                       no upstream body, at most IG_OUTCOME_DETAIL_MAX_BYTES
                       canonical; NULL means the same as detail */
    int credential_reflected; /* the upstream echoed the credential */
};

/* Free detail and report. */
void exec_result_release(struct exec_result *r);

/*
 * Check that params make a request the registry allows (before the grant
 * is spent): every path placeholder's value is non-empty and not only
 * dots, and the URL fits. IG_ERR_INVALID / IG_ERR_LIMIT with err naming
 * the parameter.
 */
enum ig_status exec_http_check(const json_t *settings, const json_t *params,
                               struct ig_err *err) IG_WUR;

/*
 * Run the request described by settings (the registry entry's validated
 * "http" object) with params and the credential (may be NULL when the
 * entry has none). Fills *out (free detail with json_decref). Returns
 * IG_OK whenever an outcome was determined, IG_ERR_INVALID when the
 * request could not be built (then nothing was sent).
 */
enum ig_status exec_http_run(const json_t *settings, const json_t *params,
                             const unsigned char *cred, size_t cred_len,
                             struct exec_result *out,
                             struct ig_err *err) IG_WUR;

#endif
