/*
 * pdp_int.h - private to the PDP: the server struct, the per-request state,
 * and the functions the files below share.
 *
 * LAYERS
 * Every file calls only files of the layers below its own, and within
 * its layer only the files listed before it (scripts/check-cycles.py
 * proves there is no cycle). What a lower file must tell an upper one
 * goes through a callback set at start-up (store commit hooks,
 * srv->approval_changed, the refusal table's writer).
 *
 *   0 base       pdp_util.c (log, clock, canonical text, role names),
 *                pdp_addr.c, pdp_metrics.c, pdp_refusals.c, pdp_config*.c,
 *                pdp_dev.c (with the generated pdp_examples.c)
 *   1 services   pdp_audit.c, pdp_policy_rt.c, pdp_answer.c,
 *                pdp_decision.c (block a decision, sign a grant),
 *                pdp_shadow_tally.c, pdp_shadow_load.c, pdp_shadow.c (the
 *                shadow bundle; the live reload calls its reload through
 *                srv->shadow_reload),
 *                pdp_approval_rules.c, pdp_approval.c, pdp_approval_view.c,
 *                pdp_approval_sweep.c, pdp_slack.c, pdp_witness_submit.c,
 *                pdp_witness.c - no request in sight
 *   2 requests   pdp_client.c (who asks, refusals counted), pdp_reply.c
 *                (replies, auth, suspend/resume), pdp_wait.c, pdp_delay.c,
 *                pdp_login.c, pdp_ui_page.c
 *   3 endpoints  pdp_intake_steps.c, pdp_intake.c, pdp_query.c,
 *                pdp_redeem.c, pdp_approval_api.c, pdp_audit_api.c,
 *                pdp_slack_click.c, pdp_ui_audit.c, pdp_ui.c
 *   4 routing    pdp_route.c (the route table, libmicrohttpd's callbacks)
 *   5 wiring     pdp_server.c (start and stop, in order)
 */
#ifndef PDP_INT_H
#define PDP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

#include "ig_buf.h"
#include "ig_conns.h"
#include "ig_hash.h"
#include "ig_key.h"
#include "ig_limits.h"
#include "ig_time.h"
#include "pdp.h"
#include "pdp_addr.h"
#include "pdp_metrics.h"
#include "pdp_refusals.h"
#include "pol.h"
#include "store.h"

/* "<name>+<8 hex>+<base64 of 33 bytes>" and a NUL. */
#define PDP_AUDIT_VERIFIER_MAX (256 + 1 + 8 + 1 + 44 + 1)

struct pdp_waiters;   /* long-poll registry, pdp_wait.c */
struct pdp_approvals; /* votes, sweeper, sessions: pdp_approval*.c */
struct pdp_slack;     /* Slack notifier, pdp_slack.c */
struct pdp_delays;    /* requests answered later on purpose, pdp_delay.c */

struct pdp_server {
    const struct pdp_config *cfg;
    struct store *store;
    struct ig_signing_key *key;
    struct ig_keyring *keyring;
    struct MHD_Daemon *mhd;
    unsigned short port;

    pthread_mutex_t pol_mu; /* guards bundle (the pointer, not its use) */
    struct pol_bundle *bundle;
    pthread_key_t engine_key; /* this thread's struct pol_engine */

    struct pdp_metrics metrics;
    struct pdp_waiters *waiters;
    struct pdp_approvals *approvals;
    struct pdp_slack *slack; /* NULL when [slack] is not configured */
    /* Told after a vote, a resolution or an expiry is recorded
       (pdp_approval.c, pdp_approval_sweep.c): pdp_slack_changed, set by
       pdp_server.c before any thread starts, so that the approval code
       does not call the notifier that sits above it. NULL: nobody. */
    void (*approval_changed)(struct pdp_server *s, const char *intent_id);
    atomic_int inflight; /* requests routed and not yet answered */
    atomic_int stopping;
    struct ig_conns *conns; /* every connection, the request deadline */
    long max_connections;   /* the config's, lowered to fit the fd limit */

