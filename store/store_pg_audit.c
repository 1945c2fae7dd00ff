/*
 * store_pg_audit.c - the PostgreSQL store's audit log sequencer: one
 * replica among those sharing the database orders every replica's audit
 * events into the one log, extends its Merkle tree and signs its
 * checkpoints - the pattern transparency logs use.
 *
 * DESIGN
 * Each write appends its events to audit_queue in the transaction of its
 * records (store_pg_queue_events) and NOTIFYs ig_audit. Every replica
 * runs a sequencer thread with a dedicated connection; the one whose
 * connection holds the session advisory lock STORE_PG_LOCK_SEQUENCER
 * (pg_try_advisory_lock) leads, the others try again every
 * STORE_PG_SEQ_RETRY_MS, so when the leader dies (its connection closes,
 * or keepalives drop it) another replica takes over within seconds.
 *
 * The leader LISTENs on ig_audit on that same connection and runs
 * batches on it (store_pg_audit_batch.c): in ONE transaction the oldest
 * queued events move into audit_events (seq = tree size + 1 ...), the tree
 * grows by their leaves (the hash of each event's exact bytes), the C2SP
 * tiles they fill are stored, the moved rows are deleted, and a
 * checkpoint is signed when due (opts.checkpoint_every leaves,
 * opts.checkpoint_interval seconds when it grew, at close while leading,
 * or store_pg_audit_sign); then NOTIFY ig_sequenced with the new size.
 * After a commit that signed a checkpoint the anchor file is written
 * (store_anchor.c, shared with SQLite). Between notifications the leader
 * still looks at the queue every STORE_PG_SEQ_IDLE_MS.
 *
 * Leadership lives and dies with that one connection: when it fails the
 * sequencer stops sequencing first (leading = 0), then drops the
 * connection (and with it the lock, if the server had not dropped it
 * already), and competes again. A deposed leader that did not notice yet
 * collides with the new one on audit_events' PRIMARY KEY: its batch fails,
 * it steps down the same way, and whoever leads next rebuilds the tree
 * from the database (store_pg_tree_load: the frontier and partial tiles
 * from the stored tiles and the last events, cheap) and checks that it
 * still extends the anchor (store_anchor_takeover). A tree that does not
 * is logged (audit.checkpoint_refused) and never signed.
 *
 * At open, before anything is served, the whole stored log is checked in
 * one snapshot (store_pg_tree_check: every event rehashed, every tile and
 * checkpoint compared) and the anchor file opened as for SQLite, except
 * that leaves beyond it are other replicas' (env.shared). Then the thread
 * starts. audit.sequencer_started and audit.sequencer_stopped (with the
 * tree size) tell operators and tests who leads.
 */
#include "store_pg_audit_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_time.h"

static const char SQL_TRY_LOCK[] = "SELECT pg_try_advisory_lock($1)";
static const char SQL_HEAD_SNAPSHOT[] =
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/* ---- state shared with the callers ---- */

static int
stopping(struct store_pg_seq *q)
{
    int v;

    (void)pthread_mutex_lock(&q->mu);
    v = q->stop;
    (void)pthread_mutex_unlock(&q->mu);
    return v;
}

static void
set_leading(struct store_pg_seq *q, int v)
{
    (void)pthread_mutex_lock(&q->mu);
    q->leading = v;
    (void)pthread_cond_broadcast(&q->cv);
    (void)pthread_mutex_unlock(&q->mu);
}

static void
poke(struct store_pg_seq *q)
{
    char b = 1;

    if (write(q->wake[1], &b, 1) < 0 && errno != EAGAIN)
        return; /* the thread still looks every second */
}

static void
drain(struct store_pg_seq *q)
{
    char b[64];

    while (read(q->wake[0], b, sizeof(b)) > 0)
        ;
}

/* ---- the connection and the lock ---- */

static void
drop_conn(struct store_pg_seq *q)
{
    PQfinish(q->conn.pg);
    q->conn.pg = NULL;
    q->conn.nprepared = 0;
    q->conn.bad = 1;
}

