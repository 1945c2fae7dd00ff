/*
 * pdp_refusals.c - the refusal table behind pdp_refusals.h.
 *
 * DESIGN
 * The keys live in a fixed array of max_keys entries, found through an
 * open-addressing index of twice as many slots (linear probing; entries
 * are only ever removed all at once, when written, so no tombstones).
 * Past max_keys a refusal goes to its kind's overflow entry. Everything
 * is allocated once, at creation: a flood changes counts, never sizes.
 *
 * A write takes the whole table under the lock (copies the entries out,
 * clears the index), builds the events without it, and appends them in
 * one call. If the append fails the copies are counted back in - merged
 * with whatever arrived meanwhile - and the next tick tries again. One
 * write runs at a time (write_mu), so the flusher thread and the last
 * write at stop never interleave.
 *
 * The flusher thread wakes once a second (monotonic clock) and calls
 * pdp_refusals_tick, which asks the injectable clock whether the interval
 * since the last write has passed. A table idle for a whole interval
 * writes a new refusal at the next tick; after that, refusals wait for
 * the interval - at most one event per key per interval either way.
 */
#include "pdp_refusals.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_canon.h"
#include "ig_limits.h"
#include "ig_time.h"
#include "pdp_addr.h"
#include "pdp_metrics.h"

struct entry {
    uint32_t hash;
    int kind;
    char client[PDP_ADDR_STRLEN];
    char id[IG_ID_MAX + 1], role[IG_ROLE_NAME_MAX + 1];
    char reason[IG_ERROR_CODE_MAX + 1];
    uint64_t count; /* 0: unused (an overflow entry) */
    int64_t first, last;
    int overflow; /* a kind's overflow entry, taken out for writing */
};

struct pdp_refusals {
    struct pdp_refusals_opts o;
    pthread_mutex_t mu;
    struct entry *v; /* max_keys */
    size_t n;
    uint32_t *slot; /* nslots (a power of two); v index + 1, 0: empty */
    size_t nslots;
    struct entry over[PDP_REFUSED_KINDS];
    int64_t last_write;

    pthread_mutex_t write_mu; /* one write at a time */

    atomic_uint_fast64_t noted[PDP_REFUSED_KINDS];
    atomic_uint_fast64_t events, overflowed;
    atomic_uint_fast64_t throttled[PDP_THROTTLES];

    pthread_t flusher;
    pthread_cond_t cv; /* monotonic */
    int running, stop;
};

static const char *const kind_label[PDP_REFUSED_KINDS] = {
    "auth", "login", "grant", "outcome", "slack"};
static const char *const kind_type[PDP_REFUSED_KINDS] = {
    "auth.refused", "login.refused", "grant.refused", "outcome.refused",
    "slack.refused"};

const char *
pdp_refusal_type(enum pdp_refusal_kind kind)
{
    return kind < PDP_REFUSED_KINDS ? kind_type[kind] : "?";
}

static int64_t
now_of(const struct pdp_refusals *t)
{
    return t->o.clock != NULL ? t->o.clock(t->o.clock_ctx) : ig_time_now();
}

struct pdp_refusals *
pdp_refusals_new(const struct pdp_refusals_opts *o)
{
    struct pdp_refusals *t = calloc(1, sizeof(*t));
    pthread_condattr_t ca;

    if (t == NULL || o->max_keys == 0 || o->max_keys > (1u << 20)) {
        free(t);
        return NULL;
    }
    t->o = *o;
    if (t->o.interval < 1)
        t->o.interval = 1;
    t->nslots = 1;
    while (t->nslots < 2 * o->max_keys)
        t->nslots <<= 1;
    t->v = calloc(o->max_keys, sizeof(*t->v));
    t->slot = calloc(t->nslots, sizeof(*t->slot));
    if (t->v == NULL || t->slot == NULL) {
        free(t->v);
        free(t->slot);
        free(t);
        return NULL;
    }
    (void)pthread_mutex_init(&t->mu, NULL);
    (void)pthread_mutex_init(&t->write_mu, NULL);
    (void)pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&t->cv, &ca);
    (void)pthread_condattr_destroy(&ca);
    t->last_write = now_of(t);
    return t;
}

/* ---- counting ---- */

