/*
 * exec_registry.c - load the executor's sealed action registry.
 *
 * exec_registry_load reads the file (at most IG_EXEC_REGISTRY_MAX_BYTES),
 * parses it with the strict JSON reader and checks it top-down: the
 * document is {"actions": {...}} with an optional "git": {...}
 * (exec_git_repos.c); for each action its name, its
 * keys, "${NAME}" expansion in every string value below it, the handler
 * and credential, the parameter schema (exec_schema.c) and the handler
 * settings (exec_settings.c). The first error stops the load and names
 * the file, the action and the key. Actions are kept sorted by name for
 * exec_registry_find; the registry never changes afterwards.
 */
#include "exec_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_registry_int.h"
#include "ig_buf.h"
#include "ig_file.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "ig_text.h"

/* Length of the variable name at s (a letter or _, then alnum or _). */
static size_t
var_name_len(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n && (s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
                     (s[i] >= 'a' && s[i] <= 'z') ||
                     (i > 0 && s[i] >= '0' && s[i] <= '9')))
        i++;
    return i;
}

/* Expand every ${NAME} in the string v from the environment, in place. */
static enum ig_status
expand_string(const struct exec_reg_ctx *c, const char *key, json_t *v)
{
    const char *s = json_string_value(v), *val;
    size_t len = json_string_length(v), i = 0, n;
    enum ig_status st = IG_OK;
    char name[IG_EXEC_ENV_NAME_MAX + 1];
    struct ig_buf b;

    for (i = 0; i + 1 < len && !(s[i] == '$' && s[i + 1] == '{'); i++)
        ;
    if (i + 1 >= len)
        return IG_OK;
    i = 0;
    ig_buf_init(&b, IG_EXEC_REGISTRY_MAX_BYTES);
    while (i < len && st == IG_OK) {
        if (s[i] != '$' || i + 1 >= len || s[i + 1] != '{') {
            st = ig_buf_addc(&b, s[i++]);
            continue;
        }
        n = var_name_len(s + i + 2, len - i - 2);
        if (n == 0 || n >= sizeof(name) || i + 2 + n >= len ||
            s[i + 2 + n] != '}') {
            st = exec_reg_fail(c, key, "malformed ${...}: want ${NAME}");
            goto out;
        }
        memcpy(name, s + i + 2, n);
        name[n] = '\0';
        val = getenv(name);
        if (val == NULL) {
            st = exec_reg_fail(c, key, "environment variable %.64s is not set",
                               name);
            goto out;
        }
        st = ig_buf_adds(&b, val);
        i += n + 3;
    }
    if (st == IG_ERR_NOMEM) {
        st = ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (st != IG_OK)
        st = exec_reg_fail(c, key, "expanded value is too long");
    else if (json_string_setn(v, b.data != NULL ? b.data : "", b.len) != 0)
        st = exec_reg_fail(c, key, "expanded value is not valid UTF-8");
out:
    ig_buf_release(&b);
    return st;
}

/* Expand ${NAME} in every string value below v; path names v. */
static enum ig_status
expand_tree(const struct exec_reg_ctx *c, const char *path, json_t *v)
{
    enum ig_status st = IG_OK;
    char sub[200];
    const char *k;
    json_t *e;
    size_t i;

    if (json_is_string(v))
        return expand_string(c, path, v);
    if (json_is_object(v)) {
        json_object_foreach(v, k, e)
        {
            (void)snprintf(sub, sizeof(sub), "%s%s%.64s", path,
                           path[0] != '\0' ? "." : "", k);
            if ((st = expand_tree(c, sub, e)) != IG_OK)
                return st;
        }
    }
    if (json_is_array(v)) {
        json_array_foreach(v, i, e)
        {
            (void)snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            if ((st = expand_tree(c, sub, e)) != IG_OK)
                return st;
        }
    }
    return IG_OK;
}

/* ^[a-z0-9][a-z0-9._-]{0,63}$, as exec_secret_name_valid. */
static int
credential_name_valid(const char *s, size_t len)
{
    size_t i;

    if (len == 0 || len > 64 || s[0] == '.' || s[0] == '_' || s[0] == '-')
        return 0;
    for (i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return 0;
    return 1;
}

/* The handler, its settings object and the credential of one action. */
static enum ig_status
load_handler(const struct exec_reg_ctx *c, json_t *def, struct exec_action *a)
{
    json_t *h = json_object_get(def, "handler");
    json_t *cred = json_object_get(def, "credential");
    const char *want, *other;

    if (!json_is_string(h))
        return exec_reg_fail(c, "handler", "must be \"http\" or \"exec\"");
    if (strcmp(json_string_value(h), "http") == 0)
        a->handler = EXEC_HANDLER_HTTP;
    else if (strcmp(json_string_value(h), "exec") == 0)
        a->handler = EXEC_HANDLER_EXEC;
    else
        return exec_reg_fail(c, "handler", "must be \"http\" or \"exec\"");
    want = a->handler == EXEC_HANDLER_HTTP ? "http" : "exec";
    other = a->handler == EXEC_HANDLER_HTTP ? "exec" : "http";
    a->settings = json_object_get(def, want);
    if (a->settings == NULL)
        return exec_reg_fail(c, want, "missing (handler is \"%s\")", want);
    if (!json_is_object(a->settings))
        return exec_reg_fail(c, want, "must be an object");
    if (json_object_get(def, other) != NULL)
        return exec_reg_fail(c, other, "not allowed (handler is \"%s\")", want);
    if (cred != NULL) {
        if (!json_is_string(cred) ||
            !credential_name_valid(json_string_value(cred),
                                   json_string_length(cred)))
            return exec_reg_fail(c, "credential",
                                 "must be a secret name "
                                 "^[a-z0-9][a-z0-9._-]{0,63}$");
        a->credential = strdup(json_string_value(cred));
        if (a->credential == NULL)
            return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    }
    return IG_OK;
}

static void
action_release(struct exec_action *a)
{
    size_t i;

    free(a->name);
    free(a->credential);
    for (i = 0; i < a->nparams; i++)
        exec_param_release(&a->params[i]);
    free(a->params);
    exec_binds_release(a);
}

/* Check one action definition and fill a. */
static enum ig_status
load_action(struct exec_reg_ctx *c, const char *name, json_t *def,
            struct exec_action *a)
{
    static const char *const keys[] = {"handler", "credential", "params",
                                       "http",    "exec",       NULL};
    const json_t *params;
    enum ig_status st;

    c->action = name;
    if (!ig_action_valid(name))
        return exec_reg_fail(
            c, NULL, "invalid action name: want ^[a-z][a-z0-9._:-]{0,119}$");
    if (!json_is_object(def))
        return exec_reg_fail(c, NULL, "must be an object");
    if ((st = exec_reg_check_keys(c, def, "", keys)) != IG_OK)
        return st;
    a->name = strdup(name);
    if (a->name == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    if ((st = expand_tree(c, "", def)) != IG_OK ||
        (st = load_handler(c, def, a)) != IG_OK)
        return st;
    params = json_object_get(def, "params");
    if (params != NULL && !json_is_object(params))
        return exec_reg_fail(c, "params", "must be an object");
    if ((st = exec_schema_load(c, params, a)) != IG_OK)
        return st;
    return exec_settings_load(c, a);
}

static int
action_cmp(const void *x, const void *y)
{
    const struct exec_action *a = x, *b = y;

    return strcmp(a->name, b->name);
}

static int
name_cmp(const void *key, const void *elem)
{
    const struct exec_action *a = elem;

    return strcmp(key, a->name);
}

/* Check the document's top level and load every action into r. */
static enum ig_status
load_doc(struct exec_reg_ctx *c, struct exec_registry *r)
{
    static const char *const keys[] = {"actions", "git", "mcp", NULL};
    json_t *actions = json_object_get(r->doc, "actions"), *def;
    json_t *git = json_object_get(r->doc, "git");
    json_t *mcp = json_object_get(r->doc, "mcp");
    enum ig_status st;
    const char *name;

    if (!json_is_object(r->doc))
        return exec_reg_fail(c, NULL,
                             "must be a JSON object {\"actions\": {...}}");
    if ((st = exec_reg_check_keys(c, r->doc, "", keys)) != IG_OK)
        return st;
    if (!json_is_object(actions))
        return exec_reg_fail(c, "actions", "must be an object");
    r->actions = calloc(json_object_size(actions) + 1, sizeof(*r->actions));
    if (r->actions == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    json_object_foreach(actions, name, def)
    {
        st = load_action(c, name, def, &r->actions[r->n]);
        r->n++; /* counted even on failure, so it is released */
        if (st != IG_OK)
            return st;
    }
    c->action = NULL;
    if (r->n > 0)
        qsort(r->actions, r->n, sizeof(*r->actions), action_cmp);
    if (git != NULL && (st = expand_tree(c, "git", git)) != IG_OK)
        return st;
    if ((st = exec_git_repos_load(c, git, r)) != IG_OK)
        return st;
    if (mcp != NULL && (st = expand_tree(c, "mcp", mcp)) != IG_OK)
        return st;
    return exec_mcp_servers_load(c, mcp, r);
}

enum ig_status
exec_registry_load(const char *path, struct exec_registry **out,
                   struct ig_err *err)
{
    struct exec_reg_ctx c = {path, NULL, err};
    struct exec_registry *r = NULL;
    struct ig_err jerr;
    enum ig_status st;
    char *text = NULL;
    size_t len = 0;

    *out = NULL;
    /* A missing registry is IG_ERR_IO, as exec_registry.h promises. */
    st = ig_file_read(path, IG_EXEC_REGISTRY_MAX_BYTES, &text, &len, err);
    if (st == IG_ERR_NOTFOUND)
        st = IG_ERR_IO;
    if (st != IG_OK)
        return st;
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = ig_json_parse(text, len, &r->doc, &jerr);
    if (st != IG_OK) {
        (void)ig_err_set(err, st, "%s:%d:%d: %s", path, jerr.line, jerr.column,
                         jerr.msg);
        goto out;
    }
    if ((st = load_doc(&c, r)) != IG_OK)
        goto out;
    *out = r;
    r = NULL;
out:
    exec_registry_free(r);
    free(text);
    return st;
}

void
exec_registry_free(struct exec_registry *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; i < r->n; i++)
        action_release(&r->actions[i]);
    free(r->actions);
    free(r->repos);
    exec_mcp_servers_free(r);
    json_decref(r->doc);
    free(r);
}

const struct exec_action *
exec_registry_find(const struct exec_registry *r, const char *action)
{
    if (r == NULL || action == NULL || r->n == 0)
        return NULL;
    return bsearch(action, r->actions, r->n, sizeof(*r->actions), name_cmp);
}

size_t
exec_registry_size(const struct exec_registry *r)
{
    return r != NULL ? r->n : 0;
}

const struct exec_action *
exec_registry_at(const struct exec_registry *r, size_t i)
{
    return r != NULL && i < r->n ? &r->actions[i] : NULL;
}

const char *
exec_action_name(const struct exec_action *a)
{
    return a->name;
}

enum exec_handler_kind
exec_action_handler(const struct exec_action *a)
{
    return a->handler;
}

const char *
exec_action_credential(const struct exec_action *a)
{
    return a->credential;
}

const json_t *
exec_action_settings(const struct exec_action *a)
{
    return a->settings;
}
