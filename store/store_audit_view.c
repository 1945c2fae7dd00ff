/*
 * store_audit_view.c - the auditors' pages' reads of the audit log
 * (see store_audit_view.h). The statements are prepared per call on a
 * borrowed read connection: these pages are read by people, not by
 * agents, and a prepare costs microseconds.
 */
#include "store_audit_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "store_int.h"

/* The event of row q as {seq, event}; *ev (borrowed) the parsed object
   or NULL. */
static json_t *
row_event(sqlite3_stmt *q, json_t **ev)
{
    const char *text = (const char *)sqlite3_column_text(q, 1);
    size_t n = (size_t)sqlite3_column_bytes(q, 1);
    json_t *v = NULL;

    *ev = NULL;
    if (text == NULL)
        text = "";
    if (ig_json_parse(text, n, &v, NULL) == IG_OK && json_is_object(v))
        *ev = v;
    else {
        json_decref(v);
        v = json_stringn(text, n);
    }
    /* "o" steals v. */
    return json_pack("{s:I, s:o}", "seq",
                     (json_int_t)sqlite3_column_int64(q, 0), "event", v);
}

static int
top_is(const json_t *ev, const char *key, const char *want)
{
    const char *got = json_string_value(json_object_get(ev, key));

    return want == NULL || (got != NULL && strcmp(got, want) == 0);
}

/* Add rows of q to out while they match; stops at limit + 1 matches (the
   extra one only tells there is a next page). */
static enum ig_status
page_rows(sqlite3_stmt *q, size_t limit, const char *type,
          const char *intent_id, json_t *out, int64_t *next)
{
    json_t *row, *ev;
    size_t scanned = 0;
    sqlite3_int64 seq = 0;
    int rc;

    *next = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        seq = sqlite3_column_int64(q, 0);
        if (++scanned > IG_AUDIT_UI_SCAN_MAX) {
            *next = seq + 1; /* go on from here next time */
            return IG_OK;
        }
        if ((row = row_event(q, &ev)) == NULL)
            return IG_ERR_NOMEM;
        if ((type != NULL || intent_id != NULL) &&
            (ev == NULL || !top_is(ev, "type", type) ||
             !top_is(ev, "intent_id", intent_id))) {
            json_decref(row);
            continue;
        }
        if (json_array_size(out) == limit) {
            json_decref(row);
            *next = json_integer_value(
                json_object_get(json_array_get(out, limit - 1), "seq"));
            return IG_OK;
        }
        if (json_array_append_new(out, row) != 0)
            return IG_ERR_NOMEM;
    }
    return rc == SQLITE_DONE ? IG_OK : IG_ERR_IO;
}

enum ig_status
store_sq_audit_events(struct store_sq *s, int64_t before, size_t limit,
                      const char *type, const char *intent_id, json_t **out,
                      int64_t *next)
{
    char tneedle[IG_ID_MAX + 16], ineedle[IG_ID_MAX + 16];
    struct store_rconn *c;
    sqlite3_stmt *q = NULL;
    enum ig_status st = IG_ERR_IO;

    *out = NULL;
    *next = 0;
    if (limit == 0 || (type != NULL && strlen(type) > IG_ID_MAX) ||
        (intent_id != NULL && strlen(intent_id) > IG_ID_MAX))
        return IG_ERR_INVALID;
    if ((c = store_read_begin(s)) == NULL)
        return IG_ERR_IO;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT seq, event FROM audit_events WHERE seq < ?1"
                           " AND (?2 IS NULL OR instr(event, ?2) > 0)"
                           " AND (?3 IS NULL OR instr(event, ?3) > 0)"
                           " ORDER BY seq DESC",
                           -1, &q, NULL) != SQLITE_OK)
        goto out;
    (void)snprintf(tneedle, sizeof(tneedle), "\"type\":\"%s\"",
                   type != NULL ? type : "");
    (void)snprintf(ineedle, sizeof(ineedle), "\"intent_id\":\"%s\"",
                   intent_id != NULL ? intent_id : "");
    (void)sqlite3_bind_int64(q, 1, before > 0 ? before : INT64_MAX);
    if (type != NULL)
        (void)sqlite3_bind_text(q, 2, tneedle, -1, SQLITE_STATIC);
    if (intent_id != NULL)
        (void)sqlite3_bind_text(q, 3, ineedle, -1, SQLITE_STATIC);
    if ((*out = json_array()) == NULL)
        st = IG_ERR_NOMEM;
    else
        st = page_rows(q, limit, type, intent_id, *out, next);
out:
    sqlite3_finalize(q);
    store_read_end(s, c);
    if (st != IG_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return st;
}

