/*
 * cmd_git.c - `intentgate git push|fetch|clone|ls-remote`: ask the PDP for
 * a git.push or git.fetch grant, then run plain git against the executor's
 * git gateway with the grant in an HTTP header only git sees.
 *
 * Flow: read the options; turn REMOTE into a gateway URL
 * http[s]://host[:port]/git/<alias> (given, or `git remote get-url` of a
 * remote's name) whose alias is the intent's resource. For a push, each
 * REFSPEC is checked and split (cli_git_refspec.c), its source resolved to
 * an object id here (`git rev-parse --verify`: the commit for a branch,
 * the tag object for a tag) and its destination expanded to a full
 * refs/heads/ or refs/tags/ name; the intent's params are {"refs": [...],
 * "delete": [...]} and git is given `<id>:<dst>` and `:<dst>` refspecs
 * built here, never what was typed. fetch, clone and ls-remote ask for
 * git.fetch with params {}. --dry-run prints the intent and stops.
 *
 * Then the intent goes to the PDP as `submit --wait` sends it
 * (cli_submit_intent: the same checks of the answer, the same long poll on
 * ESCALATE, the same exit statuses, cli_submit.h), and git runs with
 * posix_spawnp (no shell), its output passed through. The grant reaches
 * git only through git's own environment: GIT_CONFIG_KEY_n/VALUE_n set
 * http.<url>/.extraHeader to "Authorization: Bearer <grant>" (scoped to
 * the gateway URL: a url.*.insteadOf rewrite or a redirect elsewhere does
 * not get it; redirects are refused too) appended after any
 * GIT_CONFIG_COUNT already set, and GIT_TERMINAL_PROMPT=0. It is never in
 * argv, never printed, and its copy is wiped once git exits.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_git_refspec.h"
#include "cli_show.h"
#include "cli_submit.h"
#include "ig_key.h"
#include "ig_limits.h"

#define CMD "git"
#define OUT_MAX (CLI_GIT_URL_MAX + 2) /* rev-parse or get-url output */
#define WAIT_DEFAULT_S 600
#define WAIT_MAX_S IG_APPROVAL_TTL_MAX
#define FULL_MAX (CLI_GIT_REF_MAX + 16) /* "refs/heads/" + a name */

static const char git_usage[] =
    "usage: intentgate git push [--delete] [--dry-run] [--wait S] REMOTE "
    "REFSPEC...\n"
    "       intentgate git fetch [--dry-run] [--wait S] REMOTE [REFSPEC...]\n"
    "       intentgate git clone [--dry-run] [--wait S] URL [DIR]\n"
    "       intentgate git ls-remote [--dry-run] [--wait S] REMOTE\n"
    "\n"
    "Ask the PDP for a git.push or git.fetch grant, then run git against\n"
    "the executor's git gateway with the grant (never in argv or output).\n"
    "  REMOTE      a gateway URL http[s]://HOST[:PORT]/git/ALIAS, or the\n"
    "              name of a git remote whose URL is one\n"
    "  REFSPEC     SRC (a local branch or tag, pushed to the same name),\n"
    "              SRC:DST, or :DST to delete; DST is a full refs/heads/ or\n"
    "              refs/tags/ name or a short one expanded as git does. No\n"
    "              '+', '*', '^', '~', '@{' or component starting with '-'\n"
    "  --delete    every REFSPEC is a ref to delete\n"
    "  --dry-run   print the intent that would be submitted and stop\n"
    "  --wait S    on ESCALATE, wait up to S seconds for the human decision\n"
    "              (default 600; 0: do not wait)\n"
    "Environment: INTENTGATE_URL (the PDP), INTENTGATE_TOKEN (the agent's\n"
    "bearer token).\n"
    "Exit status: 0 allowed and git succeeded; 2 bad arguments, a variable\n"
    "not set, the PDP unreachable or answering something unexpected; 3 still\n"
    "pending; 4 blocked (or the escalation ended BLOCKED or EXPIRED); 5\n"
    "allowed, but git did not succeed; 1 out of memory or output error.\n";

