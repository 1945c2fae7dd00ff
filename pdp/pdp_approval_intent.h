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

/*
 * The texts of one recorded decision, as the store holds them (untrusted:
 * a database file may have been edited), turned into the intent its
 * policies saw: the binding (a JSON object); for a decision made at an
 * approval's quorum (approval_id not NULL) the binding plus approval,
 * from the requirements ({groups: [strings], quorum: number}) and the
 * votes (a JSON array of {approver, vote, comment, groups, voted_at,
 * intent_hash} with groups the stored text of a JSON array of strings;
 * NULL: none; when intent_hash is not NULL every vote must be for that
 * hash, as the PDP counts only those). Every
 * text is parsed as the store parses it (ig_json_parse, its limits) and
 * checked for its shape. IG_OK with *out (a new reference);
 * IG_ERR_INVALID or IG_ERR_LIMIT with err naming which text is wrong and
 * why; IG_ERR_NOMEM. Thread safe.
 */
enum ig_status
pdp_approval_intent_parse(const char *binding, size_t binding_len,
                          const char *intent_hash, const char *approval_id,
                          const char *requirements, size_t requirements_len,
                          const char *votes, size_t votes_len, json_t **out,
                          struct ig_err *err) IG_WUR;

#endif
