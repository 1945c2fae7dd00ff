/*
 * cli_mcp_http.c - one exchange of the stdio bridge with the MCP server
 * (Streamable HTTP, 2025-11-25), with libcurl (see cli_mcp.h).
 *
 * How an answer is read. A header callback keeps the Content-Type and
 * Mcp-Session-Id of the final answer (both reset at each status line, so
 * an interim 1xx leaves nothing behind). The first body byte decides what
 * the body is: a 200 text/event-stream is fed to the SSE parser and each
 * event's data goes to stdout as it arrives (streaming: an escalated
 * tools/call may send progress long before its result); a 200
 * application/json is collected under the message cap and written at the
 * end; anything else is an error answer, of which only the start is kept,
 * for its JSON-RPC error message. Every message from the server is parsed
 * strictly and re-serialised on one line (cli_mcp_out.c), never copied.
 *
 * A request (a message with an id) is always answered: when the server's
 * answer to that id did not reach stdout - an HTTP error, an unreachable
 * server, a stream that ended without it, a message over the cap - an
 * error line with code -32000 says why (the status and the server's
 * JSON-RPC message, never the whole body). A 404 while a session is held
 * means the session is gone: the client is told so, and nothing starts a
 * new one behind its back.
 *
 * The session id is taken only from the initialize answer, before any of
 * its body is written, so the client's next message (sent after it reads
 * the result) carries it; the protocol version is taken from the result
 * itself, before that line is written. A POST's event stream is closed
 * once the answer is out. Transfers abort when the bridge stops (a
 * progress callback), but the final DELETE.
 */
#include "cli_mcp.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ig_buf.h"
#include "ig_curl.h"
#include "ig_json.h"
#include "ig_sse.h"

enum kind { KIND_UNKNOWN = 0, KIND_JSON, KIND_SSE, KIND_OTHER };

/* The longest Content-Type kept, and one header line built here. */
#define CTYPE_MAX 128
#define HEADER_MAX (IG_MCP_SESSION_ID_MAX + 64)

struct xfer {
    struct mcp_bridge *b;
    CURL *curl;
    const json_t *id; /* the request's id: an answer is owed; or NULL */
    int is_init;
    int abortable; /* stop when the bridge stops */
    int sent_session;
    int answered; /* the answer to id reached stdout */
    int done;     /* ... on an event stream, which was then closed */
    enum kind kind;
    long status;
    char ctype[CTYPE_MAX];
    char session[IG_MCP_SESSION_ID_MAX + 1];
    int session_bad;
    struct ig_sse sse;
    struct ig_buf body;
    enum ig_status failed; /* taking the body failed: err says why */
    struct ig_err err;
};

/* If line is the header name (any case), its trimmed value into out:
   1; -1 when the value does not fit; 0 for another header. */
static int
header_value(const char *line, size_t len, const char *name, char *out,
             size_t size)
{
    size_t n = strlen(name);

    if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return 0;
    line += n + 1;
    len -= n + 1;
    while (len > 0 && (*line == ' ' || *line == '\t')) {
        line++;
        len--;
    }
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n' ||
                       line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    if (len >= size)
        return -1;
    memcpy(out, line, len);
    out[len] = '\0';
    return 1;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t len = size * n, i;

    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        x->ctype[0] = x->session[0] = '\0';
        x->session_bad = 0;
        return len;
    }
    if (header_value(p, len, "content-type", x->ctype, sizeof(x->ctype)) < 0)
        x->ctype[0] = '\0';
    switch (header_value(p, len, "mcp-session-id", x->session,
                         sizeof(x->session))) {
    case -1:
        x->session_bad = 1;
        break;
    case 1: /* visible ASCII only (2025-11-25 transports) */
        x->session_bad = x->session[0] == '\0';
        for (i = 0; x->session[i] != '\0'; i++)
            if (x->session[i] < 0x21 || x->session[i] > 0x7e)
                x->session_bad = 1;
        break;
    default:
        break;
    }
    return len;
}

