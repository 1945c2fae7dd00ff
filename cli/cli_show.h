/*
 * cli_show.h - printing approvals for a human at a terminal.
 *
 * Everything shown comes from an agent's intent, so it is untrusted text:
 * control characters, Unicode bidi overrides and invisible characters
 * could make a terminal show something other than what is approved. Every
 * string is written with those escaped (\uXXXX; ig_utf8_hidden() says
 * which), params and context as JSON with numbers in their canonical form
 * (500, not 500.0). The agent's context is labelled as its claim, the
 * principal as authenticated.
 */
#ifndef CLI_SHOW_H
#define CLI_SHOW_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "ig_buf.h"
#include "ig_error.h"

/*
 * Append s (len bytes) as a quoted JSON string: '"' and '\\' escaped,
 * control, bidi and invisible characters as \uXXXX (surrogate pairs above
 * U+FFFF). The result is valid JSON with the same value. IG_ERR_LIMIT past
 * b's cap, IG_ERR_NOMEM.
 */
enum ig_status cli_json_quote(struct ig_buf *b, const char *s,
                              size_t len) IG_WUR;

/* Append s as plain text with the same characters escaped (and '\\'). */
enum ig_status cli_text_safe(struct ig_buf *b, const char *s,
                             size_t len) IG_WUR;

/*
 * Append v as indented JSON (two spaces a level, first line not indented,
 * later lines indented by `indent` spaces), strings through
 * cli_json_quote, numbers through ig_canon_number. IG_ERR_INVALID for a
 * value with no JSON form (NaN), IG_ERR_LIMIT, IG_ERR_NOMEM.
 */
enum ig_status cli_json_pretty(struct ig_buf *b, const json_t *v,
                               int indent) IG_WUR;

/* Print the summaries of GET /v1/approvals as a table on f. 0 or -1 (out
   of memory or a write error). */
int cli_show_list(FILE *f, const json_t *approvals);

/* Print the view of GET /v1/approvals/{id} on f. 0 or -1. */
int cli_show_approval(FILE *f, const json_t *view);

#endif
