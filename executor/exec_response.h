/*
 * exec_response.h - what a finished upstream HTTP call becomes: the
 * agent's `result` and the outcome detail the PDP records (and so the
 * audit log keeps forever).
 *
 * Registry "http" settings choose what the agent gets back:
 *   "response": "status"  (the default) status, content type, size,
 *                         SHA-256, truncated, credential_reflected;
 *               "fields"  the same plus the values at named JSON pointers
 *                         into a JSON body: "response_fields" maps 1 to
 *                         IG_EXEC_RESPONSE_FIELDS_MAX names to pointers;
 *               "body"    the same plus the scrubbed body.
 *
 * The agent's result on a COMPLETED call:
 *   {"status": 201, "content_type": "application/json" | null,
 *    "size": 1234, "sha256": "<hex>", "truncated": false,
 *    "credential_reflected": false,
 *    "fields": {"name": value, ...}, "fields_missing": ["name", ...],
 *    "fields_error": "..."                     (fields mode; the error only
 *                                              when the body is not usable)
 *    "body": "<text>" | "body_b64url": "<bytes>"          (body mode)}
 * size counts every byte the upstream sent; truncated is size > kept.
 * The kept bytes are scrubbed (exec_scrub_bytes; when truncated, with
 * EXEC_SCRUB_CUT, and then an incomplete UTF-8 character at the cut is
 * dropped). In fields and body modes a body that parses as JSON is also
 * scrubbed after decoding (exec_scrub_json); in body mode, when that
 * removes anything more, the body becomes the canonical JSON of the
 * scrubbed document. sha256 is the digest of exactly the bytes of the
 * final body (the same in every mode unless that JSON rewrite happened).
 * content_type is scrubbed too, control and non-ASCII bytes become '?',
 * and it is cut at IG_EXEC_RESPONSE_CONTENT_TYPE_MAX bytes.
 * credential_reflected is true when anything was removed anywhere.
 *
 * The outcome detail is the same object without body / body_b64url; a
 * field value whose canonical JSON is larger than
 * IG_EXEC_RESPONSE_FIELD_MAX_BYTES is {"omitted": "larger than N bytes"};
 * while the detail's canonical form is over IG_OUTCOME_DETAIL_MAX_BYTES
 * the largest field left is dropped and "fields_omitted": true added.
 * Without field values the detail always fits.
 */
#ifndef EXEC_RESPONSE_H
#define EXEC_RESPONSE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "exec_scrub.h"
#include "ig_error.h"

/*
 * Check the "response" and "response_fields" members of an action's http
 * settings object and fill in the default ("response": "status"). For
 * exec_settings.c at registry load; "response" and "response_fields" must
 * also be among the keys load_http allows. err->msg names the member,
 * e.g. `http.response_fields.id: must be a JSON pointer ...`, ready for
 * exec_reg_fail(c, NULL, "%s", err->msg). IG_ERR_INVALID, IG_ERR_NOMEM (the
 * default could not be stored). Not thread safe for one object.
 */
enum ig_status exec_response_settings_check(json_t *http,
                                            struct ig_err *err) IG_WUR;

/* A finished call, as exec_http.c has it once curl_easy_perform is done. */
struct exec_response_in {
    const json_t *settings;         /* validated "http" settings */
    long status;                    /* CURLINFO_RESPONSE_CODE */
    const char *content_type;       /* CURLINFO_CONTENT_TYPE, or NULL */
    const char *body;               /* the kept bytes (NULL when none) */
    size_t kept;                    /* <= max_response_bytes */
    uint64_t size;                  /* bytes received in all, >= kept */
    const struct exec_scrub *scrub; /* NULL: the action has no credential */
};

/*
 * Build both objects for in (see above). On IG_OK *result and *detail are
 * new references the caller owns (json_decref). On failure both are NULL:
 * IG_ERR_NOMEM, or IG_ERR_INVALID for a kept > size or a NULL body with
 * kept > 0. Reads in only; thread safe.
 *
 * The call in exec_http.c, after curl_easy_perform returned CURLE_OK
 * (sink.total counts every byte on_data was offered, kept or not; scrub
 * is built from the credential and "credential_prefix" with
 * exec_scrub_new before the call, NULL without a credential):
 *
 *     struct exec_response_in in = {settings, status, content_type,
 *                                    sink.body.data, sink.body.len,
 *                                    sink.total, scrub};
 *     st = exec_response_build(&in, &out->result, &out->detail, err);
 */
enum ig_status exec_response_build(const struct exec_response_in *in,
                                   json_t **result, json_t **detail,
                                   struct ig_err *err) IG_WUR;

#endif
