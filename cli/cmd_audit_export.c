/*
 * cmd_audit_export.c - `intentgate audit export`: the log's leaves for a
 * reviewer's own tools, as JSONL (byte for byte: the leaves themselves) or
 * CSV (one row an event, the fields a spreadsheet filters on), optionally
 * filtered, and the signed checkpoints as JSONL beside them.
 *
 * Only intent.received names the principal, action and resource of an
 * intent; the later events of the intent name only its id. So when rows
 * need those columns, or a filter needs them or the intent's decisions, a
 * first pass reads the intent.received and intent.decided events into a
 * table sorted by intent id, and the main pass looks each event's intent
 * up in it. An unfiltered JSONL export copies the leaves without parsing
 * them. All passes read one snapshot (one read transaction).
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_audit_int.h"
#include "ig_canon.h"
#include "ig_json.h"
#include "ig_time.h"

static const char export_usage[] =
    "usage: intentgate audit export --db FILE|URL [--format jsonl|csv]\n"
    "           [--since TIME] [--until TIME] [--principal P] [--action A]\n"
    "           [--decision D] [--type T] [--checkpoints-out FILE]\n"
    "\n"
    "Write the audit log's events on standard output, oldest first.\n"
    "\n"
    "  --format jsonl   one leaf a line, byte for byte (default)\n"
    "  --format csv     RFC 4180: seq,time,type,intent_id,principal,action,\n"
    "                   resource,decision,reasons; a cell starting with\n"
    "                   = + - @ (or tab, CR) gets a leading ' so a\n"
    "                   spreadsheet does not run it as a formula\n"
    "  --since TIME     events at or after TIME (YYYY-MM-DDTHH:MM:SSZ or\n"
    "                   YYYY-MM-DD)\n"
    "  --until TIME     events before TIME\n"
    "  --principal P    events of intents asked by P (and approver events\n"
    "                   of approver P)\n"
    "  --action A       events of intents for action A (A ending in '.':\n"
    "                   every action starting with A)\n"
    "  --decision D     events of intents decided D at least once (ALLOW,\n"
    "                   ESCALATE, BLOCK)\n"
    "  --type T         events of type T (intent.decided, ...)\n"
    "  --checkpoints-out FILE\n"
    "                   also write every signed checkpoint to FILE, one\n"
    "                   JSON object {\"size\":N,\"note\":\"...\"} a line\n"
    "\n"
    "An unfiltered JSONL export with its checkpoints verifies offline:\n"
    "  intentgate audit verify --leaves L.jsonl --checkpoints C.jsonl --key "
    "KEY\n"
    "A filtered export is a subset of the leaves and does not verify.\n";

struct export_args {
    const char *db, *format, *since, *until, *principal, *action, *decision;
    const char *type, *checkpoints_out;
    int64_t t_since, t_until;
    int csv, filtered, need_map;
};

/* What the first pass learns of an intent. */
struct intent_info {
    char id[IG_ID_MAX + 1];
    char *principal, *action, *resource;
    unsigned decisions; /* bit per decision name, see decision_bit */
};

struct intents {
    struct intent_info *v;
    size_t n, cap;
};

static unsigned
decision_bit(const char *d)
{
    if (d == NULL)
        return 0;
    if (strcmp(d, "ALLOW") == 0)
        return 1;
    if (strcmp(d, "ESCALATE") == 0)
        return 2;
    if (strcmp(d, "BLOCK") == 0)
        return 4;
    return 0;
}

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void
intents_release(struct intents *t)
{
    size_t i;

    for (i = 0; i < t->n; i++) {
        free(t->v[i].principal);
        free(t->v[i].action);
        free(t->v[i].resource);
    }
    free(t->v);
}

static char *
dup_or_empty(const char *s)
{
    return strdup(s != NULL ? s : "");
}

static enum ig_status
intents_add(struct intents *t, const json_t *ev)
{
    const json_t *b = json_object_get(ev, "intent");
    const char *id = jstr(ev, "intent_id");
    struct intent_info *e, *v;

    if (id == NULL || strlen(id) > IG_ID_MAX)
        return IG_OK;
    if (t->n == t->cap) {
        t->cap = t->cap != 0 ? t->cap * 2 : 1024;
        if ((v = realloc(t->v, t->cap * sizeof(*v))) == NULL)
            return IG_ERR_NOMEM;
        t->v = v;
    }
    e = &t->v[t->n];
    memset(e, 0, sizeof(*e));
    (void)snprintf(e->id, sizeof(e->id), "%s", id);
    e->principal = dup_or_empty(jstr(ev, "principal"));
    e->action = dup_or_empty(jstr(b, "action"));
    e->resource = dup_or_empty(jstr(b, "resource"));
    t->n++;
    return e->principal != NULL && e->action != NULL && e->resource != NULL
               ? IG_OK
               : IG_ERR_NOMEM;
}

