/*
 * cmd_submit.c - `intentgate submit`: an agent asks the PDP for leave to
 * act, optionally waits for a human's decision and runs the action.
 *
 * Flow: read the options (params and context are parsed by the strict
 * reader and must be objects), read INTENTGATE_URL and INTENTGATE_TOKEN
 * (and INTENTGATE_EXECUTOR_URL for --execute) before anything is sent,
 * then POST /v1/intents. The answer is checked before it is trusted: a
 * known decision, the binding for what was asked (action, resource,
 * params), and for ALLOW a grant and a binding that hashes to the
 * intent_hash. An ESCALATE with --wait S long-polls GET /v1/intents/{id}
 * ?wait=N (N at most POLL_MAX_S, under the client's 30 s timeout) until
 * the state leaves PENDING_APPROVAL or S seconds pass. --execute then
 * hands the binding and grant to the executor (cli_submit_exec.c).
 *
 * Fail closed: every path that is not a well-formed ALLOW (and, with
 * --execute, a COMPLETED outcome) exits non-zero; see cli_submit.h.
 */
#include "cli.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_http.h"
#include "cli_show.h"
#include "cli_submit.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_key.h"
#include "ig_limits.h"
#include "ig_text.h"

#define CMD SUBMIT_CMD
#define POLL_MAX_S (CLI_HTTP_TIMEOUT_MS / 1000 - 5) /* one ?wait= call */
#define WAIT_MAX_S IG_APPROVAL_TTL_MAX /* no approval lives longer */

static const char submit_usage[] =
    "usage: intentgate submit --action A --resource R\n"
    "           [--params JSON | --params-file FILE] [--context JSON]\n"
    "           [--idempotency-key K] [--wait SECONDS] [--execute]\n"
    "\n"
    "Submit an intent to the PDP as an agent and print its JSON answer.\n"
    "  --action A           e.g. payments.refund\n"
    "  --resource R         e.g. orders/123\n"
    "  --params JSON        the action's arguments, a JSON object ({} when\n"
    "                       absent)\n"
    "  --params-file FILE   the same from FILE (\"-\": standard input)\n"
    "  --context JSON       a JSON object, e.g. {\"ticket\":\"T-1\"}\n"
    "  --idempotency-key K  a retry with the same key gets the first answer\n"
    "  --wait SECONDS       on ESCALATE, wait up to SECONDS for the human\n"
    "                       decision and print the intent's final state\n"
    "  --execute            once allowed, send the intent and its grant to\n"
    "                       the executor and print the executor's reply\n"
    "Environment:\n"
    "  INTENTGATE_URL           the PDP, e.g. http://127.0.0.1:8700\n"
    "  INTENTGATE_TOKEN         the agent's bearer token\n"
    "  INTENTGATE_EXECUTOR_URL  the executor (--execute only)\n"
    "Exit status:\n"
    "  0  ALLOW: the answer holds a grant (--execute: it ran, COMPLETED)\n"
    "  2  bad arguments or input, a variable not set, the PDP cannot be\n"
    "     reached or answered an error or something malformed\n"
    "  3  ESCALATE: a human has not decided (yet, after --wait)\n"
    "  4  BLOCK, or the escalation ended BLOCKED or EXPIRED\n"
    "  5  --execute: allowed, but it did not run to COMPLETED (the executor\n"
    "     refused, reported another outcome, or could not be reached)\n"
    "  1  the answer could not be written to standard output\n"
    "Errors print one line on standard error; the JSON goes to standard\n"
    "output with statuses 0, 3, 4 and 5.\n";

struct submit_cmd {
    const char *action, *resource, *params_text, *params_file;
    const char *context_text, *idem, *wait_text;
    long long wait; /* seconds; 0: do not wait */
    int execute;
    const char *exec_url;
    json_t *params, *context;
    struct cli_http *pdp, *exec;
};

/* ---- arguments ---- */

/*
 * When argv[*i] is option name ("--name VALUE" or "--name=VALUE"): store
 * the value in *dst and return 1, or return -1 after printing why it is
 * wrong. 0 when argv[*i] is another option.
 */
