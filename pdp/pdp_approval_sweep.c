/*
 * pdp_approval_sweep.c - the approval machinery's lifecycle and the expiry
 * sweeper: a thread that, once a second, resolves every request whose
 * expiry has passed as EXPIRED and its intent as BLOCK APPROVAL_EXPIRED
 * (one transaction each, under the store's vote lock - across replicas -
 * so a vote racing the expiry either lands first or is refused; every
 * replica sweeps, and the one that comes second finds it resolved), and
 * tells Slack.
 */
#include "pdp_approval.h"

#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "appr_device.h"
#include "ig_limits.h"
#include "pdp_approval_int.h"
#include "pdp_int.h"

static const char *
jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ---- expiry ---- */

/* Resolve one expired request as BLOCK APPROVAL_EXPIRED. Under the vote
   lock. */
static void
expire_one(struct pdp_server *s, const char *intent_id, int64_t now)
{
    char when[IG_TIME_STRLEN + 1], did[IG_UUID_STRLEN + 1];
    json_t *rec = NULL, *ev[2];
    char *text[2] = {NULL, NULL};
    const json_t *ap;
    struct store_vote_rec r;
    const char *aid;

    if (store_get_intent(s->store, intent_id, &rec) != IG_OK)
        return;
    ap = json_object_get(rec, "approval");
    aid = jstr(ap, "approval_id");
    if (aid == NULL || json_object_get(ap, "resolution") != NULL ||
        json_integer_value(json_object_get(ap, "expires_at")) > now ||
        ig_time_format(now, when) != IG_OK) {
        json_decref(rec);
        return;
    }
    ig_uuid4(did);
    memset(&r, 0, sizeof(r));
    r.intent_id = intent_id;
    r.at = now;
    r.result = "EXPIRED";
    r.decision_id = did;
    r.decision = "BLOCK";
    r.reasons = "[\"APPROVAL_EXPIRED\"]";
    r.message = "no approval arrived before the request expired";
    r.policy_revision = pdp_approval_revision(rec);
    ev[0] = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "approval.resolved",
                      "time", when, "approval_id", aid, "intent_id", intent_id,
                      "result", "EXPIRED");
    ev[1] = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[s], s:s, s:s, s:s}", "type",
                      "intent.decided", "time", when, "intent_id", intent_id,
                      "decision_id", did, "decision", "BLOCK", "reasons",
                      "APPROVAL_EXPIRED", "message", r.message,
                      "policy_revision", r.policy_revision, "approval_id", aid);
    text[0] = ev[0] != NULL ? pdp_json_text(ev[0]) : NULL;
    text[1] = ev[1] != NULL ? pdp_json_text(ev[1]) : NULL;
    r.events = (const char *const *)text;
    r.nevents = 2;
    if (text[0] == NULL || text[1] == NULL ||
        store_put_vote(s->store, &r) != IG_OK)
        pdp_log("error", "approval.expire_failed",
                json_pack("{s:s}", "intent_id", intent_id));
    else if (s->approval_changed != NULL)
        s->approval_changed(s, intent_id);
    json_decref(ev[0]);
    json_decref(ev[1]);
    free(text[0]);
    free(text[1]);
    json_decref(rec);
}

static void
sweep(struct pdp_server *s)
{
    int64_t now = ig_time_now();
    json_t *open = NULL, *x;
    size_t i;

    if (store_open_approvals(s->store, now, &open) != IG_OK)
        return;
    json_array_foreach(open, i, x)
    {
        if (store_vote_lock(s->store) != IG_OK) {
            pdp_log("error", "approval.expire_failed",
                    json_pack("{s:s?, s:s}", "intent_id", jstr(x, "intent_id"),
                              "reason", "the vote lock could not be taken"));
            break; /* the next sweep tries again */
        }
        expire_one(s, jstr(x, "intent_id"), now);
        store_vote_unlock(s->store);
    }
    json_decref(open);
}

static void *
sweeper_main(void *arg)
{
    struct pdp_server *s = arg;
    struct pdp_approvals *a = s->approvals;
    struct timespec ts;

    (void)pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        (void)pthread_mutex_unlock(&a->mu);
        sweep(s);
        (void)pthread_mutex_lock(&a->mu);
        ig_time_wait_until(ig_time_mono() + IG_APPROVAL_SWEEP_INTERVAL,
                           &ts); /* cv's clock */
        if (!a->stop)
            (void)pthread_cond_timedwait(&a->cv, &a->mu, &ts);
    }
    (void)pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* The device tokens' MAC key, derived from the grant signing key so that
   tokens outlive a restart (as a backoff an attacker keeps up would):
   BLAKE2b of the Ed25519 signature of a fixed text no other signature
   of this key can be (grants sign PASETO's PAE, which starts with a
   little-endian count). Deterministic, and unknown without the key. */
static void
device_key(struct pdp_server *s, unsigned char out[APPR_DEVICE_KEY_BYTES])
{
    static const char text[] = "intentgate approver device key v1";
    unsigned char sig[64];

    ig_signing_key_sign(s->key, sig, (const unsigned char *)text,
                        sizeof(text) - 1);
    crypto_generichash(out, APPR_DEVICE_KEY_BYTES, sig, sizeof(sig), NULL, 0);
    sodium_memzero(sig, sizeof(sig));
}

enum ig_status
pdp_approval_start(struct pdp_server *s, struct ig_err *err)
{
    struct pdp_approvals *a = calloc(1, sizeof(*a));
    pthread_condattr_t ca;

    if (a == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    (void)pthread_mutex_init(&a->mu, NULL);
    /* The sweeper sleeps on the monotonic clock: a wall clock stepped
       back must not hold expiries for as long. */
    (void)pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&a->cv, &ca);
    (void)pthread_condattr_destroy(&ca);
    s->approvals = a;
    a->device_key = sodium_malloc(APPR_DEVICE_KEY_BYTES);
    if (a->device_key == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    device_key(s, a->device_key);
    if (pthread_create(&a->sweeper, NULL, sweeper_main, s) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot start the approval sweeper");
    a->started = 1;
    return IG_OK;
}

void
pdp_approval_stop(struct pdp_server *s)
{
    struct pdp_approvals *a = s->approvals;

    if (a == NULL)
        return;
    if (a->started) {
        (void)pthread_mutex_lock(&a->mu);
        a->stop = 1;
        (void)pthread_cond_signal(&a->cv);
        (void)pthread_mutex_unlock(&a->mu);
        (void)pthread_join(a->sweeper, NULL);
    }
    sodium_free(a->device_key); /* wipes it */
    (void)pthread_mutex_destroy(&a->mu);
    (void)pthread_cond_destroy(&a->cv);
    free(a);
    s->approvals = NULL;
}
