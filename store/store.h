/*
 * store.h - the PDP's durable record: intents, decisions, grants,
 * redemptions, outcomes, approvals, quota hits and the append-only audit
 * events. Kept narrow on purpose: a PostgreSQL backend can implement the
 * same functions later; the SQLite one (store_sqlite.c) is the default.
 *
 * Writes go through one writer thread with group commit: every write call
 * blocks until the transaction holding its records is durable
 * (synchronous=FULL by default) and only then returns, so a caller may
 * answer its client as soon as the call returns IG_OK. Reads use a pool of
 * read-only connections and never wait for the writer (WAL).
 *
 * Recorded rows are immutable: the schema refuses UPDATE and DELETE on
 * every table except the quota hits. Every write appends its audit events
 * (canonical JSON text, made by the caller off the writer thread) in the
 * same transaction, in order. Each event is a leaf of the audit log's
 * Merkle tree (RFC 6962, audit/audit_tree.h; leaf index = its seq - 1):
 * the writer keeps the tree's frontier in memory and stores every complete
 * subtree with the event, and signs checkpoints of the tree (C2SP signed
 * notes) every checkpoint_every leaves, every checkpoint_interval seconds
 * when it grew, and at close - each only once shown consistent with the
 * previous one and with the anchor, a copy of the latest kept in a file
 * outside the database. Opening recomputes the whole tree from the events
 * and refuses a database that disagrees with its nodes, its checkpoints
 * or the anchor.
 *
 * All functions are thread safe.
 */
#ifndef STORE_H
#define STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "audit_tree.h"
#include "ig_buf.h"
#include "ig_error.h"
#include "ig_key.h"
#include "ig_limits.h"

struct store;

/* A log line (pdp_log's shape: fields stolen, may be NULL). */
typedef void (*store_log_fn)(const char *level, const char *event,
                             json_t *fields);

struct store_opts {
    const char *path;     /* SQLite file, created on first open; or a
                             postgresql:// URL (store_pg_int.h) */
    int synchronous_full; /* 1: synchronous=FULL (default); 0: NORMAL */
    /* Called on the writer thread after each commit, once per intent id
       whose state the commit changed (PostgreSQL: also on the listener
       thread for other replicas' commits, and with NULL - any intent may
       have changed - after the listener lost its connection). May be
       NULL. Must not block. */
    void (*on_commit)(void *ctx, const char *intent_id);
    void *on_commit_ctx;

    /* The audit log's checkpoints. audit_key NULL: none are signed. Both
       borrowed: they must outlive the store. */
    const char *audit_name;                 /* origin and key name */
    const struct ig_signing_key *audit_key; /* Ed25519 */
    uint64_t checkpoint_every;              /* leaves; 0: not by count */
    int64_t checkpoint_interval;            /* seconds; 0: not by time */
    /* The anchor (store_anchor.c): a file outside the database that
       holds the latest signed checkpoint; every new tree must extend it.
       NULL: none. Only with audit_key. Borrowed. */
    const char *audit_anchor;
    /* At open, what may replace an anchor the database does not agree
       with (enum store_anchor_adopt). */
    int anchor_adopt;
    /* Called (on the writer thread, or in store_open) for what the
       audit log wants an operator to see: checkpoints signed or refused,
       a backfill. May be NULL. */
    store_log_fn log;
    /* Writes queued for the writer above which store_overloaded() says
       so; 0: never. */
    size_t max_queue;
    /* Called after a checkpoint of tree size `size` is signed and
       committed - by count, by interval, by store_audit_sign and at close
       - once per checkpoint (SQLite: on the writer thread; PostgreSQL: on
       the sequencer's thread, so only on the replica that signed it; at
       close too, inside store_close: ctx must outlive it). Must not
       block, and must not call the store (on SQLite a write from it
       would wait for the very thread it runs on): a witness client
       queues the submission and does the rest on its own thread. May be
       NULL. */
    void (*on_checkpoint)(void *ctx, uint64_t size);
    void *on_checkpoint_ctx;
};

/* What the store may do at open when the anchor and the database
   disagree. Every adoption is logged (audit.anchor_adopted). */