struct git_cmd {
    const char *sub, *remote, *action;
    char **pos; /* what follows REMOTE */
    int npos, del, dry_run, remote_is_name;
    long long wait;
    char url[CLI_GIT_URL_MAX + 1];
    char alias[CLI_GIT_ALIAS_MAX + 1];
    json_t *refs, *delete, *params;
    struct cli_git_args git; /* the command to run */
};

static int
starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- arguments ---- */

static int
parse_wait(struct git_cmd *c, const char *text)
{
    char *end;

    errno = 0;
    c->wait = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] < '0' ||
        text[0] > '9' || c->wait > WAIT_MAX_S) {
        cli_error(CMD, "--wait: expected whole seconds from 0 to %d",
                  WAIT_MAX_S);
        return -1;
    }
    return 0;
}

/* The options before REMOTE, then the positional arguments; 0 or -1. */
static int
parse_options(int argc, char **argv, struct git_cmd *c)
{
    int i, push = strcmp(c->sub, "push") == 0;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (push && strcmp(argv[i], "--delete") == 0) {
            c->del = 1;
        } else if (strcmp(argv[i], "--dry-run") == 0) {
            c->dry_run = 1;
        } else if (strncmp(argv[i], "--wait=", 7) == 0) {
            if (parse_wait(c, argv[i] + 7) != 0)
                return -1;
        } else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
            if (parse_wait(c, argv[++i]) != 0)
                return -1;
        } else {
            cli_error(CMD, "%s: unexpected option %s (see --help)", c->sub,
                      argv[i]);
            return -1;
        }
    }
    if (i >= argc) {
        cli_error(CMD, "%s: no REMOTE given (see --help)", c->sub);
        return -1;
    }
    c->remote = argv[i];
    c->pos = argv + i + 1;
    c->npos = argc - i - 1;
    return 0;
}

/* The number of arguments after REMOTE the command takes; 0 or -1. */
static int
check_counts(const struct git_cmd *c)
{
    int lo = 0, hi = CLI_GIT_REFSPECS_MAX;

    if (strcmp(c->sub, "push") == 0)
        lo = 1;
    else if (strcmp(c->sub, "clone") == 0)
        hi = 1;
    else if (strcmp(c->sub, "ls-remote") == 0)
        hi = 0;
    if (c->npos < lo || c->npos > hi) {
        cli_error(CMD, "%s takes %d to %d arguments after REMOTE (see --help)",
                  c->sub, lo, hi);
        return -1;
    }
    return 0;
}

/* A remote's name as git takes it, and nothing git could read as an
   option or a URL. */
static int
remote_name_ok(const char *r)
{
    size_t n = strlen(r);

    return n > 0 && n <= 128 && r[0] != '-' &&
           strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._-/") == n;
}

