/*
 * pdp_answer.c - the answer to POST /v1/intents, built from the decision
 * as it is made or rebuilt from the rows recorded for it.
 *
 * An idempotent retry must get the first answer byte for byte, including
 * the same grant. Instead of storing the whole answer next to the rows it
 * repeats, the store keeps the grant token with the grant, and the answer
 * is rebuilt from the intent's binding, its first decision, and its grant
 * or approval. Both paths write it with pdp_answer_text() from the same
 * fields, the binding and reasons as canonical text, and canonical JSON
 * round-trips, so the bytes are the same.
 */
#include "pdp_int.h"

#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"

enum ig_status
pdp_answer_text(const struct pdp_answer *a, struct ig_buf *out)
{
    struct ig_canon_obj o, sub;

    /* Members in canonical (byte) order of their keys. */
    ig_canon_obj_begin(&o, out, NULL);
    if (a->approval_id != NULL) {
        ig_canon_obj_open(&o, "approval", &sub);
        ig_canon_obj_str(&sub, "expires_at", a->approval_expires_at);
        ig_canon_obj_str(&sub, "id", a->approval_id);
        (void)ig_canon_obj_end(&sub);
    }
    ig_canon_obj_str(&o, "decision", a->decision);
    ig_canon_obj_str(&o, "decision_id", a->decision_id);
    if (a->grant != NULL) {
        ig_canon_obj_str(&o, "grant", a->grant);
        ig_canon_obj_str(&o, "grant_expires_at", a->grant_expires_at);
    }
    ig_canon_obj_raw(&o, "intent", a->binding, a->binding_len);
    ig_canon_obj_str(&o, "intent_hash", a->intent_hash);
    ig_canon_obj_str(&o, "intent_id", a->intent_id);
    ig_canon_obj_str(&o, "message", a->message);
    ig_canon_obj_str(&o, "policy_revision", a->policy_revision);
    ig_canon_obj_raw(&o, "reasons", a->reasons,
                     a->reasons != NULL ? strlen(a->reasons) : 0);
    return ig_canon_obj_end(&o);
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
            char approval_exp[IG_TIME_STRLEN + 1], struct ig_buf *texts)
{
    size_t at;
    const json_t *d = json_array_get(json_object_get(rec, "decisions"), 0);
    const json_t *g = json_object_get(rec, "grant");
    const json_t *ap = json_object_get(rec, "approval");
    const json_t *binding, *reasons;

    memset(a, 0, sizeof(*a));
    a->intent_id = str(rec, "intent_id");
    a->intent_hash = str(rec, "intent_hash");
    binding = json_object_get(rec, "binding");
    a->decision = str(d, "decision");
    a->message = str(d, "message");
    a->policy_revision = str(d, "policy_revision");
    a->decision_id = str(d, "decision_id");
    if (a->intent_id == NULL || a->intent_hash == NULL || binding == NULL ||
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
    /* The binding's canonical text, a NUL, the reasons' and a NUL: one
       buffer, so that neither moves once both are in. */
    reasons = json_object_get(d, "reasons");
    if (reasons == NULL || ig_canon_write(binding, texts, NULL) != IG_OK)
        return IG_ERR_IO;
    a->binding_len = texts->len;
    at = texts->len + 1;
    if (ig_buf_add(texts, "", 1) != IG_OK ||
        ig_canon_write(reasons, texts, NULL) != IG_OK ||
        ig_buf_add(texts, "", 1) != IG_OK)
        return IG_ERR_IO;
    a->binding = texts->data;
    a->reasons = texts->data + at;
    return IG_OK;
}

enum ig_status
pdp_answer_replay(struct pdp_server *s, const char *intent_id, char **text)
{
    char grant_exp[IG_TIME_STRLEN + 1], approval_exp[IG_TIME_STRLEN + 1];
    struct pdp_answer a;
    struct ig_buf texts, out;
    json_t *rec = NULL;
    enum ig_status st;

    *text = NULL;
    ig_buf_init(&texts, 2 * IG_CANON_MAX_BYTES);
    ig_buf_init(&out, IG_CANON_MAX_BYTES);
    st = store_get_intent(s->store, intent_id, &rec);
    if (st == IG_OK)
        st = answer_from(rec, &a, grant_exp, approval_exp, &texts);
    if (st == IG_OK)
        st = pdp_answer_text(&a, &out);
    if (st == IG_OK && (*text = ig_buf_take(&out, NULL)) == NULL)
        st = IG_ERR_NOMEM;
    ig_buf_release(&out);
    ig_buf_release(&texts);
    json_decref(rec);
    return st;
}
