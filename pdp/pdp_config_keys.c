/*
 * pdp_config_keys.c - what each configuration key means: defaults, value
 * checks, principal sections, and the final checks once the whole file is
 * read (required keys, paths made relative to the file's directory).
 */
#include "pdp_config_int.h"

#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"
#include "ig_text.h"

int
cfg_error(struct cfg_parse *p, const char *fmt, ...)
{
    char msg[IG_ERR_MSGMAX];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (p->line > 0)
        (void)ig_err_set(p->err, IG_ERR_INVALID, "%s:%d: %s", p->path, p->line,
                         msg);
    else
        (void)ig_err_set(p->err, IG_ERR_INVALID, "%s: %s", p->path, msg);
    return -1;
}

struct pdp_config *
cfg_defaults(const char *path)
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

/* ---- value parsers ---- */

int
cfg_int(struct cfg_parse *p, const char *key, const char *v, int64_t lo,
        int64_t hi, int64_t *out)
{
    char *end;
    long long n;

    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi)
        return cfg_error(p, "%s must be a whole number from %lld to %lld", key,
                         (long long)lo, (long long)hi);
    *out = n;
    return 0;
}

int
cfg_string(struct cfg_parse *p, const char *key, const char *v, char **dst)
{
    char *s;

    if (v[0] == '\0')
        return cfg_error(p, "%s must not be empty", key);
    s = strdup(v);
    if (s == NULL)
        return cfg_error(p, "out of memory");
    free(*dst);
    *dst = s;
    return 0;
}

static int
parse_listen(struct cfg_parse *p, const char *v)
{
    if (ig_listen_set(v, &p->c->listen_host, &p->c->listen_port) != IG_OK)
        return cfg_error(p, "listen must be HOST:PORT, e.g. 127.0.0.1:8700");
    return 0;
}

