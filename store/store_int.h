/*
 * store_int.h - private to the SQLite store: the store struct, the
 * writer job queue and the read connection pool.
 *
 * The files form layers; each calls only files of the layers below it:
 *   store_anchor.c                 the anchor file and the checks around
 *                                  a checkpoint (store_anchor.h, shared
 *                                  with the PostgreSQL sequencer)
 *   store_anchor_open.c            the anchor at open (also shared)
 *   store_util.c, store_stmt.c, store_schema.c, store_checkpoint.c,
 *   store_audit_check.c, store_counter.c
 *                                  helpers, statement texts, the schema,
 *                                  the WAL checkpointer, the open check,
 *                                  quota counters
 *   store_audit_edge.c             the tree's hashes as the writer reads
 *                                  them (stored tiles and the edge)
 *   store_audit.c                  the append path, checkpoint jobs
 *   store_ops.c, store_pool.c      the operations' jobs, read connections
 *   store_audit_open.c             the audit log at open
 *   store_sqlite.c                 lifecycle and the writer thread
 *   store_write.c                  the write operations (submit jobs)
 *   store_approval.c               approvals and their votes
 *   store_read.c, store_audit_read.c,
 *   store_audit_view.c             the reads
 *   store_shared.c                 sessions, failed sign-ins, Slack
 *                                  messages (a connection of its own)
 *   store_cosig.c                  witness cosignatures (a write job and
 *                                  two reads)
 * store_log*.c (the offline read-only reader, store_log_be.h) and
 * store_copy.c (SQLite to PostgreSQL) stand apart: they use none.
 */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>

#include "audit_note.h"
#include "audit_tile.h"
#include "audit_tree.h"
#include "ig_buf.h"
#include "ig_time.h"
#include "store.h"
#include "store_anchor.h"
#include "store_be.h"

/* Statements prepared once on the writer connection. */
enum wstmt {
    W_IDEM,
    W_INTENT,
    W_DECISION,
    W_GRANT,
    W_APPROVAL,
    W_EVENT,
    W_REDEEMED,
    W_REDEEM,
    W_REDEMPTION_BY,
    W_OUTCOME_GET,
    W_OUTCOME,
    W_HITS,
    W_SEQ,
    W_NODE,
    W_NODE_GET,
    W_CHECKPOINT,
    W_CKPT_EXISTS,
    W_COSIG,
    W_SAVEPOINT,
    W_RELEASE,
    W_ROLLBACK_TO,
    W_COUNT
};

/* Statements prepared once per read connection. */
enum rstmt {
    R_IDEM,
    R_INTENT,
    R_DECISIONS,
    R_GRANT,
    R_REDEMPTION,
    R_OUTCOME,
    R_APPROVAL,
    R_AUDIT_SIZE,
    R_NODE,
    R_LEAVES,
    R_CKPT_LATEST,
    R_CKPT_SIZE,
    R_COSIGS,
    R_COSIG_LATEST,
    R_COUNT
};

struct store_job;
typedef enum ig_status (*store_job_fn)(struct store_sq *s, struct store_job *j);

/* A unit of work for the writer thread. */
struct store_job {
    store_job_fn run;
    const void *rec;
    char **replay;
    enum ig_status status;
    int done;
    int async;             /* nobody waits: the writer frees it */
    store_done_fn done_fn; /* async with a completion callback */
    void *done_ctx;
    char notify[IG_UUID_STRLEN + 1]; /* intent id whose state changed */
    struct store_hits *hits;         /* quota hits a flush job took */
    int64_t at;
    /* The leaf hashes of the audit events the job appends, computed by
       the submitting thread so that the single writer does not hash
       (store_job_hash_events); leaf_src is the events array they are of. */
    const char *const *leaf_src;
    unsigned char (*leaves)[AUDIT_HASH_BYTES];
    size_t nleaves;
    struct store_job *next;
};

struct store_rconn {
    sqlite3 *db;
    sqlite3_stmt *st[R_COUNT];
    struct store_rconn *next;
};

struct store_counter; /* quota counters, store_counter.c */

/* Quota hits not yet written: (key, second, hits), in the order first
   seen (store_counter.c). */
struct store_hits {
    struct store_pending_hit {
        char *key;
        int64_t sec, hits;
    } * p;
    size_t n, cap;
};

struct store_sq {
    struct store_opts opts;
    char *path;
    sqlite3 *wdb;
    sqlite3_stmt *wst[W_COUNT];

    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* writer: jobs queued or stopping */
    pthread_cond_t done; /* callers: some job finished */
    struct store_job *head, *tail;
    atomic_size_t queued; /* jobs in head..tail */
    int stopping;

    pthread_mutex_t pool_mu;
    pthread_cond_t pool_cv;
    struct store_rconn *free_rconns;
    int nrconns;

    pthread_mutex_t obs_mu;
    store_commit_observer observer;
    void *observer_ctx;

    struct store_counter *counters;

