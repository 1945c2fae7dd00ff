/*
 * test_mcp_rpc.c - the MCP gateway's JSON-RPC reader, writers and stdio
 * line splitter (exec_mcp_rpc.c), hostile input first.
 *
 * Every refusal rule of exec_mcp_parse has a case here, each checked for
 * its JSON-RPC code and for the id the error reply must carry back (none
 * when the id itself is what is wrong). Ids get the cases that break
 * naive readers: 0 (never tested for truth), -0, negatives, 2^53 and one
 * step past it, 1.5 and "1.5", strings holding NUL. The writers' bytes
 * are compared with hand-written canonical text and read back. The
 * splitter is fed a three-message buffer cut at every pair of points,
 * over-long lines, CRLF, a 1 MiB line. The fuzz seeds (real message
 * shapes from the MCP 2025-11-25 schema) must parse to the kind their
 * name says.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_mcp_rpc.h"
#include "ig_limits.h"

/* ---- helpers ---- */

/* Parse n bytes; expect IG_OK and kind. The caller releases *m. */
static void
parse_ok_n(const char *text, size_t n, enum exec_mcp_kind kind,
           struct exec_mcp_msg *m)
{
    struct ig_err err;
    json_t *bad = (json_t *)1;
    int code = 1;

    memset(&err, 0, sizeof(err));
    if (exec_mcp_parse(text, n, m, &code, &bad, &err) != IG_OK)
        fail_msg("refused (%s): %.*s", err.msg, (int)n, text);
    assert_int_equal(code, 0);
    assert_null(bad);
    assert_int_equal(m->kind, kind);
    assert_non_null(m->root);
}

static void
parse_ok(const char *text, enum exec_mcp_kind kind, struct exec_mcp_msg *m)
{
    parse_ok_n(text, strlen(text), kind, m);
}

/* Parse n bytes; expect refusal with status want_st, code want_code, and a
   bad id whose canonical text is want_id (NULL: no id handed back). */
static void
refuse_n(const char *text, size_t n, enum ig_status want_st, int want_code,
         const char *want_id)
{
    struct exec_mcp_msg m, zero;
    struct ig_err err;
    json_t *bad = NULL;
    char idt[64];
    int code = 0;
    enum ig_status st;

    memset(&err, 0, sizeof(err));
    memset(&zero, 0, sizeof(zero));
    st = exec_mcp_parse(text, n, &m, &code, &bad, &err);
    if (st != want_st || code != want_code)
        fail_msg("status %d code %d, want %d %d (%s): %.*s", st, code, want_st,
                 want_code, err.msg, (int)n, text);
    assert_memory_equal(&m, &zero, sizeof(m));
    assert_true(err.msg[0] != '\0');
    assert_null(strchr(err.msg, '\n'));
    if (want_id == NULL) {
        assert_null(bad);
        return;
    }
    assert_non_null(bad);
    assert_int_equal(exec_mcp_id_text(bad, idt, sizeof(idt)), IG_OK);
    assert_string_equal(idt, want_id);
    json_decref(bad);
}

static void
refuse(const char *text, int want_code, const char *want_id)
{
    refuse_n(text, strlen(text), IG_ERR_INVALID, want_code, want_id);
}

/* The canonical text of a parsed message's id. */
static void
assert_id(const struct exec_mcp_msg *m, const char *want)
{
    char t[64];

    assert_non_null(m->id);
    assert_int_equal(exec_mcp_id_text(m->id, t, sizeof(t)), IG_OK);
    assert_string_equal(t, want);
}

/* ---- parsing: the four kinds ---- */

