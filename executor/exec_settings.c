/*
 * exec_settings.c - check an action's handler settings at load and fill in
 * their defaults, so a handler reads a complete, validated object.
 *
 * "http": method, an absolute http(s) URL whose {param} placeholders may
 * appear only in the path and must name required string or integer
 * parameters, the credential header and prefix, body_fields and
 * query_fields (declared parameter names), timeout_ms,
 * max_response_bytes, and what the agent gets back (response,
 * response_fields: exec_response.c checks them).
 *
 * "exec": an argv template whose elements are literals without braces,
 * exactly "{name}" (a required string or number parameter) or exactly
 * "{name...}" (an array-of-strings parameter spliced in); allow (the
 * programs argv[0] may be, required when argv[0] is a placeholder),
 * timeout_ms, network, sandbox, max_output_bytes, env, scratch_bytes
 * (the sandbox's /scratch and /tmp) and binds (exec_binds.c).
 */
#include "exec_registry.h"

#include <stdio.h>
#include <string.h>

#include "exec_registry_int.h"
#include "exec_response.h"
#include "ig_json.h"
#include "ig_limits.h"

/* A string member without NUL bytes, or NULL with the error set. */
static const char *
get_string(const struct exec_reg_ctx *c, const json_t *obj, const char *prefix,
           const char *name, int required, enum ig_status *st)
{
    const json_t *v = json_object_get(obj, name);

    *st = IG_OK;
    if (v == NULL && !required)
        return NULL;
    if (json_is_string(v) &&
        !exec_reg_has_nul(json_string_value(v), json_string_length(v)))
        return json_string_value(v);
    *st = exec_reg_fail(c, prefix, "\"%s\" must be a string", name);
    return NULL;
}

/* Placeholder {name} at s (n bytes between braces) names a param of use. */
static enum ig_status
check_placeholder(const struct exec_reg_ctx *c, const char *key,
                  const struct exec_action *a, const char *s, size_t n,
                  int splice)
{
    char name[IG_EXEC_PARAM_NAME_MAX + 1];
    const struct exec_param *p;

    if (n == 0 || n >= sizeof(name))
        return exec_reg_fail(c, key, "placeholder does not name a parameter");
    memcpy(name, s, n);
    name[n] = '\0';
    p = exec_param_find(a, name);
    if (p == NULL)
        return exec_reg_fail(
            c, key, "placeholder {%s} is not a declared parameter", name);
    if (splice && !(p->type == EXEC_PT_ARRAY && p->items == EXEC_PT_STRING))
        return exec_reg_fail(
            c, key, "{%s...} must name an array-of-strings parameter", name);
    if (splice)
        return IG_OK;
    if (p->type != EXEC_PT_STRING && p->type != EXEC_PT_INTEGER &&
        (a->handler == EXEC_HANDLER_HTTP || p->type != EXEC_PT_NUMBER))
        return exec_reg_fail(c, key, "{%s} names a parameter of the wrong type",
                             name);
    if (!p->required)
        return exec_reg_fail(c, key, "{%s} must name a required parameter",
                             name);
    return IG_OK;
}

static enum ig_status
check_url(const struct exec_reg_ctx *c, const struct exec_action *a,
          const char *url)
{
    const char *key = "http.url", *rest, *q;
    size_t i, host, path_end;
    enum ig_status st;

    if (strncmp(url, "https://", 8) == 0)
        rest = url + 8;
    else if (strncmp(url, "http://", 7) == 0)
        rest = url + 7;
    else
        return exec_reg_fail(c, key, "must start with http:// or https://");
    for (i = 0; url[i] != '\0'; i++)
        if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
            return exec_reg_fail(c, key, "must not contain spaces or controls");
    host = strcspn(rest, "/?#");
    if (host == 0 || strcspn(rest, "{}@") < host)
        return exec_reg_fail(c, key,
                             "needs a host, without braces or userinfo");
    path_end = host + strcspn(rest + host, "?#");
    if (strpbrk(rest + path_end, "{}") != NULL)
        return exec_reg_fail(c, key, "placeholders only in the path");
    for (i = host; i < path_end; i++) {
        if (rest[i] == '}')
            return exec_reg_fail(c, key, "unmatched }");
        if (rest[i] != '{')
            continue;
        q = memchr(rest + i + 1, '}', path_end - i - 1);
        if (q == NULL)
            return exec_reg_fail(c, key, "unmatched {");
        st = check_placeholder(c, key, a, rest + i + 1,
                               (size_t)(q - rest) - i - 1, 0);
        if (st != IG_OK)
            return st;
        i = (size_t)(q - rest);
    }
    return IG_OK;
}

