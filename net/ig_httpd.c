/*
 * ig_httpd.c - one way to start a libmicrohttpd daemon (see ig_httpd.h).
 */
#include "ig_httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

struct MHD_Daemon *
ig_httpd_start(const struct ig_httpd *o, unsigned short *port,
               struct ig_err *err)
{
    const union MHD_DaemonInfo *info;
    struct sockaddr_in sa;
    struct MHD_Daemon *d;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(o->port);
    if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1) {
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "listen address %s is not an IPv4 address", o->host);
        return NULL;
    }
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                             MHD_ALLOW_SUSPEND_RESUME,
                         0, o->accept, o->accept_cls, o->request,
                         o->request_cls, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE,
                         o->threads, MHD_OPTION_NOTIFY_COMPLETED, o->completed,
                         o->completed_cls, MHD_OPTION_NOTIFY_CONNECTION,
                         ig_conns_notify, o->conns, MHD_OPTION_CONNECTION_LIMIT,
                         o->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                         o->max_per_address, MHD_OPTION_LISTEN_BACKLOG_SIZE,
                         o->backlog, MHD_OPTION_CONNECTION_TIMEOUT,
                         o->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                         o->connection_memory, MHD_OPTION_END);
    if (d == NULL) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot listen on %s:%u", o->host,
                         o->port);
        return NULL;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info != NULL ? info->port : o->port;
    return d;
}