static void
test_kinds(void **state)
{
    struct exec_mcp_msg m;

    (void)state;
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"x\",\"arguments\":{}}}",
             EXEC_MCP_REQUEST, &m);
    assert_id(&m, "7");
    assert_string_equal(m.method, "tools/call");
    assert_true(json_is_object(m.params));
    assert_null(m.result);
    assert_null(m.error);
    exec_mcp_msg_release(&m);
    assert_null(m.root);

    parse_ok(" {\"method\":\"notifications/initialized\",\"jsonrpc\":\"2.0\"}"
             "\r\n",
             EXEC_MCP_NOTIFICATION, &m);
    assert_null(m.id);
    assert_null(m.params);
    assert_string_equal(m.method, "notifications/initialized");
    exec_mcp_msg_release(&m);

    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}",
             EXEC_MCP_RESULT, &m);
    assert_id(&m, "\"a\"");
    assert_null(m.method);
    assert_true(json_is_object(m.result));
    exec_mcp_msg_release(&m);

    /* any value is a result (JSON-RPC); MCP's are objects */
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}", EXEC_MCP_RESULT,
             &m);
    assert_true(json_is_null(m.result));
    exec_mcp_msg_release(&m);

    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,"
             "\"message\":\"Method not found\",\"data\":[1]}}",
             EXEC_MCP_ERROR, &m);
    assert_id(&m, "2");
    assert_int_equal(json_number_value(json_object_get(m.error, "code")),
                     -32601);
    exec_mcp_msg_release(&m);

    exec_mcp_msg_release(NULL);
}

/* An error may come with id null or none (JSON-RPC: the id could not be
   read; the TypeScript SDK sends these); nothing else may. */
static void
test_error_without_id(void **state)
{
    struct exec_mcp_msg m;

    (void)state;
    parse_ok("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":"
             "\"Bad Request: Unsupported protocol version\"},\"id\":null}",
             EXEC_MCP_ERROR, &m);
    assert_null(m.id);
    exec_mcp_msg_release(&m);
    parse_ok("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":"
             "\"Parse error\"}}",
             EXEC_MCP_ERROR, &m);
    assert_null(m.id);
    exec_mcp_msg_release(&m);

    refuse("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"result\":{}}", EXEC_MCP_INVALID_REQUEST,
           NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    /* null is not "absent": it does not make a notification */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"notifications/x\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
}

/* ---- ids ---- */

static void
test_id_zero(void **state)
{
    struct exec_mcp_msg m;
    struct ig_buf out;
    json_t *empty = json_object();

    (void)state;
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"roots/list\"}",
             EXEC_MCP_REQUEST, &m);
    assert_non_null(m.id);
    assert_true(json_number_value(m.id) == 0.0);
    assert_id(&m, "0");
    ig_buf_init(&out, 4096);
    assert_int_equal(exec_mcp_write_result(&out, m.id, empty), IG_OK);
    exec_mcp_msg_release(&m);

    /* -0 is the id 0, written "0" */
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":-0,\"result\":{}}", EXEC_MCP_RESULT,
             &m);
    assert_id(&m, "0");
    exec_mcp_msg_release(&m);

    /* an error on a request with id 0 carries 0, not null */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"\"}",
           EXEC_MCP_INVALID_REQUEST, "0");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":0.0,\"method\":7}",
           EXEC_MCP_INVALID_REQUEST, "0");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":7}",
           EXEC_MCP_INVALID_REQUEST, "\"\"");
    assert_string_equal(out.data,
                        "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{}}");
    ig_buf_release(&out);
    json_decref(empty);
}

static void
test_id_numbers(void **state)
{
    struct exec_mcp_msg m;

    (void)state;
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":-1,\"method\":\"ping\"}",
             EXEC_MCP_REQUEST, &m);
    assert_id(&m, "-1");
    exec_mcp_msg_release(&m);
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}",
             EXEC_MCP_REQUEST, &m);
    assert_id(&m, "1");
    exec_mcp_msg_release(&m);
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"ping\"}",
             EXEC_MCP_REQUEST, &m);
    assert_id(&m, "100");
    exec_mcp_msg_release(&m);
    /* 2^53 exactly, both signs */
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"p\"}",
             EXEC_MCP_REQUEST, &m);
    assert_id(&m, "9007199254740992");
    exec_mcp_msg_release(&m);
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740992,\"result\":{}}",
             EXEC_MCP_RESULT, &m);
    assert_id(&m, "-9007199254740992");
    exec_mcp_msg_release(&m);
    /* 2^53 + 1 has no double: it reads as 2^53 (documented) */
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"p\"}",
             EXEC_MCP_REQUEST, &m);
    assert_id(&m, "9007199254740992");
    exec_mcp_msg_release(&m);

    /* beyond 2^53, fractional: refused, and no id handed back */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":9007199254740994,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740994,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1e300,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":-1e300,\"result\":{}}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":-0.5,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1e-7,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    /* a number over a double's range is not JSON to ig_json_parse */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"p\"}",
           EXEC_MCP_PARSE_ERROR, NULL);
}