/* body_fields / query_fields: arrays of declared parameter names. */
static enum ig_status
check_fields(const struct exec_reg_ctx *c, const struct exec_action *a,
             json_t *http, const char *name)
{
    char key[64];
    json_t *v = json_object_get(http, name), *e;
    size_t i;

    (void)snprintf(key, sizeof(key), "http.%s", name);
    if (v == NULL) {
        /* json_object_set_new steals the new empty array. */
        if (json_object_set_new(http, name, json_array()) != 0)
            return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
        return IG_OK;
    }
    if (!json_is_array(v))
        return exec_reg_fail(c, key, "must be an array of parameter names");
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e) ||
            exec_param_find(a, json_string_value(e)) == NULL)
            return exec_reg_fail(c, key,
                                 "element %zu is not a declared parameter", i);
    }
    return IG_OK;
}

/* An HTTP header name: RFC 9110 token characters. */
static int
header_name_valid(const char *s)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') ||
              strchr("!#$%&'*+.^_`|~-", s[i]) != NULL))
            return 0;
    return i > 0 && i <= IG_EXEC_HEADER_NAME_MAX;
}

static enum ig_status
load_http(const struct exec_reg_ctx *c, struct exec_action *a)
{
    static const char *const keys[] = {"method",
                                       "url",
                                       "credential_header",
                                       "credential_prefix",
                                       "body_fields",
                                       "query_fields",
                                       "timeout_ms",
                                       "max_response_bytes",
                                       "max_concurrent",
                                       "response",
                                       "response_fields",
                                       NULL};
    static const char *const methods[] = {"GET",   "POST",   "PUT",
                                          "PATCH", "DELETE", NULL};
    json_t *h = a->settings;
    const char *m, *url, *hdr, *pfx;
    enum ig_status st;
    struct ig_err e;
    double d;
    size_t i;

    if ((st = exec_reg_check_keys(c, h, "http", keys)) != IG_OK)
        return st;
    if ((m = get_string(c, h, "http", "method", 1, &st)) == NULL)
        return st;
    for (i = 0; methods[i] != NULL && strcmp(m, methods[i]) != 0; i++)
        ;
    if (methods[i] == NULL)
        return exec_reg_fail(c, "http.method",
                             "must be GET, POST, PUT, PATCH or DELETE");
    if ((url = get_string(c, h, "http", "url", 1, &st)) == NULL ||
        (st = check_url(c, a, url)) != IG_OK)
        return st;
    hdr = get_string(c, h, "http", "credential_header", 0, &st);
    if (st == IG_OK)
        pfx = get_string(c, h, "http", "credential_prefix", 0, &st);
    if (st != IG_OK)
        return st;
    if (hdr != NULL && !header_name_valid(hdr))
        return exec_reg_fail(c, "http.credential_header", "not a header name");
    if (hdr != NULL && a->credential == NULL)
        return exec_reg_fail(c, "http.credential_header",
                             "set, but the action has no credential");
    if (pfx != NULL && (hdr == NULL || strpbrk(pfx, "\r\n") != NULL))
        return exec_reg_fail(c, "http.credential_prefix",
                             "needs credential_header and no line breaks");
    if ((st = check_fields(c, a, h, "body_fields")) != IG_OK ||
        (st = check_fields(c, a, h, "query_fields")) != IG_OK)
        return st;
    if ((st = exec_reg_get_int(c, h, "http", "timeout_ms", 1,
                               IG_EXEC_HTTP_TIMEOUT_MAX_MS,
                               IG_EXEC_HTTP_TIMEOUT_DEFAULT_MS, &d)) != IG_OK ||
        (st = exec_reg_get_int(c, h, "http", "max_concurrent", 1,
                               IG_EXEC_ACTION_CONCURRENT_MAX,
                               IG_EXEC_HTTP_CONCURRENT_DEFAULT, &d)) != IG_OK)
        return st;
    if ((st = exec_reg_get_int(c, h, "http", "max_response_bytes", 1,
                               IG_EXEC_MAX_OUTPUT_BYTES,
                               IG_EXEC_OUTPUT_DEFAULT_BYTES, &d)) != IG_OK)
        return st;
    if ((st = exec_response_settings_check(h, &e)) != IG_OK)
        return st == IG_ERR_NOMEM ? ig_err_set(c->err, st, "out of memory")
                                  : exec_reg_fail(c, NULL, "%s", e.msg);
    return IG_OK;
}

