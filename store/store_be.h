/*
 * store_be.h - the two backends behind store.h: store_sq_* (SQLite,
 * store_sqlite.c and the files of store_int.h) and store_pg_* (PostgreSQL,
 * store_pg_int.h). Each function is its store.h namesake on the backend's
 * own struct; store.c picks one by the database named in store_opts.path.
 */
#ifndef STORE_BE_H
#define STORE_BE_H

#include "store.h"
#include "store_audit_view.h"

struct store_sq;
struct store_pg;

/* SQLite */
enum ig_status store_sq_open(const struct store_opts *opts,
                             struct store_sq **out, struct ig_err *err) IG_WUR;
void store_sq_close(struct store_sq *s);
int store_sq_overloaded(struct store_sq *s);
size_t store_sq_queue_depth(struct store_sq *s);
enum ig_status store_sq_put_intent(struct store_sq *s,
                                   const struct store_intent_rec *r,
                                   char **replay) IG_WUR;
enum ig_status store_sq_put_intent_async(struct store_sq *s,
                                         const struct store_intent_rec *r,
                                         char **replay, store_done_fn done,
                                         void *ctx) IG_WUR;
enum ig_status store_sq_find_idempotent(struct store_sq *s,
                                        const char *principal, const char *key,
                                        int64_t now, char **replay) IG_WUR;
enum ig_status store_sq_get_intent(struct store_sq *s, const char *intent_id,
                                   json_t **out) IG_WUR;
enum ig_status store_sq_get_grant(struct store_sq *s, const char *intent_id,
                                  json_t **out) IG_WUR;
enum ig_status store_sq_redeem(struct store_sq *s,
                               const struct store_redeem_rec *r) IG_WUR;
enum ig_status store_sq_redeem_async(struct store_sq *s,
                                     const struct store_redeem_rec *r,
                                     store_done_fn done, void *ctx) IG_WUR;
enum ig_status store_sq_put_outcome(struct store_sq *s,
                                    const struct store_outcome_rec *r) IG_WUR;
enum ig_status store_sq_put_outcome_async(struct store_sq *s,
                                          const struct store_outcome_rec *r,
                                          store_done_fn done, void *ctx) IG_WUR;
int64_t store_sq_count(struct store_sq *s, const char *key,
                       int64_t window_seconds, int64_t now);
enum ig_status store_sq_put_vote(struct store_sq *s,
                                 const struct store_vote_rec *r) IG_WUR;
enum ig_status store_sq_put_events(struct store_sq *s,
                                   const char *const *events, size_t n) IG_WUR;
enum ig_status store_sq_open_approvals(struct store_sq *s,
                                       int64_t expired_before,
                                       json_t **out) IG_WUR;
enum ig_status store_sq_approval_intent(struct store_sq *s,
                                        const char *approval_id,
                                        char **intent_id) IG_WUR;
enum ig_status store_sq_audit_size(struct store_sq *s, int64_t *out) IG_WUR;
enum ig_status store_sq_audit_head(struct store_sq *s, uint64_t *size,
                                   unsigned char root[AUDIT_HASH_BYTES]) IG_WUR;
enum ig_status store_sq_audit_sign(struct store_sq *s, uint64_t *size) IG_WUR;
enum ig_status store_sq_checkpoint_get(struct store_sq *s, uint64_t size,
                                       char **note, uint64_t *out_size) IG_WUR;
enum ig_status store_sq_audit_leaves(struct store_sq *s, uint64_t start,
                                     uint64_t end, size_t max_bytes,
                                     struct ig_buf *out, uint64_t *tree_size,
                                     uint64_t *count) IG_WUR;
enum ig_status store_sq_audit_inclusion(struct store_sq *s, uint64_t index,
                                        uint64_t size,
                                        unsigned char proof[][AUDIT_HASH_BYTES],
                                        size_t *n, char **note,
                                        uint64_t *out_size) IG_WUR;