enum store_anchor_adopt {
    STORE_ANCHOR_STRICT = 0,    /* refuse to open */
    STORE_ANCHOR_ADOPT_MISSING, /* dev mode: a missing anchor is taken from
                                 the database's newest checkpoint */
    STORE_ANCHOR_ADOPT          /* the operator's `serve --adopt-audit-anchor`:
                                 the database's state, whatever the anchor */
};

/* One submitted intent with its first decision, recorded atomically. */
struct store_intent_rec {
    const char *intent_id, *principal, *tenant, *action, *resource;
    const char *intent_hash;
    const char *binding;         /* canonical JSON of the binding */
    const char *idempotency_key; /* NULL when none */
    int64_t created_at, expires_at;

    const char *decision_id, *decision; /* "ALLOW" | "ESCALATE" | "BLOCK" */
    const char *reasons;                /* JSON array text */
    const char *message, *policy_revision;

    /* ALLOW: the grant issued (jti NULL otherwise). The token is kept so
       an idempotent retry gets the same grant back. */
    const char *grant_jti, *grant_aud, *grant_token;
    int64_t grant_expires_at;

    /* ESCALATE: the approval request (id NULL otherwise). */
    const char *approval_id;
    const char *approval_requirements; /* JSON object text */
    int64_t approval_expires_at;

    const char *const *events; /* audit events (canonical JSON), in order */
    size_t nevents;
};

struct store_redeem_rec {
    const char *jti, *intent_id, *executor;
    int64_t redeemed_at;
    const char *const *events;
    size_t nevents;
};

struct store_outcome_rec {
    const char *intent_id, *executor, *outcome;
    const char *detail; /* JSON object text (canonical) */
    int64_t reported_at;
    const char *const *events;
    size_t nevents;
    /* When not NULL: a repeat of the recorded outcome with the same
       detail text is IG_OK with *duplicate = 1 and writes nothing (else
       *duplicate = 0). When NULL a repeat is IG_ERR_EXISTS. */
    int *duplicate;
};

/*
 * A vote on an approval request, and/or its resolution, recorded
 * atomically with the decision and grant that follow from it. approver
 * NULL: no vote (an expiry). result NULL: the request stays pending.
 * decision_id NULL: no new decision; grant_jti NULL: no grant.
 */
struct store_vote_rec {
    const char *intent_id;
    const char *approver, *vote, *comment, *channel;
    const char *groups; /* JSON array text: the approver's groups */
    const char *intent_hash;
    int64_t at;
    const char *result; /* "APPROVED" | "DENIED" | "EXPIRED" | NULL */
    const char *decision_id, *decision, *reasons, *message, *policy_revision;
    const char *grant_jti, *grant_aud, *grant_token;
    int64_t grant_expires_at;
    const char *const *events;
    size_t nevents;
};

/* Open (creating and migrating as needed) and start the writer thread.
 * IG_ERR_IO with err naming the file and SQLite's message.
 */
enum ig_status store_open(const struct store_opts *opts, struct store **out,
                          struct ig_err *err) IG_WUR;

/* 1 when path names a PostgreSQL database (a postgresql:// or postgres://
   URL) rather than a SQLite file. */
int store_is_postgres(const char *path);

/* path as it may be logged: a PostgreSQL URL that holds a password
   (store_url_has_password, store_log.h) loses it, and its parameters;
   anything else is copied. Cut at cap - 1 bytes. */
void store_url_for_log(const char *path, char *out, size_t cap);

/* Finish queued writes, stop the writer, close. NULL is fine. */
void store_close(struct store *s);

/* 1 when the writer's queue holds max_queue writes or more: the PDP then
   refuses new intents (503 OVERLOADED) before deciding them, so the queue
   stays bounded by max_queue plus the requests already admitted. */
int store_overloaded(struct store *s);
/* Writes queued now. */
size_t store_queue_depth(struct store *s);

/*
 * Asynchronous writes: the _async variants queue the write and return at
 * once; done(ctx, status) is called later on the writer thread, after the
 * commit (or its failure), with the status the synchronous call would have
 * returned. rec, everything it points to, and *replay must stay valid
 * until then. done must not block. The synchronous calls wrap these.
 * IG_ERR_IO without a callback when the store is shutting down.
 */
typedef void (*store_done_fn)(void *ctx, enum ig_status st);

