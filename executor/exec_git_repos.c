/*
 * exec_git_repos.c - the registry's "git" object: the repositories the git
 * gateway (exec_git.c) serves, each under an alias the agent names as the
 * intent's resource.
 *
 * How it works: every member of "git" is checked like an action (unknown
 * keys, types, ranges: errors name the file, the alias and the key), its
 * defaults are written into the document, and a struct exec_git_repo
 * borrows its strings from there. The array is sorted by alias for
 * bsearch. The URL must be plain http(s) without userinfo, query or
 * fragment: the credential is added by the gateway and never read from the
 * URL; the agent's path after the alias is never appended as is (the
 * gateway adds only the three smart-HTTP endpoints).
 */
#include "exec_registry_int.h"

#include <stdlib.h>
#include <string.h>

#include "exec_secrets.h"

/* http(s)://host[:port][/path]: no userinfo, query, fragment, spaces. */
enum ig_status
exec_reg_url(const struct exec_reg_ctx *c, const char *url)
{
    const char *rest;
    size_t i, host;

    if (strncmp(url, "https://", 8) == 0)
        rest = url + 8;
    else if (strncmp(url, "http://", 7) == 0)
        rest = url + 7;
    else
        return exec_reg_fail(c, "url", "must start with http:// or https://");
    for (i = 0; url[i] != '\0'; i++)
        if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f || url[i] == '\\')
            return exec_reg_fail(c, "url",
                                 "must not contain spaces, controls or '\\'");
    host = strcspn(rest, "/?#");
    if (host == 0 || memchr(rest, '@', host) != NULL)
        return exec_reg_fail(c, "url", "needs a host, without userinfo");
    if (strpbrk(rest, "?#") != NULL)
        return exec_reg_fail(c, "url", "must not have a query or fragment");
    if (strlen(url) > IG_EXEC_URL_MAX / 2)
        return exec_reg_fail(c, "url", "is too long");
    return IG_OK;
}

/* A string member (NULL when absent and optional). */
enum ig_status
exec_reg_string(const struct exec_reg_ctx *c, const json_t *def,
                const char *name, int required, const char **out)
{
    const json_t *v = json_object_get(def, name);

    *out = NULL;
    if (v == NULL)
        return required ? exec_reg_fail(c, name, "missing") : IG_OK;
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        exec_reg_has_nul(json_string_value(v), json_string_length(v)))
        return exec_reg_fail(c, name, "must be a non-empty string");
    *out = json_string_value(v);
    return IG_OK;
}

/* credential_user, or credential_header with credential_prefix. */
static enum ig_status
load_auth(const struct exec_reg_ctx *c, const json_t *def,
          struct exec_git_repo *g)
{
    enum ig_status st;

    if ((st = exec_reg_string(c, def, "credential_user", 0, &g->cred_user)) !=
            IG_OK ||
        (st = exec_reg_string(c, def, "credential_header", 0,
                              &g->cred_header)) != IG_OK ||
        (st = exec_reg_string(c, def, "credential_prefix", 0,
                              &g->cred_prefix)) != IG_OK)
        return st;
    if ((g->cred_user == NULL) == (g->cred_header == NULL))
        return exec_reg_fail(c, NULL,
                             "give exactly one of credential_user (HTTP "
                             "Basic) and credential_header");
    if (g->cred_user != NULL &&
        (strchr(g->cred_user, ':') != NULL || g->cred_prefix != NULL))
        return exec_reg_fail(c, "credential_user",
                             "must not hold ':' nor come with a prefix");
    return exec_reg_header(c, g->cred_header, &g->cred_prefix);
}

enum ig_status
exec_reg_header(const struct exec_reg_ctx *c, const char *name,
                const char **prefix)
{
    size_t i;

    if (name != NULL) {
        if (strlen(name) > IG_EXEC_HEADER_NAME_MAX)
            return exec_reg_fail(c, "credential_header", "is too long");
        for (i = 0; name[i] != '\0'; i++)
            if (!((name[i] >= 'A' && name[i] <= 'Z') ||
                  (name[i] >= 'a' && name[i] <= 'z') ||
                  (name[i] >= '0' && name[i] <= '9') || name[i] == '-'))
                return exec_reg_fail(c, "credential_header",
                                     "must be a header name [A-Za-z0-9-]");
    }
    for (i = 0; *prefix != NULL && (*prefix)[i] != '\0'; i++)
        if ((unsigned char)(*prefix)[i] < 0x20 || (*prefix)[i] == 0x7f)
            return exec_reg_fail(c, "credential_prefix",
                                 "must not hold control characters");
    if (*prefix == NULL)
        *prefix = "";
    return IG_OK;
}

