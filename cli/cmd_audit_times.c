/*
 * cmd_audit_times.c - what `audit verify` reads from the leaves' times:
 * leaves left unsigned for longer than the PDP would leave them, late
 * checkpoints, gaps and steps back between consecutive events.
 *
 * How it works. Every leaf's top-level "time" is read without parsing
 * the event (audit_leaf.h) as the leaves stream past. Three things are
 * kept: the oldest leaf not covered by the latest valid checkpoint
 * (verify exits ACLI_EXIT_UNSIGNED when it is older than the PDP's
 * checkpoint_interval plus IG_AUDIT_UNSIGNED_MARGIN at the reference
 * time - a live PDP signs every leaf within the interval, so such a leaf
 * was added behind its back, or the PDP stopped without signing; a leaf
 * whose time cannot be read counts as old, and so does one dated more
 * than the margin after the reference time - a forger's way to stay
 * "recent" for ever); for each checkpoint whose
 * signing time the database records, the first leaf it covered that no
 * earlier checkpoint did (a checkpoint signed more than interval plus
 * margin after it is late: the leaves waited unsigned); and gaps between
 * consecutive leaves over --max-gap, or times going back by more than
 * the margin. Only the first few of each are printed, with counts; none
 * but the unsigned leaves changes the exit status.
 */
#include "cmd_audit_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_leaf.h"
#include "ig_time.h"

#define SHOWN 5 /* lines printed per kind of finding */
#define NO_TIME INT64_MIN

/* The first SHOWN lines of one kind of finding, and how many in all. */
struct findings {
    uint64_t n;
    char line[SHOWN][200];
};

static void add(struct findings *f, const char *fmt, ...) IG_PRINTF(2, 3);

static void
add(struct findings *f, const char *fmt, ...)
{
    va_list ap;

    if (f->n < SHOWN) {
        va_start(ap, fmt);
        (void)vsnprintf(f->line[f->n], sizeof(f->line[0]), fmt, ap);
        va_end(ap);
    }
    f->n++;
}

static void
print_findings(const char *label, const struct findings *f)
{
    uint64_t i;

    for (i = 0; i < f->n && i < SHOWN; i++)
        (void)printf("%-13s%s\n", label, f->line[i]);
    if (f->n > SHOWN)
        (void)printf("%-13s... %llu in all\n", label, (unsigned long long)f->n);
}

struct cli_audit_times {
    struct cli_audit_times_opts o;
    const struct cli_audit_notes *ns; /* the database's checkpoints */
    size_t cp_next;                   /* the next of them to look at */
    int cp_have;
    uint64_t cp_size, cp_from; /* the next checkpoint, its first new leaf */
    int64_t cp_at, from_time;
    uint64_t leaves;
    int64_t prev, first, last;
    /* the oldest unsigned leaf */
    int unsigned_seen;
    uint64_t old_index;
    int64_t old_time;
    /* the first unsigned leaf dated after the reference time */
    int future_seen;
    uint64_t future_index;
    int64_t future_time;
    struct findings gaps, back, late;
};

int
cli_audit_time_arg(const char *cmd, const char *opt, const char *s, int64_t *t)
{
    char full[IG_TIME_STRLEN + 1];

    if (s == NULL)
        return 0;
    if (strlen(s) == 10)
        (void)snprintf(full, sizeof(full), "%sT00:00:00Z", s);
    else
        (void)snprintf(full, sizeof(full), "%s", s);
    if (strlen(s) > IG_TIME_STRLEN ||
        ig_time_parse(full, strlen(full), t) != IG_OK) {
        cli_error(cmd, "%s %s: expected YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DD",
                  opt, s);
        return -1;
    }
    return 0;
}

static void
fmt_time(int64_t t, char out[IG_TIME_STRLEN + 1])
{
    if (t == NO_TIME || ig_time_format(t, out) != IG_OK)
        (void)snprintf(out, IG_TIME_STRLEN + 1, "no time");
}

static int64_t
allowed(const struct cli_audit_times *t)
{
    return t->o.interval + IG_AUDIT_UNSIGNED_MARGIN;
}

/* The next checkpoint with a recorded time, after the current one. */
static void
next_checkpoint(struct cli_audit_times *t)
{
    uint64_t size;
    int64_t at;

    t->cp_have = 0;
    while (t->ns != NULL && t->cp_next < t->ns->ndb) {
        size = t->ns->size[t->cp_next];
        at = t->ns->at[t->cp_next];
        t->cp_next++;
        if (size == 0 || size <= t->cp_size)
            continue;
        t->cp_from = t->cp_size; /* the first leaf it newly covers */
        t->cp_size = size;
        t->cp_at = at > 0 ? at : NO_TIME;
        t->from_time = NO_TIME;
        t->cp_have = 1;
        return;
    }
}

enum ig_status
cli_audit_times_new(const struct cli_audit_times_opts *o,
                    const struct cli_audit_notes *ns,
                    struct cli_audit_times **out, struct ig_err *err)
{
    struct cli_audit_times *t = calloc(1, sizeof(*t));

