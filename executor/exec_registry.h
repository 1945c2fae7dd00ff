/*
 * exec_registry.h - the executor's sealed action registry.
 *
 * Loaded once at start from a JSON file and never changed while running:
 * the agent picks nothing but the action name. Each entry maps an action to
 * a handler, a parameter schema, the name of the one credential it may
 * use, and handler settings. Format (docs/executor.md):
 *
 *   {"actions": {
 *     "payments.refund": {
 *       "handler": "http",
 *       "credential": "refund-api",
 *       "params": {
 *         "amount":   {"type": "number", "required": true,
 *                      "min": 0.01, "max": 1000},
 *         "currency": {"type": "string", "required": true,
 *                      "enum": ["EUR", "USD"]},
 *         "order_id": {"type": "string", "required": true,
 *                      "max_length": 64, "pattern": "^[A-Za-z0-9_-]+$"}
 *       },
 *       "http": {"method": "POST", "url": "${INTENTGATE_DEV_UPSTREAM}/refunds",
 *                "credential_header": "Authorization",
 *                "credential_prefix": "Bearer ",
 *                "body_fields": ["amount", "currency", "order_id"],
 *                "query_fields": [], "timeout_ms": 5000}
 *     },
 *     "shell.exec": {
 *       "handler": "exec",
 *       "params": {"argv": {"type": "array", "items": "string",
 *                           "max_items": 16, "required": true}},
 *       "exec": {"argv": ["{argv...}"], "allow": ["ls", "cat", "echo"],
 *                "timeout_ms": 10000, "network": false,
 *                "sandbox": "bwrap", "max_output_bytes": 65536}
 *     }}}
 *
 * "${NAME}" in strings is replaced from the environment at load (an unset
 * variable is an error). Every key is checked: unknown keys, wrong types,
 * patterns that do not compile, bad limits are errors naming the action
 * and key. Parameter types: string (pattern as POSIX ERE, max_length in
 * characters, enum), number / integer (min, max), boolean, array (items:
 * the element type, max_items), object (max_keys). Parameters not in the
 * schema are refused.
 *
 * exec_registry_load: IG_ERR_IO when the file cannot be opened (a missing
 * one included) or read, or is not a regular file; IG_ERR_LIMIT over
 * IG_EXEC_REGISTRY_MAX_BYTES; otherwise the error names the file, and the
 * action and key where there is one. A loaded registry is immutable and
 * may be read from any thread.
 */
#ifndef EXEC_REGISTRY_H
#define EXEC_REGISTRY_H

#include <jansson.h>
#include <stddef.h>

#include "ig_error.h"

enum exec_handler_kind { EXEC_HANDLER_HTTP = 1, EXEC_HANDLER_EXEC = 2 };

struct exec_registry;
struct exec_action; /* one entry; opaque */

enum ig_status exec_registry_load(const char *path, struct exec_registry **out,
                                  struct ig_err *err) IG_WUR;
void exec_registry_free(struct exec_registry *r);

/* The entry for action, or NULL (unknown actions are refused). */
const struct exec_action *exec_registry_find(const struct exec_registry *r,
                                             const char *action);

/* Number of entries, and the i-th (by name; NULL past the end). */
size_t exec_registry_size(const struct exec_registry *r);
const struct exec_action *exec_registry_at(const struct exec_registry *r,
                                           size_t i);

/*
 * Check params (the intent's params object) against the entry's schema:
 * IG_OK, or IG_ERR_INVALID with err naming the parameter and the rule.
 */
enum ig_status exec_params_check(const struct exec_action *a,
                                 const json_t *params,
                                 struct ig_err *err) IG_WUR;

/* Accessors. Strings valid while the registry lives. */
const char *exec_action_name(const struct exec_action *a);
enum exec_handler_kind exec_action_handler(const struct exec_action *a);
const char *exec_action_credential(const struct exec_action *a); /* NULL */
/* The handler settings object ("http" or "exec"), validated at load. */
const json_t *exec_action_settings(const struct exec_action *a);

/* One extra bind of a host path into an exec action's sandbox. */
struct exec_bind {
    const char *src;  /* absolute, resolved (realpath) at load */
    const char *dest; /* absolute, normalised */
    int rw;
};

