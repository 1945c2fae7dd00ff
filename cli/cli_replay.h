/*
 * cli_replay.h - the parts of `intentgate policy replay`
 * (cmd_policy_replay.c): preparing one recorded decision and evaluating
 * it again under a new bundle (cli_replay_eval.c), the two stages on two
 * threads with the order kept (cli_replay_pipe.c), and reporting what
 * changed (cli_replay_out.c, its counting maps in cli_replay_tally.c).
 * Private to the command; nothing here is thread safe except as
 * replay_pipe_run says.
 */
#ifndef CLI_REPLAY_H
#define CLI_REPLAY_H

#include <jansson.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>

#include "ig_error.h"
#include "pol.h"
#include "store_log.h"

/* What a replayed decision came to. */
enum replay_kind {
    REPLAY_UNCHANGED,
    REPLAY_VERDICT,    /* the verdict changed */
    REPLAY_REASONS,    /* the same verdict, another set of reasons */
    REPLAY_DENIED,     /* not replayed: an approver denied it */
    REPLAY_EXPIRED,    /* not replayed: its approval expired */
    REPLAY_UNREADABLE, /* its row does not parse: why says why */
    REPLAY_NKINDS
};

/* A verdict with its reasons, as compared. */
struct replay_verdict {
    enum pol_verdict verdict;
    size_t nreasons;
    char reasons[POL_MAX_REASONS][POL_REASON_MAX];
};

struct replay_result {
    enum replay_kind kind;
    struct replay_verdict from, to;
    char why[256];                 /* REPLAY_UNREADABLE */
    const struct pol_trace *trace; /* the new decision's, when traced */
};

/* The replay's quota counter holds at most this many buckets (16 bytes
   each: 256 MiB): 16 times the server's default (ig_counter.h), since a
   replay runs offline, alone, and must not fail a count() the server
   could answer. */
#define REPLAY_COUNTER_BUCKETS ((size_t)1 << 24)

/* The replay's engine: the bundle with its own quota counter. */
struct replay_engine;

/*
 * An engine for bundle b (a reference is taken) whose count() reads and
 * moves a counter of its own, never the database's; trace: record each
 * evaluation's trace (struct replay_result.trace). IG_ERR_INVALID (a
 * policy fails to load), IG_ERR_NOMEM, with err.
 */
enum ig_status replay_engine_new(struct pol_bundle *b, int trace,
                                 struct replay_engine **out,
                                 struct ig_err *err) IG_WUR;
void replay_engine_free(struct replay_engine *e);

/*
 * One recorded decision, read and made ready to evaluate: what the report
 * shows of it (copied: the store's row is gone by then), and the intent
 * its policies saw (NULL when it is not evaluated: a denial, an expiry,
 * an unreadable row - r.kind says which).
 */
struct replay_row {
    int64_t seq, decided_at;
    char *intent_id, *action, *resource; /* NULL when missing */
    int at_quorum;
    json_t *intent;
    struct replay_result r; /* r.from: the recorded decision */
};

/*
 * Prepare decision d into row (no engine needed: any thread): the
 * recorded verdict, and the intent as the server built it - the binding,
 * and at an approval's quorum the approval rebuilt from the recorded
 * requirements and votes (pdp_approval_intent.h). A row that does not
 * parse is REPLAY_UNREADABLE with why. -1 only when out of memory.
 */
int replay_prepare(const struct store_log_decision *d, struct replay_row *row);

/*
 * Evaluate a prepared row (when it has an intent) at its decided_at, so
 * count() sees the history of the replay so far, apply the server's
 * handling of the verdict and set row->r.kind by comparing with the
 * recorded one. Never fails. Rows must come in the order they were made.
 */
void replay_evaluate(struct replay_engine *e, struct replay_row *row);

/* Free what row holds; it can be prepared again. */
void replay_row_release(struct replay_row *row);

/*
 * Run the scan c through replay_prepare on a thread of its own, and hand
 * each prepared row, in order, to fn(ctx, row) on the calling thread (fn
 * evaluates and reports; the row is released after it). 0 when the scan
 * ended; -1 when it failed (err says why); -2 when fn returned non-zero
 * (the scan is stopped); -3 out of memory (or no thread).
 */
int replay_pipe_run(struct store_log_cursor *c,
                    int (*fn)(void *ctx, struct replay_row *row), void *ctx,
                    struct ig_err *err);

/* ---- counting by text (cli_replay_tally.c) ---- */

struct replay_tally_slot {
    char *key; /* NULL: empty */
    uint64_t n;
};

/* A map from text keys to counts; zeroed is empty. Keys are hashed with
   SipHash under a random key drawn at the first add (libsodium must be
   initialised: ig_crypto_init), so texts an agent chose (its actions)
   cannot be picked to collide. */
struct replay_tally {
    struct replay_tally_slot *slot;
    size_t cap, used; /* cap a power of two */
    unsigned char key[crypto_shorthash_KEYBYTES];
};

/* Count one more of key (copied). -1 when out of memory. */
int replay_tally_add(struct replay_tally *t, const char *key);

/* Move the used slots to the front of t->slot, most counted first (ties
   by key), and say how many: t is then only read, and freed. */
size_t replay_tally_sorted(struct replay_tally *t);

/* Free the keys and slots. */
void replay_tally_free(struct replay_tally *t);

/* ---- the report ---- */

enum replay_format { REPLAY_TEXT, REPLAY_JSON, REPLAY_CSV };

struct replay_report;

/* A report written to out in format fmt; changes may be written as they
   come (json, csv) or kept in a temporary file (text). NULL, with err,
   when out of memory or no temporary file can be made. */
struct replay_report *replay_report_new(enum replay_format fmt, FILE *out,
                                        const char *db, const char *bundle,
                                        const char *revision,
                                        struct ig_err *err);

/* Count row (reported: in range and matching --action). -1 when out of
   memory or a write failed. */
int replay_report_add(struct replay_report *rp, const struct replay_row *row);

/* Write the summary and tables (and for text the changes kept) and
   free. -1 when a write failed. */
int replay_report_finish(struct replay_report *rp);

/* Free without writing more. NULL is fine. */
void replay_report_free(struct replay_report *rp);

/* How many of each kind were counted. */
uint64_t replay_report_count(const struct replay_report *rp,
                             enum replay_kind k);

#endif
