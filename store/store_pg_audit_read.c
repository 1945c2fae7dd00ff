/* TEMPORARY stubs, replaced by the audit reads (helper read) (issue 17). */
#include "store_pg_int.h"

enum ig_status
store_pg_audit_settle(struct store_pg *s, int ms)
{
    (void)s;
    (void)ms;
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
