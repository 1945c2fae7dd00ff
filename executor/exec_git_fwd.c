/*
 * exec_git_fwd.c - the git gateway worker's common steps (see
 * exec_git_int.h): refusing as git shows it, spending the grant,
 * spooling the outcome, and forwarding to the upstream with the answer
 * streamed back. Below exec_git_push.c and exec_git_run.c.
 */
#include "exec_git_int.h"

#include <stdio.h>
#include <string.h>

#include "exec_git_pkt.h"
#include "ig_log.h"

#define TEXT "text/plain; charset=utf-8"

/* A refusal as git shows it best for this request: an ERR pkt-line
   (after the service header on info/refs), printable ASCII only. */
void
exec_git_refuse(struct exec_git_req *g, const char *why)
{
    char type[80], msg[EXEC_GIT_REASON_MAX + 1];
    char line[EXEC_GIT_REASON_MAX + 8];
    enum ig_status st;
    struct ig_buf b;
    size_t i;
    int n;

    atomic_fetch_add(&g->x->metrics.refused, 1);
    exec_git_log_refusal(g, why, NULL);
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

/* Spool the outcome now; exec_git.c sends it after the answer. */
void
exec_git_record(struct exec_git_req *g, const char *intent_id,
                enum exec_outcome o, json_t *detail)
{
    exec_report_spool(g->x, intent_id, o, detail, &g->rep);
    g->has_report = 1;
}

/* Write the run record and spend the grant; 0, or -1 with why set. */
int
exec_git_redeem(struct exec_git_req *g, const char *intent_id, uint64_t *ticket,
                char *why, size_t cap)
{
    return exec_gw_redeem(g->x, g->grant, intent_id, ticket, why, cap, &g->rep,
                          &g->has_report);
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
    /* The type as git sends it, or with parameters (";...") after it. */
    if (status != 200 || strncmp(type, want, strlen(want)) != 0 ||
        (type[strlen(want)] != '\0' && type[strlen(want)] != ';' &&
         type[strlen(want)] != ' '))
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
int
exec_git_forward(struct exec_git_req *g, struct exec_git_up *up)
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
