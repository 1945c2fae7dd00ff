/*
 * store_pg.c - the PostgreSQL store's lifecycle: open (connect, migrate,
 * start the sequencer, the listener and the workers), close, the async
 * workers, and the listener that turns other replicas' commits into this
 * replica's wake-ups.
 *
 * Workers: the _async writes queue a job; each of nworkers threads takes
 * everything queued (up to STORE_PG_BATCH_MAX jobs) and runs it as ONE
 * transaction on a pooled connection, each job in its own savepoint
 * (store_pg_txn_batch: group commit, one WAL flush for the batch, as the
 * SQLite writer does), then calls each job's done callback with its own
 * status. A batch that cannot commit runs again job by job.
 *
 * Listener: one connection LISTENs on ig_intent (an intent's state changed
 * on some replica: opts.on_commit) and ig_sequenced (the sequencer moved
 * the log on: wake store_pg_audit_settle). NOTIFY is only a wake-up - the
 * tables hold the truth - so after a lost connection the listener
 * reconnects, listens again and wakes everyone once.
 */
#include "store_pg_int.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LISTEN_POLL_MS 250
#define LISTEN_RETRY_MS 1000

struct store_pg_job {
    store_pg_txn_fn fn;
    void *arg;
    void (*free_arg)(void *);
    store_done_fn done;
    void *ctx;
    struct store_pg_job *next;
};

/* ---- workers ---- */

static void *
worker_main(void *arg)
{
    struct store_pg *s = arg;
    struct store_pg_job *batch[STORE_PG_BATCH_MAX];
    store_pg_txn_fn fn[STORE_PG_BATCH_MAX];
    void *args[STORE_PG_BATCH_MAX];
    enum ig_status st[STORE_PG_BATCH_MAX];

    for (;;) {
        size_t n = 0, i;

        (void)pthread_mutex_lock(&s->mu);
        while (s->head == NULL && !s->stopping)
            (void)pthread_cond_wait(&s->wake, &s->mu);
        if (s->head == NULL) { /* stopping with nothing left */
            (void)pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        /* Everything queued, up to a batch: one commit for all. */
        while (s->head != NULL && n < STORE_PG_BATCH_MAX) {
            batch[n] = s->head;
            fn[n] = batch[n]->fn;
            args[n] = batch[n]->arg;
            s->head = batch[n]->next;
            n++;
        }
        if (s->head == NULL)
            s->tail = NULL;
        else /* more for another worker */
            (void)pthread_cond_signal(&s->wake);
        (void)pthread_mutex_unlock(&s->mu);
        store_pg_txn_batch(s, n, fn, args, st);
        atomic_fetch_sub(&s->queued, n);
        for (i = 0; i < n; i++) {
            struct store_pg_job *j = batch[i];

            if (j->done != NULL)
                j->done(j->ctx, st[i]);
            if (j->free_arg != NULL)
                j->free_arg(j->arg);
            free(j);
        }
    }
}

enum ig_status
store_pg_async(struct store_pg *s, store_pg_txn_fn fn, void *arg,
               void (*free_arg)(void *), store_done_fn done, void *ctx)
{
    struct store_pg_job *j = calloc(1, sizeof(*j));

    if (j == NULL)
        return IG_ERR_NOMEM;
    j->fn = fn;
    j->arg = arg;
    j->free_arg = free_arg;
    j->done = done;
    j->ctx = ctx;
    (void)pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        (void)pthread_mutex_unlock(&s->mu);
        free(j);
        return IG_ERR_IO;
    }
    if (s->tail != NULL)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    atomic_fetch_add(&s->queued, 1);
    (void)pthread_cond_signal(&s->wake);
    (void)pthread_mutex_unlock(&s->mu);
    return IG_OK;
}

int
store_pg_overloaded(struct store_pg *s)
{
    return s->opts.max_queue > 0 &&
           atomic_load(&s->queued) >= s->opts.max_queue;
}

size_t
store_pg_queue_depth(struct store_pg *s)
{
    return atomic_load(&s->queued);
}

void
store_pg_set_observer(struct store_pg *s, store_commit_observer fn, void *ctx)
{
    (void)pthread_mutex_lock(&s->obs_mu);
    s->observer = fn;
    s->observer_ctx = ctx;
    (void)pthread_mutex_unlock(&s->obs_mu);
}

