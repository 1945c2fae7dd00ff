/*
 * pdp_config_keys.c - the top-level keys, the [policy] section and the
 * principal sections ([agent ID], [executor ID], [admin ID], [auditor
 * ID]): what each key means and how it is checked, and the checks once
 * the whole file is read (required keys, principals distinct, paths made
 * relative to the file's directory).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "pdp_config_int.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"
#include "ig_text.h"
#include "store.h"

/* ---- top-level keys ---- */

static int
set_listen(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    (void)k;
    if (ig_listen_set(v, &p->c->listen_host, &p->c->listen_port) != IG_OK)
        return pdp_cfg_error(p,
                             "listen must be HOST:PORT, e.g. 127.0.0.1:8700");
    return 0;
}

static int
set_public_keys(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                const char *v)
{
    return pdp_cfg_list(p, k->name, v, &p->c->public_keys, &p->c->npublic_keys);
}

static int
set_synchronous(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                const char *v)
{
    (void)k;
    if (strcmp(v, "full") != 0 && strcmp(v, "normal") != 0)
        return pdp_cfg_error(p, "synchronous must be full or normal");
    p->c->synchronous_full = strcmp(v, "full") == 0;
    return 0;
}

/* "10.0.0.0/8, 192.0.2.1, ::1": address blocks whose X-Forwarded-For is
   believed. */
static int
set_trusted_proxies(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                    const char *v)
{
    struct pdp_config *c = p->c;
    char **items = NULL, why[160];
    size_t n = 0, i;
    int rc = 0;

    if (pdp_cfg_list(p, k->name, v, &items, &n) != 0)
        rc = -1;
    else if (n > IG_TRUSTED_PROXIES_MAX)
        rc = pdp_cfg_error(p, "%s: more than %d entries", k->name,
                           IG_TRUSTED_PROXIES_MAX);
    else if ((c->trusted_proxies = calloc(n, sizeof(*c->trusted_proxies))) ==
             NULL)
        rc = pdp_cfg_error(p, "out of memory");
    for (i = 0; rc == 0 && i < n; i++) {
        if (pdp_net_parse(items[i], &c->trusted_proxies[i], why, sizeof(why)) !=
            0)
            rc = pdp_cfg_error(p, "%s: %s: %s", k->name, items[i], why);
        else
            c->ntrusted_proxies = i + 1;
    }
    ig_str_list_free(items, n);
    return rc;
}

static const struct pdp_cfg_key top_keys[] = {
    PDP_CFG_KEY("listen", set_listen),
    PDP_CFG_STR("database", database),
    PDP_CFG_STR("signing_key", signing_key),
    PDP_CFG_KEY("public_keys", set_public_keys),
    PDP_CFG_STR("policy_dir", policy_dir),
    PDP_CFG_STR("shadow_policy_dir", shadow_policy_dir),
    PDP_CFG_STR("issuer", issuer),
    PDP_CFG_I64("intent_ttl", intent_ttl, 1, IG_CFG_TTL_MAX),
    PDP_CFG_I64("intent_ttl_max", intent_ttl_max, 1, IG_CFG_TTL_MAX),
    PDP_CFG_I64("grant_ttl", grant_ttl, 1, IG_CFG_TTL_MAX),
    PDP_CFG_I64("approval_ttl", approval_ttl, 1, IG_CFG_TTL_MAX),
    PDP_CFG_INT("threads", threads, 1, IG_CFG_THREADS_MAX),
    PDP_CFG_KEY("synchronous", set_synchronous),
    {"max_body_bytes", pdp_cfg_set_size, PDP_CFG_FIELD(max_body_bytes),
     IG_CFG_BODY_MIN, IG_JSON_MAX_BYTES},
    PDP_CFG_I64("refusal_log_interval", refusal_log_interval, 1,
                IG_REFUSAL_LOG_INTERVAL_MAX),
    PDP_CFG_KEY("trusted_proxies", set_trusted_proxies),
};

int
pdp_cfg_top_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    return pdp_cfg_dispatch(p, top_keys, PDP_CFG_NKEYS(top_keys), &p->seen_top,
                            key, v);
}

/* ---- [policy]: a number, true/false, or else a string ---- */

