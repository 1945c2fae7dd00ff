/*
 * appr_html_audit.h - the auditors' read-only pages of the audit log
 * (/ui/audit), as HTML text. Pure functions of a view built by
 * pdp/pdp_ui_audit.c, with the escaping, layout and CSP rules of
 * appr_html.h: every value from an event is escaped, invisible and bidi
 * characters are shown as [U+XXXX], no script, no inline style.
 *
 * An event in a view is {seq, event}: event the parsed object, or a string
 * (its raw text, when it does not parse). The leaf index shown is seq - 1.
 *
 * Element ids the tests rely on: #checkpoint (a <pre> with the latest
 * signed checkpoint and its cosignature lines), #witnesses (li.witness:
 * dd.witness-id, .witness-name, .witness-key-id, .witness-state,
 * .witness-time, .witness-last-size), #log-size, #export,
 * #export-checkpoints, #filter,
 * #type, #intent, #events (li.event, a.intent-link), #older, #empty
 * (events page); #intent-id, #principal, #tenant, #action, #resource,
 * #params, #context, #timeline (li.event) (intent page).
 *
 * Renderers append to b and return IG_OK, IG_ERR_LIMIT or IG_ERR_NOMEM.
 * Thread safe.
 */
#ifndef APPR_HTML_AUDIT_H
#define APPR_HTML_AUDIT_H

#include <jansson.h>

#include "appr_html.h"
#include "ig_buf.h"
#include "ig_error.h"

/* Where the pages live. */
#define APPR_AUDIT_PATH "/ui/audit"

/*
 * The events page. view:
 *   log_size         number of events in the log
 *   checkpoint       the latest signed checkpoint's note with the
 *                    witnesses' cosignature lines, or absent
 *   checkpoint_size  its tree size
 *   witnesses        [{id, name, key_id (8 hex digits), state ("cosigned",
 *                    "missing" or "invalid": its cosignature on that
 *                    checkpoint), time (its timestamp, or absent),
 *                    last_size (the largest size it cosigned; 0: none)}],
 *                    one per configured witness (absent: none)
 *   events           [{seq, event}], newest first
 *   type, intent_id  the filters applied (absent: none)
 *   older            the `before` of the next page (absent: last page)
 */
enum ig_status appr_html_audit_events(struct ig_buf *b,
                                      const struct appr_page *p,
                                      const json_t *view) IG_WUR;

/*
 * One intent's timeline. view: intent_id, and events [{seq, event}] in log
 * order (the first intent.received gives who asked what).
 */
enum ig_status appr_html_audit_intent(struct ig_buf *b,
                                      const struct appr_page *p,
                                      const json_t *view) IG_WUR;

#endif
