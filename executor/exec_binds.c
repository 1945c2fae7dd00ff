/*
 * exec_binds.c - the host paths an exec action's sandbox may see beyond
 * the fixed layout (exec_layout.c): the registry's "binds".
 *
 *   "binds": [{"src": "/srv/repo", "dest": "/repo", "mode": "ro"}, ...]
 *
 * At registry load each bind is checked: src and dest absolute and
 * normalised (no empty, "." or ".." component, no trailing "/"), src must
 * exist and is resolved (realpath) so a symlink cannot later point it
 * elsewhere, dest may not be "/" nor replace what the layout provides
 * (/usr, /bin, /lib*, /sbin, /proc, /dev, /etc itself and its stub files,
 * /tmp, /scratch, the probe), mode is "ro" (default) or "rw", at most
 * IG_EXEC_MAX_BINDS. At start the server hands over its own files and
 * exec_registry_check_binds refuses any bind whose source is one of them,
 * holds one (a parent directory), or lies inside one (a data directory).
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "exec_registry.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_registry_int.h"
#include "exec_sandbox.h"
#include "ig_limits.h"

/* 1 when p is "/" followed by components that are not empty, "." or "..",
   with no trailing "/". */
static int
path_normal(const char *p)
{
    const char *c = p, *end;
    size_t n;

    if (p[0] != '/' || strlen(p) >= PATH_MAX)
        return 0;
    while (*c == '/') {
        c++;
        end = strchr(c, '/');
        n = end != NULL ? (size_t)(end - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') ||
            (n == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += n;
    }
    return *c == '\0';
}

/* 1 when a is b or lies below it. */
static int
path_within(const char *a, const char *b)
{
    size_t n = strlen(b);

    if (strcmp(b, "/") == 0)
        return 1;
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* What the layout provides: a dest may be none of these nor below them
   (the first group), or exactly one of these (the second). */
static const char *const dest_under[] = {"/usr",
                                         "/bin",
                                         "/sbin",
                                         "/lib",
                                         "/lib32",
                                         "/lib64",
                                         "/libx32",
                                         "/proc",
                                         "/dev",
                                         EXEC_SANDBOX_SCRATCH,
                                         EXEC_SANDBOX_PROBE,
                                         NULL};
static const char *const dest_exact[] = {
    "/etc", "/etc/passwd", "/etc/group", "/etc/ld.so.cache", "/tmp", NULL};

static enum ig_status
check_dest(const struct exec_reg_ctx *c, const char *key, const char *dest)
{
    const char *const *d;

    if (!path_normal(dest) || strcmp(dest, "/") == 0)
        return exec_reg_fail(c, key,
                             "dest must be an absolute path other than / "
                             "without . or .. or // (got \"%.200s\")",
                             dest);
    for (d = dest_under; *d != NULL; d++)
        if (path_within(dest, *d))
            return exec_reg_fail(c, key, "dest %.200s would replace %s", dest,
                                 *d);
    for (d = dest_exact; *d != NULL; d++)
        if (strcmp(dest, *d) == 0)
            return exec_reg_fail(c, key, "dest %.200s would replace %s", dest,
                                 *d);
    return IG_OK;
}

/* One {"src","dest","mode"} object into b (strings malloc'd). */
static enum ig_status
load_one(const struct exec_reg_ctx *c, const char *what, const json_t *e,
         size_t i, struct exec_bind *b)
{
    static const char *const keys[] = {"src", "dest", "mode", NULL};
    const char *src = json_string_value(json_object_get(e, "src"));
    const char *dest = json_string_value(json_object_get(e, "dest"));
    const char *mode = json_string_value(json_object_get(e, "mode"));
    char key[48], real[PATH_MAX];
    enum ig_status st;

    (void)snprintf(key, sizeof(key), "%.20s[%zu]", what, i);
    if (!json_is_object(e))
        return exec_reg_fail(c, key, "must be an object {src, dest, mode}");
    if ((st = exec_reg_check_keys(c, e, key, keys)) != IG_OK)
        return st;
    if (src == NULL || dest == NULL ||
        exec_reg_has_nul(src, json_string_length(json_object_get(e, "src"))) ||
        exec_reg_has_nul(dest, json_string_length(json_object_get(e, "dest"))))
        return exec_reg_fail(c, key, "src and dest must be strings");
    if (!path_normal(src))
        return exec_reg_fail(
            c, key,
            "src must be an absolute path without . or .. or // "
            "(got \"%.200s\")",
            src);
    if ((st = check_dest(c, key, dest)) != IG_OK)
        return st;
    if (mode != NULL && strcmp(mode, "ro") != 0 && strcmp(mode, "rw") != 0)
        return exec_reg_fail(c, key, "mode must be \"ro\" or \"rw\"");
    if (realpath(src, real) == NULL)
        return exec_reg_fail(c, key, "src %.200s does not exist", src);
    if (strcmp(real, "/") == 0)
        return exec_reg_fail(c, key, "src may not be /");
    b->rw = mode != NULL && strcmp(mode, "rw") == 0;
    b->src = strdup(real);
    b->dest = strdup(dest);
    if (b->src == NULL || b->dest == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

enum ig_status
exec_binds_parse(const struct exec_reg_ctx *c, const char *what,
                 const json_t *v, struct exec_bind **out, size_t *n)
{
    const json_t *e;
    enum ig_status st;
    size_t i, j;

    if (v == NULL)
        return IG_OK;
    if (!json_is_array(v) || json_array_size(v) > IG_EXEC_MAX_BINDS)
        return exec_reg_fail(c, what, "must be an array of at most %d binds",
                             IG_EXEC_MAX_BINDS);
    if (json_array_size(v) == 0)
        return IG_OK;
    *out = calloc(json_array_size(v), sizeof(**out));
    if (*out == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    json_array_foreach(v, i, e)
    {
        st = load_one(c, what, e, i, &(*out)[i]);
        *n = i + 1; /* released from here on */
        if (st != IG_OK)
            return st;
        for (j = 0; j < i; j++)
            if (path_within((*out)[i].dest, (*out)[j].dest) ||
                path_within((*out)[j].dest, (*out)[i].dest))
                return exec_reg_fail(c, what,
                                     "dest %.200s overlaps dest %.200s",
                                     (*out)[i].dest, (*out)[j].dest);
    }
    return IG_OK;
}

void
exec_binds_free(struct exec_bind *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free((char *)(uintptr_t)b[i].src);
        free((char *)(uintptr_t)b[i].dest);
    }
    free(b);
}

enum ig_status
exec_binds_load(const struct exec_reg_ctx *c, struct exec_action *a)
{
    return exec_binds_parse(c, "exec.binds",
                            json_object_get(a->settings, "binds"), &a->binds,
                            &a->nbinds);
}

void
exec_binds_release(struct exec_action *a)
{
    exec_binds_free(a->binds, a->nbinds);
    a->binds = NULL;
    a->nbinds = 0;
}

const struct exec_bind *
exec_action_binds(const struct exec_action *a, size_t *n)
{
    *n = a->nbinds;
    return a->binds;
}

enum ig_status
exec_registry_check_binds(const struct exec_registry *r, const char *const *own,
                          size_t nown, struct ig_err *err)
{
    char real[PATH_MAX];
    const char *p;
    size_t i, j, k;

    for (i = 0; i < r->n; i++) {
        const struct exec_action *a = &r->actions[i];
        for (j = 0; j < a->nbinds; j++) {
            for (k = 0; k < nown; k++) {
                p = realpath(own[k], real) != NULL ? real : own[k];
                if (path_within(p, a->binds[j].src) ||
                    path_within(a->binds[j].src, p))
                    return ig_err_set(
                        err, IG_ERR_INVALID,
                        "action \"%.64s\": exec.binds[%zu]: %.200s would "
                        "show the sandbox the executor's own %.200s",
                        a->name, j, a->binds[j].src, own[k]);
            }
        }
    }
    for (i = 0; i < r->nmcps; i++) {
        const struct exec_mcp_server *m = &r->mcps[i];
        for (j = 0; j < m->nbinds; j++) {
            for (k = 0; k < nown; k++) {
                p = realpath(own[k], real) != NULL ? real : own[k];
                if (path_within(p, m->binds[j].src) ||
                    path_within(m->binds[j].src, p))
                    return ig_err_set(
                        err, IG_ERR_INVALID,
                        "mcp \"%.64s\": binds[%zu]: %.200s would show the "
                        "sandbox the executor's own %.200s",
                        m->alias, j, m->binds[j].src, own[k]);
            }
        }
    }
    return IG_OK;
}