static int
info_cmp(const void *a, const void *b)
{
    return strcmp(((const struct intent_info *)a)->id,
                  ((const struct intent_info *)b)->id);
}

static struct intent_info *
intents_find(const struct intents *t, const char *id)
{
    struct intent_info key;

    if (id == NULL || strlen(id) > IG_ID_MAX || t->n == 0)
        return NULL;
    (void)snprintf(key.id, sizeof(key.id), "%s", id);
    return bsearch(&key, t->v, t->n, sizeof(*t->v), info_cmp);
}

static enum ig_status
on_received(void *ctx, uint64_t index, json_t *ev, struct ig_err *err)
{
    (void)index;
    (void)err;
    return intents_add(ctx, ev);
}

static enum ig_status
on_decided(void *ctx, uint64_t index, json_t *ev, struct ig_err *err)
{
    struct intent_info *info = intents_find(ctx, jstr(ev, "intent_id"));
    (void)index;
    (void)err;

    if (info != NULL)
        info->decisions |= decision_bit(jstr(ev, "decision"));
    return IG_OK;
}

/* One pass over the events of a type: intent.received adds,
   intent.decided marks. */
static enum ig_status
intents_pass(struct store_log *db, struct intents *t, const char *type,
             struct ig_err *err)
{
    int received = strcmp(type, "intent.received") == 0;
    enum ig_status st;

    st = cli_audit_db_events(db, "type", type,
                             received ? on_received : on_decided, t, err);
    if (st != IG_OK && err->msg[0] == '\0')
        (void)ig_err_set(err, st, "reading intents: %s", ig_strerror(st));
    if (st == IG_OK && received)
        qsort(t->v, t->n, sizeof(*t->v), info_cmp);
    return st;
}

/* ---- one event's row ---- */

struct row {
    const char *time, *type, *intent_id, *principal, *action, *resource;
    const char *decision;
    const json_t *reasons; /* array, or a string (a refusal's code) */
    const struct intent_info *info;
};

static const char *
first_of(const char *a, const char *b)
{
    return a != NULL ? a : b;
}

static void
row_of(const json_t *ev, const struct intents *t, struct row *r)
{
    memset(r, 0, sizeof(*r));
    r->time = jstr(ev, "time");
    r->type = jstr(ev, "type");
    r->intent_id = jstr(ev, "intent_id");
    r->info = intents_find(t, r->intent_id);
    /* auth.failed names {id, role}; approver events their approver. */
    r->principal =
        first_of(first_of(jstr(ev, "principal"),
                          jstr(json_object_get(ev, "principal"), "id")),
                 r->info != NULL ? r->info->principal : jstr(ev, "approver"));
    r->action = r->info != NULL ? r->info->action : jstr(ev, "action");
    r->resource = r->info != NULL ? r->info->resource : jstr(ev, "resource");
    r->decision =
        first_of(jstr(ev, "decision"),
                 first_of(jstr(ev, "vote"),
                          first_of(jstr(ev, "result"), jstr(ev, "outcome"))));
    r->reasons = json_object_get(ev, "reasons");
    if (r->reasons == NULL)
        r->reasons = json_object_get(ev, "code");
}

