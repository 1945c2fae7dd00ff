/*
 * pdp_approval_intent.c - the intent the policies see at an approval's
 * quorum (pdp_approval_intent.h): built once here for the PDP's deciding
 * vote and for a replay of the recorded rows, so the two cannot drift.
 *
 * The parser of recorded texts checks each shape it relies on before
 * building anything, so a hostile row gives one clear error, never a
 * partly built intent: the binding an object; the requirements an object
 * with an array of strings and a number; the votes an array of objects
 * with string approver, vote and comment, groups a text holding an array
 * of strings, and voted_at an integral number of seconds.
 */
#include "pdp_approval_intent.h"

#include <math.h>
#include <string.h>

#include "ig_json.h"
#include "ig_limits.h"

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Append vote v to list as {approver, groups, comment, at}: 0 or -1. */
static int
add_approval(json_t *list, const json_t *v)
{
    const char *comment = jstr(v, "comment");

    /* json_array_append_new steals; "O" adds a reference. A vote without
       an approver or groups fails the pack. */
    return json_array_append_new(
        list, json_pack("{s:s, s:O, s:s, s:I}", "approver", jstr(v, "approver"),
                        "groups", json_object_get(v, "groups"), "comment",
                        comment != NULL ? comment : "", "at",
                        json_integer_value(json_object_get(v, "voted_at"))));
}

static int
is_approve(const json_t *v)
{
    const char *vote = jstr(v, "vote");

    return vote != NULL && strcmp(vote, "APPROVE") == 0;
}

json_t *
pdp_approval_intent(const json_t *binding, const char *approval_id,
                    const json_t *requirements, const json_t *votes,
                    const json_t *deciding)
{
    json_t *in = json_deep_copy(binding), *list = json_array(), *x;
    size_t i;

    if (in == NULL || list == NULL || approval_id == NULL)
        goto fail;
    json_array_foreach(votes, i, x)
    {
        if (is_approve(x) && add_approval(list, x) != 0)
            goto fail;
    }
    if (deciding != NULL && is_approve(deciding) &&
        add_approval(list, deciding) != 0)
        goto fail;
    /* json_object_set_new steals the approval object (NULL fails it); "O"
       adds references, "o" steals list. */
    if (json_object_set_new(
            in, "approval",
            json_pack("{s:s, s:O, s:O, s:o}", "approval_id", approval_id,
                      "groups", json_object_get(requirements, "groups"),
                      "quorum", json_object_get(requirements, "quorum"),
                      "approvals", list)) == 0)
        return in;
    list = NULL; /* stolen by the failed pack */
fail:
    json_decref(in);
    json_decref(list);
    return NULL;
}

/* ---- recorded texts ---- */

static enum ig_status
parse(const char *what, const char *text, size_t len, json_t **out,
      struct ig_err *err)
{
    struct ig_err perr;
    enum ig_status st;

    *out = NULL;
    if (text == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "no %s", what);
    ig_err_clear(&perr);
    st = ig_json_parse(text, len, out, &perr);
    if (st == IG_ERR_NOMEM)
        return ig_err_set(err, st, "out of memory");
    if (st != IG_OK)
        return ig_err_set(err, st, "the %s is not JSON: %s", what, perr.msg);
    return IG_OK;
}

/* 1 when v is an array of strings. */
static int
strings(const json_t *v)
{
    const json_t *x;
    size_t i;

    if (!json_is_array(v))
        return 0;
    json_array_foreach(v, i, x)
    {
        if (!json_is_string(x))
            return 0;
    }
    return 1;
}

/* One recorded vote, checked (for intent_hash when not NULL), with its
   groups parsed and voted_at an integer: a new object in *out. */
static enum ig_status
vote(const json_t *v, size_t i, const char *intent_hash, json_t **out,
     struct ig_err *err)
{
    const json_t *g = json_object_get(v, "groups"), *at;
    json_t *groups = NULL;
    double t;

