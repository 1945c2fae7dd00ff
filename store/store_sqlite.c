/*
 * store_sqlite.c - the SQLite store: opening and closing, the writer
 * thread with group commit. The write operations that queue its jobs are
 * in store_write.c, the read connections in store_pool.c.
 *
 * DESIGN
 * Callers of a write operation enqueue a job and sleep on a condition
 * variable. The single writer thread takes every queued job at once, runs
 * them inside one BEGIN IMMEDIATE ... COMMIT, then marks them all done and
 * wakes the callers. A job that refuses (a duplicate redeem, say) has
 * written nothing: each checks before it writes. One that fails after
 * writing has the whole batch rolled back and run again with each job in
 * its own SAVEPOINT, so that it alone is undone (run_batch). With
 * synchronous=FULL the COMMIT returns only once the WAL is on disk, so the
 * callers' responses leave only after their records are durable; one fsync
 * covers however many requests arrived while the previous one ran. Reads use
 * separate read-only connections (WAL: readers never block the writer and see
 * the last commit), handed out from a small pool (store_pool.c).
 *
 * The audit tree's frontier (store_audit.c) is writer state that must
 * follow the database: it is saved before each job and each transaction
 * and restored when a job's savepoint or the whole transaction is rolled
 * back. Between batches the writer also signs the audit checkpoints that
 * are due (every checkpoint_every leaves, or when the interval passed -
 * its wait for work times out then - and once more as it stops), each as
 * one more job in a transaction of its own.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "ig_limits.h"

/* ---- the writer ---- */

static enum ig_status
setup_writer(struct store_sq *s, struct ig_err *err)
{
    char *msg = NULL;
    const char *sync = s->opts.synchronous_full ? "PRAGMA synchronous=FULL"
                                                : "PRAGMA synchronous=NORMAL";
    int i;

    if (sqlite3_exec(s->wdb, "PRAGMA journal_mode=WAL", NULL, NULL, &msg) !=
            SQLITE_OK ||
        sqlite3_exec(s->wdb, sync, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(s->wdb, "PRAGMA foreign_keys=ON", NULL, NULL, &msg) !=
            SQLITE_OK ||
        sqlite3_exec(s->wdb, "PRAGMA cache_size=-8192", NULL, NULL, &msg) !=
            SQLITE_OK ||
        sqlite3_exec(s->wdb, "PRAGMA temp_store=MEMORY", NULL, NULL, &msg) !=
            SQLITE_OK) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot configure database %s: %s",
                         s->path, msg != NULL ? msg : "unknown error");
        sqlite3_free(msg);
        return IG_ERR_IO;
    }
    if (store_migrate(s->wdb, err) != IG_OK)
        return IG_ERR_IO;
    for (i = 0; i < W_COUNT; i++)
        if (sqlite3_prepare_v3(s->wdb, store_wstmt_sql[i], -1,
                               SQLITE_PREPARE_PERSISTENT, &s->wst[i],
                               NULL) != SQLITE_OK)
            return ig_err_set(err, IG_ERR_IO, "cannot prepare statement: %s",
                              sqlite3_errmsg(s->wdb));
    return IG_OK;
}

static int
step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    (void)sqlite3_reset(st);
    return rc;
}

/* How a batch's jobs ran in the open transaction (run_jobs). */
enum jobs_result {
    JOBS_OK,      /* each job's rows are in, or it wrote nothing */
    JOBS_RERUN,   /* a job failed after writing: roll back, rerun */
    JOBS_TXN_LOST /* the transaction ended under a job (I/O error) */
};

/* Run one job; with savepoint, inside its own SAVEPOINT, rolled back
   alone (rows and audit frontier) when the job fails. */
static enum jobs_result
run_job(struct store_sq *s, struct store_job *j, int savepoint)
{
    struct store_audit_state job_saved;
    sqlite3_int64 before = sqlite3_total_changes64(s->wdb);

    if (savepoint) {
        if (step_reset(s->wst[W_SAVEPOINT]) != SQLITE_DONE) {
            j->status = IG_ERR_IO;
            return sqlite3_get_autocommit(s->wdb) ? JOBS_TXN_LOST : JOBS_OK;
        }
        job_saved = s->audit;
    }
    s->cur_job = j;
    j->status = j->run(s, j);
    s->cur_job = NULL;
    if (j->status != IG_OK && savepoint) {
        (void)step_reset(s->wst[W_ROLLBACK_TO]);
        s->audit = job_saved;
    }
    if (savepoint)
        (void)step_reset(s->wst[W_RELEASE]);
    if (sqlite3_get_autocommit(s->wdb))
        return JOBS_TXN_LOST;
    /* Every job checks before it writes and appends its audit events
       last, so a refusal (a replay, a second redeem) changed nothing;
       a failure after a row went in needs the savepoints. */
    if (j->status != IG_OK && !savepoint &&
        sqlite3_total_changes64(s->wdb) != before)
        return JOBS_RERUN;
    return JOBS_OK;
}

