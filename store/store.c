/*
 * store.c - store.h's functions, each handed to the backend the store was
 * opened on: PostgreSQL when store_opts.path is a postgresql:// (or
 * postgres://) URL, else the SQLite file. Nothing else here.
 */
#include "store_be.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct store {
    struct store_sq *sq; /* exactly one of the two is set */
    struct store_pg *pg;
    pthread_mutex_t vote_mu; /* store_vote_lock, in this process */
};

int
store_is_postgres(const char *path)
{
    return path != NULL && (strncmp(path, "postgresql://", 13) == 0 ||
                            strncmp(path, "postgres://", 11) == 0);
}

enum ig_status
store_open(const struct store_opts *opts, struct store **out,
           struct ig_err *err)
{
    struct store *s = calloc(1, sizeof(*s));
    enum ig_status st;

    *out = NULL;
    if (s == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    (void)pthread_mutex_init(&s->vote_mu, NULL);
    if (store_is_postgres(opts->path))
        st = store_pg_open(opts, &s->pg, err);
    else
        st = store_sq_open(opts, &s->sq, err);
    if (st != IG_OK) {
        (void)pthread_mutex_destroy(&s->vote_mu);
        free(s);
        return st;
    }
    *out = s;
    return IG_OK;
}

void
store_close(struct store *s)
{
    if (s == NULL)
        return;
    if (s->pg != NULL)
        store_pg_close(s->pg);
    else
        store_sq_close(s->sq);
    (void)pthread_mutex_destroy(&s->vote_mu);
    free(s);
}

int
store_overloaded(struct store *s)
{
    if (s->pg != NULL)
        return store_pg_overloaded(s->pg);
    return store_sq_overloaded(s->sq);
}

size_t
store_queue_depth(struct store *s)
{
    if (s->pg != NULL)
        return store_pg_queue_depth(s->pg);
    return store_sq_queue_depth(s->sq);
}

enum ig_status
store_put_intent(struct store *s, const struct store_intent_rec *r,
                 char **replay)
{
    if (s->pg != NULL)
        return store_pg_put_intent(s->pg, r, replay);
    return store_sq_put_intent(s->sq, r, replay);
}

enum ig_status
store_put_intent_async(struct store *s, const struct store_intent_rec *r,
                       char **replay, store_done_fn done, void *ctx)
{
    if (s->pg != NULL)
        return store_pg_put_intent_async(s->pg, r, replay, done, ctx);
    return store_sq_put_intent_async(s->sq, r, replay, done, ctx);
}

enum ig_status
store_find_idempotent(struct store *s, const char *principal, const char *key,
                      int64_t now, char **replay)
{
    if (s->pg != NULL)
        return store_pg_find_idempotent(s->pg, principal, key, now, replay);
    return store_sq_find_idempotent(s->sq, principal, key, now, replay);
}

enum ig_status
store_get_intent(struct store *s, const char *intent_id, json_t **out)
{
    if (s->pg != NULL)
        return store_pg_get_intent(s->pg, intent_id, out);
    return store_sq_get_intent(s->sq, intent_id, out);
}

enum ig_status
store_get_grant(struct store *s, const char *intent_id, json_t **out)
{
    if (s->pg != NULL)
        return store_pg_get_grant(s->pg, intent_id, out);
    return store_sq_get_grant(s->sq, intent_id, out);
}

enum ig_status
store_redeem(struct store *s, const struct store_redeem_rec *r)
{
    if (s->pg != NULL)
        return store_pg_redeem(s->pg, r);
    return store_sq_redeem(s->sq, r);
}

enum ig_status
store_redeem_async(struct store *s, const struct store_redeem_rec *r,
                   store_done_fn done, void *ctx)
{
    if (s->pg != NULL)
        return store_pg_redeem_async(s->pg, r, done, ctx);
    return store_sq_redeem_async(s->sq, r, done, ctx);
}

enum ig_status
store_put_outcome(struct store *s, const struct store_outcome_rec *r)
{
    if (s->pg != NULL)
        return store_pg_put_outcome(s->pg, r);
    return store_sq_put_outcome(s->sq, r);
}

enum ig_status
store_put_outcome_async(struct store *s, const struct store_outcome_rec *r,
                        store_done_fn done, void *ctx)
{
    if (s->pg != NULL)
        return store_pg_put_outcome_async(s->pg, r, done, ctx);
    return store_sq_put_outcome_async(s->sq, r, done, ctx);
}

int64_t
store_count(struct store *s, const char *key, int64_t window_seconds,
            int64_t now)
{
    if (s->pg != NULL)
        return store_pg_count(s->pg, key, window_seconds, now);
    return store_sq_count(s->sq, key, window_seconds, now);
}

enum ig_status
store_put_vote(struct store *s, const struct store_vote_rec *r)
{
    if (s->pg != NULL)
        return store_pg_put_vote(s->pg, r);
    return store_sq_put_vote(s->sq, r);
}

enum ig_status
store_put_events(struct store *s, const char *const *events, size_t n)
{
    if (s->pg != NULL)
        return store_pg_put_events(s->pg, events, n);
    return store_sq_put_events(s->sq, events, n);
}

enum ig_status
store_open_approvals(struct store *s, int64_t expired_before, json_t **out)
{
    if (s->pg != NULL)
        return store_pg_open_approvals(s->pg, expired_before, out);
    return store_sq_open_approvals(s->sq, expired_before, out);
}

enum ig_status
store_approval_intent(struct store *s, const char *approval_id,
                      char **intent_id)
{
    if (s->pg != NULL)
        return store_pg_approval_intent(s->pg, approval_id, intent_id);
    return store_sq_approval_intent(s->sq, approval_id, intent_id);
}

enum ig_status
store_audit_size(struct store *s, int64_t *out)
{
    if (s->pg != NULL)
        return store_pg_audit_size(s->pg, out);
    return store_sq_audit_size(s->sq, out);
}

enum ig_status
store_audit_head(struct store *s, uint64_t *size,
                 unsigned char root[AUDIT_HASH_BYTES])
{
    if (s->pg != NULL)
        return store_pg_audit_head(s->pg, size, root);
    return store_sq_audit_head(s->sq, size, root);
}

enum ig_status
store_audit_sign(struct store *s, uint64_t *size)
{
    if (s->pg != NULL)
        return store_pg_audit_sign(s->pg, size);
    return store_sq_audit_sign(s->sq, size);
}

enum ig_status
store_checkpoint_get(struct store *s, uint64_t size, char **note,
                     uint64_t *out_size)
{
    if (s->pg != NULL)
        return store_pg_checkpoint_get(s->pg, size, note, out_size);
    return store_sq_checkpoint_get(s->sq, size, note, out_size);
}

enum ig_status
store_audit_leaves(struct store *s, uint64_t start, uint64_t end,
                   size_t max_bytes, struct ig_buf *out, uint64_t *tree_size,
                   uint64_t *count)
{
    if (s->pg != NULL)
        return store_pg_audit_leaves(s->pg, start, end, max_bytes, out,
                                     tree_size, count);
    return store_sq_audit_leaves(s->sq, start, end, max_bytes, out, tree_size,
                                 count);
}

enum ig_status
store_audit_inclusion(struct store *s, uint64_t index, uint64_t size,
                      unsigned char proof[][AUDIT_HASH_BYTES], size_t *n,
                      char **note, uint64_t *out_size)
{
    if (s->pg != NULL)
        return store_pg_audit_inclusion(s->pg, index, size, proof, n, note,
                                        out_size);
    return store_sq_audit_inclusion(s->sq, index, size, proof, n, note,
                                    out_size);
}

enum ig_status
store_audit_consistency(struct store *s, uint64_t old_size, uint64_t new_size,
                        unsigned char proof[][AUDIT_HASH_BYTES], size_t *n)
{
    if (s->pg != NULL)
        return store_pg_audit_consistency(s->pg, old_size, new_size, proof, n);
    return store_sq_audit_consistency(s->sq, old_size, new_size, proof, n);
}

void
store_set_observer(struct store *s, store_commit_observer fn, void *ctx)
{
    if (s->pg != NULL)
        store_pg_set_observer(s->pg, fn, ctx);
    else
        store_sq_set_observer(s->sq, fn, ctx);
}

enum ig_status
store_audit_events(struct store *s, int64_t before, size_t limit,
                   const char *type, const char *intent_id, json_t **out,
                   int64_t *next)
{
    if (s->pg != NULL)
        return store_pg_audit_events(s->pg, before, limit, type, intent_id, out,
                                     next);
    return store_sq_audit_events(s->sq, before, limit, type, intent_id, out,
                                 next);
}

enum ig_status
store_audit_intent_events(struct store *s, const char *intent_id, json_t **out)
{
    if (s->pg != NULL)
        return store_pg_audit_intent_events(s->pg, intent_id, out);
    return store_sq_audit_intent_events(s->sq, intent_id, out);
}

enum ig_status
store_audit_checkpoints(struct store *s, uint64_t max_size, struct ig_buf *out)
{
    if (s->pg != NULL)
        return store_pg_audit_checkpoints(s->pg, max_size, out);
    return store_sq_audit_checkpoints(s->sq, max_size, out);
}

enum ig_status
store_session_create(struct store *s, const struct store_session_rec *r,
                     int64_t idle, size_t max_sessions)
{
    if (s->pg != NULL)
        return store_pg_session_create(s->pg, r, idle, max_sessions);
    return store_sq_session_create(s->sq, r, idle, max_sessions);
}

enum ig_status
store_session_get(struct store *s,
                  const unsigned char id_hash[STORE_SESSION_HASH_BYTES],
                  int64_t now, int64_t idle, char approver[IG_ID_MAX + 1],
                  char cred[STORE_SESSION_CRED_MAX + 1],
                  char csrf[IG_SESSION_CSRF_MAX + 1])
{
    if (s->pg != NULL)
        return store_pg_session_get(s->pg, id_hash, now, idle, approver, cred,
                                    csrf);
    return store_sq_session_get(s->sq, id_hash, now, idle, approver, cred,
                                csrf);
}

enum ig_status
store_session_end(struct store *s,
                  const unsigned char id_hash[STORE_SESSION_HASH_BYTES])
{
    if (s->pg != NULL)
        return store_pg_session_end(s->pg, id_hash);
    return store_sq_session_end(s->sq, id_hash);
}

enum ig_status
store_session_end_all(struct store *s, const char *approver)
{
    if (s->pg != NULL)
        return store_pg_session_end_all(s->pg, approver);
    return store_sq_session_end_all(s->sq, approver);
}

enum ig_status
store_login_check(struct store *s, const char *kind, const char *key,
                  int64_t now_ms, const struct store_login_rule *rule,
                  int *failures, int64_t *wait_ms)
{
    if (s->pg != NULL)
        return store_pg_login_check(s->pg, kind, key, now_ms, rule, failures,
                                    wait_ms);
    return store_sq_login_check(s->sq, kind, key, now_ms, rule, failures,
                                wait_ms);
}

enum ig_status
store_login_fail(struct store *s, const char *kind, const char *key,
                 int64_t now_ms, const struct store_login_rule *rule,
                 int *failures)
{
    if (s->pg != NULL)
        return store_pg_login_fail(s->pg, kind, key, now_ms, rule, failures);
    return store_sq_login_fail(s->sq, kind, key, now_ms, rule, failures);
}

enum ig_status
store_login_clear(struct store *s, const char *kind, const char *key)
{
    if (s->pg != NULL)
        return store_pg_login_clear(s->pg, kind, key);
    return store_sq_login_clear(s->sq, kind, key);
}

enum ig_status
store_slack_put(struct store *s, const char *intent_id, const char *channel,
                const char *ts)
{
    if (s->pg != NULL)
        return store_pg_slack_put(s->pg, intent_id, channel, ts);
    return store_sq_slack_put(s->sq, intent_id, channel, ts);
}

enum ig_status
store_slack_get(struct store *s, const char *intent_id,
                char channel[IG_ID_MAX + 1], char ts[IG_SLACK_TS_MAX + 1])
{
    if (s->pg != NULL)
        return store_pg_slack_get(s->pg, intent_id, channel, ts);
    return store_sq_slack_get(s->sq, intent_id, channel, ts);
}

enum ig_status
store_slack_forget(struct store *s, const char *intent_id)
{
    if (s->pg != NULL)
        return store_pg_slack_forget(s->pg, intent_id);
    return store_sq_slack_forget(s->sq, intent_id);
}

enum ig_status
store_vote_lock(struct store *s)
{
    enum ig_status st = IG_OK;

    (void)pthread_mutex_lock(&s->vote_mu);
    if (s->pg != NULL && (st = store_pg_vote_lock(s->pg)) != IG_OK)
        (void)pthread_mutex_unlock(&s->vote_mu);
    return st;
}

void
store_vote_unlock(struct store *s)
{
    if (s->pg != NULL)
        store_pg_vote_unlock(s->pg);
    (void)pthread_mutex_unlock(&s->vote_mu);
}

struct store_sq *
store_sq_of(struct store *s)
{
    return s->sq;
}

enum ig_status
store_cosig_put(struct store *s, uint64_t size, const char *witness,
                const char *line)
{
    if (s->pg != NULL)
        return store_pg_cosig_put(s->pg, size, witness, line);
    return store_sq_cosig_put(s->sq, size, witness, line);
}

enum ig_status
store_cosig_get(struct store *s, uint64_t size, char **lines)
{
    if (s->pg != NULL)
        return store_pg_cosig_get(s->pg, size, lines);
    return store_sq_cosig_get(s->sq, size, lines);
}

enum ig_status
store_cosig_latest(struct store *s, const char *witness, uint64_t *size)
{
    if (s->pg != NULL)
        return store_pg_cosig_latest(s->pg, witness, size);
    return store_sq_cosig_latest(s->sq, witness, size);
}