static int
take_value(int argc, char **argv, int *i, const char *name, const char **dst)
{
    size_t n = strlen(name);
    const char *a = argv[*i], *v;

    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    if (a[n] == '=') {
        v = a + n + 1;
    } else if (*i + 1 < argc) {
        v = argv[++*i];
    } else {
        cli_error(CMD, "%s needs a value (see --help)", name);
        return -1;
    }
    if (*dst != NULL) {
        cli_error(CMD, "%s given twice", name);
        return -1;
    }
    *dst = v;
    return 1;
}

static int
parse_wait(struct submit_cmd *c)
{
    char *end;

    if (c->wait_text == NULL)
        return 0;
    errno = 0;
    c->wait = strtoll(c->wait_text, &end, 10);
    if (errno != 0 || end == c->wait_text || *end != '\0' || c->wait < 0 ||
        c->wait > WAIT_MAX_S || c->wait_text[0] == '-' ||
        c->wait_text[0] == '+' || c->wait_text[0] == ' ') {
        cli_error(CMD, "--wait: expected whole seconds from 0 to %d",
                  WAIT_MAX_S);
        return -1;
    }
    return 0;
}

/* Check what the options hold on their own; 0 or -1 after one line. */
static int
check_options(struct submit_cmd *c)
{
    const char *s;

    if (c->action == NULL || c->resource == NULL) {
        cli_error(CMD, "--action and --resource are required (see --help)");
        return -1;
    }
    if (c->params_text != NULL && c->params_file != NULL) {
        cli_error(CMD, "give --params or --params-file, not both");
        return -1;
    }
    if (c->action[0] == '\0' || c->resource[0] == '\0') {
        cli_error(CMD, "--action and --resource must not be empty");
        return -1;
    }
    if (!ig_utf8_valid(c->action, strlen(c->action)) ||
        !ig_utf8_valid(c->resource, strlen(c->resource))) {
        cli_error(CMD, "--action and --resource must be valid UTF-8");
        return -1;
    }
    if (c->idem != NULL) {
        for (s = c->idem; *s != '\0'; s++)
            if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
                break;
        if (c->idem[0] == '\0' || *s != '\0' ||
            strlen(c->idem) > IG_IDEMPOTENCY_KEY_MAX) {
            cli_error(CMD,
                      "--idempotency-key: 1 to %d printable ASCII "
                      "characters",
                      IG_IDEMPOTENCY_KEY_MAX);
            return -1;
        }
    }
    return parse_wait(c);
}

static int
parse_options(int argc, char **argv, struct submit_cmd *c)
{
    static const char *const names[] = {
        "--action",  "--resource",        "--params", "--params-file",
        "--context", "--idempotency-key", "--wait"};
    const char **dst[] = {&c->action,      &c->resource,     &c->params_text,
                          &c->params_file, &c->context_text, &c->idem,
                          &c->wait_text};
    size_t k;
    int i, r;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--execute") == 0) {
            c->execute = 1;
            continue;
        }
        for (k = 0, r = 0; r == 0 && k < sizeof(names) / sizeof(names[0]); k++)
            r = take_value(argc, argv, &i, names[k], dst[k]);
        if (r < 0)
            return -1;
        if (r == 0) {
            cli_error(CMD, "unexpected argument %s (see --help)", argv[i]);
            return -1;
        }
    }
    return check_options(c);
}

