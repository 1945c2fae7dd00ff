/*
 * test_replay_row.c - the intent at an approval's quorum
 * (pdp/pdp_approval_intent.h), as the PDP builds it at the deciding vote
 * and as `intentgate policy replay` rebuilds it from the recorded texts:
 * the same object both ways; only APPROVE votes listed, in order; and
 * every hostile text (not JSON, over the size limit, the wrong shape, a
 * vote's groups that are not a list, a fractional or huge voted_at)
 * refused with an error that names it, nothing handed out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ig_json.h"
#include "ig_limits.h"
#include "pdp_approval_intent.h"

static const char BINDING[] =
    "{\"action\":\"payments.refund\",\"params\":{\"amount\":500},"
    "\"principal\":\"agent\"}";
static const char REQ[] = "{\"groups\":[\"finance\"],\"quorum\":2}";

static json_t *
parse(const char *s)
{
    json_t *v = NULL;

    assert_int_equal(ig_json_parse(s, strlen(s), &v, NULL), IG_OK);
    return v;
}

static const char *hash_wanted;  /* what row() checks the votes for */
static int64_t decided_at = 102; /* and when the decision was made */

/* A vote as the store's scan gives it (groups a text). */
#define VOTE(who, how, at)                                                     \
    "{\"approver\":\"" who "\",\"vote\":\"" how "\",\"comment\":\"\","         \
    "\"groups\":\"[\\\"finance\\\"]\",\"voted_at\":" #at "}"

static enum ig_status
row(const char *binding, const char *approval_id, const char *req,
    const char *votes, json_t **out, struct ig_err *err)
{
    struct pdp_approval_texts t;

    memset(&t, 0, sizeof(t));
    t.binding = binding;
    t.binding_len = binding != NULL ? strlen(binding) : 0;
    t.approval_id = approval_id;
    t.requirements = req;
    t.requirements_len = req != NULL ? strlen(req) : 0;
    t.votes = votes;
    t.votes_len = votes != NULL ? strlen(votes) : 0;
    t.intent_hash = hash_wanted;
    t.decided_at = decided_at;
    ig_err_clear(err);
    return pdp_approval_intent_parse(&t, out, err);
}

/* The PDP's way (the recorded votes and the deciding one) and the
   replay's way (all recorded, groups as stored texts) give the same
   intent. */
static void
test_pdp_and_replay_agree(void **state)
{
    json_t *b = parse(BINDING), *req = parse(REQ);
    json_t *recorded = parse("[{\"approver\":\"ann\",\"vote\":\"APPROVE\","
                             "\"comment\":\"ok\",\"groups\":[\"finance\"],"
                             "\"voted_at\":100}]");
    json_t *deciding = json_pack(
        "{s:s, s:s, s:s, s:[s], s:I}", "approver", "cat", "vote", "APPROVE",
        "comment", "", "groups", "finance", "voted_at", (json_int_t)102);
    json_t *pdp, *replay = NULL, *list;
    struct ig_err err;

    (void)state;
    /* voted_at read back from the store is an integer. */
    json_object_set_new(json_array_get(recorded, 0), "voted_at",
                        json_integer(100));
    pdp = pdp_approval_intent(b, "ap-1", req, recorded, deciding);
    assert_non_null(pdp);
    assert_int_equal(
        row(BINDING, "ap-1", REQ,
            "[{\"approver\" : \"ann\", \"vote\" : \"APPROVE\", \"comment\" :"
            " \"ok\", \"groups\" : \"[\\\"finance\\\"]\", \"voted_at\" : "
            "100}," VOTE("cat", "APPROVE", 102) "]",
            &replay, &err),
        IG_OK);
    assert_true(json_equal(pdp, replay));
    list = json_object_get(json_object_get(replay, "approval"), "approvals");
    assert_int_equal(json_array_size(list), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(list, 1), "approver")),
        "cat");
    assert_true(
        json_is_integer(json_object_get(json_array_get(list, 0), "at")));
    /* The binding itself is not changed by the builder. */
    assert_null(json_object_get(b, "approval"));
    json_decref(pdp);
    json_decref(replay);
    json_decref(b);
    json_decref(req);
    json_decref(recorded);
    json_decref(deciding);
}

