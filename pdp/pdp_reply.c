/*
 * pdp_reply.c - what every endpoint uses to answer: replies (JSON, text,
 * errors, extra headers), the body parsed as a JSON object, bearer-token
 * authentication, and suspending a request until a store write or
 * another thread resumes it.
 *
 * An endpoint fills r->reply (phase PH_READY) or suspends r (PH_WAITING)
 * with an on_resume that fills it later; the router (pdp_route.c) queues
 * the reply either way. This file knows no endpoint and no route, so
 * every endpoint can call it without depending on the others.
 */
#include "pdp_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "ig_limits.h"

/* ---- replies ---- */

static void
reply_set(struct pdp_req *r, unsigned int status, char *body, size_t len,
          const char *ctype)
{
    free(r->reply.body);
    r->reply.status = status;
    r->reply.body = body;
    r->reply.len = len;
    r->reply.content_type = ctype;
    r->phase = PH_READY;
}

void
pdp_reply_json(struct pdp_req *r, unsigned int status, json_t *v)
{
    char *s = pdp_json_text(v);

    json_decref(v);
    if (s == NULL) {
        static const char oom[] = "{\"error\":{\"code\":\"INTERNAL\","
                                  "\"message\":\"out of memory\"}}";
        s = strdup(oom);
        status = 500;
    }
    reply_set(r, status, s, s != NULL ? strlen(s) : 0, "application/json");
}

void
pdp_reply_text(struct pdp_req *r, unsigned int status, const char *text,
               size_t len, const char *content_type)
{
    char *s = malloc(len + 1);

    if (s != NULL) {
        memcpy(s, text, len);
        s[len] = '\0';
    }
    reply_set(r, s != NULL ? status : 500, s, s != NULL ? len : 0,
              content_type);
}

void
pdp_reply_error(struct pdp_req *r, unsigned int status, const char *code,
                const char *field, const char *fmt, ...)
{
    char msg[IG_ERROR_MESSAGE_MAX + 1];
    va_list ap;
    json_t *err;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pdp_metrics_reject(&r->srv->metrics, code);
    (void)snprintf(r->reply.code, sizeof(r->reply.code), "%s", code);
    err = json_pack("{s:s, s:s}", "code", code, "message", msg);
    /* json_object_set_new steals the string. */
    if (err != NULL && field != NULL &&
        json_object_set_new(err, "field", json_string(field)) != 0) {
        json_decref(err);
        err = NULL;
    }
    /* "o" steals err; without it the pack fails, and a NULL reply is the
       500 out-of-memory answer: never an error without its parts. */
    pdp_reply_json(r, status, json_pack("{s:o}", "error", err));
}

int
pdp_reply_header(struct pdp_req *r, const char *name, const char *value)
{
    char *v;

    if (r->reply.nhdr >= PDP_REPLY_HEADERS || (v = strdup(value)) == NULL)
        return -1;
    r->reply.hdr_name[r->reply.nhdr] = name;
    r->reply.hdr_value[r->reply.nhdr++] = v;
    return 0;
}

/* ---- request helpers ---- */

json_t *
pdp_req_json_object(struct pdp_req *r)
{
    const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_TYPE);
    struct ig_err err;
    enum ig_status st;
    json_t *v = NULL;

    if (ct == NULL || strncmp(ct, "application/json", 16) != 0 ||
        (ct[16] != '\0' && ct[16] != ';')) {
        pdp_reply_error(r, 415, "UNSUPPORTED_MEDIA_TYPE", NULL,
                        "send the body as Content-Type: application/json");
        return NULL;
    }
    st = ig_json_parse(r->body.data != NULL ? r->body.data : "", r->body.len,
                       &v, &err);
    if (st == IG_ERR_LIMIT) {
        pdp_reply_error(r, 400, "JSON_LIMIT_EXCEEDED", NULL,
                        "line %d, column %d: %s", err.line, err.column,
                        err.msg);
        return NULL;
    }
    if (st != IG_OK) {
        pdp_reply_error(r, 400, "INVALID_JSON", NULL, "line %d, column %d: %s",
                        err.line, err.column, err.msg);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        pdp_reply_error(r, 400, "INVALID_JSON", NULL,
                        "the body must be a JSON object");
        return NULL;
    }
    return v;
}

const struct pdp_principal *
pdp_req_auth(struct pdp_req *r, unsigned roles)
{
    const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    const struct pdp_principal *p;

    /* Every refusal is counted for the audit log (pdp_refusals.c), never
       with the token. */
    if (h == NULL || strncmp(h, "Bearer ", 7) != 0 || h[7] == '\0') {
        pdp_reply_error(r, 401, "UNAUTHENTICATED", NULL,
                        "send Authorization: Bearer <token>");
        pdp_req_refused(r, PDP_REFUSED_AUTH, NULL, "UNAUTHENTICATED");
        return NULL;
    }
    p = pdp_config_authenticate(r->srv->cfg, h + 7, strlen(h + 7));
    if (p == NULL) {
        pdp_reply_error(r, 401, "UNAUTHENTICATED", NULL,
                        "the bearer token is not valid");
        pdp_req_refused(r, PDP_REFUSED_AUTH, NULL, "UNAUTHENTICATED");
        return NULL;
    }
    if ((roles & (1u << p->role)) == 0) {
        pdp_reply_error(r, 403, "FORBIDDEN", NULL,
                        "this token may not call this endpoint");
        pdp_req_refused(r, PDP_REFUSED_AUTH, p, "FORBIDDEN");
        return NULL;
    }
    return p;
}

/* ---- suspend / resume ---- */

void
pdp_req_suspend(struct pdp_req *r, void (*on_resume)(struct pdp_req *r))
{
    r->on_resume = on_resume;
    r->phase = PH_WAITING;
    MHD_suspend_connection(r->conn);
}

void
pdp_req_resume(struct pdp_req *r)
{
    MHD_resume_connection(r->conn);
}

void
pdp_req_write_done(void *ctx, enum ig_status st)
{
    struct pdp_req *r = ctx;

    r->op_status = st;
    pdp_req_resume(r);
}

void
pdp_req_write(struct pdp_req *r, void (*on_resume)(struct pdp_req *r),
              enum ig_status (*submit)(struct pdp_req *r))
{
    enum ig_status st;

    /* Suspend first: the writer may finish before submit returns. */
    pdp_req_suspend(r, on_resume);
    st = submit(r);
    if (st != IG_OK)
        pdp_req_write_done(r, st);
}