static int
ensure_conn(struct store_pg_seq *q, struct ig_err *err)
{
    if (q->conn.pg != NULL && !q->conn.bad &&
        PQstatus(q->conn.pg) == CONNECTION_OK)
        return 0;
    drop_conn(q);
    q->conn.pg = store_pg_connect(q->s->conninfo, err);
    if (q->conn.pg == NULL)
        return -1;
    q->conn.bad = 0;
    return 0;
}

/* Stop sequencing first, then let go of the connection and the lock. */
static void
step_down(struct store_pg_seq *q, const char *reason)
{
    set_leading(q, 0);
    store_pg_log(q->s, "warn", "audit.sequencer_stopped",
                 json_pack("{s:I, s:s}", "tree_size",
                           (json_int_t)q->audit.tree.size, "reason", reason));
    drop_conn(q);
}

/* A takeover failed: logged when the reason changed (the replica tries
   again every second). */
static void
failed(struct store_pg_seq *q, const char *why)
{
    if (strcmp(why, q->last_failure) == 0)
        return;
    (void)snprintf(q->last_failure, sizeof(q->last_failure), "%s", why);
    store_pg_log(q->s, "error", "audit.sequencer_failed",
                 json_pack("{s:s}", "error", why));
}

/* After the lock was taken: the tree rebuilt, the anchor checked. */
static enum ig_status
take_over(struct store_pg_seq *q)
{
    struct ig_err err;
    PGresult *r;
    enum ig_status st;

    ig_err_clear(&err);
    r = PQexec(q->conn.pg, "LISTEN " STORE_PG_CH_AUDIT);
    st = r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK ? IG_OK : IG_ERR_IO;
    PQclear(r);
    if (st != IG_OK)
        (void)ig_err_set(&err, IG_ERR_IO, "cannot LISTEN on %s",
                         STORE_PG_CH_AUDIT);
    else
        st = store_pg_tree_load(q, &err);
    if (st != IG_OK) {
        failed(q, err.msg);
        return IG_ERR_IO;
    }
    st = store_anchor_takeover(&q->anchor, &err);
    free(q->anchor.newest);
    q->anchor.newest = NULL;
    if (st == IG_ERR_CRYPTO) {
        /* Sequence, but never sign a tree that rewrote the anchored one. */
        q->no_sign = 1;
        store_anchor_mark_refused(&q->anchor);
        store_pg_log(q->s, "error", "audit.checkpoint_refused",
                     json_pack("{s:I, s:I, s:s}", "size",
                               (json_int_t)q->audit.tree.size, "anchor_size",
                               (json_int_t)q->anchor.size, "reason", err.msg));
    } else if (st != IG_OK) {
        failed(q, err.msg);
        return IG_ERR_IO;
    }
    q->last_failure[0] = '\0';
    q->before = q->audit;
    q->ckpt_due = ig_time_mono() + (double)q->s->opts.checkpoint_interval;
    return IG_OK;
}

/* Try to become the sequencer: 1 leading, 0 another replica leads, -1 an
   error (logged once until it clears). */
static int
try_lead(struct store_pg_seq *q, int *warned)
{
    struct store_pg_params p;
    struct ig_err err;
    PGresult *r;
    int got;

    ig_err_clear(&err);
    if (ensure_conn(q, &err) != 0) {
        if (!*warned)
            store_pg_log(q->s, "warn", "audit.sequencer_unavailable",
                         json_pack("{s:s}", "error", err.msg));
        *warned = 1;
        return -1;
    }
    *warned = 0;
    store_pg_params_init(&p);
    store_pg_param_int(&p, STORE_PG_LOCK_SEQUENCER);
    r = store_pg_query(q->s, &q->conn, SQL_TRY_LOCK, &p, NULL, NULL);
    got = r != NULL && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
    if (r == NULL)
        drop_conn(q);
    PQclear(r);
    if (!got)
        return r == NULL ? -1 : 0;
    if (take_over(q) != IG_OK) {
        drop_conn(q); /* lets go of the lock */
        return -1;
    }
    set_leading(q, 1);
    store_pg_log(q->s, "info", "audit.sequencer_started",
                 json_pack("{s:I, s:I}", "tree_size",
                           (json_int_t)q->audit.tree.size, "checkpoint",
                           (json_int_t)q->audit.ckpt_size));
    return 1;
}

