/*
 * store_anchor.h - private to the store: the audit log's anchor file and
 * the checks around each checkpoint (store_anchor.c has the design),
 * shared by the SQLite store's writer and the PostgreSQL sequencer.
 *
 * Each backend keeps its tree and newest checkpoint in a struct
 * store_audit_state and an anchor whose env says how to read the tree's
 * subtrees and how to record an adoption. Everything here runs on the one
 * thread that appends to the tree (the SQLite writer, the PostgreSQL
 * sequencer) or at open and close, before and after it.
 */
#ifndef STORE_ANCHOR_H
#define STORE_ANCHOR_H

#include <stdint.h>

#include "audit_note.h"
#include "audit_tree.h"
#include "ig_buf.h"
#include "ig_error.h"
#include "store.h"

/*
 * The audit tree as its one appender sees it. A copy is taken before each
 * transaction and put back when it is rolled back: the frontier always
 * describes exactly the committed events plus the running transaction's.
 */
struct store_audit_state {
    struct audit_frontier tree;
    uint64_t ckpt_size; /* the latest stored checkpoint; 0: none */
    unsigned char ckpt_root[AUDIT_HASH_BYTES];
};

/* A signed checkpoint on its way to the anchor file. */
struct store_anchor_note {
    char *text; /* the signed note, NUL-terminated; NULL: none */
    size_t len;
    uint64_t size;
    unsigned char root[AUDIT_HASH_BYTES];
};

/* What the anchor reads of its backend; set before store_anchor_open. */
struct store_anchor_env {
    const struct store_opts *opts;
    /* SQLite: the database file (an anchor in its directory is warned
       about); NULL: none (a URL). */
    const char *db_path;
    /* 1: other writers extend the log too (PostgreSQL replicas), so
       leaves beyond the anchor at open are not a tamperer's. */
    int shared;
    struct store_audit_state *audit;
    /* The current tree's complete subtrees (audit_fetch_fn over ctx). */
    audit_fetch_fn fetch;
    void *ctx;
    /* Append one event (the adoption, canonical JSON) to the log in a
       transaction of its own, before anything is signed: IG_ERR_IO with
       err. */
    enum ig_status (*record)(void *ctx, const char *event, struct ig_err *err);
};

/*
 * The anchor: the latest signed checkpoint kept in a file outside the
 * database. path NULL: no anchor (no audit key). size/root: what the file
 * holds (0: nothing yet). staged: signed in the running transaction; moved
 * to unwritten at its commit and written to the file; still there when
 * that write failed. newest: at open, the newest stored checkpoint's note.
 */
struct store_anchor_state {
    struct store_anchor_env env;
    char *path, *tmp, *marker;
    uint64_t size;
    unsigned char root[AUDIT_HASH_BYTES];
    struct store_anchor_note staged, unwritten;
    char *newest;
    int marked_refused; /* the marker says a checkpoint was refused */
};

/* ---- store_anchor.c ---- */

/* Log through opts.log (fields stolen; dropped when there is no log). */
void store_anchor_log(const struct store_anchor_state *an, const char *level,
                      const char *event, json_t *fields);
/* Sign a checkpoint of (size, root) with opts' audit key: the whole signed
   note appended to out. ig_buf's and audit_note_sign's errors. */
enum ig_status store_anchor_sign(const struct store_opts *opts, uint64_t size,
                                 const unsigned char root[AUDIT_HASH_BYTES],
                                 struct ig_buf *out) IG_WUR;
/* The root a checkpoint note of tree size `size` states: 0, or -1 when
   the note does not state that size or a root. */
int store_audit_note_root(const char *note, uint64_t size,
                          unsigned char root[AUDIT_HASH_BYTES]);
/* At open: a stored checkpoint (in size order) against the tree env.fetch
   describes; it becomes audit's newest and its note an->newest. IG_ERR_IO
   with err naming the checkpoint. */