/* c->url and c->alias from REMOTE; 0 or -1 after one line. */
static int
resolve_remote(struct git_cmd *c)
{
    struct cli_git_args a = {{NULL}, 0};
    char why[256];
    int st;

    if (strstr(c->remote, "://") != NULL) {
        if (strlen(c->remote) > CLI_GIT_URL_MAX) {
            cli_error(CMD, "REMOTE is longer than %d bytes", CLI_GIT_URL_MAX);
            return -1;
        }
        memcpy(c->url, c->remote, strlen(c->remote) + 1);
    } else if (!remote_name_ok(c->remote) || strcmp(c->sub, "clone") == 0) {
        cli_error(
            CMD,
            "%s: REMOTE must be a gateway URL "
            "http[s]://HOST[:PORT]/git/ALIAS%s",
            c->sub,
            strcmp(c->sub, "clone") == 0 ? "" : " or the name of a git remote");
        return -1;
    } else {
        c->remote_is_name = 1;
        /* one URL: --all prints every fetch URL, and more is refused */
        st = -1;
        if (cli_git_args_add(&a, "git") == 0 &&
            cli_git_args_add(&a, "remote") == 0 &&
            cli_git_args_add(&a, "get-url") == 0 &&
            cli_git_args_add(&a, "%s",
                             strcmp(c->sub, "push") == 0 ? "--push"
                                                         : "--all") == 0 &&
            cli_git_args_add(&a, "%s", c->remote) == 0)
            st = cli_git_capture(a.v, 1, c->url, sizeof(c->url));
        cli_git_args_free(&a);
        if (st == 2)
            cli_error(CMD, "no git remote named %s", c->remote);
        else if (st > 0)
            cli_error(CMD, "git remote get-url %s failed (status %d)",
                      c->remote, st);
        if (st != 0)
            return -1;
    }
    if (cli_git_url_parse(c->url, c->alias, sizeof(c->alias), why,
                          sizeof(why)) != 0) {
        cli_error(CMD, "%s%s is not a gateway URL: %s",
                  c->remote_is_name ? "the URL of remote " : "REMOTE",
                  c->remote_is_name ? c->remote : "", why);
        return -1;
    }
    return 0;
}

/* ---- push: refspecs to refs and object ids ---- */

/* The object id rev names (`git rev-parse --verify`) into id (cap bytes):
   1 found, 0 not, -1 after one line (not a repository, no git). */
static int
rev_parse(const char *rev, char *id, size_t cap)
{
    struct cli_git_args a = {{NULL}, 0};
    int st = -1;

    if (cli_git_args_add(&a, "git") == 0 &&
        cli_git_args_add(&a, "rev-parse") == 0 &&
        cli_git_args_add(&a, "--verify") == 0 &&
        cli_git_args_add(&a, "--quiet") == 0 &&
        cli_git_args_add(&a, "--end-of-options") == 0 &&
        cli_git_args_add(&a, "%s", rev) == 0)
        st = cli_git_capture(a.v, 1, id, cap);
    cli_git_args_free(&a);
    if (st == 0 && (strlen(id) == 40 || strlen(id) == 64) &&
        strspn(id, "0123456789abcdef") == strlen(id))
        return 1;
    if (st == 1)
        return 0;
    if (st >= 0)
        cli_error(CMD,
                  "git rev-parse failed (status %d): is this a git "
                  "repository?",
                  st);
    return -1;
}

/* What a short name is here: 'h' a local branch, 't' a local tag, 0
   neither; -1 after one line when both or on an error. */
static int
short_kind(const char *name)
{
    char full[FULL_MAX], id[OUT_MAX];
    int h, t;

    (void)snprintf(full, sizeof(full), "refs/heads/%s", name); /* fits */
    if ((h = rev_parse(full, id, sizeof(id))) < 0)
        return -1;
    (void)snprintf(full, sizeof(full), "refs/tags/%s", name);
    if ((t = rev_parse(full, id, sizeof(id))) < 0)
        return -1;
    if (h && t) {
        cli_error(CMD,
                  "%s is both a branch and a tag: write refs/heads/%s "
                  "or refs/tags/%s",
                  name, name, name);
        return -1;
    }
    return h ? 'h' : t ? 't' : 0;
}

/* Expand a destination to a full ref name in out (FULL_MAX bytes) and
   check it: a full name as it is, a short one under refs/heads/ or
   refs/tags/ as kind says. 0 or -1 after one line. */
static int
expand_dst(const char *name, int kind, char *out)
{
    char why[256];

    if (starts_with(name, "refs/"))
        (void)snprintf(out, FULL_MAX, "%s", name);
    else if (kind != 0 && strcmp(name, "HEAD") != 0)
        (void)snprintf(out, FULL_MAX, "refs/%s/%s",
                       kind == 'h' ? "heads" : "tags", name);
    else {
        cli_error(CMD,
                  "%s is not a local branch or tag: name the "
                  "destination in full (refs/heads/... or refs/tags/...)",
                  name);
        return -1;
    }
    if (cli_git_dst_check(out, why, sizeof(why)) != 0) {
        cli_error(CMD, "destination %s: %s", out, why);
        return -1;
    }
    return 0;
}

