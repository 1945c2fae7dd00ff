/*
 * pdp_witness.c - the witness client's threads: each signed checkpoint
 * goes to every configured witness, whose cosignature is kept beside it.
 *
 * DESIGN
 * One thread per witness, so that a slow or dead witness delays nobody:
 * not a request (those never wait for a witness at all), not another
 * witness. A thread sleeps on its condition variable until one of:
 *
 *   - the store says a checkpoint was signed and committed (on_checkpoint,
 *     on the store's writer thread: it only records the size and time and
 *     signals, never touching the network or the store);
 *   - start, once, when its witness lacks the latest checkpoint (SQLite:
 *     on PostgreSQL only the sequencer replica signs, and on_checkpoint
 *     fires there only, so a replica that is not the sequencer never
 *     submits);
 *   - retry_ms after a failed attempt. While it fails, new checkpoints
 *     wait for that retry (the backoff holds).
 *
 * An attempt reads the latest checkpoint from the store and, when the
 * witness has not cosigned it, submits it (pdp_witness_submit.c) from the
 * size the witness last cosigned: the witness catches up in one request,
 * whatever it missed. What it cosigned is kept in memory, and taken from
 * the store (store_cosig_latest) at start and before each attempt when
 * the store knows a larger size (PostgreSQL: another replica sequenced
 * the log before this one).
 *
 * The metrics are shown by a process that submits: with SQLite always,
 * with PostgreSQL by a replica once it signed a checkpoint (the
 * sequencer; a replica that never did shows none rather than a lag that
 * is not its to see).
 *
 * The lag metrics: lag_leaves is the latest checkpoint's size less the
 * size the witness cosigned; lag_seconds counts from when the oldest
 * checkpoint the witness lacks was signed, as this process saw it (a ring
 * of the last IG_WITNESS_SEEN_MAX checkpoints signed here, with their
 * ig_time_now; one signed before this process started counts from the
 * start, one older than the ring from its oldest entry): 0 when caught up.
 */
#include "pdp_witness_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_time.h"
#include "pdp.h"
#include "pdp_metrics.h"

static const char *const fail_names[PDP_WFAIL_N] = {
    [PDP_WFAIL_UNREACHABLE] = "unreachable", [PDP_WFAIL_TIMEOUT] = "timeout",
    [PDP_WFAIL_REFUSED] = "refused",         [PDP_WFAIL_CONFLICT] = "conflict",
    [PDP_WFAIL_BAD_ANSWER] = "bad_answer",   [PDP_WFAIL_STORE] = "store",
};

/* ---- the checkpoints seen signed ---- */

static void
seen_add(struct pdp_witnesses *ws, uint64_t size, int64_t at)
{
    size_t last;

    (void)pthread_mutex_lock(&ws->seen_mu);
    last = (ws->seen_head + ws->nseen + IG_WITNESS_SEEN_MAX - 1) %
           IG_WITNESS_SEEN_MAX;
    if (ws->nseen > 0 && ws->seen[last].size >= size) {
        (void)pthread_mutex_unlock(&ws->seen_mu);
        return; /* known (or older): its first time stands */
    }
    if (ws->nseen == IG_WITNESS_SEEN_MAX) {
        ws->seen_head = (ws->seen_head + 1) % IG_WITNESS_SEEN_MAX;
        ws->nseen--;
    }
    last = (ws->seen_head + ws->nseen) % IG_WITNESS_SEEN_MAX;
    ws->seen[last].size = size;
    ws->seen[last].at = at;
    ws->nseen++;
    (void)pthread_mutex_unlock(&ws->seen_mu);
}

/* The latest size seen and when the oldest one above cosigned was seen
   (*since 0: none above). */
static uint64_t
seen_lag(struct pdp_witnesses *ws, uint64_t cosigned, int64_t *since)
{
    uint64_t latest = 0;
    size_t i, k;

    *since = 0;
    (void)pthread_mutex_lock(&ws->seen_mu);
    for (i = 0; i < ws->nseen; i++) {
        k = (ws->seen_head + i) % IG_WITNESS_SEEN_MAX;
        latest = ws->seen[k].size;
        if (*since == 0 && ws->seen[k].size > cosigned)
            *since = ws->seen[k].at;
    }
    (void)pthread_mutex_unlock(&ws->seen_mu);
    return latest;
}

/* ---- the threads ---- */

