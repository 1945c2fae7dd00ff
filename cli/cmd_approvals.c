/*
 * cmd_approvals.c - `intentgate approvals list|show|approve|deny`: an
 * approver's view of escalated intents, from a terminal.
 *
 * The PDP's URL and the approver's id and password come from the
 * environment. Each run logs in (POST /v1/approver/login), does one thing
 * with the session token as its bearer, and logs out. approve and deny
 * first fetch the approval and print it, check that the intent printed
 * hashes to the intent_hash printed, and then vote with that hash: the
 * PDP counts the vote only for exactly what the human was shown.
 *
 * Exit status: 0 done (for a vote: it counted); 1 the PDP refused, one line
 * "intentgate approvals: CODE: message"; 2 bad arguments, a variable not
 * set, or a PDP that cannot be reached or answers something unexpected.
 */
#include "cli.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_http.h"
#include "cli_show.h"
#include "ig_hash.h"
#include "ig_key.h"
#include "ig_limits.h"
#include "ig_text.h"

#define CMD "approvals"

static const char approvals_usage[] =
    "usage: intentgate approvals list [--json]\n"
    "       intentgate approvals show ID [--json]\n"
    "       intentgate approvals approve ID [--comment TEXT] [--yes]\n"
    "       intentgate approvals deny ID [--comment TEXT] [--yes]\n"
    "\n"
    "Act as an approver on intents a policy escalated to humans.\n"
    "  list     the pending approvals you may vote on\n"
    "  show     one approval: the intent (action, resource, params, the\n"
    "           authenticated agent, the context it claims), why it was\n"
    "           escalated, its intent hash and the votes so far\n"
    "  approve  print the approval, then vote to approve exactly the intent\n"
    "  deny     shown (its intent hash); one deny resolves it as denied\n"
    "Options:\n"
    "  --json          print the PDP's JSON instead of text (list, show)\n"
    "  --comment TEXT  a note kept with the vote (up to " IG_STR(
        IG_APPROVAL_COMMENT_MAX) " characters)\n"
                                 "  --yes           do not ask for "
                                 "confirmation when on a terminal\n"
                                 "Environment:\n"
                                 "  INTENTGATE_URL                the PDP, "
                                 "e.g. http://127.0.0.1:8700\n"
                                 "  INTENTGATE_APPROVER_ID        your "
                                 "approver id\n"
                                 "  INTENTGATE_APPROVER_PASSWORD  your "
                                 "password\n"
                                 "Each run logs in, acts, and logs out.\n"
                                 "Exit status: 0 done (a vote counted), 1 "
                                 "refused by the PDP (one line:\n"
                                 "CODE: message), 2 bad arguments, unset "
                                 "variables, or the PDP cannot be\n"
                                 "reached.\n";

struct approvals_cmd {
    const char *sub; /* list, show, approve, deny */
    const char *id;  /* the approval (show, approve, deny) */
    const char *comment;
    int json, yes;
    const char *url, *approver, *password;
    struct cli_http *http;
};

/* ---- arguments and environment ---- */

static int
valid_id(const char *id)
{
    size_t i, n = strlen(id);

    if (n == 0 || n > IG_ID_MAX)
        return 0;
    for (i = 0; i < n; i++)
        if (!((id[i] >= 'a' && id[i] <= 'z') ||
              (id[i] >= 'A' && id[i] <= 'Z') ||
              (id[i] >= '0' && id[i] <= '9') || id[i] == '-' || id[i] == '_'))
            return 0;
    return 1;
}

static size_t
utf8_chars(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            n++;
    return n;
}

/* Options after the subcommand; 0, or -1 after printing why. */
static int
parse_options(int argc, char **argv, struct approvals_cmd *c)
{
    int i,
        voting = strcmp(c->sub, "approve") == 0 || strcmp(c->sub, "deny") == 0;

    for (i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && !voting) {
            c->json = 1;
        } else if ((strcmp(argv[i], "--yes") == 0 ||
                    strcmp(argv[i], "-y") == 0) &&
                   voting) {
            c->yes = 1;
        } else if (strcmp(argv[i], "--comment") == 0 && voting &&
                   i + 1 < argc && c->comment == NULL) {
            c->comment = argv[++i];
        } else if (strncmp(argv[i], "--comment=", 10) == 0 && voting &&
                   c->comment == NULL) {
            c->comment = argv[i] + 10;
        } else if (argv[i][0] != '-' && c->id == NULL &&
                   strcmp(c->sub, "list") != 0) {
            c->id = argv[i];
        } else {
            cli_error(CMD, "%s: unexpected argument %s (see --help)", c->sub,
                      argv[i]);
            return -1;
        }
    }
    if (strcmp(c->sub, "list") != 0 && c->id == NULL) {
        cli_error(CMD, "%s: missing the approval ID (see --help)", c->sub);
        return -1;
    }
    if (c->id != NULL && !valid_id(c->id)) {
        cli_error(CMD, "%s: not an approval id (letters, digits, - and _)",
                  c->sub);
        return -1;
    }
    if (c->comment != NULL && !ig_utf8_valid(c->comment, strlen(c->comment))) {
        cli_error(CMD, "%s: --comment is not valid UTF-8", c->sub);
        return -1;
    }
    if (c->comment != NULL &&
        utf8_chars(c->comment) > IG_APPROVAL_COMMENT_MAX) {
        cli_error(CMD, "%s: --comment is longer than %d characters", c->sub,
                  IG_APPROVAL_COMMENT_MAX);
        return -1;
    }
    return 0;
}

