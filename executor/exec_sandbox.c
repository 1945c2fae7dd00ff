/*
 * exec_sandbox.c - argv templates and the bubblewrap probe.
 *
 * exec_argv_build walks the registry's argv template once: literals are
 * copied, "{name}" takes one string or number parameter, "{name...}"
 * splices an array of strings. Every element is checked for NUL bytes and
 * length, the count is capped, and the final argv[0] must be listed in
 * "allow" - the agent chooses values, never the program outside the list.
 *
 * It also keeps where bwrap is and the bubblewrap probe's verdict
 * (exec_sandbox_probe.c runs the probe, above exec_run.c; a run plan only
 * reads the verdict here, so planning never starts a run). Until the
 * probe has passed, no sandboxed run is planned: fail closed.
 */
#include "exec_sandbox.h"

#include "exec_run_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_canon.h"
#include "ig_limits.h"

struct argv_acc {
    char **v;
    size_t n;
    struct ig_err *err;
};

/* Append a copy of s (len bytes) to the argv being built. */
static enum ig_status
acc_push(struct argv_acc *a, const char *s, size_t len, const char *what)
{
    char *copy;

    if (a->n >= IG_EXEC_MAX_ARGV)
        return ig_err_set(a->err, IG_ERR_LIMIT,
                          "exec: argv has more than %d elements",
                          IG_EXEC_MAX_ARGV);
    if (len > EXEC_ARGV_ELEM_MAX)
        return ig_err_set(a->err, IG_ERR_LIMIT,
                          "exec: %.64s: argument over %d bytes", what,
                          EXEC_ARGV_ELEM_MAX);
    if (memchr(s, '\0', len) != NULL)
        return ig_err_set(a->err, IG_ERR_INVALID,
                          "exec: %.64s: argument contains a NUL byte", what);
    if ((copy = malloc(len + 1)) == NULL)
        return ig_err_set(a->err, IG_ERR_NOMEM, "out of memory");
    memcpy(copy, s, len);
    copy[len] = '\0';
    a->v[a->n++] = copy;
    return IG_OK;
}

/* "{name}": one string, or a number in canonical form. */
static enum ig_status
fill_one(struct argv_acc *a, const json_t *params, const char *name)
{
    const json_t *v = json_object_get(params, name);
    char num[IG_NUMBER_STRMAX];
    size_t len;

    if (json_is_string(v))
        return acc_push(a, json_string_value(v), json_string_length(v), name);
    if (json_is_number(v)) {
        if (ig_canon_number(json_number_value(v), num, &len) != IG_OK)
            return ig_err_set(a->err, IG_ERR_INVALID,
                              "exec: parameter %.64s: not a finite number",
                              name);
        return acc_push(a, num, len, name);
    }
    return ig_err_set(a->err, IG_ERR_INVALID, "exec: parameter %.64s: %s", name,
                      v == NULL ? "missing" : "must be a string or number");
}

/* "{name...}": every element of an array of strings; absent: none. */
static enum ig_status
fill_splice(struct argv_acc *a, const json_t *params, const char *name)
{
    const json_t *v = json_object_get(params, name), *e;
    enum ig_status st;
    size_t i;

    if (v == NULL)
        return IG_OK;
    if (!json_is_array(v))
        return ig_err_set(a->err, IG_ERR_INVALID,
                          "exec: parameter %.64s: must be an array", name);
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e))
            return ig_err_set(a->err, IG_ERR_INVALID,
                              "exec: parameter %.64s[%zu]: must be a string",
                              name, i);
        st = acc_push(a, json_string_value(e), json_string_length(e), name);
        if (st != IG_OK)
            return st;
    }
    return IG_OK;
}

/* One template element: a placeholder (as exec_settings.c accepts) or a
   literal. */
static enum ig_status
fill_elem(struct argv_acc *a, const json_t *params, const char *s, size_t len)
{
    char name[256];
    size_t n;
    int splice;

    if (len < 2 || s[0] != '{' || s[len - 1] != '}')
        return acc_push(a, s, len, "argv template");
    splice = len >= 5 && memcmp(s + len - 4, "...}", 4) == 0;
    n = len - (splice ? 5 : 2);
    if (n == 0 || n >= sizeof(name) || memchr(s + 1, '{', n) != NULL ||
        memchr(s + 1, '}', n) != NULL)
        return ig_err_set(a->err, IG_ERR_INVALID,
                          "exec: bad argv template element");
    memcpy(name, s + 1, n);
    name[n] = '\0';
    return splice ? fill_splice(a, params, name) : fill_one(a, params, name);
}

