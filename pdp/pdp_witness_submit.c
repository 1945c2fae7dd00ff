/*
 * pdp_witness_submit.c - one attempt to have a witness cosign a checkpoint
 * (c2sp.org/tlog-witness add-checkpoint), and what its answer means.
 *
 * The request is POST <url>/add-checkpoint with "old N", the consistency
 * proof from N to the checkpoint's size (from the store), a blank line and
 * the signed note (audit_witness_req_format). libcurl is hardened by
 * ig_curl_harden (http(s) only, no redirects, no proxy, TLS verified); the
 * whole request takes at most the witness's timeout_ms, the answer at most
 * IG_WITNESS_ANSWER_MAX bytes (more ends the transfer), and a stop cuts it
 * through the progress callback.
 *
 * The witness is not trusted. Its answer is judged:
 *
 *   200        its body must hold a valid cosignature by the configured
 *              key over this very checkpoint (audit_cosig_pick), with a
 *              timestamp that is not 0: stored with store_cosig_put.
 *              Anything else: bad_answer.
 *   409 with Content-Type text/x.tlog.size: the size it has. Resent once
 *              from it when it is a checkpoint this log signed, at most
 *              ours; else conflict (it saw a checkpoint we never signed).
 *   400 403 404 422, 409 without that type: refused - the witness says
 *              our checkpoint or proof is bad (a fork alarm).
 *   429 5xx, connection errors: unreachable; timeouts: timeout.
 *   anything else: bad_answer.
 *
 * Nothing a witness says is stored unless it is its valid cosignature,
 * and a witness's words reach the log only as printable ASCII, cut short.
 */
#include "pdp_witness_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "audit_cosig.h"
#include "ig_curl.h"
#include "ig_time.h"
#include "pdp.h"

#define SIZE_TYPE "text/x.tlog.size"
#define QUOTE_MAX 200 /* bytes of a witness's answer quoted in a log line */

/* ---- outcomes, logged and counted ---- */

static const struct {
    const char *level, *event;
} fail_events[PDP_WFAIL_N] = {
    [PDP_WFAIL_UNREACHABLE] = {"warn", "witness.unreachable"},
    [PDP_WFAIL_TIMEOUT] = {"warn", "witness.unreachable"},
    [PDP_WFAIL_REFUSED] = {"error", "witness.refused"},
    [PDP_WFAIL_CONFLICT] = {"error", "witness.conflict"},
    [PDP_WFAIL_BAD_ANSWER] = {"error", "witness.bad_answer"},
    [PDP_WFAIL_STORE] = {"error", "witness.store_failed"},
};

void
pdp_witness_failed(struct pdp_witness_one *w, enum pdp_witness_fail why,
                   uint64_t size, uint64_t old, long http, const char *fmt, ...)
{
    int64_t now = ig_time_now();
    char detail[512];
    va_list ap;

    atomic_fetch_add(&w->fails[why], 1);
    if (w->last_fail == (int)why &&
        now - w->last_logged < IG_WITNESS_LOG_REPEAT_S) {
        w->not_logged++;
        return;
    }
    va_start(ap, fmt);
    (void)vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    pdp_log(fail_events[why].level, fail_events[why].event,
            json_pack("{s:s, s:s, s:I, s:I, s:i, s:s, s:I}", "witness",
                      w->cfg->id, "url", w->cfg->url, "size", (json_int_t)size,
                      "old", (json_int_t)old, "http_status", (int)http,
                      "detail", detail, "repeats_not_logged",
                      (json_int_t)w->not_logged));
    w->last_fail = (int)why;
    w->last_logged = now;
    w->not_logged = 0;
}

/* Up to QUOTE_MAX bytes of a witness's answer as printable ASCII (other
   bytes as '?'), for a log line. */
static void
quote(const struct ig_buf *b, char *out, size_t cap)
{
    size_t i, n = b->len < cap - 1 ? b->len : cap - 1;

    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)b->data[i];
        out[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    out[n] = '\0';
}

/* ---- HTTP ---- */

struct answer {
    long http;
    char ctype[64]; /* Content-Type, "" when none or too long */
    struct ig_buf body;
};

static int
on_progress(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
            curl_off_t ulnow)
{
    const struct pdp_witnesses *all = p;

    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return atomic_load(&all->stopping) ? 1 : 0; /* non-zero: abort */
}

