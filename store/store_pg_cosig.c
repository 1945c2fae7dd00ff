/*
 * store_pg_cosig.c - witness cosignatures in the PostgreSQL store (store.h
 * says what is promised; store_cosig.c is SQLite's and holds the line
 * check both make).
 *
 * A put is one transaction on a pooled connection, on whichever replica
 * the witness client runs: the checkpoint must exist (checkpoints rows are
 * immutable, so once seen it stays), then the line goes in with ON
 * CONFLICT DO NOTHING - the PRIMARY KEY (size, witness) makes the first
 * line of a witness for a checkpoint the one kept, across replicas. The
 * reads run in one REPEATABLE READ READ ONLY snapshot and do not wait for
 * the sequencer (cosignatures are not queued events). Lines are ordered by
 * witness name bytewise (COLLATE "C"), as SQLite orders them.
 */
#include "store_pg_int.h"

#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "ig_buf.h"
#include "ig_time.h"

static const char SQL_CKPT[] = "SELECT size FROM checkpoints WHERE size = $1";
static const char SQL_CKPT_LATEST[] =
    "SELECT size FROM checkpoints ORDER BY size DESC LIMIT 1";
static const char SQL_PUT[] =
    "INSERT INTO cosignatures (size, witness, line, created_at)"
    " VALUES ($1, $2, $3, $4) ON CONFLICT (size, witness) DO NOTHING";
static const char SQL_LINES[] = "SELECT line FROM cosignatures WHERE size = $1"
                                " ORDER BY witness COLLATE \"C\"";
static const char SQL_LATEST[] =
    "SELECT coalesce(max(size), 0) FROM cosignatures WHERE witness = $1";

/* ---- the write ---- */

struct cosig_put {
    uint64_t size;
    const char *witness, *line;
};

static enum ig_status
put_txn(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    const struct cosig_put *a = arg;
    struct store_pg_params p;
    PGresult *r;
    int found;

    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)a->size);
    if ((r = store_pg_query(s, c, SQL_CKPT, &p, NULL, NULL)) == NULL)
        return IG_ERR_IO;
    found = PQntuples(r) == 1;
    PQclear(r);
    if (!found)
        return IG_ERR_NOTFOUND;
    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)a->size);
    store_pg_param_text(&p, a->witness);
    store_pg_param_text(&p, a->line);
    store_pg_param_int(&p, ig_time_now());
    return store_pg_exec(s, c, SQL_PUT, &p);
}

enum ig_status
store_pg_cosig_put(struct store_pg *s, uint64_t size, const char *witness,
                   const char *line)
{
    struct cosig_put a = {size, witness, line};

    if (!store_cosig_line_ok(witness, line))
        return IG_ERR_INVALID;
    if (size == 0 || size > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    return store_pg_txn(s, put_txn, &a);
}

/* ---- the reads ---- */

/* The lines of checkpoint `size` (0: the latest) in c's snapshot,
   appended to out. IG_ERR_NOTFOUND, IG_ERR_IO, ig_buf's errors. */
static enum ig_status
read_lines(struct store_pg *s, struct store_pg_conn *c, uint64_t size,
           struct ig_buf *out)
{
    struct store_pg_params p;
    PGresult *r;
    enum ig_status st = IG_OK;
    int i;

    store_pg_params_init(&p);
    if (size > 0)
        store_pg_param_int(&p, (int64_t)size);
    r = store_pg_query(s, c, size > 0 ? SQL_CKPT : SQL_CKPT_LATEST, &p, NULL,
                       NULL);
    if (r == NULL)
        return IG_ERR_IO;
    if (PQntuples(r) != 1 || store_pg_int(r, 0, 0) <= 0)
        st = IG_ERR_NOTFOUND;
    else
        size = (uint64_t)store_pg_int(r, 0, 0);
    PQclear(r);
    if (st != IG_OK)
        return st;
    store_pg_params_init(&p);
    store_pg_param_int(&p, (int64_t)size);
    if ((r = store_pg_query(s, c, SQL_LINES, &p, NULL, NULL)) == NULL)
        return IG_ERR_IO;
    for (i = 0; i < PQntuples(r) && st == IG_OK; i++)
        st = ig_buf_add(out, PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0));
    PQclear(r);
    return st;
}

enum ig_status
store_pg_cosig_get(struct store_pg *s, uint64_t size, char **lines)
{
    struct store_pg_conn *c;
    struct ig_buf b;
    enum ig_status st;

    *lines = NULL;
    if (size > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    if ((c = store_pg_read_begin(s, 0)) == NULL)
        return IG_ERR_IO;
    ig_buf_init(&b, AUDIT_NOTE_MAX);
    st = read_lines(s, c, size, &b);
    store_pg_read_end(s, c);
    if (st == IG_OK && (*lines = ig_buf_take(&b, NULL)) == NULL)
        st = IG_ERR_NOMEM;
    ig_buf_release(&b);
    return st == IG_OK || st == IG_ERR_NOTFOUND ? st : IG_ERR_IO;
}

enum ig_status
store_pg_cosig_latest(struct store_pg *s, const char *witness, uint64_t *size)
{
    struct store_pg_conn *c;
    struct store_pg_params p;
    struct ig_err err;
    PGresult *r;
    enum ig_status st = IG_ERR_IO;

    *size = 0;
    if (witness == NULL)
        return IG_ERR_INVALID;
    if ((c = store_pg_conn_get(s, &err)) == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return IG_ERR_IO;
    }
    store_pg_params_init(&p);
    store_pg_param_text(&p, witness);
    r = store_pg_query(s, c, SQL_LATEST, &p, NULL, NULL);
    store_pg_conn_put(s, c);
    if (r != NULL && PQntuples(r) == 1 && store_pg_int(r, 0, 0) >= 0) {
        *size = (uint64_t)store_pg_int(r, 0, 0);
        st = IG_OK;
    }
    PQclear(r);
    return st;
}
