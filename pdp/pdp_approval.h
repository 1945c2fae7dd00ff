/*
 * pdp_approval.h - escalations decided by humans: the one place that
 * applies the voting rules, whatever the channel (web page, Slack, API).
 *
 * An ESCALATE decision opens an approval request (groups, quorum, expiry).
 * An approver outside its groups can neither read nor vote on it: for
 * them it does not exist (APPROVAL_NOT_FOUND). A vote counts only when:
 * the request exists and is still PENDING (not resolved, not expired);
 * the approver is in one of the required groups; it is not the
 * approver's own request; the approver has not voted on it before; and
 * the vote names the exact intent_hash the approver was shown.
 *
 * Own request (SELF_APPROVAL) is decided on what the PDP established: the
 * principal whose token submitted the intent is the approver's id, or one
 * of the agents the config says the approver runs ([approver] agents).
 * The agent's claims (its context, e.g. requested_by) are never trusted
 * to allow anything: a requested_by that names the approver (id, name or
 * Slack user, any ASCII case) only adds a refusal. A counted DENY resolves the
 * request to DENIED and the intent to BLOCK APPROVAL_DENIED. The APPROVE that
 * reaches the quorum resolves it to APPROVED and re-evaluates the policies with
 * the approvals visible to them (intent.approval); only an ALLOW then issues a
 * grant (expiry counted from the approval). Expiry resolves it to EXPIRED and
 * the intent to BLOCK APPROVAL_EXPIRED (a sweeper thread records it).
 * Every vote, refusal and resolution is an audit event; failed logins
 * are counted into aggregated login.refused events (pdp_refusals.h).
 *
 * All functions are thread safe; votes are serialised by one mutex.
 */
#ifndef PDP_APPROVAL_H
#define PDP_APPROVAL_H

#include <jansson.h>

#include "ig_error.h"
#include "pdp_config.h"

struct pdp_server;
struct pdp_req;

/*
 * The view of one approval for approver `a`:
 *   approval_id, intent_id, intent_hash,
 *   status      "PENDING" | "APPROVED" | "DENIED" | "EXPIRED",
 *   requirements {groups:[…], quorum:N}, created_at, expires_at (RFC 3339),
 *   intent      the binding as hashed (action, resource, params, context,
 *               principal, tenant, created_at, expires_at, …),
 *   principal, tenant  established by the PDP (the agent's token),
 *   operators   the approvers the config says run that agent ([approver]
 *               agents; they may not approve it),
 *   claimed_by_agent  the intent's context: what the agent says about
 *               itself (requested_by, ticket…), not verified by anyone,
 *   decision    {decision:"ESCALATE", reasons:[…], message,
 *                policy_revision, decided_at},
 *   votes       [{approver, name, vote:"APPROVE"|"DENY", comment, channel,
 *                 at}],
 *   approvals   number of APPROVE votes,
 *   resolution  {result, resolved_at, decision, reasons} once resolved,
 *   can_vote    true when a may vote now, else
 *   cannot_vote the refusal code a vote would get (SELF_APPROVAL,
 *               ALREADY_VOTED, APPROVAL_EXPIRED, APPROVAL_RESOLVED).
 * IG_ERR_NOTFOUND when there is no such approval, a is NULL, or a is in
 * none of its groups (the same answer: its existence does not leak);
 * IG_ERR_IO, IG_ERR_NOMEM.
 */
enum ig_status pdp_approval_get(struct pdp_server *s, const char *approval_id,
                                const struct pdp_approver *a,
                                json_t **out) IG_WUR;

/*
 * Add the explain traces to view (pdp_approval_get's): decision.trace from
 * the intent.decided that asked for this approval, resolution.trace from
 * the one at quorum, read from the audit log (a scan of its events: the
 * web page of one request only, never the list). A trace the log does not
 * hold yet (PostgreSQL sequences events after the reply) or cannot be read
 * is left out (the page then shows none); nothing else depends on it.
 */
void pdp_approval_add_traces(struct pdp_server *s, json_t *view);

/* The same view without an approver's fields or read check, by intent
   id: what the Slack notifier posts to the channel the operator chose.
   Never for an answer to an approver. */
enum ig_status pdp_approval_notice_view(struct pdp_server *s,
                                        const char *intent_id,
                                        json_t **out) IG_WUR;

/*
 * PENDING approvals whose groups include one of a's, newest first: an
 * array of {approval_id, intent_id, action, resource, principal, tenant,
 * created_at, expires_at, requirements, approvals, can_vote}. IG_ERR_IO.
 */
