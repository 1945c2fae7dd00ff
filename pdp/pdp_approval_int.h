/*
 * pdp_approval_int.h - private to the approval code: its state in the
 * server, and the rule helpers shared by votes and views.
 */
#ifndef PDP_APPROVAL_INT_H
#define PDP_APPROVAL_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "pdp_approval.h"

/* Sessions and failed logins are kept by the store (store.h), shared by
   the replicas; votes are serialised by store_vote_lock. */
struct pdp_approvals {
    unsigned char *device_key; /* sodium_malloc'd, APPR_DEVICE_KEY_BYTES */
    atomic_int hashing;        /* password checks running (bounded) */

    pthread_t sweeper;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, started;
};

/* The code a vote by a on the record rec would be refused with at now
   (before the intent hash is compared), or NULL when it may vote.
   NOT_ELIGIBLE (a NULL, or outside the groups) comes before any code
   that tells something about the request. */
const char *pdp_approval_refusal(const json_t *rec,
                                 const struct pdp_approver *a, int64_t now);

/* 1 when a is in one of the groups of requirements req ({groups:[…]}). */
int pdp_approval_in_groups(const json_t *req, const struct pdp_approver *a);

/* The number of APPROVE votes in a recorded votes array. */
int pdp_approval_count(const json_t *votes);

/* 1 when this intent is a's own request: its authenticated principal is
   a or an agent a runs, or its context.requested_by names a. */
int pdp_approval_self(const json_t *rec, const struct pdp_approver *a);

/* The policy revision of the record's latest decision ("" if none). */
const char *pdp_approval_revision(const json_t *rec);

#endif
