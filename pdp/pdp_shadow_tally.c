/*
 * pdp_shadow_tally.c - what a shadow bundle's comparisons add up to: the
 * counts by (action, live, shadow), the newest disagreements, and their
 * renderings for /metrics and GET /v1/policy/shadow.
 *
 * The action is text an agent chose (validated, but still an agent's
 * choice): the label set is capped at IG_SHADOW_ACTIONS_MAX distinct
 * actions, first come first kept, the rest counted as action="other", and
 * every label value is escaped for the exposition format. Only the shadow
 * thread writes; readers take the same mutex for a consistent copy.
 */
#include "pdp_shadow.h"

#include <stdio.h>
#include <string.h>

#include "ig_time.h"
#include "pdp_metrics.h"

int
pdp_shadow_tally_init(struct pdp_shadow_tally *t)
{
    memset(t, 0, sizeof(*t));
    return pthread_mutex_init(&t->mu, NULL) == 0 ? 0 : -1;
}

void
pdp_shadow_tally_release(struct pdp_shadow_tally *t)
{
    (void)pthread_mutex_destroy(&t->mu);
}

/* The row of action (under mu): its own, a new one, or "other". */
static size_t
action_row(struct pdp_shadow_tally *t, const char *action)
{
    size_t i;

    for (i = 0; i < t->nactions; i++)
        if (strcmp(t->action[i], action) == 0)
            return i;
    if (t->nactions == IG_SHADOW_ACTIONS_MAX ||
        strlen(action) > IG_ACTION_MAX || strcmp(action, "other") == 0)
        return IG_SHADOW_ACTIONS_MAX;
    (void)snprintf(t->action[t->nactions], sizeof(t->action[0]), "%s", action);
    return t->nactions++;
}

int
pdp_shadow_tally_add(struct pdp_shadow_tally *t, const char *intent_id,
                     const char *action, enum pol_verdict live,
                     enum pol_verdict shadow, int64_t at)
{
    struct pdp_shadow_recent *r;

    atomic_fetch_add(&t->evaluated, 1);
    if (live == shadow)
        return 0;
    atomic_fetch_add(&t->disagreed, 1);
    pthread_mutex_lock(&t->mu);
    t->count[action_row(t, action)][live][shadow]++;
    r = &t->recent[t->recent_next];
    (void)snprintf(r->intent_id, sizeof(r->intent_id), "%s", intent_id);
    (void)snprintf(r->action, sizeof(r->action), "%s", action);
    r->live = live;
    r->shadow = shadow;
    r->at = at;
    t->recent_next = (t->recent_next + 1) % IG_SHADOW_RECENT_MAX;
    if (t->nrecent < IG_SHADOW_RECENT_MAX)
        t->nrecent++;
    pthread_mutex_unlock(&t->mu);
    return 1;
}

enum ig_status
pdp_shadow_label(struct ig_buf *out, const char *s)
{
    enum ig_status st = IG_OK;

    for (; st == IG_OK && *s != '\0'; s++) {
        if (*s == '\\')
            st = ig_buf_adds(out, "\\\\");
        else if (*s == '"')
            st = ig_buf_adds(out, "\\\"");
        else if (*s == '\n')
            st = ig_buf_adds(out, "\\n");
        else
            st = ig_buf_addc(out, *s);
    }
    return st;
}

static const char *
row_name(const struct pdp_shadow_tally *t, size_t row)
{
    return row == IG_SHADOW_ACTIONS_MAX ? "other" : t->action[row];
}

/* One disagreements_total sample (under mu). */
static enum ig_status
render_sample(struct ig_buf *out, const char *action, int live, int shadow,
              uint64_t n)
{
    enum ig_status st;

    st = ig_buf_adds(out, "intentgate_shadow_disagreements_total{action=\"");
    if (st == IG_OK)
        st = pdp_shadow_label(out, action);
    if (st == IG_OK)
        st = pdp_metrics_addf(out, "\",live=\"%s\",shadow=\"%s\"} %llu\n",
                              pol_verdict_name((enum pol_verdict)live),
                              pol_verdict_name((enum pol_verdict)shadow),
                              (unsigned long long)n);
    return st;
}