int
pdp_cfg_policy_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    json_t *val;
    char *end;
    double d;

    if (json_object_get(p->c->policy_settings, key) != NULL)
        return pdp_cfg_error(p, "duplicate key %s", key);
    errno = 0;
    d = strtod(v, &end);
    if (v[0] != '\0' && *end == '\0' && errno == 0)
        val = json_real(d);
    else if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
        val = json_boolean(v[0] == 't');
    else
        val = json_string(v);
    /* json_object_set_new steals val (and releases it on failure). */
    if (val == NULL || json_object_set_new(p->c->policy_settings, key, val))
        return pdp_cfg_error(p, "bad value for %s (not UTF-8?)", key);
    return 0;
}

/* ---- principal sections ---- */

static int
set_token(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    size_t n;

    (void)k;
    if (strlen(v) != 64 ||
        sodium_hex2bin(p->cur->token_hash, 32, v, 64, NULL, &n, NULL) != 0 ||
        n != 32)
        return pdp_cfg_error(p, "token_sha256 must be 64 hex digits (the "
                                "SHA-256 of the token, never the token)");
    p->has_token = 1;
    return 0;
}

static int
set_tenant(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    if (!pdp_cfg_valid_id(v))
        return pdp_cfg_error(p, "tenant must be letters, digits and ._:@-");
    return pdp_cfg_string(p, k->name, v, &p->cur->tenant);
}

static int
set_actions(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    return pdp_cfg_list(p, k->name, v, &p->cur->actions, &p->cur->nactions);
}

static const struct pdp_cfg_key agent_keys[] = {
    PDP_CFG_KEY("token_sha256", set_token),
    PDP_CFG_KEY("tenant", set_tenant),
};
static const struct pdp_cfg_key executor_keys[] = {
    PDP_CFG_KEY("token_sha256", set_token),
    PDP_CFG_KEY("actions", set_actions),
};
static const struct pdp_cfg_key token_keys[] = {
    PDP_CFG_KEY("token_sha256", set_token),
};

/* Each principal section: its role and its keys. */
static const struct {
    const char *kind;
    enum pdp_role role;
    const struct pdp_cfg_key *keys;
    size_t nkeys;
} roles[] = {
    {"agent", PDP_ROLE_AGENT, agent_keys, PDP_CFG_NKEYS(agent_keys)},
    {"executor", PDP_ROLE_EXECUTOR, executor_keys,
     PDP_CFG_NKEYS(executor_keys)},
    {"admin", PDP_ROLE_ADMIN, token_keys, PDP_CFG_NKEYS(token_keys)},
    {"auditor", PDP_ROLE_AUDITOR, token_keys, PDP_CFG_NKEYS(token_keys)},
};

#define NROLES (sizeof(roles) / sizeof(*roles))

static size_t
role_of(const char *kind)
{
    size_t i;

    for (i = 0; i < NROLES && strcmp(kind, roles[i].kind) != 0; i++)
        ;
    return i;
}

int
pdp_cfg_principal_begin(struct pdp_cfg_parse *p, const char *kind,
                        const char *id)
{
    struct pdp_principal *arr;
    size_t r = role_of(kind);

    IG_ASSERT(r < NROLES);
    if (p->c->nprincipals >= IG_CFG_PRINCIPALS_MAX)
        return pdp_cfg_error(p, "more than %d principals",
                             IG_CFG_PRINCIPALS_MAX);
    arr = realloc(p->c->principals, (p->c->nprincipals + 1) * sizeof(*arr));
    if (arr == NULL)
        return pdp_cfg_error(p, "out of memory");
    p->c->principals = arr;
    p->cur = &arr[p->c->nprincipals++];
    memset(p->cur, 0, sizeof(*p->cur));
    p->cur->role = roles[r].role;
    p->has_token = 0;
    return pdp_cfg_string(p, "id", id, &p->cur->id);
}

int
pdp_cfg_principal_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    size_t r = role_of(p->sec->kind);

    IG_ASSERT(r < NROLES);
    return pdp_cfg_dispatch(p, roles[r].keys, roles[r].nkeys, &p->seen_sec, key,
                            v);
}

