/*
 * witness_state.c - the witness's state in SQLite and the add-checkpoint
 * decision (witness_state.h).
 *
 * Tables:
 *   logs(origin, size, root, note, cosig, updated_at)  one row per origin:
 *        the latest cosigned checkpoint, its note as served (the text and
 *        the log's signatures) and the cosignature line answered for it
 *   evidence(...)         refused checkpoints the log signed: immutable
 *                         (triggers), one row per (origin, note), at most
 *                         evidence_max per origin (witness_evidence.c)
 *   evidence_dropped(origin, count)   what the cap turned away
 *
 * One connection, guarded by a mutex; synchronous=FULL in WAL mode, so a
 * commit is on disk before the caller answers. A decision is taken inside
 * BEGIN IMMEDIATE: the stored size it compares with cannot change under
 * it, even from another process on the same file.
 */
#include "witness_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ig_hash.h"
#include "witness_config.h"
#include "witness_state_int.h"

#define BUSY_TIMEOUT_MS 10000

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS logs ("
    " origin TEXT PRIMARY KEY,"
    " size INTEGER NOT NULL,"
    " root BLOB NOT NULL CHECK (length(root) = 32),"
    " note TEXT NOT NULL,"
    " cosig TEXT NOT NULL,"
    " updated_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS evidence ("
    " id INTEGER PRIMARY KEY,"
    " origin TEXT NOT NULL,"
    " reason TEXT NOT NULL"
    "  CHECK (reason IN ('fork', 'inconsistent', 'rollback')),"
    " note_hash BLOB NOT NULL,"
    " old INTEGER NOT NULL,"
    " proof TEXT NOT NULL,"
    " note TEXT NOT NULL,"
    " stored TEXT NOT NULL,"
    " received_at INTEGER NOT NULL,"
    " UNIQUE (origin, note_hash));"
    "CREATE TRIGGER IF NOT EXISTS evidence_no_update"
    " BEFORE UPDATE ON evidence"
    " BEGIN SELECT RAISE(ABORT, 'witness evidence is immutable'); END;"
    "CREATE TRIGGER IF NOT EXISTS evidence_no_delete"
    " BEFORE DELETE ON evidence"
    " BEGIN SELECT RAISE(ABORT, 'witness evidence is immutable'); END;"
    "CREATE TABLE IF NOT EXISTS evidence_dropped ("
    " origin TEXT PRIMARY KEY,"
    " count INTEGER NOT NULL);"
    "PRAGMA user_version = 1;";

/* SHA-256 of the empty string: the root of the empty tree. */
static const unsigned char empty_root[32] = {
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4,
    0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b,
    0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};

static enum ig_status
exec(struct witness_state *s, const char *sql, struct ig_err *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return witness_sql_error(s, sql, err);
    return IG_OK;
}

static enum ig_status
open_db(struct witness_state *s, const struct witness_state_opts *o,
        struct ig_err *err)
{
    struct stat sb;
    int flags = o->read_only ? SQLITE_OPEN_READONLY
                             : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

    if (o->read_only && stat(o->path, &sb) != 0)
        return ig_err_set(err, IG_ERR_NOTFOUND,
                          "no witness database at %s (has the witness run?)",
                          o->path);
    if (sqlite3_open_v2(o->path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        return ig_err_set(
            err, IG_ERR_IO, "cannot open database %s: %s", o->path,
            s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
    (void)sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if (o->read_only)
        return exec(s, "PRAGMA query_only = 1", err);
    if (exec(s, "PRAGMA journal_mode = WAL", err) != IG_OK ||
        exec(s, "PRAGMA synchronous = FULL", err) != IG_OK ||
        exec(s, schema, err) != IG_OK)
        return IG_ERR_IO;
    /* The database holds the witness's view of every log: its owner's
       only, as the key is. */
    (void)chmod(o->path, 0600);
    return IG_OK;
}

enum ig_status
witness_state_open(const struct witness_state_opts *o,
                   struct witness_state **out, struct ig_err *err)
{
    struct witness_state *s = calloc(1, sizeof(*s));
    enum ig_status st;

    *out = NULL;
    if (s == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    s->evidence_max =
        o->evidence_max > 0 ? o->evidence_max : WITNESS_EVIDENCE_MAX;
    st = open_db(s, o, err);
    if (st != IG_OK) {
        witness_state_close(s);
        return st;
    }
    *out = s;
    return IG_OK;
}

void
witness_state_close(struct witness_state *s)
{
    if (s == NULL)
        return;
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- the decision ---- */

static enum ig_status
load(struct witness_state *s, const char *origin, struct witness_cur *cur,
     struct ig_err *err)
{
    sqlite3_stmt *st;
    const void *root;
    const char *note, *cosig;
    size_t nl, cl;
    int rc;

    memset(cur, 0, sizeof(*cur));
    if (witness_sql_prepare(s,
                            "SELECT size, root, note, cosig FROM logs "
                            "WHERE origin = ?",
                            &st, err) != IG_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_text(st, 1, origin, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        root = sqlite3_column_blob(st, 1);
        note = (const char *)sqlite3_column_text(st, 2);
        cosig = (const char *)sqlite3_column_text(st, 3);
        if (root == NULL || sqlite3_column_bytes(st, 1) != 32 || note == NULL ||
            cosig == NULL) {
            sqlite3_finalize(st);
            return ig_err_set(err, IG_ERR_IO,
                              "witness database: a damaged row for %s", origin);
        }
        nl = strlen(note);
        cl = strlen(cosig);
        cur->note = malloc(nl + cl + 1);
        if (cur->note == NULL) {
            sqlite3_finalize(st);
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        }
        memcpy(cur->note, note, nl);
        memcpy(cur->note + nl, cosig, cl + 1);
        cur->note_len = nl + cl;
        cur->has = 1;
        cur->size = (uint64_t)sqlite3_column_int64(st, 0);
        memcpy(cur->root, root, 32);
    } else if (rc != SQLITE_DONE) {
        sqlite3_finalize(st);
        return witness_sql_error(s, "read the stored checkpoint", err);
    }
    sqlite3_finalize(st);
    return IG_OK;
}

static void
refuse(struct witness_result *out, unsigned int status, const char *problem,
       enum witness_reason reason)
{
    out->status = status;
    out->problem = problem;
    out->reason = reason;
}

/* The spec's checks, in its order, against the stored checkpoint. */
static void
decide(const struct witness_submit *in, const struct witness_cur *cur,
       struct witness_result *out)
{
    out->size = cur->size;
    out->status = 200;
    if (in->old > in->size)
        refuse(out, 400, "old size is larger than the checkpoint's size",
               cur->has && in->old == cur->size ? WITNESS_REASON_ROLLBACK
                                                : WITNESS_REASON_NONE);
    else if (in->old != cur->size)
        refuse(out, 409, "old size is not the size last cosigned",
               WITNESS_REASON_NONE);
    else if (in->size == 0 && memcmp(in->root, empty_root, 32) != 0)
        refuse(out, 422,
               "a checkpoint of size 0 must have the empty tree's root",
               WITNESS_REASON_NONE);
    else if (in->old == 0 && in->nproof > 0)
        refuse(out, 422, "old size 0 takes no consistency proof",
               WITNESS_REASON_NONE);
    else if (in->old == in->size && cur->has &&
             memcmp(in->root, cur->root, 32) != 0)
        refuse(out, 422,
               "the checkpoint's root differs from the cosigned one of the "
               "same size (a fork)",
               WITNESS_REASON_FORK);
    else if (in->old == in->size && in->nproof > 0)
        refuse(out, 422, "a proof between equal sizes is empty",
               WITNESS_REASON_NONE);
    else if (in->old > 0 && in->old < in->size &&
             audit_verify_consistency(in->old, in->size, cur->root, in->root,
                                      in->proof, in->nproof) != IG_OK)
        refuse(out, 422,
               "the consistency proof from the cosigned checkpoint does not "
               "verify",
               WITNESS_REASON_INCONSISTENT);
}

/* Cosign and store in (in the open transaction). */
static enum ig_status
cosign(struct witness_state *s, const struct witness_submit *in,
       const struct witness_signer *sg, struct witness_result *out,
       struct ig_err *err)
{
    struct ig_buf line;
    sqlite3_stmt *st;
    int rc;

    ig_buf_init(&line, AUDIT_COSIG_LINE_MAX);
    if (in->now < 1 ||
        audit_cosig_sign(in->text, in->text_len, sg->name, sg->key,
                         (uint64_t)in->now, &line) != IG_OK ||
        line.len >= sizeof(out->line)) {
        ig_buf_release(&line);
        return ig_err_set(err, IG_ERR_INVALID, "cannot cosign as %s", sg->name);
    }
    memcpy(out->line, line.data, line.len + 1);
    ig_buf_release(&line);
    if (witness_sql_prepare(
            s,
            "INSERT INTO logs (origin, size, root, note, cosig, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (origin) DO UPDATE SET "
            "size = excluded.size, root = excluded.root, note = "
            "excluded.note, cosig = excluded.cosig, updated_at = "
            "excluded.updated_at",
            &st, err) != IG_OK)
        return IG_ERR_IO;
    (void)sqlite3_bind_text(st, 1, in->origin, -1, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)in->size);
    (void)sqlite3_bind_blob(st, 3, in->root, 32, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 4, in->kept, (int)in->kept_len, SQLITE_STATIC);
    (void)sqlite3_bind_text(st, 5, out->line, -1, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st, 6, in->now);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return witness_sql_error(s, "store the checkpoint", err);
    return IG_OK;
}

enum ig_status
witness_state_submit(struct witness_state *s, const struct witness_submit *in,
                     const struct witness_signer *sg,
                     struct witness_result *out, struct ig_err *err)
{
    struct witness_cur cur;
    enum ig_status st;

    memset(out, 0, sizeof(*out));
    memset(&cur, 0, sizeof(cur));
    pthread_mutex_lock(&s->mu);
    st = exec(s, "BEGIN IMMEDIATE", err);
    if (st != IG_OK)
        goto out;
    st = load(s, in->origin, &cur, err);
    if (st == IG_OK) {
        decide(in, &cur, out);
        if (out->reason != WITNESS_REASON_NONE)
            st = witness_evidence_put(s, in, &cur, out->reason, &out->evidence,
                                      err);
        else if (out->status == 200)
            st = cosign(s, in, sg, out, err);
    }
    if (st == IG_OK)
        st = exec(s, "COMMIT", err);
    if (st != IG_OK) {
        (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        memset(out, 0, sizeof(*out)); /* no cosignature leaves */
    }
out:
    pthread_mutex_unlock(&s->mu);
    free(cur.note);
    return st;
}

enum ig_status
witness_state_latest(struct witness_state *s, const char *origin, char **note,
                     size_t *len, uint64_t *size)
{
    struct witness_cur cur;
    enum ig_status st;

    *note = NULL;
    *len = 0;
    *size = 0;
    pthread_mutex_lock(&s->mu);
    st = load(s, origin, &cur, NULL);
    pthread_mutex_unlock(&s->mu);
    if (st != IG_OK)
        return st;
    if (!cur.has)
        return IG_ERR_NOTFOUND;
    *note = cur.note;
    *len = cur.note_len;
    *size = cur.size;
    return IG_OK;
}