/* The three variables, or -1 after one line naming those missing. */
static int
read_env(struct approvals_cmd *c)
{
    static const char *const names[] = {"INTENTGATE_URL",
                                        "INTENTGATE_APPROVER_ID",
                                        "INTENTGATE_APPROVER_PASSWORD"};
    const char *vals[3];

    if (cli_require_env(CMD, names, vals, 3) != 0)
        return -1;
    c->url = vals[0];
    c->approver = vals[1];
    c->password = vals[2];
    return 0;
}

/* ---- answers ---- */

/* Report a failed exchange or a refusal; returns the exit status. */
static int
refused(const char *what, enum ig_status st, const struct ig_err *err,
        const struct cli_http_reply *r)
{
    const char *code, *msg;
    struct ig_buf b;

    if (st != IG_OK) {
        cli_error(CMD, "%s", err->msg);
        return CLI_EXIT_USAGE;
    }
    code = cli_http_error_code(r->body, &msg);
    if (code == NULL) {
        cli_error(CMD, "%s: unexpected HTTP %ld from the PDP", what, r->status);
        return CLI_EXIT_USAGE;
    }
    ig_buf_init(&b, IG_CLI_MESSAGE_MAX);
    if (cli_text_safe(&b, code, strlen(code)) != IG_OK ||
        ig_buf_adds(&b, ": ") != IG_OK ||
        cli_text_safe(&b, msg, strlen(msg)) != IG_OK)
        cli_error(CMD, "%s: HTTP %ld", what, r->status);
    else
        cli_error(CMD, "%s", b.data);
    ig_buf_release(&b);
    return CLI_EXIT_FAIL;
}

/* Overwrite a parsed string before its value is freed (a token). */
static void
wipe_string(const json_t *s)
{
    union {
        const char *c;
        char *m;
    } u;

    u.c = json_string_value(s);
    if (u.c != NULL)
        sodium_memzero(u.m, json_string_length(s));
}

/* ---- the session ---- */