/* FNV-1a over s, continuing from h, with a 0 byte after s. */
static uint32_t
fnv(uint32_t h, const char *s)
{
    do {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    } while (*s++ != '\0');
    return h;
}

static void
key_of(struct entry *k, int kind, const char *client, const char *id,
       const char *role, const char *reason)
{
    memset(k, 0, sizeof(*k));
    k->kind = kind;
    (void)snprintf(k->client, sizeof(k->client), "%s", client);
    (void)snprintf(k->id, sizeof(k->id), "%s", id != NULL ? id : "");
    (void)snprintf(k->role, sizeof(k->role), "%s", role != NULL ? role : "");
    (void)snprintf(k->reason, sizeof(k->reason), "%s", reason);
    k->hash = fnv(
        fnv(fnv(fnv(2166136261u ^ (uint32_t)kind, k->client), k->id), k->role),
        k->reason);
}

static int
same_key(const struct entry *a, const struct entry *b)
{
    return a->hash == b->hash && a->kind == b->kind &&
           strcmp(a->client, b->client) == 0 && strcmp(a->id, b->id) == 0 &&
           strcmp(a->role, b->role) == 0 && strcmp(a->reason, b->reason) == 0;
}

static void
bump(struct entry *e, uint64_t count, int64_t first, int64_t last)
{
    if (e->count == 0 || first < e->first)
        e->first = first;
    if (e->count == 0 || last > e->last)
        e->last = last;
    e->count += count;
}

/* The entry of key k (t->mu held): found, new, or NULL when every key is
   taken. */
static struct entry *
entry_of(struct pdp_refusals *t, const struct entry *k)
{
    size_t i = k->hash & (t->nslots - 1);

    while (t->slot[i] != 0) {
        if (same_key(&t->v[t->slot[i] - 1], k))
            return &t->v[t->slot[i] - 1];
        i = (i + 1) & (t->nslots - 1);
    }
    if (t->n >= t->o.max_keys)
        return NULL;
    t->v[t->n] = *k;
    t->v[t->n].count = 0;
    t->slot[i] = (uint32_t)++t->n;
    return &t->v[t->n - 1];
}

/* Count refusals under e's key, or in its kind's overflow entry (t->mu
   held). fresh: new refusals (the overflow metric counts them), not ones
   counted back after a failed write. */
static void
count_in(struct pdp_refusals *t, const struct entry *e, int fresh)
{
    struct entry *to = e->overflow ? NULL : entry_of(t, e);

    if (to == NULL) {
        to = &t->over[e->kind];
        if (fresh)
            atomic_fetch_add(&t->overflowed, e->count);
    }
    bump(to, e->count, e->first, e->last);
}

void
pdp_refusals_note(struct pdp_refusals *t, enum pdp_refusal_kind kind,
                  const char *client, const char *principal_id,
                  const char *principal_role, const char *reason)
{
    struct entry k;
    int64_t now;

    if (t == NULL || kind >= PDP_REFUSED_KINDS)
        return;
    key_of(&k, (int)kind, client != NULL ? client : "unknown", principal_id,
           principal_role, reason != NULL ? reason : "?");
    now = now_of(t);
    k.count = 1;
    k.first = k.last = now;
    (void)pthread_mutex_lock(&t->mu);
    count_in(t, &k, 1);
    (void)pthread_mutex_unlock(&t->mu);
    atomic_fetch_add(&t->noted[kind], 1);
}

void
pdp_refusals_throttled(struct pdp_refusals *t, enum pdp_throttle what)
{
    if (t != NULL && what < PDP_THROTTLES)
        atomic_fetch_add(&t->throttled[what], 1);
}

/* ---- writing ---- */

/* Move every counted entry out of the table into a new array (t->mu
   held). NULL with *n 0 when there is none (or out of memory: then the
   counts stay). */
