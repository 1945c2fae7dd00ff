/*
 * exec_registry_int.h - the action registry's internals, shared by
 * exec_registry.c (file, ${VAR} expansion, actions, lookup), exec_schema.c
 * (parameter specs and exec_params_check), exec_settings.c (the "http"
 * and "exec" handler settings) and exec_binds.c (an exec action's binds).
 * Their shared helpers (errors, key checks, integer settings) are in
 * exec_registry_util.c, which calls none of them: the files depend
 * downward only (registry -> settings -> schema, binds -> util).
 *
 * The registry owns the parsed JSON document; each action's settings
 * pointer borrows the "http" or "exec" object inside it, with defaults
 * filled in at load. Nothing changes after exec_registry_load returns.
 */
#ifndef EXEC_REGISTRY_INT_H
#define EXEC_REGISTRY_INT_H

#include <regex.h>

#include "exec_registry.h"

enum exec_ptype {
    EXEC_PT_NONE = 0,
    EXEC_PT_STRING,
    EXEC_PT_NUMBER,
    EXEC_PT_INTEGER,
    EXEC_PT_BOOLEAN,
    EXEC_PT_ARRAY,
    EXEC_PT_OBJECT
};

/*
 * One declared parameter. The string rules (re, enumv, max_length) and
 * number rules (min, max) apply to the value, or for an array to each
 * element of the item type.
 */
struct exec_param {
    char *name;
    enum exec_ptype type;
    enum exec_ptype items; /* arrays only, else EXEC_PT_NONE */
    int required;
    int has_re;
    regex_t re;          /* valid when has_re */
    const json_t *enumv; /* array of strings in the document, or NULL */
    int has_min, has_max;
    double min, max;
    size_t max_length; /* characters */
    size_t max_items;
    size_t max_keys;
};

struct exec_action {
    char *name;
    enum exec_handler_kind handler;
    char *credential; /* NULL when none */
    struct exec_param *params;
    size_t nparams;
    json_t *settings;        /* borrowed from the registry's document */
    struct exec_bind *binds; /* exec only; strings malloc'd */
    size_t nbinds;
};

struct exec_registry {
    json_t *doc;
    struct exec_action *actions; /* sorted by name */
    size_t n;
    struct exec_git_repo *repos; /* sorted by alias; strings in doc */
    size_t nrepos;
    struct exec_mcp_server *mcps; /* sorted by alias; strings in doc */
    size_t nmcps;
};

/* ---- exec_registry_util.c ---- */

/* Where a load-time error is: the file and the action being read. */
struct exec_reg_ctx {
    const char *file;
    const char *action; /* NULL outside an action */
    struct ig_err *err;
};

/*
 * Set err to `FILE: action "A": KEY: MESSAGE` (parts omitted when NULL)
 * and return IG_ERR_INVALID.
 */
enum ig_status exec_reg_fail(const struct exec_reg_ctx *c, const char *key,
                             const char *fmt, ...) IG_PRINTF(3, 4);

/* Refuse any key of obj not in the NULL-terminated list allowed. */
enum ig_status exec_reg_check_keys(const struct exec_reg_ctx *c,
                                   const json_t *obj, const char *prefix,
                                   const char *const *allowed) IG_WUR;

/*
 * obj[name] as an integer in [lo, hi]; when absent, store def into obj
 * (a json_real) and *out. key names the member in errors.
 */
enum ig_status exec_reg_get_int(const struct exec_reg_ctx *c, json_t *obj,
                                const char *prefix, const char *name, double lo,
                                double hi, double def, double *out) IG_WUR;

/* 1 when s (len bytes) contains a NUL byte. */
int exec_reg_has_nul(const char *s, size_t len);

/* Parse and compile the "params" object into a->params. */
enum ig_status exec_schema_load(const struct exec_reg_ctx *c,
                                const json_t *params,
                                struct exec_action *a) IG_WUR;

/* Free one parameter's storage and its compiled pattern. */
void exec_param_release(struct exec_param *p);

/* The declared parameter called name, or NULL. */
const struct exec_param *exec_param_find(const struct exec_action *a,
                                         const char *name);

/*
 * Validate a's handler settings object (a->settings) against its declared
 * parameters and fill in defaults.
 */
enum ig_status exec_settings_load(const struct exec_reg_ctx *c,
                                  struct exec_action *a) IG_WUR;

/* Parse and check the exec settings' "binds" into a->binds
   (exec_binds.c); exec_binds_release frees them. */
enum ig_status exec_binds_load(const struct exec_reg_ctx *c,
                               struct exec_action *a) IG_WUR;
void exec_binds_release(struct exec_action *a);
/* The same for any "binds" array v (NULL: none) into *out / *n; free with
   exec_binds_free (also after an error). */
enum ig_status exec_binds_parse(const struct exec_reg_ctx *c, const char *what,
                                const json_t *v, struct exec_bind **out,
                                size_t *n) IG_WUR;
void exec_binds_free(struct exec_bind *b, size_t n);

/* exec_git_repos.c, shared with exec_mcp_reg.c: a non-empty NUL-free
   string member (NULL when absent and not required); an http(s) URL
   without userinfo, query or fragment; a credential header name
   ([A-Za-z0-9-], NULL: none) and its prefix (no controls; NULL becomes
   ""). */
enum ig_status exec_reg_string(const struct exec_reg_ctx *c, const json_t *def,
                               const char *name, int required,
                               const char **out) IG_WUR;
enum ig_status exec_reg_url(const struct exec_reg_ctx *c,
                            const char *url) IG_WUR;
enum ig_status exec_reg_header(const struct exec_reg_ctx *c, const char *name,
                               const char **prefix) IG_WUR;

/* Parse and check the document's "git" object (may be NULL: none) into
   r->repos (exec_git_repos.c). Its strings stay in the document. */
enum ig_status exec_git_repos_load(const struct exec_reg_ctx *c, json_t *git,
                                   struct exec_registry *r) IG_WUR;

/* Parse and check the document's "mcp" object (may be NULL: none) into
   r->mcps (exec_mcp_reg.c); exec_mcp_servers_free releases them. */
enum ig_status exec_mcp_servers_load(const struct exec_reg_ctx *c, json_t *mcp,
                                     struct exec_registry *r) IG_WUR;
void exec_mcp_servers_free(struct exec_registry *r);

#endif
