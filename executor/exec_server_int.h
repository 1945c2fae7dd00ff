/*
 * exec_server_int.h - the executor server's state, shared by
 * exec_server.c (HTTP: routes and request lifecycle) and exec_start.c
 * (start-up checks, metrics, shutdown).
 */
#ifndef EXEC_SERVER_INT_H
#define EXEC_SERVER_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

#include "exec_execute.h"
#include "exec_pool.h"
#include "exec_server.h"
#include "ig_buf.h"
#include "ig_conns.h"

struct exec_server {
    struct exec_ctx x;
    struct MHD_Daemon *mhd;
    unsigned short port;
    struct exec_pool *pool;
    struct ig_conns *conns;
    long max_connections; /* the config's, lowered to fit the fd limit */
    /* Stop gate: executions are admitted under the read lock while
       stopping is 0; stopping is set under the write lock. */
    pthread_rwlock_t gate;
    int stopping;
    atomic_int live_jobs; /* requests with an execution not yet answered */
};

/* Start listening (libmicrohttpd, net/ig_httpd.h); sets s->port. NULL
   with err set on failure. */
struct MHD_Daemon *exec_server_listen(struct exec_server *s,
                                      struct ig_err *err);

/* The Prometheus text of /metrics. */
enum ig_status exec_server_metrics(struct exec_server *s,
                                   struct ig_buf *out) IG_WUR;

#endif
