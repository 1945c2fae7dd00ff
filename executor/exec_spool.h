/*
 * exec_spool.h - the executor's durable outcome spool: an action that ran
 * is reported to the PDP even when the PDP is down, slow or restarting,
 * and even when the executor itself stops half-way.
 *
 * The order, per execution (the caller's part):
 *
 *   exec_spool_run_write(id)      written, before the grant is redeemed
 *   redeem the grant at the PDP   (refused: exec_spool_run_cancel)
 *   exec_spool_run_durable()      durable BEFORE the handler runs (the
 *                                 disk flush overlaps the redemption)
 *   run the handler
 *   exec_spool_outcome(id, ...)   written, one delivery attempt; durable
 *                                 before returning when that failed
 *
 * An outcome the PDP did not take (unreachable, 5xx, timeout: the send
 * callback answered IG_ERR_IO) stays pending and is retried by the
 * spool's one background thread, oldest first, after a restart too. The
 * backoff is the queue's (the PDP is the shared resource): after n
 * transient failures in a row nothing is sent for a delay drawn from
 * [d/2, d], d = min(retry_initial_ms * 2^(n-1), retry_max_ms); any answer
 * of the PDP ends it. A `run` record found without its
 * outcome at open means the executor stopped while the action ran: the
 * spool reports it as UNKNOWN_AFTER_DISPATCH, with the detail
 * {"error": EXEC_SPOOL_UNKNOWN_ERROR}, exactly once. Delivery is
 * at-least-once (a crash between the PDP's answer and the spool's `done`
 * record sends the outcome again); the PDP answers such a repeat with 200
 * "duplicate", so every outcome is recorded exactly once.
 *
 * On disk: one directory (mode 0700, created when missing) holding
 * EXEC_SPOOL_FILE (mode 0600), one record per line, each line
 * "CCCCCCCC JSON\n": JSON is the record as canonical JSON (RFC 8785) and
 * CCCCCCCC the first 4 bytes of its SHA-256 in lowercase hex. Records:
 *
 *   {"intent_id":ID,"type":"run"}
 *   {"detail":{...},"intent_id":ID,"outcome":NAME,"type":"outcome"}
 *   {"intent_id":ID,"result":"delivered"|"undeliverable"|"not-run",
 *    "type":"done"}
 *
 * ID is 1..IG_INTENT_ID_MAX bytes of [A-Za-z0-9-]; NAME is
 * 1..IG_OUTCOME_NAME_MAX bytes of [A-Z_]; detail is an object of at
 * most IG_OUTCOME_DETAIL_MAX_BYTES canonical bytes. A line that is torn
 * (no newline: the last one after a crash), longer than
 * IG_EXEC_SPOOL_LINE_MAX, fails its checksum or is not exactly one of these
 * shapes is damaged: it is skipped and counted (corrupt_lines), never
 * trusted, and the lines after it are read as usual.
 *
 * A directory or file that group or others may access, or that another
 * user owns, is refused (IG_ERR_IO naming the path and the chmod to
 * run), never silently fixed: the spool holds outcome details, and a
 * wrong mode means someone else may have read them. The directory is
 * locked (flock) while open: a second executor on it is refused.
 */
#ifndef EXEC_SPOOL_H
#define EXEC_SPOOL_H

#include <jansson.h>
#include <stdint.h>

#include "ig_error.h"
#include "ig_limits.h"

/* The spool file's name inside the spool directory. */
#define EXEC_SPOOL_FILE "outcomes.spool"
/* Its limits (IG_INTENT_ID_MAX, IG_OUTCOME_NAME_MAX, IG_EXEC_SPOOL_*) are
   in ig_limits.h. */
/* The error of the UNKNOWN_AFTER_DISPATCH outcome synthesized at open. */
#define EXEC_SPOOL_UNKNOWN_ERROR                                               \
    "the executor stopped before the action's end was known"

struct exec_spool;

/*
 * Deliver one outcome (the executor wires it to exec_pdp_outcome). detail
 * is never NULL. Return IG_OK when the PDP recorded it (a duplicate
 * included), IG_ERR_IO when it may succeed later (unreachable, timeout,
 * 5xx), anything else when it never will (the spool gives up on it, logs
 * and counts it). Called from the threads of exec_spool_outcome callers
 * and from the spool's retry thread, possibly at once: it must be thread
 * safe. err's text is logged: it must not hold the detail.
 */
