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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "audit_redact.h"
#include "ig_limits.h"

#define DEFAULT_NAME "intentgate.local/audit"

enum audit_key {
    A_NAME,
    A_KEY,
    A_EVERY,
    A_INTERVAL,
    A_HMAC,
    A_REDACT,
    A_ANCHOR,
    A_NKEYS
};

static const char *const audit_keys[A_NKEYS] = {
    "name",   "key",   "checkpoint_every", "checkpoint_interval", "hmac_key",
    "redact", "anchor"};

/* The anchor's default name: the audit key's path with this appended. */
#define ANCHOR_SUFFIX ".checkpoint"

#define SEEN_BIT 4u /* p->sections: [audit] seen */

int
cfg_audit_begin(struct cfg_parse *p, const char *id)
{
    if (id != NULL)
        return cfg_error(p, "[audit] takes no id");
    if (p->sections & SEEN_BIT)
        return cfg_error(p, "[audit] appears twice");
    p->sections |= SEEN_BIT;
    p->seen_sec = 0;
    p->cur_line = p->line;
    p->sec = SEC_AUDIT;
    return 0;
}

static int
set_redact(struct cfg_parse *p, const char *key, const char *v)
{
    struct pdp_config *c = p->c;
    size_t i, j;

    if (cfg_list(p, key, v, &c->redact, &c->nredact) != 0)
        return -1;
    if (c->nredact > IG_AUDIT_REDACT_MAX)
        return cfg_error(p, "redact names more than %d pointers",
                         IG_AUDIT_REDACT_MAX);
    for (i = 0; i < c->nredact; i++) {
        if (!audit_pointer_valid(c->redact[i]))
            return cfg_error(p,
                             "redact: %s is not a JSON pointer into params "
                             "(like /card_number or /account/iban)",
                             c->redact[i]);
        for (j = 0; j < i; j++)
            if (strcmp(c->redact[i], c->redact[j]) == 0)
                return cfg_error(p, "redact names %s twice", c->redact[i]);
    }
    return 0;
}

int
cfg_audit_set(struct cfg_parse *p, const char *key, const char *v)
{
    struct pdp_config *c = p->c;
    unsigned k;

    for (k = 0; k < A_NKEYS && strcmp(key, audit_keys[k]) != 0; k++)
        ;
    if (k == A_NKEYS)
        return cfg_error(p, "unknown key %s in [audit]", key);
    if (p->seen_sec & (1u << k))
        return cfg_error(p, "duplicate key %s", key);
    p->seen_sec |= 1u << k;
    switch ((enum audit_key)k) {
    case A_NAME:
        if (!audit_name_valid(v))
            return cfg_error(p, "name must be a log name without spaces or "
                                "'+' (like example.com/audit)");
        return cfg_string(p, key, v, &c->audit_name);
    case A_KEY:
        return cfg_string(p, key, v, &c->audit_key);
    case A_EVERY:
        return cfg_int(p, key, v, 1, IG_AUDIT_CHECKPOINT_EVERY_MAX,
                       &c->checkpoint_every);
    case A_INTERVAL:
        return cfg_int(p, key, v, 1, IG_AUDIT_CHECKPOINT_INTERVAL_MAX,
                       &c->checkpoint_interval);
    case A_HMAC:
        return cfg_string(p, key, v, &c->audit_hmac_key);
    case A_REDACT:
        return set_redact(p, key, v);
    case A_ANCHOR:
        return cfg_string(p, key, v, &c->audit_anchor);
    case A_NKEYS:
        break;
    }
    return cfg_error(p, "internal error");
}

/* No anchor given: beside the (resolved) audit key. */
static int
default_anchor(struct cfg_parse *p)
{
    struct pdp_config *c = p->c;
    size_t n;

    if (c->audit_anchor != NULL || c->audit_key == NULL)
        return 0;
    n = strlen(c->audit_key) + sizeof(ANCHOR_SUFFIX);
    if ((c->audit_anchor = malloc(n)) == NULL)
        return cfg_error(p, "out of memory");
    (void)snprintf(c->audit_anchor, n, "%s" ANCHOR_SUFFIX, c->audit_key);
    return 0;
}

int
cfg_audit_finish(struct cfg_parse *p, const char *dir)
{
    struct pdp_config *c = p->c;

    if (c->audit_name == NULL && (c->audit_name = strdup(DEFAULT_NAME)) == NULL)
        return cfg_error(p, "out of memory");
    if (c->checkpoint_every == 0)
        c->checkpoint_every = 1000;
    if (c->checkpoint_interval == 0)
        c->checkpoint_interval = 60;
    if (c->nredact > 0 && c->audit_hmac_key == NULL)
        return cfg_error(p, "[audit] redact needs hmac_key (the redacted "
                            "values are HMACs under it)");
    if (c->audit_anchor != NULL && c->audit_key == NULL)
        return cfg_error(p, "[audit] anchor needs key (the anchor holds the "
                            "latest checkpoint the key signed)");
    if (cfg_resolve(p, dir, &c->audit_key) != 0 ||
        cfg_resolve(p, dir, &c->audit_hmac_key) != 0 ||
        cfg_resolve(p, dir, &c->audit_anchor) != 0)
        return -1;
    return default_anchor(p);
}

void
cfg_audit_free(struct pdp_config *c)
{
    size_t i;

    free(c->audit_name);
    free(c->audit_key);
    free(c->audit_hmac_key);
    free(c->audit_anchor);
    for (i = 0; i < c->nredact; i++)
        free(c->redact[i]);
    free(c->redact);
}
