/*
 * exec_git_run.c - the git gateway's worker: everything between a whole
 * request and its answer (see exec_git.h).
 *
 * In order: the intent id is read from the grant's payload (unverified:
 * only to ask the PDP for the binding); the PDP gives the recorded
 * binding; the grant is verified offline against it (exec_verify.c:
 * signature, audience, validity, intent, action, resource); the action
 * must fit the service (git.push for receive-pack, git.fetch for
 * upload-pack) and the resource must be this alias. Then:
 *   - info/refs: a push grant is not spent (the push itself decides); a
 *     fetch grant is redeemed on its first request (a fetch session);
 *   - receive-pack: the commands are parsed and compared with the intent's
 *     params.refs and params.delete; a mismatch is refused as git shows it
 *     (report-status ng lines), nothing sent upstream, the grant unspent;
 *     a match redeems, forwards and reports the outcome from the
 *     upstream's ok/ng lines;
 *   - upload-pack: redeemed on first use, then forwarded.
 * A refusal before the commands are known is an ERR pkt-line, which git
 * prints as "fatal: remote error: intentgate: ...".
 */
#include "exec_git_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_git_ff.h"
#include "exec_git_pkt.h"
#include "exec_git_up.h"
#include "exec_verify.h"
#include "ig_json.h"
#include "ig_log.h"
#include "ig_paseto.h"
#include "ig_time.h"

#define TEXT "text/plain; charset=utf-8"

/* Fetch sessions: fetch grants already redeemed here, until they expire.
   Process-wide: a grant belongs to one executor (its audience). */
#define SESSIONS 1024
static pthread_mutex_t sessions_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char id[IG_INTENT_ID_MAX + 1];
    int64_t until;
} sessions[SESSIONS];

/* 1 when intent_id has a live fetch session; else 0. */
static int
session_live(const char *intent_id, int64_t now)
{
    int i, live = 0;

    pthread_mutex_lock(&sessions_mu);
    for (i = 0; i < SESSIONS && !live; i++)
        live =
            sessions[i].until > now && strcmp(sessions[i].id, intent_id) == 0;
    pthread_mutex_unlock(&sessions_mu);
    return live;
}

static void
session_add(const char *intent_id, int64_t until, int64_t now)
{
    int i, slot = 0;

    pthread_mutex_lock(&sessions_mu);
    for (i = 0; i < SESSIONS; i++) {
        if (sessions[i].until <= now) {
            slot = i;
            break;
        }
        if (sessions[i].until < sessions[slot].until)
            slot = i;
    }
    (void)snprintf(sessions[slot].id, sizeof(sessions[slot].id), "%s",
                   intent_id);
    sessions[slot].until = until;
    pthread_mutex_unlock(&sessions_mu);
}

/* A refusal as git shows it best for this request: an ERR pkt-line
   (after the service header on info/refs), printable ASCII only. */
static void
refuse(struct exec_git_req *g, const char *why)
{
    char type[80], msg[EXEC_GIT_REASON_MAX + 1];
    char line[EXEC_GIT_REASON_MAX + 8];
    enum ig_status st;
    struct ig_buf b;
    size_t i;
    int n;

    atomic_fetch_add(&g->x->metrics.refused, 1);
    n = snprintf(msg, sizeof(msg), "intentgate: %s", why);
    for (i = 0; n > 0 && i < strlen(msg); i++)
        if ((unsigned char)msg[i] < 0x20 || (unsigned char)msg[i] > 0x7e)
            msg[i] = '?';
    ig_buf_init(&b, 4096);
    (void)snprintf(type, sizeof(type), "application/x-%s-%s",
                   exec_git_service_name(g->svc),
                   g->route == EXEC_GIT_REFS ? "advertisement" : "result");
    if (g->route == EXEC_GIT_REFS) {
        st = exec_git_adv_error(exec_git_service_name(g->svc), msg, &b);
    } else {
        n = snprintf(line, sizeof(line), "ERR %s\n", msg);
        st = n > 0 && (size_t)n < sizeof(line)
                 ? exec_git_pkt_add(&b, line, (size_t)n)
                 : IG_ERR_LIMIT;
    }
    if (st == IG_OK)
        exec_git_answer(g, 200, type, b.data, b.len);
    else
        exec_git_answer_text(g, 500, "intentgate: internal error\n");
    ig_buf_release(&b);
}

