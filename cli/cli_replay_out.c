/*
 * cli_replay_out.c - the report of `intentgate policy replay`
 * (cli_replay.h): counts by kind, a table of changes by (action, from ->
 * to), one by reason gained or lost, and the changed decisions, in one of
 * three formats.
 *
 * - text: the summary and tables first, then the changed decisions; those
 *   are kept in a temporary file meanwhile (a million of them is not held
 *   in memory).
 * - json: one object, written as it goes: "changes" first (each with the
 *   new decision's trace), then "summary", "by_action", "by_reason",
 *   "unreadable".
 * - csv: one line per changed decision after a header line, every field
 *   quoted (RFC 4180), one that starts with = + - or @ behind a ' (a
 *   spreadsheet would run it as a formula).
 *
 * Every text that came from an agent or the database (intent ids,
 * actions, resources, the row errors) goes through cli_show.h's escapers:
 * no control, bidi or invisible character reaches a terminal, and
 * malformed UTF-8 shows as U+FFFD. The tables are counting maps
 * (cli_replay_tally.c).
 */
#include "cli_replay.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_show.h"
#include "ig_buf.h"
#include "ig_time.h"

#define UNREADABLE_KEPT 100 /* rows listed; the rest only counted */
#define LINE_MAX_BYTES (1u << 20)

/* ---- the report ---- */

struct replay_report {
    enum replay_format fmt;
    FILE *out, *changes; /* changes: text's temporary file */
    char *db, *bundle, *revision;
    uint64_t count[REPLAY_NKINDS];
    struct replay_tally by_action; /* "action\037FROM\037TO" */
    struct replay_tally by_reason; /* "+CODE" gained, "-CODE" lost */
    struct {
        int64_t seq;
        char why[256];
    } unread[UNREADABLE_KEPT];
    size_t nunread;
    struct ig_buf line;
    int failed;
};

static int
emit(struct replay_report *rp, FILE *f)
{
    if (rp->line.len > 0 &&
        fwrite(rp->line.data, 1, rp->line.len, f) != rp->line.len)
        rp->failed = 1;
    ig_buf_reset(&rp->line);
    return rp->failed ? -1 : 0;
}

/* Append text s safely (cli_show.h): quoted JSON for json, else plain. */
static enum ig_status
add_text(struct replay_report *rp, const char *s)
{
    if (s == NULL)
        s = "";
    if (rp->fmt == REPLAY_JSON)
        return cli_json_quote(&rp->line, s, strlen(s));
    return cli_text_safe(&rp->line, s, strlen(s));
}