static struct curl_slist *
request_headers(void)
{
    struct curl_slist *h = NULL, *t;

    h = curl_slist_append(NULL, "Content-Type: text/plain; charset=utf-8");
    if (h == NULL)
        return NULL;
    /* No "Expect: 100-continue" round trip. */
    if ((t = curl_slist_append(h, "Expect:")) == NULL)
        curl_slist_free_all(h);
    return t;
}

/* POST req to <url>/add-checkpoint; the answer into a. CURLE_OK or
   libcurl's code, with why (cap bytes) saying what went wrong. */
static CURLcode
post(struct pdp_witness_one *w, const struct ig_buf *req, struct answer *a,
     char *why, size_t cap)
{
    char url[IG_WITNESS_URL_MAX], ebuf[CURL_ERROR_SIZE] = "";
    long total = (long)w->cfg->timeout_ms, connect;
    const char *ct = NULL;
    struct curl_slist *h;
    struct ig_err herr;
    CURLcode rc;
    int n;

    connect = total < IG_WITNESS_CONNECT_MS ? total : IG_WITNESS_CONNECT_MS;
    n = snprintf(url, sizeof(url), "%s/add-checkpoint", w->cfg->url);
    if (n < 0 || (size_t)n >= sizeof(url) || (h = request_headers()) == NULL) {
        (void)snprintf(why, cap, "cannot build the request");
        return CURLE_OUT_OF_MEMORY;
    }
    curl_easy_reset(w->curl);
    if (ig_curl_harden(w->curl, connect, total, &herr) != IG_OK) {
        curl_slist_free_all(h);
        (void)snprintf(why, cap, "%s", herr.msg);
        return CURLE_FAILED_INIT;
    }
    (void)curl_easy_setopt(w->curl, CURLOPT_URL, url);
    (void)curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, h);
    (void)curl_easy_setopt(w->curl, CURLOPT_USERAGENT, "intentgate-witness/1");
    (void)curl_easy_setopt(w->curl, CURLOPT_POSTFIELDS, req->data);
    (void)curl_easy_setopt(w->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                           (curl_off_t)req->len);
    (void)curl_easy_setopt(w->curl, CURLOPT_WRITEFUNCTION, ig_curl_to_buf);
    (void)curl_easy_setopt(w->curl, CURLOPT_WRITEDATA, &a->body);
    (void)curl_easy_setopt(w->curl, CURLOPT_ERRORBUFFER, ebuf);
    (void)curl_easy_setopt(w->curl, CURLOPT_NOPROGRESS, 0L);
    (void)curl_easy_setopt(w->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    (void)curl_easy_setopt(w->curl, CURLOPT_XFERINFODATA, w->all);
    rc = curl_easy_perform(w->curl);
    (void)curl_easy_getinfo(w->curl, CURLINFO_RESPONSE_CODE, &a->http);
    if (curl_easy_getinfo(w->curl, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK &&
        ct != NULL && strlen(ct) < sizeof(a->ctype))
        memcpy(a->ctype, ct, strlen(ct) + 1);
    /* The handle keeps pointers to h, ebuf and the body: drop them. */
    (void)curl_easy_setopt(w->curl, CURLOPT_POSTFIELDS, NULL);
    (void)curl_easy_setopt(w->curl, CURLOPT_WRITEDATA, NULL);
    (void)curl_easy_setopt(w->curl, CURLOPT_HTTPHEADER, NULL);
    (void)curl_easy_setopt(w->curl, CURLOPT_ERRORBUFFER, NULL);
    curl_slist_free_all(h);
    if (rc != CURLE_OK)
        (void)snprintf(why, cap, "%s", ebuf[0] ? ebuf : curl_easy_strerror(rc));
    return rc;
}

/* 1 when the media type of ct (before any ';', case aside) is want. */
static int
media_type_is(const char *ct, const char *want)
{
    size_t n = strlen(want), i;

    if (strncasecmp(ct, want, n) != 0)
        return 0;
    for (i = n; ct[i] == ' ' || ct[i] == '\t'; i++)
        ;
    return ct[i] == '\0' || ct[i] == ';';
}

/* ---- one request ---- */

enum sent {
    SENT_COSIGNED = 0,
    SENT_SIZE, /* 409 naming the witness's size: *wsize */
    SENT_FAILED
};

/* The note's signed text: up to and with the newline before the blank
   line (a checkpoint's text has no blank line of its own). 0: none. */
static size_t
text_len(const char *note)
{
    const char *p = strstr(note, "\n\n");

    return p != NULL ? (size_t)(p - note) + 1 : 0;
}

/* A 200 answer: w's valid cosignature of note, stored. */
static enum sent
take_cosignature(struct pdp_witness_one *w, const char *note, uint64_t size,
                 uint64_t old, const struct answer *a)
{
    char line[AUDIT_COSIG_LINE_MAX + 1], q[QUOTE_MAX + 1];
    enum ig_status st;
    struct ig_err err;
    uint64_t ts = 0;

    st = audit_cosig_pick(a->body.data != NULL ? a->body.data : "", a->body.len,
                          note, text_len(note), &w->cfg->key, line,
                          sizeof(line), &ts, &err);
    if (st != IG_OK) {
        quote(&a->body, q, sizeof(q));
        pdp_witness_failed(w, PDP_WFAIL_BAD_ANSWER, size, old, a->http,
                           "200 without a valid cosignature by %s: %s "
                           "(it answered: %s)",
                           w->cfg->key.name, err.msg, q);
        return SENT_FAILED;
    }
    if (ts == 0) {
        /* tlog-witness: the timestamp MUST NOT be zero. */
        pdp_witness_failed(w, PDP_WFAIL_BAD_ANSWER, size, old, a->http,
                           "a cosignature with timestamp 0");
        return SENT_FAILED;
    }
    st = store_cosig_put(w->all->store, size, w->cfg->key.name, line);
    if (st != IG_OK) {
        pdp_witness_failed(w, PDP_WFAIL_STORE, size, old, a->http,
                           "cannot store the cosignature: %s", ig_strerror(st));
        return SENT_FAILED;
    }
    atomic_store(&w->cosigned, size);
    w->old = size;
    w->last_fail = -1;
    pdp_log("info", "witness.cosigned",
            json_pack("{s:s, s:s, s:I, s:I, s:I}", "witness", w->cfg->id, "key",
                      w->cfg->key.name, "size", (json_int_t)size, "old",
                      (json_int_t)old, "timestamp", (json_int_t)ts));
    return SENT_COSIGNED;
}

/* What the answer a to a request from old means. */
static enum sent
judge(struct pdp_witness_one *w, const char *note, uint64_t size, uint64_t old,
      const struct answer *a, uint64_t *wsize)
{
    char q[QUOTE_MAX + 1];
    long h = a->http;

    if (h == 200)
        return take_cosignature(w, note, size, old, a);
    quote(&a->body, q, sizeof(q));
    if (h == 409 && media_type_is(a->ctype, SIZE_TYPE)) {
        if (audit_witness_size_parse(a->body.data != NULL ? a->body.data : "",
                                     a->body.len, wsize) == IG_OK)
            return SENT_SIZE;
        pdp_witness_failed(w, PDP_WFAIL_BAD_ANSWER, size, old, h,
                           "409 whose body is not a tree size: %s", q);
        return SENT_FAILED;
    }
    if (h == 400 || h == 403 || h == 404 || h == 409 || h == 422)
        pdp_witness_failed(w, PDP_WFAIL_REFUSED, size, old, h,
                           "the witness refused the checkpoint: %s", q);
    else if (h == 429 || (h >= 500 && h <= 599))
        pdp_witness_failed(w, PDP_WFAIL_UNREACHABLE, size, old, h,
                           "the witness cannot answer now: %s", q);
    else
        pdp_witness_failed(w, PDP_WFAIL_BAD_ANSWER, size, old, h,
                           "unexpected HTTP status: %s", q);
    return SENT_FAILED;
}

/* The request body from old to size into req; SENT_FAILED after
   logging when old is not a checkpoint of this log or the store fails. */
static enum sent
build(struct pdp_witness_one *w, const char *note, uint64_t size, uint64_t old,
      struct ig_buf *req)
{
    unsigned char proof[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    enum ig_status st = IG_OK;
    size_t n = 0;

    if (old > 0 && old < size)
        st = store_audit_consistency(w->all->store, old, size, proof, &n);
    if (st == IG_ERR_NOTFOUND) {
        pdp_witness_failed(w, PDP_WFAIL_CONFLICT, size, old, 0,
                           "tree size %llu is not a checkpoint this log "
                           "signed",
                           (unsigned long long)old);
        return SENT_FAILED;
    }
    if (st == IG_OK)
        st = audit_witness_req_format(old, (const unsigned char(*)[32])proof, n,
                                      note, strlen(note), req);
    if (st != IG_OK) {
        pdp_witness_failed(w, PDP_WFAIL_STORE, size, old, 0,
                           "cannot build the request: %s", ig_strerror(st));
        return SENT_FAILED;
    }
    return SENT_COSIGNED; /* built */
}

static enum sent
send_from(struct pdp_witness_one *w, const char *note, uint64_t size,
          uint64_t old, uint64_t *wsize)
{
    char why[CURL_ERROR_SIZE + 64];
    struct answer a;
    struct ig_buf req;
    enum sent r;
    CURLcode rc;

    memset(&a, 0, sizeof(a));
    ig_buf_init(&req, AUDIT_WITNESS_REQ_MAX);
    ig_buf_init(&a.body, IG_WITNESS_ANSWER_MAX);
    if ((r = build(w, note, size, old, &req)) != SENT_COSIGNED)
        goto out;
    r = SENT_FAILED;
    rc = post(w, &req, &a, why, sizeof(why));
    if (rc == CURLE_ABORTED_BY_CALLBACK)
        goto out; /* stopping: nothing to say */
    if (rc == CURLE_WRITE_ERROR)
        pdp_witness_failed(w, PDP_WFAIL_BAD_ANSWER, size, old, a.http,
                           "answer over %d bytes", IG_WITNESS_ANSWER_MAX);
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        pdp_witness_failed(w, PDP_WFAIL_TIMEOUT, size, old, a.http,
                           "no answer within %lld ms: %s",
                           (long long)w->cfg->timeout_ms, why);
    else if (rc != CURLE_OK)
        pdp_witness_failed(w, PDP_WFAIL_UNREACHABLE, size, old, a.http, "%s",
                           why);
    else
        r = judge(w, note, size, old, &a, wsize);
out:
    ig_buf_release(&req);
    ig_buf_release(&a.body);
    return r;
}

/* A 409's size: 0 when the witness may be sent from it (none, or a
   checkpoint of ours no larger than size); -1 after logging a conflict. */
static int
size_believable(struct pdp_witness_one *w, uint64_t size, uint64_t old,
                uint64_t wsize)
{
    enum ig_status st = IG_OK;
    uint64_t got = 0;
    char *note = NULL;

    if (wsize > size) {
        pdp_witness_failed(w, PDP_WFAIL_CONFLICT, size, old, 409,
                           "the witness has cosigned tree size %llu, larger "
                           "than this log's latest checkpoint: it saw a "
                           "checkpoint this log never signed",
                           (unsigned long long)wsize);
        return -1;
    }
    if (wsize > 0 && wsize < size)
        st = store_checkpoint_get(w->all->store, wsize, &note, &got);
    free(note);
    if (st == IG_ERR_NOTFOUND) {
        pdp_witness_failed(w, PDP_WFAIL_CONFLICT, size, old, 409,
                           "the witness has cosigned tree size %llu, which "
                           "is no checkpoint this log signed",
                           (unsigned long long)wsize);
        return -1;
    }
    if (st != IG_OK) {
        pdp_witness_failed(w, PDP_WFAIL_STORE, size, old, 409,
                           "cannot read checkpoint %llu: %s",
                           (unsigned long long)wsize, ig_strerror(st));
        return -1;
    }
    return 0;
}

int
pdp_witness_attempt(struct pdp_witness_one *w, const char *note, uint64_t size)
{
    uint64_t old = w->old > size ? 0 : w->old, wsize = 0;
    enum sent r;

    r = send_from(w, note, size, old, &wsize);
    if (r == SENT_SIZE) {
        if (size_believable(w, size, old, wsize) != 0)
            return -1;
        w->old = old = wsize;
        r = send_from(w, note, size, old, &wsize);
        if (r == SENT_SIZE) {
            if (size_believable(w, size, old, wsize) != 0)
                return -1;
            if (wsize == old) {
                pdp_witness_failed(w, PDP_WFAIL_BAD_ANSWER, size, old, 409,
                                   "409 naming tree size %llu, the old "
                                   "size it was sent",
                                   (unsigned long long)wsize);
                return -1;
            }
            w->old = wsize; /* for the next attempt */
            pdp_witness_failed(w, PDP_WFAIL_UNREACHABLE, size, old, 409,
                               "the witness's size changed between two "
                               "requests (now %llu): another submitter?",
                               (unsigned long long)wsize);
            return -1;
        }
    }
    return r == SENT_COSIGNED ? 0 : -1;
}