static struct entry *
take_all(struct pdp_refusals *t, size_t *n)
{
    struct entry *out;
    size_t i, m = t->n;

    for (i = 0; i < PDP_REFUSED_KINDS; i++)
        m += t->over[i].count > 0;
    *n = 0;
    if (m == 0 || (out = malloc(m * sizeof(*out))) == NULL)
        return NULL;
    memcpy(out, t->v, t->n * sizeof(*out));
    *n = t->n;
    for (i = 0; i < PDP_REFUSED_KINDS; i++) {
        if (t->over[i].count == 0)
            continue;
        out[*n] = t->over[i];
        out[*n].kind = (int)i;
        out[*n].overflow = 1;
        (*n)++;
        memset(&t->over[i], 0, sizeof(t->over[i]));
    }
    t->n = 0;
    memset(t->slot, 0, t->nslots * sizeof(*t->slot));
    return out;
}

/* The event of entry e written at now, as canonical JSON (malloc'd), or
   NULL on out of memory. */
static char *
event_text(const struct entry *e, int64_t now)
{
    int overflow = e->overflow;
    char when[IG_TIME_STRLEN + 1], first[IG_TIME_STRLEN + 1],
        last[IG_TIME_STRLEN + 1];
    struct ig_buf b;
    json_t *ev;
    char *text = NULL;

    if (ig_time_format(now, when) != IG_OK ||
        ig_time_format(e->first, first) != IG_OK ||
        ig_time_format(e->last, last) != IG_OK)
        when[0] = first[0] = last[0] = '\0';
    ev = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s}", "type",
                   kind_type[e->kind], "time", when, "client",
                   overflow ? "*" : e->client, "reason",
                   overflow ? "*" : e->reason, "count", (json_int_t)e->count,
                   "first", first, "last", last);
    /* json_object_set_new steals the value; an event missing a field is
       not written (NULL: the caller logs it unwritten). */
    if (ev != NULL && !overflow && e->id[0] != '\0' &&
        json_object_set_new(ev, "principal",
                            json_pack("{s:s, s:s}", "id", e->id, "role",
                                      e->role[0] ? e->role : "unknown")) != 0)
        goto fail;
    if (ev != NULL && overflow &&
        json_object_set_new(ev, "overflow", json_true()) != 0)
        goto fail;
    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (ev != NULL && ig_canon_write(ev, &b, NULL) == IG_OK)
        text = ig_buf_take(&b, NULL);
    ig_buf_release(&b);
fail:
    json_decref(ev);
    return text;
}

/* Write what is counted; *wrote gets the number of events. */
static enum ig_status
write_all(struct pdp_refusals *t, size_t *wrote)
{
    struct entry *batch;
    char **texts = NULL;
    size_t n, i, made = 0;
    int64_t now = now_of(t);
    enum ig_status st = IG_ERR_NOMEM;

    *wrote = 0;
    (void)pthread_mutex_lock(&t->write_mu);
    (void)pthread_mutex_lock(&t->mu);
    batch = take_all(t, &n);
    (void)pthread_mutex_unlock(&t->mu);
    if (batch == NULL) {
        (void)pthread_mutex_unlock(&t->write_mu);
        return IG_OK;
    }
    texts = calloc(n, sizeof(*texts));
    for (i = 0; texts != NULL && i < n; i++, made++)
        if ((texts[i] = event_text(&batch[i], now)) == NULL)
            break;
    if (made == n)
        st = t->o.write(t->o.write_ctx, (const char *const *)texts, n);
    if (st == IG_OK) {
        atomic_fetch_add(&t->events, n);
        *wrote = n;
    } else {
        (void)pthread_mutex_lock(&t->mu);
        for (i = 0; i < n; i++)
            count_in(t, &batch[i], 0);
        (void)pthread_mutex_unlock(&t->mu);
    }
    for (i = 0; texts != NULL && i < made; i++)
        free(texts[i]);
    free(texts);
    free(batch);
    (void)pthread_mutex_unlock(&t->write_mu);
    return st;
}

enum ig_status
pdp_refusals_flush(struct pdp_refusals *t)
{
    size_t wrote;
    enum ig_status st = write_all(t, &wrote);

    if (st == IG_OK && wrote > 0) {
        (void)pthread_mutex_lock(&t->mu);
        t->last_write = now_of(t);
        (void)pthread_mutex_unlock(&t->mu);
    }
    return st;
}

