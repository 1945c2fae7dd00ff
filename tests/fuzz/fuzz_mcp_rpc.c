/*
 * fuzz_mcp_rpc.c - libFuzzer target for the MCP gateway's JSON-RPC reader
 * and stdio line splitter (exec_mcp_rpc.c): the input is what an agent or
 * an MCP server writes.
 *
 * The input goes through exec_mcp_lines_feed in two chunks (cut at the
 * first byte's value mod the size), once with the real cap and once with
 * a small one, and every line, and the whole input, through exec_mcp_parse.
 *
 * Properties beyond no crash and no leak: the splitter hands out exactly
 * the lines of an independent reference splitter written here (split on
 * '\n', one '\r' stripped, empty lines skipped, a line over the cap
 * reported and dropped, an unfinished last line held back); a parsed
 * message keeps every promise of exec_mcp_rpc.h (kind and fields agree,
 * ids valid, methods NUL-free); a refusal leaves the message zeroed and
 * hands back only a valid id; and every parsed message written back with
 * the builders is canonical JSON and parses again to the same kind, id and
 * method.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_mcp_rpc.h"
#include "ig_canon.h"
#include "ig_limits.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c))                                                              \
            abort();                                                           \
    } while (0)

#define SMALL_MAX 64
/* far more than a record of any input libFuzzer makes (ig_buf reserves
   max + 1 bytes, so its cap cannot be SIZE_MAX) */
#define RECORD_MAX (64u << 20)

/* What a splitter handed out: per line its length and bytes, per too-long
   line the length (size_t)-1. */
struct record {
    struct ig_buf b;
};

static void
rec_add(struct record *r, const char *line, size_t len, int too_long)
{
    size_t mark = too_long ? (size_t)-1 : len;

    CHECK(ig_buf_add(&r->b, &mark, sizeof(mark)) == IG_OK);
    if (!too_long)
        CHECK(ig_buf_add(&r->b, line, len) == IG_OK);
}

/* The reference: the whole input at once, by the rules of the header. */
static void
reference(const char *buf, size_t size, size_t max, struct record *r)
{
    const char *p = buf, *end = buf + size, *nl;
    size_t n;

    while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n = (size_t)(nl - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n > max)
            rec_add(r, NULL, 0, 1);
        else if (n > 0)
            rec_add(r, p, n, 0);
        p = nl + 1;
    }
    /* an unfinished line is reported once it holds max + 2 bytes: with
       max + 1 it may still be max bytes and a '\r' */
    n = (size_t)(end - p);
    if (n > max + 1)
        rec_add(r, NULL, 0, 1);
}

static void
check_msg(const struct exec_mcp_msg *m)
{
    CHECK(m->root != NULL && json_is_object(m->root));
    CHECK(m->id == NULL || exec_mcp_id_valid(m->id));
    CHECK(m->params == NULL || json_is_object(m->params));
    switch (m->kind) {
    case EXEC_MCP_REQUEST:
    case EXEC_MCP_NOTIFICATION:
        CHECK((m->id != NULL) == (m->kind == EXEC_MCP_REQUEST));
        CHECK(m->method != NULL && m->method[0] != '\0');
        CHECK(strlen(m->method) ==
              json_string_length(json_object_get(m->root, "method")));
        CHECK(m->result == NULL && m->error == NULL);
        break;
    case EXEC_MCP_RESULT:
        CHECK(m->id != NULL && m->result != NULL && m->error == NULL);
        CHECK(m->method == NULL && m->params == NULL);
        break;
    case EXEC_MCP_ERROR:
        CHECK(m->error != NULL && m->result == NULL && m->method == NULL);
        CHECK(json_is_string(json_object_get(m->error, "message")));
        break;
    default:
        abort();
    }
}

