/*
 * witness_config.c - read the witness's INI config (witness_config.h).
 *
 * core/ig_ini.c reads the syntax and hands over sections and keys in file
 * order; here each section kind has a table of keys, each key a setter.
 * Whole-file checks (a [witness] with name, key and database; at least one
 * [log]) and paths made relative to the file's directory come after the
 * pass. A [log]'s key is parsed at once (a vkey, or a file holding one),
 * and its name must be the section's origin: a log is known by its origin
 * line, and a checkpoint verified with a key of another name would be
 * another log's.
 */
#include "witness_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_file.h"
#include "ig_hash.h"
#include "ig_ini.h"
#include "ig_text.h"

enum sec { SEC_NONE, SEC_WITNESS, SEC_LIMITS, SEC_LOG };

struct parse {
    struct witness_config *c;
    struct ig_err *err;
    const char *path;
    char *dir;
    int line;
    enum sec sec;
    unsigned seen;     /* keys seen in this section, one bit each */
    unsigned sections; /* 1 << SEC_*: sections seen */
    int log_has_key;
    int log_line;
};

static int cfg_error(struct parse *p, const char *fmt, ...) IG_PRINTF(2, 3);

static int
cfg_error(struct parse *p, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = ig_ini_verror(p->err, p->path, p->line, fmt, ap);
    va_end(ap);
    return r;
}

static int
set_string(struct parse *p, const char *key, const char *v, char **dst)
{
    char *s;

    if (v[0] == '\0')
        return cfg_error(p, "%s must not be empty", key);
    if ((s = strdup(v)) == NULL)
        return cfg_error(p, "out of memory");
    free(*dst);
    *dst = s;
    return 0;
}

static int
set_int(struct parse *p, const char *key, const char *v, int64_t lo, int64_t hi,
        int64_t *out)
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

/* Paths in the file are relative to its directory. */
static int
resolve(struct parse *p, char **pp)
{
    size_t n;
    char *s;

    if (*pp == NULL || (*pp)[0] == '/')
        return 0;
    n = strlen(p->dir) + strlen(*pp) + 2;
    if ((s = malloc(n)) == NULL)
        return cfg_error(p, "out of memory");
    (void)snprintf(s, n, "%s/%s", p->dir, *pp);
    free(*pp);
    *pp = s;
    return 0;
}

/* ---- [witness] and [limits] ---- */

/* A key of a section: its name and what sets it. */
struct key {
    const char *name;
    int (*set)(struct parse *p, const char *key, const char *v);
};

static int
set_name(struct parse *p, const char *key, const char *v)
{
    if (!audit_name_valid(v))
        return cfg_error(p, "name must be a key name without spaces or "
                            "'+' (like witness.example.org/w1)");
    return set_string(p, key, v, &p->c->name);
}

static int
set_key_path(struct parse *p, const char *key, const char *v)
{
    return set_string(p, key, v, &p->c->key_path);
}

static int
set_listen(struct parse *p, const char *key, const char *v)
{
    struct witness_config *c = p->c;

    if (ig_listen_set(v, &c->listen_host, &c->listen_port) != IG_OK)
        return cfg_error(p, "%s must be HOST:PORT, like %s", key,
                         WITNESS_DEFAULT_LISTEN);
    return 0;
}

static int
set_database(struct parse *p, const char *key, const char *v)
{
    return set_string(p, key, v, &p->c->database);
}

static int
set_rate(struct parse *p, const char *key, const char *v)
{
    return set_int(p, key, v, 1, WITNESS_RATE_MAX, &p->c->rate);
}

static int
set_threads(struct parse *p, const char *key, const char *v)
{
    return set_int(p, key, v, 1, WITNESS_THREADS_MAX, &p->c->threads);
}

static int
set_max_connections(struct parse *p, const char *key, const char *v)
{
    return set_int(p, key, v, IG_CFG_CONNECTIONS_MIN, IG_CFG_CONNECTIONS_MAX,
                   &p->c->max_connections);
}

static int
set_max_per_address(struct parse *p, const char *key, const char *v)
{
    return set_int(p, key, v, 1, IG_CFG_CONNECTIONS_MAX,
                   &p->c->max_per_address);
}

static int
set_request_timeout(struct parse *p, const char *key, const char *v)
{
    return set_int(p, key, v, IG_CFG_REQUEST_TIMEOUT_MIN_MS,
                   IG_CFG_REQUEST_TIMEOUT_MAX_MS, &p->c->request_timeout_ms);
}

/* ---- [log ORIGIN] ---- */

/* The vkey text v, or the file v names (relative to the config), into
   out. */
