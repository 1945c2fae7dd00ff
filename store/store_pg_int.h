/*
 * store_pg_int.h - private to the PostgreSQL store: the store struct, the
 * connection pool, transactions with retry, the async workers and the
 * listener, shared by the store_pg*.c files.
 *
 * Several PDP replicas may share one database. Everything a replica must
 * agree on lives in the database: exactly-once is a PRIMARY KEY or UNIQUE
 * constraint, never a check in memory; a replica's own state is a cache
 * or a wake-up. Each write is one transaction on a pooled connection and
 * returns only after its COMMIT (synchronous_commit as the server has it:
 * on, for durability). A write appends its audit events to audit_queue
 * in the same transaction; one sequencer among the replicas (the holder
 * of the advisory lock STORE_PG_LOCK_SEQUENCER, store_pg_audit.c) moves
 * them into audit_events in queue order, extends the Merkle tree and
 * signs checkpoints.
 *
 * Any connection or statement failure is IG_ERR_IO (the PDP answers 503,
 * nothing granted): the connection is marked bad and reset on its next
 * use. A serialization failure or deadlock (40001, 40P01) retries the
 * whole transaction.
 *
 * The files form layers; each calls only files of the layers below it:
 *   store_pg_conn.c                 connections, the pool, queries,
 *                                   transactions, parameters
 *   store_pg_schema.c               the schema and its migrations
 *   store_pg_write.c, store_pg_read.c, store_pg_vote.c,
 *   store_pg_shared.c
 *                                   the operations
 *   store_pg_audit*.c               the sequencer and the audit reads
 *   store_pg.c                      lifecycle, workers, listener
 */
#ifndef STORE_PG_INT_H
#define STORE_PG_INT_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ig_error.h"
#include "store.h"
#include "store_be.h"

/* Advisory lock keys: one per role a single holder must play. */
#define STORE_PG_LOCK_MIGRATE 0x6967000001LL
#define STORE_PG_LOCK_SEQUENCER 0x6967000002LL
#define STORE_PG_LOCK_VOTES 0x6967000003LL

/* NOTIFY channels (see store_pg.c). */
#define STORE_PG_CH_INTENT "ig_intent" /* payload: an intent id */
#define STORE_PG_CH_AUDIT "ig_audit"   /* events were queued */
#define STORE_PG_CH_SEQUENCED                                                  \
    "ig_sequenced" /* payload: the tree size                                   \
                     (informative only) */

#define STORE_PG_POOL_DEFAULT 16    /* connections per replica */
#define STORE_PG_BATCH_MAX 8        /* async writes in one transaction */
#define STORE_PG_PARAMS_MAX 32      /* parameters of one statement */
#define STORE_PG_PREPARED_MAX 96    /* statements prepared per connection */
#define STORE_PG_STATEMENT_MS 10000 /* statement_timeout */
#define STORE_PG_CONNECT_S 5        /* connect_timeout */

/* A pooled connection. Statements are prepared on it on first use, keyed
   by the address of their (static) text. */
struct store_pg_conn {
    PGconn *pg;
    int bad; /* reset before the next use */
    /* The SQLSTATE of the last statement that failed on it since the
       transaction began ("": none): a serialization failure or deadlock
       inside a transaction's body retries the whole transaction. */
    char failed[6];
    /* Its server process (PQbackendPID), 0 while not connected: the
       listener ignores this replica's own NOTIFYs by it. */
    atomic_int pid;
    const char *prepared[STORE_PG_PREPARED_MAX];
    int nprepared;
    struct store_pg_conn *next;
};

/* Parameters of one statement, as text (libpq's text format). */
struct store_pg_params {
    const char *v[STORE_PG_PARAMS_MAX];
    int len[STORE_PG_PARAMS_MAX];    /* for binary values; 0: text */
    int format[STORE_PG_PARAMS_MAX]; /* 0 text, 1 binary */
    char num[STORE_PG_PARAMS_MAX][24];
    int n;
};

struct store_pg_job;
struct store_pg_seq; /* the sequencer's state, store_pg_audit.c */

/* A transaction's body: runs between BEGIN and COMMIT on c. IG_OK
   commits; anything else rolls back and is returned (IG_ERR_EXISTS,
   IG_ERR_NOTFOUND as the operation means them; IG_ERR_IO for a failed
   statement, which store_pg_query has already marked). */
typedef enum ig_status (*store_pg_txn_fn)(struct store_pg *s,
                                          struct store_pg_conn *c, void *arg);

struct store_pg {
    struct store_opts opts;
    char *conninfo;

