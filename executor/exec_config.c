/*
 * exec_config.c - read and check the executor's configuration (see
 * exec_config.h). The INI reader (core/ig_ini.c) hands over each "key =
 * value" line; the key is looked up by name in a table of setters (a file
 * of this kind has no sections). Then required keys, and paths made
 * relative to the file's directory.
 */
#include "exec_config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_ini.h"
#include "ig_limits.h"
#include "ig_text.h"

void
exec_config_free(struct exec_config *c)
{
    if (c == NULL)
        return;
    free(c->path);
    free(c->id);
    free(c->listen_host);
    free(c->pdp_url);
    free(c->pdp_token_file);
    ig_str_list_free(c->public_keys, c->npublic_keys);
    free(c->registry);
    free(c->secrets);
    free(c->secrets_key);
    free(c->work_dir);
    free(c->spool_dir);
    free(c->mcp_pins);
    free(c->mcp_approval_url);
    ig_str_list_free(c->protect, c->nprotect);
    free(c->sandbox_user);
    free(c);
}

static int
set_str(char **dst, const char *v)
{
    char *s = strdup(v);

    if (s == NULL)
        return -1;
    free(*dst);
    *dst = s;
    return 0;
}

/* Append the comma-separated items of v to *list (at most max in all). */
static int
set_list(char ***list, size_t *n, const char *v, size_t max)
{
    char *copy = strdup(v), *p, *next, **arr;

    if (copy == NULL)
        return -1;
    for (p = copy; p != NULL; p = next) {
        next = strchr(p, ',');
        if (next != NULL)
            *next++ = '\0';
        p = ig_trim(p);
        if (*p == '\0')
            continue;
        arr = *n < max ? realloc(*list, (*n + 1) * sizeof(*arr)) : NULL;
        if (arr == NULL || (arr[*n] = strdup(p)) == NULL) {
            if (arr != NULL)
                *list = arr;
            free(copy);
            return -1;
        }
        *list = arr;
        (*n)++;
    }
    free(copy);
    return 0;
}

/* protect: absolute paths only. */
static int
set_protect(struct exec_config *c, const char *v)
{
    size_t i, from = c->nprotect;

    if (set_list(&c->protect, &c->nprotect, v, IG_EXEC_PROTECT_MAX) != 0)
        return -1;
    for (i = from; i < c->nprotect; i++)
        if (c->protect[i][0] != '/')
            return -1;
    return 0;
}

/* sandbox_user: self, UID:GID, or a user name (its primary group). */
static int
set_user(struct exec_config *c, const char *v)
{
    struct passwd *pw;
    long uid, gid;
    char *end;

    if (set_str(&c->sandbox_user, v) != 0)
        return -1;
    c->sandbox_self = strcmp(v, "self") == 0;
    if (c->sandbox_self)
        return 0;
    if (v[0] >= '0' && v[0] <= '9') {
        uid = strtol(v, &end, 10);
        if (*end != ':' || end[1] < '0' || end[1] > '9')
            return -1;
        gid = strtol(end + 1, &end, 10);
        if (*end != '\0' || uid <= 0 || gid <= 0 || uid > 0x7fffffff ||
            gid > 0x7fffffff)
            return -1;
        c->sandbox_uid = (uid_t)uid;
        c->sandbox_gid = (gid_t)gid;
        return 0;
    }
    pw = getpwnam(v);
    if (pw == NULL || pw->pw_uid == 0 || pw->pw_gid == 0)
        return -1;
    c->sandbox_uid = pw->pw_uid;
    c->sandbox_gid = pw->pw_gid;
    return 0;
}

static int
set_long(long *dst, const char *v, long lo, long hi)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi)
        return -1;
    *dst = n;
    return 0;
}

/* One key: its name, its setter, and for the generic ones the field (at
   off in struct exec_config) and range. repeat: a list that each
   occurrence extends; any other key may appear once. */
struct key {
    const char *name;
    int (*set)(struct exec_config *c, const struct key *k, const char *v);
    size_t off;
    long lo, hi;
    int repeat;
};

static void *
field(struct exec_config *c, const struct key *k)
{
    return (char *)c + k->off;
}

