/*
 * exec_mcp_rpc.c - JSON-RPC 2.0 messages for the MCP gateway: the strict
 * reader, the canonical writers and the stdio line splitter.
 *
 * Reading (exec_mcp_parse), in this order:
 *   1. ig_json_parse: not JSON -> -32700.
 *   2. The top level must be an object (an array is a batch, refused).
 *   3. Its members are sorted into six slots; any other name is counted.
 *   4. The id is judged first, so that every later refusal can carry it
 *      back to the sender in *bad_id.
 *   5. "jsonrpc", unknown members, then the kind: a "method" makes a
 *      request (with an id) or a notification (without), and such a
 *      message carries no "result" or "error"; otherwise exactly one of
 *      "result" and "error", no "params", and an id (an error may have
 *      none, or null).
 * Nothing is copied: the message keeps the parsed root and points into it.
 *
 * Writing: the members of a message are few and fixed, so the writers
 * put them down in canonical (byte) order by hand - error < id < jsonrpc
 * < method < params < result, and code < data < message inside an error -
 * with each value through ig_canon_write. No jansson object is built, so
 * the caller's borrowed values are never touched, not even their
 * reference counts. The text goes to a scratch buffer first and reaches
 * out only whole.
 *
 * Splitting (exec_mcp_lines_feed): a line that ends inside the bytes fed
 * and has nothing buffered before it is handed to fn in place; otherwise
 * its bytes gather in l->line, whose cap is max + 1 (room for the '\r' of
 * a line of exactly max bytes). A line that would outgrow it is reported
 * at once and skipped up to its '\n'.
 */
#include "exec_mcp_rpc.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_json.h"

/* 2^53: the largest magnitude up to which a double holds every integer. */
#define ID_MAX_MAGNITUDE 9007199254740992.0
#define ID_MAX_INTEGER 9007199254740992LL

static int
integral(double d)
{
    /* also false for NaN */
    if (!(d >= -ID_MAX_MAGNITUDE && d <= ID_MAX_MAGNITUDE))
        return 0;
    return (double)(int64_t)d == d;
}

int
exec_mcp_id_valid(const json_t *id)
{
    json_int_t i;

    if (id == NULL)
        return 0;
    if (json_is_string(id))
        return 1;
    if (json_is_real(id))
        return integral(json_real_value(id));
    if (json_is_integer(id)) {
        i = json_integer_value(id);
        return i >= -ID_MAX_INTEGER && i <= ID_MAX_INTEGER;
    }
    return 0;
}

int
exec_mcp_id_equal(const json_t *a, const json_t *b)
{
    size_t n;

    if (!exec_mcp_id_valid(a) || !exec_mcp_id_valid(b))
        return 0;
    if (json_is_string(a) != json_is_string(b))
        return 0;
    if (json_is_number(a))
        return json_number_value(a) == json_number_value(b);
    n = json_string_length(a);
    return n == json_string_length(b) &&
           memcmp(json_string_value(a), json_string_value(b), n) == 0;
}

enum ig_status
exec_mcp_id_text(const json_t *id, char *out, size_t cap)
{
    struct ig_buf b;
    enum ig_status st;

    if (cap > 0)
        out[0] = '\0';
    if (!exec_mcp_id_valid(id))
        return IG_ERR_INVALID;
    if (cap == 0)
        return IG_ERR_LIMIT;
    ig_buf_init(&b, cap - 1);
    st = ig_canon_write(id, &b, NULL);
    if (st == IG_OK)
        memcpy(out, b.data, b.len + 1);
    ig_buf_release(&b);
    return st;
}

/* ---- reading ---- */

struct members {
    const json_t *jsonrpc, *id, *method, *params, *result, *error;
    size_t unknown;
};

static void
sort_members(const json_t *root, struct members *s)
{
    const char *k;
    json_t *v;

    memset(s, 0, sizeof(*s));
    json_object_foreach(ig_json_unconst(root), k, v)
    {
        if (strcmp(k, "jsonrpc") == 0)
            s->jsonrpc = v;
        else if (strcmp(k, "id") == 0)
            s->id = v;
        else if (strcmp(k, "method") == 0)
            s->method = v;
        else if (strcmp(k, "params") == 0)
            s->params = v;
        else if (strcmp(k, "result") == 0)
            s->result = v;
        else if (strcmp(k, "error") == 0)
            s->error = v;
        else
            s->unknown++;
    }
}