/* argv[0] must be listed in allow (when allow is present). */
static enum ig_status
check_allow(const json_t *allow, const char *prog, struct ig_err *err)
{
    const json_t *e;
    size_t i;

    if (allow == NULL)
        return IG_OK;
    if (!json_is_array(allow))
        return ig_err_set(err, IG_ERR_INVALID, "exec: allow: not an array");
    json_array_foreach(allow, i, e) if (json_is_string(e) &&
                                        strcmp(json_string_value(e), prog) ==
                                            0) return IG_OK;
    return ig_err_set(err, IG_ERR_INVALID,
                      "exec: program \"%.64s\" is not in allow", prog);
}

enum ig_status
exec_argv_build(const json_t *settings, const json_t *params, char ***argv_out,
                size_t *argc_out, struct ig_err *err)
{
    const json_t *tmpl = json_object_get(settings, "argv"), *e;
    struct argv_acc a = {NULL, 0, err};
    enum ig_status st = IG_OK;
    size_t i;

    *argv_out = NULL;
    *argc_out = 0;
    if (!json_is_array(tmpl) || (params != NULL && !json_is_object(params)))
        return ig_err_set(err, IG_ERR_INVALID, "exec: bad argv template");
    if ((a.v = calloc(IG_EXEC_MAX_ARGV + 1, sizeof(*a.v))) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    json_array_foreach(tmpl, i, e)
    {
        if (!json_is_string(e)) {
            st = ig_err_set(err, IG_ERR_INVALID, "exec: bad argv template");
            goto out;
        }
        st = fill_elem(&a, params, json_string_value(e), json_string_length(e));
        if (st != IG_OK)
            goto out;
    }
    if (a.n == 0 || a.v[0][0] == '\0') {
        st = ig_err_set(err, IG_ERR_INVALID, "exec: empty program name");
        goto out;
    }
    st = check_allow(json_object_get(settings, "allow"), a.v[0], err);
out:
    if (st != IG_OK) {
        exec_argv_free(a.v, a.n);
        return st;
    }
    *argv_out = a.v;
    *argc_out = a.n;
    return IG_OK;
}

void
exec_argv_free(char **argv, size_t argc)
{
    size_t i;

    if (argv == NULL)
        return;
    for (i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

/* ---- bubblewrap: where it is and whether it works ---- */

/* What the probe (exec_sandbox_probe.c) found; set once, under its
   pthread_once, before anyone reads it through exec_sandbox_verdict. */
static enum ig_status verdict = IG_ERR_IO;
static atomic_int probed; /* released after verdict, reason, bwrap_path */
static char reason[IG_ERR_MSGMAX];
static char bwrap_path[512];
/* Set while the probe plans its own sandboxed run (by one thread). */
static _Thread_local int probing;

/* First executable bwrap: fixed system paths, then the executor's PATH. */
const char *
exec_sandbox_find_bwrap(void)
{
    static const char *const fixed[] = {"/usr/bin/bwrap",
                                        "/usr/local/bin/bwrap", NULL};
    const char *path = getenv("PATH"), *p, *end;
    size_t i, n;
    int w;

    for (i = 0; fixed[i] != NULL; i++) {
        if (access(fixed[i], X_OK) == 0) {
            (void)snprintf(bwrap_path, sizeof(bwrap_path), "%s", fixed[i]);
            return bwrap_path;
        }
    }
    for (p = path; p != NULL && *p != '\0'; p = *end ? end + 1 : end) {
        end = strchr(p, ':');
        if (end == NULL)
            end = p + strlen(p);
        n = (size_t)(end - p);
        if (n == 0 || p[0] != '/')
            continue;
        w = snprintf(bwrap_path, sizeof(bwrap_path), "%.*s/bwrap", (int)n, p);
        if (w > 0 && (size_t)w < sizeof(bwrap_path) &&
            access(bwrap_path, X_OK) == 0)
            return bwrap_path;
    }
    bwrap_path[0] = '\0';
    return NULL;
}

void
exec_sandbox_set_probing(int on)
{
    probing = on;
}

int
exec_sandbox_probing(void)
{
    return probing;
}

void
exec_sandbox_set_verdict(enum ig_status st, const char *why)
{
    verdict = st;
    (void)snprintf(reason, sizeof(reason), "%s", st == IG_OK ? "" : why);
    reason[strcspn(reason, "\n")] = '\0'; /* one line */
    if (st != IG_OK)
        bwrap_path[0] = '\0';
    atomic_store(&probed, 1);
}

enum ig_status
exec_sandbox_verdict(struct ig_err *err)
{
    if (!atomic_load(&probed))
        return ig_err_set(err, IG_ERR_IO, "the sandbox has not been probed");
    if (verdict != IG_OK)
        return ig_err_set(err, verdict, "%s", reason);
    return IG_OK;
}

const char *
exec_sandbox_bwrap(void)
{
    if (probing || (atomic_load(&probed) && verdict == IG_OK))
        return bwrap_path;
    return NULL;
}
