/*
 * exec_mcp_reg.c - the registry's "mcp" object: the upstream MCP servers
 * the gateway (exec_mcp.c) fronts, each under an alias that names its
 * tools to the agent (`<alias>__<tool>`) and to policies
 * (`mcp.<alias>.<tool>`).
 *
 * Every member is checked like an action (unknown keys, types, ranges:
 * errors name the file, the alias and the key) and its defaults are
 * written into the document; a struct exec_mcp_server borrows its strings
 * from there. A stdio server's command is an argv (never a shell line),
 * run under the exec sandbox unless "sandbox" is "none"; its credential
 * reaches it only as the environment variable credential_env. An http
 * server's URL is plain http(s) without userinfo, query or fragment, and
 * its credential goes as one header.
 */
#include "exec_registry_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec_secrets.h"
#include "ig_json.h"

/* ^[a-z0-9][a-z0-9-]{0,31}$: no '.' or '_', so that `<alias>__<tool>` and
   `mcp.<alias>.<tool>` split in one way only. */
static int
alias_valid(const char *a)
{
    size_t i;

    if (a[0] == '\0' || a[0] == '-')
        return 0;
    for (i = 0; a[i] != '\0'; i++)
        if (!((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= '0' && a[i] <= '9') ||
              a[i] == '-') ||
            i >= IG_EXEC_MCP_ALIAS_MAX)
            return 0;
    return 1;
}

static enum ig_status
load_command(const struct exec_reg_ctx *c, const json_t *def,
             struct exec_mcp_server *m)
{
    const json_t *cmd = json_object_get(def, "command"), *e;
    size_t i;

    if (!json_is_array(cmd) || json_array_size(cmd) == 0 ||
        json_array_size(cmd) > IG_EXEC_MAX_ARGV)
        return exec_reg_fail(c, "command",
                             "must be an array of 1 to %d strings (an argv, "
                             "not a shell line)",
                             IG_EXEC_MAX_ARGV);
    m->argv = calloc(json_array_size(cmd) + 1, sizeof(*m->argv));
    if (m->argv == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    json_array_foreach(cmd, i, e)
    {
        if (!json_is_string(e) || json_string_length(e) == 0 ||
            json_string_length(e) > IG_EXEC_ARGV_ELEM_MAX ||
            exec_reg_has_nul(json_string_value(e), json_string_length(e)))
            return exec_reg_fail(c, "command",
                                 "element %zu must be a non-empty string "
                                 "without NUL",
                                 i);
        m->argv[i] = json_string_value(e);
    }
    m->argc = json_array_size(cmd);
    if (m->argv[0][0] != '/')
        return exec_reg_fail(c, "command",
                             "the program must be an absolute path");
    return IG_OK;
}

/* "env": an object of strings, none of them the credential's variable. */
static enum ig_status
load_env(const struct exec_reg_ctx *c, const json_t *def,
         struct exec_mcp_server *m)
{
    const json_t *v;
    const char *k;

    m->env = json_object_get(def, "env");
    if (m->env == NULL)
        return IG_OK;
    if (!json_is_object(m->env))
        return exec_reg_fail(c, "env", "must be an object of strings");
    json_object_foreach((json_t *)(uintptr_t)m->env, k, v)
    {
        if (!json_is_string(v) ||
            exec_reg_has_nul(json_string_value(v), json_string_length(v)) ||
            strchr(k, '=') != NULL || k[0] == '\0' ||
            strlen(k) > IG_EXEC_ENV_NAME_MAX)
            return exec_reg_fail(c, "env",
                                 "%.64s: must be NAME (no '=') with a string "
                                 "value",
                                 k);
        if (m->cred_env != NULL && strcmp(k, m->cred_env) == 0)
            return exec_reg_fail(c, "env", "%.64s is the credential's variable",
                                 k);
    }
    return IG_OK;
}

/* "tools": {"<tool>": {"resource": "/json/pointer"}}. */
static enum ig_status
load_tools(const struct exec_reg_ctx *c, const json_t *def,
           struct exec_mcp_server *m)
{
    static const char *const keys[] = {"resource", NULL};
    const json_t *t, *r;
    const char *name;

