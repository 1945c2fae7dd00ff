/*
 * cmd_audit_show.c - `intentgate audit show INTENT_ID --db FILE`: one
 * intent's story as the audit log tells it, for a human.
 *
 * The events are found by their canonical text (every event of an intent
 * carries "intent_id":"<id>"; a vote refused on Slack only names the
 * approval, so the approval's id is searched too), parsed, and checked to
 * really name the intent at top level. The first intent.received gives
 * who asked and what exactly; then one block per event in log order. Only
 * leaves are read: this is what the log proves (see `audit verify`), not
 * the PDP's other tables. Every string is untrusted text and goes through
 * the terminal-safe escaper of cli_show.h.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_show.h"
#include "cmd_audit_int.h"
#include "ig_canon.h"
#include "ig_json.h"

#define INDENT 28 /* column of an event's description */

static const char show_usage[] =
    "usage: intentgate audit show INTENT_ID --db FILE|URL\n"
    "\n"
    "Print the timeline of one intent from the audit log's leaves: who asked\n"
    "(principal, tenant), what exactly (action, resource, params, context),\n"
    "which policy revision decided what and why (and which policy file\n"
    "returned which verdict: the trace), each vote (who, when,\n"
    "comment, channel), the resolution, the grant (jti, audience, expiry),\n"
    "its redemption and the execution's outcome. Each line starts with the\n"
    "event's leaf index, which `audit proof` takes.\n"
    "\n"
    "  --db FILE|URL  the PDP's SQLite database or PostgreSQL URL (read-only)\n"
    "\n"
    "Text from agents is shown with control and invisible characters\n"
    "escaped (\\uXXXX). This reads the leaves without verifying them: run\n"
    "`intentgate audit verify` for that. Exit 1 when the log holds no event\n"
    "of the intent.\n";

/* A writer with a sticky status (see approval/appr_html_int.h). */
struct sw {
    struct ig_buf *b;
    enum ig_status st;
};

static void
sw_raw(struct sw *w, const char *s)
{
    if (w->st == IG_OK)
        w->st = ig_buf_adds(w->b, s);
}

/* A string as safe text, a number canonical, other values as JSON. */
static void
sw_value(struct sw *w, const json_t *v)
{
    char num[IG_NUMBER_STRMAX];

    if (w->st != IG_OK)
        return;
    if (json_is_string(v))
        w->st =
            cli_text_safe(w->b, json_string_value(v), json_string_length(v));
    else if (json_is_number(v) &&
             ig_canon_number(json_number_value(v), num, NULL) == IG_OK)
        w->st = ig_buf_adds(w->b, num);
    else if (v == NULL)
        w->st = ig_buf_adds(w->b, "-");
    else
        w->st = cli_json_pretty(w->b, v, INDENT);
}

static void
sw_field(struct sw *w, const json_t *o, const char *k)
{
    sw_value(w, json_object_get(o, k));
}

/* One piece of a description: text, then the value of key. */
struct sw_part {
    const char *text, *key;
};

#define NPARTS(a) (sizeof(a) / sizeof((a)[0]))

/* The n pieces of p, the values read from o. */
static void
sw_parts(struct sw *w, const json_t *o, const struct sw_part *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        sw_raw(w, p[i].text);
        sw_field(w, o, p[i].key);
    }
}

static void
sw_json(struct sw *w, const json_t *v, int indent)
{
    if (w->st == IG_OK)
        w->st = cli_json_pretty(w->b, v, indent);
}

static void
sw_pad(struct sw *w, size_t from, size_t to)
{
    for (; from < to; from++)
        sw_raw(w, " ");
}

/* A new line indented to the description column. */
static void
sw_cont(struct sw *w)
{
    sw_raw(w, "\n");
    sw_pad(w, 0, INDENT);
}

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* "a, b, c" for an array of values. */
static void
sw_list(struct sw *w, const json_t *arr)
{
    size_t i;

    if (json_array_size(arr) == 0) {
        sw_raw(w, "none");
        return;
    }
    for (i = 0; i < json_array_size(arr); i++) {
        if (i > 0)
            sw_raw(w, ", ");
        sw_value(w, json_array_get(arr, i));
    }
}