    struct store_audit_state audit; /* writer thread only */
    /* The tree's partial tiles (writer thread only). Not saved and put
       back with audit on a rollback: its size then differs from the
       tree's, and store_audit.c rebuilds it before using it. */
    struct audit_tile_edge edge;
    unsigned char wtile[AUDIT_TILE_BYTES]; /* a tile read by the writer */
    const struct store_job *cur_job;       /* the job the writer runs */
    double ckpt_due;  /* monotonic: next interval checkpoint */
    int ckpt_refused; /* the last attempt was refused */
    /* The sizes of the checkpoints signed in the open transaction
       (several only when store_audit_sign calls share a group commit;
       past the array the last slot keeps the newest): opts.on_checkpoint
       is told of each once it commits. */
    uint64_t ckpt_signed[4];
    size_t nckpt_signed;
    struct store_anchor_state anchor; /* writer thread only (env: audit) */

    /* Checkpointer: copies the WAL into the database off the writer
       thread (store_checkpoint.c). */
    pthread_t ckpt;
    pthread_mutex_t ckpt_mu;
    pthread_cond_t ckpt_cv;
    sqlite3 *ckpt_db;
    int ckpt_wanted, ckpt_stop, ckpt_running;

    /* The state replicas share (store_shared.c): a connection of its
       own, opened at first use, one statement at a time under sh_mu. */
    pthread_mutex_t sh_mu;
    sqlite3 *sh_db;
    sqlite3_stmt **sh_st; /* its statements (store_shared.c) */
};

/* store_stmt.c */
extern const char *const store_wstmt_sql[W_COUNT];
extern const char *const store_rstmt_sql[R_COUNT];

/* store_ops.c: the jobs of the write operations. */
enum ig_status store_job_put_intent(struct store_sq *s, struct store_job *j);
enum ig_status store_job_redeem(struct store_sq *s, struct store_job *j);
enum ig_status store_job_put_outcome(struct store_sq *s, struct store_job *j);
enum ig_status store_job_flush_hits(struct store_sq *s, struct store_job *j);

/* store_util.c: helpers. store_db_open: a connection to path with the
   store's settings (IG_ERR_IO with err). Text binds as SQL NULL when s
   is NULL (SQLITE_STATIC: s must outlive the step). A NULL text column
   reads as "". store_sql_json parses a column we wrote (NULL if it will
   not). store_mono: the monotonic clock, seconds. */
enum ig_status store_db_open(const char *path, int flags, sqlite3 **out,
                             struct ig_err *err) IG_WUR;
void store_sql_bind_text(sqlite3_stmt *st, int i, const char *s);
const char *store_sql_text(sqlite3_stmt *st, int i);
json_t *store_sql_json(sqlite3_stmt *st, int i);
double store_mono(void);
/* Log through opts.log (fields stolen; dropped when there is no log). */
void store_audit_log(struct store_sq *s, const char *level, const char *event,
                     json_t *fields);
/* Read the full tile (level, index) with st (bound ?1 level, ?2 index;
   reset after) into out: IG_OK, IG_ERR_NOTFOUND, IG_ERR_INVALID (stored
   with another length than AUDIT_TILE_BYTES), IG_ERR_IO. */
enum ig_status store_audit_fetch_tile(sqlite3_stmt *st, unsigned level,
                                      uint64_t index,
                                      unsigned char out[AUDIT_TILE_BYTES]);
/* audit_fetch_fn (ctx: the store) over the writer's tiles and its edge:
   the complete subtrees of the current tree (writer thread, or open). */
enum ig_status store_audit_wfetch(void *ctx, unsigned level, uint64_t index,
                                  unsigned char out[AUDIT_HASH_BYTES]);

/* store_pool.c: a read connection (waits while IG_STORE_MAX_READERS are
   out; NULL when one cannot be opened), given back with put.
   store_read_begin: one inside BEGIN, or NULL; end it with
   store_read_end. store_pool_close: at close, every connection. */
struct store_rconn *store_rconn_get(struct store_sq *s);
void store_rconn_put(struct store_sq *s, struct store_rconn *c);
struct store_rconn *store_read_begin(struct store_sq *s);
void store_read_end(struct store_sq *s, struct store_rconn *c);
void store_pool_close(struct store_sq *s);

/* store_sqlite.c: queue a job for the writer; wait for it unless
   j->async. IG_ERR_IO when the store is stopping. */
enum ig_status store_submit(struct store_sq *s, struct store_job *j);

/* store_write.c: run fn(s, job with rec) on the writer thread and wait
   for its commit; notify names the intent whose waiters to wake ("" or
   NULL: none). */
enum ig_status store_run(struct store_sq *s, store_job_fn fn, const void *rec,
                         const char *notify);
/* The same for a job that appends the n audit events ev (their leaf
   hashes are computed here, on the calling thread). */
enum ig_status store_run_events(struct store_sq *s, store_job_fn fn,
                                const void *rec, const char *notify,
                                const char *const *ev, size_t n);

/* store_counter.c: record one hit of key at now, return the hits in
   (now - window, now]; -1 on error (nothing persisted). *queue_flush is
   1 when no writer job is queued to write the pending hits yet: the
   caller queues one (store_job_flush_hits), or says it could not
   (store_counter_queue_failed). */