/*
 * Record an intent and its decision. IG_ERR_EXISTS when the same principal
 * already has an unexpired intent with the same idempotency key: then
 * *replay receives that intent's id (malloc'd; caller frees) and nothing is
 * written. IG_ERR_IO on a store failure.
 */
enum ig_status store_put_intent(struct store *s,
                                const struct store_intent_rec *r,
                                char **replay) IG_WUR;

enum ig_status store_put_intent_async(struct store *s,
                                      const struct store_intent_rec *r,
                                      char **replay, store_done_fn done,
                                      void *ctx) IG_WUR;

/*
 * Read-only check for an unexpired intent by (principal, key) at time now:
 * IG_OK with its id in *replay (malloc'd) or IG_ERR_NOTFOUND.
 */
enum ig_status store_find_idempotent(struct store *s, const char *principal,
                                     const char *key, int64_t now,
                                     char **replay) IG_WUR;

/*
 * Everything recorded about one intent, as a new JSON object:
 *   intent_id, principal, tenant, intent_hash, created_at, expires_at
 *   (seconds), binding (object), decisions (array of {decision_id,
 *   decision, reasons, message, policy_revision, decided_at}), and when
 *   present: grant {jti, audience, issued_at, expires_at, token}, redemption
 *   {executor, redeemed_at}, outcome {outcome, detail, executor,
 *   reported_at}, approval {approval_id, requirements, created_at,
 *   expires_at, votes: [{approver, vote, comment, channel, groups,
 *   intent_hash, voted_at}], resolution {result, resolved_at} when
 *   resolved}.
 * IG_ERR_NOTFOUND, IG_ERR_IO.
 */
enum ig_status store_get_intent(struct store *s, const char *intent_id,
                                json_t **out) IG_WUR;

/*
 * What a redemption reads, and no more: store_get_intent's object with
 * only the intent's own fields and its grant (no decisions, redemption,
 * outcome or approval), in one read transaction. IG_ERR_NOTFOUND,
 * IG_ERR_IO.
 */
enum ig_status store_get_grant(struct store *s, const char *intent_id,
                               json_t **out) IG_WUR;

/*
 * Consume a grant: IG_OK for the first redemption of jti, IG_ERR_EXISTS for
 * every later one (also across restarts), IG_ERR_NOTFOUND when no such
 * grant was issued for that intent.
 */
enum ig_status store_redeem(struct store *s,
                            const struct store_redeem_rec *r) IG_WUR;
enum ig_status store_redeem_async(struct store *s,
                                  const struct store_redeem_rec *r,
                                  store_done_fn done, void *ctx) IG_WUR;

/*
 * Record the outcome of a redeemed grant: IG_OK once, IG_ERR_EXISTS after
 * (but see store_outcome_rec.duplicate: the same outcome and detail again
 * may be IG_OK, writing nothing), IG_ERR_NOTFOUND when the intent's grant
 * was not redeemed by this executor.
 */
enum ig_status store_put_outcome(struct store *s,
                                 const struct store_outcome_rec *r) IG_WUR;
enum ig_status store_put_outcome_async(struct store *s,
                                       const struct store_outcome_rec *r,
                                       store_done_fn done, void *ctx) IG_WUR;

/*
 * Quota counter: record one hit of key at now and return the number of
 * hits in (now - window, now], this one included; -1 on error. Hits are
 * kept in memory for speed and persisted (asynchronously) so counts survive
 * a restart. window_seconds is 1..86400.
 */
int64_t store_count(struct store *s, const char *key, int64_t window_seconds,
                    int64_t now);

/*
 * Record a vote and what follows from it. IG_ERR_EXISTS when this
 * approver already voted on the request or it is already resolved (nothing
 * is written); IG_ERR_NOTFOUND when the intent has no approval request.
 */
enum ig_status store_put_vote(struct store *s,
                              const struct store_vote_rec *r) IG_WUR;

/* Append audit events alone (refusals, login failures, notifications). */
enum ig_status store_put_events(struct store *s, const char *const *events,
                                size_t n) IG_WUR;

/*
 * Approval requests with no resolution, oldest first, as an array of
 * {intent_id, approval_id, requirements, created_at, expires_at}; with
 * expired_before > 0 only those whose expiry is at or before it.
 */
enum ig_status store_open_approvals(struct store *s, int64_t expired_before,
                                    json_t **out) IG_WUR;