int
pdp_cfg_principal_end(struct pdp_cfg_parse *p)
{
    struct pdp_principal *pr = p->cur;

    p->cur = NULL;
    if (!p->has_token)
        return pdp_cfg_error(p, "%s needs token_sha256", pr->id);
    if (pr->role == PDP_ROLE_AGENT && pr->tenant == NULL)
        return pdp_cfg_error(p, "agent %s needs a tenant", pr->id);
    if (pr->role == PDP_ROLE_EXECUTOR && pr->nactions == 0)
        return pdp_cfg_error(p,
                             "executor %s needs actions (the action "
                             "prefixes it handles)",
                             pr->id);
    return 0;
}

void
pdp_cfg_principals_free(struct pdp_config *c)
{
    size_t i;

    for (i = 0; i < c->nprincipals; i++) {
        free(c->principals[i].id);
        free(c->principals[i].tenant);
        ig_str_list_free(c->principals[i].actions, c->principals[i].nactions);
    }
    free(c->principals);
}

/* ---- whole-file checks ---- */

static int
check_principals(struct pdp_cfg_parse *p)
{
    struct pdp_config *c = p->c;
    size_t i, j;

    for (i = 0; i < c->nprincipals; i++)
        for (j = i + 1; j < c->nprincipals; j++) {
            if (c->principals[i].role == c->principals[j].role &&
                strcmp(c->principals[i].id, c->principals[j].id) == 0)
                return pdp_cfg_error(p, "%s is configured twice",
                                     c->principals[i].id);
            if (sodium_memcmp(c->principals[i].token_hash,
                              c->principals[j].token_hash, 32) == 0)
                return pdp_cfg_error(p,
                                     "%s and %s share a token: every "
                                     "principal needs its own",
                                     c->principals[i].id, c->principals[j].id);
        }
    return 0;
}

/* A shadow bundle is another directory than the live one: the same one
   would only ever agree. (A missing one is refused when it is loaded,
   naming it.) */
static int
check_shadow_dir(struct pdp_cfg_parse *p)
{
    const struct pdp_config *c = p->c;
    char *live, *shadow;
    int rc = 0;

    if (c->shadow_policy_dir == NULL)
        return 0;
    live = realpath(c->policy_dir, NULL);
    shadow = realpath(c->shadow_policy_dir, NULL);
    if (strcmp(c->policy_dir, c->shadow_policy_dir) == 0 ||
        (live != NULL && shadow != NULL && strcmp(live, shadow) == 0))
        rc = pdp_cfg_error(p,
                           "shadow_policy_dir %s is the same directory as "
                           "policy_dir: a shadow bundle is a different one",
                           c->shadow_policy_dir);
    free(live);
    free(shadow);
    return rc;
}

int
pdp_cfg_top_finish(struct pdp_cfg_parse *p)
{
    struct pdp_config *c = p->c;
    size_t i;

    if (c->database == NULL)
        return pdp_cfg_error(
            p, "missing database (a SQLite file or a postgresql:// URL)");
    if (c->signing_key == NULL)
        return pdp_cfg_error(p, "missing signing_key (a k4.secret key file)");
    if (c->policy_dir == NULL)
        return pdp_cfg_error(p, "missing policy_dir");
    if (c->intent_ttl > c->intent_ttl_max)
        return pdp_cfg_error(p, "intent_ttl is larger than intent_ttl_max");
    if (c->grant_ttl > c->intent_ttl_max)
        return pdp_cfg_error(p, "grant_ttl is larger than intent_ttl_max");
    if (check_principals(p) != 0)
        return -1;
    if ((!store_is_postgres(c->database) &&
         pdp_cfg_resolve(p, &c->database) != 0) ||
        pdp_cfg_resolve(p, &c->signing_key) != 0 ||
        pdp_cfg_resolve(p, &c->policy_dir) != 0 ||
        pdp_cfg_resolve(p, &c->shadow_policy_dir) != 0 ||
        check_shadow_dir(p) != 0)
        return -1;
    for (i = 0; i < c->npublic_keys; i++)
        if (pdp_cfg_resolve(p, &c->public_keys[i]) != 0)
            return -1;
    return 0;
}