/* Split "a, b ,c" into a new array of trimmed, non-empty strings. */
int
cfg_list(struct cfg_parse *p, const char *key, const char *v, char ***out,
         size_t *n)
{
    const char *s = v, *e;
    char **arr;

    while (*s != '\0') {
        while (*s == ' ' || *s == ',' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        e = s;
        while (*e != '\0' && *e != ',')
            e++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        arr = realloc(*out, (*n + 1) * sizeof(*arr));
        if (arr == NULL)
            return cfg_error(p, "out of memory");
        *out = arr;
        arr[*n] = strndup(s, (size_t)(e - s));
        if (arr[*n] == NULL)
            return cfg_error(p, "out of memory");
        (*n)++;
        s = e;
    }
    if (*n == 0)
        return cfg_error(p, "%s must list at least one value", key);
    return 0;
}

/* ---- top-level keys ---- */

enum topkey {
    K_LISTEN,
    K_DATABASE,
    K_SIGNING_KEY,
    K_PUBLIC_KEYS,
    K_POLICY_DIR,
    K_ISSUER,
    K_INTENT_TTL,
    K_INTENT_TTL_MAX,
    K_GRANT_TTL,
    K_APPROVAL_TTL,
    K_THREADS,
    K_SYNCHRONOUS,
    K_MAX_BODY,
    K_REFUSAL_LOG_INTERVAL,
    K_TRUSTED_PROXIES,
    K_NKEYS
};

static const char *const topkeys[K_NKEYS] = {
    "listen",         "database",
    "signing_key",    "public_keys",
    "policy_dir",     "issuer",
    "intent_ttl",     "intent_ttl_max",
    "grant_ttl",      "approval_ttl",
    "threads",        "synchronous",
    "max_body_bytes", "refusal_log_interval",
    "trusted_proxies"};

static int
set_ttl(struct cfg_parse *p, const char *key, const char *v, int64_t *dst)
{
    return cfg_int(p, key, v, 1, 86400, dst);
}

/* "10.0.0.0/8, 192.0.2.1, ::1": address blocks whose X-Forwarded-For is
   believed. */
static int
set_trusted_proxies(struct cfg_parse *p, const char *key, const char *v)
{
    struct pdp_config *c = p->c;
    char **items = NULL, why[160];
    size_t n = 0, i;
    int rc = 0;

    if (cfg_list(p, key, v, &items, &n) != 0)
        rc = -1;
    else if (n > IG_TRUSTED_PROXIES_MAX)
        rc = cfg_error(p, "%s: more than %d entries", key,
                       IG_TRUSTED_PROXIES_MAX);
    else if ((c->trusted_proxies = calloc(n, sizeof(*c->trusted_proxies))) ==
             NULL)
        rc = cfg_error(p, "out of memory");
    for (i = 0; rc == 0 && i < n; i++) {
        if (pdp_net_parse(items[i], &c->trusted_proxies[i], why, sizeof(why)) !=
            0)
            rc = cfg_error(p, "%s: %s: %s", key, items[i], why);
        else
            c->ntrusted_proxies = i + 1;
    }
    for (i = 0; i < n; i++)
        free(items[i]);
    free(items);
    return rc;
}

static int
set_top(struct cfg_parse *p, enum topkey k, const char *key, const char *v)
{
    struct pdp_config *c = p->c;
    int64_t n = 0;

    switch (k) {
    case K_LISTEN:
        return parse_listen(p, v);
    case K_DATABASE:
        return cfg_string(p, key, v, &c->database);
    case K_SIGNING_KEY:
        return cfg_string(p, key, v, &c->signing_key);
    case K_PUBLIC_KEYS:
        return cfg_list(p, key, v, &c->public_keys, &c->npublic_keys);
    case K_POLICY_DIR:
        return cfg_string(p, key, v, &c->policy_dir);
    case K_ISSUER:
        return cfg_string(p, key, v, &c->issuer);
    case K_INTENT_TTL:
        return set_ttl(p, key, v, &c->intent_ttl);
    case K_INTENT_TTL_MAX:
        return set_ttl(p, key, v, &c->intent_ttl_max);
    case K_GRANT_TTL:
        return set_ttl(p, key, v, &c->grant_ttl);
    case K_APPROVAL_TTL:
        return set_ttl(p, key, v, &c->approval_ttl);
    case K_THREADS:
        if (cfg_int(p, key, v, 1, 64, &n) != 0)
            return -1;
        c->threads = (int)n;
        return 0;
    case K_SYNCHRONOUS:
        if (strcmp(v, "full") != 0 && strcmp(v, "normal") != 0)
            return cfg_error(p, "synchronous must be full or normal");
        c->synchronous_full = strcmp(v, "full") == 0;
        return 0;
    case K_MAX_BODY:
        if (cfg_int(p, key, v, 1024, IG_JSON_MAX_BYTES, &n) != 0)
            return -1;
        c->max_body_bytes = (size_t)n;
        return 0;
    case K_REFUSAL_LOG_INTERVAL:
        return cfg_int(p, key, v, 1, IG_REFUSAL_LOG_INTERVAL_MAX,
                       &c->refusal_log_interval);
    case K_TRUSTED_PROXIES:
        return set_trusted_proxies(p, key, v);
    case K_NKEYS:
        break;
    }
    return cfg_error(p, "internal error");
}

/* A [policy] value: a number, true/false, or else a string. */
static int
set_policy(struct cfg_parse *p, const char *key, const char *v)
{
    json_t *val;
    char *end;
    double d;

    if (json_object_get(p->c->policy_settings, key) != NULL)
        return cfg_error(p, "duplicate key %s", key);
    errno = 0;
    d = strtod(v, &end);
    if (v[0] != '\0' && *end == '\0' && errno == 0)
        val = json_real(d);
    else if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
        val = json_boolean(v[0] == 't');
    else
        val = json_string(v);
    /* json_object_set_new steals val. */
    if (val == NULL || json_object_set_new(p->c->policy_settings, key, val))
        return cfg_error(p, "bad value for %s (not UTF-8?)", key);
    return 0;
}

/* ---- principal sections ---- */

int
cfg_valid_id(const char *id)
{
    size_t i, n = strlen(id);

    if (n == 0 || n > 64)
        return 0;
    for (i = 0; i < n; i++) {
        char ch = id[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') ||
              (i > 0 && strchr("._:@-", ch) != NULL)))
            return 0;
    }
    return 1;
}