/* Submit the latest checkpoint if w lacks it: 0 done (or nothing to do),
   -1 failed. */
static int
run_once(struct pdp_witness_one *w)
{
    uint64_t size = 0, known = 0;
    char *note = NULL;
    enum ig_status st;
    int rc = 0;

    st = store_checkpoint_get(w->all->store, 0, &note, &size);
    if (st == IG_ERR_NOTFOUND)
        return 0;
    if (st != IG_OK) {
        pdp_witness_failed(w, PDP_WFAIL_STORE, 0, w->old, 0,
                           "cannot read the latest checkpoint: %s",
                           ig_strerror(st));
        return -1;
    }
    seen_add(w->all, size, ig_time_now());
    /* Another replica may have had it cosigned since (PostgreSQL, when
       the sequencer moved): what the store says counts. */
    if (store_cosig_latest(w->all->store, w->cfg->key.name, &known) == IG_OK &&
        known > atomic_load(&w->cosigned)) {
        atomic_store(&w->cosigned, known);
        w->old = known;
    }
    if (size > atomic_load(&w->cosigned))
        rc = pdp_witness_attempt(w, note, size);
    free(note);
    return rc;
}

static void *
witness_main(void *arg)
{
    struct pdp_witness_one *w = arg;
    double retry_at = 0;
    struct timespec ts;
    int failing = 0;

    (void)pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && (failing || !w->wake)) {
            if (failing && ig_time_mono() >= retry_at)
                break;
            if (failing) {
                ig_time_wait_until(retry_at, &ts); /* cv's clock */
                (void)pthread_cond_timedwait(&w->cv, &w->mu, &ts);
            } else {
                (void)pthread_cond_wait(&w->cv, &w->mu);
            }
        }
        if (w->stop)
            break;
        w->wake = 0;
        (void)pthread_mutex_unlock(&w->mu);
        failing = run_once(w) != 0;
        atomic_store(&w->failing, failing);
        if (failing)
            retry_at = ig_time_mono() + (double)w->cfg->retry_ms / 1000.0;
        (void)pthread_mutex_lock(&w->mu);
    }
    (void)pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void
wake(struct pdp_witness_one *w)
{
    (void)pthread_mutex_lock(&w->mu);
    w->wake = 1;
    (void)pthread_cond_signal(&w->cv);
    (void)pthread_mutex_unlock(&w->mu);
}

void
pdp_witness_on_checkpoint(void *ctx, uint64_t size)
{
    struct pdp_witnesses *ws = ctx;
    size_t i;

    if (ws == NULL)
        return;
    atomic_store(&ws->active, 1);
    seen_add(ws, size, ig_time_now());
    for (i = 0; i < ws->n; i++)
        wake(&ws->w[i]);
}

void
pdp_witness_flush(struct pdp_witnesses *ws, double seconds)
{
    struct timespec tick = {0, 10 * 1000000L};
    double deadline = ig_time_mono() + seconds;
    uint64_t size = 0, latest = 0;
    char *note = NULL;
    size_t i, waiting;

    if (ws == NULL || ws->store == NULL || !atomic_load(&ws->active))
        return;
    /* Sign what the log holds now (on_checkpoint wakes the threads).
       Not IG_OK: nothing new since the last checkpoint, or not this
       replica's to sign - the latest checkpoint is what counts. */
    if (store_audit_sign(ws->store, &size) != IG_OK)
        size = 0;
    if (store_checkpoint_get(ws->store, 0, &note, &latest) != IG_OK)
        return;
    free(note);
    do {
        for (i = 0, waiting = 0; i < ws->n; i++)
            if (atomic_load(&ws->w[i].cosigned) < latest &&
                !atomic_load(&ws->w[i].failing))
                waiting++;
        if (waiting == 0)
            return;
        (void)nanosleep(&tick, NULL);
    } while (ig_time_mono() < deadline);
    pdp_log("warning", "witness.stop_unwitnessed",
            json_pack("{s:I, s:I}", "size", (json_int_t)latest, "witnesses",
                      (json_int_t)waiting));
}

/* ---- start and stop ---- */

/* A witness whose key is the log's own would cosign whatever the log
   signs: refused (err names it). */