/* Write m back with the builders; it must read as the same message. */
static void
round_trip(const struct exec_mcp_msg *m)
{
    struct exec_mcp_msg again;
    struct ig_buf out, canon;
    struct ig_err err;
    json_t *bad = NULL;
    enum ig_status st;
    int code;

    ig_buf_init(&out, 4 * IG_JSON_MAX_BYTES);
    switch (m->kind) {
    case EXEC_MCP_REQUEST:
        st = exec_mcp_write_request(&out, m->id, m->method, m->params);
        break;
    case EXEC_MCP_NOTIFICATION:
        st = exec_mcp_write_notification(&out, m->method, m->params);
        break;
    case EXEC_MCP_RESULT:
        st = exec_mcp_write_result(&out, m->id, m->result);
        break;
    default:
        st = exec_mcp_write_error(
            &out, m->id,
            (int)json_number_value(json_object_get(m->error, "code")),
            json_string_value(json_object_get(m->error, "message")),
            json_object_get(m->error, "data"));
        break;
    }
    CHECK(st == IG_OK);
    CHECK(memchr(out.data, '\n', out.len) == NULL);
    /* a written message may outgrow what the reader takes (1e20 is
       written as 21 digits): then it is refused for its size, and only
       for that */
    st = exec_mcp_parse(out.data, out.len, &again, &code, &bad, &err);
    if (out.len > IG_JSON_MAX_BYTES) {
        CHECK(st == IG_ERR_LIMIT && bad == NULL);
        goto out;
    }
    CHECK(st == IG_OK);
    ig_buf_init(&canon, out.len);
    CHECK(ig_canon_text(out.data, out.len, &canon, &err) == IG_OK);
    CHECK(canon.len == out.len && memcmp(canon.data, out.data, out.len) == 0);
    ig_buf_release(&canon);
    CHECK(again.kind == m->kind);
    CHECK((again.id == NULL) == (m->id == NULL));
    CHECK(m->id == NULL || exec_mcp_id_equal(again.id, m->id));
    CHECK((again.method == NULL) == (m->method == NULL));
    CHECK(m->method == NULL || strcmp(again.method, m->method) == 0);
    exec_mcp_msg_release(&again);
out:
    ig_buf_release(&out);
}

static void
parse(const char *buf, size_t len)
{
    struct exec_mcp_msg m, zero;
    struct ig_err err;
    json_t *bad = NULL;
    char idt[64];
    enum ig_status st;
    int code = 0;

    st = exec_mcp_parse(buf, len, &m, &code, &bad, &err);
    if (st != IG_OK) {
        memset(&zero, 0, sizeof(zero));
        CHECK(memcmp(&m, &zero, sizeof(m)) == 0);
        CHECK(code == EXEC_MCP_PARSE_ERROR ||
              code == EXEC_MCP_INVALID_REQUEST ||
              code == EXEC_MCP_INTERNAL_ERROR);
        CHECK(bad == NULL || exec_mcp_id_valid(bad));
        CHECK(bad == NULL || code == EXEC_MCP_INVALID_REQUEST);
        json_decref(bad);
        return;
    }
    CHECK(code == 0 && bad == NULL);
    check_msg(&m);
    if (m.id != NULL)
        CHECK(exec_mcp_id_text(m.id, idt, sizeof(idt)) != IG_ERR_INVALID);
    round_trip(&m);
    exec_mcp_msg_release(&m);
}

static int
on_line(void *ctx, const char *line, size_t len, int too_long)
{
    rec_add(ctx, line, len, too_long);
    if (!too_long)
        parse(line, len);
    return 0;
}

static void
split(const char *buf, size_t size, size_t cut, size_t max)
{
    struct exec_mcp_lines l;
    struct record got, want;

    ig_buf_init(&got.b, RECORD_MAX);
    ig_buf_init(&want.b, RECORD_MAX);
    exec_mcp_lines_init(&l, max);
    CHECK(exec_mcp_lines_feed(&l, buf, cut, on_line, &got) == IG_OK);
    CHECK(exec_mcp_lines_feed(&l, buf + cut, size - cut, on_line, &got) ==
          IG_OK);
    exec_mcp_lines_release(&l);
    reference(buf, size, max, &want);
    CHECK(got.b.len == want.b.len);
    CHECK(got.b.len == 0 || memcmp(got.b.data, want.b.data, got.b.len) == 0);
    ig_buf_release(&got.b);
    ig_buf_release(&want.b);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *buf = (const char *)data;
    size_t cut = size > 0 ? data[0] % size : 0;

    split(buf, size, cut, IG_JSON_MAX_BYTES);
    split(buf, size, cut, SMALL_MAX);
    parse(buf, size);
    return 0;
}
