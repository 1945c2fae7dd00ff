/*
 * store_checkpoint.c - WAL checkpoints on their own thread.
 *
 * SQLite's default runs a checkpoint inside the COMMIT that crosses 1000
 * WAL pages, on the committing thread: here that is the single writer, so
 * every client waiting for a group commit would also wait for the copy of
 * the WAL into the database file and its fsync. Instead the writer
 * connection's WAL hook only signals this thread, which runs PASSIVE
 * checkpoints (they never block the writer) on a connection of its own,
 * and at least once a second while there is anything to copy. At close a
 * final TRUNCATE checkpoint leaves the database file complete.
 */
#include "store_int.h"

#include <sys/prctl.h>
#include <time.h>

#include "ig_limits.h"

static int
wal_hook(void *ctx, sqlite3 *db, const char *name, int pages)
{
    struct store_sq *s = ctx;
    (void)db;
    (void)name;

    if (pages >= IG_STORE_WAL_CHECKPOINT_PAGES) {
        pthread_mutex_lock(&s->ckpt_mu);
        s->ckpt_wanted = 1;
        pthread_cond_signal(&s->ckpt_cv);
        pthread_mutex_unlock(&s->ckpt_mu);
    }
    return SQLITE_OK;
}

static void *
ckpt_main(void *arg)
{
    struct store_sq *s = arg;
    struct timespec ts;

    (void)prctl(PR_SET_NAME, "ig-store-wal");
    pthread_mutex_lock(&s->ckpt_mu);
    while (!s->ckpt_stop) {
        if (!s->ckpt_wanted) {
            clock_gettime(CLOCK_MONOTONIC, &ts); /* ckpt_cv's clock */
            ts.tv_sec += 1;
            (void)pthread_cond_timedwait(&s->ckpt_cv, &s->ckpt_mu, &ts);
        }
        if (s->ckpt_stop)
            break;
        s->ckpt_wanted = 0;
        pthread_mutex_unlock(&s->ckpt_mu);
        (void)sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL,
                                        SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&s->ckpt_mu);
    }
    pthread_mutex_unlock(&s->ckpt_mu);
    return NULL;
}

enum ig_status
store_checkpointer_start(struct store_sq *s, struct ig_err *err)
{
    pthread_condattr_t ca;

    pthread_mutex_init(&s->ckpt_mu, NULL);
    pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->ckpt_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (sqlite3_open_v2(s->path, &s->ckpt_db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s for checkpoints",
                          s->path);
    (void)sqlite3_busy_timeout(s->ckpt_db, 5000);
    (void)sqlite3_exec(s->ckpt_db,
                       s->opts.synchronous_full ? "PRAGMA synchronous=FULL"
                                                : "PRAGMA synchronous=NORMAL",
                       NULL, NULL, NULL);
    /* Replaces the automatic checkpoint on the writer connection. */
    (void)sqlite3_wal_hook(s->wdb, wal_hook, s);
    if (pthread_create(&s->ckpt, NULL, ckpt_main, s) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot start the checkpointer");
    s->ckpt_running = 1;
    return IG_OK;
}

void
store_checkpointer_stop(struct store_sq *s)
{
    if (s->ckpt_running) {
        pthread_mutex_lock(&s->ckpt_mu);
        s->ckpt_stop = 1;
        pthread_cond_signal(&s->ckpt_cv);
        pthread_mutex_unlock(&s->ckpt_mu);
        pthread_join(s->ckpt, NULL);
        s->ckpt_running = 0;
        (void)sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL,
                                        SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    }
    if (s->ckpt_db != NULL)
        sqlite3_close(s->ckpt_db);
    s->ckpt_db = NULL;
}