static enum ig_status
check_not_the_log(const struct pdp_config *c,
                  const struct ig_signing_key *audit_key, struct ig_err *err)
{
    struct ig_public_key pub;
    size_t i;

    if (audit_key == NULL)
        return IG_OK;
    ig_signing_key_public(audit_key, &pub);
    for (i = 0; i < c->nwitnesses; i++)
        if (memcmp(pub.pk, c->witnesses[i].key.pk, sizeof(pub.pk)) == 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "[witness %s]: its key is the audit key: a "
                              "log cannot witness itself",
                              c->witnesses[i].id);
    return IG_OK;
}

enum ig_status
pdp_witness_new(const struct pdp_config *c,
                const struct ig_signing_key *audit_key,
                struct pdp_witnesses **out, struct ig_err *err)
{
    struct pdp_witnesses *ws;
    pthread_condattr_t ca;
    enum ig_status st;
    size_t i;

    *out = NULL;
    if (c->nwitnesses == 0)
        return IG_OK;
    if ((st = check_not_the_log(c, audit_key, err)) != IG_OK)
        return st;
    if ((ws = calloc(1, sizeof(*ws))) == NULL ||
        (ws->w = calloc(c->nwitnesses, sizeof(*ws->w))) == NULL) {
        free(ws);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    ws->cfg = c;
    ws->n = c->nwitnesses;
    (void)pthread_mutex_init(&ws->seen_mu, NULL);
    (void)pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    for (i = 0; i < ws->n; i++) {
        ws->w[i].all = ws;
        ws->w[i].cfg = &c->witnesses[i];
        ws->w[i].last_fail = -1;
        (void)pthread_mutex_init(&ws->w[i].mu, NULL);
        (void)pthread_cond_init(&ws->w[i].cv, &ca);
    }
    (void)pthread_condattr_destroy(&ca);
    *out = ws;
    return IG_OK;
}

/* What w cosigned, from the store; its thread, started. */
static enum ig_status
start_one(struct pdp_witness_one *w, int at_start, uint64_t latest,
          struct ig_err *err)
{
    uint64_t cosigned = 0;

    if (store_cosig_latest(w->all->store, w->cfg->key.name, &cosigned) != IG_OK)
        return ig_err_set(err, IG_ERR_IO,
                          "[witness %s]: cannot read what it cosigned",
                          w->cfg->id);
    atomic_store(&w->cosigned, cosigned);
    w->old = cosigned;
    w->wake = at_start && latest > cosigned;
    if ((w->curl = curl_easy_init()) == NULL)
        return ig_err_set(err, IG_ERR_IO,
                          "[witness %s]: cannot initialize libcurl",
                          w->cfg->id);
    if (pthread_create(&w->thread, NULL, witness_main, w) != 0)
        return ig_err_set(err, IG_ERR_IO, "[witness %s]: cannot start",
                          w->cfg->id);
    w->started = 1;
    pdp_log("info", "witness.started",
            json_pack("{s:s, s:s, s:s, s:I, s:I}", "witness", w->cfg->id, "url",
                      w->cfg->url, "key", w->cfg->vkey, "cosigned_size",
                      (json_int_t)cosigned, "latest_size", (json_int_t)latest));
    return IG_OK;
}

enum ig_status
pdp_witness_start(struct pdp_witnesses *ws, struct store *s, int at_start,
                  struct ig_err *err)
{
    uint64_t latest = 0;
    enum ig_status st;
    char *note = NULL;
    size_t i;

