/*
 * pdp_refusals.h - refused requests, counted in memory and written to the
 * audit log in aggregate, so that nobody can write the log by being
 * refused.
 *
 * A refusal (a bad bearer token, a failed login, a refused redemption or
 * outcome, a bad Slack signature) is counted under its key: kind, client
 * address, principal (when known) and reason. Every interval the counts
 * are written as one event per key - {"type":"<kind>.refused", "time",
 * "client", "principal"?: {"id","role"}, "reason", "count", "first",
 * "last"} - in one append, and forgotten; also at stop, so nothing
 * counted is lost. Noting costs a lock and a hash lookup, never a write:
 * HTTP threads note, the flusher thread (or the caller of
 * pdp_refusals_flush) writes.
 *
 * At most max_keys keys are held between writes. A refusal with a new key
 * when they are all taken is counted in its kind's overflow key, written
 * as client "*", reason "*", "overflow": true. So a flood from any number
 * of addresses adds at most max_keys + PDP_REFUSED_KINDS leaves per
 * interval, and memory stays fixed.
 *
 * All functions are thread safe.
 */
#ifndef PDP_REFUSALS_H
#define PDP_REFUSALS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"

enum pdp_refusal_kind {
    PDP_REFUSED_AUTH = 0, /* auth.refused: bearer token missing, unknown,
                             or not allowed there */
    PDP_REFUSED_LOGIN,    /* login.refused: approver sign-in */
    PDP_REFUSED_GRANT,    /* grant.refused: POST /v1/grants/redeem */
    PDP_REFUSED_OUTCOME,  /* outcome.refused: POST .../outcome */
    PDP_REFUSED_SLACK,    /* slack.refused: /slack/interactions signature */
    PDP_REFUSED_KINDS
};

/* Login throttling, counted for /metrics (pdp_login.c). */
enum pdp_throttle {
    PDP_THROTTLE_DELAYED = 0, /* a login slowed for its address */
    PDP_THROTTLE_DEVICE,      /* let past its id's backoff by a device */
    PDP_THROTTLES
};

/* Append n events (canonical JSON texts) durably. IG_OK, or an error:
   then the counts are kept for the next write. */
typedef enum ig_status (*pdp_refusals_write_fn)(void *ctx,
                                                const char *const *events,
                                                size_t n);
/* Seconds since the epoch (injectable for tests). */
typedef int64_t (*pdp_refusals_clock_fn)(void *ctx);

struct pdp_refusals_opts {
    int64_t interval; /* seconds between writes, >= 1 */
    size_t max_keys;  /* keys held between writes, >= 1 */
    pdp_refusals_write_fn write;
    void *write_ctx;
    pdp_refusals_clock_fn clock; /* NULL: ig_time_now */
    void *clock_ctx;
    /* A line for the operator when the last write at stop fails (the
       counts then go to the log instead). May be NULL. */
    void (*log)(const char *level, const char *event, json_t *fields);
};

struct pdp_refusals;

/* A table (no thread yet). NULL on out of memory. */
struct pdp_refusals *pdp_refusals_new(const struct pdp_refusals_opts *o);

/* Stop the flusher if running, write what is counted (on failure log it),
   free. NULL is fine. */
void pdp_refusals_free(struct pdp_refusals *t);

/* Start the flusher thread: it calls pdp_refusals_tick about once a
   second. IG_ERR_IO when the thread cannot start. */
enum ig_status pdp_refusals_start(struct pdp_refusals *t) IG_WUR;

/* Count one refusal. client and reason are required (truncated to fit);
   principal_id and principal_role may be NULL (unknown). */
void pdp_refusals_note(struct pdp_refusals *t, enum pdp_refusal_kind kind,
                       const char *client, const char *principal_id,
                       const char *principal_role, const char *reason);

/* Write when interval seconds passed (by the clock) since the last write,
   or the clock went back. 1 when it wrote something, 0 when it was not
   time or there was nothing, -1 when the write failed (counts kept). */
int pdp_refusals_tick(struct pdp_refusals *t);

/* Write every key now, in one append. IG_OK also when there was nothing
   to write; else the write's status (the counts are kept). */
enum ig_status pdp_refusals_flush(struct pdp_refusals *t) IG_WUR;

/* Count a login throttled. */
void pdp_refusals_throttled(struct pdp_refusals *t, enum pdp_throttle what);

/* Append the Prometheus text of the counters to out:
   intentgate_refusals_total{kind}, intentgate_refusal_events_total,
   intentgate_refusals_overflow_total, intentgate_login_delayed_total,
   intentgate_login_device_bypass_total. */
enum ig_status pdp_refusals_render(struct pdp_refusals *t,
                                   struct ig_buf *out) IG_WUR;

/* "auth.refused", ... */
const char *pdp_refusal_type(enum pdp_refusal_kind kind);

#endif