enum ig_status pdp_approval_list(struct pdp_server *s,
                                 const struct pdp_approver *a,
                                 json_t **out) IG_WUR;

struct pdp_vote {
    const char *approval_id;
    const struct pdp_approver *approver;
    int approve;             /* 1 approve, 0 deny */
    const char *intent_hash; /* the hash the approver was shown */
    const char *comment;     /* NULL or up to 500 characters */
    const char *channel;     /* "web", "slack" or "api" */
};

struct pdp_vote_result {
    /* NULL when the vote counted; else the refusal code:
       APPROVAL_NOT_FOUND 404 (also for an approver outside the groups,
       except on Slack: NOT_ELIGIBLE 403), SELF_APPROVAL 403,
       ALREADY_VOTED 409, INTENT_HASH_MISMATCH 409, APPROVAL_RESOLVED 409,
       APPROVAL_EXPIRED 410, INVALID_VOTE 400, STORE_UNAVAILABLE 503. */
    const char *code;
    unsigned int http_status; /* 200 when counted */
    char message[256];        /* one line for a human */
    const char *status;   /* approval status after: PENDING, APPROVED, ... */
    const char *decision; /* after resolution: "ALLOW" or "BLOCK"; else
                             NULL */
    int approvals, quorum;
    char intent_id[40];
};

/* Apply one vote (blocks until it is durable). Never fails silently:
   out->code says why a vote did not count, and the refusal is audited. */
void pdp_approval_vote(struct pdp_server *s, const struct pdp_vote *v,
                       struct pdp_vote_result *out);

/* The approval machinery (pdp_approval_sweep.c): start makes the device
   key and starts the expiry sweeper, a thread that resolves expired
   requests; stop joins it and frees them. (Sessions and failed logins are
   kept by the store, shared by the replicas.) */
enum ig_status pdp_approval_start(struct pdp_server *s,
                                  struct ig_err *err) IG_WUR;
void pdp_approval_stop(struct pdp_server *s);

/* ---- approver logins (pdp_login.c), shared by /ui and the API ---- */

#define PDP_SESSION_ID_LEN 47 /* "igs_" + 43 base64url characters */
#define PDP_CSRF_LEN 43

#define PDP_DEVICE_LEN 79 /* "igd_" + 75: APPR_DEVICE_LEN */

struct pdp_login {
    const char *code; /* NULL on success; LOGIN_FAILED 401,
                         LOGIN_RATE_LIMITED 429, STORE_UNAVAILABLE 503 */
    unsigned int http_status;
    int64_t retry_after; /* 429: seconds to wait (Retry-After) */
    const char *id;      /* the approver id tried ("" when none) */
    const struct pdp_approver *approver;
    char session[PDP_SESSION_ID_LEN + 1];
    char csrf[PDP_CSRF_LEN + 1];
    int64_t expires_at; /* absolute session end */
    /* A new device token for this client: it lets the client's later
       sign-ins as this approver past failures others cause for the id. */
    char device[PDP_DEVICE_LEN + 1];
};

/* Fills r's reply from the outcome of a login (out is wiped after). */
typedef void (*pdp_login_done_fn)(struct pdp_req *r,
                                  const struct pdp_login *out);

/*
 * Check approver id and password (argon2id) for request r, from r's
 * client address, and on success open a session (pdp_login.c has the
 * rules). device is the device token the client holds, or NULL. id and
 * password are copied (the copy of the password is wiped). done fills
 * the reply: now, or - when the client's address is being slowed - from
 * a resumed r on an HTTP thread, r's connection suspended meanwhile.
 * Every failure is counted for login.refused.
 */
void pdp_approver_login(struct pdp_req *r, const char *id, const char *password,
                        const char *device, pdp_login_done_fn done);

/* Add Retry-After to r's reply when out asks the client to wait. */
void pdp_login_retry_after(struct pdp_req *r, const struct pdp_login *out);

/* The approver of a live session (touching its idle timer), or NULL.
   csrf (may be NULL) receives the session's CSRF token. *unavailable (may
   be NULL) is 1 when NULL means the store could not be read (logged): the
   caller answers 503 STORE_UNAVAILABLE, not "sign in again". Sessions are
   in the store: one made on any replica is good on all. */
const struct pdp_approver *pdp_approver_session(struct pdp_server *s,
                                                const char *session,
                                                char csrf[PDP_CSRF_LEN + 1],
                                                int *unavailable);

/* End a session (logout), on every replica. */
void pdp_approver_logout(struct pdp_server *s, const char *session);

#endif