/* Events whose top-level key is value, in seq order (only_without:
   skip those that carry this key too - an intent's own events). */
static enum ig_status
collect(sqlite3 *db, const char *key, const char *value,
        const char *only_without, json_t *out, char approval[IG_ID_MAX + 1])
{
    char needle[2 * IG_ID_MAX];
    sqlite3_stmt *q = NULL;
    json_t *row, *ev;
    const char *aid;
    enum ig_status st = IG_OK;
    int rc;

    if (sqlite3_prepare_v2(db,
                           "SELECT seq, event FROM audit_events WHERE "
                           "instr(event, ?1) > 0 ORDER BY seq",
                           -1, &q, NULL) != SQLITE_OK)
        return IG_ERR_IO;
    (void)snprintf(needle, sizeof(needle), "\"%s\":\"%s\"", key, value);
    (void)sqlite3_bind_text(q, 1, needle, -1, SQLITE_STATIC);
    while (st == IG_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        if ((row = row_event(q, &ev)) == NULL) {
            st = IG_ERR_NOMEM;
            break;
        }
        if (ev == NULL || !top_is(ev, key, value) ||
            (only_without != NULL && json_object_get(ev, only_without))) {
            json_decref(row);
            continue;
        }
        aid = json_string_value(
            json_object_get(json_object_get(ev, "approval"), "approval_id"));
        if (approval != NULL && aid != NULL && strlen(aid) <= IG_ID_MAX)
            (void)snprintf(approval, IG_ID_MAX + 1, "%s", aid);
        if (json_array_size(out) >= IG_STORE_INTENT_EVENTS_MAX)
            st = IG_ERR_LIMIT;
        else if (json_array_append_new(out, row) != 0)
            st = IG_ERR_NOMEM;
    }
    if (st == IG_OK && rc != SQLITE_DONE)
        st = IG_ERR_IO;
    sqlite3_finalize(q);
    return st;
}

enum ig_status
store_sq_audit_intent_events(struct store_sq *s, const char *intent_id,
                             json_t **out)
{
    char approval[IG_ID_MAX + 1] = "";
    struct store_rconn *c;
    enum ig_status st;

    *out = NULL;
    if (intent_id == NULL || strlen(intent_id) > IG_ID_MAX)
        return IG_ERR_INVALID;
    if ((*out = json_array()) == NULL)
        return IG_ERR_NOMEM;
    if ((c = store_read_begin(s)) == NULL) {
        st = IG_ERR_IO;
        goto out;
    }
    st = collect(c->db, "intent_id", intent_id, NULL, *out, approval);
    if (st == IG_OK && approval[0] != '\0')
        st = collect(c->db, "approval_id", approval, "intent_id", *out, NULL);
    store_read_end(s, c);
    if (st == IG_OK)
        st = store_view_sort_by_seq(*out);
out:
    if (st != IG_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return st;
}

enum ig_status
store_sq_audit_checkpoints(struct store_sq *s, uint64_t max_size,
                           struct ig_buf *out)
{
    struct store_rconn *c = store_read_begin(s);
    sqlite3_stmt *q = NULL;
    enum ig_status st = IG_ERR_IO;
    json_t *line;
    int rc;

    if (c == NULL)
        return IG_ERR_IO;
    /* Each note with its witnesses' cosignature lines (store.h). */
    if (sqlite3_prepare_v2(
            c->db,
            "SELECT size, note || coalesce((SELECT group_concat(line, '') FROM"
            " (SELECT line FROM cosignatures c WHERE c.size ="
            " checkpoints.size ORDER BY witness)), '') FROM checkpoints"
            " WHERE size <= ?1 ORDER BY size",
            -1, &q, NULL) != SQLITE_OK)
        goto out;
    (void)sqlite3_bind_int64(q, 1,
                             max_size > 0 && max_size < (uint64_t)INT64_MAX
                                 ? (sqlite3_int64)max_size
                                 : INT64_MAX);
    st = IG_OK;
    while (st == IG_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        line = json_pack("{s:I, s:s%}", "size",
                         (json_int_t)sqlite3_column_int64(q, 0), "note",
                         (const char *)sqlite3_column_text(q, 1),
                         (size_t)sqlite3_column_bytes(q, 1));
        st = line != NULL ? ig_canon_write(line, out, NULL) : IG_ERR_NOMEM;
        if (st == IG_OK)
            st = ig_buf_addc(out, '\n');
        json_decref(line);
    }
    if (st == IG_OK && rc != SQLITE_DONE)
        st = IG_ERR_IO;
out:
    sqlite3_finalize(q);
    store_read_end(s, c);
    return st;
}