/* The builder lists only APPROVE votes, in their order. */
static void
test_builder_lists_approvals_only(void **state)
{
    json_t *b = parse(BINDING), *req = parse(REQ), *in, *list;
    json_t *votes = json_pack(
        "[{s:s, s:s, s:s, s:[], s:I}, {s:s, s:s, s:s, s:[s], s:I}]", "approver",
        "bob", "vote", "DENY", "comment", "", "groups", "voted_at",
        (json_int_t)1, "approver", "ann", "vote", "APPROVE", "comment", "",
        "groups", "finance", "voted_at", (json_int_t)2);

    (void)state;
    in = pdp_approval_intent(b, "ap-1", req, votes, NULL);
    assert_non_null(in);
    list = json_object_get(json_object_get(in, "approval"), "approvals");
    assert_int_equal(json_array_size(list), 1);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(list, 0), "approver")),
        "ann");
    /* A vote without an approver: no intent at all, never a short list. */
    json_object_del(json_array_get(votes, 1), "approver");
    assert_null(pdp_approval_intent(b, "ap-1", req, votes, NULL));
    json_decref(in);
    json_decref(votes);
    json_decref(b);
    json_decref(req);
}

static void
test_first_decision_is_the_binding(void **state)
{
    json_t *in = NULL, *b = parse(BINDING);
    struct ig_err err;

    (void)state;
    assert_int_equal(row(BINDING, NULL, "garbage", "garbage", &in, &err),
                     IG_OK);
    assert_true(json_equal(in, b));
    json_decref(in);
    json_decref(b);
}

/* Each hostile row: refused, err names the text, nothing handed out. */
static void
test_hostile_rows_are_refused(void **state)
{
    static const struct {
        const char *binding, *req, *votes, *says;
    } bad[] = {
        {NULL, REQ, "[]", "no binding"},
        {"{not json", REQ, "[]", "binding is not JSON"},
        {"[1,2]", REQ, "[]", "binding is not an object"},
        {"{\"a\":1,\"a\":2}", REQ, "[]", "binding is not JSON"},
        {BINDING, NULL, "[]", "no approval's requirements"},
        {BINDING, "{\"groups\":\"finance\",\"quorum\":1}", "[]",
         "requirements are not"},
        {BINDING, "{\"groups\":[1],\"quorum\":1}", "[]", "requirements are"},
        {BINDING, "{\"groups\":[],\"quorum\":\"2\"}", "[]", "requirements"},
        {BINDING, REQ, "{}", "votes are not a list"},
        /* What the PDP leaves of an approved request (quorum 2 here). */
        {BINDING, REQ, "[" VOTE("a", "APPROVE", 102) "]",
         "1 votes for an approval of quorum 2"},
        {BINDING, REQ,
         "[" VOTE("a", "DENY", 100) "," VOTE("b", "APPROVE", 102) "]",
         "vote 1 of an approved request is not APPROVE"},
        {BINDING, REQ,
         "[" VOTE("a", "APPROVE", 103) "," VOTE("b", "APPROVE", 102) "]",
         "vote 1 was not cast by the decision"},
        {BINDING, REQ,
         "[" VOTE("a", "APPROVE", 100) "," VOTE("b", "APPROVE", 101) "]",
         "vote 2 was not cast by the decision"},
        {BINDING, "{\"groups\":[],\"quorum\":0}", "[]", "quorum is not 1 to"},
        {BINDING, "{\"groups\":[],\"quorum\":17}", "[]", "quorum is not 1 to"},
        {BINDING, "{\"groups\":[],\"quorum\":1.5}", "[]", "quorum is not 1 to"},
        {BINDING, "{\"groups\":[],\"quorum\":1e300}", "[]",
         "quorum is not 1 to"},
        {BINDING, REQ, "[1]", "vote 1 is not"},
        {BINDING, REQ,
         "[{\"approver\":\"a\",\"vote\":\"APPROVE\",\"comment\":\"\","
         "\"groups\":\"garbage\",\"voted_at\":1}]",
         "vote 1's groups"},
        {BINDING, REQ,
         "[{\"approver\":\"a\",\"vote\":\"APPROVE\",\"comment\":\"\","
         "\"groups\":\"[1]\",\"voted_at\":1}]",
         "vote 1's groups"},
        {BINDING, REQ,
         "[{\"approver\":\"a\",\"vote\":\"APPROVE\",\"comment\":\"\","
         "\"groups\":[\"x\"],\"voted_at\":1}]",
         "vote 1's groups"},
        {BINDING, REQ,
         "[{\"approver\":\"a\",\"vote\":\"APPROVE\",\"comment\":\"\","
         "\"groups\":\"[]\",\"voted_at\":1.5}]",
         "vote 1 is not"},
        {BINDING, REQ,
         "[{\"approver\":\"a\",\"vote\":\"APPROVE\",\"comment\":\"\","
         "\"groups\":\"[]\",\"voted_at\":1e300}]",
         "vote 1 is not"},
        {BINDING, REQ,
         "[{\"vote\":\"APPROVE\",\"comment\":\"\",\"groups\":\"[]\","
         "\"voted_at\":1}]",
         "vote 1 is not"},
    };
    struct ig_err err;
    json_t *in;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        in = (json_t *)1;
        assert_int_not_equal(
            row(bad[i].binding, "ap-1", bad[i].req, bad[i].votes, &in, &err),
            IG_OK);
        assert_null(in);
        if (strstr(err.msg, bad[i].says) == NULL)
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.msg,
                     bad[i].says);
    }
}

