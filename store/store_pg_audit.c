/* TEMPORARY stubs, replaced by the sequencer (helper seq) (issue 17). */
#include "store_pg_int.h"

enum ig_status
store_pg_audit_start(struct store_pg *s, struct ig_err *err)
{
    (void)s;
    (void)err;
    return IG_OK;
}

void
store_pg_audit_stop(struct store_pg *s)
{
    (void)s;
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
