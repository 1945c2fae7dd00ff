/*
 * cli_hook_tools.c - the built-in mappings of Claude Code tools to intents
 * (cli_hook.h), except Bash's (cli_hook_shell.c).
 *
 *   Write, Edit, MultiEdit, NotebookEdit -> file.write, resource the path;
 *       params hold the path and sizes (a Write's content as its length
 *       and "sha256:..." hash), never the text itself
 *   WebFetch            -> http.request, resource the URL, params
 *                          {method "GET", url, prompt}
 *   mcp__SERVER__TOOL   -> mcp.server.tool, resource the tool name,
 *                          params tool_input as it is
 * A tool_input without the fields its mapping needs is an error (a deny),
 * never a partial intent.
 */
#include "cli_hook.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "ig_hash.h"
#include "ig_text.h"

/* "sha256:" + hex of len bytes, as ig_hash_bytes writes it, but with
   libsodium's SHA-256: the hook's small binary does not load libcrypto
   (cli/main.c), and a Write's content is one short digest per call
   (test_hook_map checks the two agree). */
static void
content_hash(const char *p, size_t len, char out[IG_HASH_STRLEN + 1])
{
    unsigned char d[crypto_hash_sha256_BYTES];

    (void)crypto_hash_sha256(d, (const unsigned char *)p,
                             (unsigned long long)len);
    memcpy(out, IG_HASH_PREFIX, sizeof(IG_HASH_PREFIX) - 1);
    (void)sodium_bin2hex(out + sizeof(IG_HASH_PREFIX) - 1,
                         IG_HASH_STRLEN + 2 - sizeof(IG_HASH_PREFIX), d,
                         sizeof(d));
}

/* tool_input's key as a non-empty string without NUL, or NULL after err. */
static const json_t *
need_path(const json_t *input, const char *tool, const char *key,
          struct ig_err *err)
{
    const json_t *v = json_object_get(input, key);

    if (cli_hook_string(v) == NULL || json_string_length(v) == 0) {
        (void)ig_err_set(err, IG_ERR_INVALID,
                         "%s: tool_input.%s is not a non-empty string", tool,
                         key);
        return NULL;
    }
    return v;
}

static enum ig_status
map_write(json_t *body, const char *tool, const json_t *input, const char *cwd,
          struct ig_err *err)
{
    const json_t *path = need_path(input, "Write", "file_path", err);
    const json_t *content = json_object_get(input, "content");
    char hash[IG_HASH_STRLEN + 1];

    (void)tool;
    (void)cwd;
    if (path == NULL)
        return IG_ERR_INVALID;
    if (!json_is_string(content))
        return ig_err_set(err, IG_ERR_INVALID,
                          "Write: tool_input.content is not a string");
    content_hash(json_string_value(content), json_string_length(content), hash);
    /* "O" takes a new reference */
    return cli_hook_set_intent(
        body, "file.write", cli_hook_ref(path),
        json_pack("{s:O, s:I, s:s}", "path", path, "content_bytes",
                  (json_int_t)json_string_length(content), "content_hash",
                  hash),
        err);
}

