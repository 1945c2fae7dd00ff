/*
 * pdp_slack.c - Slack notifications and button clicks for escalations.
 *
 * DESIGN
 * Notifying: pdp_slack_escalated() and pdp_slack_changed() only put a job
 * (kind, intent id) on a bounded queue under a mutex and signal one
 * notifier thread; a full queue drops the job with a log line, so a slow
 * or unreachable Slack never holds up a decision or a vote. The thread
 * reads the approval view (pdp_approval_notice_view), builds the
 * message (appr_slack_message) and POSTs it with libcurl (core's
 * ig_curl_harden: no redirects, http(s) only, no proxy, TLS verified; the
 * connect and total timeouts here) to <api_url>/chat.postMessage
 * or, for a change, chat.update with the channel and ts Slack answered the
 * first time. Those (intent id -> channel, ts) pairs are kept in the store
 * (store_slack_*), so whichever replica counts a vote or expires the
 * request edits the message another replica posted, also after a
 * restart; the store keeps IG_SLACK_MESSAGES_MAX of them (the oldest by
 * Slack's ts go), and a pair is forgotten once its approval is resolved.
 * A change counted on another replica before the post's answer came back
 * finds no pair and is skipped (logged). Every attempt, ok or not, is one
 * JSON log line without any secret.
 *
 * Secrets: the bot token and the signing secret are read at start from
 * files only their owner may read, into sodium_malloc'd memory, and wiped
 * at stop; the Authorization header curl copies is wiped before it is
 * freed.
 *
 * Clicks are taken by pdp_slack_click.c, which checks their signature
 * with the secret held here (pdp_slack_verify).
 */
#include "pdp_int.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "appr_slack.h"
#include "ig_curl.h"
#include "ig_file.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "pdp_approval.h"
#include "pdp_approval_int.h"

#define SLACK_QUEUE IG_SLACK_QUEUE           /* jobs waiting for the notifier */
#define SLACK_CONNECT_MS IG_SLACK_CONNECT_MS /* connect timeout */
#define SLACK_TOTAL_MS IG_SLACK_TOTAL_MS     /* whole-request timeout */
#define SLACK_REPLY_MAX IG_SLACK_REPLY_MAX   /* largest Slack API answer */
#define SLACK_URL_MAX IG_SLACK_URL_MAX       /* api_url + "/chat.postMessage" */
#define SLACK_INTENT_ID_MAX IG_INTENT_ID_MAX /* longest intent id queued */
#define SLACK_SECRET_FILE_MAX IG_KEYFILE_MAX_BYTES

enum job_kind { JOB_POST = 1, JOB_UPDATE };

struct slack_job {
    enum job_kind kind;
    char intent_id[SLACK_INTENT_ID_MAX + 1];
};

/* A posted message: where it is, to update it (kept by the store). */
struct slack_msg {
    char channel[APPR_SLACK_ID_MAX + 1];
    char ts[APPR_SLACK_TS_MAX + 1];
};

struct pdp_slack {
    struct pdp_server *srv;
    pthread_t thread;
    pthread_mutex_t mu; /* guards q, head, count, stop */
    pthread_cond_t cv;
    struct slack_job q[SLACK_QUEUE];
    size_t head, count;
    int stop, started;
    char *token, *secret; /* sodium_malloc'd, NUL-terminated */
    size_t token_len, secret_len;
    CURL *curl; /* notifier thread only */
};

/* ---- secrets ---- */

/*
 * Read a secret file (ig_file_read_secret: a regular file only its owner
 * may access, one line of text) into a new sodium_malloc'd, NUL-terminated
 * buffer, then check it is printable ASCII without spaces (it goes into an
 * HTTP header, or is an HMAC key as text).
 */
static enum ig_status
read_secret(const char *path, const char *what, char **out, size_t *len,
            struct ig_err *err)
{
    struct ig_err inner;
    enum ig_status st;
    size_t i;