/* 1 when the Content-Type's media type is want (parameters ignored). */
static int
ctype_is(const char *ctype, const char *want)
{
    size_t n = strlen(want);

    return strncasecmp(ctype, want, n) == 0 &&
           (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ');
}

static void
keep_session(struct xfer *x)
{
    if (x->session_bad) {
        mcp_log(x->b,
                "the server's Mcp-Session-Id is empty, longer than %d "
                "bytes or not visible ASCII; not kept",
                IG_MCP_SESSION_ID_MAX);
        return;
    }
    if (x->session[0] == '\0')
        return;
    (void)pthread_mutex_lock(&x->b->lock);
    (void)snprintf(x->b->session, sizeof(x->b->session), "%s", x->session);
    (void)pthread_mutex_unlock(&x->b->lock);
}

/* The answer's headers are complete: what is its body? */
static void
decide(struct xfer *x)
{
    (void)curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->status == 200 && ctype_is(x->ctype, "text/event-stream"))
        x->kind = KIND_SSE;
    else if (x->status == 200 && ctype_is(x->ctype, "application/json"))
        x->kind = KIND_JSON;
    else
        x->kind = KIND_OTHER;
    if (x->kind == KIND_OTHER)
        ig_buf_init(&x->body, IG_MCP_ERROR_BODY_MAX);
    if (x->is_init && x->status == 200)
        keep_session(x);
}

/* The initialize result's protocolVersion, for the header. */
static void
keep_version(struct xfer *x, const json_t *msg)
{
    const json_t *v = ig_json_pointer_get(msg, "/result/protocolVersion");
    const char *s = json_string_value(v);
    size_t i, n = s != NULL ? json_string_length(v) : 0;

    for (i = 0; i < n; i++)
        if (!(s[i] >= '0' && s[i] <= '9') && !(s[i] >= 'a' && s[i] <= 'z') &&
            !(s[i] >= 'A' && s[i] <= 'Z') && s[i] != '-' && s[i] != '.')
            break;
    if (n == 0 || i < n || n > IG_MCP_VERSION_MAX) {
        mcp_log(x->b, "the initialize result has no usable protocolVersion");
        return;
    }
    (void)pthread_mutex_lock(&x->b->lock);
    memcpy(x->b->version, s, n);
    x->b->version[n] = '\0';
    (void)pthread_mutex_unlock(&x->b->lock);
}

/* One message from the server: to stdout on one line. */
static void
take_message(struct xfer *x, const char *text, size_t len)
{
    json_t *m = NULL;
    const json_t *mid, *result;
    struct ig_err err;
    int answer;

    if (ig_json_parse(text, len, &m, &err) != IG_OK) {
        mcp_log(x->b, "dropped a message from the server: %s", err.msg);
        return;
    }
    mid = json_is_object(m) ? json_object_get(m, "id") : NULL;
    result = json_is_object(m) ? json_object_get(m, "result") : NULL;
    answer = x->id != NULL && mid != NULL &&
             json_equal(ig_json_unconst(mid), ig_json_unconst(x->id)) &&
             (result != NULL || json_object_get(m, "error") != NULL);
    if (answer && x->is_init && result != NULL)
        keep_version(x, m);
    if (mcp_line(x->b, m) == 0 && answer)
        x->answered = 1;
    if (answer && x->is_init && result != NULL && x->b->initialized != NULL)
        x->b->initialized(x->b);
    json_decref(m);
}

static int
on_event(void *ctx, const struct ig_sse_event *ev)
{
    struct xfer *x = ctx;

    if (ev->data_len > 0) /* an empty one primes the stream */
        take_message(x, ev->data, ev->data_len);
    /* The answer ends a POST's stream (the server SHOULD close it then);
       one left open would hold this thread and its slot. */
    x->done = x->answered;
    return x->done;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t len = size * n, room;

    if (x->kind == KIND_UNKNOWN)
        decide(x);
    switch (x->kind) {
    case KIND_SSE:
        x->failed = ig_sse_feed(&x->sse, p, len, on_event, x, &x->err);
        return x->failed == IG_OK ? len : 0;
    case KIND_JSON:
        if ((x->failed = ig_buf_add(&x->body, p, len)) != IG_OK)
            (void)ig_err_set(&x->err, x->failed,
                             "the server's answer is larger than %d bytes",
                             IG_MCP_MESSAGE_MAX);
        return x->failed == IG_OK ? len : 0;
    default: /* an error answer: its start is enough */
        room = x->body.max - x->body.len;
        if (ig_buf_add(&x->body, p, len < room ? len : room) != IG_OK)
            ig_buf_reset(&x->body); /* no memory: no message */
        return len;
    }
}