    m->tools = json_object_get(def, "tools");
    if (m->tools == NULL)
        return IG_OK;
    if (!json_is_object(m->tools))
        return exec_reg_fail(c, "tools", "must be an object");
    json_object_foreach((json_t *)(uintptr_t)m->tools, name, t)
    {
        if (!json_is_object(t) ||
            exec_reg_check_keys(c, t, "tools.", keys) != IG_OK)
            return exec_reg_fail(
                c, "tools", "%.64s: must be {\"resource\": POINTER}", name);
        r = json_object_get(t, "resource");
        if (r != NULL &&
            (!json_is_string(r) || json_string_value(r)[0] != '/' ||
             !ig_json_pointer_valid(json_string_value(r))))
            return exec_reg_fail(c, "tools",
                                 "%.64s.resource: must be a JSON pointer "
                                 "into the arguments, like \"/path\"",
                                 name);
    }
    return IG_OK;
}

static enum ig_status
load_stdio(const struct exec_reg_ctx *c, const json_t *def,
           struct exec_mcp_server *m)
{
    const char *sb = NULL;
    enum ig_status st;
    const json_t *net = json_object_get(def, "network");

    if ((st = load_command(c, def, m)) != IG_OK ||
        (st = exec_reg_string(c, def, "credential_env", 0, &m->cred_env)) !=
            IG_OK ||
        (st = load_env(c, def, m)) != IG_OK ||
        (st = exec_reg_string(c, def, "sandbox", 0, &sb)) != IG_OK)
        return st;
    if (json_object_get(def, "url") != NULL ||
        json_object_get(def, "credential_header") != NULL ||
        json_object_get(def, "credential_prefix") != NULL)
        return exec_reg_fail(c, NULL,
                             "url and credential_header are for "
                             "\"transport\": \"http\"");
    if ((m->credential == NULL) != (m->cred_env == NULL))
        return exec_reg_fail(c, "credential_env",
                             "give both credential and credential_env, or "
                             "neither");
    if (sb != NULL && strcmp(sb, "bwrap") != 0 && strcmp(sb, "none") != 0)
        return exec_reg_fail(c, "sandbox", "must be \"bwrap\" or \"none\"");
    m->sandbox = sb == NULL || strcmp(sb, "bwrap") == 0;
    if (net != NULL && !json_is_boolean(net))
        return exec_reg_fail(c, "network", "must be true or false");
    m->network = json_is_true(net);
    if ((st = exec_binds_parse(c, "binds", json_object_get(def, "binds"),
                               &m->binds, &m->nbinds)) != IG_OK)
        return st;
    if (m->nbinds > 0 && !m->sandbox)
        return exec_reg_fail(c, "binds", "needs a sandbox (not \"none\")");
    return IG_OK;
}

static enum ig_status
load_http(const struct exec_reg_ctx *c, const json_t *def,
          struct exec_mcp_server *m)
{
    static const char *const stdio_only[] = {
        "command", "credential_env", "env", "sandbox", "network", "binds"};
    enum ig_status st;
    size_t i;

    for (i = 0; i < sizeof(stdio_only) / sizeof(*stdio_only); i++)
        if (json_object_get(def, stdio_only[i]) != NULL)
            return exec_reg_fail(c, stdio_only[i],
                                 "is for \"transport\": \"stdio\"");
    m->http = 1;
    if ((st = exec_reg_string(c, def, "url", 1, &m->url)) != IG_OK ||
        (st = exec_reg_url(c, m->url)) != IG_OK ||
        (st = exec_reg_string(c, def, "credential_header", 0,
                              &m->cred_header)) != IG_OK ||
        (st = exec_reg_string(c, def, "credential_prefix", 0,
                              &m->cred_prefix)) != IG_OK)
        return st;
    if (m->credential == NULL &&
        (m->cred_header != NULL || m->cred_prefix != NULL))
        return exec_reg_fail(c, "credential_header", "needs a credential");
    if (m->credential != NULL && m->cred_header == NULL) {
        m->cred_header = "Authorization";
        if (m->cred_prefix == NULL)
            m->cred_prefix = "Bearer ";
    }
    return exec_reg_header(c, m->cred_header, &m->cred_prefix);
}

static enum ig_status
load_server(const struct exec_reg_ctx *c, json_t *def,
            struct exec_mcp_server *m)
{
    static const char *const keys[] = {"transport",
                                       "command",
                                       "env",
                                       "credential",
                                       "credential_env",
                                       "sandbox",
                                       "network",
                                       "binds",
                                       "url",
                                       "credential_header",
                                       "credential_prefix",
                                       "timeout_ms",
                                       "max_reply_bytes",
                                       "tools",
                                       "names",
                                       NULL};
    const char *transport = NULL, *names = NULL;
    enum ig_status st;
    double ms;

