/*
 * pdp_answer.c - the answer to POST /v1/intents, built from the decision
 * as it is made or rebuilt from the rows recorded for it.
 *
 * An idempotent retry must get the first answer byte for byte, including
 * the same grant. Instead of storing the whole answer next to the rows it
 * repeats, the store keeps the grant token with the grant, and the answer
 * is rebuilt from the intent's binding, its first decision, and its grant
 * or approval. Both paths go through pdp_answer_json() and the canonical
 * writer, and canonical JSON round-trips, so the bytes are the same.
 */
#include "pdp_int.h"

#include <stdlib.h>
#include <string.h>

json_t *
pdp_answer_json(const struct pdp_answer *a)
{
    json_t *v;

    /* "O" adds a reference to the binding; "o" steals the reasons (NULL
       fails the pack: an answer never lacks them). */
    v = json_pack("{s:s, s:s, s:O, s:s, s:o, s:s, s:s, s:s}", "intent_id",
                  a->intent_id, "intent_hash", a->intent_hash, "intent",
                  a->binding, "decision", a->decision, "reasons", a->reasons,
                  "message", a->message, "policy_revision", a->policy_revision,
                  "decision_id", a->decision_id);
    if (v == NULL)
        return NULL;
    if (a->grant != NULL &&
        (json_object_set_new(v, "grant", json_string(a->grant)) != 0 ||
         json_object_set_new(v, "grant_expires_at",
                             json_string(a->grant_expires_at)) != 0))
        goto fail;
    if (a->approval_id != NULL &&
        json_object_set_new(v, "approval",
                            json_pack("{s:s, s:s}", "id", a->approval_id,
                                      "expires_at", a->approval_expires_at)))
        goto fail;
    return v;
fail:
    json_decref(v);
    return NULL;
}

static const char *
str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* Fill a from the record's first decision and its grant or approval. */
static enum ig_status
answer_from(const json_t *rec, struct pdp_answer *a,
            char grant_exp[IG_TIME_STRLEN + 1],
            char approval_exp[IG_TIME_STRLEN + 1])
{
    const json_t *d = json_array_get(json_object_get(rec, "decisions"), 0);
    const json_t *g = json_object_get(rec, "grant");
    const json_t *ap = json_object_get(rec, "approval");

    memset(a, 0, sizeof(*a));
    a->intent_id = str(rec, "intent_id");
    a->intent_hash = str(rec, "intent_hash");
    a->binding = json_object_get(rec, "binding");
    a->decision = str(d, "decision");
    a->message = str(d, "message");
    a->policy_revision = str(d, "policy_revision");
    a->decision_id = str(d, "decision_id");
    if (a->intent_id == NULL || a->intent_hash == NULL || a->binding == NULL ||
        a->decision == NULL || a->message == NULL ||
        a->policy_revision == NULL || a->decision_id == NULL)
        return IG_ERR_IO;
    if (strcmp(a->decision, "ALLOW") == 0 && g != NULL) {
        a->grant = str(g, "token");
        if (a->grant == NULL ||
            ig_time_format(json_integer_value(json_object_get(g, "expires_at")),
                           grant_exp) != IG_OK)
            return IG_ERR_IO;
        a->grant_expires_at = grant_exp;
    } else if (strcmp(a->decision, "ESCALATE") == 0 && ap != NULL) {
        a->approval_id = str(ap, "approval_id");
        if (a->approval_id == NULL ||
            ig_time_format(
                json_integer_value(json_object_get(ap, "expires_at")),
                approval_exp) != IG_OK)
            return IG_ERR_IO;
        a->approval_expires_at = approval_exp;
    }
    a->reasons = json_incref(json_object_get(d, "reasons"));
    return a->reasons != NULL ? IG_OK : IG_ERR_IO;
}

enum ig_status
pdp_answer_replay(struct pdp_server *s, const char *intent_id, char **text)
{
    char grant_exp[IG_TIME_STRLEN + 1], approval_exp[IG_TIME_STRLEN + 1];
    struct pdp_answer a;
    json_t *rec = NULL, *v;
    enum ig_status st;

    *text = NULL;
    st = store_get_intent(s->store, intent_id, &rec);
    if (st == IG_OK)
        st = answer_from(rec, &a, grant_exp, approval_exp);
    if (st == IG_OK) {
        v = pdp_answer_json(&a);
        *text = pdp_json_text(v);
        json_decref(v);
        if (*text == NULL)
            st = IG_ERR_NOMEM;
    }
    json_decref(rec);
    return st;
}
