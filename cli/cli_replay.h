/*
 * cli_replay.h - the parts of `intentgate policy replay`
 * (cmd_policy_replay.c): evaluating one recorded decision again under a
 * new bundle (cli_replay_eval.c) and reporting what changed
 * (cli_replay_out.c).
 */
#ifndef CLI_REPLAY_H
#define CLI_REPLAY_H

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
 * Replay decision d: evaluate the intent its policies saw, at its
 * decided_at (so count() sees the history of the replay so far), apply
 * the server's handling of the verdict and compare with the recorded one.
 * A decision no policy made (denied, expired) is not evaluated; a row
 * that does not parse is REPLAY_UNREADABLE. Never fails.
 */
void replay_decision(struct replay_engine *e,
                     const struct store_log_decision *d,
                     struct replay_result *out);

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

/* Count r for decision d (reported: in range and matching --action).
   -1 when out of memory or a write failed. */
int replay_report_add(struct replay_report *rp,
                      const struct store_log_decision *d,
                      const struct replay_result *r);

/* Write the summary and tables (and for text the changes kept) and
   free. -1 when a write failed. */
int replay_report_finish(struct replay_report *rp);

/* Free without writing more. NULL is fine. */
void replay_report_free(struct replay_report *rp);

/* How many of each kind were counted. */
uint64_t replay_report_count(const struct replay_report *rp,
                             enum replay_kind k);

#endif