/* ---- the header: who asked what ---- */

static void
sw_label(struct sw *w, const char *label)
{
    sw_raw(w, label);
    sw_pad(w, strlen(label), 13);
}

static void
header(struct sw *w, const char *id, const json_t *received)
{
    static const char *const fields[][2] = {
        {"Action", "action"},      {"Resource", "resource"},
        {"Params", "params"},      {"Context", "context"},
        {"Created", "created_at"}, {"Expires", "expires_at"}};
    static const struct sw_part who[] = {{"", "principal"},
                                         {" (tenant ", "tenant"}};
    const json_t *intent = json_object_get(received, "intent");
    size_t i;

    sw_label(w, "Intent");
    sw_raw(w, id);
    sw_raw(w, "\n");
    if (received == NULL) {
        sw_raw(w, "(the log holds no intent.received event for it)\n\n");
        return;
    }
    sw_label(w, "Principal");
    sw_parts(w, received, who, NPARTS(who));
    sw_raw(w, ")\n");
    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (json_object_get(intent, fields[i][1]) == NULL)
            continue;
        sw_label(w, fields[i][0]);
        if (json_is_object(json_object_get(intent, fields[i][1])) ||
            json_is_array(json_object_get(intent, fields[i][1])))
            sw_json(w, json_object_get(intent, fields[i][1]), 13);
        else
            sw_field(w, intent, fields[i][1]);
        sw_raw(w, "\n");
    }
    sw_label(w, "Intent hash");
    sw_field(w, received, "intent_hash");
    sw_raw(w, "\n\nTimeline (leaf index, time, event):\n");
}

/* ---- one line per event ---- */

/*
 * The explain trace: one line per policy that had an opinion, in the
 * order they ran, "  git.lua  ESCALATE  PROTECTED_BRANCH" (columns
 * aligned; names and reasons are the log's text, shown safe).
 */
static void
trace_lines(struct sw *w, const json_t *trace)
{
    size_t i, j, n, width = 0, vwidth = 0;
    const json_t *x, *reasons;

    json_array_foreach(trace, i, x)
    {
        n = json_string_length(json_object_get(x, "policy"));
        width = n > width && n <= 64 ? n : width;
        n = json_string_length(json_object_get(x, "verdict"));
        vwidth = n > vwidth && n <= 16 ? n : vwidth;
    }
    sw_cont(w);
    sw_raw(w, json_array_size(trace) == 0 ? "trace: no policy had an opinion"
                                          : "trace:");
    json_array_foreach(trace, i, x)
    {
        sw_cont(w);
        sw_raw(w, "  ");
        sw_field(w, x, "policy");
        sw_pad(w, json_string_length(json_object_get(x, "policy")), width);
        sw_raw(w, "  ");
        sw_field(w, x, "verdict");
        reasons = json_object_get(x, "reasons");
        if (json_array_size(reasons) == 0)
            continue;
        sw_pad(w, json_string_length(json_object_get(x, "verdict")), vwidth);
        sw_raw(w, "  ");
        for (j = 0; j < json_array_size(reasons); j++) {
            if (j > 0)
                sw_raw(w, ", ");
            sw_value(w, json_array_get(reasons, j));
        }
    }
}

