/*
 * appr_show.h - an agent's JSON as an approver reads it, on the web page
 * and in Slack alike: pretty-printed (2-space indent, keys sorted, numbers
 * as RFC 8785 writes them) and valid JSON with the same value, with every
 * character that would read as something else written as an escape:
 * controls and invisible or direction-changing characters
 * (ig_utf8_hidden) as \uXXXX (a surrogate pair past U+FFFF). The caller
 * escapes the result for its medium (HTML, Slack mrkdwn).
 *
 * Pure and thread safe.
 */
#ifndef APPR_SHOW_H
#define APPR_SHOW_H

#include <jansson.h>

#include "ig_buf.h"
#include "ig_error.h"

/* Also write '`' as \u0060, so the text can sit inside a Slack code
   block (or span) that no value can close. */
#define APPR_SHOW_NO_BACKTICK 1u

/*
 * Append v pretty-printed to b (NULL writes "null"). flags: 0 or
 * APPR_SHOW_NO_BACKTICK. IG_ERR_INVALID for a value with no JSON text
 * (NaN), IG_ERR_LIMIT past b's cap or deeper than 64 levels,
 * IG_ERR_NOMEM.
 */
enum ig_status appr_show_json(struct ig_buf *b, const json_t *v,
                              unsigned flags) IG_WUR;

/* Append n bytes of s as a quoted JSON string, escaped the same way. */
enum ig_status appr_show_string(struct ig_buf *b, const char *s, size_t n,
                                unsigned flags) IG_WUR;

#endif