/* The intent id of approval_id (malloc'd). IG_ERR_NOTFOUND, IG_ERR_IO. */
enum ig_status store_approval_intent(struct store *s, const char *approval_id,
                                     char **intent_id) IG_WUR;

/* Number of audit events recorded (the next leaf index). Read-only. */
enum ig_status store_audit_size(struct store *s, int64_t *out) IG_WUR;

/* ---- the audit log (store_audit.c, store_audit_read.c) ---- */

/*
 * Size and root of the tree of every committed event (runs on the writer
 * thread; waits for it). IG_ERR_IO.
 */
enum ig_status store_audit_head(struct store *s, uint64_t *size,
                                unsigned char root[AUDIT_HASH_BYTES]) IG_WUR;

/*
 * Sign and store a checkpoint of the current tree now, on the writer
 * thread (PostgreSQL: on the sequencer; IG_ERR_IO on a replica that is
 * not the sequencer). IG_OK with *size the checkpoint's tree size;
 * IG_ERR_EXISTS when the tree did not grow since the last one; IG_ERR_NOTFOUND
 * without a key; IG_ERR_CRYPTO when refused (not consistent with the previous
 * checkpoint: logged); IG_ERR_IO.
 */
enum ig_status store_audit_sign(struct store *s, uint64_t *size) IG_WUR;

/*
 * A stored checkpoint note: of tree size `size`, or the latest when size is
 * 0. *note is malloc'd (caller frees), *out_size its tree size.
 * IG_ERR_NOTFOUND, IG_ERR_IO. Read-only.
 */
enum ig_status store_checkpoint_get(struct store *s, uint64_t size, char **note,
                                    uint64_t *out_size) IG_WUR;

/*
 * The leaves [start, end) - end clamped to the log's size - each as its
 * exact bytes followed by "\n", appended to out; stops early once out
 * holds max_bytes (always at least one leaf when any). *tree_size gets the
 * log's size, *count the leaves appended. IG_ERR_LIMIT when out's own cap
 * is hit, IG_ERR_IO. Read-only.
 */
enum ig_status store_audit_leaves(struct store *s, uint64_t start, uint64_t end,
                                  size_t max_bytes, struct ig_buf *out,
                                  uint64_t *tree_size, uint64_t *count) IG_WUR;

/*
 * Inclusion proof of leaf index in the tree of the stored checkpoint of
 * tree size `size` (0: the latest checkpoint): *n hashes into proof
 * (AUDIT_PROOF_MAX), the checkpoint's note in *note (malloc'd) and its
 * size in *out_size. IG_ERR_NOTFOUND (no such checkpoint), IG_ERR_INVALID
 * (index not below the size), IG_ERR_IO. Read-only.
 */
enum ig_status store_audit_inclusion(struct store *s, uint64_t index,
                                     uint64_t size,
                                     unsigned char proof[][AUDIT_HASH_BYTES],
                                     size_t *n, char **note,
                                     uint64_t *out_size) IG_WUR;

/*
 * Consistency proof between the stored checkpoints of sizes old_size and
 * new_size (0 < old_size <= new_size): *n hashes into proof
 * (AUDIT_CPROOF_MAX). IG_ERR_NOTFOUND when either is not a stored
 * checkpoint, IG_ERR_INVALID on a bad pair, IG_ERR_IO. Read-only.
 */
enum ig_status store_audit_consistency(struct store *s, uint64_t old_size,
                                       uint64_t new_size,
                                       unsigned char proof[][AUDIT_HASH_BYTES],
                                       size_t *n) IG_WUR;

/* ---- witness cosignatures (store_cosig.c; PostgreSQL: store_pg_cosig.c)
 *
 * A cosignature (c2sp.org/tlog-cosignature, audit/audit_cosig.h) is kept
 * as its whole signature line "— <witness key name> <base64>\n", beside
 * the stored checkpoint it signs, one per (checkpoint, witness). The rows
 * are immutable, like the checkpoints. A checkpoint "with its
 * cosignatures" is its note with these lines appended after the log's
 * signature line: still one valid signed note (audit_note_open skips
 * lines of keys it does not know). The store checks a line's shape, not
 * its signature: the caller verified it against the witness's key.
 */