int
pdp_refusals_tick(struct pdp_refusals *t)
{
    int64_t now = now_of(t);
    size_t wrote;
    int due;

    (void)pthread_mutex_lock(&t->mu);
    due = now - t->last_write >= t->o.interval || now < t->last_write;
    (void)pthread_mutex_unlock(&t->mu);
    if (!due)
        return 0;
    if (write_all(t, &wrote) != IG_OK)
        return -1;
    if (wrote == 0)
        return 0;
    (void)pthread_mutex_lock(&t->mu);
    t->last_write = now;
    (void)pthread_mutex_unlock(&t->mu);
    return 1;
}

/* ---- the flusher thread ---- */

static void *
flusher_main(void *arg)
{
    struct pdp_refusals *t = arg;
    struct timespec ts;

    (void)pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        ig_time_wait_until(ig_time_mono() + 1.0, &ts);
        (void)pthread_cond_timedwait(&t->cv, &t->mu, &ts);
        if (t->stop)
            break;
        (void)pthread_mutex_unlock(&t->mu);
        (void)pdp_refusals_tick(t);
        (void)pthread_mutex_lock(&t->mu);
    }
    (void)pthread_mutex_unlock(&t->mu);
    return NULL;
}

enum ig_status
pdp_refusals_start(struct pdp_refusals *t)
{
    if (pthread_create(&t->flusher, NULL, flusher_main, t) != 0)
        return IG_ERR_IO;
    t->running = 1;
    return IG_OK;
}

/* The last write failed: put the counts in the operator's log. */
static void
log_unwritten(struct pdp_refusals *t)
{
    json_t *left = json_array();
    struct entry *batch;
    size_t n, i, lost = 0;
    char *text;

    (void)pthread_mutex_lock(&t->mu);
    batch = take_all(t, &n);
    (void)pthread_mutex_unlock(&t->mu);
    for (i = 0; i < n; i++) {
        text = event_text(&batch[i], now_of(t));
        /* json_array_append_new steals the loaded value. An event that
           cannot be shown is counted as lost: the line never looks
           complete when it is not. */
        if (text == NULL || left == NULL ||
            json_array_append_new(left, json_loads(text, 0, NULL)) != 0)
            lost++;
        free(text);
    }
    free(batch);
    if (t->o.log != NULL && n > 0)
        /* "o?" steals left (NULL when it could not be made). */
        t->o.log(
            "error", "audit.refusals_unwritten",
            json_pack("{s:o?, s:I}", "events", left, "lost", (json_int_t)lost));
    else
        json_decref(left);
}

void
pdp_refusals_free(struct pdp_refusals *t)
{
    if (t == NULL)
        return;
    if (t->running) {
        (void)pthread_mutex_lock(&t->mu);
        t->stop = 1;
        (void)pthread_cond_signal(&t->cv);
        (void)pthread_mutex_unlock(&t->mu);
        (void)pthread_join(t->flusher, NULL);
    }
    if (pdp_refusals_flush(t) != IG_OK)
        log_unwritten(t);
    (void)pthread_mutex_destroy(&t->mu);
    (void)pthread_mutex_destroy(&t->write_mu);
    (void)pthread_cond_destroy(&t->cv);
    free(t->v);
    free(t->slot);
    free(t);
}

/* ---- /metrics ---- */

enum ig_status
pdp_refusals_render(struct pdp_refusals *t, struct ig_buf *out)
{
    const struct pdp_metric counters[] = {
        {"intentgate_refusal_events_total",
         "Aggregated *.refused audit events written.", &t->events},
        {"intentgate_refusals_overflow_total",
         "Refusals counted in an overflow key (too many keys).",
         &t->overflowed},
        {"intentgate_login_delayed_total",
         "Logins slowed for their client address.",
         &t->throttled[PDP_THROTTLE_DELAYED]},
        {"intentgate_login_device_bypass_total",
         "Logins let past their id's backoff by a device token.",
         &t->throttled[PDP_THROTTLE_DEVICE]},
    };
    enum ig_status st;

    st = pdp_metrics_family(out, "intentgate_refusals_total",
                            "Refused requests counted for the audit log, by "
                            "kind.",
                            "kind", kind_label, t->noted, PDP_REFUSED_KINDS);
    if (st == IG_OK)
        st = pdp_metrics_rows(out, "counter", counters,
                              sizeof(counters) / sizeof(counters[0]));
    return st;
}