    *out = NULL;
    at = json_object_get(v, "voted_at");
    t = json_number_value(at);
    if (!json_is_object(v) || jstr(v, "approver") == NULL ||
        jstr(v, "vote") == NULL || jstr(v, "comment") == NULL ||
        !json_is_number(at) || t != floor(t) || fabs(t) > 9007199254740992.0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "vote %zu is not {approver, vote, comment, groups, "
                          "voted_at}",
                          i + 1);
    if (intent_hash != NULL &&
        (jstr(v, "intent_hash") == NULL ||
         strcmp(jstr(v, "intent_hash"), intent_hash) != 0))
        return ig_err_set(err, IG_ERR_INVALID,
                          "vote %zu is for another intent hash", i + 1);
    if (!json_is_string(g) ||
        parse("vote's groups", json_string_value(g), json_string_length(g),
              &groups, err) != IG_OK ||
        !strings(groups)) {
        json_decref(groups);
        return ig_err_set(err, IG_ERR_INVALID,
                          "vote %zu's groups are not a list of names", i + 1);
    }
    /* "o" steals groups. */
    *out =
        json_pack("{s:s, s:s, s:s, s:o, s:I}", "approver", jstr(v, "approver"),
                  "vote", jstr(v, "vote"), "comment", jstr(v, "comment"),
                  "groups", groups, "voted_at", (json_int_t)t);
    return *out != NULL ? IG_OK
                        : ig_err_set(err, IG_ERR_NOMEM, "out of memory");
}

/* The votes text as checked vote objects: a new array in *out. */
static enum ig_status
votes_of(const char *text, size_t len, const char *intent_hash, json_t **out,
         struct ig_err *err)
{
    json_t *raw = NULL, *list = json_array(), *v, *x;
    enum ig_status st = IG_OK;
    size_t i;

    *out = NULL;
    if (list == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (text != NULL && (st = parse("votes", text, len, &raw, err)) == IG_OK &&
        !json_is_array(raw))
        st = ig_err_set(err, IG_ERR_INVALID, "the votes are not a list");
    json_array_foreach(raw, i, x)
    {
        if (st != IG_OK)
            break;
        if ((st = vote(x, i, intent_hash, &v, err)) == IG_OK &&
            json_array_append_new(list, v) != 0) /* steals v */
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    json_decref(raw);
    if (st != IG_OK) {
        json_decref(list);
        return st;
    }
    *out = list;
    return IG_OK;
}

/* The votes of an approved request as the PDP leaves them (see the
   header): 0, or IG_ERR_INVALID with err. */
static enum ig_status
approved_votes(const json_t *list, const json_t *req, int64_t decided_at,
               struct ig_err *err)
{
    double q = json_number_value(json_object_get(req, "quorum"));
    size_t n = json_array_size(list), i;
    json_t *v;

    if (q != floor(q) || q < 1 || q > IG_POLICY_QUORUM_MAX)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the approval's quorum is not 1 to %d",
                          IG_POLICY_QUORUM_MAX);
    if (n != (size_t)q)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%zu votes for an approval of quorum %d", n, (int)q);
    json_array_foreach(list, i, v)
    {
        json_int_t at = json_integer_value(json_object_get(v, "voted_at"));

        if (!is_approve(v))
            return ig_err_set(err, IG_ERR_INVALID,
                              "vote %zu of an approved request is not "
                              "APPROVE",
                              i + 1);
        if (at > decided_at || (i + 1 == n && at != decided_at))
            return ig_err_set(err, IG_ERR_INVALID,
                              "vote %zu was not cast by the decision it "
                              "made",
                              i + 1);
    }
    return IG_OK;
}

enum ig_status
pdp_approval_intent_parse(const struct pdp_approval_texts *t, json_t **out,
                          struct ig_err *err)
{
    json_t *b = NULL, *req = NULL, *list = NULL;
    enum ig_status st;

    *out = NULL;
    if ((st = parse("binding", t->binding, t->binding_len, &b, err)) != IG_OK)
        goto out;
    if (!json_is_object(b)) {
        st = ig_err_set(err, IG_ERR_INVALID, "the binding is not an object");
        goto out;
    }
    if (t->approval_id == NULL) {
        *out = b;
        return IG_OK;
    }
    if ((st = parse("approval's requirements", t->requirements,
                    t->requirements_len, &req, err)) != IG_OK)
        goto out;
    if (!json_is_object(req) || !strings(json_object_get(req, "groups")) ||
        !json_is_number(json_object_get(req, "quorum"))) {
        st = ig_err_set(err, IG_ERR_INVALID,
                        "the approval's requirements are not {groups, "
                        "quorum}");
        goto out;
    }
    if ((st = votes_of(t->votes, t->votes_len, t->intent_hash, &list, err)) !=
            IG_OK ||
        (st = approved_votes(list, req, t->decided_at, err)) != IG_OK)
        goto out;
    if ((*out = pdp_approval_intent(b, t->approval_id, req, list, NULL)) ==
        NULL)
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
out:
    json_decref(b);
    json_decref(req);
    json_decref(list);
    return st;
}