enum ig_status
pdp_shadow_tally_render(struct pdp_shadow_tally *t, struct ig_buf *out)
{
    const struct pdp_metric rows[] = {
        {"intentgate_shadow_evaluations_total",
         "Live decisions the shadow bundle evaluated.", &t->evaluated},
        {"intentgate_shadow_dropped_total",
         "Live decisions not shadowed: queue full or stopping.", &t->dropped},
        {"intentgate_shadow_errors_total",
         "Shadow evaluations that failed (error, limit, memory).", &t->errors},
        {"intentgate_shadow_reloads_total",
         "Shadow bundles swapped in by a reload.", &t->reloads},
        {"intentgate_shadow_reloads_refused_total",
         "Shadow reloads refused (load or tests failed).", &t->reloads_refused},
    };
    enum ig_status st;
    size_t row, n;
    int l, v;

    st = pdp_metrics_rows(out, "counter", rows, sizeof(rows) / sizeof(rows[0]));
    if (st == IG_OK)
        st = pdp_metrics_addf(
            out,
            "# HELP intentgate_shadow_disagreements_total Live and shadow "
            "verdicts that differ, by action (at most %d, then "
            "\"other\").\n# TYPE intentgate_shadow_disagreements_total "
            "counter\n",
            IG_SHADOW_ACTIONS_MAX);
    pthread_mutex_lock(&t->mu);
    n = t->nactions;
    for (row = 0; st == IG_OK && row <= IG_SHADOW_ACTIONS_MAX; row++) {
        if (row >= n && row != IG_SHADOW_ACTIONS_MAX)
            continue;
        for (l = 0; st == IG_OK && l < 3; l++)
            for (v = 0; st == IG_OK && v < 3; v++)
                if (t->count[row][l][v] > 0)
                    st = render_sample(out, row_name(t, row), l, v,
                                       t->count[row][l][v]);
    }
    pthread_mutex_unlock(&t->mu);
    return st;
}

/* "by": one entry per (action, live, shadow) counted (under mu). */
static json_t *
by_json(struct pdp_shadow_tally *t)
{
    json_t *by = json_array();
    size_t row;
    int l, v;

    for (row = 0; by != NULL && row <= IG_SHADOW_ACTIONS_MAX; row++) {
        if (row >= t->nactions && row != IG_SHADOW_ACTIONS_MAX)
            continue;
        for (l = 0; by != NULL && l < 3; l++)
            for (v = 0; by != NULL && v < 3; v++) {
                if (t->count[row][l][v] == 0)
                    continue;
                /* json_array_append_new steals the entry. */
                if (json_array_append_new(
                        by,
                        json_pack(
                            "{s:s, s:s, s:s, s:I}", "action", row_name(t, row),
                            "live", pol_verdict_name((enum pol_verdict)l),
                            "shadow", pol_verdict_name((enum pol_verdict)v),
                            "count", (json_int_t)t->count[row][l][v])) != 0) {
                    json_decref(by);
                    by = NULL;
                }
            }
    }
    return by;
}

/* "recent": newest first (under mu). */
static json_t *
recent_json(struct pdp_shadow_tally *t)
{
    json_t *a = json_array();
    const struct pdp_shadow_recent *r;
    char at[IG_TIME_STRLEN + 1];
    size_t i, k;

    for (i = 0; a != NULL && i < t->nrecent; i++) {
        k = (t->recent_next + IG_SHADOW_RECENT_MAX - 1 - i) %
            IG_SHADOW_RECENT_MAX;
        r = &t->recent[k];
        if (ig_time_format(r->at, at) != IG_OK)
            at[0] = '\0';
        /* json_array_append_new steals the entry. */
        if (json_array_append_new(
                a, json_pack("{s:s, s:s, s:s, s:s, s:s}", "intent_id",
                             r->intent_id, "action", r->action, "live",
                             pol_verdict_name(r->live), "shadow",
                             pol_verdict_name(r->shadow), "at", at)) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

json_t *
pdp_shadow_tally_json(struct pdp_shadow_tally *t)
{
    json_t *by, *recent;

    pthread_mutex_lock(&t->mu);
    by = by_json(t);
    recent = recent_json(t);
    pthread_mutex_unlock(&t->mu);
    /* "o" steals by and recent; a NULL one fails the pack, which then
       releases the other. */
    return json_pack("{s:I, s:I, s:I, s:I, s:o, s:o}", "evaluated",
                     (json_int_t)atomic_load(&t->evaluated), "disagreed",
                     (json_int_t)atomic_load(&t->disagreed), "dropped",
                     (json_int_t)atomic_load(&t->dropped), "errors",
                     (json_int_t)atomic_load(&t->errors), "by", by, "recent",
                     recent);
}