    /* Refused requests, counted for the audit log (pdp_refusals.c), and
       logins answered later on purpose (pdp_delay.c). */
    struct pdp_refusals *refusals;
    struct pdp_delays *delays;

    /* The audit log (pdp_audit.c): the checkpoint signing key (NULL: none
       signed), its verifier key text, the redaction HMAC key
       (sodium_malloc'd, NULL when none). */
    struct ig_signing_key *audit_key;
    char audit_verifier[PDP_AUDIT_VERIFIER_MAX];
    unsigned char *audit_hmac;

    /* The witness client (pdp_witness.c): NULL without [witness]. */
    struct pdp_witnesses *witnesses;

    /* The shadow bundle (pdp_shadow.c): NULL without shadow_policy_dir.
       Its reload, called by the live one's at SIGHUP (pdp_policy_rt.c,
       below it): pdp_shadow_reload, set by pdp_server.c before any thread
       starts. */
    struct pdp_shadow *shadow;
    void (*shadow_reload)(struct pdp_server *s);
};

#define PDP_REPLY_HEADERS 8

/* What a finished handler answers. body is a malloc'd string. */
struct pdp_reply {
    unsigned int status;
    char *body;
    size_t len;
    const char *content_type;
    const char *allow;                /* for 405 */
    char code[IG_ERROR_CODE_MAX + 1]; /* of an error reply ("" if none) */
    /* Extra headers (Set-Cookie, Location, Content-Security-Policy...):
       names are static strings, values malloc'd copies. */
    const char *hdr_name[PDP_REPLY_HEADERS];
    char *hdr_value[PDP_REPLY_HEADERS];
    size_t nhdr;
};

enum pdp_req_phase {
    PH_READING = 0, /* body still arriving */
    PH_WAITING,     /* suspended: store write or long poll */
    PH_READY        /* reply filled, queue it */
};

struct pdp_req {
    struct pdp_server *srv;
    struct MHD_Connection *conn;
    enum pdp_req_phase phase;
    struct ig_buf body;
    int too_large;
    int queued;  /* the reply went to MHD */
    int counted; /* in srv->inflight (pdp_route.c) */
    double t_start;
    struct pdp_reply reply;
    /* The operation in flight while suspended; freed with the request. */
    void *op;
    void (*op_free)(void *op);
    enum ig_status op_status; /* set by the store's completion callback */
    /* The path and method being routed (MHD's strings; only read while
       the request is routed, e.g. to audit an authentication failure). */
    const char *url, *method;
    /* Called on the MHD thread when a suspended request is resumed, to
       fill reply. */
    void (*on_resume)(struct pdp_req *r);
    /* The client's address (pdp_req_client), worked out once. */
    char client[PDP_ADDR_STRLEN];
};

/* ---- pdp_util.c (base layer) ---- */

/* Monotonic seconds (deadlines, durations). */
double pdp_mono_seconds(void);

/* The RFC 8785 text of v (compact, sorted keys, numbers as ECMAScript
   writes them: 42 not 42.0): every JSON the PDP writes. malloc'd; NULL on
   failure. */
char *pdp_json_text(const json_t *v);

/* Append a copy of string v to array a and return a; when that cannot be
   done (out of memory, or a already NULL) a is freed and NULL returned, so
   a loop `a = pdp_json_push(a, ...)` builds the whole list or none. */
json_t *pdp_json_push(json_t *a, const char *v);

/* "agent", "executor", "admin", "auditor" ("none" otherwise). */
const char *pdp_role_name(enum pdp_role role);

/* ---- pdp_client.c (request layer): who a request comes from ---- */

/* The client's address as text ("127.0.0.1"), or "unknown": the socket's
   peer, or behind a trusted proxy the X-Forwarded-For hop pdp_addr.h
   picks. The same everywhere a client is named (limiters, refusals,
   audit events). */