/* The exec action's binds (*n of them; NULL when none). */
const struct exec_bind *exec_action_binds(const struct exec_action *a,
                                          size_t *n);

/*
 * Refuse (IG_ERR_INVALID, err naming the action, the bind and the file) a
 * bind whose source is one of the nown paths in own (the executor's own
 * files and directories), holds one, or lies inside one. Paths that exist
 * are compared resolved. Called once at start.
 */
enum ig_status exec_registry_check_binds(const struct exec_registry *r,
                                         const char *const *own, size_t nown,
                                         struct ig_err *err) IG_WUR;

/*
 * One repository of the git gateway (the registry's "git" object, keyed by
 * alias; docs/git-gateway.md):
 *
 *   "git": {"demo": {"url": "https://git.example/acme/app.git",
 *                    "credential": "app-push-token",
 *                    "credential_user": "x-access-token",
 *                    "max_push_bytes": 104857600, "max_reply_bytes": ...,
 *                    "timeout_ms": 300000, "fast_forward_only": false}}
 *
 * The credential goes upstream as HTTP Basic credential_user:credential,
 * or, with "credential_header" (and an optional "credential_prefix")
 * instead of credential_user, as that header. Strings are valid while the
 * registry lives.
 */
struct exec_git_repo {
    const char *alias;
    const char *url; /* http(s)://host[:port]/path, no userinfo, query */
    const char *credential;
    const char *cred_user;   /* Basic user, or NULL */
    const char *cred_header; /* header name, or NULL (then cred_user) */
    const char *cred_prefix; /* "" when none */
    double max_push_bytes, max_reply_bytes;
    long timeout_ms;
    int fast_forward_only;
};

/* The repository called alias, or NULL. Any thread. */
const struct exec_git_repo *exec_registry_git(const struct exec_registry *r,
                                              const char *alias);

/* Number of git repositories, and the i-th (by alias; NULL past the end). */
size_t exec_registry_git_size(const struct exec_registry *r);
const struct exec_git_repo *exec_registry_git_at(const struct exec_registry *r,
                                                 size_t i);

/*
 * One upstream server of the MCP gateway (the registry's "mcp" object,
 * keyed by alias; docs/mcp.md):
 *
 *   "mcp": {"fs": {"transport": "stdio",
 *                  "command": ["/usr/bin/node", "/opt/mcp/fs.js", "/data"],
 *                  "env": {"NODE_ENV": "production"},
 *                  "credential": "gh-token", "credential_env": "GH_TOKEN",
 *                  "sandbox": "bwrap", "network": false,
 *                  "binds": [{"src": "/srv/data", "dest": "/data"}],
 *                  "timeout_ms": 60000, "max_reply_bytes": 8388608,
 *                  "tools": {"read_file": {"resource": "/path"}},
 *                  "names": "prefixed"},
 *           "gh": {"transport": "http", "url": "https://mcp.example/mcp",
 *                  "credential": "gh-token",
 *                  "credential_header": "Authorization",
 *                  "credential_prefix": "Bearer "}}
 *
 * Strings are valid while the registry lives.
 */
struct exec_mcp_server {
    const char *alias;
    int http; /* 1: Streamable HTTP at url; 0: stdio, argv */
    const char *url;
    const char **argv; /* NULL-terminated; argv[0] absolute */
    size_t argc;
    const json_t *env; /* object of strings, or NULL */
    int sandbox, network;
    struct exec_bind *binds;
    size_t nbinds;
    const char *credential;  /* secret name, or NULL */
    const char *cred_env;    /* stdio: the variable that carries it */
    const char *cred_header; /* http: the header (default Authorization) */
    const char *cred_prefix; /* http: "" when none (default "Bearer ") */
    long timeout_ms;
    double max_reply_bytes;
    const json_t *tools; /* {"tool": {"resource": "/pointer"}} or NULL */
    int bare; /* "names": "bare": tools and prompts shown by their own
                 names (at most one server; a name holding "__" hidden) */
};

/* The MCP server called alias, or NULL; the count; the i-th by alias. */
const struct exec_mcp_server *exec_registry_mcp(const struct exec_registry *r,
                                                const char *alias);
size_t exec_registry_mcp_size(const struct exec_registry *r);
const struct exec_mcp_server *
exec_registry_mcp_at(const struct exec_registry *r, size_t i);

#endif
