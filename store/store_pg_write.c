/* TEMPORARY stubs, replaced by the writes (helper core) (issue 17). */
#include "store_pg_int.h"

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
