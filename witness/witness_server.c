/*
 * witness_server.c - start and stop the witness (witness.h): its key, its
 * state, the rate limiter, the connection registry and the HTTP daemon,
 * in that order; stopped in reverse.
 */
#include "witness.h"

#include <stdlib.h>
#include <string.h>

#include "ig_hash.h"
#include "ig_log.h"
#include "witness_int.h"

/* Descriptors kept for the database, its journal and the log. */
#define FD_RESERVE 32

enum ig_status
witness_vkey(const struct witness_config *c, char *out, size_t cap,
             struct ig_err *err)
{
    struct ig_signing_key *k = NULL;
    struct ig_public_key pub;
    enum ig_status st;

    if (ig_crypto_init() != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize libsodium");
    if (ig_signing_key_load_file(c->key_path, &k, err) != IG_OK)
        return IG_ERR_IO;
    ig_signing_key_public(k, &pub);
    ig_signing_key_free(k);
    st = audit_witness_key_format(c->name, pub.pk, out, cap);
    if (st != IG_OK)
        return ig_err_set(err, st, "cannot format the vkey of %s", c->name);
    return IG_OK;
}

static void
witness_free(struct witness *w)
{
    if (w == NULL)
        return;
    if (w->mhd != NULL)
        MHD_stop_daemon(w->mhd);
    ig_conns_free(w->conns);
    witness_rate_free(w->rate);
    witness_state_close(w->state);
    ig_signing_key_free(w->key);
    free(w);
}

static enum ig_status
load_key(struct witness *w, struct ig_err *err)
{
    struct ig_public_key pub;

    if (ig_crypto_init() != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize libsodium");
    if (ig_sha256_check() != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "libcrypto cannot hash SHA-256");
    if (ig_signing_key_load_file(w->cfg->key_path, &w->key, err) != IG_OK)
        return IG_ERR_IO;
    ig_signing_key_public(w->key, &pub);
    if (audit_witness_key_format(w->cfg->name, pub.pk, w->vkey,
                                 sizeof(w->vkey)) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "cannot format the vkey of %s",
                          w->cfg->name);
    w->signer.name = w->cfg->name;
    w->signer.key = w->key;
    return IG_OK;
}

static json_t *
logs_json(const struct witness_config *c)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < c->nlogs; i++)
        /* json_string's reference is stolen by the array */
        (void)json_array_append_new(a, json_string(c->logs[i].origin));
    return a;
}

enum ig_status
witness_start(const struct witness_config *c, struct witness **out,
              struct ig_err *err)
{
    struct witness *w = calloc(1, sizeof(*w));
    struct witness_state_opts so;
    long conns;

    *out = NULL;
    if (w == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    w->cfg = c;
    memset(&so, 0, sizeof(so));
    so.path = c->database;
    if (load_key(w, err) != IG_OK ||
        witness_state_open(&so, &w->state, err) != IG_OK)
        goto fail;
    if (witness_rate_new((double)c->rate, WITNESS_RATE_CLIENTS, &w->rate) !=
        IG_OK) {
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    conns = ig_conns_fit_nofile((long)c->max_connections, FD_RESERVE);
    w->max_connections = (unsigned int)conns;
    if (conns < c->max_connections)
        ig_log("warn", "connections.limited",
               json_pack("{s:I, s:I}", "max_connections", (json_int_t)conns,
                         "wanted", (json_int_t)c->max_connections));
    if (ig_conns_new((double)c->request_timeout_ms, &w->conns, err) != IG_OK)
        goto fail;
    w->mhd = witness_http_start(w, err);
    if (w->mhd == NULL)
        goto fail;
    ig_log("info", "witness.started",
           json_pack("{s:s, s:i, s:s, s:s, s:s, s:o, s:I}", "listen",
                     c->listen_host, "port", (int)w->port, "name", c->name,
                     "vkey", w->vkey, "database", c->database, "logs",
                     logs_json(c), "rate", (json_int_t)c->rate));
    *out = w;
    return IG_OK;
fail:
    witness_free(w);
    return IG_ERR_IO;
}

unsigned short
witness_port(const struct witness *w)
{
    return w->port;
}

void
witness_stop(struct witness *w)
{
    if (w == NULL)
        return;
    witness_free(w); /* MHD_stop_daemon answers what is in flight first */
    ig_log("info", "witness.stopped", NULL);
}
