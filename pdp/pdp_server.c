/*
 * pdp_server.c - start and stop the PDP: store, keys, policies, long-poll
 * registry and the HTTP daemon, in that order; stopped in reverse, with
 * every suspended connection answered first.
 */
#include "pdp_approval.h"
#include "pdp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ig_hash.h"
#include "ig_limits.h"
#include "pdp_shadow.h"
#include "pdp_witness.h"

static void
observe_commit(void *ctx, double seconds, size_t writes)
{
    struct pdp_metrics *m = ctx;

    pdp_hist_observe(&m->commit_seconds, seconds);
    atomic_fetch_add(&m->commit_writes, writes);
}

static enum ig_status
load_keys(struct pdp_server *s, struct ig_err *err)
{
    const struct pdp_config *c = s->cfg;
    struct ig_public_key pub;
    size_t i;

    if (ig_crypto_init() != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize libsodium");
    if (ig_sha256_check() != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "libcrypto cannot hash SHA-256");
    if (ig_signing_key_load_file(c->signing_key, &s->key, err) != IG_OK)
        return IG_ERR_IO;
    if (ig_keyring_new(&s->keyring) != IG_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    ig_signing_key_public(s->key, &pub);
    if (ig_keyring_add(s->keyring, &pub) != IG_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    for (i = 0; i < c->npublic_keys; i++) {
        if (ig_public_key_load_file(c->public_keys[i], &pub, err) != IG_OK)
            return IG_ERR_IO;
        if (ig_keyring_find(s->keyring, pub.kid, strlen(pub.kid)) == NULL &&
            ig_keyring_add(s->keyring, &pub) != IG_OK)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    return IG_OK;
}

/* The refusal table's writer: its aggregated events go to the store
   (called on its flusher thread, and at stop). */
static enum ig_status
write_refusals(void *ctx, const char *const *events, size_t n)
{
    return store_put_events(ctx, events, n);
}

static enum ig_status
start_refusals(struct pdp_server *s, struct ig_err *err)
{
    struct pdp_refusals_opts o;

    memset(&o, 0, sizeof(o));
    o.interval = s->cfg->refusal_log_interval;
    o.max_keys = IG_REFUSAL_KEYS_MAX;
    o.write = write_refusals;
    o.write_ctx = s->store;
    o.log = pdp_log;
    s->refusals = pdp_refusals_new(&o);
    if (s->refusals == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (pdp_refusals_start(s->refusals) != IG_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot start the refusal writer");
    if (pdp_delays_new(&s->delays) != IG_OK)
        return ig_err_set(err, IG_ERR_IO, "cannot start the login delays");
    return IG_OK;
}

static void
server_free(struct pdp_server *s)
{
    if (s->mhd != NULL)
        MHD_stop_daemon(s->mhd);
    ig_conns_free(s->conns);
    pdp_approval_stop(s);
    pdp_shadow_stop(s); /* its last events, while the store takes them */
    pdp_slack_stop(s);
    pdp_delays_free(s->delays);
    /* The last aggregated refusals, while the store still takes them. */
    pdp_refusals_free(s->refusals);
    /* The last checkpoint, signed now and sent to the witnesses (for a
       moment: pdp_witness_flush); then their threads, which read the
       store, stop before it closes. */
    pdp_witness_flush(s->witnesses, IG_WITNESS_STOP_FLUSH_MS / 1000.0);
    pdp_witness_stop(s->witnesses);
    store_close(s->store); /* signs the last audit checkpoint */
    pdp_witness_free(s->witnesses);
    pdp_audit_stop(s);
    pdp_waiters_free(s->waiters);
    pdp_policies_release(s);
    ig_signing_key_free(s->key);
    ig_keyring_free(s->keyring);
    free(s);
}

enum ig_status
pdp_server_start(const struct pdp_config *c, struct pdp_server **out,
                 struct ig_err *err)
{
    struct pdp_server *s = calloc(1, sizeof(*s));
    struct store_opts so;
    char db[512];

    *out = NULL;
    if (s == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    s->cfg = c;
    s->approval_changed = pdp_slack_changed; /* a no-op without [slack] */
    if (pdp_waiters_new(s, &s->waiters) != IG_OK) {
        free(s);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    if (load_keys(s, err) != IG_OK || pdp_policies_init(s, err) != IG_OK ||
        pdp_shadow_start(s, err) != IG_OK || pdp_audit_start(s, err) != IG_OK)
        goto fail;
    if (pdp_witness_new(c, s->audit_key, &s->witnesses, err) != IG_OK)
        goto fail;
    memset(&so, 0, sizeof(so));
    so.path = c->database;
    so.synchronous_full = c->synchronous_full;
    so.on_commit = pdp_waiters_notify;
    so.on_commit_ctx = s->waiters;
    so.audit_name = c->audit_name;
    so.audit_key = s->audit_key;
    so.checkpoint_every = (uint64_t)c->checkpoint_every;
    so.checkpoint_interval = c->checkpoint_interval;
    so.audit_anchor = c->audit_anchor;
    so.anchor_adopt = c->audit_anchor_adopt;
    so.log = pdp_log;
    so.max_queue = (size_t)c->max_write_queue;
    so.on_checkpoint = pdp_witness_on_checkpoint; /* a no-op when NULL */
    so.on_checkpoint_ctx = s->witnesses;
    if (store_open(&so, &s->store, err) != IG_OK)
        goto fail;
    store_set_observer(s->store, observe_commit, &s->metrics);
    pdp_audit_config_loaded(s);
    if (start_refusals(s, err) != IG_OK)
        goto fail;
    /* On PostgreSQL only the sequencer signs, and on_checkpoint says when:
       a replica does not submit at start (pdp_witness.h). */
    if (pdp_witness_start(s->witnesses, s->store,
                          !store_is_postgres(c->database), err) != IG_OK)
        goto fail;
    s->metrics.more = pdp_witness_metrics;
    s->metrics.more_ctx = s->witnesses;
    if (pdp_slack_start(s, err) != IG_OK || pdp_approval_start(s, err) != IG_OK)
        goto fail;
    s->max_connections =
        ig_conns_fit_nofile((long)c->max_connections, IG_PDP_FD_RESERVE);
    if (s->max_connections < c->max_connections)
        pdp_log("warn", "connections.limited",
                json_pack("{s:I, s:I}", "max_connections",
                          (json_int_t)s->max_connections, "wanted",
                          (json_int_t)c->max_connections));
    if (ig_conns_new((double)c->request_timeout_ms, &s->conns, err) != IG_OK)
        goto fail;
    s->mhd = pdp_route_start(s, err);
    if (s->mhd == NULL)
        goto fail;
    store_url_for_log(c->database, db, sizeof(db));
    pdp_log("info", "server.started",
            json_pack(
                "{s:s, s:i, s:s, s:s, s:i, s:s, s:s?, s:s?}", "listen",
                c->listen_host, "port", (int)s->port, "database", db,
                "policy_revision", pol_bundle_revision(s->bundle), "threads",
                c->threads, "audit_name", c->audit_name, "audit_key",
                s->audit_key != NULL ? s->audit_verifier : NULL, "audit_anchor",
                s->audit_key != NULL ? c->audit_anchor : NULL));
    *out = s;
    return IG_OK;
fail:
    server_free(s);
    return err != NULL && err->msg[0] != '\0' ? IG_ERR_INVALID : IG_ERR_IO;
}

unsigned short
pdp_server_port(const struct pdp_server *s)
{
    return s->port;
}

void
pdp_server_stop(struct pdp_server *s)
{
    struct timespec ts = {0, IG_PDP_STOP_POLL_MS * 1000000L};
    int i;

    if (s == NULL)
        return;
    /* From here new connections are refused (on_accept in pdp_route.c) and
       requests that reach routing are answered 503. */
    atomic_store(&s->stopping, 1);
    pdp_waiters_resume_all(s->waiters);
    pdp_delays_resume_all(s->delays);
    /* Every request routed before answers: store writes finish and resume
       their connections while the daemon still runs. No limit - a reply
       promised after a commit must not be cut - but say what we wait for. */
    for (i = 1; atomic_load(&s->inflight) > 0; i++) {
        (void)nanosleep(&ts, NULL);
        if (i % (IG_PDP_STOP_LOG_MS / IG_PDP_STOP_POLL_MS) == 0)
            pdp_log(
                "warn", "server.stop_waiting",
                json_pack("{s:i}", "requests", (int)atomic_load(&s->inflight)));
    }
    server_free(s); /* stops the daemon; the store signs the last checkpoint */
    pdp_log("info", "server.stopped", NULL);
}
