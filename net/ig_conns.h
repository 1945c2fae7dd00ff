/*
 * ig_conns.h - every open HTTP connection of a libmicrohttpd server (the
 * PDP's and the executor's), the request deadline libmicrohttpd does not
 * have, and the descriptor limit that decides how many connections fit.
 *
 * libmicrohttpd's connection timeout is an idle timeout: a client that
 * sends one byte now and then keeps a connection forever (slowloris).
 * Here each connection has a clock that starts when it opens and again
 * after each response; the request's headers and body must have arrived
 * (ig_conns_busy) before request_timeout_ms has passed, or a sweeper
 * thread shuts the socket down. A connection whose request is being
 * executed or answered is busy and not timed here.
 */
#ifndef IG_CONNS_H
#define IG_CONNS_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

struct ig_conns;

/* Start the sweeper. IG_ERR_NOMEM, IG_ERR_IO. */
enum ig_status ig_conns_new(double request_timeout_ms, struct ig_conns **out,
                            struct ig_err *err) IG_WUR;

/* Stop the sweeper and free (after MHD_stop_daemon). NULL is fine. */
void ig_conns_free(struct ig_conns *c);

/* The MHD_OPTION_NOTIFY_CONNECTION callback; cls is the ig_conns. */
void ig_conns_notify(void *cls, struct MHD_Connection *conn,
                     void **socket_context,
                     enum MHD_ConnectionNotificationCode code);

/* The connection's request has fully arrived (busy = 1), or its response
   is done and the next request's clock starts (busy = 0). Any MHD
   thread. */
void ig_conns_busy(struct ig_conns *c, struct MHD_Connection *conn, int busy);

/* Connections open now, and cut at their deadline so far. */
size_t ig_conns_open(struct ig_conns *c);
uint64_t ig_conns_cut(struct ig_conns *c);

/* Raise the soft RLIMIT_NOFILE to the hard limit and return how many
   connections fit: want, or fewer when the limit minus reserve (descriptors
   kept for files, the database, outbound sockets) is smaller (never below
   16). */
long ig_conns_fit_nofile(long want, long reserve);

#endif