/*
 * Keep `line` (one cosignature line with its newline, at most
 * AUDIT_COSIG_LINE_MAX bytes, "— " witness " " base64 "\n") as witness's
 * cosignature of the stored checkpoint of tree size `size`. The first
 * put per (size, witness) wins: a later one is IG_OK and changes nothing.
 * IG_ERR_NOTFOUND: no checkpoint of that size. IG_ERR_INVALID: witness
 * not a valid key name (audit_name_valid), or line too long, without its
 * newline, with another line in it, not by witness or not base64.
 * IG_ERR_IO. Waits for the commit.
 */
enum ig_status store_cosig_put(struct store *s, uint64_t size,
                               const char *witness, const char *line) IG_WUR;

/*
 * Every cosignature line of the checkpoint of tree size `size` (0: the
 * latest checkpoint), ordered by witness name (bytewise), concatenated
 * into *lines (malloc'd, NUL-terminated; "" when none; caller frees; NULL
 * on an error). IG_ERR_NOTFOUND: no such checkpoint. IG_ERR_IO. Read-only.
 */
enum ig_status store_cosig_get(struct store *s, uint64_t size,
                               char **lines) IG_WUR;

/* The largest checkpoint size witness cosigned into *size; 0 when none.
   IG_ERR_INVALID (witness NULL), IG_ERR_IO. Read-only. */
enum ig_status store_cosig_latest(struct store *s, const char *witness,
                                  uint64_t *size) IG_WUR;

/* Commit latency observer for /metrics: called after each group commit
   with the seconds it took and the number of writes it held. */
typedef void (*store_commit_observer)(void *ctx, double seconds, size_t writes);
void store_set_observer(struct store *s, store_commit_observer fn, void *ctx);

/* ---- state the PDP replicas share (store_shared.c; PostgreSQL:
   store_pg_shared.c) ----
 *
 * Approver sessions, failed sign-in counts and where each Slack message
 * is live in the database, not in one process's memory, so that every
 * PDP replica on one database sees the same: a session made on one is
 * good on all, failures counted on one count on all, and whichever
 * replica resolves a request edits its Slack message. These rows change
 * (they are not records of what happened, and make no audit events).
 * SQLite keeps them on a connection of their own, never behind the
 * writer's queue. Every function answers IG_ERR_IO on a store failure:
 * the caller fails closed (no session, the login refused, no update).
 */

#define STORE_SESSION_HASH_BYTES 32
#define STORE_SESSION_CRED_MAX 64

/* A new approver session. Only the SHA-256 of its id is stored, never
   the id: a copy of the database hands out no live session. */
struct store_session_rec {
    const unsigned char *id_hash; /* STORE_SESSION_HASH_BYTES */
    const char *approver;         /* at most IG_ID_MAX bytes */
    const char *csrf;             /* at most IG_SESSION_CSRF_MAX bytes */
    /* What the approver signed in with, as the caller fingerprints it
       (pdp_login.c: the hex SHA-256 of the config's password hash); at
       most STORE_SESSION_CRED_MAX bytes. The caller compares it at each
       lookup, so a changed password ends the sessions made with the old
       one, on every replica. */
    const char *cred;
    int64_t created_at, expires_at; /* seconds; expires_at: absolute end */
};

/*
 * Record a new session, last seen at created_at. Sessions dead then
 * (idle for idle seconds, or past their expires_at) are forgotten first;
 * when max_sessions live ones are still kept, the least recently seen
 * goes. IG_ERR_INVALID (a field too long or NULL), IG_ERR_EXISTS (that
 * hash is taken), IG_ERR_IO.
 */
enum ig_status store_session_create(struct store *s,
                                    const struct store_session_rec *r,
                                    int64_t idle, size_t max_sessions) IG_WUR;

/*
 * The session id_hash at now: IG_OK with its approver, its credential
 * fingerprint and (csrf not NULL) its CSRF token copied, NUL-terminated; its
 * idle timer restarts, written at most once per IG_SESSION_TOUCH_S (or idle /
 * 4, when shorter). IG_ERR_NOTFOUND when unknown, idle (now - last seen >=
 * idle) or expired (now >= expires_at): a dead one is deleted. IG_ERR_IO.
 */
enum ig_status
store_session_get(struct store *s,
                  const unsigned char id_hash[STORE_SESSION_HASH_BYTES],
                  int64_t now, int64_t idle, char approver[IG_ID_MAX + 1],
                  char cred[STORE_SESSION_CRED_MAX + 1],
                  char csrf[IG_SESSION_CSRF_MAX + 1]) IG_WUR;

