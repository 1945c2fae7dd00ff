/*
 * exec_git_push.c - the git gateway's push (POST git-receive-pack): the
 * commands read from the start of the body and compared with the intent
 * (exec_git_pkt.c), the optional fast-forward check (exec_git_ff.c), then
 * the grant spent, the push forwarded and its outcome read from the
 * upstream's report. A mismatch is refused with git's ng lines, nothing
 * sent upstream and the grant unspent.
 */
#include "exec_git_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_git_ff.h"
#include "exec_git_pkt.h"

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

    if (head == NULL || !exec_git_asks_side_band(head, len)) {
        exec_git_refuse(g, why);
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
        exec_git_refuse(g, why);
    ig_buf_release(&b);
}

/* The first bytes of the body file (at most EXEC_GIT_HEAD_MAX). */
static int
exec_git_read_head(struct exec_git_req *g, unsigned char **buf, size_t *len)
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
    size_t i;

    atomic_fetch_add(&g->x->metrics.refused, 1);
    for (i = 0; i < p->ncmds && reasons[i] == NULL; i++)
        ;
    if (i < p->ncmds)
        exec_git_log_refusal(g, reasons[i], p->cmds[i].ref);
    ig_buf_init(&b, 4 * 1024 * 1024);
    if (exec_git_report_refusal(p, reasons, &b) == IG_OK)
        exec_git_answer(g, 200, "application/x-git-receive-pack-result", b.data,
                        b.len);
    else
        exec_git_refuse(g, "the push was refused");
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
        exec_git_record(g, id,
                        all_ok ? EXEC_OUTCOME_COMPLETED
                               : EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH,
                        detail);
    } else {
        exec_git_record(g, id,
                        up->sent ? EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH
                                 : EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED,
                        json_pack("{s:s, s:I}", "error",
                                  "no report-status from the upstream",
                                  "status", (json_int_t)up->status));
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

void
exec_git_push_run(struct exec_git_req *g, const json_t *binding)
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
    if (g->body_fd < 0 || exec_git_read_head(g, &head, &len) != 0 ||
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
        exec_git_refuse(g, "out of memory");
        goto out;
    }
    if (exec_git_push_check(&p, json_object_get(params, "refs"),
                            json_object_get(params, "delete"), reasons) > 0) {
        refuse_push(g, &p, reasons);
        goto out;
    }
    if (g->repo->fast_forward_only && fast_forward(g, &p, reasons) != 0)
        goto out;
    if (exec_git_redeem(g, id, &ticket, why + 12, sizeof(why) - 12) != 0) {
        memcpy(why, "intentgate: ", 12);
        for (len = 0; len < p.ncmds; len++)
            reasons[len] = why;
        refuse_push(g, &p, reasons);
        goto out;
    }
    relayed = exec_git_forward(g, &up) == 0;
    push_outcome(g, id, &p, &up, relayed);
out:
    free(reasons);
    free(head);
    exec_git_push_release(&p);
}

/* A push whose body is over the cap: every command refused, from the
   kept start of the body; the grant is not looked at. */
void
exec_git_push_too_large(struct exec_git_req *g)
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
    if (g->body_fd >= 0 && exec_git_read_head(g, &head, &len) == 0 &&
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
