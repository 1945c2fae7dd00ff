/* TEMPORARY stub: replaced by the PostgreSQL backend (issue 17). */
#include "store_be.h"

enum ig_status
store_pg_open(const struct store_opts *opts, struct store_pg **out,
              struct ig_err *err)
{
    (void)opts;
    (void)out;
    (void)err;
    *out = NULL;
    return ig_err_set(err, IG_ERR_IO, "PostgreSQL store: not built yet");
}

void
store_pg_close(struct store_pg *s)
{
    (void)s;
}

int
store_pg_overloaded(struct store_pg *s)
{
    (void)s;
    return 0;
}

size_t
store_pg_queue_depth(struct store_pg *s)
{
    (void)s;
    return 0;
}

enum ig_status
store_pg_put_intent(struct store_pg *s, const struct store_intent_rec *r,
                    char **replay)
{
    (void)s;
    (void)r;
    (void)replay;
    return IG_ERR_IO;
}

enum ig_status
store_pg_put_intent_async(struct store_pg *s, const struct store_intent_rec *r,
                          char **replay, store_done_fn done, void *ctx)
{
    (void)s;
    (void)r;
    (void)replay;
    (void)done;
    (void)ctx;
    return IG_ERR_IO;
}

enum ig_status
store_pg_find_idempotent(struct store_pg *s, const char *principal,
                         const char *key, int64_t now, char **replay)
{
    (void)s;
    (void)principal;
    (void)key;
    (void)now;
    (void)replay;
    return IG_ERR_IO;
}

enum ig_status
store_pg_get_intent(struct store_pg *s, const char *intent_id, json_t **out)
{
    (void)s;
    (void)intent_id;
    (void)out;
    return IG_ERR_IO;
}

enum ig_status
store_pg_get_grant(struct store_pg *s, const char *intent_id, json_t **out)
{
    (void)s;
    (void)intent_id;
    (void)out;
    return IG_ERR_IO;
}

enum ig_status
store_pg_redeem(struct store_pg *s, const struct store_redeem_rec *r)
{
    (void)s;
    (void)r;
    return IG_ERR_IO;
}

enum ig_status
store_pg_redeem_async(struct store_pg *s, const struct store_redeem_rec *r,
                      store_done_fn done, void *ctx)
{
    (void)s;
    (void)r;
    (void)done;
    (void)ctx;
    return IG_ERR_IO;
}

enum ig_status
store_pg_put_outcome(struct store_pg *s, const struct store_outcome_rec *r)
{
    (void)s;
    (void)r;
    return IG_ERR_IO;
}

enum ig_status
store_pg_put_outcome_async(struct store_pg *s,
                           const struct store_outcome_rec *r,
                           store_done_fn done, void *ctx)
{
    (void)s;
    (void)r;
    (void)done;
    (void)ctx;
    return IG_ERR_IO;
}

int64_t
store_pg_count(struct store_pg *s, const char *key, int64_t window_seconds,
               int64_t now)
{
    (void)s;
    (void)key;
    (void)window_seconds;
    (void)now;
    return -1;
}

enum ig_status
store_pg_put_vote(struct store_pg *s, const struct store_vote_rec *r)
{
    (void)s;
    (void)r;
    return IG_ERR_IO;
}

enum ig_status
store_pg_put_events(struct store_pg *s, const char *const *events, size_t n)
{
    (void)s;
    (void)events;
    (void)n;
    return IG_ERR_IO;
}

enum ig_status
store_pg_open_approvals(struct store_pg *s, int64_t expired_before,
                        json_t **out)
{
    (void)s;
    (void)expired_before;
    (void)out;
    return IG_ERR_IO;
}

enum ig_status
store_pg_approval_intent(struct store_pg *s, const char *approval_id,
                         char **intent_id)
{
    (void)s;
    (void)approval_id;
    (void)intent_id;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_size(struct store_pg *s, int64_t *out)
{
    (void)s;
    (void)out;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_head(struct store_pg *s, uint64_t *size,
                    unsigned char root[AUDIT_HASH_BYTES])
{
    (void)s;
    (void)size;
    (void)root;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_sign(struct store_pg *s, uint64_t *size)
{
    (void)s;
    (void)size;
    return IG_ERR_IO;
}

enum ig_status
store_pg_checkpoint_get(struct store_pg *s, uint64_t size, char **note,
                        uint64_t *out_size)
{
    (void)s;
    (void)size;
    (void)note;
    (void)out_size;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_leaves(struct store_pg *s, uint64_t start, uint64_t end,
                      size_t max_bytes, struct ig_buf *out, uint64_t *tree_size,
                      uint64_t *count)
{
    (void)s;
    (void)start;
    (void)end;
    (void)max_bytes;
    (void)out;
    (void)tree_size;
    (void)count;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_inclusion(struct store_pg *s, uint64_t index, uint64_t size,
                         unsigned char proof[][AUDIT_HASH_BYTES], size_t *n,
                         char **note, uint64_t *out_size)
{
    (void)s;
    (void)index;
    (void)size;
    (void)proof;
    (void)n;
    (void)note;
    (void)out_size;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_consistency(struct store_pg *s, uint64_t old_size,
                           uint64_t new_size,
                           unsigned char proof[][AUDIT_HASH_BYTES], size_t *n)
{
    (void)s;
    (void)old_size;
    (void)new_size;
    (void)proof;
    (void)n;
    return IG_ERR_IO;
}

void
store_pg_set_observer(struct store_pg *s, store_commit_observer fn, void *ctx)
{
    (void)s;
    (void)fn;
    (void)ctx;
}

enum ig_status
store_pg_audit_events(struct store_pg *s, int64_t before, size_t limit,
                      const char *type, const char *intent_id, json_t **out,
                      int64_t *next)
{
    (void)s;
    (void)before;
    (void)limit;
    (void)type;
    (void)intent_id;
    (void)out;
    (void)next;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_intent_events(struct store_pg *s, const char *intent_id,
                             json_t **out)
{
    (void)s;
    (void)intent_id;
    (void)out;
    return IG_ERR_IO;
}

enum ig_status
store_pg_audit_checkpoints(struct store_pg *s, uint64_t max_size,
                           struct ig_buf *out)
{
    (void)s;
    (void)max_size;
    (void)out;
    return IG_ERR_IO;
}