static enum jobs_result
run_jobs(struct store_sq *s, struct store_job *batch, int savepoints)
{
    enum jobs_result r;
    struct store_job *j;

    for (j = batch; j != NULL; j = j->next) {
        if (j->replay != NULL && *j->replay != NULL) {
            free(*j->replay); /* from a first run that was rolled back */
            *j->replay = NULL;
        }
        r = run_job(s, j, savepoints);
        if (r != JOBS_OK)
            return r;
    }
    return JOBS_OK;
}

static int
begin(struct store_sq *s)
{
    return sqlite3_exec(s->wdb, "BEGIN IMMEDIATE", NULL, NULL, NULL) ==
           SQLITE_OK;
}

static void
rollback(struct store_sq *s, const struct store_audit_state *saved)
{
    if (!sqlite3_get_autocommit(s->wdb))
        (void)sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
    s->audit = *saved;
    s->nckpt_signed = 0;
    store_anchor_after_commit(&s->anchor,
                              0); /* a staged checkpoint note is void */
}

/* After a commit: tell opts.on_checkpoint of the checkpoints it held. */
static void
checkpoints_committed(struct store_sq *s)
{
    size_t i, n = s->nckpt_signed;

    s->nckpt_signed = 0;
    for (i = 0; i < n && s->opts.on_checkpoint != NULL; i++)
        s->opts.on_checkpoint(s->opts.on_checkpoint_ctx, s->ckpt_signed[i]);
}

/*
 * One group commit. The jobs run first without savepoints (a SAVEPOINT
 * per job costs its RELEASE and a copy of every page the job touches into
 * the statement journal); only when a job fails after writing is the
 * transaction rolled back and the batch run again with one savepoint per
 * job, so that the failed job alone is undone.
 */
static void
run_batch(struct store_sq *s, struct store_job *batch)
{
    struct store_audit_state txn_saved = s->audit;
    struct store_job *j;
    double t0 = store_mono();
    enum jobs_result r = JOBS_TXN_LOST;
    size_t n = 0;
    int ok;

    for (j = batch; j != NULL; j = j->next)
        n++;
    s->nckpt_signed = 0;
    if (begin(s)) {
        r = run_jobs(s, batch, 0);
        if (r == JOBS_RERUN) {
            rollback(s, &txn_saved);
            r = begin(s) ? run_jobs(s, batch, 1) : JOBS_TXN_LOST;
        }
    }
    ok = r == JOBS_OK &&
         sqlite3_exec(s->wdb, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok)
        rollback(s, &txn_saved);
    else {
        store_anchor_after_commit(&s->anchor,
                                  1); /* a checkpoint's note to its file */
        checkpoints_committed(s);
    }
    for (j = batch; j != NULL; j = j->next) {
        if (!ok)
            j->status = IG_ERR_IO;
        else if (j->status == IG_OK && j->notify[0] != '\0' &&
                 s->opts.on_commit != NULL)
            s->opts.on_commit(s->opts.on_commit_ctx, j->notify);
    }
    pthread_mutex_lock(&s->obs_mu);
    if (s->observer != NULL)
        s->observer(s->observer_ctx, store_mono() - t0, n);
    pthread_mutex_unlock(&s->obs_mu);
}

/* After a commit: run the async jobs' callbacks and free them, without
   holding the queue lock (a callback resumes an HTTP connection); return
   the synchronous jobs, still linked, for the caller to mark done. */
static struct store_job *
complete_async(struct store_job *batch)
{
    struct store_job *sync = NULL, **tail = &sync, *j, *next;

    for (j = batch; j != NULL; j = next) {
        next = j->next;
        if (j->async) {
            if (j->done_fn != NULL)
                j->done_fn(j->done_ctx, j->status);
            store_hits_free(j->hits);
            free(j->leaves);
            free(j);
        } else {
            *tail = j;
            tail = &j->next;
        }
    }
    *tail = NULL;
    return sync;
}

/* Sign an audit checkpoint in a transaction of its own (writer only).
   Its COMMIT is always synchronous=FULL: the WAL is on disk, with every
   event the checkpoint covers, before the anchor file names it. */
