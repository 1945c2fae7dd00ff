/*
 * pdp_config_approvals.c - the config sections for escalations:
 *
 *   [approvals]       quorum, session_idle, session_max,
 *                     login_max_failures, login_window, secure_cookies
 *   [approver ID]     name, groups, password_hash, slack_user, agents
 *   [slack]           api_url, channel, bot_token_file,
 *                     signing_secret_file, ui_url
 *
 * Approvers are people, not bearer-token principals: each needs groups and
 * an argon2id password hash (`intentgate approver add` prints one). A
 * [slack] section needs all of channel, bot_token_file and
 * signing_secret_file; the files themselves are read by the notifier at
 * start. An approver's agents must each be an [agent] section: a typo
 * there would silently let that person approve their own agent.
 */
#include "pdp_config_int.h"

#include <stdlib.h>
#include <string.h>

#include "appr_password.h"

#define BIT(k) (1u << (k))

/* Mark key k of the current section seen; duplicate keys are errors. */
static int
once(struct cfg_parse *p, unsigned k, const char *key)
{
    if (p->seen_sec & BIT(k))
        return cfg_error(p, "duplicate key %s", key);
    p->seen_sec |= BIT(k);
    return 0;
}

static int
group_valid(const char *g)
{
    size_t i, n = strlen(g);

    if (n == 0 || n > 63)
        return 0;
    for (i = 0; i < n; i++) {
        char ch = g[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') ||
              (i > 0 && strchr("_.:@-", ch) != NULL)))
            return 0;
    }
    return 1;
}

int
cfg_appr_begin(struct cfg_parse *p, const char *kind, const char *id)
{
    struct pdp_approver *arr;
    unsigned bit = strcmp(kind, "slack") == 0 ? 2u : 1u;

    p->seen_sec = 0;
    p->cur_line = p->line;
    if (strcmp(kind, "approver") != 0) {
        if (id != NULL)
            return cfg_error(p, "[%s] takes no id", kind);
        if (p->sections & bit)
            return cfg_error(p, "[%s] appears twice", kind);
        p->sections |= bit;
        p->sec = bit == 2u ? SEC_SLACK : SEC_APPROVALS;
        return 0;
    }
    if (id == NULL || !cfg_valid_id(id))
        return cfg_error(p, "[approver] needs an id of letters, digits and "
                            "._:@- (at most 64)");
    if (p->c->napprovers >= CFG_MAX_APPROVERS)
        return cfg_error(p, "more than %d approvers", CFG_MAX_APPROVERS);
    arr = realloc(p->c->approvers, (p->c->napprovers + 1) * sizeof(*arr));
    if (arr == NULL)
        return cfg_error(p, "out of memory");
    p->c->approvers = arr;
    p->cur_appr = &arr[p->c->napprovers++];
    memset(p->cur_appr, 0, sizeof(*p->cur_appr));
    p->sec = SEC_APPROVER;
    return cfg_string(p, "id", id, &p->cur_appr->id);
}

static int
set_approvals(struct cfg_parse *p, const char *key, const char *v)
{
    static const char *const keys[] = {"quorum",       "session_idle",
                                       "session_max",  "login_max_failures",
                                       "login_window", "secure_cookies"};
    struct pdp_config *c = p->c;
    int64_t n = 0;
    unsigned k;

    for (k = 0; k < 6 && strcmp(key, keys[k]) != 0; k++)
        ;
    if (k == 6)
        return cfg_error(p, "unknown key %s in [approvals]", key);
    if (once(p, k, key) != 0)
        return -1;
    if (k == 5) {
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
            return cfg_error(p, "secure_cookies must be true or false");
        c->secure_cookies = v[0] == 't';
        return 0;
    }
    if (k == 0 && cfg_int(p, key, v, 1, 16, &n) == 0)
        c->approval_quorum = (int)n;
    else if (k == 1 && cfg_int(p, key, v, 60, 86400, &n) == 0)
        c->session_idle = n;
    else if (k == 2 && cfg_int(p, key, v, 60, 7 * 86400, &n) == 0)
        c->session_max = n;
    else if (k == 3 && cfg_int(p, key, v, 1, 1000, &n) == 0)
        c->login_max_failures = (int)n;
    else if (k == 4 && cfg_int(p, key, v, 1, 86400, &n) == 0)
        c->login_window = n;
    else
        return -1;
    return 0;
}