/* Did the push's first command ask for side-band-64k? (Read from the
   raw pkt-lines: used when the commands cannot be parsed as a whole.) */
static int
head_side_band(const unsigned char *p, size_t len)
{
    size_t off = 0, n, i;
    const unsigned char *nul;
    char hex[5];

    while (off + 4 <= len) {
        memcpy(hex, p + off, 4);
        hex[4] = '\0';
        n = (size_t)strtoul(hex, NULL, 16);
        if (n < 4 || off + n > len)
            return 0;
        nul = memchr(p + off + 4, '\0', n - 4);
        if (nul != NULL) {
            for (i = (size_t)(nul - p) + 1; i + 13 <= off + n; i++)
                if (memcmp(p + i, "side-band-64k", 13) == 0 &&
                    (p[i - 1] == ' ' || p[i - 1] == '\0'))
                    return 1;
            return 0;
        }
        off += n;
    }
    return 0;
}

/* A push refused before its commands could be read: an error on the
   side-band's error channel (git prints "remote error: ...") when the
   push asked for side-band-64k, else an ERR pkt-line. */
static void
refuse_unparsed(struct exec_git_req *g, const unsigned char *head, size_t len,
                const char *why)
{
    char msg[EXEC_GIT_REASON_MAX + 16];
    struct ig_buf b;
    size_t i;
    int n;

    if (head == NULL || !head_side_band(head, len)) {
        refuse(g, why);
        return;
    }
    atomic_fetch_add(&g->x->metrics.refused, 1);
    n = snprintf(msg, sizeof(msg), "\003intentgate: %.900s\n", why);
    for (i = 1; n > 0 && i + 1 < (size_t)n; i++)
        if ((unsigned char)msg[i] < 0x20 || (unsigned char)msg[i] > 0x7e)
            msg[i] = '?';
    ig_buf_init(&b, 4096);
    if (n > 0 && (size_t)n < sizeof(msg) &&
        exec_git_pkt_add(&b, msg, (size_t)n) == IG_OK &&
        exec_git_pkt_flush(&b) == IG_OK)
        exec_git_answer(g, 200, "application/x-git-receive-pack-result", b.data,
                        b.len);
    else
        refuse(g, why);
    ig_buf_release(&b);
}

/* The intent id the grant claims (unverified). 0, or -1 (refused). */
static int
grant_intent_id(const char *grant, char *id, size_t cap)
{
    struct ig_buf p;
    json_t *v = NULL;
    const char *s;
    int rc = -1;

    ig_buf_init(&p, IG_TOKEN_MAX_BYTES);
    if (ig_paseto_peek_payload(grant, strlen(grant), &p, NULL) == IG_OK &&
        ig_json_parse(p.data, p.len, &v, NULL) == IG_OK &&
        (s = json_string_value(json_object_get(v, "intent_id"))) != NULL &&
        strlen(s) < cap) {
        (void)snprintf(id, cap, "%s", s);
        rc = 0;
    }
    json_decref(v);
    ig_buf_release(&p);
    return rc;
}