    st = ig_file_read_secret(path, SLACK_SECRET_FILE_MAX, out, len, &inner);
    if (st != IG_OK)
        return ig_err_set(err, st, "[slack] %s: %s", what, inner.msg);
    for (i = 0; i < *len; i++)
        if ((unsigned char)(*out)[i] == ' ' || (unsigned char)(*out)[i] >= 0x7f)
            break;
    if (i == *len)
        return IG_OK;
    ig_file_free_secret(*out);
    *out = NULL;
    *len = 0;
    return ig_err_set(err, IG_ERR_INVALID,
                      "[slack] %s: %s must hold one line of printable text "
                      "without spaces",
                      what, path);
}

/* ---- the Slack Web API ---- */

static struct curl_slist *
headers_new(const struct pdp_slack *k)
{
    static const char pfx[] = "Authorization: Bearer ";
    struct curl_slist *h = NULL, *t;
    size_t cap = sizeof(pfx) + k->token_len;
    char *auth = sodium_malloc(cap);

    if (auth == NULL)
        return NULL;
    memcpy(auth, pfx, sizeof(pfx) - 1);
    memcpy(auth + sizeof(pfx) - 1, k->token, k->token_len + 1);
    h = curl_slist_append(NULL, auth);
    sodium_memzero(auth, cap);
    sodium_free(auth);
    if (h == NULL)
        return NULL;
    t = curl_slist_append(h, "Content-Type: application/json; charset=utf-8");
    if (t == NULL)
        ig_curl_headers_free(h);
    return t;
}

/* POST body to <api_url>/method; Slack's answer into reply. why (cap
   bytes) gets curl's reason on failure. */
static enum ig_status
api_post(struct pdp_slack *k, const char *method, const char *body,
         struct ig_buf *reply, long *http, char *why, size_t cap)
{
    char url[SLACK_URL_MAX], ebuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *h;
    struct ig_err herr;
    CURLcode rc;
    int n;

    *http = 0;
    n = snprintf(url, sizeof(url), "%s/%s", k->srv->cfg->slack_api_url, method);
    if (n < 0 || (size_t)n >= sizeof(url)) {
        (void)snprintf(why, cap, "api_url too long");
        return IG_ERR_INVALID;
    }
    if ((h = headers_new(k)) == NULL) {
        (void)snprintf(why, cap, "out of memory");
        return IG_ERR_NOMEM;
    }
    curl_easy_reset(k->curl);
    if (ig_curl_harden(k->curl, SLACK_CONNECT_MS, SLACK_TOTAL_MS, &herr) !=
        IG_OK) {
        ig_curl_headers_free(h);
        (void)snprintf(why, cap, "%s", herr.msg);
        return IG_ERR_IO;
    }
    (void)curl_easy_setopt(k->curl, CURLOPT_URL, url);
    (void)curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, h);
    (void)curl_easy_setopt(k->curl, CURLOPT_POSTFIELDS, body);
    (void)curl_easy_setopt(k->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    (void)curl_easy_setopt(k->curl, CURLOPT_WRITEFUNCTION, ig_curl_to_buf);
    (void)curl_easy_setopt(k->curl, CURLOPT_WRITEDATA, reply);
    (void)curl_easy_setopt(k->curl, CURLOPT_ERRORBUFFER, ebuf);
    rc = curl_easy_perform(k->curl);
    (void)curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, http);
    /* The handle keeps pointers to h and ebuf: drop them before either
       goes away. */
    (void)curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, NULL);
    (void)curl_easy_setopt(k->curl, CURLOPT_ERRORBUFFER, NULL);
    ig_curl_headers_free(h);
    if (rc != CURLE_OK) {
        (void)snprintf(why, cap, "%s", ebuf[0] ? ebuf : curl_easy_strerror(rc));
        return IG_ERR_IO;
    }
    return IG_OK;
}

/* ---- remembered messages (in the store) ---- */

