/*
 * store_pg_audit_view.c - the auditors' pages' reads of the PostgreSQL
 * store's audit log (store_audit_view.h; the SQLite twin is
 * store_audit_view.c, whose semantics these keep exactly).
 *
 * Events are found by their canonical text (strpos on `"type":"X"` or
 * `"intent_id":"X"`), then parsed and checked at top level, so a filter
 * never matches a value nested in an agent's params. Each call settles
 * (store_pg_audit_settle: the caller's own events are in the log), then
 * reads in one READ ONLY REPEATABLE READ transaction, page by page
 * (store_pg_pages), so a long log is never held in memory at once.
 */
#include "store_audit_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "store_pg_int.h"

static const char SQL_PAGE[] =
    "SELECT seq, event FROM audit_events WHERE seq < $1"
    " AND ($2::text IS NULL OR strpos(event, $2) > 0)"
    " AND ($3::text IS NULL OR strpos(event, $3) > 0)"
    " ORDER BY seq DESC LIMIT " STORE_PG_PAGE_ROWS_TEXT;
static const char SQL_NAMING[] =
    "SELECT seq, event FROM audit_events WHERE seq > $1"
    " AND strpos(event, $2) > 0 ORDER BY seq LIMIT " STORE_PG_PAGE_ROWS_TEXT;
/* Each note with its witnesses' cosignature lines (store.h). */
static const char SQL_CHECKPOINTS[] =
    "SELECT size, note || coalesce((SELECT string_agg(c.line, '' ORDER BY"
    " c.witness COLLATE \"C\") FROM cosignatures c WHERE c.size ="
    " checkpoints.size), '') FROM checkpoints WHERE size > $1 AND"
    " size <= $2 ORDER BY size LIMIT " STORE_PG_PAGE_ROWS_TEXT;

/* The event of a row as {seq, event}; *ev (borrowed) the parsed object
   or NULL (the raw text is kept as a string: an edited log). */
static json_t *
row_event(const PGresult *r, int row, json_t **ev)
{
    const char *text = PQgetvalue(r, row, 1);
    size_t n = (size_t)PQgetlength(r, row, 1);
    json_t *v = NULL;

    *ev = NULL;
    if (ig_json_parse(text, n, &v, NULL) == IG_OK && json_is_object(v))
        *ev = v;
    else {
        json_decref(v);
        v = json_stringn(text, n);
    }
    /* "o" steals v. */
    return json_pack("{s:I, s:o}", "seq", (json_int_t)store_pg_int(r, row, 0),
                     "event", v);
}

static int
top_is(const json_t *ev, const char *key, const char *want)
{
    const char *got = json_string_value(json_object_get(ev, key));

    return want == NULL || (got != NULL && strcmp(got, want) == 0);
}

/* ---- a page of events, newest first ---- */

struct page {
    size_t limit, scanned;
    const char *type, *intent_id;
    json_t *out;
    int64_t *next;
};

/* Add the row while it matches; stop at limit + 1 matches (the extra one
   only tells there is a next page) or IG_AUDIT_UI_SCAN_MAX rows read. */
static enum ig_status
page_row(void *ctx, const PGresult *r, int row, int *stop)
{
    struct page *pg = ctx;
    int64_t seq = store_pg_int(r, row, 0);
    json_t *item, *ev;

    if (++pg->scanned > IG_AUDIT_UI_SCAN_MAX) {
        *pg->next = seq + 1; /* go on from here next time */
        *stop = 1;
        return IG_OK;
    }
    if ((item = row_event(r, row, &ev)) == NULL)
        return IG_ERR_NOMEM;
    if ((pg->type != NULL || pg->intent_id != NULL) &&
        (ev == NULL || !top_is(ev, "type", pg->type) ||
         !top_is(ev, "intent_id", pg->intent_id))) {
        json_decref(item);
        return IG_OK;
    }
    if (json_array_size(pg->out) == pg->limit) {
        json_decref(item);
        *pg->next = json_integer_value(
            json_object_get(json_array_get(pg->out, pg->limit - 1), "seq"));
        *stop = 1;
        return IG_OK;
    }
    return json_array_append_new(pg->out, item) == 0 ? IG_OK : IG_ERR_NOMEM;
}

enum ig_status
store_pg_audit_events(struct store_pg *s, int64_t before, size_t limit,
                      const char *type, const char *intent_id, json_t **out,
                      int64_t *next)
{
    char tneedle[IG_ID_MAX + 16], ineedle[IG_ID_MAX + 16];
    struct page pg = {limit, 0, type, intent_id, NULL, next};
    struct store_pg_params p;
    struct store_pg_conn *c;
    enum ig_status st;

    *out = NULL;
    *next = 0;
    if (limit == 0 || (type != NULL && strlen(type) > IG_ID_MAX) ||
        (intent_id != NULL && strlen(intent_id) > IG_ID_MAX))
        return IG_ERR_INVALID;
    (void)snprintf(tneedle, sizeof(tneedle), "\"type\":\"%s\"",
                   type != NULL ? type : "");
    (void)snprintf(ineedle, sizeof(ineedle), "\"intent_id\":\"%s\"",
                   intent_id != NULL ? intent_id : "");
    if ((pg.out = json_array()) == NULL)
        return IG_ERR_NOMEM;
    if ((c = store_pg_read_begin(s, STORE_PG_SETTLE_MS)) == NULL) {
        json_decref(pg.out);
        return IG_ERR_IO;
    }
    store_pg_params_init(&p);
    store_pg_param_int(&p, before > 0 ? before : INT64_MAX);
    store_pg_param_text(&p, type != NULL ? tneedle : NULL);
    store_pg_param_text(&p, intent_id != NULL ? ineedle : NULL);
    st = store_pg_pages(s, c, SQL_PAGE, &p, page_row, &pg);
    store_pg_read_end(s, c);
    if (st != IG_OK) {
        json_decref(pg.out);
        *next = 0;
        return st;
    }
    *out = pg.out;
    return IG_OK;
}

