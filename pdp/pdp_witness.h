/*
 * pdp_witness.h - the PDP's witness client: it submits each signed audit
 * checkpoint to the configured witnesses (c2sp.org/tlog-witness
 * add-checkpoint) and keeps their cosignatures in the store beside the
 * checkpoint (store_cosig_put). pdp_witness.c's DESIGN block tells how.
 *
 * Lifecycle, all from the thread that starts and stops the server:
 *
 *   pdp_witness_new(cfg, key, &w, err)  before store_open: no thread yet;
 *                                     NULL when none is configured
 *   store_opts.on_checkpoint = pdp_witness_on_checkpoint, ctx w
 *   pdp_witness_start(w, store, at_start)   one thread per witness
 *   pdp_witness_flush(w, seconds)     at stop, before pdp_witness_stop
 *   pdp_witness_stop(w)               before store_close: joins them
 *   pdp_witness_free(w)               after store_close (which may still
 *                                     call on_checkpoint: a no-op then)
 */
#ifndef PDP_WITNESS_H
#define PDP_WITNESS_H

#include <stdint.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_key.h"
#include "pdp_config.h"
#include "store.h"

struct pdp_witnesses;

/* The client for c's [witness] sections (c borrowed: it must outlive the
   client). *out NULL when c has none. IG_ERR_INVALID (err names the
   section) when a witness's key is the log's own audit_key (NULL: none):
   a log cannot witness itself. IG_ERR_NOMEM. */
enum ig_status pdp_witness_new(const struct pdp_config *c,
                               const struct ig_signing_key *audit_key,
                               struct pdp_witnesses **out,
                               struct ig_err *err) IG_WUR;

/*
 * Start one thread per witness, reading and writing s (borrowed; open
 * until pdp_witness_stop). Each learns from the store the largest size its
 * witness cosigned (store_cosig_latest); with at_start it submits the
 * latest checkpoint at once when its witness lacks it (SQLite; on
 * PostgreSQL only the sequencer signs, and it says so through
 * on_checkpoint). IG_ERR_IO (err says which part failed); IG_OK with w
 * NULL.
 */
enum ig_status pdp_witness_start(struct pdp_witnesses *w, struct store *s,
                                 int at_start, struct ig_err *err) IG_WUR;

/* store_opts.on_checkpoint: a checkpoint of tree size `size` was signed
   and committed. Wakes every witness thread; never blocks on the network
   or the store. ctx is the struct pdp_witnesses (NULL: nothing). */
void pdp_witness_on_checkpoint(void *ctx, uint64_t size);

/*
 * At stop, while the store is open: sign a checkpoint of what the log
 * holds now (store_audit_sign) and wait, at most `seconds`, until every
 * witness whose last attempt did not fail has cosigned the latest
 * checkpoint - so that a copy of the database taken after a clean stop
 * ends on a witnessed checkpoint. A witness that is down fails at once
 * and is not waited for. Logs witness.stop_unwitnessed (warning) when
 * the time ran out. Nothing on a process that does not submit (a
 * PostgreSQL replica that is not the sequencer). NULL is fine.
 */
void pdp_witness_flush(struct pdp_witnesses *w, double seconds);

/* Stop and join the threads; a request in flight is cut within about a
   second. NULL is fine. */
void pdp_witness_stop(struct pdp_witnesses *w);
void pdp_witness_free(struct pdp_witnesses *w);

/*
 * The witness metrics in Prometheus text onto out (ctx is the struct
 * pdp_witnesses; NULL: nothing):
 *   intentgate_witness_cosigned_size{witness="ID"}
 *   intentgate_witness_lag_leaves{witness}
 *   intentgate_witness_lag_seconds{witness}
 *   intentgate_witness_failures_total{witness,reason}
 * Nothing on a PostgreSQL replica before it signed a checkpoint. Thread
 * safe.
 */
enum ig_status pdp_witness_metrics(void *ctx, struct ig_buf *out) IG_WUR;

#endif
