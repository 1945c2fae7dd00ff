/*
 * cmd_hook.c - `intentgate hook claude-code`: Claude Code's PreToolUse
 * hook, answered by the PDP.
 *
 * Claude Code runs the hook before each matching tool call, writes the
 * event (JSON) to its stdin, and reads a permission decision from its
 * stdout when it exits 0. A hook that exits with another status, crashes
 * or is killed lets the call through (only 2 blocks), so this command
 * fails closed by construction:
 *
 *   - the answer starts as deny (the zero value) and only a well-formed
 *     ALLOW from the PDP, an approval seen through the long poll, or a
 *     fixed answer from the operator's mapping file changes it;
 *   - every error - arguments, mapping file, stdin, environment, network,
 *     HTTP status, an answer of the wrong shape, out of memory - is a deny
 *     whose reason names the problem (never the token), and the status is
 *     always 0;
 *   - SIGALRM at `timeout` seconds (and SIGTERM/SIGINT/SIGHUP) print a
 *     deny prepared in advance with write(2) and _exit(0), so a PDP that
 *     hangs still gets a deny before Claude Code's own hook timeout;
 *     while the real answer is printed those signals are blocked, so one
 *     answer is printed, whole.
 *
 * An ESCALATE is waited on with GET /v1/intents/{id}?wait=N polls until
 * escalate_wait seconds after the start: ALLOWED allows, BLOCKED or EXPIRED
 * denies, still pending answers on_escalate_timeout (deny, or ask).
 */
#include "cli.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_hook.h"
#include "cli_http.h"
#include "cli_show.h"
#include "ig_key.h"

#define CMD "hook"

static const char hook_usage[] =
    "usage: intentgate hook claude-code [--mappings FILE]\n"
    "\n"
    "Answer Claude Code's PreToolUse hook: read the event (JSON) on\n"
    "standard input, map the tool call to an intent, ask the PDP, and\n"
    "print the permission decision (allow, deny or ask) as JSON on\n"
    "standard output. An escalation is waited on (escalate_wait, " IG_STR(
        IG_HOOK_WAIT_DEFAULT) " s by\n"
                              "default) while a human decides. Any failure "
                              "prints a deny; the exit\n"
                              "status is always 0. See docs/claude-code.md.\n"
                              "Options:\n"
                              "  --mappings FILE  tool mappings and settings "
                              "(JSON)\n"
                              "Environment:\n"
                              "  INTENTGATE_URL            the PDP, e.g. "
                              "http://127.0.0.1:8700\n"
                              "  INTENTGATE_TOKEN          the agent's bearer "
                              "token\n"
                              "  INTENTGATE_HOOK_MAPPINGS  the mapping file "
                              "when --mappings is not\n"
                              "                            given\n";

struct hook_run {
    struct cli_hook_map *map;
    const struct cli_hook_settings *set;
    struct timespec start;
    struct cli_http *http;
    const json_t *sent;          /* the intent body posted */
    enum cli_hook_answer answer; /* zero: deny */
    char reason[IG_HOOK_REASON_MAX];
};

/* ---- the answer ---- */

/* The deny a signal prints: prepared before the alarm is armed. */
static char signal_text[IG_HOOK_OUTPUT_MAX];
static volatile sig_atomic_t signal_len;

static const char fallback_deny[] =
    "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
    "\"permissionDecision\":\"deny\",\"permissionDecisionReason\":"
    "\"intentgate: internal error; denied\"}}\n";

static void
on_signal(int sig)
{
    const char *p = signal_len > 0 ? signal_text : fallback_deny;
    size_t n = signal_len > 0 ? (size_t)signal_len : sizeof(fallback_deny) - 1;

    (void)sig;
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, p, n);

        if (w <= 0)
            break;
        p += w;
        n -= (size_t)w;
    }
    _exit(0);
}

/* The decision line for answer a with reason into out (IG_HOOK_OUTPUT_MAX
   bytes); 0, or -1 when it does not fit or memory runs out. The reason
   holds the PDP's and the event's text: control, bidi and invisible
   characters and bad UTF-8 are shown as \uXXXX (cli_text_safe), so what
   Claude Code displays is what it says. */