    if (ws == NULL)
        return IG_OK;
    ws->store = s;
    st = store_checkpoint_get(s, 0, &note, &latest);
    free(note);
    if (st != IG_OK && st != IG_ERR_NOTFOUND)
        return ig_err_set(err, IG_ERR_IO,
                          "witnesses: cannot read the latest checkpoint");
    if (st == IG_OK)
        seen_add(ws, latest, ig_time_now());
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return ig_err_set(err, IG_ERR_IO, "witnesses: cannot start libcurl");
    ws->curl_ready = 1;
    if (at_start)
        atomic_store(&ws->active, 1);
    for (i = 0; i < ws->n; i++)
        if ((st = start_one(&ws->w[i], at_start, latest, err)) != IG_OK)
            return st; /* the caller stops and frees */
    return IG_OK;
}

void
pdp_witness_stop(struct pdp_witnesses *ws)
{
    size_t i;

    if (ws == NULL)
        return;
    atomic_store(&ws->stopping, 1);
    for (i = 0; i < ws->n; i++) {
        (void)pthread_mutex_lock(&ws->w[i].mu);
        ws->w[i].stop = 1;
        (void)pthread_cond_broadcast(&ws->w[i].cv);
        (void)pthread_mutex_unlock(&ws->w[i].mu);
    }
    for (i = 0; i < ws->n; i++) {
        if (ws->w[i].started)
            (void)pthread_join(ws->w[i].thread, NULL);
        ws->w[i].started = 0;
    }
}

void
pdp_witness_free(struct pdp_witnesses *ws)
{
    size_t i;

    if (ws == NULL)
        return;
    pdp_witness_stop(ws);
    for (i = 0; i < ws->n; i++) {
        if (ws->w[i].curl != NULL)
            curl_easy_cleanup(ws->w[i].curl);
        (void)pthread_cond_destroy(&ws->w[i].cv);
        (void)pthread_mutex_destroy(&ws->w[i].mu);
    }
    if (ws->curl_ready)
        curl_global_cleanup();
    (void)pthread_mutex_destroy(&ws->seen_mu);
    free(ws->w);
    free(ws);
}

/* ---- /metrics ---- */

static enum ig_status
family(struct ig_buf *b, const char *name, const char *type, const char *help)
{
    return pdp_metrics_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
                            type);
}

/* The gauges of every witness. */
static enum ig_status
gauges(struct pdp_witnesses *ws, struct ig_buf *b)
{
    uint64_t cos[IG_WITNESS_MAX], lag[IG_WITNESS_MAX];
    int64_t secs[IG_WITNESS_MAX], since, now = ig_time_now();
    enum ig_status st;
    uint64_t latest;
    size_t i;

    IG_ASSERT(ws->n <= IG_WITNESS_MAX); /* the config's limit */
    for (i = 0; i < ws->n; i++) {
        cos[i] = atomic_load(&ws->w[i].cosigned);
        latest = seen_lag(ws, cos[i], &since);
        lag[i] = latest > cos[i] ? latest - cos[i] : 0;
        secs[i] = since != 0 && now > since ? now - since : 0;
    }
    st = family(b, "intentgate_witness_cosigned_size", "gauge",
                "Largest checkpoint tree size the witness cosigned.");
    for (i = 0; st == IG_OK && i < ws->n; i++)
        st = pdp_metrics_addf(b,
                              "intentgate_witness_cosigned_size{witness=\"%s\"}"
                              " %llu\n",
                              ws->w[i].cfg->id, (unsigned long long)cos[i]);
    if (st == IG_OK)
        st = family(b, "intentgate_witness_lag_leaves", "gauge",
                    "Leaves of the latest checkpoint the witness has not "
                    "cosigned.");
    for (i = 0; st == IG_OK && i < ws->n; i++)
        st = pdp_metrics_addf(b,
                              "intentgate_witness_lag_leaves{witness=\"%s\"} "
                              "%llu\n",
                              ws->w[i].cfg->id, (unsigned long long)lag[i]);
    if (st == IG_OK)
        st = family(b, "intentgate_witness_lag_seconds", "gauge",
                    "Seconds since the oldest checkpoint the witness has not "
                    "cosigned was signed (0: caught up).");
    for (i = 0; st == IG_OK && i < ws->n; i++)
        st = pdp_metrics_addf(
            b, "intentgate_witness_lag_seconds{witness=\"%s\"} %lld\n",
            ws->w[i].cfg->id, (long long)secs[i]);
    return st;
}

enum ig_status
pdp_witness_metrics(void *ctx, struct ig_buf *out)
{
    struct pdp_witnesses *ws = ctx;
    enum ig_status st;
    size_t i, r;

    if (ws == NULL || !atomic_load(&ws->active))
        return IG_OK; /* a PostgreSQL replica that never signed */
    st = gauges(ws, out);
    if (st == IG_OK)
        st = family(out, "intentgate_witness_failures_total", "counter",
                    "Failed attempts to have a checkpoint cosigned, by "
                    "reason.");
    for (i = 0; st == IG_OK && i < ws->n; i++)
        for (r = 0; st == IG_OK && r < PDP_WFAIL_N; r++)
            st = pdp_metrics_addf(
                out,
                "intentgate_witness_failures_total{witness=\"%s\","
                "reason=\"%s\"} %llu\n",
                ws->w[i].cfg->id, fail_names[r],
                (unsigned long long)atomic_load(&ws->w[i].fails[r]));
    return st;
}