static int
same(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int
keep(const struct export_args *a, const struct row *r)
{
    int64_t t;
    size_t n;

    if ((a->since != NULL || a->until != NULL) &&
        (r->time == NULL ||
         ig_time_parse(r->time, strlen(r->time), &t) != IG_OK ||
         (a->since != NULL && t < a->t_since) ||
         (a->until != NULL && t >= a->t_until)))
        return 0;
    if (a->type != NULL && !same(a->type, r->type))
        return 0;
    if (a->principal != NULL && !same(a->principal, r->principal))
        return 0;
    if (a->action != NULL) {
        n = strlen(a->action);
        if (r->action == NULL ||
            (a->action[n - 1] == '.' ? strncmp(r->action, a->action, n) != 0
                                     : strcmp(r->action, a->action) != 0))
            return 0;
    }
    if (a->decision != NULL &&
        (r->info == NULL ||
         (r->info->decisions & decision_bit(a->decision)) == 0))
        return 0;
    return 1;
}

/* ---- CSV ---- */

static int
csv_cell(FILE *f, const char *s, size_t n, int last)
{
    int quote = 0;
    size_t i;

    if (s == NULL)
        n = 0;
    for (i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
            quote = 1;
    if (quote && fputc('"', f) == EOF)
        return -1;
    /* A formula for a spreadsheet would run: make it text. */
    if (n > 0 && strchr("=+-@\t\r", s[0]) != NULL && fputc('\'', f) == EOF)
        return -1;
    for (i = 0; i < n; i++)
        if ((s[i] == '"' && fputc('"', f) == EOF) || fputc(s[i], f) == EOF)
            return -1;
    if (quote && fputc('"', f) == EOF)
        return -1;
    return fputs(last ? "\r\n" : ",", f) == EOF ? -1 : 0;
}

static int
csv_str(FILE *f, const char *s, int last)
{
    return csv_cell(f, s, s != NULL ? strlen(s) : 0, last);
}

/* Reasons joined by "; " (or a refusal's code). */
static int
csv_reasons(FILE *f, const json_t *reasons)
{
    char cell[IG_AUDIT_CLI_REASONS_MAX];
    size_t i, used = 0;
    int n;

    cell[0] = '\0';
    if (json_is_string(reasons))
        return csv_str(f, json_string_value(reasons), 1);
    for (i = 0; i < json_array_size(reasons); i++) {
        const char *s = json_string_value(json_array_get(reasons, i));
        n = snprintf(cell + used, sizeof(cell) - used, "%s%s",
                     i > 0 ? "; " : "", s != NULL ? s : "?");
        if (n < 0 || (size_t)n >= sizeof(cell) - used)
            break;
        used += (size_t)n;
    }
    return csv_cell(f, cell, used, 1);
}

static int
csv_row(FILE *f, int64_t seq, const struct row *r)
{
    char num[32];

    (void)snprintf(num, sizeof(num), "%lld", (long long)seq);
    return csv_str(f, num, 0) != 0 || csv_str(f, r->time, 0) != 0 ||
                   csv_str(f, r->type, 0) != 0 ||
                   csv_str(f, r->intent_id, 0) != 0 ||
                   csv_str(f, r->principal, 0) != 0 ||
                   csv_str(f, r->action, 0) != 0 ||
                   csv_str(f, r->resource, 0) != 0 ||
                   csv_str(f, r->decision, 0) != 0 ||
                   csv_reasons(f, r->reasons) != 0
               ? -1
               : 0;
}

/* ---- the main pass ---- */

/* One event: a line of JSONL or CSV, when it passes the filters. */
static enum ig_status
export_one(const struct export_args *a, const struct intents *t,
           const struct store_log_row *row, struct ig_err *err)
{
    const char *text = row->data;
    size_t n = row->len;
    json_t *ev;
    struct row r;
    int werr = 0;

    if (text == NULL || memchr(text, '\n', n) != NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the event at seq %lld is not one line of JSON: "
                          "the log was altered (run `audit verify`)",
                          (long long)row->key);
    if (!a->filtered && !a->csv)
        return cli_audit_write(stdout, text, n) != 0 ||
                       fputc('\n', stdout) == EOF
                   ? IG_ERR_IO
                   : IG_OK;
    if (ig_json_parse(text, n, &ev, NULL) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the event at seq %lld is not JSON: the log was "
                          "altered (run `audit verify`)",
                          (long long)row->key);
    row_of(ev, t, &r);
    if (keep(a, &r))
        werr = a->csv ? csv_row(stdout, row->key, &r) != 0
                      : cli_audit_write(stdout, text, n) != 0 ||
                            fputc('\n', stdout) == EOF;
    json_decref(ev);
    return werr ? IG_ERR_IO : IG_OK;
}

static enum ig_status
export_events(struct store_log *db, const struct export_args *a,
              const struct intents *t, struct ig_err *err)
{
    struct store_log_cursor *c;
    struct store_log_row row;
    enum ig_status st = IG_OK;

    if ((st = store_log_scan(db, STORE_LOG_EVENTS, NULL, &c, err)) != IG_OK)
        return st;
    if (a->csv && fputs("seq,time,type,intent_id,principal,action,resource,"
                        "decision,reasons\r\n",
                        stdout) == EOF)
        st = IG_ERR_IO;
    while (st == IG_OK && (st = store_log_next(c, &row, err)) == IG_OK)
        st = export_one(a, t, &row, err);
    store_log_cursor_free(c);
    if (st == IG_ERR_NOTFOUND)
        st = fflush(stdout) == 0 ? IG_OK : IG_ERR_IO;
    if (st == IG_ERR_IO && err->msg[0] == '\0')
        st = ig_err_set(err, IG_ERR_IO, "cannot write to standard output");
    return st;
}

static enum ig_status
write_checkpoints(struct store_log *db, const char *path, struct ig_err *err)
{
    struct cli_audit_notes ns;
    struct ig_buf line;
    FILE *f = NULL;
    json_t *v;
    enum ig_status st;
    size_t i;

    cli_audit_notes_init(&ns);
    ig_buf_init(&line, 4 * (size_t)AUDIT_NOTE_MAX);
    if ((st = cli_audit_notes_read_db(&ns, db, err)) != IG_OK)
        goto out;
    if ((f = fopen(path, "w")) == NULL) {
        st = ig_err_set(err, IG_ERR_INVALID, "cannot create %s: %s", path,
                        strerror(errno));
        goto out;
    }
    for (i = 0; i < ns.n && st == IG_OK; i++) {
        ig_buf_reset(&line);
        v = json_pack("{s:I, s:s%}", "size", (json_int_t)ns.size[i], "note",
                      ns.note[i], ns.len[i]);
        st = v != NULL ? ig_canon_write(v, &line, err) : IG_ERR_NOMEM;
        json_decref(v);
        if (st == IG_OK && (cli_audit_write(f, line.data, line.len) != 0 ||
                            fputc('\n', f) == EOF))
            st = IG_ERR_IO;
    }
    if (fclose(f) != 0 && st == IG_OK)
        st = IG_ERR_IO;
    if (st != IG_OK)
        (void)ig_err_set(err, st, "writing %s: %s", path,
                         st == IG_ERR_IO ? strerror(errno) : ig_strerror(st));
out:
    ig_buf_release(&line);
    cli_audit_notes_release(&ns);
    return st;
}

/* ---- arguments ---- */

static int
export_args(int argc, char **argv, struct export_args *a)
{
    const char *cmd = argv[0];
    int i, r;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
#define OPT(name, field)                                                       \
    if ((r = cli_audit_opt(cmd, argc, argv, &i, name, &a->field)) != 0) {      \
        if (r < 0)                                                             \
            return -1;                                                         \
        continue;                                                              \
    }
        OPT("--db", db)
        OPT("--format", format)
        OPT("--since", since)
        OPT("--until", until)
        OPT("--principal", principal)
        OPT("--action", action)
        OPT("--decision", decision)
        OPT("--type", type)
        OPT("--checkpoints-out", checkpoints_out)
#undef OPT
        cli_error(cmd, "unexpected argument %s (see --help)", argv[i]);
        return -1;
    }
    if (a->db == NULL) {
        cli_error(cmd, "missing --db FILE|URL (see --help)");
        return -1;
    }
    if (a->format != NULL && strcmp(a->format, "jsonl") != 0 &&
        strcmp(a->format, "csv") != 0) {
        cli_error(cmd, "--format %s: expected jsonl or csv", a->format);
        return -1;
    }
    if (a->decision != NULL && decision_bit(a->decision) == 0) {
        cli_error(cmd, "--decision %s: expected ALLOW, ESCALATE or BLOCK",
                  a->decision);
        return -1;
    }
    if ((a->action != NULL && a->action[0] == '\0') ||
        (a->principal != NULL && a->principal[0] == '\0') ||
        (a->type != NULL && a->type[0] == '\0')) {
        cli_error(cmd, "an empty filter matches nothing");
        return -1;
    }
    if (cli_audit_time_arg(cmd, "--since", a->since, &a->t_since) != 0 ||
        cli_audit_time_arg(cmd, "--until", a->until, &a->t_until) != 0)
        return -1;
    a->csv = a->format != NULL && strcmp(a->format, "csv") == 0;
    a->filtered = a->since != NULL || a->until != NULL ||
                  a->principal != NULL || a->action != NULL ||
                  a->decision != NULL || a->type != NULL;
    a->need_map = a->csv || a->principal != NULL || a->action != NULL ||
                  a->decision != NULL;
    return 0;
}

int
cli_audit_export(int argc, char **argv)
{
    struct export_args a;
    struct intents t = {NULL, 0, 0};
    struct store_log *db = NULL;
    struct ig_err err;
    enum ig_status st;

    if (cli_audit_help(argc, argv, export_usage))
        return CLI_EXIT_OK;
    if (export_args(argc, argv, &a) != 0)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    if ((st = store_log_open(a.db, &db, &err)) == IG_OK && a.need_map)
        st = intents_pass(db, &t, "intent.received", &err);
    if (st == IG_OK && a.decision != NULL)
        st = intents_pass(db, &t, "intent.decided", &err);
    if (st == IG_OK)
        st = export_events(db, &a, &t, &err);
    if (st == IG_OK && a.checkpoints_out != NULL)
        st = write_checkpoints(db, a.checkpoints_out, &err);
    if (st == IG_OK && a.filtered && a.checkpoints_out != NULL)
        cli_error(argv[0], "note: a filtered export is a subset of the log "
                           "and does not verify against its checkpoints");
    if (st != IG_OK)
        cli_error(argv[0], "%s", err.msg);
    intents_release(&t);
    store_log_close(db);
    return cli_audit_exit(st);
}
