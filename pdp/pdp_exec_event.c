/*
 * pdp_exec_event.c - POST /v1/executor/events: an executor records what
 * it decided on its own in the audit log, so that compliance reads it with
 * everything else. Today that is the MCP gateway's pinned tool
 * definitions (docs/mcp.md): a tool pinned the first time it was seen, a
 * changed definition hidden, an accepted change shown again.
 *
 *   {"event": "mcp.tool_pinned" | "mcp.tool_changed" | "mcp.tool_accepted",
 *    "detail": {"server": "...", "tool": "...", "hash": "sha256:..."}}
 *
 * becomes the audit event {"type": "executor.event", "time", "executor"
 * (from the token), "event", "detail"}, durable before the 200. The event
 * names are a closed list and the detail's members are checked strings,
 * so an executor records facts of these kinds and nothing else.
 */
#include "pdp_int.h"

#include <string.h>

#include "ig_hash.h"
#include "ig_time.h"

static const char *const events[] = {"mcp.tool_pinned", "mcp.tool_changed",
                                     "mcp.tool_accepted", NULL};

/* A detail string: printable ASCII without spaces, 1..max bytes. */
static int
plain(const json_t *v, size_t max)
{
    const char *s = json_string_value(v);
    size_t i, n = json_string_length(v);

    if (s == NULL || n == 0 || n > max)
        return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

static int
check(struct pdp_req *r, const json_t *body)
{
    const json_t *ev = json_object_get(body, "event");
    const json_t *d = json_object_get(body, "detail"), *v;
    const char *k;
    size_t i;

    json_object_foreach((json_t *)(uintptr_t)body, k, v)
    {
        if (strcmp(k, "event") != 0 && strcmp(k, "detail") != 0) {
            pdp_reply_error(r, 400, "UNKNOWN_FIELD", k, "unknown field %.64s",
                            k);
            return -1;
        }
    }
    for (i = 0; events[i] != NULL && json_is_string(ev); i++)
        if (strcmp(json_string_value(ev), events[i]) == 0)
            break;
    if (!json_is_string(ev) || events[i] == NULL) {
        pdp_reply_error(r, 400, "INVALID_FIELD", "event",
                        "event must be mcp.tool_pinned, mcp.tool_changed or "
                        "mcp.tool_accepted");
        return -1;
    }
    if (!json_is_object(d) || json_object_size(d) != 3 ||
        !plain(json_object_get(d, "server"), 64) ||
        !plain(json_object_get(d, "tool"), 128) ||
        !plain(json_object_get(d, "hash"), IG_HASH_STRLEN) ||
        strncmp(json_string_value(json_object_get(d, "hash")), IG_HASH_PREFIX,
                strlen(IG_HASH_PREFIX)) != 0) {
        pdp_reply_error(r, 400, "INVALID_FIELD", "detail",
                        "detail must be {server, tool, hash}: printable "
                        "strings, hash sha256:...");
        return -1;
    }
    return 0;
}

void
pdp_post_executor_event(struct pdp_req *r)
{
    const struct pdp_principal *ex;
    char now[IG_TIME_STRLEN + 1], *text;
    const char *one[1];
    json_t *body, *ev;

    if ((ex = pdp_req_auth(r, 1u << PDP_ROLE_EXECUTOR)) == NULL)
        return;
    if ((body = pdp_req_json_object(r)) == NULL)
        return;
    if (check(r, body) != 0) {
        json_decref(body);
        return;
    }
    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    ev = json_pack("{s:s, s:s, s:s, s:O, s:O}", "type", "executor.event",
                   "time", now, "executor", ex->id, "event",
                   json_object_get(body, "event"), "detail",
                   json_object_get(body, "detail"));
    json_decref(body);
    text = ev != NULL ? pdp_json_text(ev) : NULL;
    json_decref(ev);
    if (text == NULL) {
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        return;
    }
    one[0] = text;
    if (store_put_events(r->srv->store, one, 1) != IG_OK)
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "the event could not be recorded");
    else
        pdp_reply_json(r, 200, json_pack("{s:b}", "recorded", 1));
    free(text);
}