static int
on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    struct xfer *x = arg;

    (void)a;
    (void)b;
    (void)c;
    (void)d;
    return x->abortable && atomic_load(&x->b->stopping);
}

/* Append one header line to *l; -1 when out of memory. */
static int
add_header(struct curl_slist **l, const char *line)
{
    struct curl_slist *t = curl_slist_append(*l, line);

    if (t == NULL)
        return -1;
    *l = t;
    return 0;
}

/* The request's headers: the token, Accept, the session and version once
   known (and for a POST, the body's type). NULL when out of memory. */
static struct curl_slist *
headers(struct xfer *x, const char *method, const char *accept)
{
    char sess[HEADER_MAX], ver[HEADER_MAX];
    struct curl_slist *l = NULL;
    int bad;

    (void)pthread_mutex_lock(&x->b->lock);
    sess[0] = ver[0] = '\0';
    if (x->b->session[0] != '\0')
        (void)snprintf(sess, sizeof(sess), "Mcp-Session-Id: %s", x->b->session);
    if (x->b->version[0] != '\0')
        (void)snprintf(ver, sizeof(ver), "MCP-Protocol-Version: %s",
                       x->b->version);
    (void)pthread_mutex_unlock(&x->b->lock);
    x->sent_session = sess[0] != '\0';
    bad = add_header(&l, x->b->auth) || add_header(&l, "Expect:") ||
          (accept != NULL && add_header(&l, accept)) ||
          (strcmp(method, "POST") == 0 &&
           add_header(&l, "Content-Type: application/json")) ||
          (sess[0] != '\0' && add_header(&l, sess)) ||
          (ver[0] != '\0' && add_header(&l, ver));
    if (bad) {
        ig_curl_headers_free(l);
        return NULL;
    }
    return l;
}

/* Set up and perform one request; the CURLcode (errbuf says more). */
static CURLcode
perform(struct xfer *x, const char *method, const char *body, size_t len,
        const char *accept, long timeout_ms, char *errbuf)
{
    struct curl_slist *hdr;
    CURLcode rc;
    CURL *c = x->curl;

    if ((hdr = headers(x, method, accept)) == NULL)
        return CURLE_OUT_OF_MEMORY;
    if (ig_curl_harden(c, IG_CLI_HTTP_CONNECT_TIMEOUT_MS, timeout_ms,
                       &x->err) != IG_OK) {
        ig_curl_headers_free(hdr);
        return CURLE_FAILED_INIT;
    }
    (void)curl_easy_setopt(c, CURLOPT_URL, x->b->url);
    (void)curl_easy_setopt(c, CURLOPT_USERAGENT, "intentgate-mcp");
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    (void)curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    (void)curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    (void)curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    (void)curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    (void)curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
    (void)curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    if (strcmp(method, "POST") == 0) {
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "DELETE") == 0) {
        (void)curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
    }
    rc = curl_easy_perform(c);
    if (x->kind == KIND_UNKNOWN && rc == CURLE_OK)
        decide(x); /* no body at all */
    ig_curl_headers_free(hdr);
    return rc;
}

static int
xfer_init(struct xfer *x, struct mcp_bridge *b)
{
    memset(x, 0, sizeof(*x));
    x->b = b;
    ig_sse_init(&x->sse, IG_MCP_SSE_EVENT_MAX);
    ig_buf_init(&x->body, IG_MCP_MESSAGE_MAX);
    x->curl = curl_easy_init();
    return x->curl != NULL ? 0 : -1;
}

static void
xfer_release(struct xfer *x)
{
    if (x->curl != NULL)
        curl_easy_cleanup(x->curl);
    ig_sse_release(&x->sse);
    ig_buf_release(&x->body);
}

/* Why a finished POST or GET did not deliver, into why ("" when it did;
   a 202 and a 2xx without a body deliver nothing and are fine). */