/* Add dst to list (c->refs or c->delete) unless either holds it; 0 or -1
   after one line. */
static int
add_ref(struct git_cmd *c, json_t *list, const char *dst)
{
    const json_t *lists[2] = {c->refs, c->delete};
    json_t *name;
    size_t i, k;

    for (k = 0; k < 2; k++)
        for (i = 0; i < json_array_size(lists[k]); i++)
            if (strcmp(json_string_value(json_array_get(lists[k], i)), dst) ==
                0) {
                cli_error(CMD, "%s is named twice", dst);
                return -1;
            }
    /* json_string copies dst (NULL when not UTF-8); the array steals it */
    name = json_string(dst);
    if (name == NULL || json_array_append_new(list, name) != 0) {
        cli_error(CMD, "%s",
                  name == NULL ? "a ref name is not valid UTF-8"
                               : "out of memory");
        return -1;
    }
    return 0;
}

/* A deletion: `:<dst>` for git, dst in params.delete. */
static int
resolve_delete(struct git_cmd *c, const char *name)
{
    char dst[FULL_MAX];
    int kind = 0;

    if (!starts_with(name, "refs/") && (kind = short_kind(name)) < 0)
        return -1;
    if (expand_dst(name, kind, dst) != 0 || add_ref(c, c->delete, dst) != 0)
        return -1;
    return cli_git_args_add(&c->git, ":%s", dst);
}

/* An update: `<id>:<dst>` for git, dst in params.refs. */
static int
resolve_update(struct git_cmd *c, const struct cli_git_spec *s)
{
    char src[FULL_MAX], dst[FULL_MAX], rev[FULL_MAX + 16], id[OUT_MAX];
    int kind = 0, found;

    if (starts_with(s->src, "refs/heads/"))
        kind = 'h';
    else if (starts_with(s->src, "refs/tags/"))
        kind = 't';
    else if (!starts_with(s->src, "refs/") && (kind = short_kind(s->src)) < 0)
        return -1;
    if (starts_with(s->src, "refs/") || kind == 0)
        (void)snprintf(src, sizeof(src), "%s", s->src); /* fits */
    else
        (void)snprintf(src, sizeof(src), "refs/%s/%s",
                       kind == 'h' ? "heads" : "tags", s->src);
    if (expand_dst(s->dst[0] != '\0' ? s->dst : s->src, kind, dst) != 0)
        return -1;
    /* a tag goes as its tag object; a branch gets a commit */
    (void)snprintf(rev, sizeof(rev), "%s%s", src,
                   starts_with(dst, "refs/tags/") ? "" : "^{commit}");
    if ((found = rev_parse(rev, id, sizeof(id))) <= 0) {
        if (found == 0)
            cli_error(CMD, "%s does not name a %s here", s->src,
                      starts_with(dst, "refs/tags/") ? "commit or tag"
                                                     : "commit");
        return -1;
    }
    if (add_ref(c, c->refs, dst) != 0)
        return -1;
    return cli_git_args_add(&c->git, "%s:%s", id, dst);
}

