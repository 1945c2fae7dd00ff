/*
 * witness_evidence.c - the evidence table: checkpoints the log signed that
 * the witness refused, kept so that someone can hold the log to them; and
 * the listings `witness show` prints.
 *
 * A row is the note as the witness would serve it (the checkpoint text and
 * the log's own signature lines, verified), the request's old size and
 * proof, the cosigned note it conflicts with, and when it came. Rows never
 * change (triggers refuse UPDATE and DELETE). The same note is kept once
 * per origin (the SHA-256 of its text is unique). An origin keeps at most
 * evidence_max rows of each reason: whoever holds the log's old checkpoints (a
 * witness serves each one it cosigns) can replay them with a wrong old size or
 * a bad proof, and must not fill the disk - nor the room kept for a fork, two
 * checkpoints of one size with different roots, the one row that proves
 * misbehaviour on its own. Past the cap the rows are only counted, in
 * evidence_dropped.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ig_buf.h"
#include "ig_hash.h"
#include "witness_state_int.h"

/* The proof as base64 lines. */
static enum ig_status
proof_text(const struct witness_submit *in, struct ig_buf *b)
{
    char h[48];
    size_t i, n;

    for (i = 0; i < in->nproof; i++) {
        (void)sodium_bin2base64(h, sizeof(h), in->proof[i], AUDIT_HASH_BYTES,
                                sodium_base64_VARIANT_ORIGINAL);
        n = strlen(h);
        h[n++] = '\n';
        if (ig_buf_add(b, h, n) != IG_OK)
            return IG_ERR_NOMEM;
    }
    return ig_buf_add(b, "", 0);
}