/* Where intent_id's message is: 1, or 0 when unknown or unreadable
   (logged). */
static int
msg_find(struct pdp_slack *k, const char *intent_id, struct slack_msg *m)
{
    enum ig_status st =
        store_slack_get(k->srv->store, intent_id, m->channel, m->ts);

    if (st != IG_OK && st != IG_ERR_NOTFOUND)
        pdp_log("error", "slack.store_failed",
                json_pack("{s:s, s:s}", "intent_id", intent_id, "reason",
                          "cannot read where the message is"));
    return st == IG_OK;
}

static void
msg_forget(struct pdp_slack *k, const char *intent_id)
{
    if (store_slack_forget(k->srv->store, intent_id) != IG_OK)
        pdp_log("error", "slack.store_failed",
                json_pack("{s:s, s:s}", "intent_id", intent_id, "reason",
                          "cannot forget where the message is"));
}

/* Remember where intent_id's message is; 0, or -1 when it does not fit
   or the store fails. */
static int
msg_remember(struct pdp_slack *k, const char *intent_id, const char *channel,
             const char *ts)
{
    return store_slack_put(k->srv->store, intent_id, channel, ts) == IG_OK ? 0
                                                                           : -1;
}

/* ---- the notifier ---- */

/* One log line and one audit event for an attempt; fields from the view
   and Slack's answer (never the token). */
static void
log_attempt(struct pdp_server *s, const char *method, const char *intent_id,
            const json_t *view, long http, const json_t *ans, const char *why)
{
    char when[IG_TIME_STRLEN + 1];
    int ok = json_is_true(json_object_get(ans, "ok")) && why == NULL;
    const char *slack_err = json_string_value(json_object_get(ans, "error"));
    json_t *f = json_pack(
        "{s:s, s:s, s:s*, s:s*, s:b, s:i, s:s*}", "method", method, "intent_id",
        intent_id, "approval_id",
        json_string_value(json_object_get(view, "approval_id")), "ts",
        json_string_value(json_object_get(ans, "ts")), "ok", ok, "http_status",
        (int)http, "error", why != NULL ? why : slack_err);

    if (ig_time_format(ig_time_now(), when) != IG_OK)
        when[0] = '\0';
    pdp_audit_append(
        s, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s*, s:b, s:s*}", "type",
                     "approval.notified", "time", when, "channel", "slack",
                     "method", method, "intent_id", intent_id, "approval_id",
                     json_string_value(json_object_get(view, "approval_id")),
                     "ok", ok, "error", why != NULL ? why : slack_err));
    pdp_log(ok ? "info" : "warn", "slack.notify", f);
}

static int
is_pending(const json_t *view)
{
    const char *st = json_string_value(json_object_get(view, "status"));

    return st != NULL && strcmp(st, "PENDING") == 0;
}

/* Read Slack's answer to job into *ans; NULL when it is ok, else why
   not (Slack's own "error" is in *ans). Remembers a new message's place
   and forgets a closed one's. */
static const char *
take_answer(struct pdp_slack *k, const struct slack_job *job,
            const json_t *view, const struct ig_buf *reply, json_t **ans)
{
    const char *ts, *ch;

    if (ig_json_parse(reply->data != NULL ? reply->data : "", reply->len, ans,
                      NULL) != IG_OK ||
        !json_is_object(*ans))
        return "Slack's answer is not a JSON object";
    if (!json_is_true(json_object_get(*ans, "ok")))
        return NULL; /* logged with Slack's "error" */
    ts = json_string_value(json_object_get(*ans, "ts"));
    ch = json_string_value(json_object_get(*ans, "channel"));
    if (job->kind == JOB_POST &&
        (ts == NULL ||
         msg_remember(k, job->intent_id,
                      ch != NULL ? ch : k->srv->cfg->slack_channel, ts) != 0))
        return "Slack's answer has no usable ts";
    if (job->kind == JOB_UPDATE && !is_pending(view))
        msg_forget(k, job->intent_id); /* closed: no more changes */
    return NULL;
}