static void
decided(struct sw *w, const json_t *ev)
{
    const json_t *grant = json_object_get(ev, "grant");
    const json_t *appr = json_object_get(ev, "approval");
    const json_t *req = json_object_get(appr, "requirements");
    static const struct sw_part decision[] = {
        {"", "decision"}, {" by policy revision ", "policy_revision"}};
    static const struct sw_part granted[] = {
        {"grant ", "jti"}, {" for ", "audience"}, {", expires ", "expires_at"}};

    sw_parts(w, ev, decision, NPARTS(decision));
    sw_cont(w);
    sw_raw(w, "reasons: ");
    sw_list(w, json_object_get(ev, "reasons"));
    if (jstr(ev, "message") != NULL && jstr(ev, "message")[0] != '\0') {
        sw_cont(w);
        sw_raw(w, "message: ");
        sw_field(w, ev, "message");
    }
    if (json_is_array(json_object_get(ev, "trace")))
        trace_lines(w, json_object_get(ev, "trace"));
    if (json_is_object(appr)) {
        sw_cont(w);
        sw_raw(w, "approval ");
        sw_field(w, appr, "approval_id");
        sw_raw(w, ": groups ");
        sw_list(w, json_object_get(req, "groups"));
        sw_raw(w, ", quorum ");
        sw_field(w, req, "quorum");
        sw_raw(w, ", decide by ");
        sw_field(w, appr, "expires_at");
    } else if (jstr(ev, "approval_id") != NULL) {
        sw_cont(w);
        sw_raw(w, "after approval ");
        sw_field(w, ev, "approval_id");
    }
    if (json_is_object(grant)) {
        sw_cont(w);
        sw_parts(w, grant, granted, NPARTS(granted));
    }
}

static void
voted(struct sw *w, const json_t *ev)
{
    static const struct sw_part vote[] = {
        {"", "vote"}, {" by ", "approver"}, {" via ", "channel"}};

    sw_parts(w, ev, vote, NPARTS(vote));
    if (json_string_length(json_object_get(ev, "comment")) > 0) {
        sw_cont(w);
        sw_raw(w, "comment: ");
        if (w->st == IG_OK)
            w->st = cli_json_quote(
                w->b, jstr(ev, "comment"),
                json_string_length(json_object_get(ev, "comment")));
    }
    sw_cont(w);
    sw_raw(w, "approved intent hash ");
    sw_field(w, ev, "intent_hash");
}

static void
refused(struct sw *w, const json_t *ev)
{
    sw_field(w, ev, "code");
    sw_raw(w, ": a vote by ");
    sw_value(w, jstr(ev, "approver") != NULL && jstr(ev, "approver")[0]
                    ? json_object_get(ev, "approver")
                    : json_object_get(ev, "slack_user"));
    sw_raw(w, " via ");
    sw_field(w, ev, "channel");
    sw_raw(w, " did not count");
}

static void
outcome(struct sw *w, const json_t *ev)
{
    static const struct sw_part reported[] = {{"", "outcome"},
                                              {" reported by ", "executor"}};

    sw_parts(w, ev, reported, NPARTS(reported));
    if (json_object_get(ev, "detail") != NULL &&
        !json_is_null(json_object_get(ev, "detail"))) {
        sw_cont(w);
        sw_raw(w, "detail: ");
        sw_json(w, json_object_get(ev, "detail"), INDENT + 8);
    }
}

/* Anything else: its fields but type and time, as JSON. */
static void
other(struct sw *w, const json_t *ev)
{
    json_t *rest = json_deep_copy(ev);

    if (rest == NULL) {
        w->st = IG_ERR_NOMEM;
        return;
    }
    (void)json_object_del(rest, "type");
    (void)json_object_del(rest, "time");
    sw_json(w, rest, INDENT);
    json_decref(rest);
}

