/*
 * pdp_store_int.h - private to the SQLite store: the store struct, the
 * writer job queue and the read connection pool shared by
 * pdp_store_sqlite.c (lifecycle, writer thread, pool, counters) and
 * pdp_store_ops.c (the SQL of each operation).
 */
#ifndef PDP_STORE_INT_H
#define PDP_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "ig_buf.h"
#include "ig_time.h"
#include "pdp_store.h"

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
    W_OUTCOME_EXISTS,
    W_OUTCOME,
    W_HIT,
    W_SEQ,
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
    R_COUNT
};

struct pdp_job;
typedef enum ig_status (*pdp_job_fn)(struct pdp_store *s, struct pdp_job *j);

/* A unit of work for the writer thread. */
struct pdp_job {
    pdp_job_fn run;
    const void *rec;
    char **replay;
    enum ig_status status;
    int done;
    int async;                 /* nobody waits: the writer frees it */
    pdp_store_done_fn done_fn; /* async with a completion callback */
    void *done_ctx;
    char notify[IG_UUID_STRLEN + 1]; /* intent id whose state changed */
    char *key;                       /* async counter hit */
    int64_t at;
    struct pdp_job *next;
};

struct pdp_rconn {
    sqlite3 *db;
    sqlite3_stmt *st[R_COUNT];
    struct pdp_rconn *next;
};

struct pdp_counter; /* quota counters, pdp_store_sqlite.c */

struct pdp_store {
    struct pdp_store_opts opts;
    char *path;
    sqlite3 *wdb;
    sqlite3_stmt *wst[W_COUNT];

    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* writer: jobs queued or stopping */
    pthread_cond_t done; /* callers: some job finished */
    struct pdp_job *head, *tail;
    int stopping;

    pthread_mutex_t pool_mu;
    pthread_cond_t pool_cv;
    struct pdp_rconn *free_rconns;
    int nrconns;

    pthread_mutex_t obs_mu;
    pdp_commit_observer observer;
    void *observer_ctx;

    struct pdp_counter *counters;

    /* Checkpointer: copies the WAL into the database off the writer
       thread (pdp_store_checkpoint.c). */
    pthread_t ckpt;
    pthread_mutex_t ckpt_mu;
    pthread_cond_t ckpt_cv;
    sqlite3 *ckpt_db;
    int ckpt_wanted, ckpt_stop, ckpt_running;
};

/* pdp_store_ops.c */
extern const char *const pdp_wstmt_sql[W_COUNT];
extern const char *const pdp_rstmt_sql[R_COUNT];
enum ig_status pdp_job_put_intent(struct pdp_store *s, struct pdp_job *j);
enum ig_status pdp_job_redeem(struct pdp_store *s, struct pdp_job *j);
enum ig_status pdp_job_put_outcome(struct pdp_store *s, struct pdp_job *j);
enum ig_status pdp_job_hit(struct pdp_store *s, struct pdp_job *j);

/* pdp_store_sqlite.c */
enum ig_status pdp_store_submit(struct pdp_store *s, struct pdp_job *j);
/* Run fn(s, job with rec) on the writer thread and wait for its commit;
   notify names the intent whose waiters to wake ("" or NULL: none). */
enum ig_status pdp_store_run(struct pdp_store *s, pdp_job_fn fn,
                             const void *rec, const char *notify);
struct pdp_rconn *pdp_rconn_get(struct pdp_store *s);
void pdp_rconn_put(struct pdp_store *s, struct pdp_rconn *c);

/* pdp_store_sqlite.c: queue one quota hit for the writer (not waited). */
enum ig_status pdp_store_persist_hit(struct pdp_store *s, const char *key,
                                     int64_t at);

/* pdp_store_counter.c */
enum ig_status pdp_counters_load(struct pdp_store *s,
                                 struct ig_err *err) IG_WUR;
void pdp_counters_free(struct pdp_store *s);

/* pdp_store_checkpoint.c */
enum ig_status pdp_checkpointer_start(struct pdp_store *s,
                                      struct ig_err *err) IG_WUR;
void pdp_checkpointer_stop(struct pdp_store *s);

/* pdp_store_approval.c: add votes and resolution to an approval object
   read on c (inside its read transaction). */
enum ig_status pdp_store_read_votes(struct pdp_rconn *c, sqlite3_int64 seq,
                                    json_t *approval) IG_WUR;

/* pdp_store_schema.c */
enum ig_status pdp_store_migrate(sqlite3 *db, struct ig_err *err) IG_WUR;

#endif