void
store_pg_committed(struct store_pg *s, const char *intent_id)
{
    if (s->opts.on_commit != NULL && intent_id != NULL && intent_id[0] != '\0')
        s->opts.on_commit(s->opts.on_commit_ctx, intent_id);
}

/* ---- the listener ---- */

static int
stopping(struct store_pg *s)
{
    int v;

    (void)pthread_mutex_lock(&s->mu);
    v = s->stopping;
    (void)pthread_mutex_unlock(&s->mu);
    return v;
}

/* An announcement on ig_sequenced (or a reconnect): s->sequenced counts
   them. Not the size the payload says: any role that can connect may
   NOTIFY, and a forged huge size kept as the maximum left every later
   real announcement unseen by settle_wait (which waits for a change), so
   each read of the log waited out its 100 ms tick. */
static void
announce_sequenced(struct store_pg *s)
{
    (void)pthread_mutex_lock(&s->seq_mu);
    s->sequenced++;
    (void)pthread_cond_broadcast(&s->seq_cv);
    (void)pthread_mutex_unlock(&s->seq_mu);
}

static PGconn *
listen_connect(struct store_pg *s)
{
    struct ig_err err;
    PGconn *c = store_pg_connect(s->conninfo, &err);
    PGresult *r;

    if (c == NULL)
        return NULL;
    r = PQexec(c,
               "LISTEN " STORE_PG_CH_INTENT "; LISTEN " STORE_PG_CH_SEQUENCED);
    if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
        PQclear(r);
        PQfinish(c);
        return NULL;
    }
    PQclear(r);
    return c;
}

static void *
listener_main(void *arg)
{
    struct store_pg *s = arg;
    PGconn *c = NULL;
    int lost = 0;

    while (!stopping(s)) {
        struct pollfd pfd;
        PGnotify *n;

        if (c == NULL) {
            c = listen_connect(s);
            if (c == NULL) {
                if (!lost)
                    store_pg_log(s, "warn", "store.pg_listener_lost",
                                 json_pack("{s:s}", "message",
                                           "cannot LISTEN: retrying"));
                lost = 1;
                (void)poll(NULL, 0, LISTEN_RETRY_MS);
                continue;
            }
            (void)pthread_mutex_lock(&s->seq_mu);
            s->listening = 1;
            (void)pthread_cond_broadcast(&s->seq_cv);
            (void)pthread_mutex_unlock(&s->seq_mu);
            if (lost) {
                /* What was notified meanwhile is lost: wake everyone. */
                store_pg_log(s, "info", "store.pg_listener_back", NULL);
                if (s->opts.on_commit != NULL)
                    s->opts.on_commit(s->opts.on_commit_ctx, NULL);
                announce_sequenced(s);
            }
            lost = 0;
        }
        pfd.fd = PQsocket(c);
        pfd.events = POLLIN;
        pfd.revents = 0;
        if (poll(&pfd, 1, LISTEN_POLL_MS) < 0)
            continue;
        if (PQconsumeInput(c) == 0 || PQstatus(c) != CONNECTION_OK) {
            PQfinish(c);
            c = NULL;
            lost = 1;
            store_pg_log(s, "warn", "store.pg_listener_lost",
                         json_pack("{s:s}", "message", "connection lost"));
            continue;
        }
        while ((n = PQnotifies(c)) != NULL) {
            /* This replica's own commits woke its waiters already
               (store_pg_committed after the commit); heard again here,
               after the reply, they would wake a poll parked since with
               nothing changed. */
            if (strcmp(n->relname, STORE_PG_CH_INTENT) == 0 &&
                !store_pg_own_pid(s, n->be_pid))
                store_pg_committed(s, n->extra);
            else if (strcmp(n->relname, STORE_PG_CH_SEQUENCED) == 0)
                announce_sequenced(s);
            PQfreemem(n);
        }
    }
    PQfinish(c);
    return NULL;
}

/* ---- open and close ---- */

/* 1 once the listener has LISTENed, 0 when it did not within twice the
   connect timeout. */