/* ---- the events of one intent ---- */

struct naming {
    const char *key, *value, *only_without;
    json_t *out;
    char *approval; /* IG_ID_MAX + 1 bytes, or NULL */
};

/* Keep events whose top-level key is value (only_without: skip those
   that carry this key too - an intent's own events). */
static enum ig_status
naming_row(void *ctx, const PGresult *r, int row, int *stop)
{
    struct naming *nm = ctx;
    json_t *item, *ev;
    const char *aid;

    (void)stop;
    if ((item = row_event(r, row, &ev)) == NULL)
        return IG_ERR_NOMEM;
    if (ev == NULL || !top_is(ev, nm->key, nm->value) ||
        (nm->only_without != NULL && json_object_get(ev, nm->only_without))) {
        json_decref(item);
        return IG_OK;
    }
    aid = json_string_value(
        json_object_get(json_object_get(ev, "approval"), "approval_id"));
    if (nm->approval != NULL && aid != NULL && strlen(aid) <= IG_ID_MAX)
        (void)snprintf(nm->approval, IG_ID_MAX + 1, "%s", aid);
    if (json_array_size(nm->out) >= IG_STORE_INTENT_EVENTS_MAX) {
        json_decref(item);
        return IG_ERR_LIMIT;
    }
    return json_array_append_new(nm->out, item) == 0 ? IG_OK : IG_ERR_NOMEM;
}

static enum ig_status
collect(struct store_pg *s, struct store_pg_conn *c, struct naming *nm)
{
    char needle[2 * IG_ID_MAX];
    struct store_pg_params p;

    (void)snprintf(needle, sizeof(needle), "\"%s\":\"%s\"", nm->key, nm->value);
    store_pg_params_init(&p);
    store_pg_param_int(&p, 0);
    store_pg_param_text(&p, needle);
    return store_pg_pages(s, c, SQL_NAMING, &p, naming_row, nm);
}

enum ig_status
store_pg_audit_intent_events(struct store_pg *s, const char *intent_id,
                             json_t **out)
{
    char approval[IG_ID_MAX + 1] = "";
    struct naming own = {"intent_id", intent_id, NULL, NULL, approval};
    struct naming votes = {"approval_id", approval, "intent_id", NULL, NULL};
    struct store_pg_conn *c;
    enum ig_status st;

    *out = NULL;
    if (intent_id == NULL || strlen(intent_id) > IG_ID_MAX)
        return IG_ERR_INVALID;
    if ((*out = json_array()) == NULL)
        return IG_ERR_NOMEM;
    own.out = votes.out = *out;
    if ((c = store_pg_read_begin(s, STORE_PG_SETTLE_MS)) == NULL) {
        st = IG_ERR_IO;
        goto out;
    }
    st = collect(s, c, &own);
    if (st == IG_OK && approval[0] != '\0')
        st = collect(s, c, &votes);
    store_pg_read_end(s, c);
    if (st == IG_OK)
        st = store_view_sort_by_seq(*out);
out:
    if (st != IG_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return st;
}

/* ---- the checkpoints as JSONL ---- */

static enum ig_status
checkpoint_row(void *ctx, const PGresult *r, int row, int *stop)
{
    struct ig_buf *out = ctx;
    enum ig_status st;
    json_t *line;

    (void)stop;
    line = json_pack("{s:I, s:s%}", "size", (json_int_t)store_pg_int(r, row, 0),
                     "note", PQgetvalue(r, row, 1),
                     (size_t)PQgetlength(r, row, 1));
    st = line != NULL ? ig_canon_write(line, out, NULL) : IG_ERR_NOMEM;
    if (st == IG_OK)
        st = ig_buf_addc(out, '\n');
    json_decref(line);
    return st;
}

enum ig_status
store_pg_audit_checkpoints(struct store_pg *s, uint64_t max_size,
                           struct ig_buf *out)
{
    struct store_pg_conn *c = store_pg_read_begin(s, STORE_PG_SETTLE_MS);
    struct store_pg_params p;
    enum ig_status st;

    if (c == NULL)
        return IG_ERR_IO;
    store_pg_params_init(&p);
    store_pg_param_int(&p, 0);
    store_pg_param_int(&p, max_size > 0 && max_size < (uint64_t)INT64_MAX
                               ? (int64_t)max_size
                               : INT64_MAX);
    st = store_pg_pages(s, c, SQL_CHECKPOINTS, &p, checkpoint_row, out);
    store_pg_read_end(s, c);
    return st;
}
