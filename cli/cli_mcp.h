/*
 * cli_mcp.h - what the files of `intentgate mcp connect` share: the
 * bridge's state, its output lines and its HTTP exchanges.
 *
 * cmd_mcp.c: the command (arguments, token, signals), the stdin reader,
 * one thread per POST in flight, the GET stream's thread, the shutdown.
 * cli_mcp_http.c: one exchange with the MCP server (POST, GET, DELETE)
 * with libcurl, its answer turned into stdout lines as it arrives.
 * cli_mcp_out.c: stdout and stderr, one whole line per write under one
 * mutex; JSON-RPC error lines; a server message re-serialised on one line.
 *
 * Everything here is thread safe unless said otherwise: every field of
 * struct mcp_bridge below `lock` is read and written under it.
 */
#ifndef CLI_MCP_H
#define CLI_MCP_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "ig_error.h"
#include "ig_limits.h"

struct mcp_bridge {
    const char *url;     /* the MCP endpoint, checked by cmd_mcp.c */
    const char *auth;    /* "Authorization: Bearer T", sodium_malloc'd */
    atomic_int stopping; /* shutting down: transfers abort */
    pthread_mutex_t out; /* one line at a time on stdout and stderr */
    pthread_mutex_t lock;
    pthread_cond_t changed;                  /* inflight went down */
    char session[IG_MCP_SESSION_ID_MAX + 1]; /* "" until initialize */
    char version[IG_MCP_VERSION_MAX + 1];    /* "" until initialize */
    int inflight;                            /* POST threads running */
    int get_started;                         /* the GET thread exists */
    pthread_t get_thread;
    /* Called once initialize is answered (cmd_mcp.c starts the GET
       stream): set by the command, called by cli_mcp_http.c. */
    void (*initialized)(struct mcp_bridge *b);
};

/* ---- cli_mcp_out.c ---- */

/* One line "intentgate mcp: MESSAGE" on stderr (cut to fit; control
   bytes, which a server's text may hold, shown as '?'). Never pass a
   secret. */
void mcp_log(struct mcp_bridge *b, const char *fmt, ...) IG_PRINTF(2, 3);

/* msg as one line of RFC 8785 JSON on stdout; 0, or -1 after a stderr
   line when it has no canonical form or is too large. */
int mcp_line(struct mcp_bridge *b, const json_t *msg);

/* A JSON-RPC error line {"error":{"code","message"},"id","jsonrpc"} on
   stdout; id NULL writes "id":null. The message is cut (at a UTF-8
   boundary) to fit. */
void mcp_error_line(struct mcp_bridge *b, const json_t *id, int code,
                    const char *fmt, ...) IG_PRINTF(4, 5);

/* The JSON-RPC error message of an error answer's body ("" when it has
   none), at most IG_MCP_ERROR_MESSAGE_MAX bytes cut at a UTF-8 boundary,
   into out (size bytes). */
void mcp_rpc_message(const char *body, size_t len, char *out, size_t size);

/* ---- cli_mcp_http.c ---- */

/*
 * POST the len bytes of body (one JSON-RPC message, already checked) and
 * copy what answers it to stdout. id: the message's id when it is a
 * request (it then always gets an answer line: the server's, or a -32000
 * error), NULL for a notification or a response. is_init: it is the
 * initialize request (its answer's session id and protocolVersion are
 * kept, and the GET stream is started after its result).
 */
void mcp_post(struct mcp_bridge *b, const char *body, size_t len,
              const json_t *id, int is_init);

/* Hold the GET stream open and copy its events to stdout until it ends
   or the bridge stops; 405 (no stream offered) is fine. */
void mcp_get_stream(struct mcp_bridge *b);

/* End the session with DELETE, when there is one. */
void mcp_delete(struct mcp_bridge *b);

/* ---- cmd_mcp.c ---- */

/* `intentgate mcp` (cmd_mcp.c), a subcommand as cli.h describes them. */
int cli_mcp(int argc, char **argv);

#endif
