/*
 * store_pg_shared.c - the state PDP replicas share (store.h) on
 * PostgreSQL. TEMPORARY: refuses until the PostgreSQL base lands.
 */
#include "store_be.h"

enum ig_status
store_pg_session_create(struct store_pg *s, const struct store_session_rec *r,
                        int64_t idle, size_t max_sessions)
{
    (void)s;
    (void)r;
    (void)idle;
    (void)max_sessions;
    return IG_ERR_IO;
}

enum ig_status
store_pg_session_get(struct store_pg *s, const unsigned char *id_hash,
                     int64_t now, int64_t idle, char *approver, char *csrf)
{
    (void)s;
    (void)id_hash;
    (void)now;
    (void)idle;
    (void)approver;
    (void)csrf;
    return IG_ERR_IO;
}

enum ig_status
store_pg_session_end(struct store_pg *s, const unsigned char *id_hash)
{
    (void)s;
    (void)id_hash;
    return IG_ERR_IO;
}

enum ig_status
store_pg_session_end_all(struct store_pg *s, const char *approver)
{
    (void)s;
    (void)approver;
    return IG_ERR_IO;
}

enum ig_status
store_pg_login_check(struct store_pg *s, const char *kind, const char *key,
                     int64_t now_ms, const struct store_login_rule *rule,
                     int *failures, int64_t *wait_ms)
{
    (void)s;
    (void)kind;
    (void)key;
    (void)now_ms;
    (void)rule;
    *failures = 0;
    *wait_ms = 0;
    return IG_ERR_IO;
}

enum ig_status
store_pg_login_fail(struct store_pg *s, const char *kind, const char *key,
                    int64_t now_ms, const struct store_login_rule *rule,
                    int *failures)
{
    (void)s;
    (void)kind;
    (void)key;
    (void)now_ms;
    (void)rule;
    (void)failures;
    return IG_ERR_IO;
}

enum ig_status
store_pg_login_clear(struct store_pg *s, const char *kind, const char *key)
{
    (void)s;
    (void)kind;
    (void)key;
    return IG_ERR_IO;
}

enum ig_status
store_pg_slack_put(struct store_pg *s, const char *intent_id,
                   const char *channel, const char *ts)
{
    (void)s;
    (void)intent_id;
    (void)channel;
    (void)ts;
    return IG_ERR_IO;
}

enum ig_status
store_pg_slack_get(struct store_pg *s, const char *intent_id, char *channel,
                   char *ts)
{
    (void)s;
    (void)intent_id;
    (void)channel;
    (void)ts;
    return IG_ERR_IO;
}

enum ig_status
store_pg_slack_forget(struct store_pg *s, const char *intent_id)
{
    (void)s;
    (void)intent_id;
    return IG_ERR_IO;
}

enum ig_status
store_pg_vote_lock(struct store_pg *s)
{
    (void)s;
    return IG_ERR_IO;
}

void
store_pg_vote_unlock(struct store_pg *s)
{
    (void)s;
}