/* One argv template element. */
static enum ig_status
check_argv_elem(const struct exec_reg_ctx *c, const struct exec_action *a,
                size_t idx, const json_t *e)
{
    const char *s = json_string_value(e);
    size_t len = json_string_length(e);
    char key[48];

    (void)snprintf(key, sizeof(key), "exec.argv[%zu]", idx);
    if (!json_is_string(e) || exec_reg_has_nul(s, len))
        return exec_reg_fail(c, key, "must be a string");
    if (len >= 2 && s[0] == '{' && s[len - 1] == '}') {
        if (len >= 5 && strncmp(s + len - 4, "...}", 4) == 0)
            return check_placeholder(c, key, a, s + 1, len - 5, 1);
        if (memchr(s + 1, '{', len - 2) == NULL &&
            memchr(s + 1, '}', len - 2) == NULL)
            return check_placeholder(c, key, a, s + 1, len - 2, 0);
    }
    if (strpbrk(s, "{}") != NULL)
        return exec_reg_fail(c, key,
                             "a placeholder must be a whole element: "
                             "\"{name}\" or \"{name...}\"");
    return IG_OK;
}

/* argv and allow; argv[0] must be an allowed literal or allow present. */
static enum ig_status
check_argv(const struct exec_reg_ctx *c, const struct exec_action *a)
{
    const json_t *argv = json_object_get(a->settings, "argv");
    const json_t *allow = json_object_get(a->settings, "allow"), *e;
    const char *first;
    enum ig_status st;
    size_t i;
    int found = 0;

    if (!json_is_array(argv) || json_array_size(argv) == 0 ||
        json_array_size(argv) > IG_EXEC_MAX_ARGV)
        return exec_reg_fail(c, "exec.argv",
                             "must be a non-empty array of "
                             "strings (at most %d)",
                             IG_EXEC_MAX_ARGV);
    json_array_foreach(argv, i, e) if ((st = check_argv_elem(c, a, i, e)) !=
                                       IG_OK) return st;
    first = json_string_value(json_array_get(argv, 0));
    if (allow == NULL)
        return first[0] == '{'
                   ? exec_reg_fail(c, "exec.allow",
                                   "required when argv[0] is a placeholder")
                   : IG_OK;
    if (!json_is_array(allow) || json_array_size(allow) == 0)
        return exec_reg_fail(c, "exec.allow",
                             "must be a non-empty array of "
                             "strings");
    json_array_foreach(allow, i, e)
    {
        if (!json_is_string(e) || json_string_length(e) == 0 ||
            exec_reg_has_nul(json_string_value(e), json_string_length(e)))
            return exec_reg_fail(c, "exec.allow",
                                 "must be a non-empty array of "
                                 "strings");
        found |= strcmp(json_string_value(e), first) == 0;
    }
    if (first[0] != '{' && !found)
        return exec_reg_fail(c, "exec.allow", "does not allow argv[0]");
    return IG_OK;
}