void pdp_req_client(struct pdp_req *r, char out[PDP_ADDR_STRLEN]);
/* The same as an address; -1 when the peer is not IPv4 or IPv6. */
int pdp_req_client_addr(struct pdp_req *r, struct pdp_addr *out);

/* Count a refusal of r (kind; p the principal when known; reason its
   code) for the aggregated *.refused audit events. Never writes. */
void pdp_req_refused(struct pdp_req *r, enum pdp_refusal_kind kind,
                     const struct pdp_principal *p, const char *reason);
/* The same after r's reply was filled: counted when it is a 4xx error
   reply, under its error code. */
void pdp_req_refused_reply(struct pdp_req *r, enum pdp_refusal_kind kind,
                           const struct pdp_principal *p);

/* ---- pdp_reply.c (request layer): answering a request ---- */

/* Error reply {"error":{"code","message"[,"field"]}}; counts a rejection. */
void pdp_reply_error(struct pdp_req *r, unsigned int status, const char *code,
                     const char *field, const char *fmt, ...) IG_PRINTF(5, 6);

/* JSON reply (canonical text); v is stolen. */
void pdp_reply_json(struct pdp_req *r, unsigned int status, json_t *v);

/* Add a header to the reply (value copied); -1 when full or out of
   memory. Call before or after filling the body. */
int pdp_reply_header(struct pdp_req *r, const char *name, const char *value);

/* Raw JSON text reply (copied). */
void pdp_reply_text(struct pdp_req *r, unsigned int status, const char *text,
                    size_t len, const char *content_type);

/* Suspend r until pdp_req_resume(); the reply is built by on_resume. */
void pdp_req_suspend(struct pdp_req *r, void (*on_resume)(struct pdp_req *r));

/* Resume a suspended request from any thread. */
void pdp_req_resume(struct pdp_req *r);

/*
 * Durable write from a request: suspends r and calls submit(store, op,
 * pdp_req_write_done, r). When the write finishes (or could not be queued)
 * r->op_status holds the status and on_resume runs on an MHD thread.
 */
void pdp_req_write(struct pdp_req *r, void (*on_resume)(struct pdp_req *r),
                   enum ig_status (*submit)(struct pdp_req *r));
/* The store's completion callback for pdp_req_write (writer thread). */
void pdp_req_write_done(void *ctx, enum ig_status st);

/* Parse the body as a strict JSON object; on failure replies 400 and
   returns NULL. */
json_t *pdp_req_json_object(struct pdp_req *r);

/* The authenticated principal, or NULL after replying 401/403. roles is a
   bit set of (1 << PDP_ROLE_*) that may call this endpoint. */
const struct pdp_principal *pdp_req_auth(struct pdp_req *r, unsigned roles);

/* ---- pdp_route.c (routing layer) ---- */

/* Start the MHD daemon on the configured address; sets srv->port. */
struct MHD_Daemon *pdp_route_start(struct pdp_server *srv, struct ig_err *err);

/* ---- endpoints ---- */
void pdp_post_intent(struct pdp_req *r);                  /* pdp_intake.c */
void pdp_get_intent(struct pdp_req *r, const char *id);   /* pdp_query.c */
void pdp_post_redeem(struct pdp_req *r);                  /* pdp_redeem.c */
void pdp_post_outcome(struct pdp_req *r, const char *id); /* pdp_redeem.c */
void pdp_post_executor_event(struct pdp_req *r);          /* pdp_exec_event.c */
/* pdp_approval_api.c: /v1/approver/login|logout and /v1/approvals...;
   returns 0 when url is not one of its paths. */
int pdp_approval_api_route(struct pdp_req *r, const char *url,
                           const char *method);
/* pdp_ui.c: everything under /ui (the approval web pages). */
void pdp_ui_route(struct pdp_req *r, const char *url, const char *method);
/* pdp_ui_audit.c: /ui/audit (the auditors' read-only pages), called by
   pdp_ui_route. */