/* params {"refs": [...], "delete": [...]} and git's argv for a push. */
static int
build_push(struct git_cmd *c)
{
    struct cli_git_spec s;
    char why[256];
    int i;

    if (cli_git_args_add(&c->git, "git") || cli_git_args_add(&c->git, "push") ||
        cli_git_args_add(&c->git, "--no-follow-tags") ||
        cli_git_args_add(&c->git, "--recurse-submodules=no") ||
        cli_git_args_add(&c->git, "--no-signed") ||
        cli_git_args_add(&c->git, "--end-of-options") ||
        cli_git_args_add(&c->git, "%s", c->url))
        return -1;
    for (i = 0; i < c->npos; i++) {
        if (cli_git_spec_parse(c->pos[i], c->del, &s, why, sizeof(why)) != 0) {
            cli_error(CMD, "refspec %d: %s", i + 1, why);
            return -1;
        }
        if ((s.del ? resolve_delete(c, s.dst) : resolve_update(c, &s)) != 0)
            return -1;
    }
    /* json_object_set takes a new reference: params holds its own */
    if ((json_array_size(c->refs) > 0 &&
         json_object_set(c->params, "refs", c->refs) != 0) ||
        (json_array_size(c->delete) > 0 &&
         json_object_set(c->params, "delete", c->delete) != 0)) {
        cli_error(CMD, "out of memory");
        return -1;
    }
    return 0;
}

/* git's argv for fetch, clone or ls-remote (params stay {}). */
static int
build_fetch(struct git_cmd *c)
{
    int i;

    if (cli_git_args_add(&c->git, "git") ||
        cli_git_args_add(&c->git, "%s", c->sub) ||
        cli_git_args_add(&c->git, "--end-of-options"))
        return -1;
    /* a fetch from a remote's name keeps its refspecs (the URL was
       checked above); everything else goes to the URL */
    if (cli_git_args_add(&c->git, "%s",
                         c->remote_is_name ? c->remote : c->url) != 0)
        return -1;
    for (i = 0; i < c->npos; i++)
        if (cli_git_args_add(&c->git, "%s", c->pos[i]) != 0)
            return -1;
    return 0;
}

/* ---- the PDP ---- */

/* One line saying why git did not run (BLOCK or still pending). */
static void
report(int rc, const json_t *a)
{
    const json_t *reasons = json_object_get(a, "reasons");
    const char *msg = json_string_value(json_object_get(a, "message"));
    const char *id = json_string_value(json_object_get(a, "intent_id"));
    const char *why;
    struct ig_buf b;
    size_t i;
    int ok = 1;

    ig_buf_init(&b, IG_CLI_MESSAGE_MAX);
    for (i = 0; ok && i < json_array_size(reasons); i++) {
        const char *r = json_string_value(json_array_get(reasons, i));

        ok = r != NULL && (i == 0 || ig_buf_adds(&b, ", ") == IG_OK) &&
             cli_text_safe(&b, r, strlen(r)) == IG_OK;
    }
    if (ok && msg != NULL && msg[0] != '\0')
        ok = ig_buf_adds(&b, ": ") == IG_OK &&
             cli_text_safe(&b, msg, strlen(msg)) == IG_OK;
    why = ok && b.len > 0 ? b.data : "no reason given";
    if (rc == SUBMIT_EXIT_BLOCKED)
        cli_error(CMD, "blocked (%s); git did not run", why);
    else
        cli_error(CMD,
                  "escalated (%s), not decided yet: intent %s; git did "
                  "not run",
                  why, id != NULL && strlen(id) <= IG_INTENT_ID_MAX ? id : "?");
    ig_buf_release(&b);
}

