/*
 * cli_replay_eval.c - one recorded decision evaluated again under a new
 * bundle (cli_replay.h), the way the server decided it:
 *
 * - the intent its policies saw: the stored binding, and for a decision
 *   at an approval's quorum the binding plus `approval` rebuilt from the
 *   recorded requirements and votes by the PDP's own builder
 *   (pdp_approval_intent.h);
 * - evaluated at its decided_at, with count() on the replay's own
 *   counter (core/ig_counter.h: decisions are replayed in the order they
 *   were made, so a quota sees the history as it was, under the new
 *   bundle), never the database's;
 * - the server's handling of the policies' verdict applied to the new one
 *   (BLOCK without reasons: NO_POLICY_MATCHED; ESCALATE at quorum: BLOCK
 *   APPROVAL_NOT_SUFFICIENT) and undone on the recorded one where it
 *   depended on the server's config, not the policies (BLOCK NO_EXECUTOR
 *   was a policy ALLOW).
 *
 * Decisions no policy made (an approver's denial, an expiry) are not
 * evaluated. A row that does not parse - the file may have been edited -
 * is REPLAY_UNREADABLE with what is wrong; nothing here trusts a row.
 */
#include "cli_replay.h"

#include <stdlib.h>
#include <string.h>

#include "ig_counter.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "ig_time.h"
#include "pdp_approval_intent.h"
#include "pdp_decision.h"

struct replay_engine {
    struct pol_engine *eng;
    struct ig_counter *counter;
    struct pol_trace *trace; /* NULL: not traced */
    int64_t now;             /* the decided_at of the decision replayed */
};

static int64_t
count_hit(void *ctx, const char *key, int64_t window)
{
    struct replay_engine *e = ctx;

    return ig_counter_hit(e->counter, key, window, e->now);
}

enum ig_status
replay_engine_new(struct pol_bundle *b, int trace, struct replay_engine **out,
                  struct ig_err *err)
{
    struct replay_engine *e = calloc(1, sizeof(*e));
    enum ig_status st;

    *out = NULL;
    if (e == NULL ||
        (e->counter = ig_counter_new(IG_STORE_COUNT_KEYS_MAX,
                                     IG_STORE_COUNT_WINDOW_MAX)) == NULL ||
        (trace && (e->trace = pol_trace_new()) == NULL)) {
        replay_engine_free(e);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    /* Offline, a big database may need more than the server's budget:
       replay_engine's own (cli_replay.h). */
    ig_counter_set_max_buckets(e->counter, REPLAY_COUNTER_BUCKETS);
    st = pol_engine_new(b, NULL, count_hit, e, &e->eng, err);
    if (st != IG_OK) {
        replay_engine_free(e);
        return st;
    }
    *out = e;
    return IG_OK;
}

void
replay_engine_free(struct replay_engine *e)
{
    if (e == NULL)
        return;
    pol_engine_free(e->eng);
    ig_counter_free(e->counter);
    pol_trace_free(e->trace);
    free(e);
}

/* ---- the recorded decision ---- */

static void
unreadable(struct replay_result *out, const char *what, const char *detail)
{
    out->kind = REPLAY_UNREADABLE;
    (void)snprintf(out->why, sizeof(out->why), "%.100s%s%.140s", what,
                   detail != NULL ? ": " : "", detail != NULL ? detail : "");
}

/* 1 when v, recorded for d, is the server's BLOCK NO_EXECUTOR (the
   policies allowed; no executor was configured for the action), not a
   policy's own BLOCK{reason = "NO_EXECUTOR"}: the reason code alone
   cannot tell (policy authors choose codes), the message the server
   writes with it can (pdp_decision_no_executor_msg). */
static int
server_no_executor(const struct store_log_decision *d,
                   const struct replay_verdict *v)
{
    char want[POL_MESSAGE_MAX];

    if (v->verdict != POL_BLOCK || v->nreasons == 0 ||
        strcmp(v->reasons[0], "NO_EXECUTOR") != 0 || d->message == NULL ||
        d->action == NULL)
        return 0;
    pdp_decision_no_executor_msg(want, sizeof(want), d->action, d->later);
    return strcmp(d->message, want) == 0;
}

/* The recorded decision and reasons into v: 0, or -1 with out unreadable. */
static int
recorded(const struct store_log_decision *d, struct replay_verdict *v,
         struct replay_result *out)
{
    static const char *const names[] = {"BLOCK", "ALLOW", "ESCALATE"};
    struct ig_err err;
    json_t *r = NULL, *x;
    size_t i;
    int k = -1, ok;

