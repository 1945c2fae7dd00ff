/*
 * store_log.h - an audit log database read offline and read-only: what
 * the `intentgate audit` commands read (cli/cmd_audit*.c), without the
 * writer thread, the read pool or anything else of struct store.
 *
 * store_log_open never creates, migrates or writes the file, and leaves
 * nothing beside it: it is opened with SQLITE_OPEN_READONLY and
 * query_only on (so no statement can change it) - as an immutable file
 * when no connection has it open (store_log.c says how and what that
 * costs) - and everything is then read inside one read transaction, held
 * until store_log_close: a log the PDP is still appending to is seen at
 * one instant, and every call sees the same rows.
 *
 * The tables read are the store's: audit_events (seq, event) with leaf
 * index = seq - 1, audit_tiles (level, idx, hashes: the tree as C2SP
 * tiles, audit/audit_tile.h) - or, in a file no PDP of schema 4 has
 * opened yet, audit_nodes (level, idx, hash) with level 0 the leaf
 * hashes - and checkpoints (size, note, created_at). Rows come back as
 * stored - a reader that verifies the log (audit verify) must see a gap,
 * a NULL or a wrong-sized hash exactly as it is - so nothing here checks
 * or repairs them. A checkpoint's note comes with its witnesses'
 * cosignature lines (the cosignatures table, store.h) appended after the
 * log's signature, ordered by witness name: one signed note that a
 * verifier of the log's key reads as before, and a witness's verifier
 * checks. A database older than the cosignatures table gives the notes
 * alone.
 *
 * A postgresql:// (or postgres://) URL is read the same way
 * (store_log_pg.c): one connection, one READ ONLY REPEATABLE READ
 * transaction held until store_log_close (one instant of a log that
 * replicas are still appending to), never a migration or a write. There
 * the tree is always stored as tiles, and the events the replicas queued
 * (audit_queue) but the sequencer has not yet put in the log are not read
 * as leaves: store_log_queued counts them.
 *
 * Errors: IG_ERR_INVALID (not a database, a table missing), IG_ERR_IO (a
 * read failed, or the file changed under an immutable read: read it
 * again), IG_ERR_NOTFOUND, IG_ERR_NOMEM, each with err (when not NULL)
 * naming the file, the table or SQLite's message. Not thread safe:
 * one struct store_log and its cursors belong to one thread.
 */
#ifndef STORE_LOG_H
#define STORE_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "audit_tree.h"
#include "ig_error.h"

struct store_log;
struct store_log_cursor;

/* 1 when the URL carries a password (scheme://user:password@host, or a
   password= parameter, also percent-encoded): commands refuse it, since every
   local user sees a command line (libpq reads PGPASSWORD and ~/.pgpass
   instead). */
int store_url_has_password(const char *url);

/*
 * Open path read-only and start the read transaction; checks that it
 * holds an audit log. IG_ERR_INVALID with err "cannot open PATH: REASON"
 * (missing, unreadable; for a URL: refused with a password, no server,
 * refused by it) or "PATH is not an intentgate database: REASON".
 * *out is freed with store_log_close.
 */
enum ig_status store_log_open(const char *path, struct store_log **out,
                              struct ig_err *err) IG_WUR;

/* End the read transaction, close, free. NULL is fine. */
void store_log_close(struct store_log *l);

/* ---- scanning a table in order ---- */

enum store_log_table {
    STORE_LOG_EVENTS,      /* audit_events by seq */
    STORE_LOG_LEAF_HASHES, /* audit_nodes level 0 by idx (schema 3) */
    STORE_LOG_CHECKPOINTS, /* checkpoints by size */
    STORE_LOG_TILES,       /* audit_tiles of one level (store_log_scan_tiles) */
    STORE_LOG_LEAVES       /* audit_events by seq, each event's bytes read in
                              place: not NUL-terminated (no copy per row) */
};

/* One row, as stored. Borrowed: valid until the next store_log_next or
   store_log_cursor_free on its cursor. */
struct store_log_row {
    int64_t key;      /* events: seq; leaf hashes: idx; checkpoints: size */
    const void *data; /* events, leaves: the event's bytes; leaf hashes:
                         the hash; checkpoints: the note. NUL-terminated
                         except for leaves; NULL for an SQL NULL (len 0)
                         and, for leaves, an empty value. */
    size_t len;       /* bytes at data */
    int64_t at;       /* checkpoints: created_at (seconds); else 0 */
};

/*
 * A cursor over table in key order; for STORE_LOG_EVENTS with contains
 * not NULL, only the events whose text contains that string (a cheap
 * prefilter: the caller checks what it matched). IG_ERR_INVALID "the
 * database has no readable checkpoints table: ..." for checkpoints,
 * IG_ERR_IO "database: ..." otherwise. Free with store_log_cursor_free.
 */
enum ig_status store_log_scan(struct store_log *l, enum store_log_table table,
                              const char *contains,
                              struct store_log_cursor **out,
                              struct ig_err *err) IG_WUR;

/* The next row: IG_OK with *row, IG_ERR_NOTFOUND after the last one,
   IG_ERR_IO with err "reading TABLE: ...". */
enum ig_status store_log_next(struct store_log_cursor *c,
                              struct store_log_row *row,
                              struct ig_err *err) IG_WUR;