static void
outcome(struct xfer *x, CURLcode rc, const char *errbuf, char *why, size_t size)
{
    char msg[IG_MCP_ERROR_MESSAGE_MAX + 1];

    why[0] = '\0';
    if (x->done)
        return;
    if (rc != CURLE_OK && x->failed != IG_OK)
        (void)snprintf(why, size, "%s", x->err.msg);
    else if (rc != CURLE_OK)
        (void)snprintf(why, size, "cannot reach %s: %s", x->b->url,
                       errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else if (x->status == 404 && x->sent_session)
        (void)snprintf(why, size,
                       "HTTP 404: the MCP session has ended on the server; "
                       "restart the client to initialize a new one");
    else if (x->status < 200 || x->status > 299 ||
             (x->kind == KIND_OTHER && x->body.len > 0)) {
        mcp_rpc_message(x->body.data, x->body.len, msg, sizeof(msg));
        (void)snprintf(why, size, "HTTP %ld%s%s%s", x->status,
                       x->status / 100 == 2 ? " with an unexpected "
                                              "Content-Type"
                                            : "",
                       msg[0] ? ": " : "", msg);
    }
}

void
mcp_post(struct mcp_bridge *b, const char *body, size_t len, const json_t *id,
         int is_init)
{
    char errbuf[CURL_ERROR_SIZE], why[IG_MCP_ERROR_MESSAGE_MAX + 256];
    struct xfer x;
    CURLcode rc = CURLE_OUT_OF_MEMORY;

    errbuf[0] = '\0';
    if (xfer_init(&x, b) == 0) {
        x.id = id;
        x.is_init = is_init;
        x.abortable = 1;
        rc = perform(&x, "POST", body, len,
                     "Accept: application/json, text/event-stream",
                     IG_MCP_POST_TIMEOUT_MS, errbuf);
        if (rc == CURLE_OK && x.kind == KIND_JSON)
            take_message(&x, x.body.data, x.body.len);
    }
    outcome(&x, rc, errbuf, why, sizeof(why));
    if (why[0] == '\0' && id != NULL && !x.answered && x.status != 202 &&
        (x.kind == KIND_SSE || x.kind == KIND_JSON))
        (void)snprintf(why, sizeof(why),
                       "the server's answer held no response to this "
                       "request");
    if (atomic_load(&b->stopping) && why[0] != '\0')
        (void)snprintf(why, sizeof(why), "the bridge is shutting down");
    if (why[0] != '\0' && id != NULL && !x.answered)
        mcp_error_line(b, id, -32000, "%s", why);
    else if (why[0] != '\0')
        mcp_log(b, "a message to the server failed: %s", why);
    xfer_release(&x);
}

void
mcp_get_stream(struct mcp_bridge *b)
{
    char errbuf[CURL_ERROR_SIZE], why[IG_MCP_ERROR_MESSAGE_MAX + 256];
    struct xfer x;
    CURLcode rc = CURLE_OUT_OF_MEMORY;

    errbuf[0] = '\0';
    if (xfer_init(&x, b) == 0) {
        x.abortable = 1;
        rc = perform(&x, "GET", NULL, 0, "Accept: text/event-stream",
                     IG_MCP_STREAM_TIMEOUT_MS, errbuf);
    }
    if (!atomic_load(&b->stopping) && !(rc == CURLE_OK && x.status == 405)) {
        outcome(&x, rc, errbuf, why, sizeof(why));
        if (why[0] != '\0')
            mcp_log(b, "the GET stream failed: %s", why);
        else
            mcp_log(b, "the server ended the GET stream");
    }
    xfer_release(&x);
}

void
mcp_delete(struct mcp_bridge *b)
{
    char errbuf[CURL_ERROR_SIZE];
    struct xfer x;
    CURLcode rc;
    int has;

    (void)pthread_mutex_lock(&b->lock);
    has = b->session[0] != '\0';
    (void)pthread_mutex_unlock(&b->lock);
    if (!has)
        return;
    errbuf[0] = '\0';
    if (xfer_init(&x, b) != 0) {
        xfer_release(&x);
        return;
    }
    rc = perform(&x, "DELETE", NULL, 0, NULL, IG_MCP_DELETE_TIMEOUT_MS, errbuf);
    if (rc != CURLE_OK)
        mcp_log(b, "ending the session failed: cannot reach %s: %s", b->url,
                errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else if (x.status != 405 && (x.status < 200 || x.status > 299))
        mcp_log(b, "ending the session failed: HTTP %ld", x.status);
    xfer_release(&x);
}
