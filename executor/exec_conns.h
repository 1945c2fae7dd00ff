/*
 * exec_conns.h - every open HTTP connection of the executor, and the
 * request deadline libmicrohttpd does not have.
 *
 * libmicrohttpd's connection timeout is an idle timeout: a client that
 * sends one byte now and then keeps a connection forever (slowloris).
 * Here each connection has a clock that starts when it opens and again
 * after each response; the request's headers and body must have arrived
 * (exec_conns_busy) before request_timeout_ms has passed, or a sweeper
 * thread shuts the socket down. A connection whose request is being
 * executed or answered is busy and not timed here.
 */
#ifndef EXEC_CONNS_H
#define EXEC_CONNS_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

struct exec_conns;

/* Start the sweeper. IG_ERR_NOMEM, IG_ERR_IO. */
enum ig_status exec_conns_new(double request_timeout_ms,
                              struct exec_conns **out,
                              struct ig_err *err) IG_WUR;

/* Stop the sweeper and free (after MHD_stop_daemon). NULL is fine. */
void exec_conns_free(struct exec_conns *c);

/* The MHD_OPTION_NOTIFY_CONNECTION callback; cls is the exec_conns. */
void exec_conns_notify(void *cls, struct MHD_Connection *conn,
                       void **socket_context,
                       enum MHD_ConnectionNotificationCode code);

/* The connection's request has fully arrived (busy = 1), or its response
   is done and the next request's clock starts (busy = 0). Any MHD
   thread. */
void exec_conns_busy(struct exec_conns *c, struct MHD_Connection *conn,
                     int busy);

/* Connections open now, and cut at their deadline so far. */
size_t exec_conns_open(struct exec_conns *c);
uint64_t exec_conns_cut(struct exec_conns *c);

#endif
