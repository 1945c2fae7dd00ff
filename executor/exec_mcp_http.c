/*
 * exec_mcp_http.c - the Streamable HTTP transport of an upstream MCP
 * server (2025-11-25): each request is one POST with `Accept:
 * application/json, text/event-stream`; the answer is one JSON object or
 * an event stream whose events are delivered as they arrive (progress and
 * log notifications to the waiting call, the upstream's own requests
 * answered by exec_mcp_up_dispatch, the response ends the call). The
 * session id from the initialize answer goes on every later request; a
 * 404 means the upstream forgot it: the server is marked down and the
 * next call initializes again.
 *
 * The credential goes as one header line built at start (sodium_malloc'd,
 * wiped at stop). No redirects, no proxy from the environment, no
 * cookies; the answer is capped at max_reply_bytes.
 */
#include "exec_mcp_up_int.h"

#include <curl/curl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "exec_curl.h"
#include "ig_buf.h"
#include "ig_curl.h"
#include "ig_sse.h"

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

/* One POST's state. */
struct post {
    struct exec_mcp_up *u;
    struct exec_mcp_pending *p;
    int sse, typed;
    char session[256];
    struct ig_buf body; /* a JSON answer */
    struct ig_sse sse_p;
    size_t total;
    int too_large, parse_failed;
};

static size_t
on_header(char *h, size_t size, size_t n, void *arg)
{
    struct post *q = arg;
    size_t len = size * n, v;

    if (len > 13 && strncasecmp(h, "Content-Type:", 13) == 0) {
        for (v = 13; v < len && (h[v] == ' ' || h[v] == '\t'); v++)
            ;
        q->typed = 1;
        q->sse =
            len - v >= 17 && strncasecmp(h + v, "text/event-stream", 17) == 0;
    } else if (len > 15 && strncasecmp(h, "Mcp-Session-Id:", 15) == 0) {
        for (v = 15; v < len && (h[v] == ' ' || h[v] == '\t'); v++)
            ;
        while (len > v &&
               (h[len - 1] == '\r' || h[len - 1] == '\n' || h[len - 1] == ' '))
            len--;
        if (len - v > 0 && len - v < sizeof(q->session)) {
            memcpy(q->session, h + v, len - v);
            q->session[len - v] = '\0';
        }
    }
    return size * n;
}

static int
on_event(void *ctx, const struct ig_sse_event *ev)
{
    struct post *q = ctx;

    if (ev->type_len == 7 && memcmp(ev->type, "message", 7) == 0 &&
        ev->data_len > 0)
        q->u->deliver(q->u, ev->data, ev->data_len, q->p);
    return 0;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
    struct post *q = arg;
    struct ig_err err;
    size_t len = size * n;

    q->total += len;
    if ((double)q->total > q->u->srv->max_reply_bytes) {
        q->too_large = 1;
        return 0;
    }
    if (!q->sse)
        return ig_buf_add(&q->body, data, len) == IG_OK ? len : 0;
    if (ig_sse_feed(&q->sse_p, data, len, on_event, q, &err) != IG_OK) {
        q->parse_failed = 1;
        return 0;
    }
    return len;
}

/* libcurl's progress callback: a call the agent cancelled, or any call
   when the gateway stops, ends here (not at its timeout). */
static int
on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
            curl_off_t un)
{
    const struct post *q = arg;

    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return (q->p != NULL && q->p->cancel != NULL &&
            atomic_load(q->p->cancel)) ||
           atomic_load(&q->u->stopping);
}

/* One transfer: POST text (len bytes), or when text is NULL the GET that
   resumes an event stream after last_id. q collects what comes back;
   *status gets the HTTP status. */
