/*
 * ig_httpd.h - starting a libmicrohttpd daemon the one way both servers
 * (the PDP's and the executor's) start theirs: bound to an IPv4 address,
 * a pool of epoll threads that never block, suspend and resume for the
 * requests that wait, every connection limit set, and each connection
 * registered with ig_conns for its request deadline.
 */
#ifndef IG_HTTPD_H
#define IG_HTTPD_H

#include <microhttpd.h>
#include <stddef.h>

#include "ig_conns.h"
#include "ig_error.h"

/* What differs between the two servers; the callbacks are libmicrohttpd's
   own, each with its closure. */
struct ig_httpd {
    const char *host;     /* an IPv4 address as text */
    unsigned short port;  /* 0: any free port */
    unsigned int threads; /* epoll threads */
    unsigned int max_connections, max_per_address;
    unsigned int idle_timeout_s;     /* libmicrohttpd's idle timeout */
    size_t connection_memory;        /* per connection */
    unsigned int backlog;            /* listen(2) backlog */
    MHD_AcceptPolicyCallback accept; /* NULL: every peer */
    void *accept_cls;
    MHD_AccessHandlerCallback request;
    void *request_cls;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
    struct ig_conns *conns;
};

/*
 * Start the daemon o describes; *port gets the port bound (o->port when
 * libmicrohttpd cannot tell). NULL with err set: IG_ERR_INVALID when
 * o->host is not an IPv4 address, IG_ERR_IO when it cannot listen. Not
 * thread safe; the caller stops the daemon with MHD_stop_daemon.
 */
struct MHD_Daemon *ig_httpd_start(const struct ig_httpd *o,
                                  unsigned short *port, struct ig_err *err);

#endif
