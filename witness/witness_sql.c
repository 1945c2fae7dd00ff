/*
 * witness_sql.c - the leaf of the witness's state files: SQLite errors and
 * statements, and the names of the reasons evidence is kept for. It calls
 * none of witness_state.c and witness_evidence.c.
 */
#include "witness_state_int.h"

const char *
witness_reason_name(enum witness_reason r)
{
    switch (r) {
    case WITNESS_REASON_FORK:
        return "fork";
    case WITNESS_REASON_INCONSISTENT:
        return "inconsistent";
    case WITNESS_REASON_ROLLBACK:
        return "rollback";
    default:
        return "none";
    }
}

enum ig_status
witness_sql_error(struct witness_state *s, const char *what, struct ig_err *err)
{
    return ig_err_set(err, IG_ERR_IO, "witness database: %s: %s", what,
                      sqlite3_errmsg(s->db));
}

enum ig_status
witness_sql_prepare(struct witness_state *s, const char *sql, sqlite3_stmt **st,
                    struct ig_err *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return witness_sql_error(s, "prepare", err);
    }
    return IG_OK;
}