static void
test_huge_binding_is_refused(void **state)
{
    size_t n = IG_JSON_MAX_BYTES + 16;
    char *big = malloc(n + 1);
    struct ig_err err;
    json_t *in = NULL;

    (void)state;
    assert_non_null(big);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    assert_int_equal(row(big, NULL, NULL, NULL, &in, &err), IG_ERR_LIMIT);
    assert_null(in);
    assert_non_null(strstr(err.msg, "binding"));
    free(big);
}

/* A vote for another intent hash (the PDP never counts one): refused
   when the intent's hash is given. */
static void
test_vote_for_another_hash(void **state)
{
    static const char votes[] =
        "[{\"approver\":\"a\",\"vote\":\"APPROVE\",\"comment\":\"\","
        "\"groups\":\"[]\",\"voted_at\":102,\"intent_hash\":\"sha256:01\"}]";
    static const char req1[] = "{\"groups\":[\"finance\"],\"quorum\":1}";
    struct ig_err err;
    json_t *in = NULL;

    (void)state;
    hash_wanted = "sha256:02";
    assert_int_equal(row(BINDING, "ap-1", req1, votes, &in, &err),
                     IG_ERR_INVALID);
    assert_null(in);
    assert_non_null(strstr(err.msg, "another intent hash"));
    hash_wanted = "sha256:01";
    assert_int_equal(row(BINDING, "ap-1", req1, votes, &in, &err), IG_OK);
    json_decref(in);
    hash_wanted = NULL;
}

/* No votes recorded (NULL) for an approved request: refused, the PDP
   records the deciding vote with the decision. */
static void
test_no_votes_is_refused(void **state)
{
    struct ig_err err;
    json_t *in = NULL;

    (void)state;
    assert_int_equal(row(BINDING, "ap-1", REQ, NULL, &in, &err),
                     IG_ERR_INVALID);
    assert_null(in);
    assert_non_null(strstr(err.msg, "0 votes"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pdp_and_replay_agree),
        cmocka_unit_test(test_builder_lists_approvals_only),
        cmocka_unit_test(test_first_decision_is_the_binding),
        cmocka_unit_test(test_hostile_rows_are_refused),
        cmocka_unit_test(test_huge_binding_is_refused),
        cmocka_unit_test(test_no_votes_is_refused),
        cmocka_unit_test(test_vote_for_another_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
