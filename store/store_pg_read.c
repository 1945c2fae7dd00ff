/* TEMPORARY stubs, replaced by the reads (helper core) (issue 17). */
#include "store_pg_int.h"

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