static enum ig_status
load_repo(const struct exec_reg_ctx *c, json_t *def, struct exec_git_repo *g)
{
    static const char *const keys[] = {"url",
                                       "credential",
                                       "credential_user",
                                       "credential_header",
                                       "credential_prefix",
                                       "max_push_bytes",
                                       "max_reply_bytes",
                                       "timeout_ms",
                                       "fast_forward_only",
                                       NULL};
    const json_t *ff;
    enum ig_status st;
    double ms;

    if (!json_is_object(def))
        return exec_reg_fail(c, NULL, "must be an object");
    if ((st = exec_reg_check_keys(c, def, "", keys)) != IG_OK ||
        (st = exec_reg_string(c, def, "url", 1, &g->url)) != IG_OK ||
        (st = exec_reg_url(c, g->url)) != IG_OK ||
        (st = exec_reg_string(c, def, "credential", 1, &g->credential)) !=
            IG_OK)
        return st;
    if (!exec_secret_name_valid(g->credential))
        return exec_reg_fail(c, "credential",
                             "must be a secret name "
                             "^[a-z0-9][a-z0-9._-]{0,63}$");
    if ((st = load_auth(c, def, g)) != IG_OK)
        return st;
    if ((st = exec_reg_get_int(
             c, def, "git", "max_push_bytes", 1, IG_EXEC_GIT_PUSH_MAX_BYTES,
             IG_EXEC_GIT_PUSH_DEFAULT_BYTES, &g->max_push_bytes)) != IG_OK ||
        (st = exec_reg_get_int(
             c, def, "git", "max_reply_bytes", 1, IG_EXEC_GIT_REPLY_MAX_BYTES,
             IG_EXEC_GIT_REPLY_DEFAULT_BYTES, &g->max_reply_bytes)) != IG_OK ||
        (st = exec_reg_get_int(c, def, "git", "timeout_ms", 100,
                               IG_EXEC_GIT_TIMEOUT_MAX_MS,
                               IG_EXEC_GIT_TIMEOUT_DEFAULT_MS, &ms)) != IG_OK)
        return st;
    g->timeout_ms = (long)ms;
    ff = json_object_get(def, "fast_forward_only");
    if (ff != NULL && !json_is_boolean(ff))
        return exec_reg_fail(c, "fast_forward_only", "must be true or false");
    g->fast_forward_only = json_is_true(ff);
    return IG_OK;
}

static int
repo_cmp(const void *x, const void *y)
{
    const struct exec_git_repo *a = x, *b = y;

    return strcmp(a->alias, b->alias);
}

enum ig_status
exec_git_repos_load(const struct exec_reg_ctx *c, json_t *git,
                    struct exec_registry *r)
{
    struct exec_reg_ctx rc = *c;
    enum ig_status st;
    const char *alias;
    json_t *def;

    if (git == NULL)
        return IG_OK;
    if (!json_is_object(git))
        return exec_reg_fail(c, "git", "must be an object");
    if (json_object_size(git) > IG_EXEC_GIT_REPOS_MAX)
        return exec_reg_fail(c, "git", "holds more than %d repositories",
                             IG_EXEC_GIT_REPOS_MAX);
    r->repos = calloc(json_object_size(git) + 1, sizeof(*r->repos));
    if (r->repos == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    json_object_foreach(git, alias, def)
    {
        rc.action = alias;                  /* errors say: action "<alias>" */
        if (!exec_secret_name_valid(alias)) /* the same rule */
            return exec_reg_fail(&rc, NULL,
                                 "invalid git alias: want "
                                 "^[a-z0-9][a-z0-9._-]{0,63}$");
        r->repos[r->nrepos].alias = alias;
        if ((st = load_repo(&rc, def, &r->repos[r->nrepos])) != IG_OK)
            return st;
        r->nrepos++;
    }
    if (r->nrepos > 0)
        qsort(r->repos, r->nrepos, sizeof(*r->repos), repo_cmp);
    return IG_OK;
}

static int
alias_cmp(const void *key, const void *elem)
{
    const struct exec_git_repo *g = elem;

    return strcmp(key, g->alias);
}

const struct exec_git_repo *
exec_registry_git(const struct exec_registry *r, const char *alias)
{
    if (r == NULL || alias == NULL || r->nrepos == 0)
        return NULL;
    return bsearch(alias, r->repos, r->nrepos, sizeof(*r->repos), alias_cmp);
}

size_t
exec_registry_git_size(const struct exec_registry *r)
{
    return r != NULL ? r->nrepos : 0;
}

const struct exec_git_repo *
exec_registry_git_at(const struct exec_registry *r, size_t i)
{
    return r != NULL && i < r->nrepos ? &r->repos[i] : NULL;
}