static int
key_str(struct exec_config *c, const struct key *k, const char *v)
{
    return set_str(field(c, k), v);
}

static int
key_long(struct exec_config *c, const struct key *k, const char *v)
{
    return set_long(field(c, k), v, k->lo, k->hi);
}

static int
key_listen(struct exec_config *c, const struct key *k, const char *v)
{
    (void)k;
    return ig_listen_set(v, &c->listen_host, &c->listen_port) == IG_OK ? 0 : -1;
}

static int
key_public_keys(struct exec_config *c, const struct key *k, const char *v)
{
    (void)k;
    return set_list(&c->public_keys, &c->npublic_keys, v,
                    IG_EXEC_PUBLIC_KEYS_MAX);
}

static int
key_protect(struct exec_config *c, const struct key *k, const char *v)
{
    (void)k;
    return set_protect(c, v);
}

static int
key_user(struct exec_config *c, const struct key *k, const char *v)
{
    (void)k;
    return set_user(c, v);
}

#define FIELD(f) offsetof(struct exec_config, f)
#define STR(name, f)                                                           \
    {                                                                          \
        name, key_str, FIELD(f), 0, 0, 0                                       \
    }
#define LONG(name, f, lo, hi)                                                  \
    {                                                                          \
        name, key_long, FIELD(f), lo, hi, 0                                    \
    }

static const struct key keys[] = {
    STR("id", id),
    {"listen", key_listen, 0, 0, 0, 0},
    STR("pdp_url", pdp_url),
    STR("pdp_token_file", pdp_token_file),
    {"pdp_public_keys", key_public_keys, 0, 0, 0, 1},
    STR("registry", registry),
    STR("secrets", secrets),
    STR("secrets_key", secrets_key),
    STR("work_dir", work_dir),
    STR("spool_dir", spool_dir),
    {"sandbox_user", key_user, 0, 0, 0, 0},
    {"protect", key_protect, 0, 0, 0, 1},
    LONG("max_concurrent", max_concurrent, 1, IG_EXEC_CONCURRENT_MAX),
    LONG("pdp_timeout_ms", pdp_timeout_ms, 100, IG_EXEC_PDP_TIMEOUT_MAX_MS),
    LONG("threads", threads, 1, IG_CFG_THREADS_MAX),
    LONG("max_connections", max_connections, IG_CFG_CONNECTIONS_MIN,
         IG_CFG_CONNECTIONS_MAX),
    LONG("max_connections_per_address", max_per_address, 1,
         IG_CFG_CONNECTIONS_MAX),
    LONG("request_timeout_ms", request_timeout_ms,
         IG_CFG_REQUEST_TIMEOUT_MIN_MS, IG_CFG_REQUEST_TIMEOUT_MAX_MS),
    LONG("outcome_retry_ms", outcome_retry_ms, 10, IG_EXEC_SPOOL_RETRY_MAX_MS),
    STR("mcp_pins", mcp_pins),
    STR("mcp_approval_url", mcp_approval_url),
    LONG("mcp_escalation_wait_ms", mcp_wait_ms, 0, IG_EXEC_MCP_WAIT_MAX_MS),
    LONG("mcp_max_sessions", mcp_max_sessions, 1, IG_EXEC_MCP_SESSIONS_MAX),
};

#define NKEYS (sizeof(keys) / sizeof(*keys))

/* The reader's state: the config, the keys seen (one bit each), err. */
struct load {
    struct exec_config *c;
    unsigned seen;
    struct ig_err *err;
};

/* Apply one key; IG_ERR_INVALID with err naming the line and problem. */
static enum ig_status
on_key(void *ctx, int line, const char *k, const char *v)
{
    struct load *l = ctx;
    size_t i;

    for (i = 0; i < NKEYS && strcmp(k, keys[i].name) != 0; i++)
        ;
    if (i == NKEYS)
        return ig_err_set(l->err, IG_ERR_INVALID, "%s:%d: unknown key %s",
                          l->c->path, line, k);
    if (!keys[i].repeat && (l->seen & (1u << i)))
        return ig_err_set(l->err, IG_ERR_INVALID, "%s:%d: duplicate key %s",
                          l->c->path, line, k);
    l->seen |= 1u << i;
    if (v[0] == '\0' || keys[i].set(l->c, &keys[i], v) != 0)
        return ig_err_set(l->err, IG_ERR_INVALID, "%s:%d: bad value for %s",
                          l->c->path, line, k);
    return IG_OK;
}