static int
set_approver(struct cfg_parse *p, const char *key, const char *v)
{
    struct pdp_approver *a = p->cur_appr;
    size_t i;

    if (strcmp(key, "name") == 0)
        return once(p, 0, key) != 0 ? -1 : cfg_string(p, key, v, &a->name);
    if (strcmp(key, "groups") == 0) {
        if (once(p, 1, key) != 0 ||
            cfg_list(p, key, v, &a->groups, &a->ngroups) != 0)
            return -1;
        for (i = 0; i < a->ngroups; i++)
            if (!group_valid(a->groups[i]))
                return cfg_error(p,
                                 "group %s: letters, digits and _.:@- (at "
                                 "most 63, starting with a letter or digit)",
                                 a->groups[i]);
        return 0;
    }
    if (strcmp(key, "password_hash") == 0) {
        if (once(p, 2, key) != 0)
            return -1;
        if (!appr_password_hash_valid(v))
            return cfg_error(p, "password_hash must be an argon2id hash "
                                "($argon2id$v=19$...); make one with "
                                "`intentgate approver add`");
        return cfg_string(p, key, v, &a->password_hash);
    }
    if (strcmp(key, "slack_user") == 0) {
        if (once(p, 3, key) != 0)
            return -1;
        if (!cfg_valid_id(v))
            return cfg_error(p, "slack_user must be a Slack user id like "
                                "U012ABCDEF");
        return cfg_string(p, key, v, &a->slack_user);
    }
    if (strcmp(key, "agents") == 0) {
        if (once(p, 4, key) != 0 ||
            cfg_list(p, key, v, &a->agents, &a->nagents) != 0)
            return -1;
        for (i = 0; i < a->nagents; i++)
            if (!cfg_valid_id(a->agents[i]))
                return cfg_error(p, "agents: %s is not a principal id",
                                 a->agents[i]);
        return 0;
    }
    return cfg_error(p, "unknown key %s in [approver]", key);
}

/* https://, or plain http on loopback (tests). */
static int
url_scheme_ok(const char *v)
{
    return strncmp(v, "https://", 8) == 0 ||
           strncmp(v, "http://127.0.0.1", 16) == 0 ||
           strncmp(v, "http://localhost", 16) == 0;
}

/* ui_url goes into a Slack link <URL/ui/approvals/ID|text>: a host and a
   path of plain characters, no query, no fragment, nothing that ends the
   link; the final / is dropped. */
static int
set_ui_url(struct cfg_parse *p, const char *v)
{
    size_t n = strlen(v);

    if (!url_scheme_ok(v) || n > 512 ||
        strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                  "0123456789-._~:/%[]") != n)
        return cfg_error(p, "ui_url must be https://host[:port][/path] of "
                            "letters, digits and -._~:/%%[] (plain http only "
                            "on loopback)");
    if (cfg_string(p, "ui_url", v, &p->c->slack_ui_url) != 0)
        return -1;
    n = strlen(p->c->slack_ui_url);
    while (n > 8 && p->c->slack_ui_url[n - 1] == '/')
        p->c->slack_ui_url[--n] = '\0';
    return 0;
}

static int
set_slack(struct cfg_parse *p, const char *key, const char *v)
{
    static const char *const keys[] = {"api_url", "channel", "bot_token_file",
                                       "signing_secret_file", "ui_url"};
    struct pdp_config *c = p->c;
    char **dst[4];
    unsigned k;

    dst[0] = &c->slack_api_url;
    dst[1] = &c->slack_channel;
    dst[2] = &c->slack_bot_token_file;
    dst[3] = &c->slack_signing_secret_file;
    for (k = 0; k < 5 && strcmp(key, keys[k]) != 0; k++)
        ;
    if (k == 5)
        return cfg_error(p, "unknown key %s in [slack]", key);
    if (once(p, k, key) != 0)
        return -1;
    if (v[0] == '\0')
        return cfg_error(p, "%s must not be empty", key);
    if (k == 4)
        return set_ui_url(p, v);
    if (k == 0 && !url_scheme_ok(v))
        return cfg_error(p, "api_url must be https:// (plain http only on "
                            "loopback, for tests)");
    return cfg_string(p, key, v, dst[k]);
}

int
cfg_appr_set(struct cfg_parse *p, const char *key, const char *value)
{
    if (p->sec == SEC_APPROVALS)
        return set_approvals(p, key, value);
    if (p->sec == SEC_APPROVER)
        return set_approver(p, key, value);
    return set_slack(p, key, value);
}