enum ig_status store_sq_audit_consistency(
    struct store_sq *s, uint64_t old_size, uint64_t new_size,
    unsigned char proof[][AUDIT_HASH_BYTES], size_t *n) IG_WUR;
void store_sq_set_observer(struct store_sq *s, store_commit_observer fn,
                           void *ctx);
enum ig_status store_sq_audit_events(struct store_sq *s, int64_t before,
                                     size_t limit, const char *type,
                                     const char *intent_id, json_t **out,
                                     int64_t *next) IG_WUR;
enum ig_status store_sq_audit_intent_events(struct store_sq *s,
                                            const char *intent_id,
                                            json_t **out) IG_WUR;
enum ig_status store_sq_audit_checkpoints(struct store_sq *s, uint64_t max_size,
                                          struct ig_buf *out) IG_WUR;

/* PostgreSQL */
enum ig_status store_pg_open(const struct store_opts *opts,
                             struct store_pg **out, struct ig_err *err) IG_WUR;
void store_pg_close(struct store_pg *s);
int store_pg_overloaded(struct store_pg *s);
size_t store_pg_queue_depth(struct store_pg *s);
enum ig_status store_pg_put_intent(struct store_pg *s,
                                   const struct store_intent_rec *r,
                                   char **replay) IG_WUR;
enum ig_status store_pg_put_intent_async(struct store_pg *s,
                                         const struct store_intent_rec *r,
                                         char **replay, store_done_fn done,
                                         void *ctx) IG_WUR;
enum ig_status store_pg_find_idempotent(struct store_pg *s,
                                        const char *principal, const char *key,
                                        int64_t now, char **replay) IG_WUR;
enum ig_status store_pg_get_intent(struct store_pg *s, const char *intent_id,
                                   json_t **out) IG_WUR;
enum ig_status store_pg_get_grant(struct store_pg *s, const char *intent_id,
                                  json_t **out) IG_WUR;
enum ig_status store_pg_redeem(struct store_pg *s,
                               const struct store_redeem_rec *r) IG_WUR;
enum ig_status store_pg_redeem_async(struct store_pg *s,
                                     const struct store_redeem_rec *r,
                                     store_done_fn done, void *ctx) IG_WUR;
enum ig_status store_pg_put_outcome(struct store_pg *s,
                                    const struct store_outcome_rec *r) IG_WUR;
enum ig_status store_pg_put_outcome_async(struct store_pg *s,
                                          const struct store_outcome_rec *r,
                                          store_done_fn done, void *ctx) IG_WUR;
int64_t store_pg_count(struct store_pg *s, const char *key,
                       int64_t window_seconds, int64_t now);
enum ig_status store_pg_put_vote(struct store_pg *s,
                                 const struct store_vote_rec *r) IG_WUR;
enum ig_status store_pg_put_events(struct store_pg *s,
                                   const char *const *events, size_t n) IG_WUR;
enum ig_status store_pg_open_approvals(struct store_pg *s,
                                       int64_t expired_before,
                                       json_t **out) IG_WUR;
enum ig_status store_pg_approval_intent(struct store_pg *s,
                                        const char *approval_id,
                                        char **intent_id) IG_WUR;
enum ig_status store_pg_audit_size(struct store_pg *s, int64_t *out) IG_WUR;
enum ig_status store_pg_audit_head(struct store_pg *s, uint64_t *size,
                                   unsigned char root[AUDIT_HASH_BYTES]) IG_WUR;
enum ig_status store_pg_audit_sign(struct store_pg *s, uint64_t *size) IG_WUR;
enum ig_status store_pg_checkpoint_get(struct store_pg *s, uint64_t size,
                                       char **note, uint64_t *out_size) IG_WUR;
enum ig_status store_pg_audit_leaves(struct store_pg *s, uint64_t start,
                                     uint64_t end, size_t max_bytes,
                                     struct ig_buf *out, uint64_t *tree_size,
                                     uint64_t *count) IG_WUR;