static void
run_job(struct pdp_slack *k, const struct slack_job *job)
{
    const char *method =
        job->kind == JOB_POST ? "chat.postMessage" : "chat.update";
    struct slack_msg place, *m = NULL;
    json_t *view = NULL, *msg = NULL, *ans = NULL;
    const char *why = NULL;
    char cwhy[CURL_ERROR_SIZE + 64];
    struct ig_buf reply;
    char *body = NULL;
    long http = 0;

    if (job->kind == JOB_UPDATE) {
        if (msg_find(k, job->intent_id, &place))
            m = &place;
    }
    if (job->kind == JOB_UPDATE && m == NULL) {
        pdp_log("info", "slack.skipped",
                json_pack("{s:s, s:s, s:s}", "method", method, "intent_id",
                          job->intent_id, "reason",
                          "no open message for it (closed, or its post "
                          "not answered yet)"));
        return;
    }
    ig_buf_init(&reply, SLACK_REPLY_MAX);
    if (pdp_approval_notice_view(k->srv, job->intent_id, &view) != IG_OK) {
        why = "no approval for this intent (or the store failed)";
        goto out;
    }
    if (appr_slack_message(view,
                           m != NULL ? m->channel : k->srv->cfg->slack_channel,
                           m != NULL ? m->ts : NULL, k->srv->cfg->slack_ui_url,
                           &msg) != IG_OK ||
        (body = json_dumps(msg, JSON_COMPACT)) == NULL) {
        why = "cannot build the message";
        goto out;
    }
    if (api_post(k, method, body, &reply, &http, cwhy, sizeof(cwhy)) != IG_OK) {
        why = cwhy;
        goto out;
    }
    why = take_answer(k, job, view, &reply, &ans);
out:
    log_attempt(k->srv, method, job->intent_id, view, http, ans, why);
    free(body);
    json_decref(msg);
    json_decref(ans);
    json_decref(view);
    ig_buf_release(&reply);
}

static void *
notifier_main(void *arg)
{
    struct pdp_slack *k = arg;
    struct slack_job job;
    size_t dropped = 0;

    for (;;) {
        (void)pthread_mutex_lock(&k->mu);
        while (k->count == 0 && !k->stop)
            (void)pthread_cond_wait(&k->cv, &k->mu);
        if (k->stop) {
            dropped = k->count;
            (void)pthread_mutex_unlock(&k->mu);
            break;
        }
        job = k->q[k->head];
        k->head = (k->head + 1) % SLACK_QUEUE;
        k->count--;
        (void)pthread_mutex_unlock(&k->mu);
        run_job(k, &job);
    }
    if (dropped > 0)
        pdp_log("warn", "slack.dropped",
                json_pack("{s:i, s:s}", "jobs", (int)dropped, "reason",
                          "shutting down"));
    return NULL;
}

static void
enqueue(struct pdp_server *s, enum job_kind kind, const char *intent_id)
{
    struct pdp_slack *k = s->slack;
    const char *reason = NULL;
    struct slack_job *job;
    size_t n;

    if (k == NULL || intent_id == NULL)
        return;
    n = strnlen(intent_id, SLACK_INTENT_ID_MAX + 1);
    (void)pthread_mutex_lock(&k->mu);
    if (n > SLACK_INTENT_ID_MAX)
        reason = "intent id too long";
    else if (k->stop)
        reason = "shutting down";
    else if (k->count == SLACK_QUEUE)
        reason = "queue full";
    else {
        job = &k->q[(k->head + k->count) % SLACK_QUEUE];
        job->kind = kind;
        memcpy(job->intent_id, intent_id, n + 1);
        k->count++;
        (void)pthread_cond_signal(&k->cv);
    }
    (void)pthread_mutex_unlock(&k->mu);
    if (reason != NULL)
        pdp_log("warn", "slack.dropped",
                json_pack("{s:s, s:s%, s:s}", "method",
                          kind == JOB_POST ? "chat.postMessage" : "chat.update",
                          "intent_id", intent_id,
                          n > SLACK_INTENT_ID_MAX ? SLACK_INTENT_ID_MAX : n,
                          "reason", reason));
}