    /* the pool */
    pthread_mutex_t pool_mu;
    pthread_cond_t pool_cv;
    struct store_pg_conn *free_conns;
    struct store_pg_conn *all[STORE_PG_POOL_DEFAULT]; /* every one made */
    int nconns, maxconns;

    /* async writes: jobs run by the worker threads */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    struct store_pg_job *head, *tail;
    atomic_size_t queued;
    int stopping;
    pthread_t *workers;
    int nworkers;

    /* the listener: LISTEN on its own connection */
    pthread_t listener;
    int listener_started;
    /* How many announcements ig_sequenced made (and reconnects), never
       what they said - any role may NOTIFY (store_pg.c) - and a
       condition broadcast on each. */
    pthread_mutex_t seq_mu;
    pthread_cond_t seq_cv;
    uint64_t sequenced;
    int listening; /* the listener has LISTENed once (open waits for it) */

    pthread_mutex_t obs_mu;
    store_commit_observer observer;
    void *observer_ctx;

    /* the vote lock's connection while held (store_pg_shared.c) */
    struct store_pg_conn *vote_conn;

    struct store_pg_seq *seq; /* store_pg_audit.c */
};

/* ---- store_pg_conn.c ---- */

/* Connect to conninfo (a URL or key=value string) with our defaults
   (connect and statement timeouts, application_name) under it. NULL with
   err naming the server's message. */
PGconn *store_pg_connect(const char *conninfo, struct ig_err *err);

/* libpq's message m on one line, into out (cap bytes): the "ERROR:  "
   prefix dropped, lines joined, the query excerpt (LINE n: ...) cut. For
   the one-line errors of the CLI commands. Returns out. */
const char *store_pg_message(const char *m, char *out, size_t cap);

/* A pooled connection, reset when bad, opened while fewer than maxconns
   exist, else waited for (at most STORE_PG_CONNECT_S seconds). NULL with
   err (IG_ERR_IO) when none can be had: the caller fails closed. */
struct store_pg_conn *store_pg_conn_get(struct store_pg *s, struct ig_err *err);
void store_pg_conn_put(struct store_pg *s, struct store_pg_conn *c);
/* 1 when pid is the server process of one of this replica's pooled
   connections (its writes NOTIFY from those). */
int store_pg_own_pid(struct store_pg *s, int pid);
void store_pg_pool_close(struct store_pg *s);

/* Run sql (one statement, static text) with p's parameters (NULL: none),
   prepared on c once. The result, or NULL when it failed (PQclear it
   either way): *state (may be NULL) gets the SQLSTATE ("" when the
   connection failed, which also marks c bad). Logged through opts.log at
   "warn" unless the state is one the caller expects (expect, may be NULL,
   e.g. "23505"). */
PGresult *store_pg_query(struct store_pg *s, struct store_pg_conn *c,
                         const char *sql, const struct store_pg_params *p,
                         char state[6], const char *expect);
/* The same for a statement without rows: IG_OK or IG_ERR_IO. */
enum ig_status store_pg_exec(struct store_pg *s, struct store_pg_conn *c,
                             const char *sql,
                             const struct store_pg_params *p) IG_WUR;

/* Parameters. text NULL binds SQL NULL. */
void store_pg_params_init(struct store_pg_params *p);
void store_pg_param_text(struct store_pg_params *p, const char *text);
void store_pg_param_int(struct store_pg_params *p, int64_t v);
void store_pg_param_bin(struct store_pg_params *p, const void *v, size_t len);

/* Column helpers: text ("" for NULL), int64 (0 for NULL), JSON parsed
   (NULL if it does not parse). */
const char *store_pg_text(const PGresult *r, int row, int col);
int64_t store_pg_int(const PGresult *r, int row, int col);
json_t *store_pg_json(const PGresult *r, int row, int col);

/* Run fn in a transaction on a pooled connection: BEGIN, fn, COMMIT (or
   ROLLBACK when fn did not return IG_OK), retried on 40001 and 40P01 up to
   5 times. Reports the commit to the observer. */
enum ig_status store_pg_txn(struct store_pg *s, store_pg_txn_fn fn,
                            void *arg) IG_WUR;
/* Run n bodies in ONE transaction on a pooled connection, each in its own
   savepoint: st[i] is fn[i]'s status, and a refused body (rolled back to
   its savepoint) leaves the others - one COMMIT, one WAL flush, for all
   (group commit, store_pg.c's workers). When the batch cannot commit, or
   a body meets a lost connection, a serialization failure or a deadlock,
   every body runs again alone (store_pg_txn). */
void store_pg_txn_batch(struct store_pg *s, size_t n, store_pg_txn_fn const *fn,
                        void *const *arg, enum ig_status *st);