/* Binding and verified claims, or a refusal (answered). */
static int
check_grant(struct exec_git_req *g, json_t **binding, json_t **claims)
{
    char id[IG_INTENT_ID_MAX + 1], hash[IG_HASH_STRLEN + 1], why[300];
    const char *want = g->svc == EXEC_GIT_RECEIVE ? "git.push" : "git.fetch";
    struct ig_err err;
    enum exec_refusal r;
    const char *action, *res;

    ig_err_clear(&err);
    if (grant_intent_id(g->grant, id, sizeof(id)) != 0) {
        refuse(g, "the grant is malformed");
        return -1;
    }
    if (exec_pdp_intent(g->x->pdp, id, binding, &err) != IG_OK) {
        (void)snprintf(why, sizeof(why),
                       "the grant's intent cannot be read "
                       "from the PDP (%.200s)",
                       err.msg);
        refuse(g, why);
        return -1;
    }
    r = exec_verify_grant(g->x->keys, *binding, g->grant, g->x->cfg->id,
                          ig_time_now(), claims, hash, &err);
    if (r != EXEC_ACCEPT) {
        (void)snprintf(why, sizeof(why), "grant refused: %s (%.200s)",
                       exec_refusal_code(r), err.msg);
        refuse(g, why);
        return -1;
    }
    action = json_string_value(json_object_get(*binding, "action"));
    res = json_string_value(json_object_get(*binding, "resource"));
    if (action == NULL || strcmp(action, want) != 0) {
        (void)snprintf(why, sizeof(why),
                       "this grant is for %.64s; %s needs "
                       "a %s grant",
                       action != NULL ? action : "?",
                       exec_git_service_name(g->svc), want);
        refuse(g, why);
        return -1;
    }
    if (res == NULL || strcmp(res, g->repo->alias) != 0) {
        refuse(g, "this grant is for another repository");
        return -1;
    }
    return 0;
}

/* Write the run record and spend the grant; 0, or -1 with why set. */
static int
redeem(struct exec_git_req *g, const char *intent_id, uint64_t *ticket,
       char *why, size_t cap)
{
    struct exec_ctx *x = g->x;
    struct ig_err err;
    enum ig_status st;

    ig_err_clear(&err);
    st = exec_spool_run_write(x->spool, intent_id, ticket, &err);
    if (st != IG_OK) {
        (void)snprintf(why, cap, "%s",
                       st == IG_ERR_EXISTS
                           ? "this intent is already being executed here"
                           : "the executor cannot record executions now; "
                             "the grant was not spent");
        return -1;
    }
    st = exec_pdp_redeem(x->pdp, g->grant, intent_id, NULL, &err);
    if (st != IG_OK) {
        exec_spool_run_cancel(x->spool, intent_id);
        (void)snprintf(why, cap, "%s",
                       st == IG_ERR_EXISTS    ? "grant already used"
                       : st == IG_ERR_EXPIRED ? "grant expired"
                       : st == IG_ERR_IO      ? "the PDP cannot be reached; "
                                                "the grant was not spent"
                                              : "grant refused by the PDP");
        return -1;
    }
    if (exec_spool_run_durable(x->spool, *ticket, &err) != IG_OK) {
        (void)snprintf(why, cap, "the executor cannot record executions now");
        g->has_report = 1;
        g->rep.outcome =
            exec_outcome_name(EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED);
        return -1;
    }
    return 0;
}

/* Spool the outcome now; exec_git.c sends it after the answer. */
static void
record(struct exec_git_req *g, const char *intent_id, enum exec_outcome o,
       json_t *detail)
{
    struct ig_err err;

    memset(&g->rep, 0, sizeof(g->rep));
    (void)snprintf(g->rep.intent_id, sizeof(g->rep.intent_id), "%s", intent_id);
    g->rep.outcome = exec_outcome_name(o);
    g->rep.detail = detail; /* steals */
    ig_err_clear(&err);
    g->rep.spooled =
        exec_spool_outcome_write(g->x->spool, intent_id, g->rep.outcome, detail,
                                 &g->rep.ticket, &err) == IG_OK;
    g->has_report = 1;
    atomic_fetch_add(&g->x->metrics.executions[o], 1);
}

/* The answer's status and type are known (its first byte arrived): a
   200 of the expected git type streams to the agent as it comes. */
static void
on_start(void *ctx, long status, const char *type)
{
    struct exec_git_req *g = ctx;
    char want[80];

    (void)snprintf(want, sizeof(want), "application/x-%s-%s",
                   exec_git_service_name(g->svc),
                   g->route == EXEC_GIT_REFS ? "advertisement" : "result");
    if (status != 200 || strcmp(type, want) != 0)
        return;
    g->status = 200;
    (void)snprintf(g->content_type, sizeof(g->content_type), "%s", want);
    g->result = EXEC_GIT_FORWARDED;
    exec_git_stream_start(g);
}

