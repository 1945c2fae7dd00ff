/*
 * exec_pool.c - worker threads over one FIFO queue (see exec_pool.h).
 * A mutex and a condition variable guard the queue; a worker takes the
 * oldest job, runs it unlocked, and comes back. Stopping lets the queue
 * drain first, so no admitted execution is dropped.
 */
#include "exec_pool.h"

#include <pthread.h>
#include <stdlib.h>

struct job {
    void (*fn)(void *arg);
    void *arg;
    struct job *next;
};

struct exec_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct job *head, *tail;
    int stopping;
    pthread_t *threads;
    size_t n;
};

static void *
worker(void *arg)
{
    struct exec_pool *p = arg;
    struct job *j;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->head == NULL && !p->stopping)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->head == NULL)
            break; /* stopping and drained */
        j = p->head;
        p->head = j->next;
        if (p->head == NULL)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        j->fn(j->arg);
        free(j);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

enum ig_status
exec_pool_new(size_t n, struct exec_pool **out, struct ig_err *err)
{
    struct exec_pool *p = calloc(1, sizeof(*p));

    *out = NULL;
    if (p == NULL || (p->threads = calloc(n, sizeof(*p->threads))) == NULL) {
        free(p);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (p->n = 0; p->n < n; p->n++) {
        if (pthread_create(&p->threads[p->n], NULL, worker, p) != 0) {
            exec_pool_free(p);
            return ig_err_set(err, IG_ERR_IO, "cannot start %zu workers", n);
        }
    }
    *out = p;
    return IG_OK;
}

enum ig_status
exec_pool_submit(struct exec_pool *p, void (*fn)(void *arg), void *arg)
{
    struct job *j = malloc(sizeof(*j));
    enum ig_status st = IG_OK;

    if (j == NULL)
        return IG_ERR_NOMEM;
    j->fn = fn;
    j->arg = arg;
    j->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->stopping) {
        st = IG_ERR_INVALID;
    } else {
        if (p->tail != NULL)
            p->tail->next = j;
        else
            p->head = j;
        p->tail = j;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    if (st != IG_OK)
        free(j);
    return st;
}

void
exec_pool_free(struct exec_pool *p)
{
    size_t i;

    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < p->n; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->threads);
    free(p);
}
