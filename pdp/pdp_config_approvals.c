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
#include "ig_limits.h"
#include "ig_text.h"

/* ---- [approvals] ---- */

static const struct pdp_cfg_key approvals_keys[] = {
    PDP_CFG_INT("quorum", approval_quorum, 1, IG_POLICY_QUORUM_MAX),
    PDP_CFG_I64("session_idle", session_idle, IG_CFG_SESSION_MIN,
                IG_CFG_SESSION_IDLE_MAX),
    PDP_CFG_I64("session_max", session_max, IG_CFG_SESSION_MIN,
                IG_CFG_SESSION_MAX),
    PDP_CFG_INT("login_max_failures", login_max_failures, 1,
                IG_CFG_LOGIN_FAILURES_MAX),
    PDP_CFG_I64("login_window", login_window, 1, IG_CFG_LOGIN_WINDOW_MAX),
    PDP_CFG_BOOL("secure_cookies", secure_cookies),
};

int
pdp_cfg_approvals_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    return pdp_cfg_dispatch(p, approvals_keys, PDP_CFG_NKEYS(approvals_keys),
                            &p->seen_sec, key, v);
}

/* ---- [approver ID] ---- */

static int
group_valid(const char *g)
{
    size_t i, n = strlen(g);

    if (n == 0 || n > IG_APPROVER_GROUP_MAX)
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
pdp_cfg_approver_begin(struct pdp_cfg_parse *p, const char *kind,
                       const char *id)
{
    struct pdp_approver *arr;

    (void)kind;
    if (p->c->napprovers >= IG_CFG_APPROVERS_MAX)
        return pdp_cfg_error(p, "more than %d approvers", IG_CFG_APPROVERS_MAX);
    arr = realloc(p->c->approvers, (p->c->napprovers + 1) * sizeof(*arr));
    if (arr == NULL)
        return pdp_cfg_error(p, "out of memory");
    p->c->approvers = arr;
    p->cur_appr = &arr[p->c->napprovers++];
    memset(p->cur_appr, 0, sizeof(*p->cur_appr));
    return pdp_cfg_string(p, "id", id, &p->cur_appr->id);
}

static int
set_name(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    return pdp_cfg_string(p, k->name, v, &p->cur_appr->name);
}

static int
set_groups(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    struct pdp_approver *a = p->cur_appr;
    size_t i;

    if (pdp_cfg_list(p, k->name, v, &a->groups, &a->ngroups) != 0)
        return -1;
    for (i = 0; i < a->ngroups; i++)
        if (!group_valid(a->groups[i]))
            return pdp_cfg_error(p,
                                 "group %s: letters, digits and _.:@- (at "
                                 "most %d, starting with a letter or digit)",
                                 a->groups[i], IG_APPROVER_GROUP_MAX);
    return 0;
}

static int
set_password_hash(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
                  const char *v)
{
    if (!appr_password_hash_valid(v))
        return pdp_cfg_error(p, "password_hash must be an argon2id hash "
                                "($argon2id$v=19$...); make one with "
                                "`intentgate approver add`");
    return pdp_cfg_string(p, k->name, v, &p->cur_appr->password_hash);
}

static int
set_slack_user(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k,
               const char *v)
{
    if (!pdp_cfg_valid_id(v))
        return pdp_cfg_error(p, "slack_user must be a Slack user id like "
                                "U012ABCDEF");
    return pdp_cfg_string(p, k->name, v, &p->cur_appr->slack_user);
}

static int
set_agents(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    struct pdp_approver *a = p->cur_appr;
    size_t i;

    if (pdp_cfg_list(p, k->name, v, &a->agents, &a->nagents) != 0)
        return -1;
    for (i = 0; i < a->nagents; i++)
        if (!pdp_cfg_valid_id(a->agents[i]))
            return pdp_cfg_error(p, "agents: %s is not a principal id",
                                 a->agents[i]);
    return 0;
}

static const struct pdp_cfg_key approver_keys[] = {
    PDP_CFG_KEY("name", set_name),
    PDP_CFG_KEY("groups", set_groups),
    PDP_CFG_KEY("password_hash", set_password_hash),
    PDP_CFG_KEY("slack_user", set_slack_user),
    PDP_CFG_KEY("agents", set_agents),
};

int
pdp_cfg_approver_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    return pdp_cfg_dispatch(p, approver_keys, PDP_CFG_NKEYS(approver_keys),
                            &p->seen_sec, key, v);
}

int
pdp_cfg_approver_end(struct pdp_cfg_parse *p)
{
    struct pdp_approver *a = p->cur_appr;

    p->cur_appr = NULL;
    if (a->ngroups == 0)
        return pdp_cfg_error(p, "approver %s needs groups", a->id);
    if (a->password_hash == NULL)
        return pdp_cfg_error(p, "approver %s needs password_hash", a->id);
    if (a->name == NULL && pdp_cfg_string(p, "name", a->id, &a->name) != 0)
        return -1;
    return 0;
}

/* ---- [slack] ---- */