static void
on_progress(void *ctx, uint64_t safe_len)
{
    exec_git_stream_more(ctx, safe_len, 0);
}

/* An answer that did not stream, as the agent may see it: one line naming
   the status, never the upstream's own text. */
static void
relay_error(struct exec_git_req *g, const struct exec_git_up *up)
{
    char msg[160];

    g->result = EXEC_GIT_FAILED;
    ig_log("warn", "git.upstream_status",
           json_pack("{s:s, s:I}", "repo", g->repo->alias, "status",
                     (json_int_t)up->status));
    (void)snprintf(msg, sizeof(msg),
                   "intentgate: the upstream repository answered HTTP %ld%s\n",
                   up->status,
                   up->status == 200 ? " without smart-HTTP git content" : "");
    exec_git_answer(g, 502, TEXT, msg, strlen(msg));
}

/* The call failed: cut a stream already under way, else answer. */
static void
call_failed(struct exec_git_req *g, const struct exec_git_up *up,
            const struct ig_err *err)
{
    g->result = EXEC_GIT_FAILED;
    if (up->reflected) {
        atomic_fetch_add(&g->x->metrics.credential_reflected, 1);
        ig_log("error", "git.credential_reflected",
               json_pack("{s:s}", "repo", g->repo->alias));
    } else {
        ig_log(
            "error", "git.upstream",
            json_pack("{s:s, s:s}", "repo", g->repo->alias, "error", err->msg));
    }
    if (g->streaming)
        exec_git_stream_more(g, 0, 1);
    else if (up->reflected)
        exec_git_answer_text(g, 502,
                             "intentgate: the upstream's answer held the "
                             "repository credential; withheld\n");
    else
        exec_git_answer_text(g, 502,
                             "intentgate: the upstream repository failed to "
                             "answer\n");
}

/* Forward the request upstream; the answer goes to g. *up says what
   came back. -1 when nothing usable came back (answered). */
static int
forward(struct exec_git_req *g, struct exec_git_up *up)
{
    const char *slash;
    char url[IG_EXEC_URL_MAX], ctype[80];
    struct exec_git_call call;
    struct ig_err err;
    int n;

    slash = g->repo->url[strlen(g->repo->url) - 1] == '/' ? "" : "/";
    if (g->route == EXEC_GIT_REFS)
        n = snprintf(url, sizeof(url), "%s%sinfo/refs?service=%s", g->repo->url,
                     slash, exec_git_service_name(g->svc));
    else
        n = snprintf(url, sizeof(url), "%s%s%s", g->repo->url, slash,
                     exec_git_service_name(g->svc));
    (void)snprintf(ctype, sizeof(ctype), "application/x-%s-request",
                   exec_git_service_name(g->svc));
    g->reply_fd = exec_git_tmpfile(g->x);
    if (n < 0 || (size_t)n >= sizeof(url) || g->reply_fd < 0) {
        exec_git_answer_text(g, 503, "intentgate: cannot spool\n");
        return -1;
    }
    memset(&call, 0, sizeof(call));
    call.repo = g->repo;
    call.secrets = g->x->secrets;
    call.url = url;
    call.content_type = g->route == EXEC_GIT_RPC ? ctype : NULL;
    call.gzip = g->gzip;
    call.git_protocol = g->git_protocol;
    call.body_fd = g->route == EXEC_GIT_RPC ? g->body_fd : -1;
    call.body_len = g->body_len;
    call.reply_fd = g->reply_fd;
    call.on_start = on_start;
    call.on_progress = on_progress;
    call.ctx = g;
    ig_err_clear(&err);
    if (exec_git_up_call(&call, up, &err) != IG_OK) {
        call_failed(g, up, &err);
        return -1;
    }
    if (!g->streaming) {
        relay_error(g, up);
        return -1;
    }
    exec_git_stream_more(g, up->reply_len, 0); /* all of it, now */
    return 0;
}