static int
is_str(const json_t *v, const char *want)
{
    size_t n = strlen(want);

    return json_is_string(v) && json_string_length(v) == n &&
           memcmp(json_string_value(v), want, n) == 0;
}

static enum ig_status
check_method(const struct members *s, struct ig_err *err)
{
    const json_t *v = s->method;

    if (!json_is_string(v) || json_string_length(v) == 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "method is not a non-empty string");
    if (memchr(json_string_value(v), '\0', json_string_length(v)) != NULL)
        return ig_err_set(err, IG_ERR_INVALID, "method holds a NUL");
    if (s->result != NULL || s->error != NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "a request or notification carries result or "
                          "error");
    if (s->params != NULL && !json_is_object(s->params))
        return ig_err_set(err, IG_ERR_INVALID, "params is not an object");
    return IG_OK;
}

static enum ig_status
check_error_object(const json_t *e, struct ig_err *err)
{
    const json_t *code;
    double d;

    if (!json_is_object(e))
        return ig_err_set(err, IG_ERR_INVALID, "error is not an object");
    code = json_object_get(e, "code");
    d = json_is_number(code) ? json_number_value(code) : 0.5;
    if (!integral(d) || d < (double)INT_MIN || d > (double)INT_MAX)
        return ig_err_set(err, IG_ERR_INVALID,
                          "error code is not an integer within int");
    if (!json_is_string(json_object_get(e, "message")))
        return ig_err_set(err, IG_ERR_INVALID, "error message is not a string");
    return IG_OK;
}

static enum ig_status
check_response(const struct members *s, struct ig_err *err)
{
    if ((s->result != NULL) == (s->error != NULL))
        return ig_err_set(err, IG_ERR_INVALID,
                          "a message without method needs exactly one of "
                          "result and error");
    if (s->params != NULL)
        return ig_err_set(err, IG_ERR_INVALID, "a response carries params");
    if (s->result != NULL && !exec_mcp_id_valid(s->id))
        return ig_err_set(err, IG_ERR_INVALID, "a result without an id");
    if (s->error != NULL)
        return check_error_object(s->error, err);
    return IG_OK;
}

/* The shape of the message, its root an object; sets m's fields. */
static enum ig_status
check_shape(const struct members *s, struct exec_mcp_msg *m, struct ig_err *err)
{
    enum ig_status st;

    if (!is_str(s->jsonrpc, "2.0"))
        return ig_err_set(err, IG_ERR_INVALID, "jsonrpc is not \"2.0\"");
    if (s->unknown > 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%zu top-level member(s) other than jsonrpc, id, "
                          "method, params, result, error",
                          s->unknown);
    if (s->method != NULL) {
        if ((st = check_method(s, err)) != IG_OK)
            return st;
        m->kind = s->id != NULL ? EXEC_MCP_REQUEST : EXEC_MCP_NOTIFICATION;
        m->method = json_string_value(s->method);
        m->params = s->params;
    } else {
        if ((st = check_response(s, err)) != IG_OK)
            return st;
        m->kind = s->result != NULL ? EXEC_MCP_RESULT : EXEC_MCP_ERROR;
        m->result = s->result;
        m->error = s->error;
    }
    m->id = exec_mcp_id_valid(s->id) ? s->id : NULL;
    return IG_OK;
}

/* Whether the id member (present or not) may stand: absent, valid, or
   null on what can only be an error response. */
static int
id_acceptable(const struct members *s)
{
    if (s->id == NULL || exec_mcp_id_valid(s->id))
        return 1;
    return json_is_null(s->id) && s->method == NULL && s->error != NULL;
}