typedef enum ig_status (*exec_spool_send_fn)(void *ctx, const char *intent_id,
                                             const char *outcome,
                                             const json_t *detail,
                                             struct ig_err *err);

/*
 * One log event: "outcome.pending" (a delivery failed and will be
 * retried), "outcome.delivered" (delivered after having been pending),
 * "outcome.undeliverable" (given up), "outcome.recovered" (a run without
 * its outcome found at open, now pending as UNKNOWN_AFTER_DISPATCH),
 * "spool.damaged" (intent_id NULL; attempts: the number of damaged lines
 * skipped at open). error may be NULL. Never given the detail. Called
 * without the spool's lock held, from any of the threads above.
 */
typedef void (*exec_spool_log_fn)(void *ctx, const char *event,
                                  const char *intent_id, unsigned attempts,
                                  const char *error);

struct exec_spool_opts {
    /* NULL: nothing is delivered (no thread; outcomes stay pending). For
       tools reading a spool, and the fuzzer. */
    exec_spool_send_fn send;
    /* NULL: one ig_log line on stderr per event, with "intent_id",
       "attempts" and "error" (printable ASCII only). */
    exec_spool_log_fn log;
    /* 0: IG_EXEC_SPOOL_RETRY_INITIAL_MS / IG_EXEC_SPOOL_RETRY_MAX_MS; at most
       IG_EXEC_SPOOL_RETRY_CEILING_MS. */
    long retry_initial_ms, retry_max_ms;
    /* For tests. now_ms: a monotonic clock in milliseconds (NULL:
       CLOCK_MONOTONIC); sync: makes fd's written data durable, 0 or -1
       with errno (NULL: fdatasync); compact_bytes: 0 is
       IG_EXEC_SPOOL_COMPACT_BYTES. */
    double (*now_ms)(void *ctx);
    int (*sync)(void *ctx, int fd);
    long compact_bytes;
    void *ctx; /* passed to every callback above */
};

struct exec_spool_stats {
    uint64_t running;             /* run records without an outcome yet */
    uint64_t pending;             /* outcomes not yet delivered */
    uint64_t delivered_total;     /* outcomes the PDP took */
    uint64_t retries_total;       /* attempts by the retry thread */
    uint64_t undeliverable_total; /* outcomes given up on */
    uint64_t corrupt_lines;       /* damaged lines skipped at open */
    uint64_t records_total;       /* records appended since open */
    uint64_t syncs_total;         /* calls to sync (fdatasync) */
    uint64_t compactions_total;   /* rewrites of the file, open's included */
    uint64_t rewrite_failures;    /* rewrites that failed (retried later) */
};

/*
 * Open (creating; dir's parent must exist) the spool in dir, read it
 * back, rewrite it with only its live records (atomically: temporary
 * file, sync, rename, sync of the directory), and start the retry thread,
 * which at once tries every pending outcome. o may be NULL (all
 * defaults: nothing is delivered). *out gets the spool, NULL on failure.
 * IG_ERR_IO naming the path (cannot create, read or write; wrong owner
 * or mode; locked by another process), IG_ERR_INVALID (bad options),
 * IG_ERR_NOMEM. Damaged lines are not an error: they are skipped,
 * counted and logged.
 */
enum ig_status exec_spool_open(const char *dir, const struct exec_spool_opts *o,
                               struct exec_spool **out,
                               struct ig_err *err) IG_WUR;

/*
 * Record that the action of intent_id is about to run, in two steps so
 * that the disk flush overlaps the redemption: exec_spool_run_write
 * appends the record (*ticket names it) and returns at once; after the
 * redemption, exec_spool_run_durable(ticket) returns once it is durable
 * (IG_OK: run the action; IG_ERR_IO: do not, and report
 * DEFINITELY_NOT_EXECUTED through exec_spool_outcome) - or, when the
 * redemption was refused, exec_spool_run_cancel(id) forgets it (a `done`
 * "not-run" record, not waited for). exec_spool_run_write errors, where
 * nothing was recorded and the grant should not be spent:
 * IG_ERR_INVALID (malformed id), IG_ERR_EXISTS (the id is already in the
 * spool), IG_ERR_LIMIT (IG_EXEC_SPOOL_PENDING_MAX held), IG_ERR_NOMEM.
 * exec_spool_run is the two at once. A run record found without its
 * outcome at open (a crash, or a redemption whose answer never came) is
 * reported UNKNOWN_AFTER_DISPATCH; a PDP that never redeemed it answers
 * that it was not, and the spool gives it up (logged). Thread safe.
 */
