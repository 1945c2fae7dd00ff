/*
 * cli_hook_map.c - Claude Code tool calls as intents (cli_hook.h).
 *
 * A PreToolUse event names a tool and its input. The mapping file's
 * "tools" entry for that name wins: a fixed answer ("allow", "deny",
 * "ask") or an object {action, resource, params} whose strings starting
 * with "/" are JSON pointers into tool_input. Otherwise a built-in mapping
 * (cli_hook_tools.c: Bash, Write, Edit, MultiEdit, NotebookEdit, WebFetch,
 * mcp__SERVER__TOOL) applies; otherwise the `unmapped` answer. Every intent
 * carries the same context: the agent, tool name, session, tool use id, cwd and
 * permission mode as Claude Code sent them.
 *
 * The file is checked completely when it is loaded, so a mistake in it
 * denies every call with one message naming the key, rather than
 * surfacing later on one tool. The event is checked as it is mapped.
 */
#include "cli_hook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "ig_text.h"

struct cli_hook_map {
    struct cli_hook_settings set;
    json_t *tools; /* the validated "tools" object; NULL: none */
};

/* ---- small checks ---- */

const json_t *
cli_hook_pointer(const json_t *doc, const char *ptr)
{
    return ig_json_pointer_get(doc, ptr);
}

/* "deny"/"ask" (and "allow" when allowed) as an answer; -1 otherwise. */
static int
answer_named(const json_t *v, int allow_ok)
{
    const char *s = json_string_value(v);

    if (s == NULL)
        return -1;
    if (strcmp(s, "deny") == 0)
        return CLI_HOOK_DENY;
    if (strcmp(s, "ask") == 0)
        return CLI_HOOK_ASK;
    if (allow_ok && strcmp(s, "allow") == 0)
        return CLI_HOOK_ALLOW;
    return -1;
}

/* An integral number in [lo, hi], or -1. */
static int
int_in(const json_t *v, int lo, int hi)
{
    double d;

    if (!json_is_number(v))
        return -1;
    d = json_number_value(v);
    if (!(d >= lo && d <= hi) || d != (double)(int)d)
        return -1;
    return (int)d;
}

/* Control characters in a message (names come from the input) as '?':
   a reason is one line of plain text. */