enum ig_status
exec_mcp_parse(const char *buf, size_t len, struct exec_mcp_msg *m, int *code,
               json_t **bad_id, struct ig_err *err)
{
    struct members s;
    json_t *root = NULL;
    enum ig_status st;

    memset(m, 0, sizeof(*m));
    *code = 0;
    *bad_id = NULL;
    st = ig_json_parse(buf != NULL ? buf : "", len, &root, err);
    if (st != IG_OK) {
        *code =
            st == IG_ERR_NOMEM ? EXEC_MCP_INTERNAL_ERROR : EXEC_MCP_PARSE_ERROR;
        return st;
    }
    *code = EXEC_MCP_INVALID_REQUEST;
    if (json_is_array(root)) {
        st = ig_err_set(err, IG_ERR_INVALID, "batches are not supported");
        goto out;
    }
    if (!json_is_object(root)) {
        st = ig_err_set(err, IG_ERR_INVALID, "message is not an object");
        goto out;
    }
    sort_members(root, &s);
    if (!id_acceptable(&s)) {
        st = ig_err_set(err, IG_ERR_INVALID,
                        "id is not a string or an integer within 2^53");
        goto out;
    }
    if (exec_mcp_id_valid(s.id))
        *bad_id = json_incref(ig_json_unconst(s.id));
    if ((st = check_shape(&s, m, err)) != IG_OK)
        goto out;
    m->root = root;
    root = NULL;
    json_decref(*bad_id);
    *bad_id = NULL;
    *code = 0;
out:
    if (st != IG_OK) {
        memset(m, 0, sizeof(*m));
        json_decref(root);
    }
    return st;
}

void
exec_mcp_msg_release(struct exec_mcp_msg *m)
{
    if (m == NULL)
        return;
    json_decref(m->root);
    memset(m, 0, sizeof(*m));
}

/* ---- writing ---- */

/* A message under construction; the first failure sticks. */
struct writer {
    struct ig_buf b;
    enum ig_status st;
};

static void
w_begin(struct writer *w, const struct ig_buf *out)
{
    ig_buf_init(&w->b, out->max - out->len);
    w->st = IG_OK;
}

static void
w_lit(struct writer *w, const char *s)
{
    if (w->st == IG_OK)
        w->st = ig_buf_adds(&w->b, s);
}

static void
w_value(struct writer *w, const json_t *v)
{
    if (w->st == IG_OK)
        w->st = ig_canon_write(v, &w->b, NULL);
}

static void
w_string(struct writer *w, const char *s)
{
    if (w->st == IG_OK)
        w->st = ig_canon_string(s, strlen(s), &w->b, NULL);
}

/* The id member's value; NULL writes null. */
static void
w_id(struct writer *w, const json_t *id)
{
    if (id == NULL)
        w_lit(w, "null");
    else
        w_value(w, id);
}

/* "jsonrpc", "method" and, when present, "params" (in that order). */
static void
w_call(struct writer *w, const char *method, const json_t *params)
{
    w_lit(w, "\"jsonrpc\":\"2.0\",\"method\":");
    w_string(w, method);
    if (params != NULL) {
        w_lit(w, ",\"params\":");
        w_value(w, params);
    }
    w_lit(w, "}");
}

/* Append the finished text to out, or nothing; free the scratch. */
static enum ig_status
w_end(struct writer *w, struct ig_buf *out)
{
    enum ig_status st = w->st;

    if (st == IG_OK)
        st = ig_buf_add(out, w->b.data, w->b.len);
    ig_buf_release(&w->b);
    return st;
}

static int
call_ok(const char *method, const json_t *params)
{
    return method != NULL && method[0] != '\0' &&
           (params == NULL || json_is_object(params));
}

enum ig_status
exec_mcp_write_result(struct ig_buf *out, const json_t *id,
                      const json_t *result)
{
    struct writer w;

    if (!exec_mcp_id_valid(id) || result == NULL)
        return IG_ERR_INVALID;
    w_begin(&w, out);
    w_lit(&w, "{\"id\":");
    w_id(&w, id);
    w_lit(&w, ",\"jsonrpc\":\"2.0\",\"result\":");
    w_value(&w, result);
    w_lit(&w, "}");
    return w_end(&w, out);
}