static void
test_id_types(void **state)
{
    struct exec_mcp_msg m;

    (void)state;
    refuse("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":[],\"error\":{\"code\":1,"
           "\"message\":\"\"}}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    /* "1.5" is a string id, fine */
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":\"1.5\",\"method\":\"p\"}",
             EXEC_MCP_REQUEST, &m);
    assert_id(&m, "\"1.5\"");
    exec_mcp_msg_release(&m);
}

static void
test_id_nul(void **state)
{
    struct exec_mcp_msg m;
    json_t *a = json_string("a"), *a1 = json_real(1.0), *i1 = json_integer(1);
    json_t *s1 = json_string("1"), *z = json_real(0.0), *nz = json_real(-0.0);
    json_t *big = json_integer(9007199254740993LL), *frac = json_real(0.5);
    char t[16];

    (void)state;
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":\"p\"}",
             EXEC_MCP_REQUEST, &m);
    assert_int_equal(json_string_length(m.id), 3);
    assert_id(&m, "\"a\\u0000b\"");
    assert_false(exec_mcp_id_equal(m.id, a));
    assert_true(exec_mcp_id_equal(m.id, m.id));
    exec_mcp_msg_release(&m);

    assert_true(exec_mcp_id_equal(a1, i1));
    assert_false(exec_mcp_id_equal(a1, s1));
    assert_false(exec_mcp_id_equal(s1, i1));
    assert_true(exec_mcp_id_equal(z, nz));
    assert_false(exec_mcp_id_equal(NULL, NULL));
    assert_false(exec_mcp_id_equal(a, NULL));
    assert_false(exec_mcp_id_equal(big, big));
    assert_false(exec_mcp_id_equal(frac, frac));
    assert_false(exec_mcp_id_valid(json_null()));
    assert_false(exec_mcp_id_valid(json_true()));
    assert_false(exec_mcp_id_valid(NULL));

    /* id text: string and number never share a text; the cap is kept */
    assert_int_equal(exec_mcp_id_text(s1, t, sizeof(t)), IG_OK);
    assert_string_equal(t, "\"1\"");
    assert_int_equal(exec_mcp_id_text(i1, t, sizeof(t)), IG_OK);
    assert_string_equal(t, "1");
    assert_int_equal(exec_mcp_id_text(s1, t, 4), IG_OK);
    assert_int_equal(exec_mcp_id_text(s1, t, 3), IG_ERR_LIMIT);
    assert_string_equal(t, "");
    assert_int_equal(exec_mcp_id_text(s1, t, 0), IG_ERR_LIMIT);
    assert_int_equal(exec_mcp_id_text(big, t, sizeof(t)), IG_ERR_INVALID);
    assert_string_equal(t, "");
    assert_int_equal(exec_mcp_id_text(NULL, t, sizeof(t)), IG_ERR_INVALID);
    json_decref(a);
    json_decref(a1);
    json_decref(i1);
    json_decref(s1);
    json_decref(z);
    json_decref(nz);
    json_decref(big);
    json_decref(frac);
}

/* ---- parsing: every other rule ---- */