    for (i = 0; d->decision != NULL && i < 3; i++)
        if (strcmp(d->decision, names[i]) == 0)
            k = (int)i;
    if (k < 0) {
        unreadable(out, "the decision is not ALLOW, ESCALATE or BLOCK", NULL);
        return -1;
    }
    v->verdict = (enum pol_verdict)k;
    ig_err_clear(&err);
    ok = d->reasons != NULL &&
         ig_json_parse(d->reasons, d->reasons_len, &r, &err) == IG_OK &&
         json_is_array(r) && json_array_size(r) <= POL_MAX_REASONS;
    json_array_foreach(r, i, x)
    {
        if (!ok || !json_is_string(x) ||
            !pol_reason_valid(json_string_value(x), json_string_length(x))) {
            ok = 0;
            break;
        }
        memcpy(v->reasons[i], json_string_value(x), json_string_length(x) + 1);
        v->nreasons = i + 1;
    }
    json_decref(r);
    if (!ok) {
        unreadable(out, "the reasons are not a list of reason codes", NULL);
        return -1;
    }
    /* The server's BLOCK NO_EXECUTOR was the policies' ALLOW, blocked for
       the server's config: compare what the policies said. */
    if (server_no_executor(d, v)) {
        v->verdict = POL_ALLOW;
        memmove(v->reasons[0], v->reasons[1],
                (v->nreasons - 1) * sizeof(v->reasons[0]));
        v->nreasons--;
    }
    return 0;
}

/* ---- comparing ---- */

static int
cmp_code(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* 1 when a and b hold the same set of reasons. */
static int
same_reasons(const struct replay_verdict *a, const struct replay_verdict *b)
{
    char x[POL_MAX_REASONS][POL_REASON_MAX], y[POL_MAX_REASONS][POL_REASON_MAX];
    size_t i, j, n = 0, m = 0;

    memcpy(x, a->reasons, sizeof(x));
    memcpy(y, b->reasons, sizeof(y));
    qsort(x, a->nreasons, sizeof(x[0]), cmp_code);
    qsort(y, b->nreasons, sizeof(y[0]), cmp_code);
    /* As sets: duplicates count once. */
    for (i = 0; i < a->nreasons; i++)
        if (i == 0 || strcmp(x[i], x[n - 1]) != 0) {
            if (n != i)
                memcpy(x[n], x[i], sizeof(x[0]));
            n++;
        }
    for (j = 0; j < b->nreasons; j++)
        if (j == 0 || strcmp(y[j], y[m - 1]) != 0) {
            if (m != j)
                memcpy(y[m], y[j], sizeof(y[0]));
            m++;
        }
    if (n != m)
        return 0;
    for (i = 0; i < n; i++)
        if (strcmp(x[i], y[i]) != 0)
            return 0;
    return 1;
}

/* ---- preparing ---- */

static char *
dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

/* What is decided without evaluating: 1 (out->kind set), or 0. */
static int
not_evaluated(const struct store_log_decision *d, struct replay_result *out)
{
    if (d->intent_id == NULL || d->action == NULL || d->resource == NULL ||
        d->intent_hash == NULL) {
        unreadable(out, "no intent row for this decision", NULL);
        return 1;
    }
    if (recorded(d, &out->from, out) != 0)
        return 1;
    if (!d->later)
        return 0;
    if (d->approval_id == NULL || d->result == NULL) {
        unreadable(out, "a later decision without an ended approval", NULL);
        return 1;
    }
    if (strcmp(d->result, "DENIED") == 0) {
        out->kind = REPLAY_DENIED;
        return 1;
    }
    if (strcmp(d->result, "EXPIRED") == 0) {
        out->kind = REPLAY_EXPIRED;
        return 1;
    }
    if (strcmp(d->result, "APPROVED") != 0) {
        unreadable(out,
                   "the approval's result is not APPROVED, DENIED or "
                   "EXPIRED",
                   NULL);
        return 1;
    }
    return 0;
}

/* 0 when the decision's time is one the PDP could have recorded: its
   intent's created_at a time up to a day from now, the first decision at
   that very second (the PDP writes both from one clock reading), one at
   quorum within the longest approval after it. Else -1, out unreadable.
   (A time far off would move the replay's quota clock with it.) */
static int
times_valid(const struct store_log_decision *d, struct replay_result *out)
{
    int64_t now = ig_time_now();

    if (d->created_at < 1 || d->created_at > now + 86400) {
        unreadable(out,
                   "the intent's created_at is not a time the PDP "
                   "could have recorded",
                   NULL);
        return -1;
    }
    if (d->later ? d->decided_at < d->created_at ||
                       d->decided_at - d->created_at > IG_APPROVAL_TTL_MAX
                 : d->decided_at != d->created_at) {
        unreadable(out,
                   d->later ? "decided_at is not within the approval's "
                              "longest life after the intent"
                            : "decided_at is not the intent's created_at",
                   NULL);
        return -1;
    }
    return 0;
}

/* 1 when member key of binding b is the string s exactly (no NUL). */
static int
member_is(const json_t *b, const char *key, const char *s)
{
    const json_t *v = json_object_get(b, key);

    return json_is_string(v) && json_string_length(v) == strlen(s) &&
           strcmp(json_string_value(v), s) == 0;
}

/* 0 when the binding is the intent row's: its id, action, resource and
   creation time. Else -1, out unreadable naming the field. */
static int
binding_matches(const struct store_log_decision *d, const json_t *b,
                struct replay_result *out)
{
    char created[IG_TIME_STRLEN + 1];
    const char *bad = NULL;

    if (!member_is(b, "intent_id", d->intent_id))
        bad = "intent_id";
    else if (!member_is(b, "action", d->action))
        bad = "action";
    else if (!member_is(b, "resource", d->resource))
        bad = "resource";
    else if (ig_time_format(d->created_at, created) != IG_OK ||
             !member_is(b, "created_at", created))
        bad = "created_at";
    if (bad == NULL)
        return 0;
    unreadable(out, "the binding is not its intent row's", bad);
    return -1;
}

int
replay_prepare(const struct store_log_decision *d, struct replay_row *row)
{
    struct pdp_approval_texts t;
    struct ig_err err;
    enum ig_status st;

    memset(row, 0, sizeof(*row));
    row->seq = d->seq;
    row->decided_at = d->decided_at;
    row->at_quorum = d->later;
    if ((d->intent_id != NULL &&
         (row->intent_id = dup_or_null(d->intent_id)) == NULL) ||
        (d->action != NULL && (row->action = dup_or_null(d->action)) == NULL) ||
        (d->resource != NULL &&
         (row->resource = dup_or_null(d->resource)) == NULL)) {
        replay_row_release(row);
        return -1;
    }
    if (not_evaluated(d, &row->r) || times_valid(d, &row->r) != 0)
        return 0;
    ig_err_clear(&err);
    t.binding = d->binding;
    t.binding_len = d->binding_len;
    t.approval_id = d->later ? d->approval_id : NULL;
    t.requirements = d->requirements;
    t.requirements_len = d->requirements_len;
    t.votes = d->votes;
    t.votes_len = d->votes_len;
    t.intent_hash = d->intent_hash;
    t.decided_at = d->decided_at;
    st = pdp_approval_intent_parse(&t, &row->intent, &err);
    if (st == IG_ERR_NOMEM) {
        replay_row_release(row);
        return -1;
    }
    if (st != IG_OK)
        unreadable(&row->r, "the intent", err.msg);
    else if (binding_matches(d, row->intent, &row->r) != 0) {
        json_decref(row->intent);
        row->intent = NULL;
    }
    return 0;
}

void
replay_row_release(struct replay_row *row)
{
    free(row->intent_id);
    free(row->action);
    free(row->resource);
    json_decref(row->intent);
    memset(row, 0, sizeof(*row));
}

/* ---- evaluating ---- */

/* Evaluate intent as the server did and keep the outcome in v. */
static void
evaluate(struct replay_engine *e, const json_t *intent, int at_quorum,
         int64_t now, struct replay_verdict *v, struct replay_result *out)
{
    struct pol_decision d;

    e->now = now;
    pol_engine_eval_traced(e->eng, intent, &d, e->trace);
    out->trace = e->trace;
    if (at_quorum && d.verdict == POL_ESCALATE)
        pdp_decision_block(&d, "APPROVAL_NOT_SUFFICIENT",
                           "the policies still ask for approval after the "
                           "quorum was reached");
    if (d.verdict == POL_BLOCK && d.nreasons == 0)
        pdp_decision_block(&d, "NO_POLICY_MATCHED",
                           "no policy allowed this intent");
    v->verdict = d.verdict;
    v->nreasons = d.nreasons;
    memcpy(v->reasons, d.reasons, sizeof(v->reasons));
}

void
replay_evaluate(struct replay_engine *e, struct replay_row *row)
{
    struct replay_result *out = &row->r;

    if (row->intent == NULL)
        return; /* decided by replay_prepare */
    evaluate(e, row->intent, row->at_quorum, row->decided_at, &out->to, out);
    if (out->from.verdict != out->to.verdict)
        out->kind = REPLAY_VERDICT;
    else if (!same_reasons(&out->from, &out->to))
        out->kind = REPLAY_REASONS;
    else
        out->kind = REPLAY_UNCHANGED;
}
