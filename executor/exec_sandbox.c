/*
 * exec_sandbox.c - argv templates and the bubblewrap probe.
 *
 * exec_argv_build walks the registry's argv template once: literals are
 * copied, "{name}" takes one string or number parameter, "{name...}"
 * splices an array of strings. Every element is checked for NUL bytes and
 * length, the count is capped, and the final argv[0] must be listed in
 * "allow" - the agent chooses values, never the program outside the list.
 *
 * exec_sandbox_probe looks for bwrap and runs it once around
 * /usr/bin/true, in the same sandbox every action runs in (exec_layout.c),
 * as the executor's own user: a host that forbids user namespaces fails
 * here, and the caller then refuses every action that demands a sandbox.
 * The answer is computed under pthread_once and kept for the life of the
 * process. (exec_selfcheck.c later proves, as the sandbox user, that the
 * sandbox sees nothing of ours.)
 */
#include "exec_sandbox.h"

#include "exec_run_int.h"

#include <pthread.h>
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

/* ---- bubblewrap probe ---- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
/* Set while probe_run's own sandboxed run is being planned (inside
   pthread_once, so by one thread): that run must not probe again. */
static _Thread_local int probing;
static enum ig_status probe_status;
static char probe_reason[IG_ERR_MSGMAX];
static char bwrap_path[512];

/* First executable bwrap: fixed system paths, then the executor's PATH. */
static int
find_bwrap(void)
{
    static const char *const fixed[] = {"/usr/bin/bwrap",
                                        "/usr/local/bin/bwrap", NULL};
    const char *path = getenv("PATH"), *p, *end;
    size_t i, n;
    int w;

    for (i = 0; fixed[i] != NULL; i++) {
        if (access(fixed[i], X_OK) == 0) {
            (void)snprintf(bwrap_path, sizeof(bwrap_path), "%s", fixed[i]);
            return 1;
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
            return 1;
    }
    bwrap_path[0] = '\0';
    return 0;
}

/* Run the real sandbox once around /usr/bin/true; record the verdict. */
static void
probe_run(void)
{
    static char prog[] = "/usr/bin/true";
    char *argv[2];
    struct exec_run_opts o = {0};
    struct exec_run_result res = {0};
    struct exec_run *r = NULL;
    struct ig_err e;

    argv[0] = prog;
    argv[1] = NULL;
    o.argv = argv;
    o.argc = 1;
    o.sandbox = 1;
    o.timeout_ms = 10000;
    o.max_output_bytes = 200;
    probing = 1;
    probe_status = exec_run_start(&o, &r, &e);
    if (probe_status == IG_OK)
        probe_status = exec_run_wait(r, NULL, NULL, &res, &e);
    probing = 0;
    if (probe_status != IG_OK) {
        (void)snprintf(probe_reason, sizeof(probe_reason), "%.60s: %.180s",
                       bwrap_path, e.msg);
        probe_status = IG_ERR_IO;
    } else if (res.outcome != EXEC_OUTCOME_COMPLETED || res.exit_code != 0) {
        (void)snprintf(probe_reason, sizeof(probe_reason),
                       "%.60s fails (exit %d, signal %d): %.150s", bwrap_path,
                       res.exit_code, res.term_signal,
                       res.err != NULL ? res.err : "");
        probe_status = IG_ERR_IO;
    }
    probe_reason[strcspn(probe_reason, "\n")] = '\0'; /* one line */
    exec_run_result_release(&res);
    exec_run_free(r);
}

static void
probe_init(void)
{
    if (!find_bwrap()) {
        probe_status = IG_ERR_NOTFOUND;
        (void)snprintf(probe_reason, sizeof(probe_reason),
                       "bwrap not found (/usr/bin, /usr/local/bin, PATH)");
        return;
    }
    probe_run();
    if (probe_status != IG_OK)
        bwrap_path[0] = '\0';
}

enum ig_status
exec_sandbox_probe(struct ig_err *err)
{
    if (pthread_once(&probe_once, probe_init) != 0)
        return ig_err_set(err, IG_ERR_IO, "sandbox probe: pthread_once");
    if (probe_status != IG_OK)
        return ig_err_set(err, probe_status, "%s", probe_reason);
    return IG_OK;
}

const char *
exec_sandbox_bwrap(void)
{
    if (probing)
        return bwrap_path;
    if (exec_sandbox_probe(NULL) != IG_OK)
        return NULL;
    return bwrap_path;
}

int
exec_sandbox_probing(void)
{
    return probing;
}