static void
test_not_json(void **state)
{
    char deep[256];
    size_t i, n = 0;

    (void)state;
    refuse_n(NULL, 0, IG_ERR_INVALID, EXEC_MCP_PARSE_ERROR, NULL);
    refuse("", EXEC_MCP_PARSE_ERROR, NULL);
    refuse("{", EXEC_MCP_PARSE_ERROR, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\"",
           EXEC_MCP_PARSE_ERROR, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"p\"}",
           EXEC_MCP_PARSE_ERROR, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\"} x",
           EXEC_MCP_PARSE_ERROR, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
           EXEC_MCP_PARSE_ERROR, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"p\"}",
           EXEC_MCP_PARSE_ERROR, NULL);
    refuse_n("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\"}\0", 38,
             IG_ERR_INVALID, EXEC_MCP_PARSE_ERROR, NULL);
    refuse_n("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\0b\"}", 39,
             IG_ERR_INVALID, EXEC_MCP_PARSE_ERROR, NULL);
    /* deeper than IG_JSON_MAX_DEPTH: a limit, still -32700 */
    n += (size_t)snprintf(deep, sizeof(deep),
                          "{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"params\":");
    for (i = 0; i < IG_JSON_MAX_DEPTH + 2; i++)
        deep[n++] = '[';
    for (i = 0; i < IG_JSON_MAX_DEPTH + 2; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    assert_true(n < sizeof(deep));
    refuse_n(deep, n, IG_ERR_LIMIT, EXEC_MCP_PARSE_ERROR, NULL);
}

static void
test_not_a_message(void **state)
{
    struct ig_err err;
    struct exec_mcp_msg m;
    json_t *bad;
    int code;

    (void)state;
    refuse("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
           EXEC_MCP_INVALID_REQUEST, NULL);
    assert_int_equal(exec_mcp_parse("[]", 2, &m, &code, &bad, &err),
                     IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "batch"));
    refuse("1", EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("\"{}\"", EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("null", EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{}", EXEC_MCP_INVALID_REQUEST, NULL);
}

static void
test_jsonrpc_member(void **state)
{
    (void)state;
    refuse("{\"id\":1,\"method\":\"p\"}", EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.1\",\"id\":1,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0 \",\"id\":\"x\",\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, "\"x\"");
    refuse("{\"jsonrpc\":\"2.0\\u0000\",\"id\":1,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2\",\"method\":\"p\"}", EXEC_MCP_INVALID_REQUEST,
           NULL);
    refuse("{\"jsonrpc\":null,\"id\":3,\"result\":{}}",
           EXEC_MCP_INVALID_REQUEST, "3");
}

static void
test_method_member(void **state)
{
    struct exec_mcp_msg m;

    (void)state;
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":1}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[\"p\"]}",
           EXEC_MCP_INVALID_REQUEST, "1");
    /* a NUL would cut the name short for strcmp: tools/call\0x */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\\u0000x\"}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"method\":\"\\u0000\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    /* a request or notification carries no result or error */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"result\":{}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"error\":{\"code\":1,"
           "\"message\":\"m\"}}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\xa9\"}",
             EXEC_MCP_REQUEST, &m);
    assert_string_equal(m.method, "\xc3\xa9");
    exec_mcp_msg_release(&m);
}

static void
test_params_member(void **state)
{
    struct exec_mcp_msg m;

    (void)state;
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"params\":[]}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"params\":null}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"params\":\"x\"}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"params\":0}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    /* a response carries no params */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"params\":{}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    parse_ok("{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"params\":{}}",
             EXEC_MCP_NOTIFICATION, &m);
    assert_true(json_is_object(m.params));
    exec_mcp_msg_release(&m);
}

static void
test_response_members(void **state)
{
    struct exec_mcp_msg m;

    (void)state;
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1}", EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,"
           "\"message\":\"m\"}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\"}", EXEC_MCP_INVALID_REQUEST, NULL);
    /* the error object */
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"m\"}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,"
           "\"message\":\"m\"}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"-32600\","
           "\"message\":\"m\"}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":2147483648,"
           "\"message\":\"m\"}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1e300,"
           "\"message\":\"m\"}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,"
           "\"message\":null}}",
           EXEC_MCP_INVALID_REQUEST, "1");
    parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-2147483648,"
             "\"message\":\"a\\u0000b\"}}",
             EXEC_MCP_ERROR, &m);
    assert_int_equal(json_string_length(json_object_get(m.error, "message")),
                     3);
    exec_mcp_msg_release(&m);
}

static void
test_unknown_members(void **state)
{
    (void)state;
    refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"x\":1}",
           EXEC_MCP_INVALID_REQUEST, "1");
    refuse("{\"jsonrpc\":\"2.0\",\"ID\":1,\"method\":\"p\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
    refuse("{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":{},\"_meta\":{}}",
           EXEC_MCP_INVALID_REQUEST, "\"r\"");
    refuse("{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"Method\":\"q\"}",
           EXEC_MCP_INVALID_REQUEST, NULL);
}

/* ---- writers ---- */

/* Parse the text just written (whole out) and check its kind. */
static void
reads_back(const struct ig_buf *out, enum exec_mcp_kind kind)
{
    struct exec_mcp_msg m;

    parse_ok_n(out->data, out->len, kind, &m);
    exec_mcp_msg_release(&m);
    assert_null(memchr(out->data, '\n', out->len));
}