    if (!json_is_object(def))
        return exec_reg_fail(c, NULL, "must be an object");
    if ((st = exec_reg_check_keys(c, def, "", keys)) != IG_OK ||
        (st = exec_reg_string(c, def, "transport", 1, &transport)) != IG_OK ||
        (st = exec_reg_string(c, def, "credential", 0, &m->credential)) !=
            IG_OK)
        return st;
    if ((st = exec_reg_string(c, def, "names", 0, &names)) != IG_OK)
        return st;
    if (names != NULL && strcmp(names, "prefixed") != 0 &&
        strcmp(names, "bare") != 0)
        return exec_reg_fail(c, "names", "must be \"prefixed\" or \"bare\"");
    m->bare = names != NULL && strcmp(names, "bare") == 0;
    if (m->credential != NULL && !exec_secret_name_valid(m->credential))
        return exec_reg_fail(c, "credential",
                             "must be a secret name "
                             "^[a-z0-9][a-z0-9._-]{0,63}$");
    if (strcmp(transport, "stdio") == 0)
        st = load_stdio(c, def, m);
    else if (strcmp(transport, "http") == 0)
        st = load_http(c, def, m);
    else
        st = exec_reg_fail(c, "transport", "must be \"stdio\" or \"http\"");
    if (st != IG_OK || (st = load_tools(c, def, m)) != IG_OK ||
        (st = exec_reg_get_int(c, def, "", "timeout_ms", 100,
                               IG_EXEC_MCP_TIMEOUT_MAX_MS,
                               IG_EXEC_MCP_TIMEOUT_DEFAULT_MS, &ms)) != IG_OK ||
        (st = exec_reg_get_int(
             c, def, "", "max_reply_bytes", 1024, IG_EXEC_MCP_REPLY_MAX_BYTES,
             IG_EXEC_MCP_REPLY_DEFAULT_BYTES, &m->max_reply_bytes)) != IG_OK)
        return st;
    m->timeout_ms = (long)ms;
    return IG_OK;
}

static int
server_cmp(const void *a, const void *b)
{
    return strcmp(((const struct exec_mcp_server *)a)->alias,
                  ((const struct exec_mcp_server *)b)->alias);
}

enum ig_status
exec_mcp_servers_load(const struct exec_reg_ctx *c, json_t *mcp,
                      struct exec_registry *r)
{
    struct exec_reg_ctx rc = *c;
    enum ig_status st;
    const char *alias;
    json_t *def;
    size_t i, bare;

    if (mcp == NULL)
        return IG_OK;
    if (!json_is_object(mcp))
        return exec_reg_fail(c, "mcp", "must be an object");
    if (json_object_size(mcp) > IG_EXEC_MCP_SERVERS_MAX)
        return exec_reg_fail(c, "mcp", "holds more than %d servers",
                             IG_EXEC_MCP_SERVERS_MAX);
    r->mcps = calloc(json_object_size(mcp) + 1, sizeof(*r->mcps));
    if (r->mcps == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    json_object_foreach(mcp, alias, def)
    {
        rc.action = alias; /* errors say: action "<alias>" */
        if (!alias_valid(alias))
            return exec_reg_fail(&rc, NULL,
                                 "invalid MCP server alias: want "
                                 "^[a-z0-9][a-z0-9-]{0,31}$");
        r->mcps[r->nmcps].alias = alias;
        st = load_server(&rc, def, &r->mcps[r->nmcps]);
        r->nmcps++; /* released from here on */
        if (st != IG_OK)
            return st;
    }
    if (r->nmcps > 0)
        qsort(r->mcps, r->nmcps, sizeof(*r->mcps), server_cmp);
    for (i = 0, bare = 0; i < r->nmcps; i++)
        bare += r->mcps[i].bare ? 1 : 0;
    if (bare > 1)
        return exec_reg_fail(c, "mcp",
                             "at most one server may have \"names\": "
                             "\"bare\" (their tools could collide)");
    return IG_OK;
}

void
exec_mcp_servers_free(struct exec_registry *r)
{
    size_t i;

    for (i = 0; i < r->nmcps; i++) {
        free(r->mcps[i].argv);
        exec_binds_free(r->mcps[i].binds, r->mcps[i].nbinds);
    }
    free(r->mcps);
    r->mcps = NULL;
    r->nmcps = 0;
}

const struct exec_mcp_server *
exec_registry_mcp_at(const struct exec_registry *r, size_t i)
{
    return i < r->nmcps ? &r->mcps[i] : NULL;
}

size_t
exec_registry_mcp_size(const struct exec_registry *r)
{
    return r->nmcps;
}

static int
alias_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const struct exec_mcp_server *)elem)->alias);
}

const struct exec_mcp_server *
exec_registry_mcp(const struct exec_registry *r, const char *alias)
{
    if (r->nmcps == 0)
        return NULL;
    return bsearch(alias, r->mcps, r->nmcps, sizeof(*r->mcps), alias_cmp);
}