int
cfg_section_begin(struct cfg_parse *p, const char *kind, const char *id)
{
    struct pdp_principal *arr;
    enum pdp_role role;

    if (cfg_section_end(p) != 0)
        return -1;
    if (strcmp(kind, "policy") == 0 && id == NULL) {
        p->sec = SEC_POLICY;
        return 0;
    }
    if (strcmp(kind, "approvals") == 0 || strcmp(kind, "approver") == 0 ||
        strcmp(kind, "slack") == 0)
        return cfg_appr_begin(p, kind, id);
    if (strcmp(kind, "audit") == 0)
        return cfg_audit_begin(p, id);
    if (strcmp(kind, "limits") == 0)
        return cfg_limits_begin(p, id);
    role = strcmp(kind, "agent") == 0      ? PDP_ROLE_AGENT
           : strcmp(kind, "executor") == 0 ? PDP_ROLE_EXECUTOR
           : strcmp(kind, "admin") == 0    ? PDP_ROLE_ADMIN
           : strcmp(kind, "auditor") == 0  ? PDP_ROLE_AUDITOR
                                           : PDP_ROLE_NONE;
    if (role == PDP_ROLE_NONE)
        return cfg_error(p,
                         "unknown section [%s] (want [policy], [agent ID], "
                         "[executor ID], [admin ID], [auditor ID], "
                         "[approver ID], [approvals], [slack], [audit] or "
                         "[limits])",
                         kind);
    if (id == NULL || !cfg_valid_id(id))
        return cfg_error(p,
                         "[%s] needs an id of letters, digits and ._:@- "
                         "(at most 64)",
                         kind);
    if (p->c->nprincipals >= CFG_MAX_PRINCIPALS)
        return cfg_error(p, "more than %d principals", CFG_MAX_PRINCIPALS);
    arr = realloc(p->c->principals, (p->c->nprincipals + 1) * sizeof(*arr));
    if (arr == NULL)
        return cfg_error(p, "out of memory");
    p->c->principals = arr;
    p->cur = &arr[p->c->nprincipals++];
    memset(p->cur, 0, sizeof(*p->cur));
    p->cur->role = role;
    p->cur->id = strdup(id);
    if (p->cur->id == NULL)
        return cfg_error(p, "out of memory");
    p->sec = SEC_PRINCIPAL;
    p->cur_line = p->line;
    p->has_token = 0;
    return 0;
}

static int
set_principal(struct cfg_parse *p, const char *key, const char *v)
{
    struct pdp_principal *pr = p->cur;
    size_t n;

    if (strcmp(key, "token_sha256") == 0) {
        if (p->has_token)
            return cfg_error(p, "duplicate key token_sha256");
        if (strlen(v) != 64 ||
            sodium_hex2bin(pr->token_hash, 32, v, 64, NULL, &n, NULL) != 0 ||
            n != 32)
            return cfg_error(p, "token_sha256 must be 64 hex digits (the "
                                "SHA-256 of the token, never the token)");
        p->has_token = 1;
        return 0;
    }
    if (strcmp(key, "tenant") == 0 && pr->role == PDP_ROLE_AGENT) {
        if (pr->tenant != NULL)
            return cfg_error(p, "duplicate key tenant");
        if (!cfg_valid_id(v))
            return cfg_error(p, "tenant must be letters, digits and ._:@-");
        return cfg_string(p, key, v, &pr->tenant);
    }
    if (strcmp(key, "actions") == 0 && pr->role == PDP_ROLE_EXECUTOR) {
        if (pr->nactions > 0)
            return cfg_error(p, "duplicate key actions");
        return cfg_list(p, key, v, &pr->actions, &pr->nactions);
    }
    return cfg_error(p, "unknown key %s in this section", key);
}

int
cfg_section_end(struct cfg_parse *p)
{
    struct pdp_principal *pr = p->cur;
    int line = p->line;

    if (p->sec == SEC_APPROVALS || p->sec == SEC_APPROVER ||
        p->sec == SEC_SLACK)
        return cfg_appr_end(p);
    if (p->sec == SEC_AUDIT || p->sec == SEC_LIMITS) {
        p->sec = SEC_TOP;
        return 0;
    }
    if (p->sec != SEC_PRINCIPAL || pr == NULL)
        return 0;
    p->line = p->cur_line;
    p->cur = NULL;
    p->sec = SEC_TOP;
    if (!p->has_token)
        return cfg_error(p, "%s needs token_sha256", pr->id);
    if (pr->role == PDP_ROLE_AGENT && pr->tenant == NULL)
        return cfg_error(p, "agent %s needs a tenant", pr->id);
    if (pr->role == PDP_ROLE_EXECUTOR && pr->nactions == 0)
        return cfg_error(p,
                         "executor %s needs actions (the action "
                         "prefixes it handles)",
                         pr->id);
    p->line = line;
    return 0;
}

