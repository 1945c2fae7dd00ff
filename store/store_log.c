/*
 * store_log.c - the offline reader (store_log.h): each call handed to the
 * backend the log was opened on - PostgreSQL for a postgresql:// (or
 * postgres://) URL (store_log_pg.c), else the SQLite file
 * (store_log_sq.c). Nothing else here.
 */
#include "store_log_be.h"

#include <stdlib.h>
#include <string.h>

#include "store.h"

struct store_log {
    struct store_log_sq *sq; /* exactly one of the two is set */
    struct store_log_pg *pg;
};

struct store_log_cursor {
    struct store_log_sq_cursor *sq;
    struct store_log_pg_cursor *pg;
    struct store_log_sq_dcursor *dsq; /* a decision scan */
    struct store_log_pg_dcursor *dpg;
};

enum ig_status
store_log_open(const char *path, struct store_log **out, struct ig_err *err)
{
    struct store_log *l = calloc(1, sizeof(*l));
    enum ig_status st;

    *out = NULL;
    if (l == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (store_is_postgres(path))
        st = store_log_pg_open(path, &l->pg, err);
    else
        st = store_log_sq_open(path, &l->sq, err);
    if (st != IG_OK) {
        free(l);
        return st;
    }
    *out = l;
    return IG_OK;
}

void
store_log_close(struct store_log *l)
{
    if (l == NULL)
        return;
    if (l->pg != NULL)
        store_log_pg_close(l->pg);
    else
        store_log_sq_close(l->sq);
    free(l);
}

static enum ig_status
cursor(struct store_log_cursor **out, struct ig_err *err)
{
    if ((*out = calloc(1, sizeof(**out))) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

/* c's backend cursor was not made: free c. */
static enum ig_status
cursor_failed(struct store_log_cursor **c, enum ig_status st)
{
    free(*c);
    *c = NULL;
    return st;
}

enum ig_status
store_log_scan(struct store_log *l, enum store_log_table table,
               const char *contains, struct store_log_cursor **out,
               struct ig_err *err)
{
    enum ig_status st = cursor(out, err);

    if (st != IG_OK)
        return st;
    if (l->pg != NULL)
        st = store_log_pg_scan(l->pg, table, contains, &(*out)->pg, err);
    else
        st = store_log_sq_scan(l->sq, table, contains, &(*out)->sq, err);
    return st == IG_OK ? IG_OK : cursor_failed(out, st);
}

enum ig_status
store_log_next(struct store_log_cursor *c, struct store_log_row *row,
               struct ig_err *err)
{
    if (c->pg != NULL)
        return store_log_pg_next(c->pg, row, err);
    return store_log_sq_next(c->sq, row, err);
}

void
store_log_cursor_free(struct store_log_cursor *c)
{
    if (c == NULL)
        return;
    store_log_pg_cursor_free(c->pg);
    store_log_sq_cursor_free(c->sq);
    store_log_pg_dcursor_free(c->dpg);
    store_log_sq_dcursor_free(c->dsq);
    free(c);
}

enum ig_status
store_log_checkpoint(struct store_log *l, uint64_t size, char **note,
                     size_t *len, uint64_t *got, struct ig_err *err)
{
    if (l->pg != NULL)
        return store_log_pg_checkpoint(l->pg, size, note, len, got, err);
    return store_log_sq_checkpoint(l->sq, size, note, len, got, err);
}

enum ig_status
store_log_leaf(struct store_log *l, uint64_t index, char **leaf, size_t *len,
               struct ig_err *err)
{
    if (l->pg != NULL)
        return store_log_pg_leaf(l->pg, index, leaf, len, err);
    return store_log_sq_leaf(l->sq, index, leaf, len, err);
}

int
store_log_has_tiles(struct store_log *l)
{
    return l->pg != NULL || store_log_sq_has_tiles(l->sq);
}

enum ig_status
store_log_scan_tiles(struct store_log *l, unsigned level,
                     struct store_log_cursor **out, struct ig_err *err)
{
    enum ig_status st = cursor(out, err);

    if (st != IG_OK)
        return st;
    if (l->pg != NULL)
        st = store_log_pg_scan_tiles(l->pg, level, &(*out)->pg, err);
    else
        st = store_log_sq_scan_tiles(l->sq, level, &(*out)->sq, err);
    return st == IG_OK ? IG_OK : cursor_failed(out, st);
}

enum ig_status
store_log_nodes(struct store_log *l, uint64_t size, struct ig_err *err)
{
    if (l->pg != NULL)
        return store_log_pg_nodes(l->pg, size, err);
    return store_log_sq_nodes(l->sq, size, err);
}

enum ig_status
store_log_fetch_node(void *ctx, unsigned level, uint64_t index,
                     unsigned char out[AUDIT_HASH_BYTES])
{
    struct store_log *l = ctx;

    if (l->pg != NULL)
        return store_log_pg_fetch_node(l->pg, level, index, out);
    return store_log_sq_fetch_node(l->sq, level, index, out);
}

enum ig_status
store_log_queued(struct store_log *l, uint64_t *n, struct ig_err *err)
{
    *n = 0;
    if (l->pg != NULL)
        return store_log_pg_queued(l->pg, n, err);
    return IG_OK; /* SQLite appends to the log itself: nothing queued */
}

enum ig_status
store_log_scan_decisions(struct store_log *l, int64_t from, int64_t until,
                         struct store_log_cursor **out, struct ig_err *err)
{
    enum ig_status st = cursor(out, err);

    if (st != IG_OK)
        return st;
    if (l->pg != NULL)
        st = store_log_pg_scan_decisions(l->pg, from, until, &(*out)->dpg, err);
    else
        st = store_log_sq_scan_decisions(l->sq, from, until, &(*out)->dsq, err);
    return st == IG_OK ? IG_OK : cursor_failed(out, st);
}

enum ig_status
store_log_next_decision(struct store_log_cursor *c,
                        struct store_log_decision *d, struct ig_err *err)
{
    if (c->dpg != NULL)
        return store_log_pg_next_decision(c->dpg, d, err);
    if (c->dsq != NULL)
        return store_log_sq_next_decision(c->dsq, d, err);
    return ig_err_set(err, IG_ERR_INVALID, "not a decision scan");
}
