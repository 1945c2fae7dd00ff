/*
 * exec_config.c - read and check the executor's configuration (see
 * exec_config.h). One pass over "key = value" lines into a table of
 * setters; then required keys and paths relative to the file's directory.
 */
#include "exec_config.h"

#include <ctype.h>
#include <errno.h>
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

static int
set_list(struct exec_config *c, const char *v)
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
        arr = realloc(c->public_keys, (c->npublic_keys + 1) * sizeof(*arr));
        if (arr == NULL || (arr[c->npublic_keys] = strdup(p)) == NULL) {
            if (arr != NULL)
                c->public_keys = arr;
            free(copy);
            return -1;
        }
        c->public_keys = arr;
        c->npublic_keys++;
    }
    free(copy);
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
        rc = set_list(c, v);
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

enum ig_status
exec_config_load(const char *path, struct exec_config **out, struct ig_err *err)
{
    struct exec_config *c = calloc(1, sizeof(*c));
    FILE *f;
    int rc;

    *out = NULL;
    if (c == NULL || (c->path = strdup(path)) == NULL ||
        (c->listen_host = strdup("127.0.0.1")) == NULL) {
        exec_config_free(c);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    c->listen_port = 8701;
    c->max_concurrent = 32;
    c->pdp_timeout_ms = 5000;
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