void pdp_ui_audit_route(struct pdp_req *r, const char *url, const char *method);
/* pdp_audit_api.c: GET /v1/audit/...; returns 0 when url is not one of
   its paths. */
int pdp_audit_api_route(struct pdp_req *r, const char *url, const char *method);
/* pdp_slack_click.c: POST /slack/interactions. */
void pdp_post_slack_interactions(struct pdp_req *r);

/* ---- pdp_slack.c: the notifier (all no-ops when srv->slack is NULL) ---- */
enum ig_status pdp_slack_start(struct pdp_server *s, struct ig_err *err) IG_WUR;
void pdp_slack_stop(struct pdp_server *s);
/* Queue a chat.postMessage for a new escalation (after its commit). */
void pdp_slack_escalated(struct pdp_server *s, const char *intent_id);
/* Check a click's v0 signature (X-Slack-Request-Timestamp and
   X-Slack-Signature) over the raw body: IG_OK, IG_ERR_EXPIRED (stale),
   IG_ERR_CRYPTO / IG_ERR_INVALID (bad or malformed), IG_ERR_NOTFOUND. */
enum ig_status pdp_slack_verify(struct pdp_server *s, const char *ts,
                                const char *sig, const char *body, size_t len,
                                struct ig_err *err) IG_WUR;
/* Queue an update of the escalation's message after a vote, a resolution
   or an expiry (chat.update with who voted and the result). */
void pdp_slack_changed(struct pdp_server *s, const char *intent_id);

/* ---- pdp_audit.c: the audit log's keys and the events it adds ---- */

/* Load the checkpoint key and the HMAC key named in [audit]; log the
   verifier key, or a warning when checkpoints will not be signed. */
enum ig_status pdp_audit_start(struct pdp_server *s, struct ig_err *err) IG_WUR;
/* Wipe and free the keys (after the store is closed). */
void pdp_audit_stop(struct pdp_server *s);
/* Append one audit event and wait for its commit (steals ev; a failure
   is logged). */
void pdp_audit_append(struct pdp_server *s, json_t *ev);
/* config.loaded: the file and its SHA-256, principals by role,
   approvers, policy revision. */
void pdp_audit_config_loaded(struct pdp_server *s);
/* The intent as intent.received records it: binding itself (a new
   reference) without redact, else a copy whose params values at the
   configured pointers are "hmac-sha256:<hex>". NULL on out-of-memory. */
json_t *pdp_audit_redact_intent(struct pdp_server *s, json_t *binding);

/* ---- pdp_policy_rt.c: policies per thread ---- */
enum ig_status pdp_policies_init(struct pdp_server *s,
                                 struct ig_err *err) IG_WUR;
void pdp_policies_release(struct pdp_server *s);
/* Load the bundle in dir (settings: the [policy] section) and run its
   tests: *out (one reference) only when both pass; IG_ERR_INVALID with
   err naming the first failing case or the load error. Any thread. */
enum ig_status pdp_policies_load(const char *dir, const json_t *settings,
                                 struct pol_bundle **out,
                                 struct ig_err *err) IG_WUR;
/* Evaluate with this thread's engine; fills out and the revision used.
   0, or -1 when a count() the policies made failed in the store: out is
   then a BLOCK POLICY_ERROR that rests on the store's failure, not on the
   policies - the caller records nothing and answers 503
   STORE_UNAVAILABLE, so a passing outage is never a lasting refusal. */
int pdp_policies_eval(struct pdp_server *s, const json_t *intent,
                      struct pol_decision *out,
                      char revision[IG_HASH_STRLEN + 1]) IG_WUR;
/* pdp_policies_eval, and *trace (when trace is not NULL) = the explain
   trace of an evaluation the policies made as canonical JSON text
   (pol_trace_canon; malloc'd, the caller frees it), NULL when none ran
   (engine unavailable). Out of memory for the trace turns out into BLOCK
   POLICY_ERROR. The agent never sees it. */
