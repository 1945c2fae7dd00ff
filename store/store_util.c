/*
 * store_util.c - the small SQLite helpers every part of the store
 * uses: binding text (NULL as SQL NULL), reading a text or JSON column,
 * and a read connection inside one read transaction (so the rows of one
 * answer agree with each other).
 */
#include "store_int.h"

#include <string.h>

#include "ig_json.h"

void
store_sql_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s == NULL)
        (void)sqlite3_bind_null(st, i);
    else
        (void)sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

const char *
store_sql_text(sqlite3_stmt *st, int i)
{
    const unsigned char *p = sqlite3_column_text(st, i);

    return p != NULL ? (const char *)p : "";
}

json_t *
store_sql_json(sqlite3_stmt *st, int i)
{
    const char *p = store_sql_text(st, i);
    json_t *v = NULL;

    if (ig_json_parse(p, strlen(p), &v, NULL) != IG_OK)
        return NULL;
    return v;
}

struct store_rconn *
store_read_begin(struct store *s)
{
    struct store_rconn *c = store_rconn_get(s);

    if (c != NULL &&
        sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        store_rconn_put(s, c);
        return NULL;
    }
    return c;
}

void
store_read_end(struct store *s, struct store_rconn *c)
{
    (void)sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
    store_rconn_put(s, c);
}