/* *out = {old_string_bytes, new_string_bytes, replace_all} of one edit. */
static enum ig_status
edit_sizes(const json_t *e, const char *tool, json_t **out, struct ig_err *err)
{
    const json_t *o = json_object_get(e, "old_string");
    const json_t *n = json_object_get(e, "new_string");
    const json_t *all = json_object_get(e, "replace_all");

    if (!json_is_string(o) || !json_is_string(n) ||
        (all != NULL && !json_is_boolean(all)))
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: an edit needs old_string and new_string "
                          "strings (replace_all a boolean)",
                          tool);
    *out = json_pack("{s:I, s:I, s:b}", "old_string_bytes",
                     (json_int_t)json_string_length(o), "new_string_bytes",
                     (json_int_t)json_string_length(n), "replace_all",
                     json_is_true(all));
    if (*out == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

static enum ig_status
map_edit(json_t *body, const char *tool, const json_t *input, const char *cwd,
         struct ig_err *err)
{
    const json_t *path = need_path(input, "Edit", "file_path", err);
    json_t *params;
    enum ig_status st;

    (void)tool;
    (void)cwd;
    if (path == NULL)
        return IG_ERR_INVALID;
    if ((st = edit_sizes(input, "Edit", &params, err)) != IG_OK)
        return st;
    if (json_object_set_new(params, "path", cli_hook_ref(path)) != 0) {
        json_decref(params);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    return cli_hook_set_intent(body, "file.write", cli_hook_ref(path), params,
                               err);
}

static enum ig_status
map_multiedit(json_t *body, const char *tool, const json_t *input,
              const char *cwd, struct ig_err *err)
{
    const json_t *path = need_path(input, "MultiEdit", "file_path", err);
    const json_t *edits = json_object_get(input, "edits"), *e;
    enum ig_status st = IG_OK;
    json_t *list, *one;
    size_t i;

    (void)tool;
    (void)cwd;
    if (path == NULL)
        return IG_ERR_INVALID;
    if (!json_is_array(edits) || json_array_size(edits) == 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "MultiEdit: tool_input.edits is not a non-empty "
                          "array");
    if ((list = json_array()) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    json_array_foreach(edits, i, e)
    {
        if ((st = edit_sizes(e, "MultiEdit", &one, err)) != IG_OK)
            break;
        if (json_array_append_new(list, one) != 0) {
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
            break;
        }
    }
    if (st != IG_OK) {
        json_decref(list);
        return st;
    }
    /* "O" takes a new reference, "o" steals list */
    return cli_hook_set_intent(
        body, "file.write", cli_hook_ref(path),
        json_pack("{s:O, s:o}", "path", path, "edits", list), err);
}

static enum ig_status
map_notebook(json_t *body, const char *tool, const json_t *input,
             const char *cwd, struct ig_err *err)
{
    const json_t *path = need_path(input, "NotebookEdit", "notebook_path", err);
    const json_t *src = json_object_get(input, "new_source");
    const json_t *mode = json_object_get(input, "edit_mode");

    (void)tool;
    (void)cwd;
    if (path == NULL)
        return IG_ERR_INVALID;
    if ((src != NULL && !json_is_string(src)) ||
        (mode != NULL && !json_is_string(mode)))
        return ig_err_set(err, IG_ERR_INVALID,
                          "NotebookEdit: new_source and edit_mode must be "
                          "strings");
    return cli_hook_set_intent(
        body, "file.write", cli_hook_ref(path),
        json_pack("{s:O, s:I, s:s}", "path", path, "new_source_bytes",
                  (json_int_t)json_string_length(src), "edit_mode",
                  mode != NULL ? json_string_value(mode) : "replace"),
        err);
}

static enum ig_status
map_webfetch(json_t *body, const char *tool, const json_t *input,
             const char *cwd, struct ig_err *err)
{
    const json_t *url = need_path(input, "WebFetch", "url", err);
    const json_t *prompt = json_object_get(input, "prompt");

    (void)tool;
    (void)cwd;
    if (url == NULL)
        return IG_ERR_INVALID;
    if (prompt != NULL && !json_is_string(prompt))
        return ig_err_set(err, IG_ERR_INVALID,
                          "WebFetch: tool_input.prompt is not a string");
    return cli_hook_set_intent(
        body, "http.request", cli_hook_ref(url),
        json_pack("{s:s, s:O, s:s%}", "method", "GET", "url", url, "prompt",
                  prompt != NULL ? json_string_value(prompt) : "",
                  json_string_length(prompt)),
        err);
}

/* A part of an MCP tool name: [A-Za-z0-9_-]+, n bytes. */
static int
valid_mcp_part(const char *s, size_t n)
{
    size_t i;

    if (n == 0)
        return 0;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
            return 0;
    return 1;
}

/* mcp__SERVER__TOOL -> action mcp.server.tool (ASCII lowercased, as the
   action grammar is), resource the tool name as sent, params tool_input. */
static enum ig_status
map_mcp(json_t *body, const char *name, const json_t *input, const char *cwd,
        struct ig_err *err)
{
    const char *server = name + 5, *sep = strstr(server, "__"), *tool;
    char action[CLI_HOOK_ACTION_MAX + 1];
    size_t ns, nt, i;
    int n;

    (void)cwd;
    if (sep == NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: an MCP tool name is mcp__SERVER__TOOL", name);
    tool = sep + 2;
    ns = (size_t)(sep - server);
    nt = strlen(tool);
    if (!valid_mcp_part(server, ns) || !valid_mcp_part(tool, nt))
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: MCP server and tool names must be letters, "
                          "digits, _ and -",
                          name);
    n = snprintf(action, sizeof(action), "mcp.%.*s.%s", (int)ns, server, tool);
    if (n < 0 || (size_t)n >= sizeof(action))
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: the action would be longer than %d", name,
                          CLI_HOOK_ACTION_MAX);
    for (i = 0; action[i] != '\0'; i++)
        if (action[i] >= 'A' && action[i] <= 'Z')
            action[i] = (char)(action[i] - 'A' + 'a');
    IG_ASSERT(ig_action_valid(action));
    return cli_hook_set_intent(body, action, json_string(name),
                               cli_hook_ref(input), err);
}

cli_hook_builtin_fn
cli_hook_builtin(const char *tool)
{
    static const struct {
        const char *name;
        cli_hook_builtin_fn fn;
    } table[] = {
        {"Bash", cli_hook_map_bash},
        {"Write", map_write},
        {"Edit", map_edit},
        {"MultiEdit", map_multiedit},
        {"NotebookEdit", map_notebook},
        {"WebFetch", map_webfetch},
    };
    size_t i;

    for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(tool, table[i].name) == 0)
            return table[i].fn;
    return strncmp(tool, "mcp__", 5) == 0 ? map_mcp : NULL;
}