/* 1 when (origin, hash) is kept already, 0 not, -1 on error. */
static int
known(struct witness_state *s, const char *origin, const unsigned char h[32],
      struct ig_err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (witness_sql_prepare(s,
                            "SELECT 1 FROM evidence WHERE origin = ? AND "
                            "note_hash = ?",
                            &st, err) != IG_OK)
        return -1;
    (void)sqlite3_bind_text(st, 1, origin, -1, SQLITE_STATIC);
    (void)sqlite3_bind_blob(st, 2, h, 32, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    (void)witness_sql_error(s, "read the evidence", err);
    return -1;
}

static int64_t
count(struct witness_state *s, const char *origin, enum witness_reason reason,
      struct ig_err *err)
{
    sqlite3_stmt *st;
    int64_t n = -1;

    if (witness_sql_prepare(s,
                            "SELECT count(*) FROM evidence WHERE origin = ? "
                            "AND reason = ?",
                            &st, err) != IG_OK)
        return -1;
    (void)sqlite3_bind_text(st, 1, origin, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 2, witness_reason_name(reason), -1,
                            SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    else
        (void)witness_sql_error(s, "count the evidence", err);
    sqlite3_finalize(st);
    return n;
}

static enum ig_status
drop(struct witness_state *s, const char *origin, struct ig_err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (witness_sql_prepare(s,
                            "INSERT INTO evidence_dropped (origin, count) "
                            "VALUES (?, 1) ON CONFLICT (origin) DO UPDATE "
                            "SET count = count + 1",
                            &st, err) != IG_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_text(st, 1, origin, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? IG_OK
                             : witness_sql_error(s, "count the evidence", err);
}

static enum ig_status
insert(struct witness_state *s, const struct witness_submit *in,
       const struct witness_cur *cur, enum witness_reason reason,
       const unsigned char h[32], struct ig_err *err)
{
    struct ig_buf proof;
    sqlite3_stmt *st;
    int rc;

    ig_buf_init(&proof, (AUDIT_WITNESS_PROOF_MAX + 1) * 48);
    if (proof_text(in, &proof) != IG_OK) {
        ig_buf_release(&proof);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    if (witness_sql_prepare(
            s,
            "INSERT INTO evidence (origin, reason, note_hash, old, proof, "
            "note, stored, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            &st, err) != IG_OK) {
        ig_buf_release(&proof);
        return IG_ERR_IO;
    }
    (void)sqlite3_bind_text(st, 1, in->origin, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 2, witness_reason_name(reason), -1,
                            SQLITE_STATIC);
    (void)sqlite3_bind_blob(st, 3, h, 32, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st, 4, (sqlite3_int64)in->old);
    (void)sqlite3_bind_text(st, 5, proof.data, (int)proof.len, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 6, in->kept, (int)in->kept_len, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 7, cur->note != NULL ? cur->note : "",
                            (int)cur->note_len, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st, 8, in->now);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    ig_buf_release(&proof);
    return rc == SQLITE_DONE ? IG_OK
                             : witness_sql_error(s, "keep the evidence", err);
}

enum ig_status
witness_evidence_put(struct witness_state *s, const struct witness_submit *in,
                     const struct witness_cur *cur, enum witness_reason reason,
                     int *outcome, struct ig_err *err)
{
    unsigned char h[32];
    int64_t n;
    int k;

    *outcome = 0;
    /* Once per checkpoint: its text, whatever signature lines came on
       it (a line repeated, another trusted key's). */
    ig_sha256(in->kept, in->text_len, h);
    k = known(s, in->origin, h, err);
    if (k != 0)
        return k < 0 ? IG_ERR_IO : IG_OK;
    n = count(s, in->origin, reason, err);
    if (n < 0)
        return IG_ERR_IO;
    if ((uint64_t)n >= s->evidence_max) {
        *outcome = -1;
        return drop(s, in->origin, err);
    }
    *outcome = 1;
    return insert(s, in, cur, reason, h, err);
}

/* ---- listings ---- */

static const char *
text(sqlite3_stmt *st, int i)
{
    const unsigned char *p = sqlite3_column_text(st, i);

    return p != NULL ? (const char *)p : "";
}

typedef int (*log_fn)(void *ctx, const struct witness_log_row *r);
typedef int (*evidence_fn)(void *ctx, const struct witness_evidence_row *r);
typedef int (*dropped_fn)(void *ctx, const char *origin, uint64_t count);

/* The caller's callback, whichever listing it is. */
struct cb {
    log_fn log;
    evidence_fn evidence;
    dropped_fn dropped;
    void *ctx;
};

/* Run sql (no parameters) and call row for each row; row returns 0 to go
   on. */
static enum ig_status
each(struct witness_state *s, const char *sql,
     int (*row)(sqlite3_stmt *st, const struct cb *cb), const struct cb *cb)
{
    enum ig_status ret = IG_OK;
    sqlite3_stmt *st;
    int rc;

    pthread_mutex_lock(&s->mu);
    if (witness_sql_prepare(s, sql, &st, NULL) != IG_OK) {
        pthread_mutex_unlock(&s->mu);
        return IG_ERR_IO;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (row(st, cb) != 0)
            break;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        ret = IG_ERR_IO;
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return ret;
}

static int
log_row(sqlite3_stmt *st, const struct cb *cb)
{
    struct witness_log_row r;
    static const unsigned char zero[32];
    struct ig_buf note;
    int rc;

    memset(&r, 0, sizeof(r));
    ig_buf_init(&note, 2 * AUDIT_NOTE_MAX);
    r.origin = text(st, 0);
    r.size = (uint64_t)sqlite3_column_int64(st, 1);
    r.root =
        sqlite3_column_bytes(st, 2) == 32 ? sqlite3_column_blob(st, 2) : zero;
    if (ig_buf_adds(&note, text(st, 3)) != IG_OK ||
        ig_buf_adds(&note, text(st, 4)) != IG_OK) {
        ig_buf_release(&note);
        return -1;
    }
    r.note = note.data;
    r.updated_at = sqlite3_column_int64(st, 5);
    rc = cb->log(cb->ctx, &r);
    ig_buf_release(&note);
    return rc;
}

enum ig_status
witness_state_each_log(struct witness_state *s,
                       int (*fn)(void *ctx, const struct witness_log_row *r),
                       void *ctx)
{
    return each(s,
                "SELECT origin, size, root, note, cosig, updated_at FROM logs "
                "ORDER BY origin",
                log_row, &(const struct cb){fn, NULL, NULL, ctx});
}

static int
evidence_row(sqlite3_stmt *st, const struct cb *cb)
{
    struct witness_evidence_row r;

    memset(&r, 0, sizeof(r));
    r.id = sqlite3_column_int64(st, 0);
    r.origin = text(st, 1);
    r.reason = text(st, 2);
    r.old = (uint64_t)sqlite3_column_int64(st, 3);
    r.proof = text(st, 4);
    r.note = text(st, 5);
    r.stored = text(st, 6);
    r.received_at = sqlite3_column_int64(st, 7);
    return cb->evidence(cb->ctx, &r);
}

enum ig_status
witness_state_each_evidence(struct witness_state *s,
                            int (*fn)(void *ctx,
                                      const struct witness_evidence_row *r),
                            void *ctx)
{
    return each(s,
                "SELECT id, origin, reason, old, proof, note, stored, "
                "received_at FROM evidence ORDER BY id",
                evidence_row, &(const struct cb){NULL, fn, NULL, ctx});
}

static int
dropped_row(sqlite3_stmt *st, const struct cb *cb)
{
    return cb->dropped(cb->ctx, text(st, 0),
                       (uint64_t)sqlite3_column_int64(st, 1));
}

enum ig_status
witness_state_each_dropped(struct witness_state *s,
                           int (*fn)(void *ctx, const char *origin,
                                     uint64_t count),
                           void *ctx)
{
    return each(s, "SELECT origin, count FROM evidence_dropped ORDER BY origin",
                dropped_row, &(const struct cb){NULL, NULL, fn, ctx});
}
