/*
 * pdp_approval_intent.h - the intent the policies see when an approval
 * request reaches its quorum: the binding plus `approval` {approval_id,
 * groups, quorum, approvals: [{approver, groups, comment, at}]}. One
 * builder for the two places that need it: the PDP at the deciding vote
 * (pdp_approval.c) and `intentgate policy replay`, which rebuilds it from
 * the recorded rows (so a replay with an unchanged bundle decides as the
 * server did).
 */
#ifndef PDP_APPROVAL_INTENT_H
#define PDP_APPROVAL_INTENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

/*
 * A deep copy of binding with "approval" set: approval_id, the
 * requirements' groups and quorum as they are, and approvals: the APPROVE
 * votes of `votes` in their order, then `deciding` when not NULL (the
 * vote being counted, not recorded yet). A vote is an object {approver,
 * vote ("APPROVE"/"DENY"), comment, groups (array), voted_at (integer)};
 * the approval lists it as {approver, groups, comment, at}. NULL when out
 * of memory or when an APPROVE vote lacks an approver or groups, or the
 * requirements their groups or quorum: the policies never see a list
 * missing a vote. Thread safe; nothing is taken over.
 */
json_t *pdp_approval_intent(const json_t *binding, const char *approval_id,
                            const json_t *requirements, const json_t *votes,
                            const json_t *deciding);

/* The texts of one recorded decision, as the store holds them
   (untrusted: a database file may have been edited). */
struct pdp_approval_texts {
    const char *binding; /* the intent binding, JSON */
    size_t binding_len;
    /* For a decision made at an approval's quorum; approval_id NULL for
       an intent's first decision (the rest is then not read). */
    const char *approval_id;
    const char *requirements; /* {groups: [strings], quorum: 1..16} */
    size_t requirements_len;
    /* [{approver, vote, comment, groups, voted_at, intent_hash}] in the
       order cast, groups the stored text of a JSON array of strings;
       NULL: none. */
    const char *votes;
    size_t votes_len;
    const char *intent_hash; /* the intent's: every vote must be for it */
    int64_t decided_at;      /* when the quorum decision was made */
};

/*
 * The intent recorded texts t stand for, as its policies saw it: the
 * binding (a JSON object), and at an approval's quorum the binding plus
 * approval built by pdp_approval_intent(). Every text is parsed as the
 * store parses it (ig_json_parse, its limits) and checked for its shape,
 * and the votes for what the PDP guarantees of a request it approved:
 * each for this intent's hash, no DENY (one would have ended it), as many
 * APPROVE votes as the quorum, none cast after the decision and the last
 * one at it (the deciding vote is recorded with the decision). IG_OK with
 * *out (a new reference); IG_ERR_INVALID or IG_ERR_LIMIT with err naming
 * which text is wrong and why; IG_ERR_NOMEM. Thread safe.
 */
enum ig_status pdp_approval_intent_parse(const struct pdp_approval_texts *t,
                                         json_t **out,
                                         struct ig_err *err) IG_WUR;

#endif
