/*
 * pdp_config.c - read and validate the PDP's INI-style configuration.
 *
 * The INI reader (core/ig_ini.c) hands over each section header and each
 * "key = value" in file order. A header is looked up by name in the table
 * of section kinds below, which says whether it takes an id, whether it may
 * appear twice, and which functions begin it, set its keys and check it
 * when it ends; each section's keys are again a table looked up by name
 * (pdp_config_int.h). Unknown keys, duplicate keys, bad values and
 * incomplete sections are errors that name the file and line. Defaults are
 * set before the pass; whole-file checks and paths made relative to the
 * file's directory come after it.
 */
#include "pdp_config.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_hash.h"
#include "ig_ini.h"
#include "ig_limits.h"
#include "ig_text.h"
#include "pdp_config_int.h"

static const struct pdp_cfg_section sections[] = {
    {"policy", 0, 0, NULL, pdp_cfg_policy_set, NULL},
    {"agent", 1, 0, pdp_cfg_principal_begin, pdp_cfg_principal_set,
     pdp_cfg_principal_end},
    {"executor", 1, 0, pdp_cfg_principal_begin, pdp_cfg_principal_set,
     pdp_cfg_principal_end},
    {"admin", 1, 0, pdp_cfg_principal_begin, pdp_cfg_principal_set,
     pdp_cfg_principal_end},
    {"auditor", 1, 0, pdp_cfg_principal_begin, pdp_cfg_principal_set,
     pdp_cfg_principal_end},
    {"approver", 1, 0, pdp_cfg_approver_begin, pdp_cfg_approver_set,
     pdp_cfg_approver_end},
    {"approvals", 0, 1, NULL, pdp_cfg_approvals_set, NULL},
    {"slack", 0, 1, pdp_cfg_slack_begin, pdp_cfg_slack_set, NULL},
    {"audit", 0, 1, NULL, pdp_cfg_audit_set, NULL},
    {"limits", 0, 1, NULL, pdp_cfg_limits_set, NULL},
    {"witness", 1, 0, pdp_cfg_witness_begin, pdp_cfg_witness_set,
     pdp_cfg_witness_end},
};

#define NSECTIONS (sizeof(sections) / sizeof(*sections))

void
pdp_config_free(struct pdp_config *c)
{
    if (c == NULL)
        return;
    free(c->path);
    free(c->listen_host);
    free(c->database);
    free(c->signing_key);
    free(c->policy_dir);
    free(c->shadow_policy_dir);
    free(c->issuer);
    ig_str_list_free(c->public_keys, c->npublic_keys);
    json_decref(c->policy_settings);
    pdp_cfg_principals_free(c);
    pdp_cfg_appr_free(c);
    pdp_cfg_audit_free(c);
    pdp_cfg_witness_free(c);
    free(c->trusted_proxies);
    free(c);
}

static struct pdp_config *
defaults(const char *path)
{
    struct pdp_config *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    c->path = strdup(path);
    c->listen_host = strdup("127.0.0.1");
    c->issuer = strdup("intentgate");
    c->policy_settings = json_object();
    if (c->path == NULL || c->listen_host == NULL || c->issuer == NULL ||
        c->policy_settings == NULL) {
        pdp_config_free(c);
        return NULL;
    }
    c->listen_port = 8700;
    c->intent_ttl = 60;
    c->intent_ttl_max = 300;
    c->grant_ttl = 30;
    c->approval_ttl = 900;
    c->approval_quorum = 1;
    c->session_idle = 900;
    c->session_max = 28800;
    c->login_max_failures = 5;
    c->login_window = 300;
    c->threads = 2;
    c->synchronous_full = 1;
    c->max_body_bytes = 64 * 1024;
    c->max_connections = c->max_per_address = c->request_timeout_ms = -1;
    c->max_waiters = c->max_waiters_per_principal = c->max_write_queue = -1;
    c->refusal_log_interval = IG_REFUSAL_LOG_INTERVAL_DEFAULT;
    return c;
}

/* Check the section that is ending, its errors naming its header line. */
static int
end_section(struct pdp_cfg_parse *p)
{
    const struct pdp_cfg_section *s = p->sec;
    int line = p->line, rc = 0;

    p->sec = NULL;
    if (s == NULL || s->end == NULL)
        return 0;
    p->line = p->sec_line;
    rc = s->end(p);
    p->line = line;
    return rc;
}

/* The kinds of section, for the message naming an unknown one. */
static void
kinds_list(char *out, size_t size)
{
    size_t i, n = 0;
    int w;

    out[0] = '\0';
    for (i = 0; i < NSECTIONS; i++) {
        w = snprintf(out + n, size - n, "%s[%s%s]",
                     i == 0 ? "" : (i + 1 == NSECTIONS ? " or " : ", "),
                     sections[i].kind, sections[i].id ? " ID" : "");
        if (w < 0 || (size_t)w >= size - n)
            return; /* cut short: the message still names the section */
        n += (size_t)w;
    }
}

