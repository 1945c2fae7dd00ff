/*
 * fuzz_replay_row.c - libFuzzer target for what `intentgate policy replay`
 * makes of one recorded decision's texts (pdp_approval_intent_parse): the
 * binding, and for a decision at an approval's quorum the requirements
 * and the votes - all of which an edited database hands over as anything.
 *
 * Input: one flag byte (bit 0: the decision was made at quorum, so an
 * approval is rebuilt; bit 1: the votes must be for intent hash
 * "sha256:00"), then the binding, requirements and votes texts
 * separated by 0xff bytes (a byte UTF-8 never holds: each text may still
 * hold any other, NUL included). Beyond not crashing or leaking, an
 * accepted row must give what the policies rely on: an object; with an
 * approval, approval.approvals holds exactly the votes (all APPROVE),
 * as many as approval.quorum, the last at DECIDED_AT, each
 * {approver: string, groups: array of strings, comment: string, at:
 * integer}, and approval.groups is an array of strings. A broken property
 * aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "pdp_approval_intent.h"

/* When the decision at quorum was made (the seeds' deciding vote). */
#define DECIDED_AT 1796252520

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next text: up to the next 0xff or the end. */
static const char *
part(const uint8_t **p, const uint8_t *end, size_t *len)
{
    const uint8_t *s = *p, *q = s;

    while (q < end && *q != 0xff)
        q++;
    *len = (size_t)(q - s);
    *p = q < end ? q + 1 : q;
    return (const char *)s;
}

static int
all_strings(const json_t *a)
{
    const json_t *x;
    size_t i;

    if (!json_is_array(a))
        return 0;
    json_array_foreach(a, i, x)
    {
        if (!json_is_string(x))
            return 0;
    }
    return 1;
}

/* The APPROVE votes in the votes text (already accepted: well formed). */
static size_t
approvals_in(const char *votes, size_t len)
{
    json_t *v = NULL, *x;
    size_t i, n = 0;

    if (votes == NULL || ig_json_parse(votes, len, &v, NULL) != IG_OK)
        return 0;
    json_array_foreach(v, i, x)
    {
        const char *s = json_string_value(json_object_get(x, "vote"));

        n += s != NULL && strcmp(s, "APPROVE") == 0;
    }
    json_decref(v);
    return n;
}

static void
check(const json_t *in, const char *votes, size_t votes_len, int quorum)
{
    const json_t *ap = json_object_get(in, "approval"), *list, *x;
    size_t i;

    if (!json_is_object(in))
        abort();
    if (!quorum)
        return;
    list = json_object_get(ap, "approvals");
    if (!json_is_object(ap) || !all_strings(json_object_get(ap, "groups")) ||
        !json_is_array(list) ||
        json_array_size(list) != approvals_in(votes, votes_len) ||
        (double)json_array_size(list) !=
            json_number_value(json_object_get(ap, "quorum")) ||
        json_integer_value(json_object_get(
            json_array_get(list, json_array_size(list) - 1), "at")) !=
            DECIDED_AT)
        abort();
    json_array_foreach(list, i, x)
    {
        if (!json_is_string(json_object_get(x, "approver")) ||
            !all_strings(json_object_get(x, "groups")) ||
            !json_is_string(json_object_get(x, "comment")) ||
            !json_is_integer(json_object_get(x, "at")))
            abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data + (size > 0), *end = data + size;
    const char *binding, *req, *votes;
    size_t blen, rlen, vlen;
    unsigned flags = size > 0 ? data[0] : 0;
    int quorum = (flags & 1) != 0;
    struct pdp_approval_texts t;
    struct ig_err err;
    json_t *in = NULL;

    binding = part(&p, end, &blen);
    req = part(&p, end, &rlen);
    votes = part(&p, end, &vlen);
    memset(&t, 0, sizeof(t));
    t.binding = binding;
    t.binding_len = blen;
    t.approval_id = quorum ? "a-1" : NULL;
    t.requirements = req;
    t.requirements_len = rlen;
    t.votes = vlen > 0 ? votes : NULL;
    t.votes_len = vlen;
    t.intent_hash = (flags & 2) ? "sha256:00" : NULL;
    t.decided_at = DECIDED_AT;
    if (pdp_approval_intent_parse(&t, &in, &err) == IG_OK) {
        check(in, vlen > 0 ? votes : NULL, vlen, quorum);
        json_decref(in);
    } else if (in != NULL) {
        abort(); /* nothing is handed out on an error */
    }
    return 0;
}