static enum ig_status
check_env(const struct exec_reg_ctx *c, const json_t *env)
{
    const char *k;
    json_t *v;
    size_t i;

    if (env == NULL)
        return IG_OK;
    if (!json_is_object(env))
        return exec_reg_fail(c, "exec.env", "must be an object of strings");
    json_object_foreach(ig_json_unconst(env), k, v)
    {
        for (i = 0; k[i] == '_' || (k[i] >= 'A' && k[i] <= 'Z') ||
                    (k[i] >= 'a' && k[i] <= 'z') ||
                    (i > 0 && k[i] >= '0' && k[i] <= '9');
             i++)
            ;
        if (i == 0 || k[i] != '\0' || i > IG_EXEC_ENV_NAME_MAX)
            return exec_reg_fail(c, "exec.env", "bad variable name \"%.64s\"",
                                 k);
        if (!json_is_string(v) ||
            exec_reg_has_nul(json_string_value(v), json_string_length(v)))
            return exec_reg_fail(c, "exec.env", "%.64s: must be a string", k);
    }
    return IG_OK;
}

static enum ig_status
load_exec(const struct exec_reg_ctx *c, struct exec_action *a)
{
    static const char *const keys[] = {"argv",       "allow",
                                       "timeout_ms", "network",
                                       "sandbox",    "max_output_bytes",
                                       "env",        "max_concurrent",
                                       "binds",      "scratch_bytes",
                                       NULL};
    json_t *x = a->settings, *net = json_object_get(x, "network");
    const char *sb;
    enum ig_status st;
    double d;

    if ((st = exec_reg_check_keys(c, x, "exec", keys)) != IG_OK ||
        (st = check_argv(c, a)) != IG_OK ||
        (st = check_env(c, json_object_get(x, "env"))) != IG_OK)
        return st;
    if (net != NULL && !json_is_boolean(net))
        return exec_reg_fail(c, "exec.network", "must be true or false");
    /* json_object_set_new steals the new false. */
    if (net == NULL && json_object_set_new(x, "network", json_false()) != 0)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    sb = get_string(c, x, "exec", "sandbox", 0, &st);
    if (st != IG_OK)
        return st;
    if (sb != NULL && strcmp(sb, "bwrap") != 0 && strcmp(sb, "none") != 0)
        return exec_reg_fail(c, "exec.sandbox",
                             "must be \"bwrap\" or \"none\"");
    /* json_object_set_new steals the new string. */
    if (sb == NULL &&
        json_object_set_new(x, "sandbox", json_string("bwrap")) != 0)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    if (sb != NULL && strcmp(sb, "none") == 0 &&
        json_object_get(x, "binds") != NULL)
        return exec_reg_fail(c, "exec.binds", "needs a sandbox (not \"none\")");
    if ((st = exec_binds_load(c, a)) != IG_OK ||
        (st = exec_reg_get_int(c, x, "exec", "scratch_bytes", 1024 * 1024,
                               (double)IG_EXEC_SCRATCH_MAX,
                               (double)IG_EXEC_SCRATCH_DEFAULT, &d)) != IG_OK)
        return st;
    if ((st = exec_reg_get_int(c, x, "exec", "timeout_ms", 1,
                               IG_EXEC_TIMEOUT_MAX_MS,
                               IG_EXEC_TIMEOUT_DEFAULT_MS, &d)) != IG_OK ||
        (st = exec_reg_get_int(c, x, "exec", "max_concurrent", 1,
                               IG_EXEC_ACTION_CONCURRENT_MAX,
                               IG_EXEC_EXEC_CONCURRENT_DEFAULT, &d)) != IG_OK)
        return st;
    return exec_reg_get_int(c, x, "exec", "max_output_bytes", 1,
                            IG_EXEC_MAX_OUTPUT_BYTES,
                            IG_EXEC_OUTPUT_DEFAULT_BYTES, &d);
}

enum ig_status
exec_settings_load(const struct exec_reg_ctx *c, struct exec_action *a)
{
    if (a->handler == EXEC_HANDLER_HTTP)
        return load_http(c, a);
    return load_exec(c, a);
}
