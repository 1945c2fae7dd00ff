/*
 * exec_mcp_rpc.h - JSON-RPC 2.0 messages as MCP uses them, for the
 * executor's MCP gateway: reading one message, writing replies, requests
 * and notifications, and splitting an MCP stdio stream into lines.
 *
 * Every byte read here comes from a possibly compromised agent or a hostile
 * MCP server. The reader is strict: ig_json_parse first (size, depth,
 * duplicate keys, UTF-8; see ig_json.h), then the message shape, with no
 * member left unexplained, so that a message means one thing to the gateway
 * and to whatever reads it after the gateway.
 *
 * Ids. A JSON-RPC id is a string or an integral number. ig_json_parse reads
 * every number as a double, so an id is a json_real (1, 1.0 and 1e0 are the
 * same id, written back "1"), integral and at most 2^53 in magnitude.
 * Beyond that a double cannot hold every integer; even below it, a number
 * written with more digits than a double keeps ("1.0000000000000001") reads
 * as the integer it rounds to. A string id may hold "\u0000": compare and
 * copy ids with exec_mcp_id_equal / exec_mcp_id_text, never strcmp. An id
 * may be 0: test an id pointer against NULL, never a value for truth.
 *
 * Output is RFC 8785 canonical (ig_canon_write): compact, one line, with
 * no raw '\n' anywhere (strings escape it), so a caller may append '\n'
 * and have MCP's stdio framing.
 *
 * Pure: no I/O, no globals; thread safe for distinct outputs (parsed
 * messages may be read from several threads). Pointer arguments must not
 * be NULL unless a function says so; err may be NULL (the detail is
 * dropped).
 */
#ifndef EXEC_MCP_RPC_H
#define EXEC_MCP_RPC_H

#include <jansson.h>
#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"

enum exec_mcp_kind {
    EXEC_MCP_REQUEST = 1,
    EXEC_MCP_NOTIFICATION,
    EXEC_MCP_RESULT,
    EXEC_MCP_ERROR
};

/* JSON-RPC 2.0 error codes used by MCP */
#define EXEC_MCP_PARSE_ERROR -32700
#define EXEC_MCP_INVALID_REQUEST -32600
#define EXEC_MCP_METHOD_NOT_FOUND -32601
#define EXEC_MCP_INVALID_PARAMS -32602
#define EXEC_MCP_INTERNAL_ERROR -32603

struct exec_mcp_msg {
    enum exec_mcp_kind kind;
    json_t *root;         /* owned: the whole parsed message */
    const json_t *id;     /* borrowed: a string or an integral number; NULL for
                             a notification, and for an error whose id was
                             null or absent */
    const char *method;   /* borrowed, NUL-free; NULL for results/errors */
    const json_t *params; /* borrowed: an object, or NULL when absent */
    const json_t *result; /* EXEC_MCP_RESULT: borrowed, any value (MCP: an
                             object) */
    const json_t *error;  /* EXEC_MCP_ERROR: borrowed {code, message, data?},
                             code integral and within int */
};

/*
 * Parse one message: buf holds len bytes (need not be NUL-terminated;
 * may be NULL when len is 0). *m is overwritten, not released first.
 *
 * IG_OK: *m filled (free with exec_mcp_msg_release), *code 0, *bad_id NULL.
 * The kind follows from the members: "method" and "id" a request, "method"
 * alone a notification, "result" a result, "error" an error.
 *
 * Otherwise *m is zeroed, *code gets the JSON-RPC error code to answer
 * with, *bad_id a new reference to the message's id when it was a valid
 * id (so the error reply can carry it; the caller json_decref()s it), else
 * NULL (answer "id":null), and err says why in one line (never quoting the
 * input). Status and code:
 *   - IG_ERR_INVALID / IG_ERR_LIMIT, -32700: the text is not JSON as
 *     ig_json_parse reads it (malformed, or over one of its limits: more
 *     than IG_JSON_MAX_BYTES, IG_JSON_MAX_DEPTH, ...);
 *   - IG_ERR_INVALID, -32600: JSON that is not a message: an array (a
 *     batch: not supported), anything else but an object; "jsonrpc" not
 *     exactly "2.0"; an id that is null (but see errors below), a bool,
 *     fractional, beyond +-2^53, an object or an array; a "method" that is
 *     not a non-empty string or holds a NUL; "params" that is not an object
 *     (MCP uses objects only); a request or notification that also carries
 *     "result" or "error"; a message without "method" that has both or
 *     neither of "result" and "error", or carries "params", or has no id
 *     (a result); an error object without an integral "code" that fits an
 *     int, or without a string "message"; any top-level member but
 *     jsonrpc, id, method, params, result, error;
 *   - IG_ERR_NOMEM, -32603.
 * An error response may carry "id": null or no id (JSON-RPC 2.0 answers so
 * when it could not read the request's id, and the MCP TypeScript SDK
 * does): it parses, with m->id NULL. A caller never answers a result or an
 * error, valid or not.
 */