static void
test_write_exact(void **state)
{
    struct ig_buf out;
    json_t *id = json_real(1.0), *sid = json_string("x\ny\"\\\x01");
    json_t *params = json_pack("{s:s,s:{}}", "name", "echo", "arguments");
    json_t *data =
        json_pack("{s:[s],s:s}", "supported", "2025-11-25", "requested", "1.0");

    (void)state;
    ig_buf_init(&out, 4096);
    assert_int_equal(exec_mcp_write_request(&out, id, "tools/call", params),
                     IG_OK);
    assert_string_equal(out.data,
                        "{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"tools/"
                        "call\",\"params\":{\"arguments\":{},\"name\":"
                        "\"echo\"}}");
    reads_back(&out, EXEC_MCP_REQUEST);
    ig_buf_reset(&out);

    assert_int_equal(exec_mcp_write_request(&out, sid, "ping", NULL), IG_OK);
    assert_string_equal(out.data,
                        "{\"id\":\"x\\ny\\\"\\\\\\u0001\",\"jsonrpc\":"
                        "\"2.0\",\"method\":\"ping\"}");
    reads_back(&out, EXEC_MCP_REQUEST);
    ig_buf_reset(&out);

    assert_int_equal(
        exec_mcp_write_notification(&out, "notifications/initialized", NULL),
        IG_OK);
    assert_string_equal(out.data, "{\"jsonrpc\":\"2.0\",\"method\":"
                                  "\"notifications/initialized\"}");
    reads_back(&out, EXEC_MCP_NOTIFICATION);
    ig_buf_reset(&out);

    assert_int_equal(exec_mcp_write_result(&out, id, params), IG_OK);
    assert_string_equal(out.data, "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{"
                                  "\"arguments\":{},\"name\":\"echo\"}}");
    reads_back(&out, EXEC_MCP_RESULT);
    ig_buf_reset(&out);

    assert_int_equal(exec_mcp_write_error(&out, id, EXEC_MCP_INVALID_PARAMS,
                                          "Unsupported protocol version", data),
                     IG_OK);
    assert_string_equal(
        out.data, "{\"error\":{\"code\":-32602,\"data\":{\"requested\":\"1.0\","
                  "\"supported\":[\"2025-11-25\"]},\"message\":\"Unsupported "
                  "protocol version\"},\"id\":1,\"jsonrpc\":\"2.0\"}");
    reads_back(&out, EXEC_MCP_ERROR);
    ig_buf_reset(&out);

    assert_int_equal(exec_mcp_write_error(&out, NULL, EXEC_MCP_PARSE_ERROR,
                                          "Parse error", NULL),
                     IG_OK);
    assert_string_equal(out.data, "{\"error\":{\"code\":-32700,\"message\":"
                                  "\"Parse error\"},\"id\":null,\"jsonrpc\":"
                                  "\"2.0\"}");
    reads_back(&out, EXEC_MCP_ERROR);
    ig_buf_release(&out);
    json_decref(id);
    json_decref(sid);
    json_decref(params);
    json_decref(data);
}

