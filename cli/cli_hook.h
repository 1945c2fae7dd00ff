/*
 * cli_hook.h - the parts of `intentgate hook claude-code` (cmd_hook.c) that
 * need no network: reading the mapping file and turning a Claude Code
 * PreToolUse event into an intent body (cli_hook_map.c), the built-in
 * tool mappings (cli_hook_tools.c), splitting a Bash command into an argv
 * (cli_hook_shell.c), and the helpers all of them share (cli_hook_util.c).
 * Each file uses only those listed after it. Private to cli/; the unit
 * tests and the fuzz target use it too.
 *
 * Nothing here decides: a mapping produces either the intent the PDP is
 * asked about, or a fixed answer the operator configured (a tool mapped to
 * "allow"/"deny"/"ask", or the `unmapped` answer). Every error is a status
 * with a one-line reason (err), which the command turns into a deny.
 * Intent bodies share values with the event and the map by reference:
 * one thread at a time. Nothing here touches the network, signals or
 * files.
 */
#ifndef CLI_HOOK_H
#define CLI_HOOK_H

#include <jansson.h>
#include <stddef.h>

#include "ig_error.h"
#include "ig_json.h"
#include "ig_limits.h"

/* ---- limits (the hook's own, numbers in ig_limits.h; the PDP applies its
   max_body_bytes too) */

/* Largest PreToolUse event read from stdin: the strict reader's cap. */
#define CLI_HOOK_INPUT_MAX IG_JSON_MAX_BYTES
/* Largest mapping file, in bytes. */
#define CLI_HOOK_MAPPINGS_MAX IG_HOOK_MAPPINGS_MAX
/* escalate_wait: default and largest, in seconds. */
#define CLI_HOOK_WAIT_DEFAULT IG_HOOK_WAIT_DEFAULT
#define CLI_HOOK_WAIT_MAX IG_HOOK_WAIT_MAX
/* timeout (the hard wall clock) defaults to escalate_wait + this. */
#define CLI_HOOK_TIMEOUT_SLACK IG_HOOK_TIMEOUT_SLACK
#define CLI_HOOK_TIMEOUT_MAX IG_HOOK_TIMEOUT_MAX
/* Longest tool name a mapping file may name, in bytes. */
#define CLI_HOOK_TOOL_NAME_MAX IG_HOOK_TOOL_NAME_MAX
/* Longest action (as the PDP's grammar allows). */
#define CLI_HOOK_ACTION_MAX IG_ACTION_MAX

/* What Claude Code is told. The zero value denies. */
enum cli_hook_answer { CLI_HOOK_DENY = 0, CLI_HOOK_ALLOW, CLI_HOOK_ASK };

/* The mapping file's settings (defaults when there is no file). */
struct cli_hook_settings {
    int escalate_wait; /* seconds to wait for a human, 0..WAIT_MAX */
    int timeout; /* hard limit for the run, seconds (>= escalate_wait + 2) */
    enum cli_hook_answer on_escalate_timeout; /* DENY or ASK */
    enum cli_hook_answer unmapped;            /* DENY or ASK */
};

/* A mapping file: settings plus per-tool overrides. Opaque. */
struct cli_hook_map;

/* The result of mapping one event. */
struct cli_hook_mapped {
    json_t *body; /* the POST /v1/intents body (owned); NULL: fixed answer */
    enum cli_hook_answer fixed; /* when body is NULL */
    char why[IG_ERR_MSGMAX];    /* when body is NULL: says which rule */
};

/* ---- cli_hook_util.c ---- */

/* v's text when v is a string without NUL bytes, else NULL. */
const char *cli_hook_string(const json_t *v);

/*
 * Set body's action (copied), resource and params (both released: pass a
 * new reference, or NULL after a failed allocation). IG_ERR_NOMEM.
 */
enum ig_status cli_hook_set_intent(json_t *body, const char *action,
                                   json_t *resource, json_t *params,
                                   struct ig_err *err) IG_WUR;