/* Parse text (len bytes, from `what`) strictly into a JSON object. */
static int
parse_object(const char *what, const char *text, size_t len, json_t **out)
{
    struct ig_err err;

    ig_err_clear(&err);
    if (ig_json_parse(text, len, out, &err) != IG_OK) {
        if (err.line > 0)
            cli_error(CMD, "%s:%d:%d: %s", what, err.line, err.column, err.msg);
        else
            cli_error(CMD, "%s: %s", what, err.msg);
        return -1;
    }
    if (!json_is_object(*out)) {
        cli_error(CMD, "%s: not a JSON object", what);
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* params and context as objects; 0, or -1 after one line. */
static int
read_objects(struct submit_cmd *c)
{
    struct ig_buf in;
    struct ig_err err;
    int rc = -1;

    if (c->context_text != NULL &&
        parse_object("--context", c->context_text, strlen(c->context_text),
                     &c->context) != 0)
        return -1;
    if (c->params_text != NULL)
        return parse_object("--params", c->params_text, strlen(c->params_text),
                            &c->params);
    if (c->params_file == NULL) {
        if ((c->params = json_object()) == NULL)
            cli_error(CMD, "out of memory");
        return c->params != NULL ? 0 : -1;
    }
    ig_buf_init(&in, IG_JSON_MAX_BYTES);
    if (cli_read_input(c->params_file, &in, &err) != IG_OK)
        cli_error(CMD, "--params-file: %s", err.msg);
    else
        rc = parse_object(cli_input_name(c->params_file),
                          in.data != NULL ? in.data : "", in.len, &c->params);
    ig_buf_release(&in);
    return rc;
}

int
cli_submit_open_pdp(const char *cmd, struct cli_http **pdp)
{
    static const char *const names[] = {"INTENTGATE_URL", "INTENTGATE_TOKEN"};
    const char *vals[2] = {NULL, NULL};
    struct ig_err err;
    enum ig_status st;

    *pdp = NULL;
    if (cli_require_env(cmd, names, vals, 2) != 0)
        return -1;
    if (cli_http_new(vals[0], pdp, &err) != IG_OK) {
        cli_error(cmd, "INTENTGATE_URL: %s", err.msg);
        return -1;
    }
    st = cli_http_set_bearer(*pdp, vals[1]);
    if (st != IG_OK) {
        cli_error(cmd, "INTENTGATE_TOKEN: %s",
                  st == IG_ERR_NOMEM ? "out of memory"
                                     : "not a token a header can carry");
        return -1;
    }
    return 0;
}

/* The variables and both clients, before anything is sent; 0 or -1 after
   one line naming what is missing or wrong. */
static int
open_clients(struct submit_cmd *c)
{
    static const char *const names[] = {"INTENTGATE_URL", "INTENTGATE_TOKEN",
                                        "INTENTGATE_EXECUTOR_URL"};
    const char *vals[3] = {NULL, NULL, NULL};
    struct ig_err err;

    if (cli_require_env(CMD, names, vals, c->execute ? 3 : 2) != 0)
        return -1;
    c->exec_url = vals[2];
    if (cli_submit_open_pdp(CMD, &c->pdp) != 0)
        return -1;
    if (c->execute && cli_http_new(c->exec_url, &c->exec, &err) != IG_OK) {
        cli_error(CMD, "INTENTGATE_EXECUTOR_URL: %s", err.msg);
        return -1;
    }
    return 0;
}

/* ---- answers ---- */

/* One line (what: a prefix, "" or "doing: ") for a failed exchange or an
   error answer; CLI_EXIT_USAGE. */
static int
pdp_failed(const char *cmd, const char *what, enum ig_status st,
           const struct ig_err *err, const struct cli_http_reply *r)
{
    const char *code, *msg, *field;
    struct ig_buf b;

    if (st != IG_OK) {
        cli_error(cmd, "%s%s", what, err->msg);
        return CLI_EXIT_USAGE;
    }
    code = cli_http_error_code(r->body, &msg);
    field = json_string_value(
        json_object_get(json_object_get(r->body, "error"), "field"));
    ig_buf_init(&b, IG_CLI_MESSAGE_MAX);
    if (code == NULL || cli_text_safe(&b, code, strlen(code)) != IG_OK ||
        ig_buf_adds(&b, ": ") != IG_OK ||
        cli_text_safe(&b, msg, strlen(msg)) != IG_OK ||
        (field != NULL && (ig_buf_adds(&b, " (field ") != IG_OK ||
                           cli_text_safe(&b, field, strlen(field)) != IG_OK ||
                           ig_buf_addc(&b, ')') != IG_OK)))
        cli_error(cmd, "%sunexpected HTTP %ld from the PDP", what, r->status);
    else
        cli_error(cmd, "%sthe PDP refused: %s", what, b.data);
    ig_buf_release(&b);
    return CLI_EXIT_USAGE;
}

static int
valid_id(const char *id)
{
    size_t n = id != NULL ? strlen(id) : 0;

    return n > 0 && n <= IG_INTENT_ID_MAX &&
           strspn(id, "0123456789abcdefABCDEF-") == n;
}

/* The answer's binding is the intent asked for; 0 or -1 after one line. */
static int
same_intent(const struct cli_submit_req *c, const json_t *intent)
{
    const char *a = json_string_value(json_object_get(intent, "action"));
    const char *r = json_string_value(json_object_get(intent, "resource"));

    if (a == NULL || r == NULL || strcmp(a, c->action) != 0 ||
        strcmp(r, c->resource) != 0 ||
        !json_equal(json_object_get(intent, "params"), c->params)) {
        cli_error(c->cmd, "the PDP's answer is for another intent (was the "
                          "idempotency key used for other arguments?)");
        return -1;
    }
    return 0;
}

/* An allowed answer carries a grant and a binding that hashes to its
   intent_hash; 0 or -1 after one line. */
static int
check_grant(const char *cmd, const json_t *answer)
{
    const char *want =
        json_string_value(json_object_get(answer, "intent_hash"));
    const char *grant = json_string_value(json_object_get(answer, "grant"));
    const json_t *intent = json_object_get(answer, "intent");
    char got[IG_HASH_STRLEN + 1];
    struct ig_err err;

    if (grant == NULL || strncmp(grant, "v4.public.", 10) != 0 ||
        want == NULL || !ig_hash_is_valid(want) || !json_is_object(intent)) {
        cli_error(cmd, "the PDP allowed but its answer has no grant, intent "
                       "or intent hash");
        return -1;
    }
    if (ig_hash_json(intent, got, &err) != IG_OK ||
        sodium_memcmp(got, want, IG_HASH_STRLEN) != 0) {
        cli_error(cmd, "the PDP's answer holds an intent that does not hash "
                       "to its intent_hash");
        return -1;
    }
    return 0;
}

/* The exit status the POST answer means, after checking it. */
static int
judge_answer(const struct cli_submit_req *c, const json_t *a)
{
    const char *d = json_string_value(json_object_get(a, "decision"));

    if (!valid_id(json_string_value(json_object_get(a, "intent_id"))) ||
        d == NULL) {
        cli_error(c->cmd, "the PDP's answer has no intent id or decision");
        return CLI_EXIT_USAGE;
    }
    if (same_intent(c, json_object_get(a, "intent")) != 0)
        return CLI_EXIT_USAGE;
    if (strcmp(d, "ALLOW") == 0)
        return check_grant(c->cmd, a) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (strcmp(d, "ESCALATE") == 0)
        return SUBMIT_EXIT_PENDING;
    if (strcmp(d, "BLOCK") == 0)
        return SUBMIT_EXIT_BLOCKED;
    cli_error(c->cmd, "the PDP's answer has an unknown decision");
    return CLI_EXIT_USAGE;
}

/* The exit status an intent's state (GET /v1/intents/{id}) means. */
static int
judge_state(const char *cmd, const json_t *view, const char *id)
{
    const char *s = json_string_value(json_object_get(view, "state"));

    if (s == NULL) {
        cli_error(cmd, "the PDP's view of intent %s has no state", id);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(s, "ALLOWED") == 0)
        return check_grant(cmd, view) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (strcmp(s, "PENDING_APPROVAL") == 0)
        return SUBMIT_EXIT_PENDING;
    if (strcmp(s, "BLOCKED") == 0 || strcmp(s, "EXPIRED") == 0)
        return SUBMIT_EXIT_BLOCKED;
    if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(s))
        s = "?";
    cli_error(cmd, "intent %s is %s: its grant is spent or gone", id, s);
    return CLI_EXIT_USAGE;
}

/* ---- the long poll ---- */

static long long
now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Long-poll intent id while it is PENDING_APPROVAL, for c->wait seconds
 * in all. *view starts as the answer to show and ends as the last one
 * received (owned by the caller). Returns the exit status it means.
 */
static int
wait_decision(struct cli_http *pdp, const struct cli_submit_req *c,
              const char *id, json_t **view)
{
    struct cli_http_reply r = {0, NULL};
    long long deadline = now_ms() + c->wait * 1000, left, t0, n_s;
    int rc = SUBMIT_EXIT_PENDING, n;
    struct ig_err err;
    enum ig_status st;
    char path[160];

    while (rc == SUBMIT_EXIT_PENDING && (left = deadline - now_ms()) > 0) {
        n_s = (left + 999) / 1000;
        n = snprintf(path, sizeof(path), "/v1/intents/%s?wait=%lld", id,
                     n_s < POLL_MAX_S ? n_s : POLL_MAX_S);
        IG_ASSERT(n > 0 &&
                  (size_t)n < sizeof(path)); /* id <= IG_INTENT_ID_MAX */
        t0 = now_ms();
        st = cli_http_call(pdp, "GET", path, NULL, 0, &r, &err);
        if (st != IG_OK || r.status != 200 || !json_is_object(r.body)) {
            if (st == IG_OK && r.status == 200)
                cli_error(c->cmd, "waiting: the PDP's answer is not an object");
            else
                (void)pdp_failed(c->cmd, "waiting: ", st, &err, &r);
            cli_http_reply_release(&r);
            return CLI_EXIT_USAGE;
        }
        json_decref(*view);
        *view = r.body; /* take the reply's reference */
        r.body = NULL;
        rc = judge_state(c->cmd, *view, id);
        if (rc == SUBMIT_EXIT_PENDING && now_ms() - t0 < 200) {
            /* answered at once (a vote short of the quorum): not a spin */
            struct timespec pause = {0, 200 * 1000 * 1000};
            (void)nanosleep(&pause, NULL);
        }
    }
    return rc;
}

/* ---- the run ---- */

int
cli_submit_intent(struct cli_http *pdp, const struct cli_submit_req *q,
                  json_t **answer)
{
    struct cli_http_reply r = {0, NULL};
    json_t *body;
    const char *id;
    struct ig_err err;
    enum ig_status st;
    char idbuf[IG_INTENT_ID_MAX + 1];
    int rc;

    *answer = NULL;
    /* "O" / "O*" take new references; body owns what it holds. */
    body = json_pack("{s:s, s:s, s:O, s:O*, s:s*}", "action", q->action,
                     "resource", q->resource, "params", q->params, "context",
                     q->context, "idempotency_key", q->idem);
    if (body == NULL) {
        cli_error(q->cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    st = cli_http_call_json(pdp, "POST", "/v1/intents", body, &r, &err);
    json_decref(body);
    if (st != IG_OK || (r.status != 200 && r.status != 201)) {
        rc = pdp_failed(q->cmd, "", st, &err, &r);
        goto out;
    }
    if (!json_is_object(r.body)) {
        cli_error(q->cmd, "the PDP's answer is not an object");
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    *answer = r.body; /* take the reply's reference */
    r.body = NULL;
    rc = judge_answer(q, *answer);
    if (rc == CLI_EXIT_USAGE)
        goto out;
    id = json_string_value(json_object_get(*answer, "intent_id"));
    memcpy(idbuf, id, strlen(id) + 1); /* valid_id: at most IG_INTENT_ID_MAX */
    if (rc == SUBMIT_EXIT_PENDING && q->wait > 0)
        rc = wait_decision(pdp, q, idbuf, answer);
out:
    cli_http_reply_release(&r);
    return rc;
}

static int
submit(struct submit_cmd *c)
{
    struct cli_submit_req q = {.cmd = CMD,
                               .action = c->action,
                               .resource = c->resource,
                               .params = c->params,
                               .context = c->context,
                               .idem = c->idem,
                               .wait = c->wait};
    json_t *shown = NULL;
    char id[IG_INTENT_ID_MAX + 1];
    int rc;

    rc = cli_submit_intent(c->pdp, &q, &shown);
    if (rc == CLI_EXIT_USAGE || rc == CLI_EXIT_FAIL)
        goto out;
    if (rc == CLI_EXIT_OK && c->execute) {
        /* cli_submit_intent checked the id (valid_id) */
        (void)snprintf(id, sizeof(id), "%s",
                       json_string_value(json_object_get(shown, "intent_id")));
        rc = cli_submit_execute(
            c->exec, c->pdp, id, json_object_get(shown, "intent"),
            json_string_value(json_object_get(shown, "grant")));
    } else if (cli_submit_print(shown) != CLI_EXIT_OK) {
        rc = CLI_EXIT_FAIL;
    }
out:
    json_decref(shown);
    return rc;
}

int
cli_submit(int argc, char **argv)
{
    struct submit_cmd c;
    int rc = CLI_EXIT_USAGE;

    memset(&c, 0, sizeof(c));
    if (cli_wants_help(argc, argv)) {
        (void)fputs(submit_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (parse_options(argc, argv, &c) != 0 || read_objects(&c) != 0)
        goto out;
    if (ig_crypto_init() != IG_OK) {
        cli_error(CMD, "cannot initialize libsodium");
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    if (open_clients(&c) != 0)
        goto out;
    rc = submit(&c);
out:
    cli_http_free(c.exec);
    cli_http_free(c.pdp);
    json_decref(c.params);
    json_decref(c.context);
    return rc;
}