/* ---- batches ---- */

/* One batch; sign: a checkpoint now. IG_OK (committed), IG_ERR_NOTFOUND
   (nothing to do), IG_ERR_IO (failed: the caller steps down). */
static enum ig_status
run_batch(struct store_pg_seq *q, int sign)
{
    const struct store_opts *o = &q->s->opts;
    enum ig_status st;

    q->sign = sign;
    q->before = q->audit;
    st = store_pg_txn_on(q->s, &q->conn, store_pg_tree_batch, q);
    if (st != IG_OK) {
        q->audit = q->before; /* the edge is rebuilt when next used */
        store_anchor_after_commit(&q->anchor, 0);
        return st == IG_ERR_NOTFOUND ? st : IG_ERR_IO;
    }
    q->before = q->audit;
    store_anchor_after_commit(&q->anchor, 1);
    if (q->sign_rc == IG_OK) {
        store_pg_log(q->s, "info", "audit.checkpoint_signed",
                     json_pack("{s:I, s:s}", "size",
                               (json_int_t)q->audit.ckpt_size, "name",
                               o->audit_name));
        if (o->on_checkpoint != NULL)
            o->on_checkpoint(o->on_checkpoint_ctx, q->audit.ckpt_size);
    }
    return IG_OK;
}

/* Batches until the queue is empty (or stopping); sign: the first signs
   now. IG_OK or IG_ERR_IO. */
static enum ig_status
run_batches(struct store_pg_seq *q, int sign, enum ig_status *sign_rc)
{
    enum ig_status st;

    do {
        st = run_batch(q, sign);
        if (sign)
            *sign_rc = st == IG_ERR_IO ? IG_ERR_IO : q->sign_rc;
        sign = 0;
    } while (st == IG_OK && q->moved == STORE_PG_SEQ_BATCH && !stopping(q));
    return st == IG_ERR_IO ? IG_ERR_IO : IG_OK;
}

/* Wait for queued events, a request, or the next look. 0, or -1 when the
   connection failed. */
static int
leader_wait(struct store_pg_seq *q)
{
    const struct store_opts *o = &q->s->opts;
    struct pollfd p[2];
    int ms = STORE_PG_SEQ_IDLE_MS;
    PGnotify *n;

    if (o->audit_key != NULL && o->checkpoint_interval > 0) {
        double left = (q->ckpt_due - ig_time_mono()) * 1000.0;

        if (left < (double)ms)
            ms = left > 0 ? (int)left + 1 : 0;
    }
    p[0].fd = PQsocket(q->conn.pg);
    p[0].events = POLLIN;
    p[1].fd = q->wake[0];
    p[1].events = POLLIN;
    p[0].revents = p[1].revents = 0;
    if (poll(p, 2, ms) < 0 && errno != EINTR)
        return -1;
    if (p[1].revents != 0)
        drain(q);
    if (PQconsumeInput(q->conn.pg) == 0 ||
        PQstatus(q->conn.pg) != CONNECTION_OK)
        return -1;
    while ((n = PQnotifies(q->conn.pg)) != NULL)
        PQfreemem(n);
    return 0;
}

static void
follower_wait(struct store_pg_seq *q)
{
    struct pollfd p;

    p.fd = q->wake[0];
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, STORE_PG_SEQ_RETRY_MS) > 0)
        drain(q);
}

/* Answer the sign requests up to asked. */
static void
answer(struct store_pg_seq *q, uint64_t asked, enum ig_status rc)
{
    (void)pthread_mutex_lock(&q->mu);
    if (asked > q->sign_done) {
        q->sign_done = asked;
        q->sign_st = rc;
        q->sign_size = q->audit.ckpt_size;
    }
    (void)pthread_cond_broadcast(&q->cv);
    (void)pthread_mutex_unlock(&q->mu);
}