static int
resolve(const char *dir, char **pp)
{
    size_t n;
    char *s;

    if (*pp == NULL || (*pp)[0] == '/')
        return 0;
    n = strlen(dir) + strlen(*pp) + 2;
    s = malloc(n);
    if (s == NULL)
        return -1;
    (void)snprintf(s, n, "%s/%s", dir, *pp);
    free(*pp);
    *pp = s;
    return 0;
}

static int
finish(struct exec_config *c, struct ig_err *err)
{
    char **paths[] = {&c->pdp_token_file, &c->registry, &c->secrets,
                      &c->secrets_key,    &c->work_dir, &c->spool_dir,
                      &c->mcp_pins};
    const char *slash = strrchr(c->path, '/');
    char *dir;
    size_t i;
    int rc;

    if (c->id == NULL || c->pdp_url == NULL || c->registry == NULL ||
        c->secrets == NULL || c->npublic_keys == 0) {
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "%s: id, pdp_url, pdp_public_keys, registry and "
                         "secrets are required",
                         c->path);
        return -1;
    }
    if (slash == NULL)
        dir = strdup(".");
    else if (slash == c->path)
        dir = strdup("/"); /* the file is in "/" */
    else
        dir = strndup(c->path, (size_t)(slash - c->path));
    rc = dir == NULL ? -1 : 0;
    for (i = 0; rc == 0 && i < sizeof(paths) / sizeof(*paths); i++)
        rc = resolve(dir, paths[i]);
    for (i = 0; rc == 0 && i < c->npublic_keys; i++)
        rc = resolve(dir, &c->public_keys[i]);
    free(dir);
    if (rc != 0)
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return rc;
}

/* Every default; -1 when out of memory. */
static int
defaults(struct exec_config *c)
{
    c->listen_port = 8701;
    c->max_concurrent = IG_EXEC_MAX_CONCURRENT;
    c->pdp_timeout_ms = IG_EXEC_PDP_TIMEOUT_MS;
    c->threads = 2;
    c->max_connections = IG_EXEC_MAX_CONNECTIONS;
    c->max_per_address = IG_EXEC_MAX_PER_ADDRESS;
    c->request_timeout_ms = IG_EXEC_REQUEST_TIMEOUT_MS;
    c->outcome_retry_ms = IG_EXEC_SPOOL_RETRY_INITIAL_MS;
    c->mcp_wait_ms = IG_EXEC_MCP_WAIT_MS;
    c->mcp_max_sessions = IG_EXEC_MCP_SESSIONS;
    if ((c->listen_host = strdup("127.0.0.1")) == NULL ||
        (c->work_dir = strdup("work")) == NULL ||
        (c->spool_dir = strdup("spool")) == NULL ||
        (c->mcp_pins = strdup("mcp-pins.jsonl")) == NULL)
        return -1;
    if (set_user(c, "nobody") != 0) { /* not in the user database */
        c->sandbox_self = 0;
        c->sandbox_uid = 65534;
        c->sandbox_gid = 65534;
    }
    return 0;
}

enum ig_status
exec_config_load(const char *path, struct exec_config **out, struct ig_err *err)
{
    static const struct ig_ini_handler h = {NULL, on_key};
    struct exec_config *c = calloc(1, sizeof(*c));
    enum ig_status st;
    struct load l;
    int rc;

    *out = NULL;
    if (c == NULL || (c->path = strdup(path)) == NULL || defaults(c) != 0) {
        exec_config_free(c);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    IG_ASSERT(NKEYS <= sizeof(l.seen) * 8);
    l.c = c;
    l.seen = 0;
    l.err = err;
    st = ig_ini_read(path, &h, &l, err);
    rc = st == IG_OK ? 0 : -1;
    if (rc == 0)
        rc = finish(c, err);
    if (rc != 0) {
        exec_config_free(c);
        return st == IG_ERR_IO || st == IG_ERR_NOMEM ? st : IG_ERR_INVALID;
    }
    *out = c;
    return IG_OK;
}