    *out = NULL;
    if (t == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    t->o = *o;
    t->prev = t->first = t->last = NO_TIME;
    t->ns = ns;
    next_checkpoint(t);
    *out = t;
    return IG_OK;
}

static void
late_checkpoint(struct cli_audit_times *t)
{
    char from[IG_TIME_STRLEN + 1];
    int64_t waited;

    if (t->cp_at == NO_TIME || t->from_time == NO_TIME)
        return;
    waited = t->cp_at - t->from_time;
    if (waited <= allowed(t))
        return;
    fmt_time(t->from_time, from);
    add(&t->late,
        "checkpoint %llu was signed %lld s after leaf %llu (%s) "
        "was logged",
        (unsigned long long)t->cp_size, (long long)waited,
        (unsigned long long)t->cp_from, from);
}

static void
step(struct cli_audit_times *t, uint64_t index, int64_t when)
{
    char a[IG_TIME_STRLEN + 1];
    int64_t d;

    if (when == NO_TIME || t->prev == NO_TIME)
        return;
    d = when - t->prev;
    if (t->o.max_gap > 0 && d > t->o.max_gap) {
        fmt_time(when, a);
        add(&t->gaps, "%lld s without events before leaf %llu (%s)",
            (long long)d, (unsigned long long)index, a);
    } else if (d < -(int64_t)IG_AUDIT_UNSIGNED_MARGIN) {
        add(&t->back, "leaf %llu is %lld s earlier than leaf %llu",
            (unsigned long long)index, (long long)-d,
            (unsigned long long)index - 1);
    }
}

void
cli_audit_times_leaf(struct cli_audit_times *t, uint64_t index,
                     const char *leaf, size_t len)
{
    int64_t when = NO_TIME;

    if (audit_leaf_time(leaf, len, &when) != IG_OK)
        when = NO_TIME;
    t->leaves++;
    step(t, index, when);
    if (when != NO_TIME) {
        t->prev = when;
        if (t->first == NO_TIME)
            t->first = when;
        t->last = when;
    }
    if (t->cp_have && index == t->cp_from)
        t->from_time = when;
    if (t->cp_have && index + 1 == t->cp_size) {
        late_checkpoint(t);
        next_checkpoint(t);
    }
    /* The oldest unsigned leaf; one without a time is the oldest. */
    if (index < t->o.signed_size)
        return;
    if (when != NO_TIME && !t->future_seen &&
        when > t->o.at + IG_AUDIT_UNSIGNED_MARGIN) {
        t->future_seen = 1;
        t->future_index = index;
        t->future_time = when;
    }
    if (!t->unsigned_seen ||
        (t->old_time != NO_TIME && (when == NO_TIME || when < t->old_time))) {
        t->old_index = index;
        t->old_time = when;
    }
    t->unsigned_seen = 1;
}

int
cli_audit_times_report(const struct cli_audit_times *t, char *why, size_t cap)
{
    char a[IG_TIME_STRLEN + 1], b[IG_TIME_STRLEN + 1];
    int64_t age;

    if (t->first != NO_TIME) {
        fmt_time(t->first, a);
        fmt_time(t->last, b);
        (void)printf("times:       %s to %s\n", a, b);
    }
    print_findings("gap:", &t->gaps);
    print_findings("backwards:", &t->back);
    print_findings("late:", &t->late);
    if (!t->unsigned_seen)
        return 0;
    fmt_time(t->old_time, a);
    age = t->old_time == NO_TIME ? INT64_MAX : t->o.at - t->old_time;
    if (age <= allowed(t) && t->future_seen) {
        fmt_time(t->future_time, a);
        (void)snprintf(why, cap,
                       "leaf %llu (%s) is not covered by a checkpoint and "
                       "is dated after the time of the check: not a time "
                       "the PDP wrote",
                       (unsigned long long)t->future_index, a);
        (void)printf("unsigned:    leaf %llu (%s) is dated after the time "
                     "of the check\n",
                     (unsigned long long)t->future_index, a);
        return 1;
    }
    if (age <= allowed(t))
        return 0;
    (void)snprintf(why, cap,
                   "leaf %llu (%s) is not covered by a checkpoint %s; the PDP "
                   "signs within checkpoint_interval %lld s + %d s",
                   (unsigned long long)t->old_index, a,
                   age == INT64_MAX ? "and its time cannot be read"
                                    : "long after it was logged",
                   (long long)t->o.interval, IG_AUDIT_UNSIGNED_MARGIN);
    if (age != INT64_MAX)
        (void)printf("unsigned:    leaf %llu (%s) has waited %lld s for a "
                     "checkpoint, over %lld s\n",
                     (unsigned long long)t->old_index, a, (long long)age,
                     (long long)allowed(t));
    else
        (void)printf("unsigned:    leaf %llu has no readable time\n",
                     (unsigned long long)t->old_index);
    return 1;
}

void
cli_audit_times_free(struct cli_audit_times *t)
{
    if (t == NULL)
        return;
    free(t);
}