enum ig_status store_anchor_check_stored(struct store_anchor_state *an,
                                         uint64_t size, const char *note,
                                         struct ig_err *err) IG_WUR;
/* Before signing (size, root): the stored tiles must hash to root, the
   tree extend the previous checkpoint and the anchor. IG_OK, or
   IG_ERR_CRYPTO: the running marker says so, audit.checkpoint_refused is
   logged. */
enum ig_status
store_anchor_check_next(struct store_anchor_state *an, uint64_t size,
                        const unsigned char root[AUDIT_HASH_BYTES]) IG_WUR;

/* The file. Write note atomically (a temporary file beside it, fsync,
   rename, fsync of the directory), mode 0600. */
enum ig_status store_anchor_write(struct store_anchor_state *an,
                                  const char *note, size_t len,
                                  struct ig_err *err) IG_WUR;
/* Read path (a regular file, not writable by group or others, 1 to
   cap - 1 bytes) into buf: IG_OK, IG_ERR_NOTFOUND (no file), IG_ERR_IO. */
enum ig_status store_anchor_read(const char *path, char *buf, size_t cap,
                                 size_t *len, struct ig_err *err) IG_WUR;
/* Open the anchor's note: a checkpoint of this log signed by the audit
   key, or (*other_key = 1) signed only by another key of the log's name.
   IG_ERR_CRYPTO otherwise (a signature of the audit key that does not
   verify, another log, malformed), with err. */
enum ig_status store_anchor_parse(struct store_anchor_state *an,
                                  const char *note, size_t len,
                                  struct audit_checkpoint *cp, int *other_key,
                                  struct ig_err *err) IG_WUR;
/* NULL when the tree (size, root) extends the anchor, else why not. */
const char *store_anchor_extends(struct store_anchor_state *an, uint64_t size,
                                 const unsigned char root[AUDIT_HASH_BYTES]);
/* Before signing: write a committed checkpoint the file still misses.
   IG_OK, or IG_ERR_IO (logged: no checkpoint may be signed). */
enum ig_status store_anchor_ready(struct store_anchor_state *an) IG_WUR;
/* Keep a copy of the checkpoint signed in the running transaction. */
enum ig_status
store_anchor_stage(struct store_anchor_state *an, const char *note, size_t len,
                   uint64_t size,
                   const unsigned char root[AUDIT_HASH_BYTES]) IG_WUR;
/* After each transaction: a staged checkpoint is written to the file when
   committed, dropped when not. */
void store_anchor_after_commit(struct store_anchor_state *an, int committed);
/* A checkpoint was refused (the stored tree is not the one this PDP
   wrote): the running marker says so, fsynced, so that no later start
   takes the unsigned tail for a crash's. Once per run; logged if the
   marker cannot be written. */
void store_anchor_mark_refused(struct store_anchor_state *an);
/* 1 when the running marker says a run refused a checkpoint. */
int store_anchor_marker_refused(const char *marker);
/* At close; clean (the appender ran and stopped): remove the running
   marker when the file holds the whole tree. Frees the anchor state. */
void store_anchor_close(struct store_anchor_state *an, int clean);

/* ---- store_anchor_open.c ---- */

/* At open, after the stored log was checked against itself and env.audit
   holds its tree and newest checkpoint: read the anchor, check the tree
   extends it, adopt or refuse (opts.anchor_adopt), bring it up to date,
   write the running marker. IG_ERR_IO with err saying what to do. */
enum ig_status store_anchor_open(struct store_anchor_state *an,
                                 struct ig_err *err) IG_WUR;
/* A shared log's new appender (a PostgreSQL replica that took the
   sequencer's lock), env.audit rebuilt with an->newest the newest stored
   note: read the file again (another replica may share it), check the
   tree extends it and bring it up to date. IG_OK; IG_ERR_CRYPTO when the
   tree does not extend it (err says why); IG_ERR_IO. */
enum ig_status store_anchor_takeover(struct store_anchor_state *an,
                                     struct ig_err *err) IG_WUR;

#endif
