/*
 * pdp_shadow.h - a shadow policy bundle: `shadow_policy_dir` evaluated
 * after each live decision, off the reply path, and compared with it.
 *
 * The live path only enqueues (pdp_shadow_submit: a copy of the verdict
 * and a reference to the intent into a bounded ring; O(1), never blocks,
 * full -> dropped and counted). One thread at nice +10 evaluates each job
 * with its own pol_engine and its own in-memory quota counter
 * (core/ig_counter.h) at the job's time, so a shadow never reads or moves
 * the live quotas, and nothing it computes flows back into a decision.
 * Disagreements (the verdicts differ) are tallied for /metrics and
 * GET /v1/policy/shadow and written as policy.shadow_disagreed audit
 * events in batches.
 *
 * Everything here is a no-op when shadow_policy_dir is not configured.
 * The tally and the verdict reading below are exposed for the unit test
 * (tests/unit/test_shadow.c).
 */
#ifndef PDP_SHADOW_H
#define PDP_SHADOW_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_limits.h"
#include "ig_time.h"
#include "pol.h"

struct pdp_server;

/* ---- the server's side (pdp_shadow.c) ---- */

/*
 * Load shadow_policy_dir, run its tests and start the shadow thread.
 * IG_OK and nothing done without the key; IG_ERR_INVALID (err names the
 * failing case or the load error) when the bundle is refused. Call once,
 * before the HTTP daemon starts.
 */
enum ig_status pdp_shadow_start(struct pdp_server *s,
                                struct ig_err *err) IG_WUR;

/* Stop the thread promptly (jobs still queued are counted as dropped and
   their disagreement events not written), then free. Safe without one. */
void pdp_shadow_stop(struct pdp_server *s);

/*
 * SIGHUP: load and test shadow_policy_dir again, on a thread of its own
 * (pdp_shadow_load_start): this returns at once, and the shadow thread
 * takes the result when it is ready. A refused bundle keeps the old one
 * (policy.shadow_reload_refused event and metric); a good one replaces it
 * (policy.shadow_reloaded). SIGHUPs while a reload still runs its tests
 * are one more reload, started when it ends (log line
 * policy.shadow_reload_queued), so the last edit is always loaded.
 * Independent of the live reload, which it never holds.
 */
void pdp_shadow_reload(struct pdp_server *s);

/*
 * Queue a live decision for shadowing. intent: what the live policies
 * evaluated (a new reference is taken; it must not be modified after);
 * live: the policies' own decision on it, as pdp_policies_eval* returned
 * it, before the server's adjustments (NO_EXECUTOR,
 * APPROVAL_NOT_SUFFICIENT): its verdict and reasons are copied. at: the
 * decision's time (seconds), the clock the shadow's count() runs on.
 * Never blocks; any thread.
 */
void pdp_shadow_submit(struct pdp_server *s, json_t *intent,
                       const char *intent_id, const struct pol_decision *live,
                       const char *live_revision, int64_t at);

/* GET /v1/policy/shadow's body (docs/api.md), a new object; NULL when no
   shadow is configured or out of memory (*configured says which). */
json_t *pdp_shadow_summary(struct pdp_server *s, int *configured);

/* The intentgate_shadow_* families appended to out (nothing without a
   shadow). */
enum ig_status pdp_shadow_metrics(struct pdp_server *s,
                                  struct ig_buf *out) IG_WUR;

/* ---- a reload's load and test, on its own thread (pdp_shadow_load.c) ---- */

struct pdp_shadow_load;

/* Start loading and testing dir (settings: the [policy] section; both
   copied) on a detached thread. NULL when out of memory or threads. */
struct pdp_shadow_load *pdp_shadow_load_start(const char *dir,
                                              const json_t *settings);

/* 0 while it runs; 1 when done: *out the tested bundle (one reference,
   yours) or NULL with why (cap bytes) saying why not. Any thread. */
int pdp_shadow_load_poll(struct pdp_shadow_load *l, struct pol_bundle **out,
                         char *why, size_t cap);

/* The caller's end, done or not (a run still going frees itself when it
   ends). NULL is fine. */
void pdp_shadow_load_release(struct pdp_shadow_load *l);

/* ---- pieces (pdp_shadow_tally.c) ---- */

/* One disagreement of the newest IG_SHADOW_RECENT_MAX. */
struct pdp_shadow_recent {
    char intent_id[IG_UUID_STRLEN + 1];
    char action[IG_ACTION_MAX + 1];
    enum pol_verdict live, shadow;
    int64_t at;
};

/*
 * Counts by (action, live, shadow) with at most IG_SHADOW_ACTIONS_MAX
 * distinct actions (later ones are counted under "other"), the totals,
 * and the newest disagreements. Guarded by mu: written by the shadow
 * thread, read by /metrics and the summary. Embedded in struct
 * pdp_shadow; init/release.
 */
struct pdp_shadow_tally {
    pthread_mutex_t mu;
    size_t nactions; /* used rows of action/count, "other" not included */
    char action[IG_SHADOW_ACTIONS_MAX][IG_ACTION_MAX + 1];
    uint64_t count[IG_SHADOW_ACTIONS_MAX + 1][3][3]; /* last row: other */
    struct pdp_shadow_recent recent[IG_SHADOW_RECENT_MAX];
    size_t nrecent, recent_next; /* ring: next slot to write */
    atomic_uint_fast64_t evaluated, disagreed, dropped, errors;
    atomic_uint_fast64_t reloads, reloads_refused;
};

/* 0, or -1 when the mutex cannot be made. */
int pdp_shadow_tally_init(struct pdp_shadow_tally *t) IG_WUR;
void pdp_shadow_tally_release(struct pdp_shadow_tally *t);

/* Count one evaluation; a disagreement (live != shadow) also in the
   per-action counts and the recent list. Returns 1 when they disagreed. */
int pdp_shadow_tally_add(struct pdp_shadow_tally *t, const char *intent_id,
                         const char *action, enum pol_verdict live,
                         enum pol_verdict shadow, int64_t at);

/* The families of /metrics for t (Prometheus text, label values
   escaped). */
enum ig_status pdp_shadow_tally_render(struct pdp_shadow_tally *t,
                                       struct ig_buf *out) IG_WUR;

/* The counts of the summary: {"evaluated",...,"by":[...],"recent":[...]}
   (new object; NULL on out-of-memory). */
json_t *pdp_shadow_tally_json(struct pdp_shadow_tally *t);

/* Append a Prometheus label value of s, escaped (\\ \" \n), to out. */
enum ig_status pdp_shadow_label(struct ig_buf *out, const char *s) IG_WUR;

#endif