static int
begin_section(struct pdp_cfg_parse *p, const char *kind, const char *id)
{
    char kinds[200];
    size_t i;

    for (i = 0; i < NSECTIONS && strcmp(kind, sections[i].kind) != 0; i++)
        ;
    if (i == NSECTIONS) {
        kinds_list(kinds, sizeof(kinds));
        return pdp_cfg_error(p, "unknown section [%.64s] (want %s)", kind,
                             kinds);
    }
    if (sections[i].id && (id == NULL || !pdp_cfg_valid_id(id)))
        return pdp_cfg_error(p,
                             "[%s] needs an id of letters, digits and ._:@- "
                             "(at most %d)",
                             kind, IG_ID_MAX);
    if (!sections[i].id && id != NULL)
        return pdp_cfg_error(p, "[%s] takes no id", kind);
    if (sections[i].once && (p->sections_seen & (1u << i)))
        return pdp_cfg_error(p, "[%s] appears twice", kind);
    p->sections_seen |= 1u << i;
    p->sec = &sections[i];
    p->sec_line = p->line;
    p->seen_sec = 0;
    return sections[i].begin != NULL ? sections[i].begin(p, kind, id) : 0;
}

static enum ig_status
on_section(void *ctx, int line, const char *kind, const char *id)
{
    struct pdp_cfg_parse *p = ctx;

    p->line = line;
    if (end_section(p) != 0 || begin_section(p, kind, id) != 0)
        return IG_ERR_INVALID;
    return IG_OK;
}

static enum ig_status
on_key(void *ctx, int line, const char *key, const char *value)
{
    struct pdp_cfg_parse *p = ctx;
    int rc;

    p->line = line;
    rc = p->sec != NULL ? p->sec->set(p, key, value)
                        : pdp_cfg_top_set(p, key, value);
    return rc == 0 ? IG_OK : IG_ERR_INVALID;
}

/* p->dir: the directory of p->path ("." when it has none). */
static int
set_dir(struct pdp_cfg_parse *p)
{
    const char *slash = strrchr(p->path, '/');

    if (slash == NULL)
        p->dir = strdup(".");
    else if (slash == p->path)
        p->dir = strdup("/"); /* the file is in "/" */
    else
        p->dir = strndup(p->path, (size_t)(slash - p->path));
    return p->dir != NULL ? 0 : pdp_cfg_error(p, "out of memory");
}

static int
finish(struct pdp_cfg_parse *p)
{
    if (end_section(p) != 0)
        return -1;
    p->line = 0;
    if (pdp_cfg_top_finish(p) != 0 || pdp_cfg_limits_finish(p) != 0 ||
        pdp_cfg_audit_finish(p) != 0 || pdp_cfg_appr_finish(p) != 0 ||
        pdp_cfg_witness_finish(p) != 0)
        return -1;
    return 0;
}

enum ig_status
pdp_config_load(const char *path, struct pdp_config **out, struct ig_err *err)
{
    static const struct ig_ini_handler h = {on_section, on_key};
    struct pdp_cfg_parse p;
    struct pdp_config *c;
    enum ig_status st;

    *out = NULL;
    IG_ASSERT(NSECTIONS <= sizeof(p.sections_seen) * 8);
    c = defaults(path);
    if (c == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    memset(&p, 0, sizeof(p));
    p.c = c;
    p.err = err;
    p.path = path;
    st = set_dir(&p) != 0 ? IG_ERR_INVALID : ig_ini_read(path, &h, &p, err);
    if (st == IG_OK && finish(&p) != 0)
        st = IG_ERR_INVALID;
    free(p.dir);
    if (st != IG_OK) {
        pdp_config_free(c);
        return st == IG_ERR_LIMIT ? IG_ERR_INVALID : st;
    }
    *out = c;
    return IG_OK;
}

const struct pdp_principal *
pdp_config_authenticate(const struct pdp_config *c, const char *token,
                        size_t len)
{
    unsigned char h[32];
    const struct pdp_principal *found = NULL;
    size_t i;

    if (token == NULL || len == 0)
        return NULL;
    ig_sha256(token, len, h);
    /* Compare with every entry, constant time each, no early exit. */
    for (i = 0; i < c->nprincipals; i++)
        if (sodium_memcmp(h, c->principals[i].token_hash, sizeof(h)) == 0)
            found = &c->principals[i];
    return found;
}

const struct pdp_principal *
pdp_config_executor_for(const struct pdp_config *c, const char *action)
{
    const struct pdp_principal *best = NULL;
    size_t i, j, bestlen = 0, n;

    for (i = 0; i < c->nprincipals; i++) {
        const struct pdp_principal *p = &c->principals[i];
        if (p->role != PDP_ROLE_EXECUTOR)
            continue;
        for (j = 0; j < p->nactions; j++) {
            n = strlen(p->actions[j]);
            if (strncmp(action, p->actions[j], n) == 0 &&
                (best == NULL || n > bestlen)) {
                best = p;
                bestlen = n;
            }
        }
    }
    return best;
}

void
pdp_token_new(char out[48], char hex[65])
{
    unsigned char raw[32], h[32];
    size_t n;

    randombytes_buf(raw, sizeof(raw));
    memcpy(out, "igt_", 4);
    n = ig_b64_encode(raw, sizeof(raw), out + 4, 44);
    out[4 + n] = '\0';
    ig_sha256(out, 4 + n, h);
    sodium_bin2hex(hex, 65, h, sizeof(h));
    sodium_memzero(raw, sizeof(raw));
}
