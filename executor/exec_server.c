/*
 * exec_server.c - the executor's HTTP server: libmicrohttpd with a thread
 * per connection (an execution blocks while it redeems, runs and reports),
 * bodies capped at IG_JSON_MAX_BYTES, JSON in and canonical JSON out.
 */
#include "exec_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec_execute.h"
#include "exec_stream.h"
#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_json.h"
#include "ig_limits.h"

struct exec_server {
    struct exec_ctx x;
    struct MHD_Daemon *mhd;
    unsigned short port;
};

struct req {
    struct ig_buf body;
    int too_large;
};

static enum MHD_Result
send_json(struct MHD_Connection *c, unsigned int status, json_t *v)
{
    struct ig_buf b;
    struct MHD_Response *r;
    enum MHD_Result ret;
    size_t n = 0;
    char *text;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (v == NULL || ig_canon_write(v, &b, NULL) != IG_OK) {
        static const char oops[] = "{\"error\":{\"code\":\"INTERNAL\","
                                   "\"message\":\"cannot write the "
                                   "reply\"}}";
        ig_buf_reset(&b);
        status = 500;
        if (ig_buf_add(&b, oops, sizeof(oops) - 1) != IG_OK) {
            json_decref(v);
            ig_buf_release(&b);
            return MHD_NO;
        }
    }
    json_decref(v);
    text = ig_buf_take(&b, &n);
    if (text == NULL)
        return MHD_NO;
    r = MHD_create_response_from_buffer(n, text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                  "application/json");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* Strict body {"intent": {...}, "grant": "..."} or an error reply. */
static json_t *
read_body(const struct req *q, json_t **reply, unsigned int *status)
{
    struct ig_err err;
    const char *k;
    json_t *v = NULL, *val;

    *status = 400;
    if (ig_json_parse(q->body.data != NULL ? q->body.data : "", q->body.len, &v,
                      &err) != IG_OK) {
        *reply = exec_error("INVALID_JSON", err.msg);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        *reply = exec_error("INVALID_JSON", "the body must be an object");
        return NULL;
    }
    json_object_foreach(v, k, val)
    {
        if (strcmp(k, "intent") != 0 && strcmp(k, "grant") != 0) {
            json_decref(v);
            *reply = exec_error("UNKNOWN_FIELD",
                                "the body holds only intent and grant");
            return NULL;
        }
    }
    return v;
}

/* "/v1/executions/{id}/cancel" -> id (into buf), else NULL. */
static const char *
cancel_id(const char *url, char *buf, size_t cap)
{
    static const char pre[] = "/v1/executions/", suf[] = "/cancel";
    size_t n = strlen(url), pl = sizeof(pre) - 1, sl = sizeof(suf) - 1;

    if (n <= pl + sl || strncmp(url, pre, pl) != 0 ||
        strcmp(url + n - sl, suf) != 0 || n - pl - sl >= cap)
        return NULL;
    memcpy(buf, url + pl, n - pl - sl);
    buf[n - pl - sl] = '\0';
    return strchr(buf, '/') == NULL ? buf : NULL;
}

static int
wants_stream(struct MHD_Connection *c)
{
    const char *a =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

    return a != NULL && strstr(a, "application/x-ndjson") != NULL;
}

static enum MHD_Result
route(struct exec_server *s, struct MHD_Connection *c, const char *url,
      const char *method, struct req *q)
{
    unsigned int status = 200;
    json_t *body, *reply = NULL;
    char id[80];
    int cancel;

    if (strcmp(url, "/healthz") == 0)
        return send_json(c, 200, json_pack("{s:s}", "status", "ok"));
    cancel = cancel_id(url, id, sizeof(id)) != NULL;
    if (strcmp(url, "/v1/execute") != 0 && !cancel)
        return send_json(c, 404, exec_error("NOT_FOUND", "no such path"));
    if (strcmp(method, "POST") != 0)
        return send_json(c, 405, exec_error("METHOD_NOT_ALLOWED", "use POST"));
    if (q->too_large)
        return send_json(c, 413,
                         exec_error("BODY_TOO_LARGE", "the body is too big"));
    body = read_body(q, &reply, &status);
    if (body == NULL)
        return send_json(c, status, reply);
    if (cancel)
        reply = exec_cancel(&s->x, id, body, &status);
    else if (wants_stream(c)) {
        enum MHD_Result ret = exec_stream_execute(&s->x, c, body, send_json);
        json_decref(body);
        return ret;
    } else
        reply = exec_execute(&s->x, body, &status);
    json_decref(body);
    return send_json(c, status, reply);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **con_cls)
{
    struct req *q = *con_cls;
    (void)version;

    if (q == NULL) {
        q = calloc(1, sizeof(*q));
        if (q == NULL)
            return MHD_NO;
        ig_buf_init(&q->body, IG_JSON_MAX_BYTES);
        *con_cls = q;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (ig_buf_add(&q->body, upload, *upload_size) != IG_OK)
            q->too_large = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    return route(cls, c, url, method, q);
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
    struct req *q = *con_cls;
    (void)cls;
    (void)c;
    (void)toe;

    if (q != NULL) {
        ig_buf_release(&q->body);
        free(q);
    }
    *con_cls = NULL;
}

/* The executor's PDP token: from its 0600 file, else the environment. */
static enum ig_status
load_token(const struct exec_config *c, char *out, size_t cap,
           struct ig_err *err)
{
    const char *env = getenv("INTENTGATE_EXECUTOR_TOKEN");
    struct stat sb;
    FILE *f;
    size_t n;

    if (c->pdp_token_file == NULL) {
        if (env == NULL || env[0] == '\0' || strlen(env) >= cap)
            return ig_err_set(err, IG_ERR_NOTFOUND,
                              "no PDP token: set pdp_token_file or "
                              "INTENTGATE_EXECUTOR_TOKEN");
        memcpy(out, env, strlen(env) + 1);
        return IG_OK;
    }
    if (stat(c->pdp_token_file, &sb) != 0 || (sb.st_mode & 077) != 0)
        return ig_err_set(err, IG_ERR_IO,
                          "%s must exist and be readable by its owner only "
                          "(chmod 600)",
                          c->pdp_token_file);
    f = fopen(c->pdp_token_file, "r");
    if (f == NULL)
        return ig_err_set(err, IG_ERR_IO, "cannot read %s", c->pdp_token_file);
    n = fread(out, 1, cap - 1, f);
    (void)fclose(f);
    out[n] = '\0';
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        out[--n] = '\0';
    if (n == 0)
        return ig_err_set(err, IG_ERR_INVALID, "%s is empty",
                          c->pdp_token_file);
    return IG_OK;
}

static enum ig_status
load_parts(struct exec_server *s, const struct exec_config *c,
           struct ig_err *err)
{
    struct ig_public_key pub;
    char token[512];
    enum ig_status st;
    size_t i;

    if (ig_crypto_init() != IG_OK || ig_keyring_new(&s->x.keys) != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize crypto");
    for (i = 0; i < c->npublic_keys; i++) {
        if (ig_public_key_load_file(c->public_keys[i], &pub, err) != IG_OK)
            return IG_ERR_IO;
        if (ig_keyring_find(s->x.keys, pub.kid, strlen(pub.kid)) == NULL &&
            ig_keyring_add(s->x.keys, &pub) != IG_OK)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    if (exec_registry_load(c->registry, &s->x.registry, err) != IG_OK ||
        exec_secrets_open(c->secrets, c->secrets_key, &s->x.secrets, err) !=
            IG_OK)
        return IG_ERR_INVALID;
    st = load_token(c, token, sizeof(token), err);
    if (st == IG_OK)
        st = exec_pdp_new(c->pdp_url, token, c->pdp_timeout_ms, &s->x.pdp, err);
    sodium_memzero(token, sizeof(token));
    /* Both secrets are loaded: drop them from the environment. */
    (void)unsetenv(EXEC_SECRETS_KEY_ENV);
    (void)unsetenv("INTENTGATE_EXECUTOR_TOKEN");
    return st;
}

enum ig_status
exec_server_start(const struct exec_config *c, struct exec_server **out,
                  struct ig_err *err)
{
    struct exec_server *s = calloc(1, sizeof(*s));
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;

    *out = NULL;
    if (s == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    s->x.cfg = c;
    pthread_mutex_init(&s->x.mu, NULL);
    if (load_parts(s, c, err) != IG_OK)
        goto fail;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(c->listen_port);
    if (inet_pton(AF_INET, c->listen_host, &sa.sin_addr) != 1) {
        (void)ig_err_set(err, IG_ERR_INVALID, "listen: %s is not IPv4",
                         c->listen_host);
        goto fail;
    }
    s->mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
        NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_NOTIFY_COMPLETED, on_done, s, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)120, MHD_OPTION_END);
    if (s->mhd == NULL) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot listen on %s:%u",
                         c->listen_host, c->listen_port);
        goto fail;
    }
    info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info != NULL ? info->port : c->listen_port;
    *out = s;
    return IG_OK;
fail:
    exec_server_stop(s);
    return IG_ERR_INVALID;
}

unsigned short
exec_server_port(const struct exec_server *s)
{
    return s->port;
}

void
exec_server_stop(struct exec_server *s)
{
    if (s == NULL)
        return;
    if (s->mhd != NULL)
        MHD_stop_daemon(s->mhd);
    exec_slots_free(&s->x);
    exec_pdp_free(s->x.pdp);
    exec_secrets_free(s->x.secrets);
    exec_registry_free(s->x.registry);
    ig_keyring_free(s->x.keys);
    free(s);
}
