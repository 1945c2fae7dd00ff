/*
 * pdp_witness_int.h - private to the witness client: its state, shared by
 *
 *   pdp_witness_submit.c   one attempt: the add-checkpoint request, the
 *                          answer judged, the cosignature stored, the
 *                          outcome logged and counted
 *   pdp_witness.c          the threads that make attempts, start and
 *                          stop, the recent checkpoints, the metrics
 *
 * (in that order: pdp_witness.c calls pdp_witness_submit.c, never back).
 */
#ifndef PDP_WITNESS_INT_H
#define PDP_WITNESS_INT_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ig_limits.h"
#include "pdp_witness.h"

/* Why an attempt failed: the label of
   intentgate_witness_failures_total{reason} (names in pdp_witness.c). */
enum pdp_witness_fail {
    PDP_WFAIL_UNREACHABLE = 0, /* connection, 429, 5xx */
    PDP_WFAIL_TIMEOUT,         /* timeout_ms passed */
    PDP_WFAIL_REFUSED,         /* 400, 403, 404, 422, 409 without a size */
    PDP_WFAIL_CONFLICT,        /* a size this log never signed */
    PDP_WFAIL_BAD_ANSWER,      /* garbage, too big, no valid cosignature */
    PDP_WFAIL_STORE,           /* our own store could not help */
    PDP_WFAIL_N
};

struct pdp_witnesses;

/* One witness and its thread. */
struct pdp_witness_one {
    struct pdp_witnesses *all;
    const struct pdp_witness_cfg *cfg;
    pthread_t thread;
    int started;
    pthread_mutex_t mu; /* guards wake and stop */
    pthread_cond_t cv;  /* CLOCK_MONOTONIC */
    int wake, stop;

    /* Its thread only. */
    CURL *curl;
    uint64_t old;  /* the size to send as old: what it said it has */
    int last_fail; /* the last failure logged (-1: none since a success) */
    int64_t last_logged; /* when (ig_time_now) */
    uint64_t not_logged; /* repeats counted since, not logged */

    /* Read by /metrics (and by pdp_witness_flush). */
    atomic_int failing;            /* its last attempt failed */
    atomic_uint_fast64_t cosigned; /* the largest size it cosigned */
    atomic_uint_fast64_t fails[PDP_WFAIL_N];
};

struct pdp_witnesses {
    const struct pdp_config *cfg;
    struct store *store;
    struct pdp_witness_one *w;
    size_t n;
    atomic_int stopping; /* cuts a request in flight */
    /* This process submits: SQLite, or a PostgreSQL replica once it
       signed a checkpoint (on_checkpoint). Metrics are shown only then. */
    atomic_int active;
    int curl_ready; /* curl_global_init done */

    /* The checkpoints this process saw signed, oldest first, with when
       (ig_time_now): the lag in seconds of a witness that lacks them. */
    pthread_mutex_t seen_mu;
    struct {
        uint64_t size;
        int64_t at;
    } seen[IG_WITNESS_SEEN_MAX];
    size_t nseen, seen_head; /* ring: seen[seen_head] is the oldest */
};

/*
 * One attempt to have w cosign the checkpoint note (its whole signed note,
 * NUL-terminated) of tree size `size`, larger than what it cosigned:
 * submits from w->old, resends once from the size a 409 names. 0 when the
 * cosignature is stored (w->cosigned and w->old are then size), -1 when
 * the attempt failed (logged and counted). w's thread only.
 */
int pdp_witness_attempt(struct pdp_witness_one *w, const char *note,
                        uint64_t size);

/* Count a failure of w and log it (a repeat of the last one at most once
   per IG_WITNESS_LOG_REPEAT_S). fmt makes the "detail" field. */
void pdp_witness_failed(struct pdp_witness_one *w, enum pdp_witness_fail why,
                        uint64_t size, uint64_t old, long http, const char *fmt,
                        ...) IG_PRINTF(6, 7);

#endif