/* Forget one session (logout; an unknown hash is fine). IG_ERR_IO. */
enum ig_status
store_session_end(struct store *s,
                  const unsigned char id_hash[STORE_SESSION_HASH_BYTES]) IG_WUR;

/* Forget every session of approver. IG_ERR_IO. */
enum ig_status store_session_end_all(struct store *s,
                                     const char *approver) IG_WUR;

/*
 * Failed sign-ins, counted per key within a kind of key (kind: a short
 * name such as "id" or "addr", [a-z]{1,15}; each kind holds at most
 * rule.max_keys keys, so one kind filling up never pushes out another's).
 * A key is cut at IG_LOGIN_LIMITER_KEY_MAX bytes; a key that is a secret
 * (a device token's id) is hashed by the caller. Times are milliseconds
 * on the wall clock (ig_time_now_ms): replicas on several machines share
 * the counts, and their monotonic clocks differ.
 *
 * A key with rule.max_failures failures must wait before its next try:
 * IG_LOGIN_BACKOFF_FIRST_MS, twice as long after each further failure,
 * never longer than rule.window_ms. Its failures are forgotten
 * window_ms after both its last failure and its wait are over. A success
 * clears the key.
 */
struct store_login_rule {
    int max_failures;  /* >= 1 */
    int64_t window_ms; /* >= 1 */
    size_t max_keys;   /* >= 1: keys of this kind kept */
};

/* The failures of (kind, key) at now (0 once forgotten) into *failures,
   and the milliseconds it must still wait into *wait_ms (0: it may try).
   Read-only. IG_ERR_INVALID (bad kind or rule), IG_ERR_IO. */
enum ig_status store_login_check(struct store *s, const char *kind,
                                 const char *key, int64_t now_ms,
                                 const struct store_login_rule *rule,
                                 int *failures, int64_t *wait_ms) IG_WUR;

/* One more failure of (kind, key) at now_ms, counted atomically across
   replicas; *failures (may be NULL) gets the count it now has. When the
   kind holds rule.max_keys keys and this one is new, a forgotten key
   makes room, else the one whose last failure is oldest.
   IG_ERR_INVALID, IG_ERR_IO. */
enum ig_status store_login_fail(struct store *s, const char *kind,
                                const char *key, int64_t now_ms,
                                const struct store_login_rule *rule,
                                int *failures) IG_WUR;

/* A success: forget (kind, key)'s failures. IG_ERR_INVALID, IG_ERR_IO. */
enum ig_status store_login_clear(struct store *s, const char *kind,
                                 const char *key) IG_WUR;

/*
 * Where the Slack message of an intent's approval is: channel (at most
 * IG_ID_MAX bytes) and ts (at most IG_SLACK_TS_MAX). Put
 * replaces; past IG_SLACK_MESSAGES_MAX messages the oldest (by Slack's
 * ts) are forgotten. Get: IG_ERR_NOTFOUND. Forget: an unknown id is
 * fine. IG_ERR_INVALID (too long), IG_ERR_IO.
 */
enum ig_status store_slack_put(struct store *s, const char *intent_id,
                               const char *channel, const char *ts) IG_WUR;
enum ig_status store_slack_get(struct store *s, const char *intent_id,
                               char channel[IG_ID_MAX + 1],
                               char ts[IG_SLACK_TS_MAX + 1]) IG_WUR;
enum ig_status store_slack_forget(struct store *s,
                                  const char *intent_id) IG_WUR;

/*
 * Votes, one at a time across every replica: held around "read the
 * votes, decide, write" (pdp_approval.c) and the sweeper's expiry, so two
 * approvers voting at once on two replicas cannot both count the votes
 * before either is written. In this process a mutex; with PostgreSQL
 * also a session advisory lock (STORE_PG_LOCK_VOTES) on a connection
 * kept until store_vote_unlock. IG_ERR_IO (the lock could not be taken:
 * nothing is held; the vote must be refused). Unlock only after an
 * IG_OK lock, on the same thread.
 */
enum ig_status store_vote_lock(struct store *s) IG_WUR;
void store_vote_unlock(struct store *s);

#endif