int
cfg_set(struct cfg_parse *p, const char *key, const char *value)
{
    int k;

    if (p->sec == SEC_POLICY)
        return set_policy(p, key, value);
    if (p->sec == SEC_PRINCIPAL)
        return set_principal(p, key, value);
    if (p->sec == SEC_AUDIT)
        return cfg_audit_set(p, key, value);
    if (p->sec == SEC_LIMITS)
        return cfg_limits_set(p, key, value);
    if (p->sec != SEC_TOP)
        return cfg_appr_set(p, key, value);
    for (k = 0; k < K_NKEYS; k++) {
        if (strcmp(key, topkeys[k]) != 0)
            continue;
        if (p->seen & (1u << k))
            return cfg_error(p, "duplicate key %s", key);
        p->seen |= 1u << k;
        return set_top(p, (enum topkey)k, key, value);
    }
    return cfg_error(p, "unknown key %s", key);
}

/* ---- whole-file checks ---- */

/* Make *pp relative to dir unless it is absolute. */
int
cfg_resolve(struct cfg_parse *p, const char *dir, char **pp)
{
    size_t n;
    char *s;

    if (*pp == NULL || (*pp)[0] == '/')
        return 0;
    n = strlen(dir) + strlen(*pp) + 2;
    s = malloc(n);
    if (s == NULL)
        return cfg_error(p, "out of memory");
    (void)snprintf(s, n, "%s/%s", dir, *pp);
    free(*pp);
    *pp = s;
    return 0;
}

static int
check_principals(struct cfg_parse *p)
{
    struct pdp_config *c = p->c;
    size_t i, j;

    for (i = 0; i < c->nprincipals; i++)
        for (j = i + 1; j < c->nprincipals; j++) {
            if (c->principals[i].role == c->principals[j].role &&
                strcmp(c->principals[i].id, c->principals[j].id) == 0)
                return cfg_error(p, "%s is configured twice",
                                 c->principals[i].id);
            if (sodium_memcmp(c->principals[i].token_hash,
                              c->principals[j].token_hash, 32) == 0)
                return cfg_error(p,
                                 "%s and %s share a token: every "
                                 "principal needs its own",
                                 c->principals[i].id, c->principals[j].id);
        }
    return 0;
}

int
cfg_finish(struct cfg_parse *p)
{
    struct pdp_config *c = p->c;
    char dir[4096];
    const char *slash = strrchr(p->path, '/');
    size_t i, n;

    p->line = 0;
    if (c->database == NULL)
        return cfg_error(p, "missing database (the SQLite file)");
    if (c->signing_key == NULL)
        return cfg_error(p, "missing signing_key (a k4.secret key file)");
    if (c->policy_dir == NULL)
        return cfg_error(p, "missing policy_dir");
    if (c->intent_ttl > c->intent_ttl_max)
        return cfg_error(p, "intent_ttl is larger than intent_ttl_max");
    if (c->grant_ttl > c->intent_ttl_max)
        return cfg_error(p, "grant_ttl is larger than intent_ttl_max");
    if (check_principals(p) != 0)
        return -1;
    n = slash == NULL ? 1 : (size_t)(slash - p->path);
    if (n == 0)
        n = 1; /* the file is in "/" */
    if (n >= sizeof(dir))
        return cfg_error(p, "config path too long");
    memcpy(dir, slash == NULL ? "." : p->path, n);
    dir[n] = '\0';
    if (cfg_resolve(p, dir, &c->database) != 0 ||
        cfg_resolve(p, dir, &c->signing_key) != 0 ||
        cfg_resolve(p, dir, &c->policy_dir) != 0)
        return -1;
    for (i = 0; i < c->npublic_keys; i++)
        if (cfg_resolve(p, dir, &c->public_keys[i]) != 0)
            return -1;
    if (cfg_resolve(p, dir, &c->slack_bot_token_file) != 0 ||
        cfg_resolve(p, dir, &c->slack_signing_secret_file) != 0)
        return -1;
    if (cfg_limits_finish(p) != 0 || cfg_audit_finish(p, dir) != 0)
        return -1;
    return cfg_appr_finish(p, dir);
}