static void
lead(struct store_pg_seq *q)
{
    enum ig_status rc = IG_ERR_IO;
    uint64_t asked;
    int sign;

    (void)pthread_mutex_lock(&q->mu);
    asked = q->sign_asked;
    sign = asked > q->sign_done;
    (void)pthread_mutex_unlock(&q->mu);
    if (run_batches(q, sign, &rc) != IG_OK) {
        if (sign)
            answer(q, asked, IG_ERR_IO);
        step_down(q, "a batch failed: the connection or the lock was lost, "
                     "or another sequencer wrote");
    } else {
        if (sign)
            answer(q, asked, rc);
        if (leader_wait(q) == 0)
            return;
        step_down(q, "the connection holding the lock was lost");
    }
    /* Deposed: let the other replicas, which try every
       STORE_PG_SEQ_RETRY_MS, take the lock first. */
    follower_wait(q);
    follower_wait(q);
}

static void *
seq_main(void *arg)
{
    struct store_pg_seq *q = arg;
    enum ig_status rc = IG_OK;
    int warned = 0;

    while (!stopping(q)) {
        if (q->leading)
            lead(q);
        else if (try_lead(q, &warned) != 1)
            follower_wait(q);
    }
    if (q->leading) {
        /* The replica's own writes are all queued by now (the workers
           stopped first): move what is queued, sign the final
           checkpoint. */
        if (run_batches(q, 0, &rc) == IG_OK)
            (void)run_batch(q, 1);
        set_leading(q, 0);
        store_pg_log(q->s, "info", "audit.sequencer_stopped",
                     json_pack("{s:I, s:s}", "tree_size",
                               (json_int_t)q->audit.tree.size, "reason",
                               "closing"));
    }
    drop_conn(q);
    answer(q, UINT64_MAX, IG_ERR_IO);
    return NULL;
}

/* ---- open and close ---- */

struct record_arg {
    const char *ev[1];
};

static enum ig_status
record_body(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct record_arg *a = arg;

    return store_pg_queue_events(s, c, a->ev, 1);
}

/* store_anchor_env's record: the adoption, queued like any event. */
static enum ig_status
record_event(void *ctx, const char *event, struct ig_err *err)
{
    struct store_pg_seq *q = ctx;
    struct record_arg a;

    a.ev[0] = event;
    if (store_pg_txn(q->s, record_body, &a) == IG_OK)
        return IG_OK;
    return ig_err_set(err, IG_ERR_IO,
                      "cannot record the adoption of the audit anchor in "
                      "the log");
}

static void
seq_free(struct store_pg_seq *q, int clean)
{
    if (q == NULL)
        return;
    drop_conn(q);
    if (q->anchor.env.audit != NULL)
        store_anchor_close(&q->anchor, clean);
    if (q->wake[0] >= 0)
        (void)close(q->wake[0]);
    if (q->wake[1] >= 0)
        (void)close(q->wake[1]);
    (void)pthread_mutex_destroy(&q->mu);
    (void)pthread_cond_destroy(&q->cv);
    free(q);
}