/* ---- cli_hook_map.c ---- */

/*
 * Parse a mapping file (len bytes of JSON; NULL/0 for "no file": the
 * defaults). On IG_OK *out is freed with cli_hook_map_free(). IG_ERR_INVALID
 * or IG_ERR_LIMIT with err naming the key at fault; IG_ERR_NOMEM.
 */
enum ig_status cli_hook_map_load(const char *text, size_t len,
                                 struct cli_hook_map **out,
                                 struct ig_err *err) IG_WUR;

/* Free m. NULL is fine. */
void cli_hook_map_free(struct cli_hook_map *m);

/* m's settings; never NULL, valid while m lives. */
const struct cli_hook_settings *
cli_hook_map_settings(const struct cli_hook_map *m);

/*
 * Map one PreToolUse event (a parsed object) to an intent body, or to a
 * fixed answer. On IG_OK exactly one of out->body / out->why is set;
 * release with cli_hook_mapped_release(). Errors (out->body NULL):
 * IG_ERR_INVALID for an event or tool_input that does not have the shape
 * its mapping needs (err says which field), IG_ERR_NOMEM.
 */
enum ig_status cli_hook_map_event(const struct cli_hook_map *m,
                                  const json_t *event,
                                  struct cli_hook_mapped *out,
                                  struct ig_err *err) IG_WUR;

/* Drop out->body (a NULL body is fine). */
void cli_hook_mapped_release(struct cli_hook_mapped *out);

/*
 * RFC 6901 JSON pointer ptr into doc: the value (borrowed), or NULL when it
 * names nothing. "" is doc itself.
 */
const json_t *cli_hook_pointer(const json_t *doc, const char *ptr);

/* A new reference to a value of the event (nothing writes to those). */
static inline json_t *
cli_hook_ref(const json_t *v)
{
    return json_incref(ig_json_unconst(v));
}

/* ---- cli_hook_tools.c (and cli_hook_map_bash) ---- */

/*
 * A built-in mapping: put action, resource and params into body (which
 * holds the context) for tool (its name) called with input (tool_input);
 * cwd is the event's (NULL when absent). Errors as cli_hook_map_event.
 */
typedef enum ig_status (*cli_hook_builtin_fn)(json_t *body, const char *tool,
                                              const json_t *input,
                                              const char *cwd,
                                              struct ig_err *err);

/* The built-in mapping of a tool name (mcp__* included), or NULL. */
cli_hook_builtin_fn cli_hook_builtin(const char *tool);

/* ---- cli_hook_shell.c ---- */

/*
 * Split a shell command (len bytes of UTF-8) into argv words the way a
 * POSIX shell would for a simple command: blanks separate words; single
 * quotes, double quotes (backslash escapes $ ` " \ only) and backslash
 * escapes are removed. When the command uses anything beyond that - an
 * operator (; & | < > ( ) newline), an expansion ($ ` * ? [ ] { } ~ !), a
 * comment, a leading assignment or reserved word, a control character, or
 * an unterminated quote - it is not one argv: *argv is then
 * ["sh", "-c", cmd] and *program is 1. An empty command gives []. On IG_OK
 * *argv is a new reference. IG_ERR_INVALID for a NUL byte or bytes that
 * are not UTF-8, IG_ERR_NOMEM.
 */
enum ig_status cli_hook_shell_split(const char *cmd, size_t len, json_t **argv,
                                    int *program, struct ig_err *err) IG_WUR;

/*
 * The built-in Bash mapping (a cli_hook_builtin_fn): action "shell.exec",
 * resource cwd (or "shell" when cwd is NULL or empty), params {"argv":
 * [...], "command": "<raw>"}. An empty command is IG_ERR_INVALID.
 */
enum ig_status cli_hook_map_bash(json_t *body, const char *tool,
                                 const json_t *input, const char *cwd,
                                 struct ig_err *err) IG_WUR;

#endif