/* https://, or plain http on loopback (tests). */
static int
url_scheme_ok(const char *v)
{
    return strncmp(v, "https://", 8) == 0 ||
           strncmp(v, "http://127.0.0.1", 16) == 0 ||
           strncmp(v, "http://localhost", 16) == 0;
}

static int
set_api_url(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    if (v[0] != '\0' && !url_scheme_ok(v))
        return pdp_cfg_error(p, "api_url must be https:// (plain http only on "
                                "loopback, for tests)");
    return pdp_cfg_string(p, k->name, v, &p->c->slack_api_url);
}

/* ui_url goes into a Slack link <URL/ui/approvals/ID|text>: a host and a
   path of plain characters, no query, no fragment, nothing that ends the
   link; the final / is dropped. */
static int
set_ui_url(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    size_t n = strlen(v);

    if (n == 0)
        return pdp_cfg_error(p, "%s must not be empty", k->name);
    if (!url_scheme_ok(v) || n > IG_CFG_UI_URL_MAX ||
        strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                  "0123456789-._~:/%[]") != n)
        return pdp_cfg_error(p,
                             "ui_url must be https://host[:port][/path] of "
                             "letters, digits and -._~:/%%[] (plain http "
                             "only on loopback, at most %d bytes)",
                             IG_CFG_UI_URL_MAX);
    if (pdp_cfg_string(p, k->name, v, &p->c->slack_ui_url) != 0)
        return -1;
    n = strlen(p->c->slack_ui_url);
    while (n > 8 && p->c->slack_ui_url[n - 1] == '/')
        p->c->slack_ui_url[--n] = '\0';
    return 0;
}

static const struct pdp_cfg_key slack_keys[] = {
    PDP_CFG_KEY("api_url", set_api_url),
    PDP_CFG_STR("channel", slack_channel),
    PDP_CFG_STR("bot_token_file", slack_bot_token_file),
    PDP_CFG_STR("signing_secret_file", slack_signing_secret_file),
    PDP_CFG_KEY("ui_url", set_ui_url),
};

int
pdp_cfg_slack_begin(struct pdp_cfg_parse *p, const char *kind, const char *id)
{
    (void)kind;
    (void)id;
    p->has_slack = 1;
    return 0;
}

int
pdp_cfg_slack_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    return pdp_cfg_dispatch(p, slack_keys, PDP_CFG_NKEYS(slack_keys),
                            &p->seen_sec, key, v);
}

/* ---- whole-file checks ---- */

/* Each approver's agents names a configured [agent]. */
static int
check_agents(struct pdp_cfg_parse *p)
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
                return pdp_cfg_error(p,
                                     "approver %s: agents names %s, which is "
                                     "no [agent] section",
                                     c->approvers[i].id, ag);
        }
    return 0;
}

static int
check_approvers(struct pdp_cfg_parse *p)
{
    const struct pdp_config *c = p->c;
    size_t i, j;

    for (i = 0; i < c->napprovers; i++)
        for (j = i + 1; j < c->napprovers; j++) {
            if (strcmp(c->approvers[i].id, c->approvers[j].id) == 0)
                return pdp_cfg_error(p, "approver %s is configured twice",
                                     c->approvers[i].id);
            if (c->approvers[i].slack_user != NULL &&
                c->approvers[j].slack_user != NULL &&
                strcmp(c->approvers[i].slack_user,
                       c->approvers[j].slack_user) == 0)
                return pdp_cfg_error(p,
                                     "approvers %s and %s share slack_user %s",
                                     c->approvers[i].id, c->approvers[j].id,
                                     c->approvers[i].slack_user);
        }
    return 0;
}

int
pdp_cfg_appr_finish(struct pdp_cfg_parse *p)
{
    struct pdp_config *c = p->c;

    if (check_agents(p) != 0 || check_approvers(p) != 0)
        return -1;
    if (p->has_slack) {
        if (c->slack_channel == NULL || c->slack_bot_token_file == NULL ||
            c->slack_signing_secret_file == NULL)
            return pdp_cfg_error(p, "[slack] needs channel, bot_token_file "
                                    "and signing_secret_file");
        if (c->slack_api_url == NULL &&
            pdp_cfg_string(p, "api_url", "https://slack.com/api",
                           &c->slack_api_url) != 0)
            return -1;
    }
    if (pdp_cfg_resolve(p, &c->slack_bot_token_file) != 0 ||
        pdp_cfg_resolve(p, &c->slack_signing_secret_file) != 0)
        return -1;
    if (c->session_idle > c->session_max)
        return pdp_cfg_error(p, "session_idle is longer than session_max");
    return 0;
}

void
pdp_cfg_appr_free(struct pdp_config *c)
{
    size_t i;

    for (i = 0; i < c->napprovers; i++) {
        struct pdp_approver *a = &c->approvers[i];
        free(a->id);
        free(a->name);
        ig_str_list_free(a->groups, a->ngroups);
        free(a->password_hash);
        free(a->slack_user);
        ig_str_list_free(a->agents, a->nagents);
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
