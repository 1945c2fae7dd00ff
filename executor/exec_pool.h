/*
 * exec_pool.h - a fixed set of worker threads for executions.
 *
 * The HTTP threads never block on an execution: they admit it (checks, a
 * slot), suspend the connection and hand it here. The executor starts
 * the pool with twice as many threads as it allows executions at once: a
 * worker that has answered its agent (the slot given back) still reports
 * the outcome to the PDP, so an admitted execution starts at once unless
 * the PDP is so slow that every other worker is still reporting (it then
 * waits in the queue). Submitting never blocks.
 */
#ifndef EXEC_POOL_H
#define EXEC_POOL_H

#include <stddef.h>

#include "ig_error.h"

struct exec_pool;

/* Start n threads. IG_ERR_NOMEM / IG_ERR_IO (a thread could not start). */
enum ig_status exec_pool_new(size_t n, struct exec_pool **out,
                             struct ig_err *err) IG_WUR;

/* Queue fn(arg) for a worker. IG_ERR_NOMEM, or IG_ERR_INVALID once the
   pool is stopping (fn is then not called). Any thread. */
enum ig_status exec_pool_submit(struct exec_pool *p, void (*fn)(void *arg),
                                void *arg) IG_WUR;

/* Run every queued job to its end, stop and join the threads, free.
   NULL is fine. */
void exec_pool_free(struct exec_pool *p);

#endif