static int
log_vkey(struct parse *p, const char *v, struct audit_verifier *out)
{
    struct ig_err kerr;
    char *path = NULL, *text = NULL;
    size_t len = 0;
    int rc = -1;

    if (audit_verifier_parse(v, strlen(v), out, &kerr) == IG_OK)
        return 0;
    if ((path = strdup(v)) == NULL || resolve(p, &path) != 0) {
        free(path);
        return path == NULL ? cfg_error(p, "out of memory") : -1;
    }
    if (access(path, F_OK) != 0 && strchr(v, '+') != NULL) {
        rc = cfg_error(p, "key: %s", kerr.msg); /* a vkey, a bad one */
        goto out;
    }
    if (ig_file_read(path, WITNESS_VKEY_FILE_MAX, &text, &len, &kerr) !=
        IG_OK) {
        rc = cfg_error(p,
                       "key must be the log's vkey (name+id+base64) or a "
                       "file holding it: %s",
                       kerr.msg);
        goto out;
    }
    if (audit_verifier_parse(text, len, out, &kerr) != IG_OK) {
        rc = cfg_error(p, "key: %s: %s", path, kerr.msg);
        goto out;
    }
    rc = 0;
out:
    free(path);
    free(text);
    return rc;
}

/* One more key of the [log] being read. */
static int
add_log_key(struct parse *p, struct witness_log *l, const char *v)
{
    struct audit_verifier k;
    size_t i;

    if (l->nkeys >= WITNESS_LOG_KEYS_MAX)
        return cfg_error(p, "key: more than %d keys for one log",
                         WITNESS_LOG_KEYS_MAX);
    if (log_vkey(p, v, &k) != 0)
        return -1;
    if (strcmp(k.name, l->origin) != 0)
        return cfg_error(p,
                         "the key is named %s, not the log's origin %s (a "
                         "log signs its checkpoints under its origin)",
                         k.name, l->origin);
    for (i = 0; i < l->nkeys; i++)
        if (l->keys[i].key_id == k.key_id)
            return cfg_error(p, "key: the same key (id %08x) twice",
                             (unsigned)k.key_id);
    l->keys[l->nkeys++] = k;
    return 0;
}

/* key = VKEY|FILE [VKEY|FILE...]: the log's keys, separated by spaces or
   commas (more than one while the log rotates its key). */
static int
set_log_key(struct parse *p, const char *key, const char *v)
{
    struct witness_log *l = &p->c->logs[p->c->nlogs - 1];
    char item[WITNESS_VKEY_FILE_MAX];
    const char *s = v, *e;

    (void)key;
    while (*s != '\0') {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        for (e = s; *e != '\0' && *e != ' ' && *e != '\t' && *e != ','; e++)
            ;
        if (e == s)
            break;
        if ((size_t)(e - s) >= sizeof(item))
            return cfg_error(p, "key: a value too long");
        memcpy(item, s, (size_t)(e - s));
        item[e - s] = '\0';
        if (add_log_key(p, l, item) != 0)
            return -1;
        s = e;
    }
    if (l->nkeys == 0)
        return cfg_error(p, "key must not be empty");
    p->log_has_key = 1;
    return 0;
}

static int
begin_log(struct parse *p, const char *origin)
{
    struct witness_config *c = p->c;
    struct witness_log *l;

    if (origin == NULL || !audit_name_valid(origin))
        return cfg_error(p, "[log ORIGIN] needs the log's origin, a name "
                            "without spaces or '+' (like "
                            "example.com/audit)");
    if (witness_config_log(c, origin, strlen(origin)) != NULL)
        return cfg_error(p, "[log %s] appears twice", origin);
    if (c->nlogs >= WITNESS_LOGS_MAX)
        return cfg_error(p, "more than %d [log] sections", WITNESS_LOGS_MAX);
    l = realloc(c->logs, (c->nlogs + 1) * sizeof(*l));
    if (l == NULL)
        return cfg_error(p, "out of memory");
    c->logs = l;
    l = &c->logs[c->nlogs++];
    memset(l, 0, sizeof(*l));
    (void)snprintf(l->origin, sizeof(l->origin), "%s", origin);
    ig_sha256_hex(origin, strlen(origin), l->origin_hex);
    p->log_has_key = 0;
    p->log_line = p->line;
    return 0;
}

/* ---- sections and keys ---- */

static const struct key witness_keys[] = {
    {"name", set_name},         {"key", set_key_path}, {"listen", set_listen},
    {"database", set_database}, {"rate", set_rate},    {"threads", set_threads},
};
static const struct key limits_keys[] = {
    {"max_connections", set_max_connections},
    {"max_connections_per_address", set_max_per_address},
    {"request_timeout_ms", set_request_timeout},
};
static const struct key log_keys[] = {{"key", set_log_key}};

static int
end_section(struct parse *p)
{
    int line = p->line;

    if (p->sec == SEC_LOG && !p->log_has_key) {
        p->line = p->log_line;
        (void)cfg_error(p, "[log %s] needs key (the log's vkey)",
                        p->c->logs[p->c->nlogs - 1].origin);
        p->line = line;
        return -1;
    }
    return 0;
}

static int
begin_section(struct parse *p, const char *kind, const char *id)
{
    enum sec s;

    if (strcmp(kind, "witness") == 0)
        s = SEC_WITNESS;
    else if (strcmp(kind, "limits") == 0)
        s = SEC_LIMITS;
    else if (strcmp(kind, "log") == 0)
        s = SEC_LOG;
    else
        return cfg_error(p,
                         "unknown section [%.64s] (want [witness], "
                         "[limits] or [log ORIGIN])",
                         kind);
    if (s != SEC_LOG && id != NULL)
        return cfg_error(p, "[%s] takes no id", kind);
    if (s != SEC_LOG && (p->sections & (1u << s)))
        return cfg_error(p, "[%s] appears twice", kind);
    p->sections |= 1u << s;
    p->sec = s;
    p->seen = 0;
    return s == SEC_LOG ? begin_log(p, id) : 0;
}