static int
render(enum cli_hook_answer a, const char *reason, char *out)
{
    static const char *const names[] = {"deny", "allow", "ask"};
    json_t *v = NULL;
    char *text = NULL;
    struct ig_buf b;
    size_t n;
    int rc = -1;

    ig_buf_init(&b, IG_HOOK_OUTPUT_MAX);
    if (cli_text_safe(&b, reason, strnlen(reason, IG_HOOK_REASON_MAX)) ==
            IG_OK &&
        b.data != NULL)
        v = json_pack("{s:{s:s, s:s, s:s}}", "hookSpecificOutput",
                      "hookEventName", "PreToolUse", "permissionDecision",
                      names[a], "permissionDecisionReason", b.data);
    if (v != NULL)
        text = json_dumps(v, JSON_COMPACT);
    if (text != NULL && strlen(text) + 2 <= IG_HOOK_OUTPUT_MAX) {
        n = strlen(text);
        memcpy(out, text, n);
        memcpy(out + n, "\n", 2);
        rc = 0;
    }
    free(text);
    json_decref(v);
    ig_buf_release(&b);
    return rc;
}

static void
block_signals(int how)
{
    sigset_t s;

    (void)sigemptyset(&s);
    (void)sigaddset(&s, SIGALRM);
    (void)sigaddset(&s, SIGTERM);
    (void)sigaddset(&s, SIGINT);
    (void)sigaddset(&s, SIGHUP);
    (void)sigprocmask(how, &s, NULL);
}

/* Deny after `seconds` (and on SIGTERM/SIGINT/SIGHUP) with a reason
   naming the limit (seconds from the start). */
static void
arm(int seconds, int limit)
{
    struct sigaction sa;
    char reason[160];

    block_signals(SIG_BLOCK);
    (void)alarm(0);
    (void)snprintf(reason, sizeof(reason),
                   "intentgate: no decision within the hook's time limit "
                   "(%d s), or the hook was stopped; denied",
                   limit);
    signal_len = 0;
    if (render(CLI_HOOK_DENY, reason, signal_text) == 0)
        signal_len = (sig_atomic_t)strlen(signal_text);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    (void)sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGALRM, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGHUP, &sa, NULL);
    (void)alarm((unsigned)(seconds > 0 ? seconds : 1));
    block_signals(SIG_UNBLOCK);
}

/* Print the run's answer, once, with the signals held off. */
static void
print_answer(const struct hook_run *r)
{
    char out[IG_HOOK_OUTPUT_MAX];
    const char *p = out;

    block_signals(SIG_BLOCK);
    (void)alarm(0);
    if (render(r->answer, r->reason, out) != 0)
        p = fallback_deny;
    (void)fputs(p, stdout);
    (void)fflush(stdout);
}

/* Deny with a reason naming the problem; also one line on stderr. */
static void fail(struct hook_run *r, const char *fmt, ...) IG_PRINTF(2, 3);

static void
fail(struct hook_run *r, const char *fmt, ...)
{
    char msg[IG_HOOK_REASON_MAX - 64], *p;
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    for (p = msg; *p != '\0'; p++) /* one line of text on stderr */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    r->answer = CLI_HOOK_DENY;
    (void)snprintf(r->reason, sizeof(r->reason), "intentgate: %s; denied", msg);
    cli_error(CMD, "%s", msg);
}

/* Set the answer and its reason. */
static void set_answer(struct hook_run *r, enum cli_hook_answer a,
                       const char *fmt, ...) IG_PRINTF(3, 4);

static void
set_answer(struct hook_run *r, enum cli_hook_answer a, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
    va_end(ap);
    r->answer = a;
}

/* ---- time ---- */

static double
elapsed(const struct hook_run *r)
{
    struct timespec now;

    (void)clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - r->start.tv_sec) +
           (double)(now.tv_nsec - r->start.tv_nsec) / 1e9;
}

/* ---- the PDP's answers ---- */

/* "CODE, CODE: message" of a decision (an object with reasons, message)
   into buf (n bytes); "" when it has neither. */
static void
why_text(const json_t *d, char *buf, size_t n)
{
    const json_t *reasons = json_object_get(d, "reasons"), *v;
    const char *msg = json_string_value(json_object_get(d, "message"));
    size_t i, used = 0;
    int w;

    buf[0] = '\0';
    json_array_foreach(reasons, i, v)
    {
        if (!json_is_string(v) || used >= n)
            continue;
        w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "",
                     json_string_value(v));
        used = w < 0 ? n : used + (size_t)w;
    }
    if (msg != NULL && msg[0] != '\0' && used < n)
        (void)snprintf(buf + used, n - used, "%s%s", used ? ": " : "", msg);
}