enum ig_status exec_spool_run_write(struct exec_spool *s, const char *intent_id,
                                    uint64_t *ticket,
                                    struct ig_err *err) IG_WUR;
enum ig_status exec_spool_run_durable(struct exec_spool *s, uint64_t ticket,
                                      struct ig_err *err) IG_WUR;
void exec_spool_run_cancel(struct exec_spool *s, const char *intent_id);
enum ig_status exec_spool_run(struct exec_spool *s, const char *intent_id,
                              struct ig_err *err) IG_WUR;

/*
 * Record the outcome of intent_id (detail: an object, or NULL for {};
 * not kept): write it to the spool, try one delivery in the calling
 * thread, and when the PDP did not take it, make the record durable
 * before returning (the retry thread has it then). An outcome taken at
 * once is not waited for on disk: its record survives a crash of this
 * process, and for a power loss the run record stands in (reported
 * UNKNOWN_AFTER_DISPATCH after the restart). *delivered (when not NULL)
 * gets 1 when the PDP took it now, 0 when it is pending or was given up.
 * IG_OK: delivered, or durable. IG_ERR_IO: not delivered and it could
 * not be made durable; it is pending in memory all the same (retried
 * while the process lives, written out by the next successful rewrite).
 * Nothing recorded, nothing sent: IG_ERR_INVALID (malformed id or name,
 * detail not an object or without a canonical form), IG_ERR_LIMIT
 * (detail over IG_OUTCOME_DETAIL_MAX_BYTES canonical; or no run record
 * and IG_EXEC_SPOOL_PENDING_MAX held), IG_ERR_EXISTS (an outcome for the id
 * is already spooled), IG_ERR_NOMEM. A run record is not required.
 * Thread safe.
 */
enum ig_status exec_spool_outcome(struct exec_spool *s, const char *intent_id,
                                  const char *outcome, const json_t *detail,
                                  int *delivered, struct ig_err *err) IG_WUR;

/*
 * exec_spool_outcome in two steps, so that the executor can answer the
 * agent between them: exec_spool_outcome_write writes the record (with
 * the same checks and errors; *ticket names it) and returns at once -
 * from then on the outcome survives a crash of this process, and the
 * retry thread leaves it alone; exec_spool_outcome_send(id, same detail,
 * ticket) must follow, exactly once: one delivery, and the record made
 * durable when that failed (its IG_OK / IG_ERR_IO and *delivered as
 * exec_spool_outcome's). Thread safe.
 */
enum ig_status exec_spool_outcome_write(struct exec_spool *s,
                                        const char *intent_id,
                                        const char *outcome,
                                        const json_t *detail, uint64_t *ticket,
                                        struct ig_err *err) IG_WUR;
enum ig_status exec_spool_outcome_send(struct exec_spool *s,
                                       const char *intent_id,
                                       const json_t *detail, uint64_t ticket,
                                       int *delivered,
                                       struct ig_err *err) IG_WUR;

/* Wake the retry thread: it tries what is due now, without waiting for
   its timer. Returns at once. Thread safe; NULL is fine. */
void exec_spool_kick(struct exec_spool *s);

/*
 * Kick, then wait until the retry thread has finished a pass begun after
 * this call: every pending outcome due by the clock was tried, or the
 * PDP failed and the queue is backing off. For tests and shutdown
 * drains. Returns at once without a retry thread or when s is NULL.
 * Thread safe.
 */
void exec_spool_flush(struct exec_spool *s);

/* A snapshot of the counters (for /metrics); all 0 when s is NULL.
   Thread safe. */
void exec_spool_stats(struct exec_spool *s, struct exec_spool_stats *out);

/*
 * Stop the retry thread (after the delivery it is making, if any), make
 * every written record durable, close and free. Pending outcomes stay in
 * the file for the next open. No other call on s may be running or
 * follow. NULL is fine.
 */
void exec_spool_close(struct exec_spool *s);

#endif
