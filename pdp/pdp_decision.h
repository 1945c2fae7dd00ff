/*
 * pdp_decision.h - what the two places that decide an intent share: the
 * first decision (POST /v1/intents, pdp_intake_steps.c) and the decision
 * at quorum (pdp_approval.c). One routine blocks a decision with a reason
 * of ours, one signs the grant of an ALLOW: written once, they cannot
 * drift apart.
 */
#ifndef PDP_DECISION_H
#define PDP_DECISION_H

#include <jansson.h>
#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_time.h"
#include "pol.h"

struct pdp_server;
struct pdp_principal;

/*
 * Turn d into a BLOCK with reason first and message msg (both copied,
 * truncated to the decision's fields). The policies' own reasons are kept
 * after it (reason itself once), as many as fit; everything else of d
 * (groups, quorum, ttl) is cleared. Never fails.
 */
void pdp_decision_block(struct pol_decision *d, const char *reason,
                        const char *msg);

/*
 * The message of the server's own BLOCK NO_EXECUTOR (the policies allowed
 * an action no configured executor handles) into out: at submission
 * (at_quorum 0) or at an approval's quorum. The PDP writes it; a replay
 * (`policy replay`) tells the server's NO_EXECUTOR from a policy's own
 * BLOCK{reason = "NO_EXECUTOR"} by it - one text, so they cannot drift.
 */
void pdp_decision_no_executor_msg(char *out, size_t cap, const char *action,
                                  int at_quorum);

/* d's reasons as a new JSON array of strings; NULL on out-of-memory
   (never an array missing one). */
json_t *pdp_decision_reasons(const struct pol_decision *d);

/* What a grant is signed over; pointers borrowed. */
struct pdp_grant_in {
    const json_t *binding; /* principal, action and resource read here */
    const char *intent_id, *intent_hash, *decision_id, *policy_revision;
    const struct pdp_principal *executor; /* the audience */
    int64_t now;                          /* issued and valid from */
    /* The latest expiry allowed (the intent's own expires_at at the first
       decision), or 0: grant_ttl after now, unbounded (a grant issued on
       approval). */
    int64_t not_after;
};

/* A signed grant. token is the caller's (ig_buf_init it, capped at
   IG_TOKEN_MAX_BYTES, and release it). */
struct pdp_grant {
    char jti[IG_UUID_STRLEN + 1];
    int64_t expires_at;
    char expires[IG_TIME_STRLEN + 1]; /* expires_at, RFC 3339 */
    struct ig_buf *token;
};

/*
 * Sign the grant for in with the server's key: a new jti, expiry
 * grant_ttl after in->now (at most in->not_after). IG_ERR_IO when the
 * time cannot be written, else ig_grant_sign's status (logged as
 * grant.sign_failed); err gets a message fit for a 500 reply. Thread
 * safe.
 */
enum ig_status pdp_decision_sign_grant(struct pdp_server *s,
                                       const struct pdp_grant_in *in,
                                       struct pdp_grant *out,
                                       struct ig_err *err) IG_WUR;

#endif