static int
listener_ready(struct store_pg *s)
{
    struct timespec until;
    int ok;

    (void)clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2 * STORE_PG_CONNECT_S;
    (void)pthread_mutex_lock(&s->seq_mu);
    while (!s->listening &&
           pthread_cond_timedwait(&s->seq_cv, &s->seq_mu, &until) == 0)
        ;
    ok = s->listening;
    (void)pthread_mutex_unlock(&s->seq_mu);
    return ok;
}

static void
stop_threads(struct store_pg *s)
{
    int i;

    (void)pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    (void)pthread_cond_broadcast(&s->wake);
    (void)pthread_mutex_unlock(&s->mu);
    for (i = 0; i < s->nworkers; i++)
        (void)pthread_join(s->workers[i], NULL);
    s->nworkers = 0;
    if (s->listener_started)
        (void)pthread_join(s->listener, NULL);
    s->listener_started = 0;
}

static void
destroy(struct store_pg *s)
{
    store_pg_pool_close(s);
    free(s->workers);
    free(s->conninfo);
    (void)pthread_mutex_destroy(&s->pool_mu);
    (void)pthread_cond_destroy(&s->pool_cv);
    (void)pthread_mutex_destroy(&s->mu);
    (void)pthread_cond_destroy(&s->wake);
    (void)pthread_mutex_destroy(&s->seq_mu);
    (void)pthread_cond_destroy(&s->seq_cv);
    (void)pthread_mutex_destroy(&s->obs_mu);
    free(s);
}

enum ig_status
store_pg_open(const struct store_opts *opts, struct store_pg **out,
              struct ig_err *err)
{
    struct store_pg *s = calloc(1, sizeof(*s));
    struct store_pg_conn *c;
    enum ig_status st;
    int i;

    *out = NULL;
    if (s == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    s->opts = *opts;
    s->conninfo = strdup(opts->path);
    s->maxconns = STORE_PG_POOL_DEFAULT;
    s->nworkers = 0;
    (void)pthread_mutex_init(&s->pool_mu, NULL);
    (void)pthread_cond_init(&s->pool_cv, NULL);
    (void)pthread_mutex_init(&s->mu, NULL);
    (void)pthread_cond_init(&s->wake, NULL);
    (void)pthread_mutex_init(&s->seq_mu, NULL);
    (void)pthread_cond_init(&s->seq_cv, NULL);
    (void)pthread_mutex_init(&s->obs_mu, NULL);
    atomic_init(&s->queued, 0);
    s->workers = calloc(STORE_PG_POOL_DEFAULT, sizeof(*s->workers));
    if (s->conninfo == NULL || s->workers == NULL) {
        destroy(s);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    c = store_pg_conn_get(s, err);
    if (c == NULL) {
        destroy(s);
        return IG_ERR_IO;
    }
    st = store_pg_migrate(s, c, err);
    store_pg_conn_put(s, c);
    if (st != IG_OK) {
        destroy(s);
        return st;
    }
    if (pthread_create(&s->listener, NULL, listener_main, s) != 0) {
        destroy(s);
        return ig_err_set(err, IG_ERR_IO, "cannot start the store listener");
    }
    s->listener_started = 1;
    /* Open returns once other replicas' commits are heard: a waiter
       parked right after would otherwise miss them. */
    if (!listener_ready(s)) {
        stop_threads(s);
        destroy(s);
        return ig_err_set(err, IG_ERR_IO,
                          "cannot LISTEN on PostgreSQL within %d s",
                          2 * STORE_PG_CONNECT_S);
    }
    /* Workers: fewer than the pool, leaving connections for the
       synchronous calls of the request threads. */
    for (i = 0; i < STORE_PG_POOL_DEFAULT / 2; i++) {
        if (pthread_create(&s->workers[i], NULL, worker_main, s) != 0) {
            stop_threads(s);
            destroy(s);
            return ig_err_set(err, IG_ERR_IO, "cannot start the store workers");
        }
        s->nworkers++;
    }
    st = store_pg_audit_start(s, err);
    if (st != IG_OK) {
        stop_threads(s);
        destroy(s);
        return st;
    }
    *out = s;
    return IG_OK;
}

void
store_pg_close(struct store_pg *s)
{
    if (s == NULL)
        return;
    /* Queued writes finish first (the workers drain the queue before
       they see stopping), then the sequencer takes their events. */
    stop_threads(s);
    store_pg_audit_stop(s);
    destroy(s);
}