static void
run_checkpoint(struct store_sq *s)
{
    struct store_job j;

    memset(&j, 0, sizeof(j));
    j.run = store_job_checkpoint;
    if (!s->opts.synchronous_full)
        (void)sqlite3_exec(s->wdb, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
    run_batch(s, &j);
    if (!s->opts.synchronous_full)
        (void)sqlite3_exec(s->wdb, "PRAGMA synchronous=NORMAL", NULL, NULL,
                           NULL);
    store_audit_checkpoint_done(s, &j);
}

/* With s->mu held: wait for jobs or stopping; 1 when instead the audit
   checkpoint interval passed with nothing queued. */
static int
wait_for_work(struct store_sq *s)
{
    struct timespec ts;
    double due;

    while (s->head == NULL && !s->stopping) {
        due = store_audit_deadline(s);
        if (due <= 0) {
            pthread_cond_wait(&s->wake, &s->mu);
            continue;
        }
        if (store_mono() >= due)
            return 1;
        ig_time_wait_until(due, &ts);
        (void)pthread_cond_timedwait(&s->wake, &s->mu, &ts);
    }
    return 0;
}

static void *
writer_main(void *arg)
{
    struct store_sq *s = arg;
    struct store_job *batch, *j;

    (void)prctl(PR_SET_NAME, "ig-store-writer"); /* for top -H and perf */
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (wait_for_work(s)) {
            if (store_audit_checkpoint_due(s, store_mono(), 0)) {
                pthread_mutex_unlock(&s->mu);
                run_checkpoint(s);
                pthread_mutex_lock(&s->mu);
            }
            continue;
        }
        if (s->head == NULL)
            break;
        batch = s->head;
        s->head = s->tail = NULL;
        atomic_store(&s->queued, 0);
        pthread_mutex_unlock(&s->mu);
        run_batch(s, batch);
        batch = complete_async(batch);
        pthread_mutex_lock(&s->mu);
        /* A waiter frees its job once it sees done, which needs the lock:
           walking the list under the lock is safe. */
        for (j = batch; j != NULL; j = j->next)
            j->done = 1;
        pthread_cond_broadcast(&s->done);
        if (store_audit_checkpoint_due(s, store_mono(), 0)) {
            pthread_mutex_unlock(&s->mu);
            run_checkpoint(s);
            pthread_mutex_lock(&s->mu);
        }
    }
    pthread_mutex_unlock(&s->mu);
    if (store_audit_checkpoint_due(s, store_mono(), 1))
        run_checkpoint(s); /* the last one, at close */
    return NULL;
}

enum ig_status
store_submit(struct store_sq *s, struct store_job *j)
{
    int async = j->async;
    enum ig_status st = IG_OK;

    j->next = NULL;
    j->done = 0;
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        return IG_ERR_IO; /* an async caller frees its job */
    }
    if (s->tail != NULL)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    atomic_fetch_add(&s->queued, 1);
    pthread_cond_signal(&s->wake);
    if (!async) {
        while (!j->done)
            pthread_cond_wait(&s->done, &s->mu);
        st = j->status;
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

int
store_sq_overloaded(struct store_sq *s)
{
    return s->opts.max_queue > 0 &&
           atomic_load(&s->queued) >= s->opts.max_queue;
}

size_t
store_sq_queue_depth(struct store_sq *s)
{
    return atomic_load(&s->queued);
}

/* ---- lifecycle ---- */

enum ig_status
store_sq_open(const struct store_opts *opts, struct store_sq **out,
              struct ig_err *err)
{
    struct store_sq *s = calloc(1, sizeof(*s));
    pthread_condattr_t ca;
    enum ig_status rc;

    *out = NULL;
    if (s == NULL || (s->path = strdup(opts->path)) == NULL) {
        free(s);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    s->opts = *opts;
    s->opts.path = s->path;
    pthread_mutex_init(&s->mu, NULL);
    /* The writer's timed wait (audit checkpoints) is on the monotonic
       clock. */
    pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&s->done, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_cond_init(&s->pool_cv, NULL);
    pthread_mutex_init(&s->obs_mu, NULL);
    pthread_mutex_init(&s->sh_mu, NULL);
    rc = store_db_open(s->path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                       &s->wdb, err);
    if (rc == IG_OK)
        rc = setup_writer(s, err);
    if (rc == IG_OK)
        rc = store_audit_open(s, err);
    if (rc == IG_OK)
        rc = store_counters_load(s, err);
    if (rc == IG_OK)
        rc = store_checkpointer_start(s, err);
    if (rc == IG_OK && pthread_create(&s->writer, NULL, writer_main, s) != 0)
        rc = ig_err_set(err, IG_ERR_IO, "cannot start the writer thread");
    if (rc != IG_OK) {
        s->stopping = 2; /* no writer thread to join */
        store_sq_close(s);
        return rc;
    }
    *out = s;
    return IG_OK;
}

void
store_sq_close(struct store_sq *s)
{
    int i, joined = s != NULL && s->stopping != 2;

    if (s == NULL)
        return;
    if (joined) {
        pthread_mutex_lock(&s->mu);
        s->stopping = 1;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->writer, NULL);
    }
    store_anchor_close(&s->anchor, joined);
    store_checkpointer_stop(s);
    store_pool_close(s);
    store_sq_shared_close(s);
    for (i = 0; i < W_COUNT; i++)
        sqlite3_finalize(s->wst[i]);
    sqlite3_close(s->wdb);
    store_counters_free(s);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->wake);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_cond_destroy(&s->pool_cv);
    pthread_mutex_destroy(&s->obs_mu);
    pthread_mutex_destroy(&s->sh_mu);
    free(s->path);
    free(s);
}

void
store_sq_set_observer(struct store_sq *s, store_commit_observer fn, void *ctx)
{
    pthread_mutex_lock(&s->obs_mu);
    s->observer = fn;
    s->observer_ctx = ctx;
    pthread_mutex_unlock(&s->obs_mu);
}