enum ig_status store_pg_audit_inclusion(struct store_pg *s, uint64_t index,
                                        uint64_t size,
                                        unsigned char proof[][AUDIT_HASH_BYTES],
                                        size_t *n, char **note,
                                        uint64_t *out_size) IG_WUR;
enum ig_status store_pg_audit_consistency(
    struct store_pg *s, uint64_t old_size, uint64_t new_size,
    unsigned char proof[][AUDIT_HASH_BYTES], size_t *n) IG_WUR;
void store_pg_set_observer(struct store_pg *s, store_commit_observer fn,
                           void *ctx);
enum ig_status store_pg_audit_events(struct store_pg *s, int64_t before,
                                     size_t limit, const char *type,
                                     const char *intent_id, json_t **out,
                                     int64_t *next) IG_WUR;
enum ig_status store_pg_audit_intent_events(struct store_pg *s,
                                            const char *intent_id,
                                            json_t **out) IG_WUR;
enum ig_status store_pg_audit_checkpoints(struct store_pg *s, uint64_t max_size,
                                          struct ig_buf *out) IG_WUR;

/* Witness cosignatures: SQLite (store_cosig.c), PostgreSQL
   (store_pg_cosig.c). */
enum ig_status store_sq_cosig_put(struct store_sq *s, uint64_t size,
                                  const char *witness, const char *line) IG_WUR;
enum ig_status store_sq_cosig_get(struct store_sq *s, uint64_t size,
                                  char **lines) IG_WUR;
enum ig_status store_sq_cosig_latest(struct store_sq *s, const char *witness,
                                     uint64_t *size) IG_WUR;
enum ig_status store_pg_cosig_put(struct store_pg *s, uint64_t size,
                                  const char *witness, const char *line) IG_WUR;
enum ig_status store_pg_cosig_get(struct store_pg *s, uint64_t size,
                                  char **lines) IG_WUR;
enum ig_status store_pg_cosig_latest(struct store_pg *s, const char *witness,
                                     uint64_t *size) IG_WUR;
/* store_cosig.c, for both backends: 1 when witness is a valid key name
   and line one cosignature line by it, as store_cosig_put wants. */
int store_cosig_line_ok(const char *witness, const char *line);

/* SQLite: the shared state (store_shared.c) */
enum ig_status store_sq_session_create(struct store_sq *s,
                                       const struct store_session_rec *r,
                                       int64_t idle,
                                       size_t max_sessions) IG_WUR;
enum ig_status store_sq_session_get(struct store_sq *s,
                                    const unsigned char *id_hash, int64_t now,
                                    int64_t idle, char *approver, char *cred,
                                    char *csrf) IG_WUR;
enum ig_status store_sq_session_end(struct store_sq *s,
                                    const unsigned char *id_hash) IG_WUR;
enum ig_status store_sq_session_end_all(struct store_sq *s,
                                        const char *approver) IG_WUR;
enum ig_status store_sq_login_check(struct store_sq *s, const char *kind,
                                    const char *key, int64_t now_ms,
                                    const struct store_login_rule *rule,
                                    int *failures, int64_t *wait_ms) IG_WUR;
enum ig_status store_sq_login_fail(struct store_sq *s, const char *kind,
                                   const char *key, int64_t now_ms,
                                   const struct store_login_rule *rule,
                                   int *failures) IG_WUR;
enum ig_status store_sq_login_clear(struct store_sq *s, const char *kind,
                                    const char *key) IG_WUR;
enum ig_status store_sq_slack_put(struct store_sq *s, const char *intent_id,
                                  const char *channel, const char *ts) IG_WUR;
enum ig_status store_sq_slack_get(struct store_sq *s, const char *intent_id,
                                  char *channel, char *ts) IG_WUR;