enum ig_status
exec_mcp_write_error(struct ig_buf *out, const json_t *id, int code,
                     const char *message, const json_t *data)
{
    struct writer w;
    char num[IG_NUMBER_STRMAX];

    if ((id != NULL && !exec_mcp_id_valid(id)) || message == NULL)
        return IG_ERR_INVALID;
    if (ig_canon_number((double)code, num, NULL) != IG_OK)
        return IG_ERR_INVALID;
    w_begin(&w, out);
    w_lit(&w, "{\"error\":{\"code\":");
    w_lit(&w, num);
    if (data != NULL) {
        w_lit(&w, ",\"data\":");
        w_value(&w, data);
    }
    w_lit(&w, ",\"message\":");
    w_string(&w, message);
    w_lit(&w, "},\"id\":");
    w_id(&w, id);
    w_lit(&w, ",\"jsonrpc\":\"2.0\"}");
    return w_end(&w, out);
}

enum ig_status
exec_mcp_write_request(struct ig_buf *out, const json_t *id, const char *method,
                       const json_t *params)
{
    struct writer w;

    if (!exec_mcp_id_valid(id) || !call_ok(method, params))
        return IG_ERR_INVALID;
    w_begin(&w, out);
    w_lit(&w, "{\"id\":");
    w_id(&w, id);
    w_lit(&w, ",");
    w_call(&w, method, params);
    return w_end(&w, out);
}

enum ig_status
exec_mcp_write_notification(struct ig_buf *out, const char *method,
                            const json_t *params)
{
    struct writer w;

    if (!call_ok(method, params))
        return IG_ERR_INVALID;
    w_begin(&w, out);
    w_lit(&w, "{");
    w_call(&w, method, params);
    return w_end(&w, out);
}

/* ---- stdio lines ---- */

void
exec_mcp_lines_init(struct exec_mcp_lines *l, size_t max_line_bytes)
{
    size_t cap =
        max_line_bytes < SIZE_MAX - 1 ? max_line_bytes + 1 : SIZE_MAX - 1;

    ig_buf_init(&l->line, cap);
    l->max = max_line_bytes;
    l->skipping = 0;
}

void
exec_mcp_lines_release(struct exec_mcp_lines *l)
{
    if (l == NULL)
        return;
    ig_buf_release(&l->line);
    l->skipping = 0;
}

/* Hand one complete line (its '\n' already cut) to fn. */
static int
deliver(struct exec_mcp_lines *l, const char *p, size_t n, exec_mcp_line_fn fn,
        void *ctx)
{
    if (n > 0 && p[n - 1] == '\r')
        n--;
    if (n == 0)
        return 0;
    if (n > l->max)
        return fn(ctx, NULL, 0, 1);
    return fn(ctx, p, n, 0);
}

/* Start skipping the current line: report it, drop what was gathered. */
static int
too_long(struct exec_mcp_lines *l, exec_mcp_line_fn fn, void *ctx)
{
    ig_buf_reset(&l->line);
    l->skipping = 1;
    return fn(ctx, NULL, 0, 1);
}

enum ig_status
exec_mcp_lines_feed(struct exec_mcp_lines *l, const char *buf, size_t n,
                    exec_mcp_line_fn fn, void *ctx)
{
    const char *p, *end, *nl;
    size_t seg;
    enum ig_status st;
    int stop = 0;

    if (n == 0)
        return IG_OK;
    p = buf;
    end = buf + n;
    while (!stop && p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        seg = (size_t)((nl != NULL ? nl : end) - p);
        if (l->skipping) {
            l->skipping = nl == NULL;
        } else if (seg > l->line.max - l->line.len) {
            stop = too_long(l, fn, ctx);
            l->skipping = nl == NULL;
        } else if (nl != NULL && l->line.len == 0) {
            stop = deliver(l, p, seg, fn, ctx);
        } else {
            if ((st = ig_buf_add(&l->line, p, seg)) != IG_OK)
                return st;
            if (nl != NULL) {
                stop = deliver(l, l->line.data, l->line.len, fn, ctx);
                ig_buf_reset(&l->line);
            }
        }
        p += seg + (nl != NULL);
    }
    if (stop)
        ig_buf_reset(&l->line);
    return stop ? IG_ERR_INVALID : IG_OK;
}