/* NULL is fine. */
void store_log_cursor_free(struct store_log_cursor *c);

/* ---- single rows ---- */

/*
 * The note of the checkpoint of tree size `size` (0: the latest), copied
 * to *note (malloc'd, NUL-terminated; caller frees) with *len, and its
 * size in *got. IG_ERR_NOTFOUND (none: err says so), IG_ERR_INVALID (no
 * checkpoints table), IG_ERR_IO, IG_ERR_NOMEM.
 */
enum ig_status store_log_checkpoint(struct store_log *l, uint64_t size,
                                    char **note, size_t *len, uint64_t *got,
                                    struct ig_err *err) IG_WUR;

/* The event of leaf index (malloc'd, NUL-terminated, *len bytes).
   IG_ERR_NOTFOUND "no leaf N in the log", IG_ERR_IO, IG_ERR_NOMEM. */
enum ig_status store_log_leaf(struct store_log *l, uint64_t index, char **leaf,
                              size_t *len, struct ig_err *err) IG_WUR;

/* ---- tiles ---- */

/* 1 when the file stores its tree as tiles (audit_tiles), 0 when as
   audit_nodes (schema 3, not opened by a newer PDP yet). */
int store_log_has_tiles(struct store_log *l);

/* A cursor over the tiles of tile level `level`, by index: rows with key
   the index, data the stored bytes (untrusted: check len), at the level.
   IG_ERR_IO "database: ...". */
enum ig_status store_log_scan_tiles(struct store_log *l, unsigned level,
                                    struct store_log_cursor **out,
                                    struct ig_err *err) IG_WUR;

/* ---- tree nodes ---- */

/* Ready store_log_fetch_node for the tree of the first size leaves.
   IG_ERR_INVALID "the database has no readable audit_tiles table: ..." */
enum ig_status store_log_nodes(struct store_log *l, uint64_t size,
                               struct ig_err *err) IG_WUR;

/* An audit_fetch_fn (ctx: the struct store_log, after store_log_nodes):
   the complete subtree from the tiles (and, at the right edge, the last
   events), or from audit_nodes in a schema-3 file. IG_OK, IG_ERR_NOTFOUND
   (no such subtree), IG_ERR_INVALID (a tile of another length),
   IG_ERR_IO. */
enum ig_status store_log_fetch_node(void *ctx, unsigned level, uint64_t index,
                                    unsigned char out[AUDIT_HASH_BYTES]);

/* ---- recorded decisions (policy replay) ---- */

/*
 * One row of the decisions table with what a replay of it needs, as
 * stored: untrusted (the file may have been edited), so every text may be
 * NULL (an SQL NULL, or no such intent row) and the JSON texts may be
 * anything; the caller parses and checks. Borrowed: valid until the next
 * store_log_next_decision or store_log_cursor_free on its cursor. Texts
 * are NUL-terminated; the JSON ones come with their length too (a NUL
 * inside is then seen).
 */
struct store_log_decision {
    int64_t seq;        /* decisions.seq: the order decisions were made in */
    int64_t decided_at; /* seconds */
    const char *intent_id, *action, *resource; /* the intent's row */
    const char *intent_hash;                   /* the intent's row */
    int64_t created_at;                        /* the intent's row */
    const char *binding;                       /* the intent binding, JSON */
    size_t binding_len;
    const char *decision; /* ALLOW, ESCALATE, BLOCK */
    const char *reasons;  /* a JSON array of codes */
    size_t reasons_len;
    const char *message, *policy_revision;
    /* 1 when this is not the intent's first decision: one made when its
       approval request ended (resolution result APPROVED, DENIED or
       EXPIRED). Then approval_id, requirements (JSON {groups, quorum}),
       result and votes are the request's (NULL when missing). */
    int later;
    const char *approval_id, *result;
    const char *requirements;
    size_t requirements_len;
    /* A JSON array of the request's votes in the order they were cast:
       [{"approver", "vote", "comment", "groups" (the stored text: a JSON
       array as a string), "voted_at", "intent_hash"}]. NULL when none. */
    const char *votes;
    size_t votes_len;
};

/*
 * A cursor over the decisions made at from <= decided_at < until, in the
 * order they were made (seq). Both backends give the same rows. IG_ERR_IO
 * "database: ..." (no such table: not a store of this schema). Read it
 * with store_log_next_decision, free it with store_log_cursor_free.
 */
enum ig_status store_log_scan_decisions(struct store_log *l, int64_t from,
                                        int64_t until,
                                        struct store_log_cursor **out,
                                        struct ig_err *err) IG_WUR;

/* The next decision: IG_OK with *d, IG_ERR_NOTFOUND after the last one,
   IG_ERR_IO with err "reading decisions: ...". */
enum ig_status store_log_next_decision(struct store_log_cursor *c,
                                       struct store_log_decision *d,
                                       struct ig_err *err) IG_WUR;

/* ---- PostgreSQL ---- */

/* The events queued by the replicas that are not yet in the log
   (audit_queue rows the sequencer has not moved), in *n; 0 for a SQLite
   file. IG_ERR_IO with err. */
enum ig_status store_log_queued(struct store_log *l, uint64_t *n,
                                struct ig_err *err) IG_WUR;

#endif