/* An id the PDP made, safe in a URL path: [A-Za-z0-9_-]{1,IG_ID_MAX}. */
static const char *
id_of(const json_t *v)
{
    const char *s = cli_hook_string(v);
    size_t i, n;

    if (s == NULL || (n = strlen(s)) == 0 || n > IG_ID_MAX)
        return NULL;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
            return NULL;
    return s;
}

/* The reasons and message of the intent's last decision. */
static void
last_why(const json_t *view, char *buf, size_t n)
{
    const json_t *ds = json_object_get(view, "decisions");

    why_text(json_array_get(ds, json_array_size(ds) - 1), buf, n);
}

/* No human decided in time: on_escalate_timeout. */
static void
wait_ran_out(struct hook_run *r, const char *iid, const char *aid,
             const char *why)
{
    if (r->set->on_escalate_timeout == CLI_HOOK_ASK)
        set_answer(r, CLI_HOOK_ASK,
                   "intentgate: the policy escalated this call (%s) and no "
                   "approver decided within %d s (approval %s, intent %s); "
                   "asking you instead",
                   why, r->set->escalate_wait, aid, iid);
    else
        set_answer(r, CLI_HOOK_DENY,
                   "intentgate: the policy escalated this call (%s) and no "
                   "approver decided within %d s (approval %s, intent %s); "
                   "denied",
                   why, r->set->escalate_wait, aid, iid);
}

/* One state seen while waiting: 1 when it settles the answer. */
static int
settle(struct hook_run *r, const json_t *view, const char *iid, const char *aid)
{
    const char *state = json_string_value(json_object_get(view, "state"));
    const char *id = id_of(json_object_get(view, "intent_id"));
    char why[512];

    if (state == NULL || id == NULL || strcmp(id, iid) != 0) {
        fail(r, "the PDP's answer about intent %s has no state", iid);
        return 1;
    }
    last_why(view, why, sizeof(why));
    if (strcmp(state, "PENDING_APPROVAL") == 0)
        return 0;
    if (strcmp(state, "ALLOWED") == 0)
        set_answer(r, CLI_HOOK_ALLOW,
                   "intentgate: allowed after human approval (approval %s, "
                   "intent %s)",
                   aid, iid);
    else if (strcmp(state, "BLOCKED") == 0)
        set_answer(r, CLI_HOOK_DENY,
                   "intentgate: denied after escalation: %s (approval %s, "
                   "intent %s)",
                   why, aid, iid);
    else if (strcmp(state, "EXPIRED") == 0)
        set_answer(r, CLI_HOOK_DENY,
                   "intentgate: the approval request expired (approval %s, "
                   "intent %s); denied",
                   aid, iid);
    else
        fail(r, "intent %s is in state %s, not one the hook expects", iid,
             state);
    return 1;
}

/* Long-poll the escalated intent until it settles or escalate_wait. */
static void
wait_for_human(struct hook_run *r, const char *iid, const char *aid,
               const char *why)
{
    struct cli_http_reply rep = {0, NULL};
    const struct timespec gap = {0, 200000000L};
    double left, t0;
    struct ig_err err;
    char path[160];
    long w;
    int n, done;

    for (;;) {
        left = (double)r->set->escalate_wait - elapsed(r);
        if (left < 0.25) {
            wait_ran_out(r, iid, aid, why);
            return;
        }
        w = left < IG_HOOK_POLL_MAX ? (long)left + (left > (double)(long)left)
                                    : IG_HOOK_POLL_MAX;
        n = snprintf(path, sizeof(path), "/v1/intents/%s?wait=%ld", iid, w);
        IG_ASSERT(n > 0 && (size_t)n < sizeof(path)); /* iid <= IG_ID_MAX */
        t0 = elapsed(r);
        if (cli_http_call(r->http, "GET", path, NULL, 0, &rep, &err) != IG_OK) {
            fail(r, "waiting for approval %s: %s", aid, err.msg);
            return;
        }
        done = 1;
        if (rep.status != 200)
            fail(r, "waiting for approval %s: the PDP answered HTTP %ld", aid,
                 rep.status);
        else
            done = settle(r, rep.body, iid, aid);
        cli_http_reply_release(&rep);
        if (done)
            return;
        if (elapsed(r) - t0 < 1) /* a vote short of quorum, or a bad PDP */
            (void)nanosleep(&gap, NULL);
    }
}

