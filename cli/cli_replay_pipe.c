/*
 * cli_replay_pipe.c - the two stages of a replay on two threads
 * (cli_replay.h: replay_pipe_run), so a million decisions take the time
 * of the slower stage, not of both.
 *
 * DESIGN
 * A reader thread owns the scan: it steps the store's cursor and
 * prepares each row (copies what the report shows, parses the binding,
 * rebuilds the approval: replay_prepare), filling batches of BATCH rows.
 * The calling thread takes the batches in order and hands each row to fn
 * (evaluate under the engine, report), then releases it. Order is kept:
 * one producer, one consumer, a ring of RING batches under one mutex
 * with two condition variables (not full, not empty); a batch, not a row,
 * crosses threads, so the lock is taken once per BATCH rows. The store's
 * reader and its cursor are used by the reader thread only, the engine
 * and the report by the caller only; the parsed intents move with their
 * batch (ownership passes with it). When fn fails, the caller sets stop
 * and the reader ends at its next batch; when the scan fails, the reader
 * ends the stream with the error and the caller drains what came before.
 */
#include "cli_replay.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 256
#define RING 8

struct batch {
    struct replay_row row[BATCH];
    size_t n;
};

struct pipe {
    struct store_log_cursor *c;
    pthread_mutex_t mu;
    pthread_cond_t not_full, not_empty;
    struct batch ring[RING];
    size_t head, count; /* the oldest full batch; how many are full */
    int done;           /* the reader ended: rc says how */
    int rc;             /* 0, -1 the scan failed, -3 out of memory */
    int stop;           /* the caller wants no more */
    struct ig_err err;  /* the reader's, when rc != 0 */
};

/* The next free batch to fill, or NULL when the caller stopped. */
static struct batch *
free_batch(struct pipe *p)
{
    struct batch *b = NULL;

    pthread_mutex_lock(&p->mu);
    while (p->count == RING && !p->stop)
        pthread_cond_wait(&p->not_full, &p->mu);
    if (!p->stop)
        b = &p->ring[(p->head + p->count) % RING];
    pthread_mutex_unlock(&p->mu);
    return b;
}

/* Hand a filled batch over (n may be 0 at the end); last: the stream
   ends, with rc. */
static void
hand_over(struct pipe *p, struct batch *b, int last, int rc)
{
    pthread_mutex_lock(&p->mu);
    if (b != NULL && b->n > 0)
        p->count++;
    if (last) {
        p->done = 1;
        p->rc = rc;
    }
    pthread_cond_signal(&p->not_empty);
    pthread_mutex_unlock(&p->mu);
}

static void *
reader(void *arg)
{
    struct pipe *p = arg;
    struct store_log_decision d;
    struct batch *b = NULL;
    enum ig_status st = IG_OK;
    int rc = 0;

    while (rc == 0 && st == IG_OK && (b = free_batch(p)) != NULL) {
        b->n = 0;
        while (b->n < BATCH &&
               (st = store_log_next_decision(p->c, &d, &p->err)) == IG_OK) {
            if (replay_prepare(&d, &b->row[b->n]) != 0) {
                rc = -3;
                (void)ig_err_set(&p->err, IG_ERR_NOMEM, "out of memory");
                break;
            }
            b->n++;
        }
        if (st != IG_OK && st != IG_ERR_NOTFOUND)
            rc = -1;
        hand_over(p, b, rc != 0 || st != IG_OK, rc);
    }
    if (b == NULL) /* stopped by the caller */
        hand_over(p, NULL, 1, 0);
    return NULL;
}

int
replay_pipe_run(struct store_log_cursor *c,
                int (*fn)(void *ctx, struct replay_row *row), void *ctx,
                struct ig_err *err)
{
    struct pipe *p = calloc(1, sizeof(*p));
    pthread_t t;
    struct batch *b;
    int failed = 0, rc;
    size_t i;

    if (p == NULL) {
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        return -3;
    }
    p->c = c;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->not_full, NULL);
    pthread_cond_init(&p->not_empty, NULL);
    if (pthread_create(&t, NULL, reader, p) != 0) {
        free(p);
        (void)ig_err_set(err, IG_ERR_NOMEM, "cannot start a thread");
        return -3;
    }
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->count == 0 && !p->done)
            pthread_cond_wait(&p->not_empty, &p->mu);
        if (p->count == 0) { /* done, and everything taken */
            pthread_mutex_unlock(&p->mu);
            break;
        }
        b = &p->ring[p->head];
        pthread_mutex_unlock(&p->mu);
        for (i = 0; i < b->n; i++) {
            if (!failed && fn(ctx, &b->row[i]) != 0)
                failed = 1;
            replay_row_release(&b->row[i]);
        }
        b->n = 0;
        pthread_mutex_lock(&p->mu);
        p->head = (p->head + 1) % RING;
        p->count--;
        p->stop |= failed;
        pthread_cond_signal(&p->not_full);
        pthread_mutex_unlock(&p->mu);
    }
    (void)pthread_join(t, NULL);
    rc = failed ? -2 : p->rc;
    if (rc == -1 || rc == -3)
        *err = p->err;
    pthread_cond_destroy(&p->not_full);
    pthread_cond_destroy(&p->not_empty);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return rc;
}