enum ig_status store_sq_slack_forget(struct store_sq *s,
                                     const char *intent_id) IG_WUR;
/* PostgreSQL: the shared state (store_pg_shared.c) */
enum ig_status store_pg_session_create(struct store_pg *s,
                                       const struct store_session_rec *r,
                                       int64_t idle,
                                       size_t max_sessions) IG_WUR;
enum ig_status store_pg_session_get(struct store_pg *s,
                                    const unsigned char *id_hash, int64_t now,
                                    int64_t idle, char *approver, char *cred,
                                    char *csrf) IG_WUR;
enum ig_status store_pg_session_end(struct store_pg *s,
                                    const unsigned char *id_hash) IG_WUR;
enum ig_status store_pg_session_end_all(struct store_pg *s,
                                        const char *approver) IG_WUR;
enum ig_status store_pg_login_check(struct store_pg *s, const char *kind,
                                    const char *key, int64_t now_ms,
                                    const struct store_login_rule *rule,
                                    int *failures, int64_t *wait_ms) IG_WUR;
enum ig_status store_pg_login_fail(struct store_pg *s, const char *kind,
                                   const char *key, int64_t now_ms,
                                   const struct store_login_rule *rule,
                                   int *failures) IG_WUR;
enum ig_status store_pg_login_clear(struct store_pg *s, const char *kind,
                                    const char *key) IG_WUR;
enum ig_status store_pg_slack_put(struct store_pg *s, const char *intent_id,
                                  const char *channel, const char *ts) IG_WUR;
enum ig_status store_pg_slack_get(struct store_pg *s, const char *intent_id,
                                  char *channel, char *ts) IG_WUR;
enum ig_status store_pg_slack_forget(struct store_pg *s,
                                     const char *intent_id) IG_WUR;
/* PostgreSQL only (SQLite needs no more than store.c's mutex): the
   advisory lock STORE_PG_LOCK_VOTES on a connection kept until unlock. */
enum ig_status store_pg_vote_lock(struct store_pg *s) IG_WUR;
void store_pg_vote_unlock(struct store_pg *s);

/* The SQLite backend of s (NULL when s is on PostgreSQL): for the unit
   tests that drive the writer thread directly. */
struct store_sq *store_sq_of(struct store *s);

/* store_shared.c: close the shared state's connection (store_sq_close). */
void store_sq_shared_close(struct store_sq *s);

/* store_shared.c, for both backends: the names and checks of the shared
   state (store.h), so that both say the same. */
#define STORE_LOGIN_KIND_MAX 15
/* A login key as stored (kind ":" key, the key cut at
   IG_LOGIN_LIMITER_KEY_MAX), and the range [lo, hi) of its kind. */
struct store_login_names {
    char key[STORE_LOGIN_KIND_MAX + 1 + IG_LOGIN_LIMITER_KEY_MAX + 1];
    char lo[STORE_LOGIN_KIND_MAX + 2], hi[STORE_LOGIN_KIND_MAX + 2];
};
/* 0, or -1 when kind is not [a-z]{1,15} or key is NULL. */
int store_login_names(const char *kind, const char *key,
                      struct store_login_names *out);
/* 1 when the rule's numbers are in range. */
int store_login_rule_ok(const struct store_login_rule *r);
/* 1 when a new session's fields are there and fit, idle and
   max_sessions >= 1. */
int store_session_rec_ok(const struct store_session_rec *r, int64_t idle,
                         size_t max_sessions);
/* 1 when the Slack message's fields are there and fit. */
int store_slack_ok(const char *intent_id, const char *channel, const char *ts);
/* A session hash as stored: lowercase hex. */
void store_shared_hex(const unsigned char h[STORE_SESSION_HASH_BYTES],
                      char out[2 * STORE_SESSION_HASH_BYTES + 1]);
/* How often a session's last use is written back (store.h). */
int64_t store_shared_touch_every(int64_t idle);

#endif