static int
login(struct approvals_cmd *c)
{
    struct cli_http_reply r = {0, NULL};
    const json_t *token;
    struct ig_err err;
    struct ig_buf body;
    enum ig_status st;
    int rc = CLI_EXIT_USAGE;

    /* Grow the buffer once before the password is in it: no copy of the
       password is left behind by a realloc. */
    ig_buf_init(&body, IG_CLI_LOGIN_BODY_MAX);
    st = ig_buf_add(&body, "", 0);
    while (st == IG_OK && body.alloc < 6 * strlen(c->password) + 1024)
        st = ig_buf_addc(&body, ' ');
    ig_buf_reset(&body);
    if (st == IG_OK)
        st = ig_buf_adds(&body, "{\"approver\":");
    if (st == IG_OK)
        st = cli_json_quote(&body, c->approver, strlen(c->approver));
    if (st == IG_OK)
        st = ig_buf_adds(&body, ",\"password\":");
    if (st == IG_OK)
        st = cli_json_quote(&body, c->password, strlen(c->password));
    if (st == IG_OK)
        st = ig_buf_addc(&body, '}');
    if (st != IG_OK) {
        cli_error(CMD, "login: the id or password is too long");
        goto out;
    }
    st = cli_http_call(c->http, "POST", "/v1/approver/login", body.data,
                       body.len, &r, &err);
    if (st != IG_OK || r.status != 200) {
        rc = refused("login", st, &err, &r);
        goto out;
    }
    token = json_object_get(r.body, "token");
    if (!json_is_string(token) ||
        strncmp(json_string_value(token), "igs_", 4) != 0 ||
        cli_http_set_bearer(c->http, json_string_value(token)) != IG_OK) {
        cli_error(CMD, "login: the PDP's answer holds no session token");
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    if (r.body != NULL)
        wipe_string(json_object_get(r.body, "token"));
    cli_http_reply_release(&r);
    ig_buf_release_secret(&body);
    return rc;
}

/* End the session; a failure only leaves it to expire by itself. */
static void
logout(struct approvals_cmd *c)
{
    struct cli_http_reply r = {0, NULL};
    struct ig_err err;

    if (cli_http_call(c->http, "POST", "/v1/approver/logout", NULL, 0, &r,
                      &err) == IG_OK)
        cli_http_reply_release(&r);
}

/* ---- the subcommands ---- */

static int
print_json(const json_t *v)
{
    struct ig_buf b;
    int rc = CLI_EXIT_OK;

    ig_buf_init(&b, 8 * 1024 * 1024);
    if (cli_json_pretty(&b, v, 0) != IG_OK || ig_buf_addc(&b, '\n') != IG_OK ||
        fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
        cli_error(CMD, "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    }
    ig_buf_release(&b);
    return rc;
}

/* GET path; on 200 *out holds the body (an object). */
static int
get(struct approvals_cmd *c, const char *path, json_t **out)
{
    struct cli_http_reply r = {0, NULL};
    struct ig_err err;
    enum ig_status st;
    int rc;

    *out = NULL;
    st = cli_http_call(c->http, "GET", path, NULL, 0, &r, &err);
    if (st != IG_OK || r.status != 200) {
        rc = refused(c->sub, st, &err, &r);
    } else if (!json_is_object(r.body)) {
        cli_error(CMD, "%s: the PDP's answer is not an object", c->sub);
        rc = CLI_EXIT_USAGE;
    } else {
        *out = r.body;
        r.body = NULL;
        rc = CLI_EXIT_OK;
    }
    cli_http_reply_release(&r);
    return rc;
}

static int
do_list(struct approvals_cmd *c)
{
    json_t *body, *list;
    int rc = get(c, "/v1/approvals", &body);

    if (rc != CLI_EXIT_OK)
        return rc;
    list = json_object_get(body, "approvals");
    if (!json_is_array(list)) {
        cli_error(CMD, "list: the PDP's answer has no approvals array");
        rc = CLI_EXIT_USAGE;
    } else if (c->json) {
        rc = print_json(body);
    } else if (cli_show_list(stdout, list) != 0) {
        cli_error(CMD, "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    }
    json_decref(body);
    return rc;
}

static int
get_approval(struct approvals_cmd *c, json_t **view)
{
    char path[128];
    int n = snprintf(path, sizeof(path), "/v1/approvals/%s", c->id);

    IG_ASSERT(n > 0 && (size_t)n < sizeof(path)); /* id <= IG_ID_MAX */
    return get(c, path, view);
}

static int
do_show(struct approvals_cmd *c)
{
    json_t *view;
    int rc = get_approval(c, &view);

    if (rc != CLI_EXIT_OK)
        return rc;
    if (c->json) {
        rc = print_json(view);
    } else if (cli_show_approval(stdout, view) != 0) {
        cli_error(CMD, "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    }
    json_decref(view);
    return rc;
}

/* The view's intent_hash when the intent shown hashes to it, else NULL
   after one line saying why. */
static const char *
shown_hash(const json_t *view)
{
    const char *want = json_string_value(json_object_get(view, "intent_hash"));
    const json_t *intent = json_object_get(view, "intent");
    char got[IG_HASH_STRLEN + 1];
    struct ig_err err;

    if (want == NULL || !ig_hash_is_valid(want) || !json_is_object(intent)) {
        cli_error(CMD, "the PDP's answer has no intent or intent hash");
        return NULL;
    }
    if (ig_hash_json(intent, got, &err) != IG_OK) {
        cli_error(CMD, "cannot hash the intent shown: %s", err.msg);
        return NULL;
    }
    if (sodium_memcmp(got, want, IG_HASH_STRLEN) != 0) {
        cli_error(CMD,
                  "INTENT_HASH_MISMATCH: the intent shown hashes to %s, "
                  "not to its intent_hash; not voting",
                  got);
        return NULL;
    }
    return want;
}

/* On a terminal, ask before voting; 1 when the answer is yes. */
static int
confirmed(const struct approvals_cmd *c, int approve)
{
    char line[16];

    if (c->yes || !isatty(STDIN_FILENO))
        return 1;
    (void)fprintf(stderr, "%s this intent? [y/N] ",
                  approve ? "Approve" : "Deny");
    if (fgets(line, sizeof(line), stdin) == NULL)
        return 0;
    return strcmp(line, "y\n") == 0 || strcmp(line, "yes\n") == 0 ||
           strcmp(line, "Y\n") == 0;
}

/* Append a string field (made safe), or dflt when absent. */
static enum ig_status
add_str(struct ig_buf *b, const json_t *obj, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(obj, key);

    if (!json_is_string(v))
        return ig_buf_adds(b, dflt);
    return cli_text_safe(b, json_string_value(v), json_string_length(v));
}

/* Append a number field in its canonical form, or "?" when absent. */
static enum ig_status
add_num(struct ig_buf *b, const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);

    if (!json_is_number(v))
        return ig_buf_adds(b, "?");
    return cli_json_pretty(b, v, 0);
}

static int
print_result(const json_t *res, int approve)
{
    struct ig_buf b;
    int rc = CLI_EXIT_FAIL;

    ig_buf_init(&b, IG_CLI_MESSAGE_MAX);
    if (ig_buf_adds(&b, approve ? "Vote counted: approve. Approval status: "
                                : "Vote counted: deny. Approval status: ") ==
            IG_OK &&
        add_str(&b, res, "status", "-") == IG_OK &&
        ig_buf_adds(&b, ", decision: ") == IG_OK &&
        add_str(&b, res, "decision", "none yet") == IG_OK &&
        ig_buf_adds(&b, " (") == IG_OK &&
        add_num(&b, res, "approvals") == IG_OK &&
        ig_buf_adds(&b, " of ") == IG_OK &&
        add_num(&b, res, "quorum") == IG_OK &&
        ig_buf_adds(&b, " approvals)") == IG_OK &&
        printf("%s\n", b.data) >= 0 && fflush(stdout) == 0)
        rc = CLI_EXIT_OK;
    ig_buf_release(&b);
    if (rc != CLI_EXIT_OK)
        cli_error(CMD, "cannot write to standard output");
    return rc;
}

static int
do_vote(struct approvals_cmd *c)
{
    int approve = strcmp(c->sub, "approve") == 0, rc, n;
    struct cli_http_reply r = {0, NULL};
    json_t *view = NULL, *body = NULL;
    const char *hash;
    struct ig_err err;
    enum ig_status st;
    char path[128];

    if ((rc = get_approval(c, &view)) != CLI_EXIT_OK)
        return rc;
    rc = CLI_EXIT_FAIL;
    if (cli_show_approval(stdout, view) != 0) {
        cli_error(CMD, "cannot write to standard output");
        goto out;
    }
    if ((hash = shown_hash(view)) == NULL)
        goto out;
    if (!confirmed(c, approve)) {
        cli_error(CMD, "%s: not confirmed; no vote sent", c->sub);
        goto out;
    }
    body = json_pack("{s:s, s:s, s:s*}", "vote", approve ? "approve" : "deny",
                     "intent_hash", hash, "comment", c->comment);
    if (body == NULL) {
        cli_error(CMD, "out of memory");
        goto out;
    }
    n = snprintf(path, sizeof(path), "/v1/approvals/%s/votes", c->id);
    IG_ASSERT(n > 0 && (size_t)n < sizeof(path)); /* id <= IG_ID_MAX */
    st = cli_http_call_json(c->http, "POST", path, body, &r, &err);
    if (st != IG_OK || r.status != 200)
        rc = refused(c->sub, st, &err, &r);
    else if (!json_is_true(json_object_get(r.body, "counted")))
        cli_error(CMD, "%s: the PDP did not count the vote", c->sub);
    else
        rc = print_result(r.body, approve);
out:
    cli_http_reply_release(&r);
    json_decref(body);
    json_decref(view);
    return rc;
}

int
cli_approvals(int argc, char **argv)
{
    static const char *const subs[] = {"list", "show", "approve", "deny"};
    struct approvals_cmd c;
    struct ig_err err;
    size_t i;
    int rc;

    memset(&c, 0, sizeof(c));
    if (cli_wants_help(argc, argv)) {
        (void)fputs(approvals_usage, stdout);
        return CLI_EXIT_OK;
    }
    for (i = 0; argc >= 2 && i < sizeof(subs) / sizeof(subs[0]); i++)
        if (strcmp(argv[1], subs[i]) == 0)
            c.sub = subs[i];
    if (c.sub == NULL) {
        cli_error(CMD, "expected list, show, approve or deny (see --help)");
        return CLI_EXIT_USAGE;
    }
    if (parse_options(argc, argv, &c) != 0 || read_env(&c) != 0)
        return CLI_EXIT_USAGE;
    if (ig_crypto_init() != IG_OK) {
        cli_error(CMD, "cannot initialize libsodium");
        return CLI_EXIT_FAIL;
    }
    if (cli_http_new(c.url, &c.http, &err) != IG_OK) {
        cli_error(CMD, "INTENTGATE_URL: %s", err.msg);
        return CLI_EXIT_USAGE;
    }
    rc = login(&c);
    if (rc == CLI_EXIT_OK) {
        if (strcmp(c.sub, "list") == 0)
            rc = do_list(&c);
        else if (strcmp(c.sub, "show") == 0)
            rc = do_show(&c);
        else
            rc = do_vote(&c);
        logout(&c);
    }
    cli_http_free(c.http);
    return rc;
}