static enum ig_status
seq_new(struct store_pg *s, struct store_pg_seq **out, struct ig_err *err)
{
    struct store_pg_seq *q = calloc(1, sizeof(*q));

    *out = NULL;
    if (q == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    q->s = s;
    q->wake[0] = q->wake[1] = -1;
    q->conn.bad = 1;
    (void)pthread_mutex_init(&q->mu, NULL);
    (void)pthread_cond_init(&q->cv, NULL);
    q->rd.s = s;
    q->rd.c = &q->conn;
    q->anchor.env.opts = &s->opts;
    q->anchor.env.shared = 1;
    q->anchor.env.audit = &q->audit;
    q->anchor.env.fetch = store_pg_tree_fetch;
    q->anchor.env.ctx = q;
    q->anchor.env.record = record_event;
    audit_frontier_init(&q->audit.tree);
    if (pipe(q->wake) != 0 || fcntl(q->wake[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(q->wake[1], F_SETFL, O_NONBLOCK) != 0) {
        seq_free(q, 0);
        return ig_err_set(err, IG_ERR_IO, "cannot make a pipe: %s",
                          strerror(errno));
    }
    *out = q;
    return IG_OK;
}

enum ig_status
store_pg_audit_start(struct store_pg *s, struct ig_err *err)
{
    struct store_pg_seq *q = NULL;
    double t0 = ig_time_mono();
    enum ig_status st;

    if ((st = seq_new(s, &q, err)) != IG_OK)
        return st;
    if (ensure_conn(q, err) != 0 || store_pg_tree_check(q, err) != IG_OK) {
        seq_free(q, 0);
        return IG_ERR_IO;
    }
    store_pg_log(s, "info", "audit.log_checked",
                 json_pack("{s:I, s:I, s:f}", "leaves",
                           (json_int_t)q->audit.tree.size, "checkpoint",
                           (json_int_t)q->audit.ckpt_size, "seconds",
                           ig_time_mono() - t0));
    if (store_anchor_open(&q->anchor, err) != IG_OK) {
        seq_free(q, 0);
        return IG_ERR_IO;
    }
    if (pthread_create(&q->thread, NULL, seq_main, q) != 0) {
        seq_free(q, 0);
        return ig_err_set(err, IG_ERR_IO, "cannot start the audit sequencer");
    }
    q->started = 1;
    s->seq = q;
    return IG_OK;
}

void
store_pg_audit_stop(struct store_pg *s)
{
    struct store_pg_seq *q = s->seq;

    if (q == NULL)
        return;
    (void)pthread_mutex_lock(&q->mu);
    q->stop = 1;
    (void)pthread_cond_broadcast(&q->cv);
    (void)pthread_mutex_unlock(&q->mu);
    poke(q);
    if (q->started)
        (void)pthread_join(q->thread, NULL);
    seq_free(q, q->started);
    s->seq = NULL;
}

/* ---- head and sign ---- */

struct head_arg {
    uint64_t *size;
    unsigned char *root;
};

static enum ig_status
head_body(struct store_pg *s, struct store_pg_conn *c, void *arg)
{
    struct head_arg *h = arg;

    if (store_pg_exec(s, c, SQL_HEAD_SNAPSHOT, NULL) != IG_OK)
        return IG_ERR_IO;
    return store_pg_tree_head(s, c, h->size, h->root);
}

enum ig_status
store_pg_audit_head(struct store_pg *s, uint64_t *size,
                    unsigned char root[AUDIT_HASH_BYTES])
{
    struct head_arg h;

    /* Every event committed before this call, this replica's included,
       must be sequenced first. */
    if (store_pg_audit_settle(s, STORE_PG_STATEMENT_MS) != IG_OK)
        return IG_ERR_IO;
    h.size = size;
    h.root = root;
    return store_pg_txn(s, head_body, &h) == IG_OK ? IG_OK : IG_ERR_IO;
}

enum ig_status
store_pg_audit_sign(struct store_pg *s, uint64_t *size)
{
    struct store_pg_seq *q = s->seq;
    struct timespec until;
    enum ig_status st = IG_ERR_IO;
    uint64_t ticket;

    *size = 0;
    if (s->opts.audit_key == NULL || s->opts.audit_name == NULL)
        return IG_ERR_NOTFOUND;
    if (q == NULL)
        return IG_ERR_IO;
    (void)clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += STORE_PG_STATEMENT_MS / 1000;
    (void)pthread_mutex_lock(&q->mu);
    if (!q->leading || q->stop) {
        /* Only the sequencer signs: this replica is not it now. */
        (void)pthread_mutex_unlock(&q->mu);
        return IG_ERR_IO;
    }
    ticket = ++q->sign_asked;
    (void)pthread_mutex_unlock(&q->mu);
    poke(q);
    (void)pthread_mutex_lock(&q->mu);
    while (q->sign_done < ticket && q->leading && !q->stop)
        if (pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT)
            break;
    if (q->sign_done >= ticket) {
        st = q->sign_st;
        if (st == IG_OK)
            *size = q->sign_size;
    }
    (void)pthread_mutex_unlock(&q->mu);
    return st;
}