/* The answer to POST /v1/intents (201). */
static void
decide(struct hook_run *r, const json_t *a)
{
    const char *d = json_string_value(json_object_get(a, "decision"));
    const char *iid = id_of(json_object_get(a, "intent_id"));
    const char *aid =
        id_of(json_object_get(json_object_get(a, "approval"), "id"));
    const char *did = id_of(json_object_get(a, "decision_id"));
    const char *rev = cli_hook_string(json_object_get(a, "policy_revision"));
    const json_t *intent = json_object_get(a, "intent");
    char why[512];

    if (d == NULL || iid == NULL ||
        !json_equal(json_object_get(intent, "action"),
                    json_object_get(r->sent, "action")) ||
        !json_equal(json_object_get(intent, "resource"),
                    json_object_get(r->sent, "resource"))) {
        fail(r, "the PDP's answer is not a decision on this intent");
        return;
    }
    why_text(a, why, sizeof(why));
    if (strcmp(d, "ALLOW") == 0)
        set_answer(r, CLI_HOOK_ALLOW,
                   "intentgate: allowed by policy (intent %s, decision %s, "
                   "policy %.19s)",
                   iid, did != NULL ? did : "-", rev != NULL ? rev : "-");
    else if (strcmp(d, "BLOCK") == 0)
        set_answer(r, CLI_HOOK_DENY,
                   "intentgate: blocked by policy: %s (intent %s)",
                   why[0] ? why : "no reason given", iid);
    else if (strcmp(d, "ESCALATE") == 0 && aid != NULL)
        wait_for_human(r, iid, aid, why[0] ? why : "no reason given");
    else
        fail(r, "the PDP's answer holds no known decision");
}

/* Post the intent and turn the answer into r's answer. */
static void
ask_pdp(struct hook_run *r, const json_t *body)
{
    const char *url = getenv("INTENTGATE_URL");
    const char *token = getenv("INTENTGATE_TOKEN");
    struct cli_http_reply rep = {0, NULL};
    const char *code, *msg;
    struct ig_err err;

    if (url == NULL || url[0] == '\0' || token == NULL || token[0] == '\0') {
        fail(r, "%s is not set",
             url == NULL || url[0] == '\0' ? "INTENTGATE_URL"
                                           : "INTENTGATE_TOKEN");
        return;
    }
    if (strchr(url, '@') != NULL) {
        fail(r, "INTENTGATE_URL must not hold credentials (user@)");
        return;
    }
    if (ig_crypto_init() != IG_OK) {
        fail(r, "cannot initialize libsodium");
        return;
    }
    if (cli_http_new(url, &r->http, &err) != IG_OK) {
        fail(r, "INTENTGATE_URL: %s", err.msg);
        return;
    }
    if (cli_http_set_bearer(r->http, token) != IG_OK) {
        fail(r, "INTENTGATE_TOKEN is not a usable bearer token");
        return;
    }
    r->sent = body;
    if (cli_http_call_json(r->http, "POST", "/v1/intents", body, &rep, &err) !=
        IG_OK) {
        fail(r, "asking the PDP: %s", err.msg);
        return;
    }
    if (rep.status != 201) {
        code = cli_http_error_code(rep.body, &msg);
        fail(r, "the PDP refused the intent: HTTP %ld %s%s%s", rep.status,
             code != NULL ? code : "", code != NULL ? ": " : "", msg);
    } else if (!json_is_object(rep.body)) {
        fail(r, "the PDP's answer is not a JSON object");
    } else {
        decide(r, rep.body);
    }
    cli_http_reply_release(&rep);
}

/* ---- the command ---- */

/* The mapping file's path from the arguments or the environment; 0, or
   -1 after fail(). *path NULL: none. */