static void
describe(struct sw *w, const char *type, const json_t *ev)
{
    static const struct sw_part received[] = {
        {"from ", "principal"},
        {" (tenant ", "tenant"},
        {"), intent hash ", "intent_hash"}};
    static const struct sw_part redeemed[] = {{"grant ", "jti"},
                                              {" by ", "executor"}};
    static const struct sw_part notified[] = {{"", "channel"}, {" ", "method"}};

    if (strcmp(type, "intent.received") == 0) {
        sw_parts(w, ev, received, NPARTS(received));
    } else if (strcmp(type, "intent.decided") == 0) {
        decided(w, ev);
    } else if (strcmp(type, "approval.voted") == 0) {
        voted(w, ev);
    } else if (strcmp(type, "approval.vote_refused") == 0) {
        refused(w, ev);
    } else if (strcmp(type, "approval.resolved") == 0) {
        sw_field(w, ev, "result");
    } else if (strcmp(type, "approval.notified") == 0) {
        sw_parts(w, ev, notified, NPARTS(notified));
        sw_raw(w,
               json_is_true(json_object_get(ev, "ok")) ? ": ok" : ": failed ");
        if (!json_is_true(json_object_get(ev, "ok")))
            sw_field(w, ev, "error");
    } else if (strcmp(type, "grant.redeemed") == 0) {
        sw_parts(w, ev, redeemed, NPARTS(redeemed));
    } else if (strcmp(type, "execution.outcome") == 0) {
        outcome(w, ev);
    } else {
        other(w, ev);
    }
}

static void
event_block(struct sw *w, uint64_t index, const json_t *ev)
{
    const char *type = jstr(ev, "type");
    char head[64];

    (void)snprintf(head, sizeof(head), "  %-6llu ", (unsigned long long)index);
    sw_raw(w, head);
    sw_field(w, ev, "time");
    sw_raw(w, "\n");
    sw_pad(w, 0, 9);
    sw_value(w, json_object_get(ev, "type"));
    sw_pad(w, 9 + (type != NULL ? strlen(type) : 1), INDENT - 1);
    sw_raw(w, " ");
    describe(w, type != NULL ? type : "", ev);
    sw_raw(w, "\n");
}

/* ---- finding the events ---- */

struct found {
    json_t *events; /* array of [index, event], log order */
    char approval_id[IG_ID_MAX + 1];
    int skip_if_intent; /* keep only events without an intent_id */
};

static enum ig_status
keep(void *ctx, uint64_t index, json_t *ev, struct ig_err *err)
{
    struct found *f = ctx;
    const char *got;

    if (f->skip_if_intent && json_object_get(ev, "intent_id") != NULL)
        return IG_OK;
    if (json_array_size(f->events) >= IG_AUDIT_CLI_SHOW_EVENTS_MAX)
        return ig_err_set(err, IG_ERR_LIMIT, "more than %d events",
                          IG_AUDIT_CLI_SHOW_EVENTS_MAX);
    /* "o" steals the new reference to ev. */
    if (json_array_append_new(f->events, json_pack("[I, o]", (json_int_t)index,
                                                   json_incref(ev))) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    got = jstr(json_object_get(ev, "approval"), "approval_id");
    if (got != NULL && strlen(got) <= IG_ID_MAX)
        (void)snprintf(f->approval_id, sizeof(f->approval_id), "%s", got);
    return IG_OK;
}

/* Events whose top-level key is value (skip_if_intent: only those
   without an intent_id). */
static enum ig_status
collect(struct store_log *db, const char *key, const char *value,
        int skip_if_intent, struct found *f, struct ig_err *err)
{
    f->skip_if_intent = skip_if_intent;
    return cli_audit_db_events(db, key, value, keep, f, err);
}

static int
by_index(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_array_get(*(json_t *const *)a, 0));
    json_int_t y = json_integer_value(json_array_get(*(json_t *const *)b, 0));

    return x < y ? -1 : x > y;
}

/* Sort f->events by leaf index (the approval's extra events merged). */
static enum ig_status
sort_events(struct found *f)
{
    size_t n = json_array_size(f->events), i;
    json_t **v = malloc((n + 1) * sizeof(*v)), *sorted = json_array();
    enum ig_status st = IG_OK;

    if (v == NULL || sorted == NULL) {
        st = IG_ERR_NOMEM;
        goto out;
    }
    for (i = 0; i < n; i++)
        v[i] = json_array_get(f->events, i);
    qsort(v, n, sizeof(*v), by_index);
    for (i = 0; i < n && st == IG_OK; i++)
        if (json_array_append(sorted, v[i]) != 0)
            st = IG_ERR_NOMEM;
    if (st == IG_OK) {
        json_decref(f->events);
        f->events = sorted;
        sorted = NULL;
    }
out:
    json_decref(sorted);
    free(v);
    return st;
}

