/*
 * exec_pdp.c - PDP client over libcurl (see exec_pdp.h).
 */
#include "exec_pdp.h"

#include <curl/curl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_curl.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_curl.h"
#include "ig_json.h"
#include "ig_limits.h"

struct exec_pdp {
    char *base;
    char *auth; /* "Authorization: Bearer …", sodium_malloc'd */
    size_t auth_len;
    long timeout_ms;
};

enum ig_status
exec_pdp_new(const char *base_url, const char *token, long timeout_ms,
             struct exec_pdp **out, struct ig_err *err)
{
    struct exec_pdp *p = calloc(1, sizeof(*p));
    size_t n;

    *out = NULL;
    if (p == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (strncmp(base_url, "http://", 7) != 0 &&
        strncmp(base_url, "https://", 8) != 0) {
        free(p);
        return ig_err_set(err, IG_ERR_INVALID,
                          "the PDP URL must start with http:// or https://");
    }
    /* It goes into a header line: a CR, LF or space would split it. */
    for (n = 0; token[n] != '\0'; n++)
        if ((unsigned char)token[n] <= 0x20 || (unsigned char)token[n] >= 0x7f)
            break;
    if (n == 0 || token[n] != '\0') {
        free(p);
        return ig_err_set(err, IG_ERR_INVALID,
                          "the PDP token must be printable ASCII without "
                          "spaces");
    }
    p->base = strdup(base_url);
    n = strlen("Authorization: Bearer ") + strlen(token) + 1;
    p->auth = sodium_malloc(n);
    if (p->base == NULL || p->auth == NULL) {
        exec_pdp_free(p);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    (void)snprintf(p->auth, n, "Authorization: Bearer %s", token);
    p->auth_len = n;
    n = strlen(p->base);
    while (n > 0 && p->base[n - 1] == '/')
        p->base[--n] = '\0';
    p->timeout_ms = timeout_ms > 0 ? timeout_ms : IG_EXEC_PDP_TIMEOUT_MS;
    *out = p;
    return IG_OK;
}

void
exec_pdp_free(struct exec_pdp *p)
{
    if (p == NULL)
        return;
    if (p->auth != NULL)
        sodium_free(p->auth); /* wipes */
    free(p->base);
    free(p);
}

/* POST body to path (GET when body is NULL) with the header line auth and
   a timeout in ms; *status gets the HTTP status, reply the body. */
static enum ig_status
post_as(struct exec_pdp *p, const char *auth, long timeout_ms, const char *path,
        const char *body, long *status, struct ig_buf *reply,
        struct ig_err *err)
{
    struct curl_slist *h = NULL, *h2;
    char url[IG_EXEC_URL_MAX];
    CURL *c = exec_curl_handle(0);
    CURLcode rc;
    int n;

    *status = 0;
    if (c == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot start an HTTP call");
    n = snprintf(url, sizeof(url), "%s%s", p->base, path);
    if (n < 0 || (size_t)n >= sizeof(url))
        return ig_err_set(err, IG_ERR_INVALID, "the PDP URL is too long");
    h = curl_slist_append(h, auth);
    h2 = h != NULL ? curl_slist_append(h, "Content-Type: application/json")
                   : NULL;
    if (h2 == NULL) {
        ig_curl_headers_free(h);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    if (ig_curl_harden(c, p->timeout_ms, timeout_ms, err) != IG_OK) {
        ig_curl_headers_free(h2);
        return IG_ERR_IO;
    }
    (void)curl_easy_setopt(c, CURLOPT_URL, url);
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, h2);
    if (body != NULL)
        (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    else
        (void)curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ig_curl_to_buf);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, reply);
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    /* The reused handle keeps the pointer: drop it before the list goes. */
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    ig_curl_headers_free(h2);
    if (rc != CURLE_OK)
        return ig_err_set(err, IG_ERR_IO, "PDP unreachable: %s",
                          curl_easy_strerror(rc));
    return IG_OK;
}

static enum ig_status
post(struct exec_pdp *p, const char *path, const char *body, long *status,
     struct ig_buf *reply, struct ig_err *err)
{
    return post_as(p, p->auth, p->timeout_ms, path, body, status, reply, err);
}

/* Map a PDP answer to a status; err gets its error code and message. */
static enum ig_status
map_status(long status, const struct ig_buf *reply, struct ig_err *err)
{
    json_t *v = NULL, *e;
    enum ig_status st;

    if (status == 200)
        return IG_OK;
    /* Worth trying again later: the PDP or the way to it is failing
       (5xx, timeouts, throttling, an executor token it does not know
       yet). Every other 4xx is an answer that will not change. */
    if (status >= 500 || status == 401 || status == 408 || status == 429 ||
        status < 400)
        st = IG_ERR_IO;
    else
        st = status == 409   ? IG_ERR_EXISTS
             : status == 410 ? IG_ERR_EXPIRED
             : status == 403 ? IG_ERR_CRYPTO
             : status == 404 ? IG_ERR_NOTFOUND
                             : IG_ERR_INVALID;
    if (ig_json_parse(reply->data != NULL ? reply->data : "", reply->len, &v,
                      NULL) == IG_OK &&
        (e = json_object_get(v, "error")) != NULL)
        (void)ig_err_set(err, st, "PDP answered %ld %.64s: %.160s", status,
                         json_string_value(json_object_get(e, "code")),
                         json_string_value(json_object_get(e, "message")));
    else
        (void)ig_err_set(err, st, "PDP answered %ld", status);
    json_decref(v);
    return st;
}

enum ig_status
exec_pdp_redeem(struct exec_pdp *p, const char *grant, const char *intent_id,
                json_t **claims, struct ig_err *err)
{
    struct ig_buf reply, body;
    json_t *req, *v = NULL;
    enum ig_status st;
    long status;

    if (claims != NULL)
        *claims = NULL;
    ig_buf_init(&reply, IG_EXEC_PDP_REPLY_MAX_BYTES);
    ig_buf_init(&body, IG_TOKEN_MAX_BYTES * 2);
    req = json_pack("{s:s, s:s}", "grant", grant, "intent_id", intent_id);
    st = req != NULL ? ig_canon_write(req, &body, err) : IG_ERR_NOMEM;
    json_decref(req);
    if (st == IG_OK)
        st = post(p, "/v1/grants/redeem", body.data, &status, &reply, err);
    if (st == IG_OK)
        st = map_status(status, &reply, err);
    if (st == IG_OK && claims != NULL) {
        if (ig_json_parse(reply.data != NULL ? reply.data : "", reply.len, &v,
                          NULL) != IG_OK ||
            !json_is_object(json_object_get(v, "claims")))
            st = ig_err_set(err, IG_ERR_IO, "the PDP's answer is malformed");
        else
            *claims = json_incref(json_object_get(v, "claims"));
    }
    json_decref(v);
    ig_buf_release(&reply);
    ig_buf_release(&body);
    return st;
}

enum ig_status
exec_pdp_outcome(struct exec_pdp *p, const char *intent_id, const char *outcome,
                 const json_t *detail, struct ig_err *err)
{
    struct ig_buf reply, body;
    char path[sizeof("/v1/executions//outcome") + IG_INTENT_ID_MAX];
    json_t *req, *d;
    enum ig_status st;
    long status;

    if (strlen(intent_id) > IG_INTENT_ID_MAX)
        return ig_err_set(err, IG_ERR_INVALID, "intent id too long");
    (void)snprintf(path, sizeof(path), "/v1/executions/%s/outcome", intent_id);
    ig_buf_init(&reply, IG_EXEC_PDP_REPLY_MAX_BYTES);
    ig_buf_init(&body, IG_JSON_MAX_BYTES);
    d = detail != NULL ? json_incref(ig_json_unconst(detail)) : json_object();
    /* "o" steals d, also when packing fails. */
    req = json_pack("{s:s, s:o}", "outcome", outcome, "detail", d);
    st = req != NULL ? ig_canon_write(req, &body, err) : IG_ERR_NOMEM;
    json_decref(req);
    if (st == IG_OK)
        st = post(p, path, body.data, &status, &reply, err);
    if (st == IG_OK)
        st = map_status(status, &reply, err);
    ig_buf_release(&reply);
    ig_buf_release(&body);
    return st;
}

enum ig_status
exec_pdp_intent(struct exec_pdp *p, const char *intent_id, json_t **binding,
                char *state, size_t state_cap, struct ig_err *err)
{
    char path[sizeof("/v1/intents/") + IG_INTENT_ID_MAX];
    struct ig_buf reply;
    json_t *v = NULL, *b;
    enum ig_status st;
    long status;
    size_t i;

    *binding = NULL;
    for (i = 0; intent_id[i] != '\0'; i++)
        if (!((intent_id[i] >= '0' && intent_id[i] <= '9') ||
              (intent_id[i] >= 'a' && intent_id[i] <= 'f') ||
              intent_id[i] == '-'))
            break;
    if (i == 0 || intent_id[i] != '\0' || i > IG_INTENT_ID_MAX)
        return ig_err_set(err, IG_ERR_INVALID, "malformed intent id");
    (void)snprintf(path, sizeof(path), "/v1/intents/%s", intent_id);
    ig_buf_init(&reply, IG_EXEC_PDP_REPLY_MAX_BYTES);
    st = post(p, path, NULL, &status, &reply, err);
    if (st == IG_OK)
        st = map_status(status, &reply, err);
    if (st == IG_OK) {
        if (ig_json_parse(reply.data != NULL ? reply.data : "", reply.len, &v,
                          NULL) != IG_OK ||
            !json_is_object(b = json_object_get(v, "intent")))
            st = ig_err_set(err, IG_ERR_IO, "the PDP's answer is malformed");
        else
            *binding = json_incref(b);
        if (st == IG_OK && state != NULL)
            (void)snprintf(state, state_cap, "%s",
                           json_is_string(json_object_get(v, "state"))
                               ? json_string_value(json_object_get(v, "state"))
                               : "");
    }
    json_decref(v);
    ig_buf_release(&reply);
    return st;
}

enum ig_status
exec_pdp_call_as(struct exec_pdp *p, const char *token, const char *path,
                 const char *body, long timeout_ms, long *status,
                 json_t **reply, struct ig_err *err)
{
    static const char pre[] = "Authorization: Bearer ";
    struct ig_buf buf;
    enum ig_status st;
    size_t n, i;
    char *auth;

    *status = 0;
    if (reply != NULL)
        *reply = NULL;
    n = strlen(token);
    for (i = 0; i < n; i++)
        if ((unsigned char)token[i] <= 0x20 || (unsigned char)token[i] >= 0x7f)
            break;
    if (n == 0 || i < n || n > IG_TOKEN_MAX_BYTES)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the bearer token must be printable ASCII without "
                          "spaces");
    if ((auth = sodium_malloc(sizeof(pre) + n)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    memcpy(auth, pre, sizeof(pre) - 1);
    memcpy(auth + sizeof(pre) - 1, token, n + 1);
    ig_buf_init(&buf, IG_EXEC_PDP_REPLY_MAX_BYTES);
    st = post_as(p, auth, timeout_ms > 0 ? timeout_ms : p->timeout_ms, path,
                 body, status, &buf, err);
    sodium_free(auth);
    if (st == IG_OK && reply != NULL &&
        ig_json_parse(buf.data != NULL ? buf.data : "", buf.len, reply, NULL) !=
            IG_OK)
        *reply = NULL;
    ig_buf_release(&buf);
    return st;
}

enum ig_status
exec_pdp_event(struct exec_pdp *p, const json_t *event, struct ig_err *err)
{
    struct ig_buf reply, body;
    enum ig_status st;
    long status;

    ig_buf_init(&reply, IG_EXEC_PDP_REPLY_MAX_BYTES);
    ig_buf_init(&body, IG_JSON_MAX_BYTES);
    st = ig_canon_write(event, &body, err);
    if (st == IG_OK)
        st = post(p, "/v1/executor/events", body.data, &status, &reply, err);
    if (st == IG_OK)
        st = map_status(status, &reply, err);
    ig_buf_release(&reply);
    ig_buf_release(&body);
    return st;
}
