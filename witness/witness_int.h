/*
 * witness_int.h - the running witness, shared by witness_server.c (start,
 * stop) and witness_http.c (the routes).
 */
#ifndef WITNESS_INT_H
#define WITNESS_INT_H

#include <microhttpd.h>

#include "ig_conns.h"
#include "ig_key.h"
#include "witness.h"
#include "witness_rate.h"
#include "witness_state.h"

struct witness {
    const struct witness_config *cfg;
    struct ig_signing_key *key;
    struct witness_signer signer;
    struct witness_state *state;
    struct witness_rate *rate;
    struct ig_conns *conns;
    struct MHD_Daemon *mhd;
    unsigned short port;
    unsigned int max_connections; /* as the descriptor limit allows */
    char vkey[WITNESS_OWN_VKEY_MAX + 1];
};

/* Listen (net/ig_httpd.h) with w's routes; sets w->port. NULL with err. */
struct MHD_Daemon *witness_http_start(struct witness *w, struct ig_err *err);

#endif
