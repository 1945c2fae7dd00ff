/*
 * store_pg_conn.c - the PostgreSQL store's connections: opening one with
 * our defaults, the pool, statements prepared once per connection,
 * parameters, transactions retried on serialization failures, and the
 * audit queue every write appends to.
 */
#include "store_pg_int.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ig_json.h"
#include "ig_time.h"

#define TXN_RETRIES 5

void
store_pg_log(struct store_pg *s, const char *level, const char *event,
             json_t *fields)
{
    if (s->opts.log != NULL)
        s->opts.log(level, event, fields);
    else
        json_decref(fields);
}

/* The server's notices (NOTICE from IF NOT EXISTS, a FATAL arriving on an
   idle connection the server ended) would go to stderr: the failure they
   tell of is seen, and logged, by the statement that meets it. */
static void
quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* Whether text holds "password" in any case. */
static int
names_password(const char *text)
{
    for (; *text != '\0'; text++)
        if (strncasecmp(text, "password", 8) == 0)
            return 1;
    return 0;
}

PGconn *
store_pg_connect(const char *conninfo, struct ig_err *err)
{
    /* Our defaults first: what the URL says overrides them. Keepalives and
       the TCP user timeout let the server drop a vanished replica's
       connections (and with them its advisory locks: the sequencer's)
       within seconds, and let us notice a vanished server. */
    static const char *const keys[] = {
        "connect_timeout",  "application_name",
        "options",          "keepalives",
        "keepalives_idle",  "keepalives_interval",
        "keepalives_count", "tcp_user_timeout",
        "dbname",           NULL};
    char timeout[16], options[64];
    const char *vals[10];
    PQconninfoOption *parsed;
    char *why = NULL;
    PGconn *c;

    /* libpq quotes the part of a URL it cannot parse (a password with a
       stray %, or the whole URL), and the message is logged: name the
       reason only when the URL can hold no password - no userinfo (@),
       no "password" key, nothing percent-encoded. */
    parsed = PQconninfoParse(conninfo, &why);
    if (parsed == NULL) {
        if (why == NULL)
            (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        else if (strpbrk(conninfo, "@%") != NULL || names_password(conninfo))
            (void)ig_err_set(err, IG_ERR_INVALID,
                             "cannot connect to PostgreSQL: the database URL "
                             "is not valid (libpq's reason is not shown: it "
                             "may quote a password)");
        else
            (void)ig_err_set(err, IG_ERR_INVALID,
                             "cannot connect to PostgreSQL: the database URL "
                             "is not valid: %.*s",
                             (int)strcspn(why, "\n"), why);
        PQfreemem(why);
        return NULL;
    }
    PQconninfoFree(parsed);

    (void)snprintf(timeout, sizeof(timeout), "%d", STORE_PG_CONNECT_S);
    (void)snprintf(options, sizeof(options), "-c statement_timeout=%d",
                   STORE_PG_STATEMENT_MS);
    vals[0] = timeout;
    vals[1] = "intentgate";
    vals[2] = options;
    vals[3] = "1";
    vals[4] = "5";
    vals[5] = "2";
    vals[6] = "3";
    vals[7] = "15000";
    vals[8] = conninfo;
    vals[9] = NULL;
    c = PQconnectdbParams(keys, vals, 1);
    if (c == NULL) {
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (PQstatus(c) != CONNECTION_OK) {
        const char *m = PQerrorMessage(c);
        size_t n = strlen(m);

        while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
            n--;
        (void)ig_err_set(err, IG_ERR_IO, "cannot connect to PostgreSQL: %.*s",
                         (int)n, m);
        PQfinish(c);
        return NULL;
    }
    (void)PQsetNoticeProcessor(c, quiet, NULL);
    return c;
}

/* libpq's message m on one line, into out: the "ERROR:  " prefix
   dropped, lines joined, the excerpt of the query (LINE n: ...) cut. */
const char *
store_pg_message(const char *m, char *out, size_t cap)
{
    const char *cut = strstr(m, "\nLINE ");
    size_t n = cut != NULL ? (size_t)(cut - m) : strlen(m), i, o = 0;
    int space = 0;

    if (strncmp(m, "ERROR:  ", 8) == 0 && n >= 8) {
        m += 8;
        n -= 8;
    }
    for (i = 0; i < n && o + 1 < cap; i++) {
        if (m[i] == '\n' || m[i] == '\t' || m[i] == ' ') {
            space = o > 0;
            continue;
        }
        if (space && o + 2 < cap)
            out[o++] = ' ';
        space = 0;
        out[o++] = m[i];
    }
    out[o] = '\0';
    return out;
}

/* ---- the pool ---- */

/* 1 when the server closed c while it sat in the pool (a restart, a
   failover, a terminated backend): with nothing asked, its socket is
   readable - the server's FATAL, then the end of the stream. Reading them
   here costs a poll without a wait, and spares the next caller a failed
   statement (after a restart, one per pooled connection). A healthy
   connection may hold a ParameterStatus or a notice: consumed, then the
   socket is quiet again. */
static int
conn_dropped(PGconn *pg)
{
    struct pollfd p;
    int i;

    for (i = 0; i < 4; i++) {
        p.fd = PQsocket(pg);
        p.events = POLLIN;
        p.revents = 0;
        if (p.fd < 0)
            return 1;
        if (poll(&p, 1, 0) <= 0)
            break;
        if (PQconsumeInput(pg) == 0)
            return 1;
        (void)PQisBusy(pg); /* parses what came: notices */
    }
    return PQstatus(pg) != CONNECTION_OK;
}

static int
conn_usable(struct store_pg *s, struct store_pg_conn *c, struct ig_err *err)
{
    if (!c->bad && c->pg != NULL && !conn_dropped(c->pg))
        return 1;
    atomic_store(&c->pid, 0);
    PQfinish(c->pg);
    c->pg = store_pg_connect(s->conninfo, err);
    c->nprepared = 0;
    c->bad = c->pg == NULL;
    if (c->pg != NULL)
        atomic_store(&c->pid, PQbackendPID(c->pg));
    return !c->bad;
}

struct store_pg_conn *
store_pg_conn_get(struct store_pg *s, struct ig_err *err)
{
    struct store_pg_conn *c = NULL;
    struct timespec until;
    int open_new = 0, i;

    (void)clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += STORE_PG_CONNECT_S;
    (void)pthread_mutex_lock(&s->pool_mu);
    while (s->free_conns == NULL && s->nconns >= s->maxconns) {
        if (pthread_cond_timedwait(&s->pool_cv, &s->pool_mu, &until) ==
            ETIMEDOUT)
            break;
    }
    if (s->free_conns != NULL) {
        c = s->free_conns;
        s->free_conns = c->next;
    } else if (s->nconns < s->maxconns) {
        s->nconns++;
        open_new = 1;
    }
    (void)pthread_mutex_unlock(&s->pool_mu);
    if (c == NULL && !open_new) {
        (void)ig_err_set(err, IG_ERR_IO,
                         "no PostgreSQL connection free within %d s",
                         STORE_PG_CONNECT_S);
        return NULL;
    }
    if (c == NULL) {
        c = calloc(1, sizeof(*c));
        if (c == NULL) {
            (void)pthread_mutex_lock(&s->pool_mu);
            s->nconns--;
            (void)pthread_cond_signal(&s->pool_cv);
            (void)pthread_mutex_unlock(&s->pool_mu);
            (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
            return NULL;
        }
        c->bad = 1;
        (void)pthread_mutex_lock(&s->pool_mu);
        for (i = 0; i < STORE_PG_POOL_DEFAULT; i++)
            if (s->all[i] == NULL) {
                s->all[i] = c;
                break;
            }
        (void)pthread_mutex_unlock(&s->pool_mu);
    }
    if (!conn_usable(s, c, err)) {
        /* Keep the slot: the next caller tries to connect again. */
        store_pg_conn_put(s, c);
        return NULL;
    }
    return c;
}

int
store_pg_own_pid(struct store_pg *s, int pid)
{
    int i, own = 0;

    (void)pthread_mutex_lock(&s->pool_mu);
    for (i = 0; i < STORE_PG_POOL_DEFAULT && !own; i++)
        own = s->all[i] != NULL && atomic_load(&s->all[i]->pid) == pid;
    (void)pthread_mutex_unlock(&s->pool_mu);
    return own;
}

void
store_pg_conn_put(struct store_pg *s, struct store_pg_conn *c)
{
    if (c == NULL)
        return;
    /* A connection left inside a transaction is of no use to the next
       caller: reset it. */
    if (c->pg != NULL && PQtransactionStatus(c->pg) != PQTRANS_IDLE)
        c->bad = 1;
    (void)pthread_mutex_lock(&s->pool_mu);
    c->next = s->free_conns;
    s->free_conns = c;
    (void)pthread_cond_signal(&s->pool_cv);
    (void)pthread_mutex_unlock(&s->pool_mu);
}

void
store_pg_pool_close(struct store_pg *s)
{
    struct store_pg_conn *c, *next;

    memset(s->all, 0, sizeof(s->all));
    for (c = s->free_conns; c != NULL; c = next) {
        next = c->next;
        PQfinish(c->pg);
        free(c);
    }
    s->free_conns = NULL;
    s->nconns = 0;
}

/* ---- statements ---- */

void
store_pg_params_init(struct store_pg_params *p)
{
    p->n = 0;
}

static int
param_slot(struct store_pg_params *p)
{
    if (p->n >= STORE_PG_PARAMS_MAX)
        abort(); /* a statement of ours with too many: a bug */
    p->len[p->n] = 0;
    p->format[p->n] = 0;
    return p->n++;
}

void
store_pg_param_text(struct store_pg_params *p, const char *text)
{
    p->v[param_slot(p)] = text;
}

void
store_pg_param_int(struct store_pg_params *p, int64_t v)
{
    int i = param_slot(p);

    (void)snprintf(p->num[i], sizeof(p->num[i]), "%" PRId64, v);
    p->v[i] = p->num[i];
}

void
store_pg_param_bin(struct store_pg_params *p, const void *v, size_t len)
{
    int i = param_slot(p);

    p->v[i] = v;
    p->len[i] = (int)len;
    p->format[i] = 1;
}

/* The name of sql's prepared statement on c, preparing it the first time;
   NULL when it cannot be prepared. */
static const char *
prepared(struct store_pg *s, struct store_pg_conn *c, const char *sql,
         const struct store_pg_params *p, char name[16], char state[6])
{
    PGresult *r;
    int i;

    for (i = 0; i < c->nprepared; i++)
        if (c->prepared[i] == sql) {
            (void)snprintf(name, 16, "s%d", i);
            return name;
        }
    if (c->nprepared >= STORE_PG_PREPARED_MAX)
        return NULL; /* run it unprepared */
    (void)snprintf(name, 16, "s%d", c->nprepared);
    r = PQprepare(c->pg, name, sql, p != NULL ? p->n : 0, NULL);
    if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
        const char *st =
            r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

        (void)snprintf(state, 6, "%s", st != NULL ? st : "");
        store_pg_log(s, "warn", "store.pg_statement_failed",
                     json_pack("{s:s, s:s}", "sqlstate", state, "message",
                               PQerrorMessage(c->pg)));
        if (st == NULL || PQstatus(c->pg) != CONNECTION_OK)
            c->bad = 1;
        PQclear(r);
        return "";
    }
    PQclear(r);
    c->prepared[c->nprepared++] = sql;
    return name;
}

PGresult *
store_pg_query(struct store_pg *s, struct store_pg_conn *c, const char *sql,
               const struct store_pg_params *p, char state[6],
               const char *expect)
{
    char name[16], st_buf[6] = "";
    const char *nm;
    PGresult *r;
    ExecStatusType rs;
    int n = p != NULL ? p->n : 0;

    if (state == NULL)
        state = st_buf;
    state[0] = '\0';
    if (c->bad)
        return NULL;
    nm = prepared(s, c, sql, p, name, state);
    if (nm != NULL && nm[0] == '\0')
        return NULL;
    if (nm != NULL)
        r = PQexecPrepared(c->pg, nm, n, p != NULL ? p->v : NULL,
                           p != NULL ? p->len : NULL,
                           p != NULL ? p->format : NULL, 0);
    else
        r = PQexecParams(c->pg, sql, n, NULL, p != NULL ? p->v : NULL,
                         p != NULL ? p->len : NULL,
                         p != NULL ? p->format : NULL, 0);
    rs = r != NULL ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (rs == PGRES_COMMAND_OK || rs == PGRES_TUPLES_OK)
        return r;
    {
        const char *code =
            r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

        (void)snprintf(state, 6, "%s", code != NULL ? code : "");
        memcpy(c->failed, state, sizeof(c->failed));
        if (code == NULL || PQstatus(c->pg) != CONNECTION_OK)
            c->bad = 1;
        if (expect == NULL || strcmp(state, expect) != 0)
            store_pg_log(s, "warn", "store.pg_statement_failed",
                         json_pack("{s:s, s:s}", "sqlstate", state, "message",
                                   PQerrorMessage(c->pg)));
    }
    PQclear(r);
    return NULL;
}

enum ig_status
store_pg_exec(struct store_pg *s, struct store_pg_conn *c, const char *sql,
              const struct store_pg_params *p)
{
    PGresult *r = store_pg_query(s, c, sql, p, NULL, NULL);

    if (r == NULL)
        return IG_ERR_IO;
    PQclear(r);
    return IG_OK;
}

const char *
store_pg_text(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return "";
    return PQgetvalue(r, row, col);
}

int64_t
store_pg_int(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0;
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

json_t *
store_pg_json(const PGresult *r, int row, int col)
{
    const char *t = store_pg_text(r, row, col);
    json_t *v = NULL;

    if (ig_json_parse(t, strlen(t), &v, NULL) != IG_OK)
        return NULL;
    return v;
}

/* ---- transactions ---- */

static int
retryable(struct store_pg_conn *c, const char *state)
{
    return !c->bad &&
           (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0);
}

/* Plain statements run unprepared (they change nothing to prepare). */
static enum ig_status
simple(struct store_pg_conn *c, const char *sql, char state[6])
{
    PGresult *r = PQexec(c->pg, sql);
    const char *code;

    state[0] = '\0';
    if (r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK) {
        PQclear(r);
        return IG_OK;
    }
    code = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    (void)snprintf(state, 6, "%s", code != NULL ? code : "");
    if (code == NULL || PQstatus(c->pg) != CONNECTION_OK)
        c->bad = 1;
    PQclear(r);
    return IG_ERR_IO;
}

/* Commit time and writes to the observer. */
static void
observe(struct store_pg *s, double seconds, size_t writes)
{
    store_commit_observer obs;
    void *octx;

    (void)pthread_mutex_lock(&s->obs_mu);
    obs = s->observer;
    octx = s->observer_ctx;
    (void)pthread_mutex_unlock(&s->obs_mu);
    if (obs != NULL)
        obs(octx, seconds, writes);
}

enum ig_status
store_pg_txn_on(struct store_pg *s, struct store_pg_conn *c, store_pg_txn_fn fn,
                void *arg)
{
    char state[6];
    enum ig_status st = IG_ERR_IO;
    int attempt;

    for (attempt = 0; attempt < TXN_RETRIES; attempt++) {
        double t0;

        if (c->bad)
            return IG_ERR_IO;
        if (simple(c, "BEGIN", state) != IG_OK)
            return IG_ERR_IO;
        c->failed[0] = '\0';
        st = fn(s, c, arg);
        if (st != IG_OK) {
            /* A failed statement's state decides a retry: fn saw it as
               IG_ERR_IO. */
            PGresult *r;

            if (!c->bad && PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
                r = PQexec(c->pg, "ROLLBACK");
                PQclear(r);
            }
            if (st == IG_ERR_IO && retryable(c, c->failed))
                continue;
            return st;
        }
        t0 = ig_time_mono();
        if (simple(c, "COMMIT", state) == IG_OK) {
            observe(s, ig_time_mono() - t0, 1);
            return IG_OK;
        }
        if (!retryable(c, state))
            return IG_ERR_IO;
    }
    return st;
}

/* The batch's transaction on c: 0 when every body ran (st[i] each one's
   status) and it committed; -1 when it must run again body by body. */
static int
batch_on(struct store_pg *s, struct store_pg_conn *c, size_t n,
         store_pg_txn_fn const *fn, void *const *arg, enum ig_status *st)
{
    char state[6];
    double t0;
    size_t i;

    if (simple(c, "BEGIN", state) != IG_OK)
        return -1;
    for (i = 0; i < n; i++) {
        if (simple(c, "SAVEPOINT w", state) != IG_OK)
            return -1;
        c->failed[0] = '\0';
        st[i] = fn[i](s, c, arg[i]);
        /* A lost connection, a serialization failure or a deadlock
           spoils the batch: every body runs again alone, with retries. */
        if (c->bad || (st[i] == IG_ERR_IO && retryable(c, c->failed)))
            return -1;
        /* A refused body leaves nothing behind: back to its savepoint. */
        if (st[i] != IG_OK &&
            simple(c, "ROLLBACK TO SAVEPOINT w", state) != IG_OK)
            return -1;
        if (simple(c, "RELEASE SAVEPOINT w", state) != IG_OK)
            return -1;
    }
    t0 = ig_time_mono();
    if (simple(c, "COMMIT", state) != IG_OK)
        return -1;
    observe(s, ig_time_mono() - t0, n);
    return 0;
}

void
store_pg_txn_batch(struct store_pg *s, size_t n, store_pg_txn_fn const *fn,
                   void *const *arg, enum ig_status *st)
{
    struct ig_err err;
    struct store_pg_conn *c;
    size_t i;

    if (n == 1) {
        st[0] = store_pg_txn(s, fn[0], arg[0]);
        return;
    }
    c = store_pg_conn_get(s, &err);
    if (c == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        for (i = 0; i < n; i++)
            st[i] = IG_ERR_IO;
        return;
    }
    if (batch_on(s, c, n, fn, arg, st) == 0) {
        store_pg_conn_put(s, c);
        return;
    }
    if (!c->bad && PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
        PGresult *r = PQexec(c->pg, "ROLLBACK");

        PQclear(r);
    }
    store_pg_conn_put(s, c);
    /* As the SQLite writer does when a group commit fails: each write
       again, alone, so that one write's failure is its own. A COMMIT lost
       with the connection may have committed: a write then finds itself
       recorded (an intent's id or key, a redemption) and is refused, never
       recorded twice. */
    for (i = 0; i < n; i++)
        st[i] = store_pg_txn(s, fn[i], arg[i]);
}

enum ig_status
store_pg_txn(struct store_pg *s, store_pg_txn_fn fn, void *arg)
{
    struct ig_err err;
    struct store_pg_conn *c = store_pg_conn_get(s, &err);
    enum ig_status st;

    if (c == NULL) {
        store_pg_log(s, "warn", "store.pg_unavailable",
                     json_pack("{s:s}", "message", err.msg));
        return IG_ERR_IO;
    }
    st = store_pg_txn_on(s, c, fn, arg);
    store_pg_conn_put(s, c);
    return st;
}

/* ---- what every write appends ---- */

/* The queue rows (their ids in the array's order) and the wake-ups, in
   one statement: a data-modifying WITH runs whether or not it is read. */
static const char SQL_QUEUE[] =
    "WITH q AS (INSERT INTO audit_queue (event) SELECT unnest($1::text[])) "
    "SELECT pg_notify('" STORE_PG_CH_AUDIT "', '')";
static const char SQL_QUEUE_INTENT[] =
    "WITH q AS (INSERT INTO audit_queue (event) SELECT unnest($1::text[])) "
    "SELECT pg_notify('" STORE_PG_CH_AUDIT
    "', ''), pg_notify('" STORE_PG_CH_INTENT "', $2)";
static const char SQL_NOTIFY_INTENT[] =
    "SELECT pg_notify('" STORE_PG_CH_INTENT "', $1)";

/* The events as a PostgreSQL text[] literal: {"..","..",..} with " and \
   escaped. NULL when out of memory. */
static char *
text_array(const char *const *ev, size_t n)
{
    size_t len = 3, i;
    const char *p;
    char *out, *o;

    for (i = 0; i < n; i++) {
        for (p = ev[i]; *p != '\0'; p++)
            len += (*p == '"' || *p == '\\') ? 2 : 1;
        len += 3;
    }
    out = malloc(len);
    if (out == NULL)
        return NULL;
    o = out;
    *o++ = '{';
    for (i = 0; i < n; i++) {
        if (i > 0)
            *o++ = ',';
        *o++ = '"';
        for (p = ev[i]; *p != '\0'; p++) {
            if (*p == '"' || *p == '\\')
                *o++ = '\\';
            *o++ = *p;
        }
        *o++ = '"';
    }
    *o++ = '}';
    *o = '\0';
    return out;
}

enum ig_status
store_pg_finish(struct store_pg *s, struct store_pg_conn *c,
                const char *const *ev, size_t n, const char *intent_id)
{
    struct store_pg_params p;
    enum ig_status st;
    char *arr;
    size_t i;

    if (n == 0)
        return store_pg_notify_intent(s, c, intent_id);
    if (ev == NULL)
        return IG_ERR_INVALID;
    for (i = 0; i < n; i++)
        if (ev[i] == NULL)
            return IG_ERR_INVALID;
    arr = text_array(ev, n);
    if (arr == NULL)
        return IG_ERR_NOMEM;
    store_pg_params_init(&p);
    store_pg_param_text(&p, arr);
    if (intent_id != NULL && intent_id[0] != '\0') {
        store_pg_param_text(&p, intent_id);
        st = store_pg_exec(s, c, SQL_QUEUE_INTENT, &p);
    } else {
        st = store_pg_exec(s, c, SQL_QUEUE, &p);
    }
    free(arr);
    return st;
}

enum ig_status
store_pg_queue_events(struct store_pg *s, struct store_pg_conn *c,
                      const char *const *ev, size_t n)
{
    return store_pg_finish(s, c, ev, n, NULL);
}

enum ig_status
store_pg_notify_intent(struct store_pg *s, struct store_pg_conn *c,
                       const char *intent_id)
{
    struct store_pg_params p;

    if (intent_id == NULL || intent_id[0] == '\0')
        return IG_OK;
    store_pg_params_init(&p);
    store_pg_param_text(&p, intent_id);
    return store_pg_exec(s, c, SQL_NOTIFY_INTENT, &p);
}