int
cfg_appr_end(struct cfg_parse *p)
{
    struct pdp_approver *a = p->cur_appr;
    enum cfg_section sec = p->sec;
    int line = p->line;

    p->sec = SEC_TOP;
    p->cur_appr = NULL;
    if (sec != SEC_APPROVER)
        return 0;
    p->line = p->cur_line;
    if (a->ngroups == 0)
        return cfg_error(p, "approver %s needs groups", a->id);
    if (a->password_hash == NULL)
        return cfg_error(p, "approver %s needs password_hash", a->id);
    if (a->name == NULL && cfg_string(p, "name", a->id, &a->name) != 0)
        return -1;
    p->line = line;
    return 0;
}

/* Each approver's agents names a configured [agent]. */
static int
check_agents(struct cfg_parse *p)
{
    const struct pdp_config *c = p->c;
    size_t i, j, k;

    for (i = 0; i < c->napprovers; i++)
        for (j = 0; j < c->approvers[i].nagents; j++) {
            const char *ag = c->approvers[i].agents[j];

            for (k = 0; k < c->nprincipals; k++)
                if (c->principals[k].role == PDP_ROLE_AGENT &&
                    strcmp(c->principals[k].id, ag) == 0)
                    break;
            if (k == c->nprincipals)
                return cfg_error(p,
                                 "approver %s: agents names %s, which is no "
                                 "[agent] section",
                                 c->approvers[i].id, ag);
        }
    return 0;
}

int
cfg_appr_finish(struct cfg_parse *p, const char *dir)
{
    struct pdp_config *c = p->c;
    size_t i, j;

    (void)dir;
    if (check_agents(p) != 0)
        return -1;
    for (i = 0; i < c->napprovers; i++)
        for (j = i + 1; j < c->napprovers; j++) {
            if (strcmp(c->approvers[i].id, c->approvers[j].id) == 0)
                return cfg_error(p, "approver %s is configured twice",
                                 c->approvers[i].id);
            if (c->approvers[i].slack_user != NULL &&
                c->approvers[j].slack_user != NULL &&
                strcmp(c->approvers[i].slack_user,
                       c->approvers[j].slack_user) == 0)
                return cfg_error(p, "approvers %s and %s share slack_user %s",
                                 c->approvers[i].id, c->approvers[j].id,
                                 c->approvers[i].slack_user);
        }
    if (p->sections & 2u) {
        if (c->slack_channel == NULL || c->slack_bot_token_file == NULL ||
            c->slack_signing_secret_file == NULL)
            return cfg_error(p, "[slack] needs channel, bot_token_file and "
                                "signing_secret_file");
        if (c->slack_api_url == NULL &&
            cfg_string(p, "api_url", "https://slack.com/api",
                       &c->slack_api_url) != 0)
            return -1;
    }
    if (c->session_idle > c->session_max)
        return cfg_error(p, "session_idle is longer than session_max");
    return 0;
}

void
cfg_appr_free(struct pdp_config *c)
{
    size_t i, j;

    for (i = 0; i < c->napprovers; i++) {
        struct pdp_approver *a = &c->approvers[i];
        free(a->id);
        free(a->name);
        for (j = 0; j < a->ngroups; j++)
            free(a->groups[j]);
        free(a->groups);
        free(a->password_hash);
        free(a->slack_user);
        for (j = 0; j < a->nagents; j++)
            free(a->agents[j]);
        free(a->agents);
    }
    free(c->approvers);
    free(c->slack_api_url);
    free(c->slack_channel);
    free(c->slack_bot_token_file);
    free(c->slack_signing_secret_file);
    free(c->slack_ui_url);
}

const struct pdp_approver *
pdp_config_approver(const struct pdp_config *c, const char *id)
{
    size_t i;

    for (i = 0; id != NULL && i < c->napprovers; i++)
        if (strcmp(c->approvers[i].id, id) == 0)
            return &c->approvers[i];
    return NULL;
}

const struct pdp_approver *
pdp_config_approver_by_slack(const struct pdp_config *c, const char *user)
{
    size_t i;

    for (i = 0; user != NULL && i < c->napprovers; i++)
        if (c->approvers[i].slack_user != NULL &&
            strcmp(c->approvers[i].slack_user, user) == 0)
            return &c->approvers[i];
    return NULL;
}

int
pdp_approver_in_group(const struct pdp_approver *a, const char *group)
{
    size_t i;

    for (i = 0; a != NULL && group != NULL && i < a->ngroups; i++)
        if (strcmp(a->groups[i], group) == 0)
            return 1;
    return 0;
}

int
pdp_approver_runs(const struct pdp_approver *a, const char *principal)
{
    size_t i;

    for (i = 0; a != NULL && principal != NULL && i < a->nagents; i++)
        if (strcmp(a->agents[i], principal) == 0)
            return 1;
    return 0;
}