int64_t store_counter_hit(struct store_sq *s, const char *key, int64_t window,
                          int64_t now, int *queue_flush);
void store_counter_queue_failed(struct store_sq *s);
/* The pending hits, taken for a flush job (NULL: out of memory); the
   next hit queues the next job. */
struct store_hits *store_counter_take(struct store_sq *s);
void store_hits_free(struct store_hits *h);
enum ig_status store_counters_load(struct store_sq *s,
                                   struct ig_err *err) IG_WUR;
void store_counters_free(struct store_sq *s);

/* store_checkpoint.c */
enum ig_status store_checkpointer_start(struct store_sq *s,
                                        struct ig_err *err) IG_WUR;
void store_checkpointer_stop(struct store_sq *s);

/* store_read.c: step st to its end, appending what row() builds of each
   row to arr. IG_ERR_NOMEM (row() gave NULL), IG_ERR_IO (a step failed);
   st is left for the caller to reset or finalize. */
enum ig_status store_sql_rows(sqlite3_stmt *st, json_t *(*row)(sqlite3_stmt *),
                              json_t *arr) IG_WUR;

/* store_approval.c: add votes and resolution to an approval object
   read on c (inside its read transaction). */
enum ig_status store_read_votes(struct store_rconn *c, sqlite3_int64 seq,
                                json_t *approval) IG_WUR;

/* store_audit.c, on the submitting thread: hash the n events ev into
   j->leaves (nothing when out of memory: the writer hashes then). */
void store_job_hash_events(struct store_job *j, const char *const *ev,
                           size_t n);

/* store_audit.c (writer thread). Append the events in order: each a
   row of audit_events and a leaf of the tree, the tiles it completes
   stored in audit_tiles; the leaf hashes are the running job's when it
   precomputed them for this very array. IG_ERR_INVALID on a NULL event,
   IG_ERR_IO. */
enum ig_status store_append_events(struct store_sq *s, const char *const *ev,
                                   size_t n) IG_WUR;
/* One more leaf: the event at seq (which must be the tree's size + 1),
   its hash given (pre) or computed here; the tiles it completes stored.
   IG_ERR_IO (logged when seq is not the next). */
enum ig_status store_audit_add_leaf(struct store_sq *s, sqlite3_int64 seq,
                                    const void *text, size_t len,
                                    const unsigned char *pre) IG_WUR;
/* Rebuild s->edge, the partial tiles of the tree of s->audit.tree.size
   leaves, from the stored tiles and the last events. IG_ERR_IO. */
enum ig_status store_audit_edge_rebuild(struct store_sq *s) IG_WUR;
/* Rebuild s->edge when it no longer describes the tree (after a
   rollback it does not). IG_ERR_IO. */
enum ig_status store_audit_edge_sync(struct store_sq *s) IG_WUR;
/* store_audit_open.c: at open, before the writer starts: check the log
   against itself, rebuild the frontier and the partial tiles, store the
   tiles missing for older events, read the latest checkpoint, open the
   anchor. */
enum ig_status store_audit_open(struct store_sq *s, struct ig_err *err) IG_WUR;
/* 1 when a checkpoint should be signed now (final: at close); when the
   interval passed with nothing new, moves the deadline on. */
int store_audit_checkpoint_due(struct store_sq *s, double now, int final);
/* The monotonic time of the next interval checkpoint; 0 when none. */
double store_audit_deadline(const struct store_sq *s);
/* The job: sign and insert a checkpoint of the current tree; j->at gets
   its size. IG_ERR_EXISTS (did not grow), IG_ERR_NOTFOUND (no key),
   IG_ERR_CRYPTO (refused: logged), IG_ERR_IO. */
enum ig_status store_job_checkpoint(struct store_sq *s, struct store_job *j);
/* After a checkpoint job: log it, set the next deadline. */
void store_audit_checkpoint_done(struct store_sq *s, const struct store_job *j);

/* store_audit_check.c, at open (before the writer starts). */
/* Read every event in seq order, recompute its leaf hash and the tree,
   and compare each full tile of the first `stored` leaves with its
   audit_tiles row; a missing, malformed or extra row is refused too.
   out: the recomputed frontier of all the events. IG_ERR_IO with err
   naming the first gap, edited leaf (its index) or tile. */
enum ig_status store_audit_recompute(struct store_sq *s, uint64_t stored,
                                     struct audit_frontier *out,
                                     struct ig_err *err) IG_WUR;
/* Every stored checkpoint's root must be the tree's of its size (read
   through s->anchor's env, store_anchor_check_stored); the newest goes to
   s->audit.ckpt_* and its note to s->anchor.newest. IG_ERR_IO naming the
   checkpoint. */
enum ig_status store_audit_check_checkpoints(struct store_sq *s,
                                             struct ig_err *err) IG_WUR;

/* store_schema.c */
enum ig_status store_migrate(sqlite3 *db, struct ig_err *err) IG_WUR;

#endif