/* Submit the intent and, once allowed, run git; the exit status. */
static int
submit_and_run(struct git_cmd *c)
{
    struct cli_submit_req q = {.cmd = CMD,
                               .action = c->action,
                               .resource = c->alias,
                               .params = c->params,
                               .wait = c->wait};
    struct cli_http *pdp = NULL;
    json_t *answer = NULL;
    int rc = CLI_EXIT_USAGE, st;

    if (ig_crypto_init() != IG_OK) {
        cli_error(CMD, "cannot initialize libsodium");
        return CLI_EXIT_FAIL;
    }
    if (cli_submit_open_pdp(CMD, &pdp) != 0)
        goto out;
    rc = cli_submit_intent(pdp, &q, &answer);
    if (rc == SUBMIT_EXIT_BLOCKED || rc == SUBMIT_EXIT_PENDING)
        report(rc, answer);
    if (rc != CLI_EXIT_OK)
        goto out;
    st = cli_git_run_granted(
        c->git.v, c->url, json_string_value(json_object_get(answer, "grant")));
    rc = st == 0 ? CLI_EXIT_OK : SUBMIT_EXIT_NOT_RUN;
    if (st > 256)
        cli_error(CMD, "git %s was killed by signal %d", c->sub, st - 256);
    else if (st > 0)
        cli_error(CMD, "git %s failed (exit status %d)", c->sub, st);
out:
    json_decref(answer);
    cli_http_free(pdp);
    return rc;
}

/* --dry-run: the git command on stderr (its arguments were checked or
   built here; fetch refspecs are passed as typed, so made safe). */
static void
show_command(const struct git_cmd *c)
{
    struct ig_buf b;
    size_t i;
    int ok = 1;

    ig_buf_init(&b, IG_CLI_MESSAGE_MAX);
    for (i = 0; ok && i < c->git.n; i++)
        ok = (i == 0 || ig_buf_addc(&b, ' ') == IG_OK) &&
             cli_text_safe(&b, c->git.v[i], strlen(c->git.v[i])) == IG_OK;
    cli_error(CMD, "would run: %s%s", b.data != NULL ? b.data : "",
              ok ? "" : " ...");
    ig_buf_release(&b);
}

/* --dry-run: the intent on stdout. */
static int
print_intent(const struct git_cmd *c)
{
    /* "O" takes a new reference; intent owns what it holds */
    json_t *intent = json_pack("{s:s, s:s, s:O}", "action", c->action,
                               "resource", c->alias, "params", c->params);
    int rc;

    if (intent == NULL) {
        cli_error(CMD, "out of memory");
        return CLI_EXIT_FAIL;
    }
    rc = cli_submit_print(intent);
    json_decref(intent);
    if (rc == CLI_EXIT_OK)
        show_command(c);
    return rc;
}

int
cli_git(int argc, char **argv)
{
    static const char *const subs[] = {"push", "fetch", "clone", "ls-remote"};
    struct git_cmd c;
    int rc = CLI_EXIT_USAGE;
    size_t k;

    memset(&c, 0, sizeof(c));
    c.wait = WAIT_DEFAULT_S;
    if (cli_wants_help(argc, argv)) {
        (void)fputs(git_usage, stdout);
        return CLI_EXIT_OK;
    }
    for (k = 0; argc > 1 && k < sizeof(subs) / sizeof(subs[0]); k++)
        if (strcmp(argv[1], subs[k]) == 0)
            c.sub = subs[k];
    if (c.sub == NULL) {
        cli_error(CMD, "expected push, fetch, clone or ls-remote (see --help)");
        return CLI_EXIT_USAGE;
    }
    c.action = strcmp(c.sub, "push") == 0 ? "git.push" : "git.fetch";
    c.refs = json_array();
    c.delete = json_array();
    c.params = json_object();
    if (c.refs == NULL || c.delete == NULL || c.params == NULL) {
        cli_error(CMD, "out of memory");
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    /* GIT_CONFIG_COUNT: git would refuse a bad one, and the grant's
       settings are appended after it */
    if (parse_options(argc - 1, argv + 1, &c) != 0 || check_counts(&c) != 0 ||
        cli_git_config_base() < 0 || resolve_remote(&c) != 0 ||
        (strcmp(c.sub, "push") == 0 ? build_push(&c) : build_fetch(&c)) != 0)
        goto out;
    rc = c.dry_run ? print_intent(&c) : submit_and_run(&c);
out:
    cli_git_args_free(&c.git);
    json_decref(c.refs);
    json_decref(c.delete);
    json_decref(c.params);
    return rc;
}