/* CSV: one field, quoted, '"' doubled; then sep. */
static enum ig_status
add_csv(struct replay_report *rp, const char *s, char sep)
{
    struct ig_buf tmp;
    enum ig_status st;
    size_t i;

    ig_buf_init(&tmp, LINE_MAX_BYTES);
    st = cli_text_safe(&tmp, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
    if (st == IG_OK)
        st = ig_buf_addc(&rp->line, '"');
    /* A spreadsheet reads a field starting with one of these as a formula,
       quoted or not (OWASP's CSV injection): a leading ' makes it text. */
    if (st == IG_OK && tmp.len > 0 && strchr("=+-@", tmp.data[0]) != NULL)
        st = ig_buf_addc(&rp->line, '\'');
    for (i = 0; st == IG_OK && i < tmp.len; i++)
        st = tmp.data[i] == '"' ? ig_buf_adds(&rp->line, "\"\"")
                                : ig_buf_addc(&rp->line, tmp.data[i]);
    if (st == IG_OK)
        st = ig_buf_addc(&rp->line, '"');
    if (st == IG_OK)
        st = ig_buf_addc(&rp->line, sep);
    ig_buf_release(&tmp);
    return st;
}

static enum ig_status addf(struct replay_report *rp, const char *fmt, ...)
    IG_PRINTF(2, 3);

static enum ig_status
addf(struct replay_report *rp, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return IG_ERR_LIMIT;
    return ig_buf_add(&rp->line, tmp, (size_t)n);
}

/* v's reasons: "A B C" (text, csv) or ["A","B"] (json). */
static enum ig_status
add_reasons(struct replay_report *rp, const struct replay_verdict *v)
{
    enum ig_status st = IG_OK;
    size_t i;

    if (rp->fmt == REPLAY_JSON)
        st = ig_buf_addc(&rp->line, '[');
    for (i = 0; st == IG_OK && i < v->nreasons; i++) {
        if (i > 0)
            st = ig_buf_adds(&rp->line, rp->fmt == REPLAY_JSON ? "," : " ");
        if (st == IG_OK)
            st = rp->fmt == REPLAY_JSON ? addf(rp, "\"%s\"", v->reasons[i])
                                        : ig_buf_adds(&rp->line, v->reasons[i]);
    }
    if (st == IG_OK && rp->fmt == REPLAY_JSON)
        st = ig_buf_addc(&rp->line, ']');
    return st;
}

struct replay_report *
replay_report_new(enum replay_format fmt, FILE *out, const char *db,
                  const char *bundle, const char *revision, struct ig_err *err)
{
    struct replay_report *rp = calloc(1, sizeof(*rp));
    enum ig_status st = IG_OK;

    if (rp == NULL || (rp->db = strdup(db)) == NULL ||
        (rp->bundle = strdup(bundle)) == NULL ||
        (rp->revision = strdup(revision)) == NULL) {
        replay_report_free(rp);
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    rp->fmt = fmt;
    rp->out = out;
    ig_buf_init(&rp->line, LINE_MAX_BYTES);
    if (fmt == REPLAY_TEXT && (rp->changes = tmpfile()) == NULL) {
        replay_report_free(rp);
        (void)ig_err_set(err, IG_ERR_IO, "cannot make a temporary file");
        return NULL;
    }
    if (fmt == REPLAY_JSON) {
        if ((st = ig_buf_adds(&rp->line, "{\"database\":")) == IG_OK &&
            (st = add_text(rp, db)) == IG_OK &&
            (st = ig_buf_adds(&rp->line, ",\"bundle\":")) == IG_OK &&
            (st = add_text(rp, bundle)) == IG_OK &&
            (st = ig_buf_adds(&rp->line, ",\"revision\":")) == IG_OK &&
            (st = add_text(rp, revision)) == IG_OK)
            st = ig_buf_adds(&rp->line, ",\"changes\":[");
    } else if (fmt == REPLAY_CSV) {
        st = ig_buf_adds(&rp->line,
                         "seq,intent_id,action,resource,decided_at,change,"
                         "from,from_reasons,to,to_reasons\r\n");
    }
    if (st != IG_OK || emit(rp, out) != 0) {
        replay_report_free(rp);
        (void)ig_err_set(err, IG_ERR_IO, "cannot write the report");
        return NULL;
    }
    return rp;
}

void
replay_report_free(struct replay_report *rp)
{
    if (rp == NULL)
        return;
    if (rp->changes != NULL)
        (void)fclose(rp->changes);
    replay_tally_free(&rp->by_action);
    replay_tally_free(&rp->by_reason);
    ig_buf_release(&rp->line);
    free(rp->db);
    free(rp->bundle);
    free(rp->revision);
    free(rp);
}

uint64_t
replay_report_count(const struct replay_report *rp, enum replay_kind k)
{
    return rp->count[k];
}

/* 1 when v holds code. */
static int
has(const struct replay_verdict *v, const char *code)
{
    size_t i;

    for (i = 0; i < v->nreasons; i++)
        if (strcmp(v->reasons[i], code) == 0)
            return 1;
    return 0;
}

/* The reasons gained (+) and lost (-) from from to to. */
static int
tally_reasons(struct replay_report *rp, const struct replay_result *r)
{
    char key[POL_REASON_MAX + 2];
    size_t i;

    for (i = 0; i < r->to.nreasons; i++)
        if (!has(&r->from, r->to.reasons[i])) {
            (void)snprintf(key, sizeof(key), "+%s", r->to.reasons[i]);
            if (replay_tally_add(&rp->by_reason, key) != 0)
                return -1;
        }
    for (i = 0; i < r->from.nreasons; i++)
        if (!has(&r->to, r->from.reasons[i])) {
            (void)snprintf(key, sizeof(key), "-%s", r->from.reasons[i]);
            if (replay_tally_add(&rp->by_reason, key) != 0)
                return -1;
        }
    return 0;
}

/* One changed decision in rp's format into rp->line. */
static enum ig_status
change_line(struct replay_report *rp, const struct replay_row *d,
            const struct replay_result *r)
{
    const char *kind = r->kind == REPLAY_VERDICT ? "verdict" : "reasons";
    const char *from = pol_verdict_name(r->from.verdict);
    const char *to = pol_verdict_name(r->to.verdict);
    char at[IG_TIME_STRLEN + 1], seq[24];
    enum ig_status st;
    json_t *tr;
    char *trace;

    if (ig_time_format(d->decided_at, at) != IG_OK)
        (void)snprintf(at, sizeof(at), "%" PRId64, d->decided_at);
    (void)snprintf(seq, sizeof(seq), "%" PRId64, d->seq);
    if (rp->fmt == REPLAY_CSV) {
        if ((st = add_csv(rp, seq, ',')) != IG_OK ||
            (st = add_csv(rp, d->intent_id, ',')) != IG_OK ||
            (st = add_csv(rp, d->action, ',')) != IG_OK ||
            (st = add_csv(rp, d->resource, ',')) != IG_OK ||
            (st = add_csv(rp, at, ',')) != IG_OK ||
            (st = add_csv(rp, kind, ',')) != IG_OK ||
            (st = add_csv(rp, from, ',')) != IG_OK)
            return st;
        if ((st = ig_buf_addc(&rp->line, '"')) != IG_OK ||
            (st = add_reasons(rp, &r->from)) != IG_OK ||
            (st = ig_buf_adds(&rp->line, "\",")) != IG_OK ||
            (st = add_csv(rp, to, ',')) != IG_OK ||
            (st = ig_buf_addc(&rp->line, '"')) != IG_OK ||
            (st = add_reasons(rp, &r->to)) != IG_OK)
            return st;
        return ig_buf_adds(&rp->line, "\"\r\n");
    }
    if (rp->fmt == REPLAY_TEXT) {
        if ((st = addf(rp, "  %s ", seq)) != IG_OK ||
            (st = add_text(rp, d->intent_id)) != IG_OK ||
            (st = ig_buf_addc(&rp->line, ' ')) != IG_OK ||
            (st = add_text(rp, d->action)) != IG_OK ||
            (st = ig_buf_addc(&rp->line, ' ')) != IG_OK ||
            (st = add_text(rp, d->resource)) != IG_OK ||
            (st = addf(rp, ": %s [", from)) != IG_OK ||
            (st = add_reasons(rp, &r->from)) != IG_OK ||
            (st = addf(rp, "] -> %s [", to)) != IG_OK ||
            (st = add_reasons(rp, &r->to)) != IG_OK)
            return st;
        return ig_buf_adds(&rp->line, "]\n");
    }
    if ((st = addf(rp, "%s{\"seq\":%s,\"intent_id\":",
                   rp->count[REPLAY_VERDICT] + rp->count[REPLAY_REASONS] > 1
                       ? ","
                       : "",
                   seq)) != IG_OK ||
        (st = add_text(rp, d->intent_id)) != IG_OK ||
        (st = ig_buf_adds(&rp->line, ",\"action\":")) != IG_OK ||
        (st = add_text(rp, d->action)) != IG_OK ||
        (st = ig_buf_adds(&rp->line, ",\"resource\":")) != IG_OK ||
        (st = add_text(rp, d->resource)) != IG_OK ||
        (st = addf(rp,
                   ",\"decided_at\":\"%s\",\"change\":\"%s\",\"from\":"
                   "{\"decision\":\"%s\",\"reasons\":",
                   at, kind, from)) != IG_OK ||
        (st = add_reasons(rp, &r->from)) != IG_OK ||
        (st = addf(rp, "},\"to\":{\"decision\":\"%s\",\"reasons\":", to)) !=
            IG_OK ||
        (st = add_reasons(rp, &r->to)) != IG_OK)
        return st;
    if (r->trace != NULL) {
        tr = pol_trace_json(r->trace);
        trace = tr != NULL ? json_dumps(tr, JSON_COMPACT | JSON_ENSURE_ASCII)
                           : NULL;
        json_decref(tr);
        if (trace == NULL)
            return IG_ERR_NOMEM;
        st = ig_buf_adds(&rp->line, ",\"trace\":");
        if (st == IG_OK)
            st = ig_buf_adds(&rp->line, trace);
        free(trace);
        if (st != IG_OK)
            return st;
    }
    return ig_buf_adds(&rp->line, "}}\n");
}

int
replay_report_add(struct replay_report *rp, const struct replay_row *d)
{
    const struct replay_result *r = &d->r;
    char key[1024];
    int n;

    rp->count[r->kind]++;
    if (r->kind == REPLAY_UNREADABLE && rp->nunread < UNREADABLE_KEPT) {
        rp->unread[rp->nunread].seq = d->seq;
        (void)snprintf(rp->unread[rp->nunread].why, sizeof(rp->unread[0].why),
                       "%s", r->why);
        rp->nunread++;
    }
    if (r->kind != REPLAY_VERDICT && r->kind != REPLAY_REASONS)
        return 0;
    /* An action longer than the key (only in an edited file) is cut. */
    n = snprintf(key, sizeof(key), "%.900s\037%s\037%s", d->action,
                 pol_verdict_name(r->from.verdict),
                 pol_verdict_name(r->to.verdict));
    if (n < 0 || (size_t)n >= sizeof(key) ||
        replay_tally_add(&rp->by_action, key) != 0 || tally_reasons(rp, r) != 0)
        return -1;
    if (change_line(rp, d, r) != IG_OK)
        return -1;
    return emit(rp, rp->fmt == REPLAY_TEXT ? rp->changes : rp->out);
}

/* ---- the end: summary and tables ---- */

static const char *const kind_key[REPLAY_NKINDS] = {
    [REPLAY_UNCHANGED] = "unchanged",      [REPLAY_VERDICT] = "verdict_changed",
    [REPLAY_REASONS] = "reasons_changed",  [REPLAY_DENIED] = "approval_denied",
    [REPLAY_EXPIRED] = "approval_expired", [REPLAY_UNREADABLE] = "unreadable",
};

static enum ig_status
summary_text(struct replay_report *rp)
{
    const uint64_t *c = rp->count;
    uint64_t replayed =
        c[REPLAY_UNCHANGED] + c[REPLAY_VERDICT] + c[REPLAY_REASONS];
    enum ig_status st;

    if ((st = ig_buf_adds(&rp->line, "replay of ")) != IG_OK ||
        (st = add_text(rp, rp->db)) != IG_OK ||
        (st = ig_buf_adds(&rp->line, " under ")) != IG_OK ||
        (st = add_text(rp, rp->bundle)) != IG_OK)
        return st;
    return addf(rp,
                " (%s)\n\n"
                "replayed          %10" PRIu64 "\n"
                "  unchanged       %10" PRIu64 "\n"
                "  verdict changed %10" PRIu64 "\n"
                "  reasons changed %10" PRIu64 "\n"
                "not replayed      %10" PRIu64 " (no policy decided them)\n"
                "  approval denied %10" PRIu64 "\n"
                "  approval expired%10" PRIu64 "\n"
                "unreadable rows   %10" PRIu64 "\n",
                rp->revision, replayed, c[REPLAY_UNCHANGED], c[REPLAY_VERDICT],
                c[REPLAY_REASONS], c[REPLAY_DENIED] + c[REPLAY_EXPIRED],
                c[REPLAY_DENIED], c[REPLAY_EXPIRED], c[REPLAY_UNREADABLE]);
}

/* "action\037FROM\037TO" split in place into its three parts. */
static void
split_key(char *key, char **from, char **to)
{
    char *p = strrchr(key, '\037');

    *to = p != NULL ? p + 1 : key;
    if (p != NULL)
        *p = '\0';
    p = strrchr(key, '\037');
    *from = p != NULL ? p + 1 : key;
    if (p != NULL)
        *p = '\0';
}

static enum ig_status
tables(struct replay_report *rp)
{
    size_t na = replay_tally_sorted(&rp->by_action),
           nr = replay_tally_sorted(&rp->by_reason), i;
    int json = rp->fmt == REPLAY_JSON;
    enum ig_status st = IG_OK;
    char *from, *to, *key;

    st = ig_buf_adds(&rp->line, json ? ",\"by_action\":["
                                     : "\nchanges by action (count, action, "
                                       "from -> to):\n");
    for (i = 0; st == IG_OK && i < na; i++) {
        key = rp->by_action.slot[i].key;
        split_key(key, &from, &to);
        if (json &&
            (st = addf(rp, "%s{\"action\":", i > 0 ? "," : "")) == IG_OK &&
            (st = add_text(rp, key)) == IG_OK)
            st = addf(rp,
                      ",\"from\":\"%s\",\"to\":\"%s\",\"count\":%" PRIu64 "}",
                      from, to, rp->by_action.slot[i].n);
        if (!json &&
            (st = addf(rp, "  %10" PRIu64 "  ", rp->by_action.slot[i].n)) ==
                IG_OK &&
            (st = add_text(rp, key)) == IG_OK)
            st = addf(rp, "  %s -> %s\n", from, to);
    }
    if (st == IG_OK && !json && na == 0)
        st = ig_buf_adds(&rp->line, "  (none)\n");
    if (st == IG_OK)
        st = ig_buf_adds(&rp->line,
                         json ? "],\"by_reason\":["
                              : "\nchanges by reason (count, + gained or - "
                                "lost):\n");
    for (i = 0; st == IG_OK && i < nr; i++) {
        key = rp->by_reason.slot[i].key;
        st = json ? addf(rp,
                         "%s{\"reason\":\"%s\",\"change\":\"%s\","
                         "\"count\":%" PRIu64 "}",
                         i > 0 ? "," : "", key + 1,
                         key[0] == '+' ? "gained" : "lost",
                         rp->by_reason.slot[i].n)
                  : addf(rp, "  %10" PRIu64 "  %s\n", rp->by_reason.slot[i].n,
                         key);
    }
    if (st == IG_OK && !json && nr == 0)
        st = ig_buf_adds(&rp->line, "  (none)\n");
    return st;
}

static enum ig_status
unreadable_list(struct replay_report *rp)
{
    int json = rp->fmt == REPLAY_JSON;
    enum ig_status st;
    size_t i;

    st = ig_buf_adds(&rp->line, json ? "],\"unreadable\":["
                                : rp->count[REPLAY_UNREADABLE] > 0
                                    ? "\nunreadable rows (seq: what is "
                                      "wrong):\n"
                                    : "");
    for (i = 0; st == IG_OK && i < rp->nunread; i++) {
        st = json
                 ? addf(rp, "%s{\"seq\":%" PRId64 ",\"why\":", i > 0 ? "," : "",
                        rp->unread[i].seq)
                 : addf(rp, "  %" PRId64 ": ", rp->unread[i].seq);
        if (st == IG_OK)
            st = add_text(rp, rp->unread[i].why);
        if (st == IG_OK)
            st = ig_buf_adds(&rp->line, json ? "}" : "\n");
    }
    if (st == IG_OK && !json && rp->count[REPLAY_UNREADABLE] > rp->nunread)
        st = addf(rp, "  ... and %" PRIu64 " more\n",
                  rp->count[REPLAY_UNREADABLE] - rp->nunread);
    return st;
}

static enum ig_status
summary_json(struct replay_report *rp)
{
    enum ig_status st = ig_buf_adds(&rp->line, "],\"summary\":{");
    uint64_t replayed = rp->count[REPLAY_UNCHANGED] +
                        rp->count[REPLAY_VERDICT] + rp->count[REPLAY_REASONS];
    int k;

    if (st == IG_OK)
        st = addf(rp, "\"replayed\":%" PRIu64, replayed);
    for (k = 0; st == IG_OK && k < REPLAY_NKINDS; k++)
        st = addf(rp, ",\"%s\":%" PRIu64, kind_key[k], rp->count[k]);
    if (st == IG_OK)
        st = ig_buf_addc(&rp->line, '}');
    return st;
}

/* Copy the kept changes to out. */
static int
copy_changes(struct replay_report *rp)
{
    char buf[65536];
    size_t n;

    if (fflush(rp->changes) != 0 || fseek(rp->changes, 0, SEEK_SET) != 0)
        return -1;
    while ((n = fread(buf, 1, sizeof(buf), rp->changes)) > 0)
        if (fwrite(buf, 1, n, rp->out) != n)
            return -1;
    return ferror(rp->changes) ? -1 : 0;
}

int
replay_report_finish(struct replay_report *rp)
{
    enum ig_status st = IG_OK;
    int rc;

    if (rp->fmt == REPLAY_JSON) {
        if ((st = summary_json(rp)) == IG_OK && (st = tables(rp)) == IG_OK &&
            (st = unreadable_list(rp)) == IG_OK)
            st = ig_buf_adds(&rp->line, "]}\n");
    } else if (rp->fmt == REPLAY_TEXT) {
        if ((st = summary_text(rp)) == IG_OK && (st = tables(rp)) == IG_OK &&
            (st = unreadable_list(rp)) == IG_OK)
            st = ig_buf_adds(
                &rp->line,
                rp->count[REPLAY_VERDICT] + rp->count[REPLAY_REASONS] > 0
                    ? "\nchanged decisions (seq intent action "
                      "resource: from [reasons] -> to "
                      "[reasons]):\n"
                    : "");
    }
    rc = st == IG_OK ? emit(rp, rp->out) : -1;
    if (rc == 0 && rp->fmt == REPLAY_TEXT)
        rc = copy_changes(rp);
    if (fflush(rp->out) != 0)
        rc = -1;
    replay_report_free(rp);
    return rc;
}
