/*
 * pdp_config_limits.c - the [limits] section: what one client, or all of
 * them together, may hold of the server.
 *
 *   [limits]
 *   max_connections = 4096              open connections in all
 *   max_connections_per_address = 2048  from one peer address
 *   request_timeout_ms = 10000          a request must have arrived by then
 *   max_waiters = 1024                  parked long polls in all
 *   max_waiters_per_principal = 64      ... of one principal
 *   max_write_queue = 4096              store writes waiting for the writer
 *
 * Every key is optional; the defaults are in ig_limits.h. The
 * per-address limit counts the socket's peer: behind a reverse proxy every
 * connection comes from the proxy, so set it to max_connections there and
 * let the proxy limit its clients.
 */
#include "pdp_config_int.h"

#include "ig_limits.h"

static const struct pdp_cfg_key limits_keys[] = {
    PDP_CFG_I64("max_connections", max_connections, IG_CFG_CONNECTIONS_MIN,
                IG_CFG_CONNECTIONS_MAX),
    PDP_CFG_I64("max_connections_per_address", max_per_address, 1,
                IG_CFG_CONNECTIONS_MAX),
    PDP_CFG_I64("request_timeout_ms", request_timeout_ms,
                IG_CFG_REQUEST_TIMEOUT_MIN_MS, IG_CFG_REQUEST_TIMEOUT_MAX_MS),
    PDP_CFG_I64("max_waiters", max_waiters, 0, IG_CFG_WAITERS_MAX),
    PDP_CFG_I64("max_waiters_per_principal", max_waiters_per_principal, 0,
                IG_CFG_WAITERS_MAX),
    PDP_CFG_I64("max_write_queue", max_write_queue, IG_CFG_WRITE_QUEUE_MIN,
                IG_CFG_WRITE_QUEUE_MAX),
};

int
pdp_cfg_limits_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    return pdp_cfg_dispatch(p, limits_keys, PDP_CFG_NKEYS(limits_keys),
                            &p->seen_sec, key, v);
}

/* The defaults for what [limits] did not set (fields start at -1). */
int
pdp_cfg_limits_finish(struct pdp_cfg_parse *p)
{
    struct pdp_config *c = p->c;

    if (c->max_connections < 0)
        c->max_connections = IG_PDP_MAX_CONNECTIONS;
    if (c->max_per_address < 0)
        c->max_per_address = IG_PDP_MAX_PER_ADDRESS;
    if (c->request_timeout_ms < 0)
        c->request_timeout_ms = IG_PDP_REQUEST_TIMEOUT_MS;
    if (c->max_waiters < 0)
        c->max_waiters = IG_PDP_MAX_WAITERS;
    if (c->max_waiters_per_principal < 0)
        c->max_waiters_per_principal = IG_PDP_MAX_WAITERS_PER_PRINCIPAL;
    if (c->max_write_queue < 0)
        c->max_write_queue = IG_PDP_WRITE_QUEUE;
    if (c->max_per_address > c->max_connections)
        c->max_per_address = c->max_connections;
    return 0;
}
