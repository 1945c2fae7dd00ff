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

#include <string.h>

#include "ig_limits.h"

enum limits_key {
    L_CONNECTIONS,
    L_PER_ADDRESS,
    L_REQUEST_TIMEOUT,
    L_WAITERS,
    L_WAITERS_PER_PRINCIPAL,
    L_WRITE_QUEUE,
    L_NKEYS
};

static const char *const limits_keys[L_NKEYS] = {
    "max_connections", "max_connections_per_address", "request_timeout_ms",
    "max_waiters",     "max_waiters_per_principal",   "max_write_queue"};

#define SEEN_BIT 8u /* p->sections: [limits] seen */

int
cfg_limits_begin(struct cfg_parse *p, const char *id)
{
    if (id != NULL)
        return cfg_error(p, "[limits] takes no id");
    if (p->sections & SEEN_BIT)
        return cfg_error(p, "[limits] appears twice");
    p->sections |= SEEN_BIT;
    p->seen_sec = 0;
    p->cur_line = p->line;
    p->sec = SEC_LIMITS;
    return 0;
}

int
cfg_limits_set(struct cfg_parse *p, const char *key, const char *v)
{
    struct pdp_config *c = p->c;
    unsigned k;

    for (k = 0; k < L_NKEYS && strcmp(key, limits_keys[k]) != 0; k++)
        ;
    if (k == L_NKEYS)
        return cfg_error(p, "unknown key %s in [limits]", key);
    if (p->seen_sec & (1u << k))
        return cfg_error(p, "duplicate key %s", key);
    p->seen_sec |= 1u << k;
    switch ((enum limits_key)k) {
    case L_CONNECTIONS:
        return cfg_int(p, key, v, 16, 1000000, &c->max_connections);
    case L_PER_ADDRESS:
        return cfg_int(p, key, v, 1, 1000000, &c->max_per_address);
    case L_REQUEST_TIMEOUT:
        return cfg_int(p, key, v, 100, 600000, &c->request_timeout_ms);
    case L_WAITERS:
        return cfg_int(p, key, v, 0, 1000000, &c->max_waiters);
    case L_WAITERS_PER_PRINCIPAL:
        return cfg_int(p, key, v, 0, 1000000, &c->max_waiters_per_principal);
    case L_WRITE_QUEUE:
        return cfg_int(p, key, v, 16, 10000000, &c->max_write_queue);
    case L_NKEYS:
        break;
    }
    return cfg_error(p, "internal error");
}

/* The defaults for what [limits] did not set (fields start at -1). */
int
cfg_limits_finish(struct cfg_parse *p)
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