/* Whatever is refused leaves out as it was. */
static void
test_write_refused(void **state)
{
    struct ig_buf out;
    json_t *id = json_integer(5), *frac = json_real(2.5), *arr = json_array();
    json_t *obj = json_object(), *tru = json_true();
    json_t *huge = json_integer(1LL << 60); /* no canonical form */

    (void)state;
    ig_buf_init(&out, 4096);
    assert_int_equal(ig_buf_adds(&out, "before"), IG_OK);
    assert_int_equal(exec_mcp_write_result(&out, NULL, obj), IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_result(&out, frac, obj), IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_result(&out, tru, obj), IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_result(&out, id, NULL), IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_request(&out, NULL, "p", NULL),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_request(&out, id, "", NULL),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_request(&out, id, NULL, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_request(&out, id, "p", arr),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_request(&out, id, "\xff", NULL),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_notification(&out, "p", tru),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_notification(&out, "", NULL),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_error(&out, frac, 1, "m", NULL),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_error(&out, id, 1, NULL, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_error(&out, id, 1, "\xc3", NULL),
                     IG_ERR_INVALID);
    /* a value with no canonical form, found half way through */
    assert_int_equal(exec_mcp_write_error(&out, id, 1, "m", huge),
                     IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_result(&out, huge, obj), IG_ERR_INVALID);
    assert_int_equal(json_array_append(arr, huge), 0);
    assert_int_equal(json_object_set(obj, "a", arr), 0);
    assert_int_equal(exec_mcp_write_result(&out, id, obj), IG_ERR_INVALID);
    assert_int_equal(exec_mcp_write_request(&out, id, "p", obj),
                     IG_ERR_INVALID);
    assert_int_equal(out.len, 6);
    assert_string_equal(out.data, "before");
    ig_buf_release(&out);

    /* the cap: nothing or the whole message */
    ig_buf_init(&out, 30);
    assert_int_equal(exec_mcp_write_notification(&out, "notifications/x", NULL),
                     IG_ERR_LIMIT);
    assert_int_equal(out.len, 0);
    assert_int_equal(exec_mcp_write_notification(&out, "p", NULL), IG_OK);
    assert_int_equal(out.len, 30);
    assert_int_equal(exec_mcp_write_notification(&out, "p", NULL),
                     IG_ERR_LIMIT);
    assert_int_equal(out.len, 30);
    ig_buf_release(&out);
    json_decref(id);
    json_decref(frac);
    json_decref(arr);
    json_decref(obj);
    json_decref(huge);
    json_decref(tru);
}

/* ---- the line splitter ---- */

/* What fn saw, as text: "<line>|" per line, "!|" per too-long line. */
struct seen {
    char log[8192];
    size_t n;
    size_t calls;
    size_t stop_after; /* return 1 on this call (1-based); 0 never */
};

static int
on_line(void *ctx, const char *line, size_t len, int too_long)
{
    struct seen *s = ctx;

    s->calls++;
    if (too_long) {
        assert_null(line);
        assert_int_equal(len, 0);
        line = "!";
        len = 1;
    } else {
        assert_non_null(line);
        assert_true(len > 0);
        assert_null(memchr(line, '\n', len));
    }
    assert_true(s->n + len + 1 < sizeof(s->log));
    memcpy(s->log + s->n, line, len);
    s->n += len;
    s->log[s->n++] = '|';
    s->log[s->n] = '\0';
    return s->stop_after != 0 && s->calls == s->stop_after;
}

/* Feed text in chunks cut at the offsets in cuts (ascending, ncuts). */
static void
feed_cut(size_t max, const char *text, size_t len, const size_t *cuts,
         size_t ncuts, struct seen *s)
{
    struct exec_mcp_lines l;
    size_t i, at = 0;

    memset(s, 0, sizeof(*s));
    exec_mcp_lines_init(&l, max);
    for (i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : len;

        assert_int_equal(
            exec_mcp_lines_feed(&l, text + at, to - at, on_line, s), IG_OK);
        at = to;
    }
    exec_mcp_lines_release(&l);
}

static void
expect_lines(size_t max, const char *text, const char *want)
{
    struct seen s;

    feed_cut(max, text, strlen(text), NULL, 0, &s);
    assert_string_equal(s.log, want);
}

#define THREE                                                                  \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n"               \
    "\r\n\n"                                                                   \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n"       \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n"
#define THREE_SEEN                                                             \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}|"                \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}|"          \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}|"

static void
test_lines_every_split(void **state)
{
    struct seen s;
    size_t len = strlen(THREE), cuts[2], i, j;

    (void)state;
    for (i = 0; i <= len; i++) {
        cuts[0] = i;
        feed_cut(IG_JSON_MAX_BYTES, THREE, len, cuts, 1, &s);
        assert_string_equal(s.log, THREE_SEEN);
        for (j = i; j <= len; j++) {
            cuts[1] = j;
            feed_cut(IG_JSON_MAX_BYTES, THREE, len, cuts, 2, &s);
            assert_string_equal(s.log, THREE_SEEN);
        }
    }
    /* and each line read as the message it is */
    {
        struct exec_mcp_msg m;
        const char *p = THREE_SEEN, *bar;
        enum exec_mcp_kind kinds[3] = {EXEC_MCP_REQUEST, EXEC_MCP_NOTIFICATION,
                                       EXEC_MCP_RESULT};

        for (i = 0; i < 3; i++) {
            bar = strchr(p, '|');
            parse_ok_n(p, (size_t)(bar - p), kinds[i], &m);
            exec_mcp_msg_release(&m);
            p = bar + 1;
        }
    }
}

static void
test_lines_too_long(void **state)
{
    const char *text = "0123456789abcdefX\n{\"ok\":1}\n";
    size_t len = strlen(text), cuts[2], i, j;
    struct seen s;

    (void)state;
    /* a too-long line is reported once, then the next one is whole */
    for (i = 0; i <= len; i++) {
        for (j = i; j <= len; j++) {
            cuts[0] = i;
            cuts[1] = j;
            feed_cut(16, text, len, cuts, 2, &s);
            assert_string_equal(s.log, "!|{\"ok\":1}|");
        }
    }
    /* at the cap: max bytes pass, with or without '\r'; max + 1 do not */
    expect_lines(4, "abcd\nabcd\r\nabcde\nabcde\r\nab\n", "abcd|abcd|!|!|ab|");
    expect_lines(4, "abcd\rx\nz\n", "!|z|");
    expect_lines(0, "a\n\n\r\nb\n", "!|!|");
    /* long before its newline, reported at once; none of it leaks */
    expect_lines(4, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "!|");
    expect_lines(4, "aaaaaaaaaaaaaaa\naaaaaaaaaa\nb\n", "!|!|b|");
}

static void
test_lines_crlf(void **state)
{
    (void)state;
    expect_lines(100, "a\r\nb\nc\r\n", "a|b|c|");
    expect_lines(100, "a\r\r\n", "a\r|");
    expect_lines(100, "\r\n\n\r\n\n", "");
    expect_lines(100, "a\rb\n\r\r\n", "a\rb|\r|");
    expect_lines(100, "no newline yet", "");
    expect_lines(100, "x\r", "");
}

static void
test_lines_nul_and_stop(void **state)
{
    struct exec_mcp_lines l;
    struct seen s;

    (void)state;
    memset(&s, 0, sizeof(s));
    exec_mcp_lines_init(&l, 100);
    assert_int_equal(exec_mcp_lines_feed(&l, "a\0b\nc", 5, on_line, &s), IG_OK);
    assert_int_equal(s.n, 4);
    assert_memory_equal(s.log, "a\0b|", 4);
    assert_int_equal(exec_mcp_lines_feed(&l, NULL, 0, on_line, &s), IG_OK);
    exec_mcp_lines_release(&l);

    /* fn stops the feed: IG_ERR_INVALID, nothing after it delivered */
    memset(&s, 0, sizeof(s));
    s.stop_after = 2;
    exec_mcp_lines_init(&l, 100);
    assert_int_equal(
        exec_mcp_lines_feed(&l, "one\ntwo\nthree\n", 14, on_line, &s),
        IG_ERR_INVALID);
    assert_string_equal(s.log, "one|two|");
    exec_mcp_lines_release(&l);

    memset(&s, 0, sizeof(s));
    s.stop_after = 1;
    exec_mcp_lines_init(&l, 2);
    assert_int_equal(exec_mcp_lines_feed(&l, "toolong", 7, on_line, &s),
                     IG_ERR_INVALID);
    assert_string_equal(s.log, "!|");
    exec_mcp_lines_release(&l);
    exec_mcp_lines_release(NULL);
}

struct big_seen {
    size_t lines, too_long, len;
};

static int
on_big(void *ctx, const char *line, size_t len, int too_long)
{
    struct big_seen *g = ctx;

    (void)line;
    g->too_long += (size_t)too_long;
    g->lines += (size_t)!too_long;
    g->len = len;
    return 0;
}

/* A message of exactly IG_JSON_MAX_BYTES, through the splitter in 4 KiB
   reads and then parsed; one byte more is refused by both. */
static void
test_lines_1mib(void **state)
{
    const char *head = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"";
    const char *tail = "\"}}";
    size_t n = IG_JSON_MAX_BYTES, hl = strlen(head), tl = strlen(tail), at;
    char *buf = malloc(n + 3);
    struct exec_mcp_lines l;
    struct exec_mcp_msg m;
    struct big_seen got;
    int pass;

    (void)state;
    assert_non_null(buf);
    for (pass = 0; pass < 2; pass++) {
        size_t total = n + (size_t)pass;

        memcpy(buf, head, hl);
        memset(buf + hl, 'x', total - hl - tl);
        memcpy(buf + total - tl, tail, tl);
        buf[total] = '\r';
        buf[total + 1] = '\n';
        memset(&got, 0, sizeof(got));
        exec_mcp_lines_init(&l, IG_JSON_MAX_BYTES);
        for (at = 0; at < total + 2; at += 4096) {
            size_t k = total + 2 - at < 4096 ? total + 2 - at : 4096;

            assert_int_equal(exec_mcp_lines_feed(&l, buf + at, k, on_big, &got),
                             IG_OK);
        }
        exec_mcp_lines_release(&l);
        if (pass == 0) {
            assert_int_equal(got.lines, 1);
            assert_int_equal(got.too_long, 0);
            assert_int_equal(got.len, n);
            parse_ok_n(buf, n, EXEC_MCP_RESULT, &m);
            exec_mcp_msg_release(&m);
        } else {
            assert_int_equal(got.lines, 0);
            assert_int_equal(got.too_long, 1);
            refuse_n(buf, total, IG_ERR_LIMIT, EXEC_MCP_PARSE_ERROR, NULL);
        }
    }
    free(buf);
}

/* ---- the fuzz seeds: real message shapes ---- */

static int
on_seed_line(void *ctx, const char *line, size_t len, int too_long)
{
    struct exec_mcp_msg m;
    struct ig_err err;
    json_t *bad;
    int code;

    assert_false(too_long);
    assert_int_equal(exec_mcp_parse(line, len, &m, &code, &bad, &err), IG_OK);
    exec_mcp_msg_release(&m);
    (*(size_t *)ctx)++;
    return 0;
}

/* A stdio capture: every line a message, at least two. */
static void
stream_seed(const char *text, size_t len)
{
    struct exec_mcp_lines l;
    size_t n = 0;

    exec_mcp_lines_init(&l, IG_JSON_MAX_BYTES);
    assert_int_equal(exec_mcp_lines_feed(&l, text, len, on_seed_line, &n),
                     IG_OK);
    assert_int_equal(l.line.len, 0);
    exec_mcp_lines_release(&l);
    assert_true(n >= 2);
}

/* Each seed's name starts with the kind it must parse to, or "stream-"
   for several lines as a server writes them on stdout. */
static void
test_seeds(void **state)
{
    static const struct {
        const char *prefix;
        enum exec_mcp_kind kind;
    } kinds[] = {{"request-", EXEC_MCP_REQUEST},
                 {"notification-", EXEC_MCP_NOTIFICATION},
                 {"result-", EXEC_MCP_RESULT},
                 {"error-", EXEC_MCP_ERROR}};
    struct exec_mcp_msg m;
    struct dirent *e;
    DIR *d = opendir(IG_MCP_CORPUS);
    char path[1024];
    size_t i, len, seen = 0;
    char *text;

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
            if (strncmp(e->d_name, kinds[i].prefix, strlen(kinds[i].prefix)) ==
                0)
                break;
        assert_true(snprintf(path, sizeof(path), "%s/%s", IG_MCP_CORPUS,
                             e->d_name) < (int)sizeof(path));
        text = tu_read_file(path, &len);
        if (strncmp(e->d_name, "stream-", 7) == 0) {
            stream_seed(text, len);
            free(text);
            continue;
        }
        if (i == sizeof(kinds) / sizeof(kinds[0]))
            fail_msg("seed %s: name names no kind", e->d_name);
        /* a seed is one stdio line: the message and its newline */
        assert_true(len > 1 && text[len - 1] == '\n');
        assert_null(memchr(text, '\n', len - 1));
        parse_ok_n(text, len - 1, kinds[i].kind, &m);
        exec_mcp_msg_release(&m);
        free(text);
        seen++;
    }
    closedir(d);
    assert_true(seen >= 5);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_error_without_id),
        cmocka_unit_test(test_id_zero),
        cmocka_unit_test(test_id_numbers),
        cmocka_unit_test(test_id_types),
        cmocka_unit_test(test_id_nul),
        cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_not_a_message),
        cmocka_unit_test(test_jsonrpc_member),
        cmocka_unit_test(test_method_member),
        cmocka_unit_test(test_params_member),
        cmocka_unit_test(test_response_members),
        cmocka_unit_test(test_unknown_members),
        cmocka_unit_test(test_write_exact),
        cmocka_unit_test(test_write_refused),
        cmocka_unit_test(test_lines_every_split),
        cmocka_unit_test(test_lines_too_long),
        cmocka_unit_test(test_lines_crlf),
        cmocka_unit_test(test_lines_nul_and_stop),
        cmocka_unit_test(test_lines_1mib),
        cmocka_unit_test(test_seeds),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