void
pdp_slack_escalated(struct pdp_server *s, const char *intent_id)
{
    enqueue(s, JOB_POST, intent_id);
}

void
pdp_slack_changed(struct pdp_server *s, const char *intent_id)
{
    enqueue(s, JOB_UPDATE, intent_id);
}

/* ---- start and stop ---- */

static void
slack_free(struct pdp_slack *k)
{
    if (k == NULL)
        return;
    if (k->curl != NULL) {
        curl_easy_cleanup(k->curl);
        curl_global_cleanup();
    }
    if (k->token != NULL) {
        sodium_memzero(k->token, k->token_len);
        sodium_free(k->token);
    }
    if (k->secret != NULL) {
        sodium_memzero(k->secret, k->secret_len);
        sodium_free(k->secret);
    }
    (void)pthread_cond_destroy(&k->cv);
    (void)pthread_mutex_destroy(&k->mu);
    free(k);
}

enum ig_status
pdp_slack_start(struct pdp_server *s, struct ig_err *err)
{
    const struct pdp_config *c = s->cfg;
    struct pdp_slack *k;
    enum ig_status st;

    s->slack = NULL;
    if (c->slack_channel == NULL)
        return IG_OK;
    if ((k = calloc(1, sizeof(*k))) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    k->srv = s;
    (void)pthread_mutex_init(&k->mu, NULL);
    (void)pthread_cond_init(&k->cv, NULL);
    if ((st = read_secret(c->slack_bot_token_file, "bot_token_file", &k->token,
                          &k->token_len, err)) != IG_OK ||
        (st = read_secret(c->slack_signing_secret_file, "signing_secret_file",
                          &k->secret, &k->secret_len, err)) != IG_OK)
        goto fail;
    st = IG_ERR_IO;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        (void)ig_err_set(err, st, "[slack] cannot initialize libcurl");
        goto fail;
    }
    if ((k->curl = curl_easy_init()) == NULL) {
        curl_global_cleanup();
        (void)ig_err_set(err, st, "[slack] cannot initialize libcurl");
        goto fail;
    }
    if (pthread_create(&k->thread, NULL, notifier_main, k) != 0) {
        (void)ig_err_set(err, st, "[slack] cannot start the notifier");
        goto fail;
    }
    k->started = 1;
    s->slack = k;
    pdp_log("info", "slack.started",
            json_pack("{s:s, s:s}", "api_url", c->slack_api_url, "channel",
                      c->slack_channel));
    return IG_OK;
fail:
    slack_free(k);
    return st;
}

void
pdp_slack_stop(struct pdp_server *s)
{
    struct pdp_slack *k = s->slack;

    if (k == NULL)
        return;
    (void)pthread_mutex_lock(&k->mu);
    k->stop = 1;
    (void)pthread_cond_broadcast(&k->cv);
    (void)pthread_mutex_unlock(&k->mu);
    if (k->started)
        (void)pthread_join(k->thread, NULL);
    s->slack = NULL;
    slack_free(k);
}

/* ---- for the click handler (pdp_slack_click.c) ---- */

enum ig_status
pdp_slack_verify(struct pdp_server *s, const char *ts, const char *sig,
                 const char *body, size_t len, struct ig_err *err)
{
    struct pdp_slack *k = s->slack;

    if (k == NULL)
        return ig_err_set(err, IG_ERR_NOTFOUND, "Slack is not configured");
    return appr_slack_verify(k->secret, k->secret_len, ts, sig, body, len,
                             ig_time_now(), err);
}
