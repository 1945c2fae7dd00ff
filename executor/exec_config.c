/*
 * exec_config.c - read and check the executor's configuration (see
 * exec_config.h). One pass over "key = value" lines into a table of
 * setters; then required keys and paths relative to the file's directory.
 */
#include "exec_config.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_text.h"

#define LINE_MAX_LEN 4096

void
exec_config_free(struct exec_config *c)
{
    size_t i;

    if (c == NULL)
        return;
    free(c->path);
    free(c->id);
    free(c->listen_host);
    free(c->pdp_url);
    free(c->pdp_token_file);
    for (i = 0; i < c->npublic_keys; i++)
        free(c->public_keys[i]);
    free(c->public_keys);
    free(c->registry);
    free(c->secrets);
    free(c->secrets_key);
    free(c->work_dir);
    free(c->spool_dir);
    for (i = 0; i < c->nprotect; i++)
        free(c->protect[i]);
    free(c->protect);
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

    if (set_list(&c->protect, &c->nprotect, v, EXEC_PROTECT_MAX) != 0)
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

/* Apply one key; -1 with err naming the problem. */
static int
set_key(struct exec_config *c, const char *k, const char *v, const char *where,
        struct ig_err *err)
{
    int rc;

    if (strcmp(k, "id") == 0)
        rc = set_str(&c->id, v);
    else if (strcmp(k, "listen") == 0)
        rc = ig_listen_set(v, &c->listen_host, &c->listen_port) == IG_OK ? 0
                                                                         : -1;
    else if (strcmp(k, "pdp_url") == 0)
        rc = set_str(&c->pdp_url, v);
    else if (strcmp(k, "pdp_token_file") == 0)
        rc = set_str(&c->pdp_token_file, v);
    else if (strcmp(k, "pdp_public_keys") == 0)
        rc = set_list(&c->public_keys, &c->npublic_keys, v, 64);
    else if (strcmp(k, "spool_dir") == 0)
        rc = set_str(&c->spool_dir, v);
    else if (strcmp(k, "protect") == 0)
        rc = set_protect(c, v);
    else if (strcmp(k, "sandbox_user") == 0)
        rc = set_user(c, v);
    else if (strcmp(k, "threads") == 0)
        rc = set_long(&c->threads, v, 1, 64);
    else if (strcmp(k, "max_connections") == 0)
        rc = set_long(&c->max_connections, v, 16, 1000000);
    else if (strcmp(k, "max_connections_per_address") == 0)
        rc = set_long(&c->max_per_address, v, 1, 1000000);
    else if (strcmp(k, "request_timeout_ms") == 0)
        rc = set_long(&c->request_timeout_ms, v, 100, 600000);
    else if (strcmp(k, "outcome_retry_ms") == 0)
        rc = set_long(&c->outcome_retry_ms, v, 10, 60000);
    else if (strcmp(k, "registry") == 0)
        rc = set_str(&c->registry, v);
    else if (strcmp(k, "secrets") == 0)
        rc = set_str(&c->secrets, v);
    else if (strcmp(k, "secrets_key") == 0)
        rc = set_str(&c->secrets_key, v);
    else if (strcmp(k, "work_dir") == 0)
        rc = set_str(&c->work_dir, v);
    else if (strcmp(k, "max_concurrent") == 0)
        rc = set_long(&c->max_concurrent, v, 1, 4096);
    else if (strcmp(k, "pdp_timeout_ms") == 0)
        rc = set_long(&c->pdp_timeout_ms, v, 100, 60000);
    else {
        (void)ig_err_set(err, IG_ERR_INVALID, "%s: unknown key %s", where, k);
        return -1;
    }
    if (rc != 0 || v[0] == '\0')
        (void)ig_err_set(err, IG_ERR_INVALID, "%s: bad value for %s", where, k);
    return rc != 0 || v[0] == '\0' ? -1 : 0;
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
    char dir[4096];
    const char *slash = strrchr(c->path, '/');
    size_t n = slash == NULL ? 1 : (size_t)(slash - c->path), i;
    int rc = 0;

    if (c->id == NULL || c->pdp_url == NULL || c->registry == NULL ||
        c->secrets == NULL || c->npublic_keys == 0) {
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "%s: id, pdp_url, pdp_public_keys, registry and "
                         "secrets are required",
                         c->path);
        return -1;
    }
    if (n == 0)
        n = 1;
    if (n >= sizeof(dir))
        return -1;
    memcpy(dir, slash == NULL ? "." : c->path, n);
    dir[n] = '\0';
    rc |= resolve(dir, &c->pdp_token_file);
    rc |= resolve(dir, &c->registry);
    rc |= resolve(dir, &c->secrets);
    rc |= resolve(dir, &c->secrets_key);
    rc |= resolve(dir, &c->work_dir);
    rc |= resolve(dir, &c->spool_dir);
    for (i = 0; i < c->npublic_keys; i++)
        rc |= resolve(dir, &c->public_keys[i]);
    if (rc != 0)
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return rc;
}

static int
read_lines(struct exec_config *c, FILE *f, struct ig_err *err)
{
    char line[LINE_MAX_LEN + 2], where[4200];
    char *s, *eq;
    int no = 0;

    while (fgets(line, sizeof(line), f) != NULL) {
        no++;
        (void)snprintf(where, sizeof(where), "%s:%d", c->path, no);
        if (strlen(line) > LINE_MAX_LEN) {
            (void)ig_err_set(err, IG_ERR_INVALID, "%s: line too long", where);
            return -1;
        }
        ig_strip_comment(line);
        s = ig_trim(line);
        if (*s == '\0')
            continue;
        eq = strchr(s, '=');
        if (eq == NULL) {
            (void)ig_err_set(err, IG_ERR_INVALID, "%s: expected key = value",
                             where);
            return -1;
        }
        *eq = '\0';
        if (set_key(c, ig_trim(s), ig_trim(eq + 1), where, err) != 0)
            return -1;
    }
    return 0;
}

/* Every default; -1 when out of memory. */
static int
defaults(struct exec_config *c)
{
    c->listen_port = 8701;
    c->max_concurrent = 32;
    c->pdp_timeout_ms = 5000;
    c->threads = 2;
    c->max_connections = 4096;
    c->max_per_address = 2048;
    c->request_timeout_ms = 10000;
    c->outcome_retry_ms = 500;
    if ((c->listen_host = strdup("127.0.0.1")) == NULL ||
        (c->work_dir = strdup("work")) == NULL ||
        (c->spool_dir = strdup("spool")) == NULL)
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
    struct exec_config *c = calloc(1, sizeof(*c));
    FILE *f;
    int rc;

    *out = NULL;
    if (c == NULL || (c->path = strdup(path)) == NULL || defaults(c) != 0) {
        exec_config_free(c);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    f = fopen(path, "r");
    if (f == NULL) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", path,
                         strerror(errno));
        exec_config_free(c);
        return IG_ERR_IO;
    }
    rc = read_lines(c, f, err);
    (void)fclose(f);
    if (rc == 0)
        rc = finish(c, err);
    if (rc != 0) {
        exec_config_free(c);
        return IG_ERR_INVALID;
    }
    *out = c;
    return IG_OK;
}