static int
parse_args(struct hook_run *r, int argc, char **argv, const char **path)
{
    int i;

    *path = NULL;
    if (argc < 2 || strcmp(argv[1], "claude-code") != 0) {
        fail(r, "usage: intentgate hook claude-code [--mappings FILE]");
        return -1;
    }
    for (i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--mappings") == 0 && i + 1 < argc && !*path) {
            *path = argv[++i];
        } else if (strncmp(argv[i], "--mappings=", 11) == 0 && !*path) {
            *path = argv[i] + 11;
        } else {
            fail(r, "unexpected argument %s (see intentgate hook --help)",
                 argv[i]);
            return -1;
        }
    }
    if (*path == NULL && getenv("INTENTGATE_HOOK_MAPPINGS") != NULL &&
        getenv("INTENTGATE_HOOK_MAPPINGS")[0] != '\0')
        *path = getenv("INTENTGATE_HOOK_MAPPINGS");
    return 0;
}

/* Read and check the mapping file (or take the defaults). */
static int
load_map(struct hook_run *r, const char *path)
{
    struct ig_buf b;
    struct ig_err err;
    enum ig_status st = IG_OK;

    ig_buf_init(&b, CLI_HOOK_MAPPINGS_MAX);
    if (path != NULL && strcmp(path, "-") == 0)
        st = ig_err_set(&err, IG_ERR_INVALID, "stdin is the hook's input");
    if (st == IG_OK && path != NULL)
        st = cli_read_input(path, &b, &err);
    if (st == IG_OK)
        st = cli_hook_map_load(path != NULL ? (b.data ? b.data : "") : NULL,
                               b.len, &r->map, &err);
    ig_buf_release(&b);
    if (st != IG_OK) {
        fail(r, "the mapping file %s: %s", path != NULL ? path : "-", err.msg);
        return -1;
    }
    r->set = cli_hook_map_settings(r->map);
    return 0;
}

/* Read the event, map it, and answer it. */
static void
run(struct hook_run *r)
{
    struct cli_hook_mapped m = {NULL, CLI_HOOK_DENY, ""};
    json_t *event = NULL;
    struct ig_err err;
    struct ig_buf in;

    ig_buf_init(&in, CLI_HOOK_INPUT_MAX);
    if (cli_read_input(NULL, &in, &err) != IG_OK) {
        fail(r, "the hook input: %s", err.msg);
    } else if (in.len == 0) {
        fail(r, "the hook input is empty");
    } else if (ig_json_parse(in.data, in.len, &event, &err) != IG_OK) {
        fail(r, "the hook input is not valid JSON: %s (line %d, column %d)",
             err.msg, err.line, err.column);
    } else if (cli_hook_map_event(r->map, event, &m, &err) != IG_OK) {
        fail(r, "cannot map the tool call: %s", err.msg);
    } else if (m.body == NULL) {
        set_answer(r, m.fixed, "intentgate: %s; %s (the PDP was not asked)",
                   m.why,
                   m.fixed == CLI_HOOK_ALLOW ? "allowed"
                   : m.fixed == CLI_HOOK_ASK ? "asking you"
                                             : "denied");
    } else {
        ask_pdp(r, m.body);
    }
    cli_hook_mapped_release(&m);
    json_decref(event);
    ig_buf_release(&in);
}

int
cli_hook(int argc, char **argv)
{
    struct hook_run r;
    const char *path;
    double t;

    memset(&r, 0, sizeof(r));
    (void)clock_gettime(CLOCK_MONOTONIC, &r.start);
    (void)signal(SIGPIPE, SIG_IGN);
    arm(CLI_HOOK_WAIT_DEFAULT + CLI_HOOK_TIMEOUT_SLACK,
        CLI_HOOK_WAIT_DEFAULT + CLI_HOOK_TIMEOUT_SLACK);
    (void)snprintf(r.reason, sizeof(r.reason), "intentgate: no decision");
    if (cli_wants_help(argc, argv)) {
        block_signals(SIG_BLOCK);
        (void)alarm(0);
        (void)fputs(hook_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (parse_args(&r, argc, argv, &path) == 0 && load_map(&r, path) == 0) {
        t = (double)r.set->timeout - elapsed(&r);
        arm(t < 1 ? 1 : (int)t, r.set->timeout);
        run(&r);
    }
    print_answer(&r);
    cli_http_free(r.http);
    cli_hook_map_free(r.map);
    return CLI_EXIT_OK;
}
