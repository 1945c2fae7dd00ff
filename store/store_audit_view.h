/*
 * store_audit_view.h - reading the audit log for the auditors' web
 * pages (/ui/audit): pages of events newest first with filters, the
 * events of one intent, and the checkpoints as JSONL for a download.
 *
 * Events are found by their canonical text (instr() on `"type":"X"` or
 * `"intent_id":"X"`), then parsed and checked at top level, so a filter
 * never matches a value nested in an agent's params. Each call borrows a
 * read connection and holds one read transaction; nothing waits for the
 * writer. Events are returned as {seq, event}: event the parsed object, or
 * the raw text as a string when it does not parse (an edited log). All
 * functions are thread safe. IG_ERR_IO on a store failure, IG_ERR_NOMEM.
 */
#ifndef STORE_AUDIT_VIEW_H
#define STORE_AUDIT_VIEW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "store.h"

/*
 * At most limit events with seq < before (before 0: from the newest),
 * newest first, of the given type and intent when those are not NULL.
 * At most IG_AUDIT_UI_SCAN_MAX rows are read per call. *next is the
 * `before` of the next (older) page, 0 when there is none. *out is a new
 * array (caller decrefs).
 */
enum ig_status store_audit_events(struct store *s, int64_t before, size_t limit,
                                  const char *type, const char *intent_id,
                                  json_t **out, int64_t *next) IG_WUR;

/*
 * Every event of one intent, oldest first: those naming it at top level,
 * and those naming only its approval (a vote refused on Slack).
 * IG_ERR_LIMIT past 10000 events.
 */
enum ig_status store_audit_intent_events(struct store *s, const char *intent_id,
                                         json_t **out) IG_WUR;

/*
 * Append the checkpoints of size <= max_size (0: all), smallest first,
 * one {"size":N,"note":"..."} line each (canonical JSON), to out; each
 * note with its witnesses' cosignature lines appended (store.h), as
 * `audit export --checkpoints-out` writes them.
 * IG_ERR_LIMIT at out's cap.
 */
enum ig_status store_audit_checkpoints(struct store *s, uint64_t max_size,
                                       struct ig_buf *out) IG_WUR;

/* Sort an array of {seq, ...} by seq, in place (both backends' views).
   IG_ERR_NOMEM. */
enum ig_status store_view_sort_by_seq(json_t *arr) IG_WUR;

#endif
