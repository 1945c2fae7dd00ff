/*
 * store_pool.c - the read connections: read-only connections to the
 * store's file, each with its statements prepared once (store_rstmt_sql),
 * handed out from a free list. At most IG_STORE_MAX_READERS exist; a
 * reader past it waits for one to come back. With WAL, readers never
 * block the writer and see the last commit.
 */
#include "store_int.h"

#include <stdlib.h>

#include "ig_limits.h"

static struct store_rconn *
rconn_new(struct store_sq *s)
{
    struct store_rconn *c = calloc(1, sizeof(*c));
    int i;

    if (c == NULL)
        return NULL;
    if (store_db_open(s->path, SQLITE_OPEN_READONLY, &c->db, NULL) != IG_OK ||
        sqlite3_exec(c->db, "PRAGMA cache_size=-1024", NULL, NULL, NULL) !=
            SQLITE_OK)
        goto fail;
    for (i = 0; i < R_COUNT; i++)
        if (sqlite3_prepare_v3(c->db, store_rstmt_sql[i], -1,
                               SQLITE_PREPARE_PERSISTENT, &c->st[i],
                               NULL) != SQLITE_OK)
            goto fail;
    return c;
fail:
    for (i = 0; i < R_COUNT; i++)
        sqlite3_finalize(c->st[i]);
    sqlite3_close(c->db);
    free(c);
    return NULL;
}

static void
rconn_free(struct store_rconn *c)
{
    int i;

    for (i = 0; i < R_COUNT; i++)
        sqlite3_finalize(c->st[i]);
    sqlite3_close(c->db);
    free(c);
}

struct store_rconn *
store_rconn_get(struct store_sq *s)
{
    struct store_rconn *c = NULL;

    pthread_mutex_lock(&s->pool_mu);
    while (s->free_rconns == NULL && s->nrconns >= IG_STORE_MAX_READERS)
        pthread_cond_wait(&s->pool_cv, &s->pool_mu);
    if (s->free_rconns != NULL) {
        c = s->free_rconns;
        s->free_rconns = c->next;
    } else {
        s->nrconns++;
    }
    pthread_mutex_unlock(&s->pool_mu);
    if (c == NULL && (c = rconn_new(s)) == NULL) {
        pthread_mutex_lock(&s->pool_mu);
        s->nrconns--;
        pthread_cond_signal(&s->pool_cv);
        pthread_mutex_unlock(&s->pool_mu);
    }
    return c;
}

void
store_rconn_put(struct store_sq *s, struct store_rconn *c)
{
    pthread_mutex_lock(&s->pool_mu);
    c->next = s->free_rconns;
    s->free_rconns = c;
    pthread_cond_signal(&s->pool_cv);
    pthread_mutex_unlock(&s->pool_mu);
}

void
store_pool_close(struct store_sq *s)
{
    struct store_rconn *c;

    while ((c = s->free_rconns) != NULL) {
        s->free_rconns = c->next;
        rconn_free(c);
    }
}

struct store_rconn *
store_read_begin(struct store_sq *s)
{
    struct store_rconn *c = store_rconn_get(s);

    if (c != NULL &&
        sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        store_rconn_put(s, c);
        return NULL;
    }
    return c;
}

void
store_read_end(struct store_sq *s, struct store_rconn *c)
{
    (void)sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
    store_rconn_put(s, c);
}
