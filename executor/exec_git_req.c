/*
 * exec_git_req.c - what both sides of a git gateway request use (see
 * exec_git_int.h): the answer's setters, the temporary files, waking the
 * suspended connection. Calls neither exec_git.c nor exec_git_run.c.
 */
#include "exec_git_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_log.h"

const char *
exec_git_service_name(enum exec_git_service s)
{
    return s == EXEC_GIT_RECEIVE ? "git-receive-pack" : "git-upload-pack";
}

int
exec_git_tmpfile(const struct exec_ctx *x)
{
    const char *dir = x->cfg->spool_dir;
    char path[4096];
    int fd, n;

#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    n = snprintf(path, sizeof(path), "%s/.git-XXXXXX", dir);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkstemp(path);
    if (fd >= 0)
        (void)unlink(path);
    return fd;
}

void
exec_git_answer(struct exec_git_req *g, unsigned int status, const char *type,
                const char *text, size_t len)
{
    g->status = status;
    (void)snprintf(g->content_type, sizeof(g->content_type), "%s", type);
    ig_buf_reset(&g->reply_mem);
    if (ig_buf_add(&g->reply_mem, text, len) != IG_OK)
        g->status = 500;
}

void
exec_git_answer_text(struct exec_git_req *g, unsigned int status,
                     const char *text)
{
    exec_git_answer(g, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* Resume the connection if we parked it. Caller holds mu. */
void
exec_git_wake_locked(struct exec_git_req *g)
{
    if (g->parked) {
        g->parked = 0;
        MHD_resume_connection(g->conn);
    }
}

void
exec_git_stream_start(struct exec_git_req *g)
{
    pthread_mutex_lock(&g->mu);
    g->streaming = 1;
    exec_git_wake_locked(g);
    pthread_mutex_unlock(&g->mu);
}

void
exec_git_stream_more(struct exec_git_req *g, uint64_t safe_len, int failed)
{
    pthread_mutex_lock(&g->mu);
    if (safe_len > g->safe_len)
        g->safe_len = safe_len;
    g->stream_failed |= failed;
    /* A wake-up per 256 KiB, not per write: the end wakes it anyway. */
    if (failed || g->safe_len - g->woken >= 256 * 1024) {
        g->woken = g->safe_len;
        exec_git_wake_locked(g);
    }
    pthread_mutex_unlock(&g->mu);
}

void
exec_git_log_refusal(const struct exec_git_req *g, const char *why,
                     const char *ref)
{
    json_t *f = json_pack("{s:s, s:s, s:s}", "repo", g->repo->alias, "service",
                          exec_git_service_name(g->svc), "reason", why);

    /* json_object_set_new steals the new strings (NULL when a ref is not
       UTF-8: then it is left out). */
    if (f != NULL && g->intent_id[0] != '\0')
        (void)json_object_set_new(f, "intent_id", json_string(g->intent_id));
    if (f != NULL && ref != NULL)
        (void)json_object_set_new(f, "ref", json_string(ref));
    ig_log("warn", "git.refused", f);
}
