/*
 * store_cosig.c - witness cosignatures in the SQLite store (store.h says
 * what is promised), and the check of a cosignature line both backends
 * make before they keep one.
 *
 * A put is a job on the writer thread, like every write: it looks for the
 * checkpoint first (no row, IG_ERR_NOTFOUND, nothing written), then
 * inserts the line with ON CONFLICT DO NOTHING, so the first line of a
 * witness for a checkpoint stays and a repeat is a no-op - never an
 * UPDATE, which the table's trigger refuses anyway. The reads borrow a
 * read connection and hold one read transaction: the checkpoint and its
 * lines come from the same committed state.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#include "audit_cosig.h"
#include "audit_note.h"

/* "— " (U+2014 EM DASH, then a space): a signature line's start. */
static const char dash[] = "\xe2\x80\x94 ";

static int
is_b64(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
}

int
store_cosig_line_ok(const char *witness, const char *line)
{
    size_t n, wn, i, start;

    if (witness == NULL || line == NULL || !audit_name_valid(witness))
        return 0;
    n = strnlen(line, AUDIT_COSIG_LINE_MAX + 1);
    wn = strlen(witness);
    start = sizeof(dash) - 1 + wn + 1;
    if (n > AUDIT_COSIG_LINE_MAX || n < start + 2 || line[n - 1] != '\n' ||
        memcmp(line, dash, sizeof(dash) - 1) != 0 ||
        memcmp(line + sizeof(dash) - 1, witness, wn) != 0 ||
        line[start - 1] != ' ')
        return 0;
    for (i = start; i < n - 1; i++)
        if (!is_b64((unsigned char)line[i]))
            return 0;
    return 1;
}

/* ---- the write ---- */

struct cosig_rec {
    uint64_t size;
    const char *witness, *line;
};

static enum ig_status
job_cosig_put(struct store_sq *s, struct store_job *j)
{
    const struct cosig_rec *r = j->rec;
    sqlite3_stmt *st = s->wst[W_CKPT_EXISTS];
    enum ig_status rc;
    int step;

    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)r->size);
    step = sqlite3_step(st);
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    if (step == SQLITE_DONE)
        return IG_ERR_NOTFOUND;
    if (step != SQLITE_ROW)
        return IG_ERR_IO;
    st = s->wst[W_COSIG];
    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)r->size);
    store_sql_bind_text(st, 2, r->witness);
    store_sql_bind_text(st, 3, r->line);
    (void)sqlite3_bind_int64(st, 4, ig_time_now());
    rc = sqlite3_step(st) == SQLITE_DONE ? IG_OK : IG_ERR_IO;
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

enum ig_status
store_sq_cosig_put(struct store_sq *s, uint64_t size, const char *witness,
                   const char *line)
{
    struct cosig_rec r = {size, witness, line};

    if (!store_cosig_line_ok(witness, line))
        return IG_ERR_INVALID;
    if (size == 0 || size > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    return store_run(s, job_cosig_put, &r, NULL);
}

/* ---- the reads ---- */

/* The size of the checkpoint of tree size `size` (0: the latest) on c, into
 *got. IG_ERR_NOTFOUND, IG_ERR_IO. */
static enum ig_status
checkpoint_size(struct store_rconn *c, uint64_t size, uint64_t *got)
{
    sqlite3_stmt *st = c->st[size == 0 ? R_CKPT_LATEST : R_CKPT_SIZE];
    enum ig_status rc = IG_ERR_IO;
    int step;

    if (size > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    if (size > 0)
        (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        *got = (uint64_t)sqlite3_column_int64(st, 0);
        rc = IG_OK;
    } else if (step == SQLITE_DONE) {
        rc = IG_ERR_NOTFOUND;
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

/* The lines of checkpoint `size` on c, appended to out. */
static enum ig_status
read_lines(struct store_rconn *c, uint64_t size, struct ig_buf *out)
{
    sqlite3_stmt *st = c->st[R_COSIGS];
    enum ig_status rc = IG_OK;
    int step;

    (void)sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
    while (rc == IG_OK && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = ig_buf_add(out, sqlite3_column_text(st, 0),
                        (size_t)sqlite3_column_bytes(st, 0));
    if (rc == IG_OK && step != SQLITE_DONE)
        rc = IG_ERR_IO;
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    return rc;
}

enum ig_status
store_sq_cosig_get(struct store_sq *s, uint64_t size, char **lines)
{
    struct store_rconn *c;
    struct ig_buf b;
    enum ig_status rc;
    uint64_t got = 0;

    *lines = NULL;
    if ((c = store_read_begin(s)) == NULL)
        return IG_ERR_IO;
    ig_buf_init(&b, AUDIT_NOTE_MAX);
    rc = checkpoint_size(c, size, &got);
    if (rc == IG_OK)
        rc = read_lines(c, got, &b);
    store_read_end(s, c);
    if (rc == IG_OK && (*lines = ig_buf_take(&b, NULL)) == NULL)
        rc = IG_ERR_NOMEM;
    ig_buf_release(&b);
    return rc == IG_OK || rc == IG_ERR_NOTFOUND ? rc : IG_ERR_IO;
}

enum ig_status
store_sq_cosig_latest(struct store_sq *s, const char *witness, uint64_t *size)
{
    struct store_rconn *c;
    sqlite3_stmt *st;
    enum ig_status rc = IG_ERR_IO;

    *size = 0;
    if (witness == NULL)
        return IG_ERR_INVALID;
    if ((c = store_read_begin(s)) == NULL)
        return IG_ERR_IO;
    st = c->st[R_COSIG_LATEST];
    store_sql_bind_text(st, 1, witness);
    if (sqlite3_step(st) == SQLITE_ROW) {
        /* max() of no rows is NULL: 0, none. */
        if (sqlite3_column_int64(st, 0) > 0)
            *size = (uint64_t)sqlite3_column_int64(st, 0);
        rc = IG_OK;
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    store_read_end(s, c);
    return rc;
}