static enum ig_status
transfer(struct exec_mcp_up *u, struct post *q, const char *text, size_t len,
         const char *last_id, long *status, struct ig_err *err)
{
    struct curl_slist *h = NULL, *t;
    char sess[300], ver[80], resume[300];
    CURL *c = curl_easy_init(); /* a fresh one: answers may nest */
    enum ig_status st = IG_OK;
    const char *lines[6];
    CURLcode rc;
    size_t i, nl = 0;

    *status = 0;
    if (c == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot start an HTTP call");
    exec_curl_share(c);
    if (text != NULL)
        lines[nl++] = "Content-Type: application/json";
    lines[nl++] = text != NULL ? "Accept: application/json, text/event-stream"
                               : "Accept: text/event-stream";
    (void)pthread_mutex_lock(&u->mu);
    if (u->session != NULL) {
        (void)snprintf(sess, sizeof(sess), "Mcp-Session-Id: %s", u->session);
        lines[nl++] = sess;
        if (u->version[0] != '\0') {
            (void)snprintf(ver, sizeof(ver), "MCP-Protocol-Version: %s",
                           u->version);
            lines[nl++] = ver;
        }
    }
    (void)pthread_mutex_unlock(&u->mu);
    if (last_id != NULL) {
        (void)snprintf(resume, sizeof(resume), "Last-Event-ID: %s", last_id);
        lines[nl++] = resume;
    }
    for (i = 0; i < nl && st == IG_OK; i++) {
        if ((t = curl_slist_append(h, lines[i])) == NULL)
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        else
            h = t;
    }
    if (st == IG_OK && u->cred_line != NULL) {
        if ((t = curl_slist_append(h, u->cred_line)) == NULL)
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        else
            h = t;
    }
    if (st == IG_OK &&
        ig_curl_harden(c, u->srv->timeout_ms, u->srv->timeout_ms, err) != IG_OK)
        st = IG_ERR_IO;
    if (st == IG_OK) {
        (void)curl_easy_setopt(c, CURLOPT_URL, u->srv->url);
        (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        if (text != NULL) {
            (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
            (void)curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                                   (curl_off_t)len);
        } else {
            (void)curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
        }
        (void)curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        (void)curl_easy_setopt(c, CURLOPT_HEADERDATA, q);
        (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, q);
        (void)curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        (void)curl_easy_setopt(c, CURLOPT_XFERINFODATA, q);
        (void)curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        rc = curl_easy_perform(c);
        (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
        if (q->too_large)
            st = ig_err_set(err, IG_ERR_IO,
                            "mcp \"%s\": the answer is over max_reply_bytes",
                            u->srv->alias);
        else if (q->parse_failed)
            st = ig_err_set(err, IG_ERR_IO,
                            "mcp \"%s\": the event stream is malformed",
                            u->srv->alias);
        else if (rc != CURLE_OK)
            st = ig_err_set(err, IG_ERR_IO, "mcp \"%s\" unreachable: %s",
                            u->srv->alias, curl_easy_strerror(rc));
    }
    curl_easy_cleanup(c);
    ig_curl_headers_free(h);
    return st;
}

/* 1 when p has its answer (or was failed). */
static int
answered(struct exec_mcp_up *u, struct exec_mcp_pending *p)
{
    int done;

    (void)pthread_mutex_lock(&u->mu);
    done = p->done;
    (void)pthread_mutex_unlock(&u->mu);
    return done;
}

/* The event stream of a request ended before its answer: resume it with
   GET and Last-Event-ID (transports.mdx, "Resumability"), after the
   server's retry delay (capped), a few times at most. */
static enum ig_status
resume(struct exec_mcp_up *u, struct post *q, struct ig_err *err)
{
    char last[256];
    const char *id;
    long status, wait_ms;
    size_t n;
    int round;
    enum ig_status st = IG_OK;

    for (round = 0; round < IG_EXEC_MCP_RESUMES && !answered(u, q->p);
         round++) {
        id = ig_sse_last_id(&q->sse_p, &n);
        if (id == NULL || n == 0 || n >= sizeof(last) ||
            memchr(id, '\r', n) != NULL || memchr(id, '\n', n) != NULL)
            return ig_err_set(err, IG_ERR_IO,
                              "mcp \"%s\" ended its event stream before the "
                              "answer, with no event id to resume from",
                              u->srv->alias);
        memcpy(last, id, n);
        last[n] = '\0';
        wait_ms = q->sse_p.retry_ms >= 0 ? q->sse_p.retry_ms : 1000;
        if (wait_ms > IG_EXEC_MCP_RESUME_WAIT_MAX_MS)
            wait_ms = IG_EXEC_MCP_RESUME_WAIT_MAX_MS;
        if (wait_ms > 0) {
            struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
            (void)nanosleep(&ts, NULL);
        }
        ig_sse_release(&q->sse_p);
        ig_sse_init(&q->sse_p, (size_t)u->srv->max_reply_bytes);
        q->sse = q->typed = 0;
        st = transfer(u, q, NULL, 0, last, &status, err);
        if (st == IG_OK && status != 200)
            st = ig_err_set(err, IG_ERR_IO,
                            "mcp \"%s\" refused to resume its event stream "
                            "(HTTP %ld)",
                            u->srv->alias, status);
        if (st != IG_OK)
            return st;
    }
    return answered(u, q->p)
               ? IG_OK
               : ig_err_set(err, IG_ERR_IO,
                            "mcp \"%s\" ended its event stream %d times "
                            "before the answer",
                            u->srv->alias, IG_EXEC_MCP_RESUMES);
}

/* POST text; the answer is delivered to p (NULL for a notification). */
static enum ig_status
post_text(struct exec_mcp_up *u, struct exec_mcp_pending *p, const char *text,
          size_t len, struct ig_err *err)
{
    struct post q;
    enum ig_status st;
    long status = 0;

    memset(&q, 0, sizeof(q));
    q.u = u;
    q.p = p;
    ig_buf_init(&q.body, (size_t)u->srv->max_reply_bytes);
    ig_sse_init(&q.sse_p, (size_t)u->srv->max_reply_bytes);
    st = transfer(u, &q, text, len, NULL, &status, err);
    if (st == IG_OK && q.session[0] != '\0') {
        (void)pthread_mutex_lock(&u->mu);
        if (u->session == NULL)
            u->session = strdup(q.session);
        (void)pthread_mutex_unlock(&u->mu);
    }
    if (st == IG_OK && status == 404 && p != NULL) {
        (void)pthread_mutex_lock(&u->mu);
        u->state = EXEC_MCP_DOWN; /* initialize again next time */
        u->gen++;
        (void)pthread_mutex_unlock(&u->mu);
        st = ig_err_set(err, IG_ERR_IO,
                        "mcp \"%s\" forgot the session; try again",
                        u->srv->alias);
    } else if (st == IG_OK && (status < 200 || status > 299)) {
        st = ig_err_set(err, IG_ERR_IO, "mcp \"%s\" answered HTTP %ld",
                        u->srv->alias, status);
    } else if (st == IG_OK && p != NULL && !q.sse && q.body.len > 0) {
        u->deliver(u, q.body.data, q.body.len, p);
    } else if (st == IG_OK && p != NULL && q.sse && !answered(u, p)) {
        st = resume(u, &q, err);
    }
    ig_buf_release(&q.body);
    ig_sse_release(&q.sse_p);
    return st;
}

enum ig_status
exec_mcp_http_start(struct exec_mcp_up *u, struct ig_err *err)
{
    unsigned char *cred = NULL;
    size_t len = 0, n;
    enum ig_status st;

    (void)pthread_mutex_lock(&u->mu);
    free(u->session);
    u->session = NULL;
    u->version[0] = '\0';
    (void)pthread_mutex_unlock(&u->mu);
    if (u->srv->credential == NULL || u->cred_line != NULL)
        return IG_OK;
    st = exec_secrets_get(u->x->secrets, u->srv->credential, &cred, &len, err);
    if (st != IG_OK)
        return ig_err_set(err, st, "mcp \"%s\": the credential cannot be read",
                          u->srv->alias);
    n = strlen(u->srv->cred_header) + 2 + strlen(u->srv->cred_prefix) + len + 1;
    if ((u->cred_line = sodium_malloc(n)) == NULL) {
        exec_secret_free(cred, len);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    (void)snprintf(u->cred_line, n, "%s: %s%.*s", u->srv->cred_header,
                   u->srv->cred_prefix, (int)len, (const char *)cred);
    exec_secret_free(cred, len);
    return IG_OK;
}

enum ig_status
exec_mcp_http_call(struct exec_mcp_up *u, struct exec_mcp_pending *p,
                   const char *text, size_t len, struct ig_err *err)
{
    return post_text(u, p, text, len, err);
}

enum ig_status
exec_mcp_http_note(struct exec_mcp_up *u, const char *text, size_t len,
                   struct ig_err *err)
{
    return post_text(u, NULL, text, len, err);
}

void
exec_mcp_http_stop(struct exec_mcp_up *u)
{
    struct curl_slist *h = NULL, *t;
    char line[300];
    struct ig_err err;
    CURL *c;

    if (u->session != NULL && (c = curl_easy_init()) != NULL) {
        (void)snprintf(line, sizeof(line), "Mcp-Session-Id: %s", u->session);
        h = curl_slist_append(NULL, line);
        if (h != NULL && u->cred_line != NULL &&
            (t = curl_slist_append(h, u->cred_line)) != NULL)
            h = t;
        if (h != NULL && ig_curl_harden(c, 1000, 2000, &err) == IG_OK) {
            (void)curl_easy_setopt(c, CURLOPT_URL, u->srv->url);
            (void)curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
            (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
            (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
            (void)curl_easy_perform(c);
        }
        curl_easy_cleanup(c);
        ig_curl_headers_free(h);
    }
    free(u->session);
    u->session = NULL;
    if (u->cred_line != NULL)
        sodium_free(u->cred_line);
    u->cred_line = NULL;
}
