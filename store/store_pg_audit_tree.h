/*
 * store_pg_audit_tree.h - private to the PostgreSQL sequencer
 * (store_pg_audit*.c): its state, and the audit tree kept in the
 * database (store_pg_audit_tree.c: reading tiles and leaves, the check at
 * open, the rebuild at a takeover, one batch of the sequencer).
 */
#ifndef STORE_PG_AUDIT_TREE_H
#define STORE_PG_AUDIT_TREE_H

#include "audit_tile.h"
#include "store_anchor.h"
#include "store_pg_int.h"

#define STORE_PG_SEQ_BATCH 1024    /* queued events moved per transaction */
#define STORE_PG_SEQ_RETRY_MS 1000 /* a follower tries the lock this often */
#define STORE_PG_SEQ_IDLE_MS                                                   \
    1000 /* the leader looks at the queue this often                           \
          */
#define STORE_PG_SEQ_CHECK_ROWS 4096 /* events read per query at open */

/* Reading the stored tree on connection c: tiles, leaves, and (edge not
   NULL) the partial tiles at the right edge. */
struct store_pg_tiles {
    struct store_pg *s;
    struct store_pg_conn *c;
    const struct audit_tile_edge *edge;
    uint64_t size;                        /* the tree's, without an edge */
    unsigned char tile[AUDIT_TILE_BYTES]; /* the tile read last */
};

/*
 * The sequencer. The fields under "thread" are shared with the calling
 * threads under mu; the rest belong to the sequencer's thread (and to
 * store_pg_audit_start before it starts, store_pg_audit_stop after it
 * ended).
 */
struct store_pg_seq {
    struct store_pg *s;

    /* thread */
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* leadership changed, a sign request answered */
    int wake[2];       /* a pipe: stop or a sign request */
    int stop;
    int leading;
    uint64_t sign_asked, sign_done; /* requests of store_pg_audit_sign */
    enum ig_status sign_st;
    uint64_t sign_size;

    /* The dedicated connection: it holds the session advisory lock
       STORE_PG_LOCK_SEQUENCER while leading, LISTENs on ig_audit, and
       runs the batches, so losing it loses the lock and the work at
       once. Not in the pool. */
    struct store_pg_conn conn;

    /* The tree of the sequenced events (valid while leading), its copy
       before the running batch (put back when it rolls back), the
       partial tiles at its right edge, the reader of its tiles. */
    struct store_audit_state audit, before;
    struct audit_tile_edge edge;
    struct store_pg_tiles rd;
    struct store_anchor_state anchor;
    double ckpt_due;  /* monotonic: next interval checkpoint */
    int ckpt_refused; /* the last attempt was refused */
    int no_sign;      /* the tree does not extend the anchor: never sign */

    /* the running batch */
    int sign;                /* 1: sign now (asked; or final, at close) */
    enum ig_status sign_rc;  /* what signing gave (IG_ERR_EXISTS: nothing) */
    uint64_t moved;          /* events moved */
    struct ig_err *load_err; /* store_pg_tree_load's and _check's */
};

/* Rebuild q->edge, the partial tiles of the tree of q->audit.tree.size
   leaves, from the stored tiles and the last events on q->conn.
   IG_ERR_IO. */
enum ig_status store_pg_tree_edge_rebuild(struct store_pg_seq *q) IG_WUR;

/* audit_fetch_fn over the sequencer's tree (ctx: the seq): stored tiles
   read on q->conn and the partial tiles of q->edge, rebuilt first when
   they no longer describe q->audit.tree. */
enum ig_status store_pg_tree_fetch(void *ctx, unsigned level, uint64_t index,
                                   unsigned char out[AUDIT_HASH_BYTES]);

/* At open, on q->conn in one snapshot: recompute the whole tree from
   audit_events, compare it with every stored tile and checkpoint; q->audit
   and q->edge then describe it and the anchor's newest is the newest
   checkpoint's note. IG_ERR_IO with err naming the first difference. */
enum ig_status store_pg_tree_check(struct store_pg_seq *q,
                                   struct ig_err *err) IG_WUR;

/* At a takeover, on q->conn: the tree of the stored events rebuilt from
   the tiles and the last events, the newest checkpoint checked against
   it (the anchor's newest). IG_ERR_IO with err. */
enum ig_status store_pg_tree_load(struct store_pg_seq *q,
                                  struct ig_err *err) IG_WUR;

/* One batch, as store_pg_txn_on's body on q->conn: move up to
   STORE_PG_SEQ_BATCH queued events into audit_events in queue order,
   extend the tree, store the tiles they fill, sign a checkpoint when due
   (q->sign or the options), NOTIFY ig_sequenced. IG_ERR_NOTFOUND when
   there was nothing to do (rolled back). q->audit is put back to
   q->before first (a retry starts over). */
enum ig_status store_pg_tree_batch(struct store_pg *s, struct store_pg_conn *c,
                                   void *arg) IG_WUR;

/* 1 when a checkpoint should be signed now; when the interval passed
   with nothing new, moves the deadline on. */
int store_pg_checkpoint_due(struct store_pg_seq *q, double now);

/* The tree of the events stored now, read on c (in a transaction, for
   one snapshot): its size and root. IG_ERR_IO. */
enum ig_status store_pg_tree_head(struct store_pg *s, struct store_pg_conn *c,
                                  uint64_t *size,
                                  unsigned char root[AUDIT_HASH_BYTES]) IG_WUR;

#endif