int pdp_policies_eval_traced(struct pdp_server *s, const json_t *intent,
                             struct pol_decision *out,
                             char revision[IG_HASH_STRLEN + 1],
                             char **trace) IG_WUR;

/* ---- pdp_answer.c: the answer to POST /v1/intents ---- */

/* The fields of an intent's first answer; pointers borrowed, reasons
   stolen. grant/approval fields NULL when not ALLOW/ESCALATE. */
struct pdp_answer {
    const char *intent_id, *intent_hash, *decision, *message;
    const char *policy_revision, *decision_id;
    const char *binding; /* canonical text, binding_len bytes */
    size_t binding_len;
    const char *reasons; /* canonical text of the reasons array */
    const char *grant, *grant_expires_at;
    const char *approval_id, *approval_expires_at;
};

/* Append the answer's canonical text to out. IG_ERR_INVALID (a missing
   field), IG_ERR_NOMEM, IG_ERR_LIMIT. */
enum ig_status pdp_answer_text(const struct pdp_answer *a,
                               struct ig_buf *out) IG_WUR;

/* Rebuild, from what is recorded, the answer intent_id got when it was
   submitted (byte for byte: the same canonical text). *text malloc'd.
   IG_ERR_NOTFOUND, IG_ERR_IO, IG_ERR_NOMEM. */
enum ig_status pdp_answer_replay(struct pdp_server *s, const char *intent_id,
                                 char **text) IG_WUR;

/* ---- pdp_query.c: intent state ---- */
/* The state name of a stored intent record at time now. */
const char *pdp_intent_state(const json_t *rec, int64_t now);
/* 1 when the state can still change (worth a long poll). */
int pdp_state_is_open(const char *state);

/* ---- pdp_delay.c: requests answered later on purpose ---- */
enum ig_status pdp_delays_new(struct pdp_delays **out) IG_WUR;
/* Resume everyone still delayed, and free. */
void pdp_delays_free(struct pdp_delays *d);
/* Suspend r until due (monotonic seconds); on_resume then fills its
   reply on an HTTP thread. -1 when stopping or out of memory: r is not
   suspended, answer now. */
int pdp_delays_add(struct pdp_delays *d, struct pdp_req *r, double due,
                   void (*on_resume)(struct pdp_req *r));
/* Shutdown: resume everyone now; later adds are refused. */
void pdp_delays_resume_all(struct pdp_delays *d);

/* ---- pdp_wait.c: long-poll registry ---- */
enum ig_status pdp_waiters_new(struct pdp_server *s,
                               struct pdp_waiters **out) IG_WUR;
void pdp_waiters_free(struct pdp_waiters *w);
/* Register r (of principal who) to be woken at the next commit touching
   intent_id or at deadline (monotonic seconds); -1 on out-of-memory, -2
   when max_waiters or max_waiters_per_principal are reached, -3 once
   resume_all ran (stopping). Register BEFORE reading the state, then
   park: no commit in between is missed. */
int pdp_waiters_add(struct pdp_waiters *w, struct pdp_req *r,
                    const char *intent_id, const struct pdp_principal *who,
                    double deadline);
/* Waiters registered now. */
size_t pdp_waiters_parked(struct pdp_waiters *w);
/* Suspend r until woken or deadline (which replaces the one given to add):
   0. When it was woken already, unregister it and return -1: read the
   state again and answer now. */
int pdp_waiters_park(struct pdp_waiters *w, struct pdp_req *r, double deadline);
/* Remove r if still registered (request finished or cancelled). */
void pdp_waiters_remove(struct pdp_waiters *w, struct pdp_req *r);
/* Store commit hook: resume everyone waiting on intent_id (NULL: everyone,
   after the store may have missed a change). */
void pdp_waiters_notify(void *ctx, const char *intent_id);
/* Resume every waiter and take no new one (shutdown). */
void pdp_waiters_resume_all(struct pdp_waiters *w);

#endif