static void
one_line(char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* ---- the mapping file ---- */

/* One value in a spec: a pointer string is checked, a literal is fine. */
static int
valid_source(const json_t *v)
{
    const char *s = json_string_value(v);

    return s == NULL || s[0] != '/' ||
           (cli_hook_string(v) != NULL && ig_json_pointer_valid(s));
}

static enum ig_status
check_spec(const char *tool, const json_t *spec, struct ig_err *err)
{
    const json_t *v, *p;
    const char *key, *pk;

    json_object_foreach(ig_json_unconst(spec), key, v)
    {
        if (strcmp(key, "action") == 0) {
            if (cli_hook_string(v) == NULL ||
                !ig_action_valid(json_string_value(v)))
                return ig_err_set(err, IG_ERR_INVALID,
                                  "tools.%s.action must match "
                                  "[a-z][a-z0-9._:-]* (at most %d)",
                                  tool, CLI_HOOK_ACTION_MAX);
        } else if (strcmp(key, "resource") == 0) {
            if (cli_hook_string(v) == NULL || json_string_length(v) == 0 ||
                !valid_source(v))
                return ig_err_set(err, IG_ERR_INVALID,
                                  "tools.%s.resource must be a JSON pointer "
                                  "(\"/field\") or a non-empty string",
                                  tool);
        } else if (strcmp(key, "params") == 0) {
            if (json_is_string(v) &&
                (cli_hook_string(v) == NULL ||
                 !ig_json_pointer_valid(cli_hook_string(v))))
                return ig_err_set(err, IG_ERR_INVALID,
                                  "tools.%s.params: not a JSON pointer", tool);
            if (!json_is_string(v) && !json_is_object(v))
                return ig_err_set(err, IG_ERR_INVALID,
                                  "tools.%s.params must be an object or a "
                                  "JSON pointer",
                                  tool);
            json_object_foreach(ig_json_unconst(v), pk, p) if (
                !valid_source(p)) return ig_err_set(err, IG_ERR_INVALID,
                                                    "tools.%s.params.%s: not a "
                                                    "JSON pointer",
                                                    tool, pk);
        } else {
            return ig_err_set(err, IG_ERR_INVALID,
                              "tools.%s: unknown key %s (action, resource, "
                              "params)",
                              tool, key);
        }
    }
    if (json_object_get(spec, "action") == NULL ||
        json_object_get(spec, "resource") == NULL)
        return ig_err_set(err, IG_ERR_INVALID,
                          "tools.%s needs action and resource", tool);
    return IG_OK;
}

static enum ig_status
check_tools(const json_t *tools, struct ig_err *err)
{
    const char *name;
    const json_t *v;
    size_t n;
    enum ig_status st;

    if (!json_is_object(tools))
        return ig_err_set(err, IG_ERR_INVALID, "tools must be an object");
    json_object_foreach(ig_json_unconst(tools), name, v)
    {
        n = strlen(name);
        if (n == 0 || n > CLI_HOOK_TOOL_NAME_MAX)
            return ig_err_set(err, IG_ERR_INVALID,
                              "tools: a tool name must be 1 to %d bytes",
                              CLI_HOOK_TOOL_NAME_MAX);
        if (json_is_object(v)) {
            if ((st = check_spec(name, v, err)) != IG_OK)
                return st;
        } else if (answer_named(v, 1) < 0) {
            return ig_err_set(err, IG_ERR_INVALID,
                              "tools.%s must be \"allow\", \"deny\", \"ask\" "
                              "or a mapping object",
                              name);
        }
    }
    return IG_OK;
}

/* The top-level keys into m; a missing timeout is computed later. */
static enum ig_status
read_settings(struct cli_hook_map *m, const json_t *doc, int *timeout,
              struct ig_err *err)
{
    const char *key;
    const json_t *v;
    enum ig_status st;
    int x;

    json_object_foreach(ig_json_unconst(doc), key, v)
    {
        if (strcmp(key, "escalate_wait") == 0) {
            if ((x = int_in(v, 0, CLI_HOOK_WAIT_MAX)) < 0)
                return ig_err_set(err, IG_ERR_INVALID,
                                  "escalate_wait must be a whole number of "
                                  "seconds, 0 to %d",
                                  CLI_HOOK_WAIT_MAX);
            m->set.escalate_wait = x;
        } else if (strcmp(key, "timeout") == 0) {
            if ((*timeout = int_in(v, 1, CLI_HOOK_TIMEOUT_MAX)) < 0)
                return ig_err_set(err, IG_ERR_INVALID,
                                  "timeout must be a whole number of "
                                  "seconds, 1 to %d",
                                  CLI_HOOK_TIMEOUT_MAX);
        } else if (strcmp(key, "on_escalate_timeout") == 0 ||
                   strcmp(key, "unmapped") == 0) {
            if ((x = answer_named(v, 0)) < 0)
                return ig_err_set(err, IG_ERR_INVALID,
                                  "%s must be \"deny\" or \"ask\"", key);
            if (key[0] == 'o')
                m->set.on_escalate_timeout = (enum cli_hook_answer)x;
            else
                m->set.unmapped = (enum cli_hook_answer)x;
        } else if (strcmp(key, "tools") == 0) {
            if ((st = check_tools(v, err)) != IG_OK)
                return st;
            m->tools = json_incref(ig_json_unconst(v));
        } else {
            return ig_err_set(err, IG_ERR_INVALID,
                              "unknown key %s (escalate_wait, timeout, "
                              "on_escalate_timeout, unmapped, tools)",
                              key);
        }
    }
    return IG_OK;
}

enum ig_status
cli_hook_map_load(const char *text, size_t len, struct cli_hook_map **out,
                  struct ig_err *err)
{
    struct cli_hook_map *m = calloc(1, sizeof(*m));
    json_t *doc = NULL;
    enum ig_status st = IG_OK;
    int timeout = -1;

    *out = NULL;
    if (m == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    m->set.escalate_wait = CLI_HOOK_WAIT_DEFAULT;
    m->set.on_escalate_timeout = CLI_HOOK_DENY;
    m->set.unmapped = CLI_HOOK_DENY;
    if (text != NULL) {
        if (len > CLI_HOOK_MAPPINGS_MAX) {
            st = ig_err_set(err, IG_ERR_LIMIT, "larger than %d bytes",
                            CLI_HOOK_MAPPINGS_MAX);
            goto out;
        }
        if ((st = ig_json_parse(text, len, &doc, err)) != IG_OK)
            goto out;
        if (!json_is_object(doc)) {
            st = ig_err_set(err, IG_ERR_INVALID, "not a JSON object");
            goto out;
        }
        if ((st = read_settings(m, doc, &timeout, err)) != IG_OK)
            goto out;
    }
    if (timeout < 0) {
        timeout = m->set.escalate_wait + CLI_HOOK_TIMEOUT_SLACK;
    } else if (timeout < m->set.escalate_wait + 2) {
        st = ig_err_set(err, IG_ERR_INVALID,
                        "timeout (%d) must be at least escalate_wait (%d) + 2",
                        timeout, m->set.escalate_wait);
        goto out;
    }
    m->set.timeout = timeout;
    *out = m;
    m = NULL;
out:
    if (st != IG_OK && err != NULL)
        one_line(err->msg);
    json_decref(doc);
    cli_hook_map_free(m);
    return st;
}

void
cli_hook_map_free(struct cli_hook_map *m)
{
    if (m == NULL)
        return;
    json_decref(m->tools);
    free(m);
}

const struct cli_hook_settings *
cli_hook_map_settings(const struct cli_hook_map *m)
{
    return &m->set;
}

/* ---- mapping one event ---- */

/* A mapping file's {action, resource, params} applied to tool_input. */
static enum ig_status
map_spec(json_t *body, const json_t *spec, const json_t *input,
         const char *tool, struct ig_err *err)
{
    const json_t *r = json_object_get(spec, "resource");
    const json_t *p = json_object_get(spec, "params"), *v, *got;
    const char *rs = json_string_value(r), *key;
    json_t *params;

    if (rs[0] == '/') {
        r = cli_hook_pointer(input, rs);
        if (cli_hook_string(r) == NULL || json_string_length(r) == 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "%s: tool_input%s (the resource) is not a "
                              "non-empty string",
                              tool, rs);
    }
    if (p == NULL || json_is_string(p)) {
        got = cli_hook_pointer(input, p != NULL ? json_string_value(p) : "");
        if (!json_is_object(got))
            return ig_err_set(err, IG_ERR_INVALID,
                              "%s: tool_input%s (the params) is not an "
                              "object",
                              tool, p != NULL ? json_string_value(p) : "");
        params = cli_hook_ref(got);
    } else {
        if ((params = json_object()) == NULL)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        json_object_foreach(ig_json_unconst(p), key, v)
        {
            got = v;
            if (json_is_string(v) && json_string_value(v)[0] == '/')
                got = cli_hook_pointer(input, json_string_value(v));
            if (got != NULL &&
                json_object_set_new(params, key, cli_hook_ref(got))) {
                json_decref(params);
                return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
            }
        }
    }
    return cli_hook_set_intent(
        body, json_string_value(json_object_get(spec, "action")),
        cli_hook_ref(r), params, err);
}

/* body = {"context": {...}} from the event's own fields. */
static enum ig_status
context(const json_t *event, const char *tool, json_t **body,
        struct ig_err *err)
{
    static const char *const keys[] = {"session_id", "tool_use_id", "cwd",
                                       "permission_mode"};
    json_t *ctx =
        json_pack("{s:s, s:s}", "agent", "claude-code", "tool_name", tool);
    const json_t *v;
    size_t i;

    *body = NULL;
    if (ctx == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        v = json_object_get(event, keys[i]);
        if (v == NULL)
            continue;
        if (cli_hook_string(v) == NULL) {
            json_decref(ctx);
            return ig_err_set(err, IG_ERR_INVALID,
                              "the event's %s is not a string", keys[i]);
        }
        if (json_object_set_new(ctx, keys[i], cli_hook_ref(v)) != 0) {
            json_decref(ctx);
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        }
    }
    /* "o" steals ctx */
    if ((*body = json_pack("{s:o}", "context", ctx)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

/* cli_hook_map_event without the clean-up of its messages. */
static enum ig_status
map_event(const struct cli_hook_map *m, const json_t *event,
          struct cli_hook_mapped *out, struct ig_err *err)
{
    const json_t *input = json_object_get(event, "tool_input"), *rule;
    const char *ev =
        json_string_value(json_object_get(event, "hook_event_name"));
    const char *tool = cli_hook_string(json_object_get(event, "tool_name"));
    const char *cwd = cli_hook_string(json_object_get(event, "cwd"));
    enum ig_status st;
    cli_hook_builtin_fn fn;
    json_t *body;
    int a;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(event))
        return ig_err_set(err, IG_ERR_INVALID, "the event is not an object");
    if (ev == NULL || strcmp(ev, "PreToolUse") != 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "hook_event_name is not PreToolUse");
    if (tool == NULL || tool[0] == '\0')
        return ig_err_set(err, IG_ERR_INVALID,
                          "tool_name is not a non-empty string");
    if (!json_is_object(input))
        return ig_err_set(err, IG_ERR_INVALID, "tool_input is not an object");
    rule = m->tools != NULL ? json_object_get(m->tools, tool) : NULL;
    if ((a = answer_named(rule, 1)) >= 0) {
        out->fixed = (enum cli_hook_answer)a;
        (void)snprintf(out->why, sizeof(out->why),
                       "the mapping file answers tool %s itself", tool);
        return IG_OK;
    }
    fn = cli_hook_builtin(tool);
    if (rule == NULL && fn == NULL) {
        out->fixed = m->set.unmapped;
        (void)snprintf(out->why, sizeof(out->why), "no mapping for tool %s",
                       tool);
        return IG_OK;
    }
    if ((st = context(event, tool, &body, err)) != IG_OK)
        return st;
    if (rule != NULL)
        st = map_spec(body, rule, input, tool, err);
    else
        st = fn(body, tool, input, cwd, err);
    if (st != IG_OK) {
        json_decref(body);
        return st;
    }
    out->body = body;
    return IG_OK;
}

enum ig_status
cli_hook_map_event(const struct cli_hook_map *m, const json_t *event,
                   struct cli_hook_mapped *out, struct ig_err *err)
{
    enum ig_status st = map_event(m, event, out, err);

    if (st != IG_OK && err != NULL)
        one_line(err->msg);
    one_line(out->why);
    return st;
}

void
cli_hook_mapped_release(struct cli_hook_mapped *out)
{
    json_decref(out->body);
    out->body = NULL;
}