enum ig_status exec_mcp_parse(const char *buf, size_t len,
                              struct exec_mcp_msg *m, int *code,
                              json_t **bad_id, struct ig_err *err) IG_WUR;

/* Free the message and zero *m. NULL and a zeroed *m are fine. */
void exec_mcp_msg_release(struct exec_mcp_msg *m);

/*
 * Whether id is a valid JSON-RPC id as defined above: a string (any bytes,
 * "\u0000" included), or a number (json_real or json_integer) that is
 * integral and at most 2^53 in magnitude. 0 for NULL.
 */
int exec_mcp_id_valid(const json_t *id);

/*
 * 1 when a and b are the same id: both strings with the same bytes (same
 * length, NULs included), or both numbers of the same value (json_real 1.0
 * equals json_integer 1; -0 equals 0). 0 otherwise, and when either is
 * NULL or not a valid id (exec_mcp_id_valid): a missing id matches nothing.
 */
int exec_mcp_id_equal(const json_t *a, const json_t *b);

/*
 * The canonical JSON text of id, NUL-terminated, into out (cap bytes, the
 * NUL included): a number as "42", a string quoted and escaped ("\"42\"",
 * a NUL as \u0000), so string and number ids never share a text and the
 * text holds no NUL. For map keys and logs (it is attacker text: a log
 * line quotes it as a value). IG_ERR_INVALID for an id that is not valid
 * (out "" when cap > 0), IG_ERR_LIMIT when the text does not fit (out ""),
 * IG_ERR_NOMEM.
 */
enum ig_status exec_mcp_id_text(const json_t *id, char *out, size_t cap) IG_WUR;

/*
 * Reply and message builders: append one message's canonical text to out
 * (no newline). On any failure nothing is appended: IG_ERR_INVALID for
 * arguments that would not make a message exec_mcp_parse reads back as
 * the same kind (an id that is not valid, where NULL is valid only for an
 * error reply and writes "id":null; a NULL result; a method that is NULL,
 * empty or not UTF-8; params that is neither NULL, left out, nor an
 * object; a message that is not UTF-8; a value with no canonical form, see
 * ig_canon_write), IG_ERR_LIMIT past out's cap, IG_ERR_NOMEM. They take no
 * ig_err: their arguments come from the gateway, which knows what it
 * passed.
 */
enum ig_status exec_mcp_write_result(struct ig_buf *out, const json_t *id,
                                     const json_t *result) IG_WUR;
/* data may be NULL (left out). */
enum ig_status exec_mcp_write_error(struct ig_buf *out, const json_t *id,
                                    int code, const char *message,
                                    const json_t *data) IG_WUR;
/* params NULL: none. */
enum ig_status exec_mcp_write_request(struct ig_buf *out, const json_t *id,
                                      const char *method,
                                      const json_t *params) IG_WUR;
enum ig_status exec_mcp_write_notification(struct ig_buf *out,
                                           const char *method,
                                           const json_t *params) IG_WUR;

/*
 * stdio framing (MCP stdio transport: one JSON message per line, '\n'
 * separated, an optional '\r' before it stripped): an incremental splitter
 * for a child's stdout, capped. Embed it, exec_mcp_lines_init it, feed it
 * what read() returns, exec_mcp_lines_release it. Not thread safe.
 *
 * max_line_bytes caps a line without its "\n" or "\r\n"; callers normally
 * pass IG_JSON_MAX_BYTES, the most exec_mcp_parse reads. The splitter
 * holds at most max_line_bytes + 1 bytes of an unfinished line.
 */
struct exec_mcp_lines {
    struct ig_buf line; /* the unfinished line */
    size_t max;
    int skipping; /* dropping the rest of a line that went over max */
};

void exec_mcp_lines_init(struct exec_mcp_lines *l, size_t max_line_bytes);

/*
 * Feed n bytes (buf may be NULL when n is 0). fn is called once per
 * complete line, in order, without its '\n' or "\r\n" (line valid during
 * the call only; it may hold any byte but '\n', NUL included), or with
 * too_long = 1 (line NULL, len 0) once for a line that went over max, as
 * soon as that is sure (at most one byte later): its bytes up to the next
 * '\n' are dropped, never delivered whole or in part. Empty lines (also a
 * lone "\r") are skipped. A line without its '\n' yet waits for the next
 * feed; at end of stream it is never delivered (a message cut short is no
 * message).
 *
 * IG_OK. fn returning nonzero stops feeding: the rest of buf is dropped
 * and exec_mcp_lines_feed returns IG_ERR_INVALID; the caller then stops
 * reading (the stream is out of step) and releases the splitter.
 * IG_ERR_NOMEM: likewise out of step.
 */
typedef int (*exec_mcp_line_fn)(void *ctx, const char *line, size_t len,
                                int too_long);
enum ig_status exec_mcp_lines_feed(struct exec_mcp_lines *l, const char *buf,
                                   size_t n, exec_mcp_line_fn fn,
                                   void *ctx) IG_WUR;

/* Free the line buffer; the splitter is as after init. NULL is fine. */
void exec_mcp_lines_release(struct exec_mcp_lines *l);

#endif