/* The first bytes of the body file (at most EXEC_GIT_HEAD_MAX). */
static int
read_head(struct exec_git_req *g, unsigned char **buf, size_t *len)
{
    size_t want = g->body_len < EXEC_GIT_HEAD_MAX ? (size_t)g->body_len
                                                  : EXEC_GIT_HEAD_MAX;
    size_t got = 0;
    ssize_t r;

    *len = 0;
    *buf = malloc(want + 1);
    if (*buf == NULL)
        return -1;
    while (got < want) {
        r = pread(g->body_fd, *buf + got, want - got, (off_t)got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    *len = got;
    return 0;
}

/* The refusal of a whole push, as report-status ng lines. */
static void
refuse_push(struct exec_git_req *g, const struct exec_git_push *p,
            const char **reasons)
{
    struct ig_buf b;

    atomic_fetch_add(&g->x->metrics.refused, 1);
    ig_buf_init(&b, 4 * 1024 * 1024);
    if (exec_git_report_refusal(p, reasons, &b) == IG_OK)
        exec_git_answer(g, 200, "application/x-git-receive-pack-result", b.data,
                        b.len);
    else
        refuse(g, "the push was refused");
    ig_buf_release(&b);
}

/* The outcome of a forwarded push, from the upstream's report. */
static void
push_outcome(struct exec_git_req *g, const char *id,
             const struct exec_git_push *p, const struct exec_git_up *up,
             int relayed)
{
    unsigned char *buf = NULL;
    json_t *detail = NULL;
    int all_ok = 0;
    ssize_t r = -1;

    if (relayed && up->reply_len <= 4 * 1024 * 1024 &&
        (buf = malloc((size_t)up->reply_len + 1)) != NULL)
        r = pread(g->reply_fd, buf, (size_t)up->reply_len, 0);
    if (r >= 0 && (uint64_t)r == up->reply_len &&
        exec_git_report_parse(buf, (size_t)r, p->side_band_64k, &detail,
                              &all_ok, NULL) == IG_OK) {
        record(g, id,
               all_ok ? EXEC_OUTCOME_COMPLETED
                      : EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH,
               detail);
    } else {
        record(g, id,
               up->sent ? EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH
                        : EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED,
               json_pack("{s:s, s:I}", "error",
                         "no report-status from the upstream", "status",
                         (json_int_t)up->status));
    }
    free(buf);
}

/* fast_forward_only: 0 when every update is a fast-forward, else -1 and
   the push refused (the updates with the reason, the rest as a whole). */
static int
fast_forward(struct exec_git_req *g, const struct exec_git_push *p,
             const char **reasons)
{
    struct exec_git_ff_in in = {g->repo, g->x->secrets, g->x->cfg->spool_dir,
                                p,       g->body_fd,    g->body_len};
    const char *why = exec_git_ff_check(&in);
    size_t i;

    if (why == NULL)
        return 0;
    for (i = 0; i < p->ncmds; i++)
        reasons[i] = p->cmds[i].kind == EXEC_GIT_UPDATE ? why : NULL;
    refuse_push(g, p, reasons);
    return -1;
}

static void
push(struct exec_git_req *g, const json_t *binding)
{
    const char *id = json_string_value(json_object_get(binding, "intent_id"));
    const json_t *params = json_object_get(binding, "params");
    struct exec_git_push p;
    struct exec_git_up up;
    unsigned char *head = NULL;
    const char **reasons = NULL;
    char why[200];
    uint64_t ticket = 0;
    struct ig_err err;
    size_t len = 0;
    int relayed;

    memset(&p, 0, sizeof(p));
    ig_err_clear(&err);
    if (g->body_fd < 0 || read_head(g, &head, &len) != 0 ||
        exec_git_push_parse(head, len, len == g->body_len, &p, &err) != IG_OK) {
        (void)snprintf(why, sizeof(why), "%.180s",
                       g->body_fd < 0 ? "empty push body" : err.msg);
        refuse_unparsed(g, head, len, why);
        goto out;
    }
    if (p.probe) { /* git's probe before a large push: nothing to do */
        exec_git_answer(g, 200, "application/x-git-receive-pack-result", "", 0);
        goto out;
    }
    reasons = calloc(p.ncmds + 1, sizeof(*reasons));
    if (reasons == NULL) {
        refuse(g, "out of memory");
        goto out;
    }
    if (exec_git_push_check(&p, json_object_get(params, "refs"),
                            json_object_get(params, "delete"), reasons) > 0) {
        refuse_push(g, &p, reasons);
        goto out;
    }
    if (g->repo->fast_forward_only && fast_forward(g, &p, reasons) != 0)
        goto out;
    if (redeem(g, id, &ticket, why + 12, sizeof(why) - 12) != 0) {
        memcpy(why, "intentgate: ", 12);
        for (len = 0; len < p.ncmds; len++)
            reasons[len] = why;
        refuse_push(g, &p, reasons);
        if (g->has_report)
            record(g, id, EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED,
                   json_pack("{s:s}", "error", why + 12));
        goto out;
    }
    relayed = forward(g, &up) == 0;
    push_outcome(g, id, &p, &up, relayed);
out:
    free(reasons);
    free(head);
    exec_git_push_release(&p);
}

/* A fetch: redeemed on the first request, then a session. */
static void
fetch(struct exec_git_req *g, const json_t *binding, const json_t *claims)
{
    const char *id = json_string_value(json_object_get(binding, "intent_id"));
    int64_t now = ig_time_now(), until = 0;
    struct exec_git_up up;
    uint64_t ticket = 0;
    const char *exp;
    char why[200];
    int first = 0;

    memset(&up, 0, sizeof(up));
    if (!session_live(id, now)) {
        if (redeem(g, id, &ticket, why, sizeof(why)) != 0) {
            refuse(g, why);
            return;
        }
        exp = json_string_value(json_object_get(claims, "exp"));
        if (exp == NULL || ig_time_parse(exp, strlen(exp), &until) != IG_OK)
            until = now;
        session_add(id, until, now);
        first = 1;
    }
    if (forward(g, &up) != 0 && !first)
        return;
    if (first)
        record(g, id,
               g->status == 200 ? EXEC_OUTCOME_COMPLETED
               : up.sent        ? EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH
                                : EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED,
               json_pack("{s:s, s:I}", "service", exec_git_service_name(g->svc),
                         "status", (json_int_t)up.status));
}

/* A push whose body is over the cap: every command refused, from the
   kept start of the body; the grant is not looked at. */
static void
push_too_large(struct exec_git_req *g)
{
    struct exec_git_push p;
    unsigned char *head = NULL;
    const char **reasons = NULL;
    char why[160];
    size_t len = 0, i;

    memset(&p, 0, sizeof(p));
    (void)snprintf(why, sizeof(why),
                   "intentgate: the push is over this repository's cap of "
                   "%.0f bytes",
                   g->repo->max_push_bytes);
    if (g->body_fd >= 0 && read_head(g, &head, &len) == 0 &&
        exec_git_push_parse(head, len, 0, &p, NULL) == IG_OK && p.ncmds > 0 &&
        (reasons = calloc(p.ncmds, sizeof(*reasons))) != NULL) {
        for (i = 0; i < p.ncmds; i++)
            reasons[i] = why;
        refuse_push(g, &p, reasons);
    } else {
        refuse_unparsed(g, head, len, why + 12);
    }
    free(reasons);
    free(head);
    exec_git_push_release(&p);
}

void
exec_git_work(struct exec_git_req *g)
{
    json_t *binding = NULL, *claims = NULL;
    struct exec_git_up up;

    if (g->too_large) {
        push_too_large(g);
        return;
    }
    if (check_grant(g, &binding, &claims) != 0)
        goto out;
    if (g->svc == EXEC_GIT_UPLOAD)
        fetch(g, binding, claims);
    else if (g->route == EXEC_GIT_REFS)
        (void)forward(g, &up); /* a push grant is spent by the push */
    else
        push(g, binding);
out:
    json_decref(binding);
    json_decref(claims);
}