static int
print_timeline(const char *cmd, const char *id, const struct found *f)
{
    const json_t *received = NULL, *pair;
    struct ig_buf b;
    struct sw w;
    size_t i;
    int rc = CLI_EXIT_OK;

    json_array_foreach(f->events, i, pair)
    {
        const json_t *ev = json_array_get(pair, 1);
        const char *t = jstr(ev, "type");
        if (received == NULL && t != NULL && strcmp(t, "intent.received") == 0)
            received = ev;
    }
    ig_buf_init(&b, IG_AUDIT_CLI_SHOW_EVENT_MAX);
    w.b = &b;
    w.st = IG_OK;
    header(&w, id, received);
    json_array_foreach(f->events, i, pair)
    {
        if (w.st == IG_OK &&
            cli_audit_write(stdout, b.data != NULL ? b.data : "", b.len) != 0)
            break;
        ig_buf_reset(&b);
        event_block(&w, (uint64_t)json_integer_value(json_array_get(pair, 0)),
                    json_array_get(pair, 1));
    }
    if (w.st != IG_OK) {
        cli_error(cmd, "cannot print the timeline: %s", ig_strerror(w.st));
        rc = CLI_EXIT_FAIL;
    } else if (cli_audit_write(stdout, b.data != NULL ? b.data : "", b.len) !=
                   0 ||
               fflush(stdout) != 0) {
        cli_error(cmd, "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    }
    ig_buf_release(&b);
    return rc;
}

static int
id_shaped(const char *s)
{
    size_t n = strlen(s);

    return n > 0 && n <= IG_ID_MAX &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789-_") == n;
}

int
cli_audit_show(int argc, char **argv)
{
    const char *db_path = NULL, *id = NULL;
    struct found f = {NULL, "", 0};
    struct store_log *db = NULL;
    struct ig_err err;
    enum ig_status st;
    int i, r, rc;

    if (cli_audit_help(argc, argv, show_usage))
        return CLI_EXIT_OK;
    for (i = 1; i < argc; i++) {
        if ((r = cli_audit_opt(argv[0], argc, argv, &i, "--db", &db_path)) < 0)
            return CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        if (argv[i][0] == '-' || id != NULL) {
            cli_error(argv[0], "unexpected argument %s (see --help)", argv[i]);
            return CLI_EXIT_USAGE;
        }
        id = argv[i];
    }
    if (id == NULL || db_path == NULL) {
        cli_error(argv[0], "usage: audit show INTENT_ID --db FILE");
        return CLI_EXIT_USAGE;
    }
    if (!id_shaped(id)) {
        cli_error(argv[0], "'%s' is not an intent id", id);
        return CLI_EXIT_USAGE;
    }
    ig_err_clear(&err);
    if ((f.events = json_array()) == NULL) {
        cli_error(argv[0], "out of memory");
        return CLI_EXIT_FAIL;
    }
    if ((st = store_log_open(db_path, &db, &err)) != IG_OK ||
        (st = collect(db, "intent_id", id, 0, &f, &err)) != IG_OK ||
        (f.approval_id[0] != '\0' &&
         (st = collect(db, "approval_id", f.approval_id, 1, &f, &err)) !=
             IG_OK) ||
        (st = sort_events(&f)) != IG_OK) {
        cli_error(argv[0], "%s",
                  st == IG_ERR_NOMEM && err.msg[0] == '\0' ? "out of memory"
                                                           : err.msg);
        rc = cli_audit_exit(st);
    } else if (json_array_size(f.events) == 0) {
        cli_error(argv[0], "the log holds no event of intent %s", id);
        rc = CLI_EXIT_FAIL;
    } else {
        rc = print_timeline(argv[0], id, &f);
    }
    json_decref(f.events);
    store_log_close(db);
    return rc;
}