/* The same on the caller's connection (already got). */
enum ig_status store_pg_txn_on(struct store_pg *s, struct store_pg_conn *c,
                               store_pg_txn_fn fn, void *arg) IG_WUR;

/* Inside a transaction: append the n audit events ev to audit_queue (in
   order) and NOTIFY the sequencer. IG_ERR_INVALID on a NULL event,
   IG_ERR_IO. */
enum ig_status store_pg_queue_events(struct store_pg *s,
                                     struct store_pg_conn *c,
                                     const char *const *ev, size_t n) IG_WUR;
/* Inside a transaction, what every write of an intent ends with, in one
   statement: its n events queued (store_pg_queue_events) and the
   NOTIFY of intent_id (store_pg_notify_intent; NULL or "": none). */
enum ig_status store_pg_finish(struct store_pg *s, struct store_pg_conn *c,
                               const char *const *ev, size_t n,
                               const char *intent_id) IG_WUR;
/* Inside a transaction: NOTIFY every replica that intent_id changed. */
enum ig_status store_pg_notify_intent(struct store_pg *s,
                                      struct store_pg_conn *c,
                                      const char *intent_id) IG_WUR;

/* Log through opts.log (fields stolen; dropped when there is no log). */
void store_pg_log(struct store_pg *s, const char *level, const char *event,
                  json_t *fields);

/* ---- store_pg_schema.c ---- */

/* Create or migrate the schema on c under STORE_PG_LOCK_MIGRATE; refuse a
   database newer than this binary. IG_ERR_IO with err. */
enum ig_status store_pg_migrate(struct store_pg *s, struct store_pg_conn *c,
                                struct ig_err *err) IG_WUR;

/* ---- store_pg.c ---- */

/* Queue fn(arg) for the workers; done(ctx, status) is called on a worker
   after the commit. IG_ERR_IO (no callback) when stopping. */
enum ig_status store_pg_async(struct store_pg *s, store_pg_txn_fn fn, void *arg,
                              void (*free_arg)(void *), store_done_fn done,
                              void *ctx) IG_WUR;
/* After a local commit that changed intent_id: wake this replica's
   waiters at once (the listener does for other replicas' commits). */
void store_pg_committed(struct store_pg *s, const char *intent_id);

/* ---- store_pg_audit.c (the sequencer) ---- */

/* At open, after the migration: check the stored log (tree, tiles,
   checkpoints, anchor) and start the sequencer's thread. IG_ERR_IO with
   err. */
enum ig_status store_pg_audit_start(struct store_pg *s,
                                    struct ig_err *err) IG_WUR;
/* At close: stop the sequencer (signing a final checkpoint if it leads). */
void store_pg_audit_stop(struct store_pg *s);

/* ---- store_pg_audit_read.c ---- */

/* Wait (at most ms) until every audit event committed before this call
   is sequenced: a reader then sees its own writes in the log. IG_OK, or
   IG_ERR_IO when the sequencer did not get there in time. */
enum ig_status store_pg_audit_settle(struct store_pg *s, int ms) IG_WUR;

/* How long the audit reads wait to settle. */
#define STORE_PG_SETTLE_MS 2000

/* Settle (settle_ms > 0: at most that long), then a pooled connection
   inside a READ ONLY REPEATABLE READ transaction: one snapshot for the
   whole read. NULL (logged) when either fails: the caller answers
   IG_ERR_IO. End it with store_pg_read_end. */
struct store_pg_conn *store_pg_read_begin(struct store_pg *s, int settle_ms);
void store_pg_read_end(struct store_pg *s, struct store_pg_conn *c);

/* Rows of a long read, page by page (keyset paging inside the caller's
   transaction): sql ends with "ORDER BY key LIMIT STORE_PG_PAGE_ROWS" and
   its $1 is the key to go on after (p's first parameter, an int; column 0
   of each row its key). fn is called for each row, in order, until it
   returns other than IG_OK or sets *stop. IG_ERR_IO, or fn's status. */
#define STORE_PG_PAGE_ROWS 1000
#define STORE_PG_PAGE_ROWS_TEXT "1000"
typedef enum ig_status (*store_pg_row_fn)(void *ctx, const PGresult *r, int row,
                                          int *stop);
enum ig_status store_pg_pages(struct store_pg *s, struct store_pg_conn *c,
                              const char *sql, struct store_pg_params *p,
                              store_pg_row_fn fn, void *ctx) IG_WUR;

/* Decode a bytea column's text form (a backslash, x, 2n hex digits) of exactly
   n bytes into out. IG_ERR_INVALID for anything else (stored bytes are
   untrusted). */
enum ig_status store_pg_bytea(const char *text, size_t len, unsigned char *out,
                              size_t n) IG_WUR;

#endif