static enum ig_status
on_section(void *ctx, int line, const char *kind, const char *id)
{
    struct parse *p = ctx;

    if (end_section(p) != 0)
        return IG_ERR_INVALID;
    p->line = line;
    return begin_section(p, kind, id) == 0 ? IG_OK : IG_ERR_INVALID;
}

static int
set_key(struct parse *p, const char *key, const char *v)
{
    const struct key *keys = witness_keys;
    size_t i, n = sizeof(witness_keys) / sizeof(*witness_keys);

    if (p->sec == SEC_NONE)
        return cfg_error(p, "%s outside a section (start with [witness])", key);
    if (p->sec == SEC_LIMITS) {
        keys = limits_keys;
        n = sizeof(limits_keys) / sizeof(*limits_keys);
    } else if (p->sec == SEC_LOG) {
        keys = log_keys;
        n = sizeof(log_keys) / sizeof(*log_keys);
    }
    for (i = 0; i < n && strcmp(key, keys[i].name) != 0; i++)
        ;
    if (i == n)
        return cfg_error(p, "unknown key %s", key);
    if (p->seen & (1u << i))
        return cfg_error(p, "duplicate key %s", key);
    p->seen |= 1u << i;
    return keys[i].set(p, key, v);
}

static enum ig_status
on_key(void *ctx, int line, const char *key, const char *v)
{
    struct parse *p = ctx;

    p->line = line;
    return set_key(p, key, v) == 0 ? IG_OK : IG_ERR_INVALID;
}

static int
finish(struct parse *p)
{
    struct witness_config *c = p->c;

    if (end_section(p) != 0)
        return -1;
    p->line = 0;
    if (!(p->sections & (1u << SEC_WITNESS)))
        return cfg_error(p, "no [witness] section");
    if (c->name == NULL || c->key_path == NULL || c->database == NULL)
        return cfg_error(p, "[witness] needs name, key and database");
    if (c->nlogs == 0)
        return cfg_error(p, "no [log ORIGIN] section: a witness needs at "
                            "least one log to witness");
    if (c->max_per_address > c->max_connections)
        c->max_per_address = c->max_connections;
    return resolve(p, &c->key_path) != 0 || resolve(p, &c->database) != 0 ? -1
                                                                          : 0;
}

static struct witness_config *
defaults(const char *path)
{
    struct witness_config *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    c->path = strdup(path);
    if (c->path == NULL ||
        ig_listen_set(WITNESS_DEFAULT_LISTEN, &c->listen_host,
                      &c->listen_port) != IG_OK) {
        witness_config_free(c);
        return NULL;
    }
    c->rate = WITNESS_RATE_DEFAULT;
    c->threads = 2;
    c->max_connections = WITNESS_MAX_CONNECTIONS;
    c->max_per_address = WITNESS_MAX_PER_ADDRESS;
    c->request_timeout_ms = WITNESS_REQUEST_TIMEOUT_MS;
    return c;
}

static char *
dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

enum ig_status
witness_config_load(const char *path, struct witness_config **out,
                    struct ig_err *err)
{
    static const struct ig_ini_handler h = {on_section, on_key};
    struct parse p;
    enum ig_status st;

    *out = NULL;
    memset(&p, 0, sizeof(p));
    p.err = err;
    p.path = path;
    p.c = defaults(path);
    p.dir = dir_of(path);
    if (p.c == NULL || p.dir == NULL) {
        witness_config_free(p.c);
        free(p.dir);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    st = ig_ini_read(path, &h, &p, err);
    if (st == IG_OK && finish(&p) != 0)
        st = IG_ERR_INVALID;
    free(p.dir);
    if (st != IG_OK) {
        witness_config_free(p.c);
        return st == IG_ERR_LIMIT ? IG_ERR_INVALID : st;
    }
    *out = p.c;
    return IG_OK;
}

void
witness_config_free(struct witness_config *c)
{
    if (c == NULL)
        return;
    free(c->path);
    free(c->name);
    free(c->key_path);
    free(c->listen_host);
    free(c->database);
    free(c->logs);
    free(c);
}

const struct witness_log *
witness_config_log(const struct witness_config *c, const char *origin,
                   size_t len)
{
    size_t i;

    for (i = 0; i < c->nlogs; i++)
        if (strlen(c->logs[i].origin) == len &&
            memcmp(c->logs[i].origin, origin, len) == 0)
            return &c->logs[i];
    return NULL;
}

const struct witness_log *
witness_config_log_by_hash(const struct witness_config *c, const char *hex,
                           size_t len)
{
    size_t i;

    if (len != 64)
        return NULL;
    for (i = 0; i < c->nlogs; i++)
        if (memcmp(c->logs[i].origin_hex, hex, 64) == 0)
            return &c->logs[i];
    return NULL;
}
