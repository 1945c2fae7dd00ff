/*
 * pdp_config_audit.c - the [audit] section: the signed audit log.
 *
 *   [audit]
 *   name = intentgate.local/audit     origin and checkpoint key name
 *   key = keys/audit.key              k4.secret; none: no checkpoints
 *   checkpoint_every = 1000           leaves between checkpoints
 *   checkpoint_interval = 60          seconds (when the log grew)
 *   hmac_key = keys/audit-hmac.key    32 random bytes, base64url, 0600
 *   redact = /card_number, /a/b       JSON pointers into params
 *   anchor = /var/lib/ig-anchor/cp   the latest signed checkpoint, kept
 *                                     outside the database (default: the
 *                                     key's path + ".checkpoint")
 *
 * Every key is optional. redact needs hmac_key (the redacted values are
 * HMACs under it); anchor needs key (it holds what the key signed). The
 * key files are read by the server at start, not here: the config stays
 * free of secrets.
 */
#include "pdp_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "audit_redact.h"
#include "ig_limits.h"
#include "ig_text.h"

#define DEFAULT_NAME "intentgate.local/audit"

/* The anchor's default name: the audit key's path with this appended. */
#define ANCHOR_SUFFIX ".checkpoint"

static int
set_name(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    if (!audit_name_valid(v))
        return pdp_cfg_error(p, "name must be a log name without spaces or "
                                "'+' (like example.com/audit)");
    return pdp_cfg_string(p, k->name, v, &p->c->audit_name);
}

static int
set_redact(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    struct pdp_config *c = p->c;
    size_t i, j;

    if (pdp_cfg_list(p, k->name, v, &c->redact, &c->nredact) != 0)
        return -1;
    if (c->nredact > IG_AUDIT_REDACT_MAX)
        return pdp_cfg_error(p, "redact names more than %d pointers",
                             IG_AUDIT_REDACT_MAX);
    for (i = 0; i < c->nredact; i++) {
        if (!audit_pointer_valid(c->redact[i]))
            return pdp_cfg_error(p,
                                 "redact: %s is not a JSON pointer into "
                                 "params (like /card_number or "
                                 "/account/iban)",
                                 c->redact[i]);
        for (j = 0; j < i; j++)
            if (strcmp(c->redact[i], c->redact[j]) == 0)
                return pdp_cfg_error(p, "redact names %s twice", c->redact[i]);
    }
    return 0;
}

static const struct pdp_cfg_key audit_keys[] = {
    PDP_CFG_KEY("name", set_name),
    PDP_CFG_STR("key", audit_key),
    PDP_CFG_I64("checkpoint_every", checkpoint_every, 1,
                IG_AUDIT_CHECKPOINT_EVERY_MAX),
    PDP_CFG_I64("checkpoint_interval", checkpoint_interval, 1,
                IG_AUDIT_CHECKPOINT_INTERVAL_MAX),
    PDP_CFG_STR("hmac_key", audit_hmac_key),
    PDP_CFG_KEY("redact", set_redact),
    PDP_CFG_STR("anchor", audit_anchor),
};

int
pdp_cfg_audit_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    return pdp_cfg_dispatch(p, audit_keys, PDP_CFG_NKEYS(audit_keys),
                            &p->seen_sec, key, v);
}

/* No anchor given: beside the (resolved) audit key. */
static int
default_anchor(struct pdp_cfg_parse *p)
{
    struct pdp_config *c = p->c;
    size_t n;

    if (c->audit_anchor != NULL || c->audit_key == NULL)
        return 0;
    n = strlen(c->audit_key) + sizeof(ANCHOR_SUFFIX);
    if ((c->audit_anchor = malloc(n)) == NULL)
        return pdp_cfg_error(p, "out of memory");
    (void)snprintf(c->audit_anchor, n, "%s" ANCHOR_SUFFIX, c->audit_key);
    return 0;
}

int
pdp_cfg_audit_finish(struct pdp_cfg_parse *p)
{
    struct pdp_config *c = p->c;

    if (c->audit_name == NULL && (c->audit_name = strdup(DEFAULT_NAME)) == NULL)
        return pdp_cfg_error(p, "out of memory");
    if (c->checkpoint_every == 0)
        c->checkpoint_every = 1000;
    if (c->checkpoint_interval == 0)
        c->checkpoint_interval = 60;
    if (c->nredact > 0 && c->audit_hmac_key == NULL)
        return pdp_cfg_error(p, "[audit] redact needs hmac_key (the redacted "
                                "values are HMACs under it)");
    if (c->audit_anchor != NULL && c->audit_key == NULL)
        return pdp_cfg_error(p,
                             "[audit] anchor needs key (the anchor holds the "
                             "latest checkpoint the key signed)");
    if (pdp_cfg_resolve(p, &c->audit_key) != 0 ||
        pdp_cfg_resolve(p, &c->audit_hmac_key) != 0 ||
        pdp_cfg_resolve(p, &c->audit_anchor) != 0)
        return -1;
    return default_anchor(p);
}

void
pdp_cfg_audit_free(struct pdp_config *c)
{
    free(c->audit_name);
    free(c->audit_key);
    free(c->audit_hmac_key);
    free(c->audit_anchor);
    ig_str_list_free(c->redact, c->nredact);
}
