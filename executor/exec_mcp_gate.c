/*
 * exec_mcp_gate.c - the MCP gateway's methods (see exec_mcp.h): who the
 * bearer token is (GET /v1/whoami at the PDP, trusted for
 * IG_EXEC_MCP_WHOAMI_TTL_MS), sessions bound to that agent, version
 * negotiation, and each method: answered here (initialize, ping,
 * logging/setLevel), listed from the upstreams (tools/list with pinned
 * definitions, prompts/list, resources/list, resources/templates/list)
 * or gated (tools/call, resources/read, prompts/get: exec_mcp_call.c).
 *
 * Naming: an upstream's tool T of server alias A is shown as `A__T` and
 * decided as action `mcp.A.t` (t: T in ASCII lowercase, as the Claude
 * Code hook names mcp__A__T). Two tools of one server whose names differ
 * only in case would be one action: both are hidden. A tool whose
 * definition (the whole object the server lists, hashed in RFC 8785
 * form) differs from the pinned one is hidden and refused until an
 * administrator accepts it (ig_pins.h, `intentgate mcp tools accept`).
 */
#include "exec_mcp_int.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ig_canon.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "ig_log.h"

#define GATEWAY_NAME "intentgate"
#define GATEWAY_VERSION "0.16"

/* The versions the gateway speaks with agents, newest first. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                       NULL};

static int
version_ok(const char *v)
{
    size_t i;

    for (i = 0; versions[i] != NULL; i++)
        if (strcmp(v, versions[i]) == 0)
            return 1;
    return 0;
}

/* ---- the gateway's state ---- */

enum ig_status
exec_mcp_new(struct exec_ctx *x, struct exec_mcp **out, struct ig_err *err)
{
    size_t n = exec_registry_mcp_size(x->registry), i;
    struct exec_mcp *m;
    enum ig_status st = IG_OK;

    *out = NULL;
    if (n == 0)
        return IG_OK;
    if ((m = calloc(1, sizeof(*m))) == NULL ||
        (m->ups = calloc(n, sizeof(*m->ups))) == NULL ||
        (m->waiting = json_object()) == NULL ||
        (m->outbox = json_array()) == NULL) {
        if (m != NULL) {
            json_decref(m->waiting);
            json_decref(m->outbox);
        }
        if (m != NULL)
            free(m->ups);
        free(m);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    m->x = x;
    pthread_mutex_init(&m->mu, NULL);
    exec_mcp_workers_start(m);
    for (i = 0; i < n && st == IG_OK; i++) {
        m->ups[i].srv = exec_registry_mcp_at(x->registry, i);
        m->ups[i].hidden = json_object();
        pthread_mutex_init(&m->ups[i].mu, NULL);
        m->nups = i + 1;
        st = exec_mcp_up_new(x, m->ups[i].srv, &m->ups[i].up, err);
    }
    if (st == IG_OK) {
        struct ig_err e;

        ig_err_clear(&e);
        if ((st = ig_pins_open(x->cfg->mcp_pins, &m->pins, &e)) != IG_OK)
            (void)ig_err_set(err, st, "mcp_pins: %s", e.msg);
    }
    if (st != IG_OK) {
        exec_mcp_free(m);
        return st;
    }
    *out = m;
    return IG_OK;
}

void
exec_mcp_stop(struct exec_mcp *m)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    size_t i;

    if (m == NULL)
        return;
    atomic_store(&m->stopping, 1);
    for (i = 0; i < m->nups; i++)
        exec_mcp_up_close(m->ups[i].up);
    while (atomic_load(&m->calls) > 0)
        (void)nanosleep(&ts, NULL);
    exec_mcp_workers_stop(m);
}

void
exec_mcp_free(struct exec_mcp *m)
{
    struct exec_mcp_sess *s, *next;
    size_t i;

    if (m == NULL)
        return;
    exec_mcp_workers_stop(m); /* no request is left (exec_mcp_stop) */
    for (i = 0; i < m->nups; i++) {
        exec_mcp_up_free(m->ups[i].up);
        json_decref(m->ups[i].tools);
        json_decref(m->ups[i].defs);
        json_decref(m->ups[i].raw);
        json_decref(m->ups[i].hidden);
        pthread_mutex_destroy(&m->ups[i].mu);
    }
    for (s = m->sessions; s != NULL; s = next) {
        next = s->next;
        json_decref(s->client_caps);
        free(s);
    }
    ig_pins_free(m->pins);
    json_decref(m->waiting);
    json_decref(m->outbox);
    sodium_memzero(m->who, sizeof(m->who));
    pthread_mutex_destroy(&m->mu);
    free(m->ups);
    free(m);
}

/* ---- who the token is ---- */

/* The agent the token belongs to, into q->principal: 0, or -1 after
   answering (401 unknown token, 403 not an agent, 503 PDP down). */
static int
whoami(struct exec_mcp_req *q)
{
    struct exec_mcp *m = q->m;
    unsigned char h[32];
    json_t *reply = NULL;
    struct ig_err err;
    const char *role, *who;
    double now = exec_mcp_now_ms();
    enum ig_status st;
    long status;
    size_t i, slot = 0;
    int found = 0;

    ig_sha256(q->token, strlen(q->token), h);
    pthread_mutex_lock(&m->mu);
    for (i = 0; i < EXEC_MCP_WHOAMI_SLOTS; i++) {
        if (m->who[i].until > now &&
            sodium_memcmp(m->who[i].token_hash, h, sizeof(h)) == 0) {
            memcpy(q->principal, m->who[i].principal, sizeof(q->principal));
            found = 1;
            break;
        }
        if (m->who[i].until < m->who[slot].until)
            slot = i;
    }
    pthread_mutex_unlock(&m->mu);
    if (found)
        return 0;
    ig_err_clear(&err);
    st = exec_pdp_call_as(m->x->pdp, q->token, "/v1/whoami", NULL, 0, &status,
                          &reply, &err);
    if (st == IG_ERR_INVALID) {
        /* Not a token (bytes a header cannot carry): never asked. */
        exec_mcp_error(q, 401, NULL, EXEC_MCP_INVALID_REQUEST,
                       "the PDP does not know this token", NULL);
        return -1;
    }
    if (st != IG_OK ||
        (status != 200 && status != 400 && status != 401 && status != 403)) {
        json_decref(reply);
        exec_mcp_error(q, 503, NULL, EXEC_MCP_INTERNAL_ERROR,
                       "the PDP cannot be reached to check the token; "
                       "nothing was done",
                       NULL);
        return -1;
    }
    role = json_string_value(json_object_get(reply, "role"));
    who = json_string_value(json_object_get(reply, "principal"));
    if (status != 200 || who == NULL || role == NULL ||
        strlen(who) > EXEC_MCP_PRINCIPAL_MAX) {
        json_decref(reply);
        exec_mcp_error(q, 401, NULL, EXEC_MCP_INVALID_REQUEST,
                       "the PDP does not know this token", NULL);
        return -1;
    }
    if (strcmp(role, "agent") != 0) {
        json_decref(reply);
        exec_mcp_error(q, 403, NULL, EXEC_MCP_INVALID_REQUEST,
                       "only an agent's token may use the gateway", NULL);
        return -1;
    }
    (void)snprintf(q->principal, sizeof(q->principal), "%s", who);
    json_decref(reply);
    pthread_mutex_lock(&m->mu);
    memcpy(m->who[slot].token_hash, h, sizeof(h));
    memcpy(m->who[slot].principal, q->principal, sizeof(q->principal));
    m->who[slot].until = now + IG_EXEC_MCP_WHOAMI_TTL_MS;
    pthread_mutex_unlock(&m->mu);
    return 0;
}

/* ---- sessions ---- */

/* The session q names, for q's principal: 0 (client_caps copied into
   q), or -1 after answering (400 none given, 404 unknown or another
   agent's: the same answer, so ids cannot be probed). */
static int
session_find(struct exec_mcp_req *q, const json_t *id)
{
    struct exec_mcp_sess *s;
    int ok = 0;

    if (q->session[0] == '\0' && !q->bad_session) {
        exec_mcp_error(q, 400, id, EXEC_MCP_INVALID_REQUEST,
                       "Mcp-Session-Id is required after initialize", NULL);
        return -1;
    }
    pthread_mutex_lock(&q->m->mu);
    for (s = q->m->sessions; s != NULL && !q->bad_session; s = s->next)
        if (sodium_memcmp(s->id, q->session, EXEC_MCP_SESSION_LEN) == 0) {
            if (strcmp(s->principal, q->principal) == 0) {
                ok = 1;
                s->last_used = exec_mcp_now_ms();
                q->client_caps = json_incref(s->client_caps);
            }
            break;
        }
    pthread_mutex_unlock(&q->m->mu);
    if (!ok) {
        exec_mcp_error(q, 404, id, EXEC_MCP_INVALID_REQUEST,
                       "no such session; initialize again", NULL);
        return -1;
    }
    if (q->version[0] != '\0' && !version_ok(q->version)) {
        exec_mcp_error(q, 400, id, EXEC_MCP_INVALID_REQUEST,
                       "Bad Request: Unsupported protocol version", NULL);
        return -1;
    }
    return 0;
}

/* A new session for q's principal (the oldest idle one goes when full). */
static int
session_new(struct exec_mcp_req *q, const char *version, const json_t *caps)
{
    struct exec_mcp *m = q->m;
    struct exec_mcp_sess *s = calloc(1, sizeof(*s)), **pp, **oldest;
    unsigned char rnd[EXEC_MCP_SESSION_LEN / 2];

    if (s == NULL)
        return -1;
    randombytes_buf(rnd, sizeof(rnd));
    (void)sodium_bin2hex(s->id, sizeof(s->id), rnd, sizeof(rnd));
    (void)snprintf(s->principal, sizeof(s->principal), "%s", q->principal);
    (void)snprintf(s->version, sizeof(s->version), "%s", version);
    s->client_caps =
        json_is_object(caps) ? json_deep_copy(caps) : json_object();
    s->last_used = exec_mcp_now_ms();
    pthread_mutex_lock(&m->mu);
    if ((long)m->nsessions >= m->x->cfg->mcp_max_sessions) {
        /* The principal's own oldest session, so that one agent opening
           sessions cannot end another's; the oldest of all only when it
           has none. */
        oldest = NULL;
        for (pp = &m->sessions; *pp != NULL; pp = &(*pp)->next)
            if (strcmp((*pp)->principal, q->principal) == 0 &&
                (oldest == NULL || (*pp)->last_used < (*oldest)->last_used))
                oldest = pp;
        if (oldest == NULL) {
            oldest = &m->sessions;
            for (pp = &m->sessions; *pp != NULL; pp = &(*pp)->next)
                if ((*pp)->last_used < (*oldest)->last_used)
                    oldest = pp;
        }
        if (*oldest != NULL) {
            struct exec_mcp_sess *gone = *oldest;
            *oldest = gone->next;
            json_decref(gone->client_caps);
            free(gone);
            m->nsessions--;
        }
    }
    s->next = m->sessions;
    m->sessions = s;
    m->nsessions++;
    pthread_mutex_unlock(&m->mu);
    memcpy(q->new_session, s->id, sizeof(q->new_session));
    return 0;
}

static void
session_delete(struct exec_mcp_req *q)
{
    struct exec_mcp_sess **pp, *s;
    int done = 0;

    pthread_mutex_lock(&q->m->mu);
    for (pp = &q->m->sessions; *pp != NULL && !q->bad_session;
         pp = &(*pp)->next) {
        s = *pp;
        if (sodium_memcmp(s->id, q->session, EXEC_MCP_SESSION_LEN) == 0 &&
            strcmp(s->principal, q->principal) == 0) {
            *pp = s->next;
            json_decref(s->client_caps);
            free(s);
            q->m->nsessions--;
            done = 1;
            break;
        }
    }
    pthread_mutex_unlock(&q->m->mu);
    if (done)
        exec_mcp_answer_json(q, 200, "", 0);
    else
        exec_mcp_error(q, 404, NULL, EXEC_MCP_INVALID_REQUEST,
                       "no such session", NULL);
}

/* ---- tools: listing, naming, pinning ---- */

static int shown_name(const struct exec_mcp_upc *u, const char *name, char *out,
                      size_t cap);

/* 1..128 of [A-Za-z0-9_.-]. */
static int
tool_name_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' ||
              s[i] == '-') ||
            i >= 128)
            return 0;
    return i > 0;
}

/* action = "mcp.<alias>.<tool in lowercase>"; -1 when it would not be a
   valid action name. */
static int
tool_action(const char *alias, const char *tool, char *out, size_t cap)
{
    size_t i;
    int n = snprintf(out, cap, "mcp.%s.%s", alias, tool);

    if (n < 0 || (size_t)n >= cap || n > 120)
        return -1;
    for (i = 0; out[i] != '\0'; i++)
        if (out[i] >= 'A' && out[i] <= 'Z')
            out[i] = (char)(out[i] - 'A' + 'a');
    return 0;
}

static void
log_tool(const char *event, const char *alias, const char *tool,
         const char *why)
{
    ig_log("warn", event,
           json_pack("{s:s, s:s, s:s}", "server", alias, "tool", tool, "why",
                     why));
}

/* Everything the upstream lists under method (paginated), as one array
   under key: a new reference, or NULL with err set. */
static json_t *
list_all(struct exec_mcp_upc *uc, const char *method, const char *key,
         struct ig_err *err)
{
    json_t *all = json_array(), *params, *result, *error, *items, *cursor;
    enum ig_status st;
    char quote[121];
    int page;

    for (page = 0; all != NULL && page < 16; page++) {
        params = json_object();
        cursor = NULL;
        st = exec_mcp_up_call(uc->up, method, params, NULL, NULL, NULL, &result,
                              &error, err);
        json_decref(params);
        if (st == IG_OK && error != NULL) {
            exec_mcp_up_quote(
                uc->up, json_string_value(json_object_get(error, "message")),
                quote, sizeof(quote));
            (void)ig_err_set(err, IG_ERR_IO, "%s was refused: %s", method,
                             quote);
            st = IG_ERR_IO;
        }
        items = json_object_get(result, key);
        if (st == IG_OK && !json_is_array(items))
            st = ig_err_set(err, IG_ERR_IO, "%s: no %s array", method, key);
        if (st == IG_OK && json_array_extend(all, items) != 0)
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        cursor = json_object_get(result, "nextCursor");
        json_decref(error);
        if (st != IG_OK || !json_is_string(cursor) ||
            json_array_size(all) >= IG_EXEC_MCP_TOOLS_MAX) {
            json_decref(result);
            if (st != IG_OK) {
                json_decref(all);
                return NULL;
            }
            break;
        }
        json_decref(result);
        /* Cursor pages: not followed further here (16 pages at most). */
        break;
    }
    return all;
}

/* Identity and size of the pin file: an append (a pin, a change, an
   accept from the CLI) changes it. 0, or -1 when it cannot be read. */
static int
pins_stamp(const struct exec_mcp *m, struct exec_mcp_stamp *out)
{
    struct stat sb;

    memset(out, 0, sizeof(*out));
    if (stat(m->x->cfg->mcp_pins, &sb) != 0)
        return -1;
    out->dev = sb.st_dev;
    out->ino = sb.st_ino;
    out->size = sb.st_size;
    out->mtime = sb.st_mtim;
    return 0;
}

/* ---- pin events in the PDP's audit log ---- */

/* Queue {"event", "detail": {server, tool, hash}} for the PDP. */
static void
pin_event(struct exec_mcp *m, const char *event, const char *server,
          const char *tool, const char *hash)
{
    json_t *e = json_pack("{s:s, s:{s:s, s:s, s:s}}", "event", event, "detail",
                          "server", server, "tool", tool, "hash", hash);

    pthread_mutex_lock(&m->mu);
    if (e != NULL && json_array_size(m->outbox) < 4096)
        (void)json_array_append(m->outbox, e);
    pthread_mutex_unlock(&m->mu);
    json_decref(e);
}

/* Send what is queued (best effort: what the PDP does not take stays for
   the next listing; the pin file keeps the record meanwhile). */
static void
pin_events_flush(struct exec_mcp *m)
{
    json_t *todo, *e, *left = json_array();
    struct ig_err err;
    size_t i;

    pthread_mutex_lock(&m->mu);
    if (json_array_size(m->outbox) == 0) {
        pthread_mutex_unlock(&m->mu);
        json_decref(left);
        return;
    }
    todo = m->outbox;
    m->outbox = left;
    pthread_mutex_unlock(&m->mu);
    if (todo == NULL || left == NULL) {
        json_decref(todo);
        return;
    }
    json_array_foreach(todo, i, e)
    {
        ig_err_clear(&err);
        if (exec_pdp_event(m->x->pdp, e, &err) == IG_OK)
            continue;
        ig_log("warn", "mcp.audit_deferred",
               json_pack("{s:O, s:s}", "event", json_object_get(e, "event"),
                         "error", err.msg));
        pthread_mutex_lock(&m->mu);
        (void)json_array_append(m->outbox, e);
        pthread_mutex_unlock(&m->mu);
    }
    json_decref(todo);
}

/* Refresh uc's tools unless its listing is current. 0, or -1 with err. */
static int
tools_refresh(struct exec_mcp *m, struct exec_mcp_upc *uc, struct ig_err *err)
{
    const char *alias = uc->srv->alias, *name;
    json_t *all, *tools, *defs, *t, *shown, *lower;
    char action[160], key[IG_PIN_KEY_MAX + 1], hash[72], exposed[200];
    struct exec_mcp_stamp stamp;
    enum ig_pin_state ps;
    unsigned long gen;
    size_t i;
    int found = 0, fresh = 0;

    /* The upstream's listing is fetched again only when it said
       list_changed or was restarted; which tools are shown is decided on
       every call, so an accept in the pin file shows at once. */
    pthread_mutex_lock(&uc->mu);
    if (uc->have && uc->gen == exec_mcp_up_generation(uc->up) &&
        pins_stamp(m, &stamp) == 0 &&
        memcmp(&stamp, &uc->stamp, sizeof(stamp)) == 0) {
        pthread_mutex_unlock(&uc->mu); /* nothing changed on either side */
        pin_events_flush(m);
        return 0;
    }
    if (uc->have && uc->gen == exec_mcp_up_generation(uc->up)) {
        all = json_incref(uc->raw);
        gen = uc->gen;
    } else {
        all = list_all(uc, "tools/list", "tools", err);
        gen = exec_mcp_up_generation(uc->up);
        fresh = 1;
    }
    if (all == NULL) {
        pthread_mutex_unlock(&uc->mu);
        return -1;
    }
    tools = json_array();
    defs = json_object();
    lower = json_object();
    /* Actions seen twice (names differing in case) are hidden. */
    json_array_foreach(all, i, t)
    {
        name = json_string_value(json_object_get(t, "name"));
        if (name != NULL && tool_name_ok(name) &&
            tool_action(alias, name, action, sizeof(action)) == 0)
            (void)json_object_set_new(
                lower, action,
                json_integer(
                    json_integer_value(json_object_get(lower, action)) + 1));
    }
    json_array_foreach(all, i, t)
    {
        name = json_string_value(json_object_get(t, "name"));
        if (!json_is_object(t) || name == NULL || !tool_name_ok(name) ||
            tool_action(alias, name, action, sizeof(action)) != 0 ||
            !json_is_object(json_object_get(t, "inputSchema"))) {
            log_tool("mcp.tool_hidden", alias, name != NULL ? name : "?",
                     "not a valid tool definition or name");
            continue;
        }
        if (json_integer_value(json_object_get(lower, action)) > 1) {
            log_tool("mcp.tool_hidden", alias, name,
                     "another tool of this server has the same action name");
            continue;
        }
        (void)snprintf(key, sizeof(key), "%s/%s", alias, name);
        if (ig_pins_hash(t, hash, err) != IG_OK ||
            ig_pins_check(m->pins, key, hash, t, &ps, err) != IG_OK) {
            log_tool("mcp.tool_hidden", alias, name, err->msg);
            continue;
        }
        if (ps == IG_PIN_CHANGED) {
            const json_t *was = json_object_get(uc->hidden, name);

            if (was == NULL || strcmp(json_string_value(was), hash) != 0) {
                pin_event(m, "mcp.tool_changed", alias, name, hash);
                (void)json_object_set_new(uc->hidden, name, json_string(hash));
            }
            if (fresh)
                log_tool(
                    "mcp.tool_changed", alias, name,
                    "its definition changed; hidden until an administrator "
                    "accepts it (intentgate mcp tools pending)");
            continue;
        }
        if (ps == IG_PIN_SAME && json_object_get(uc->hidden, name) != NULL) {
            pin_event(m, "mcp.tool_accepted", alias, name, hash);
            (void)json_object_del(uc->hidden, name);
        }
        if (ps == IG_PIN_NEW)
            pin_event(m, "mcp.tool_pinned", alias, name, hash);
        if (ps == IG_PIN_NEW)
            ig_log("info", "mcp.tool_pinned",
                   json_pack("{s:s, s:s, s:s}", "server", alias, "tool", name,
                             "hash", hash));
        if (shown_name(uc, name, exposed, sizeof(exposed)) != 0) {
            log_tool("mcp.tool_hidden", alias, name,
                     "a bare name may not hold \"__\"");
            continue;
        }
        shown = json_deep_copy(t);
        if (shown == NULL ||
            json_object_set_new(shown, "name", json_string(exposed)) != 0 ||
            json_array_append_new(tools, shown) != 0 ||
            json_object_set(defs, name, t) != 0)
            continue;
        found++;
    }
    json_decref(lower);
    /* The pin file as it was when these were decided (after any line
       this listing appended). */
    if (pins_stamp(m, &uc->stamp) != 0)
        memset(&uc->stamp, 0, sizeof(uc->stamp));
    if (uc->raw != all) {
        json_decref(uc->raw);
        uc->raw = json_incref(all);
    }
    json_decref(all);
    json_decref(uc->tools);
    json_decref(uc->defs);
    uc->tools = tools;
    uc->defs = defs;
    uc->gen = gen;
    uc->have = tools != NULL && defs != NULL;
    pthread_mutex_unlock(&uc->mu);
    pin_events_flush(m);
    (void)found;
    return uc->have ? 0 : -1;
}

/* The visible definition of tool on uc (a new reference), or NULL. */
static json_t *
tool_def(struct exec_mcp *m, struct exec_mcp_upc *uc, const char *tool,
         struct ig_err *err)
{
    json_t *d = NULL;

    if (tools_refresh(m, uc, err) != 0)
        return NULL;
    pthread_mutex_lock(&uc->mu);
    d = json_object_get(uc->defs, tool);
    if (d != NULL)
        json_incref(d);
    pthread_mutex_unlock(&uc->mu);
    return d;
}

/* Scrub a listing with the upstream's scrubber (its descriptions reach
   the model). */
static json_t *
scrubbed(struct exec_mcp_upc *uc, json_t *v)
{
    int found = 0;

    if (v != NULL &&
        exec_scrub_json(exec_mcp_up_scrub(uc->up), &v, &found) != IG_OK) {
        json_decref(v);
        return NULL;
    }
    return v;
}

static void
tools_list(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    struct exec_mcp *m = q->m;
    json_t *all = json_array(), *copy, *result;
    struct ig_err err;
    size_t i;

    for (i = 0; i < m->nups && all != NULL; i++) {
        ig_err_clear(&err);
        if (tools_refresh(m, &m->ups[i], &err) != 0) {
            ig_log("warn", "mcp.list_failed",
                   json_pack("{s:s, s:s}", "server", m->ups[i].srv->alias,
                             "error", err.msg));
            continue;
        }
        pthread_mutex_lock(&m->ups[i].mu);
        copy = json_deep_copy(m->ups[i].tools);
        pthread_mutex_unlock(&m->ups[i].mu);
        copy = scrubbed(&m->ups[i], copy);
        if (copy != NULL)
            (void)json_array_extend(all, copy);
        json_decref(copy);
    }
    result = json_pack("{s:o}", "tools", all != NULL ? all : json_array());
    exec_mcp_result(q, msg->id, result);
    json_decref(result);
}

/* prompts/list, resources/list, resources/templates/list: every upstream
   that declares the capability; prompt names get the alias prefix. */
static void
list_merged(struct exec_mcp_req *q, const struct exec_mcp_msg *msg,
            const char *cap, const char *key, int rename)
{
    struct exec_mcp *m = q->m;
    json_t *all = json_array(), *items, *caps, *e, *result;
    char name[300];
    struct ig_err err;
    size_t i, j;

    for (i = 0; i < m->nups && all != NULL; i++) {
        ig_err_clear(&err);
        caps = exec_mcp_up_caps(m->ups[i].up);
        if (caps != NULL && json_object_get(caps, cap) == NULL) {
            json_decref(caps);
            continue;
        }
        json_decref(caps);
        items = list_all(&m->ups[i], msg->method, key, &err);
        if (items == NULL) {
            ig_log("warn", "mcp.list_failed",
                   json_pack("{s:s, s:s, s:s}", "server", m->ups[i].srv->alias,
                             "method", msg->method, "error", err.msg));
            continue;
        }
        json_array_foreach(items, j, e)
        {
            const char *n = json_string_value(json_object_get(e, "name"));
            if (rename && n != NULL &&
                shown_name(&m->ups[i], n, name, sizeof(name)) == 0)
                (void)json_object_set_new(e, "name", json_string(name));
        }
        items = scrubbed(&m->ups[i], items);
        if (items != NULL)
            (void)json_array_extend(all, items);
        json_decref(items);
    }
    result = json_pack("{s:o}", key, all != NULL ? all : json_array());
    exec_mcp_result(q, msg->id, result);
    json_decref(result);
}

/* The upstream a shown name belongs to, and the name there: "A__N" is
   server A's N; a name without "__" is the bare server's (at most one);
   else NULL. */
static struct exec_mcp_upc *
split_name(struct exec_mcp *m, const char *full, const char **rest)
{
    const char *sep = full != NULL ? strstr(full, "__") : NULL;
    char alias[IG_EXEC_MCP_ALIAS_MAX + 1];
    size_t i, n;

    if (full == NULL)
        return NULL;
    for (i = 0; sep == NULL && i < m->nups; i++)
        if (m->ups[i].srv->bare) {
            *rest = full;
            return &m->ups[i];
        }
    if (sep == NULL || (n = (size_t)(sep - full)) == 0 ||
        n > IG_EXEC_MCP_ALIAS_MAX)
        return NULL;
    memcpy(alias, full, n);
    alias[n] = '\0';
    *rest = sep + 2;
    for (i = 0; i < m->nups; i++)
        if (!m->ups[i].srv->bare && strcmp(m->ups[i].srv->alias, alias) == 0)
            return &m->ups[i];
    return NULL;
}

/* How a name of server u is shown: "A__N", or N for the bare server (a
   bare name holding "__" would read as another server's: -1). */
static int
shown_name(const struct exec_mcp_upc *u, const char *name, char *out,
           size_t cap)
{
    int n;

    if (u->srv->bare) {
        if (strstr(name, "__") != NULL)
            return -1;
        n = snprintf(out, cap, "%s", name);
    } else {
        n = snprintf(out, cap, "%s__%s", u->srv->alias, name);
    }
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* An isError tool result with text. */
static void
tool_refused(struct exec_mcp_req *q, const json_t *id, const char *text)
{
    json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
                          "text", text, "isError", 1);

    exec_mcp_result(q, id, r);
    json_decref(r);
}

static void
tools_call(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    const char *full = json_string_value(json_object_get(msg->params, "name"));
    const json_t *args = json_object_get(msg->params, "arguments"), *ptr, *rv;
    struct exec_mcp_upc *uc;
    const char *tool = NULL;
    char action[160], resource[(IG_RESOURCE_MAX_CHARS * 4) + 1], text[400];
    json_t *def, *upp, *a;
    struct ig_err err;

    ig_err_clear(&err);
    uc = full != NULL &&
                 strlen(full) ==
                     json_string_length(json_object_get(msg->params, "name"))
             ? split_name(q->m, full, &tool)
             : NULL; /* a name holding a NUL is no name */
    if (uc == NULL || !tool_name_ok(tool)) {
        exec_mcp_error(q, 200, msg->id, EXEC_MCP_INVALID_PARAMS,
                       "Unknown tool: the gateway names tools "
                       "<server>__<tool>",
                       NULL);
        return;
    }
    if (args != NULL && !json_is_object(args)) {
        exec_mcp_error(q, 200, msg->id, EXEC_MCP_INVALID_PARAMS,
                       "arguments must be an object", NULL);
        return;
    }
    def = tool_def(q->m, uc, tool, &err);
    if (def == NULL) {
        (void)snprintf(text, sizeof(text),
                       err.msg[0] != '\0'
                           ? "intentgate: the server cannot list its tools "
                             "now: %.200s"
                           : "intentgate: %.0sno such tool, or its "
                             "definition changed and waits for an "
                             "administrator",
                       err.msg);
        if (err.msg[0] != '\0')
            tool_refused(q, msg->id, text);
        else
            exec_mcp_error(q, 200, msg->id, EXEC_MCP_INVALID_PARAMS, text,
                           NULL);
        return;
    }
    json_decref(def);
    (void)tool_action(uc->srv->alias, tool, action, sizeof(action));
    ptr = json_object_get(json_object_get(uc->srv->tools, tool), "resource");
    if (ptr != NULL) {
        rv = ig_json_pointer_get(args, json_string_value(ptr));
        if (!json_is_string(rv) || json_string_length(rv) == 0 ||
            json_string_length(rv) > (IG_RESOURCE_MAX_CHARS * 4) ||
            memchr(json_string_value(rv), '\0', json_string_length(rv))) {
            (void)snprintf(text, sizeof(text),
                           "intentgate: the argument at %s names this call's "
                           "resource and must be a string of 1 to %d bytes",
                           json_string_value(ptr), (IG_RESOURCE_MAX_CHARS * 4));
            tool_refused(q, msg->id, text);
            return;
        }
        (void)snprintf(resource, sizeof(resource), "%s", json_string_value(rv));
    } else {
        (void)snprintf(resource, sizeof(resource), "mcp://%s/%s",
                       uc->srv->alias, tool);
    }
    a = args != NULL ? json_incref((json_t *)(uintptr_t)args) : json_object();
    upp = json_pack("{s:s, s:O}", "name", tool, "arguments", a);
    if (upp != NULL)
        exec_mcp_gate_call(q, msg, uc, action, resource, a, "tools/call", upp);
    else
        exec_mcp_error(q, 500, msg->id, EXEC_MCP_INTERNAL_ERROR,
                       "out of memory", NULL);
    json_decref(upp);
    json_decref(a);
}

/* The upstream that serves uri: the only one with resources, or the one
   whose listing holds it. */
static struct exec_mcp_upc *
resource_owner(struct exec_mcp *m, const char *uri)
{
    struct exec_mcp_upc *only = NULL;
    json_t *caps, *items, *e;
    struct ig_err err;
    size_t i, j, n = 0;

    for (i = 0; i < m->nups; i++) {
        caps = exec_mcp_up_caps(m->ups[i].up);
        if (caps == NULL || json_object_get(caps, "resources") != NULL) {
            n++;
            only = &m->ups[i];
        }
        json_decref(caps);
    }
    if (n == 1)
        return only;
    for (i = 0; i < m->nups; i++) {
        items = list_all(&m->ups[i], "resources/list", "resources", &err);
        json_array_foreach(
            items, j,
            e) if (json_is_string(json_object_get(e, "uri")) &&
                   strcmp(json_string_value(json_object_get(e, "uri")), uri) ==
                       0)
        {
            json_decref(items);
            return &m->ups[i];
        }
        json_decref(items);
    }
    return NULL;
}

static void
resources_read(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    const json_t *uri = json_object_get(msg->params, "uri");
    struct exec_mcp_upc *uc;
    char action[160];
    json_t *params;

    if (!json_is_string(uri) || json_string_length(uri) == 0 ||
        json_string_length(uri) > (IG_RESOURCE_MAX_CHARS * 4) ||
        memchr(json_string_value(uri), '\0', json_string_length(uri))) {
        exec_mcp_error(q, 200, msg->id, EXEC_MCP_INVALID_PARAMS,
                       "uri must be a string of 1 to 500 bytes", NULL);
        return;
    }
    uc = resource_owner(q->m, json_string_value(uri));
    if (uc == NULL) {
        exec_mcp_error(q, 200, msg->id, -32002, "Resource not found", NULL);
        return;
    }
    (void)snprintf(action, sizeof(action), "mcp.%s:resources.read",
                   uc->srv->alias);
    params = json_pack("{s:O}", "uri", uri);
    exec_mcp_gate_call(q, msg, uc, action, json_string_value(uri), params,
                       "resources/read", params);
    json_decref(params);
}

static void
prompts_get(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    const char *full = json_string_value(json_object_get(msg->params, "name"));
    const json_t *args = json_object_get(msg->params, "arguments");
    struct exec_mcp_upc *uc;
    const char *name = NULL;
    char action[160], resource[300];
    json_t *params;

    uc = full != NULL &&
                 strlen(full) ==
                     json_string_length(json_object_get(msg->params, "name"))
             ? split_name(q->m, full, &name)
             : NULL; /* a name holding a NUL is no name */
    if (uc == NULL || name[0] == '\0' || strlen(name) > 128 ||
        (args != NULL && !json_is_object(args))) {
        exec_mcp_error(q, 200, msg->id, EXEC_MCP_INVALID_PARAMS,
                       "Unknown prompt: the gateway names prompts "
                       "<server>__<prompt>",
                       NULL);
        return;
    }
    (void)snprintf(action, sizeof(action), "mcp.%s:prompts.get",
                   uc->srv->alias);
    (void)snprintf(resource, sizeof(resource), "mcp://%s/prompts/%s",
                   uc->srv->alias, name);
    params = args != NULL
                 ? json_pack("{s:s, s:O}", "name", name, "arguments", args)
                 : json_pack("{s:s}", "name", name);
    exec_mcp_gate_call(q, msg, uc, action, resource, params, "prompts/get",
                       params);
    json_decref(params);
}

/* completion/complete: relayed to the server the reference names (a
   prompt by its shown name, a resource by its URI), not gated: it
   suggests argument values and acts on nothing. Scrubbed. */
static void
complete(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    const json_t *ref = json_object_get(msg->params, "ref");
    const char *type = json_string_value(json_object_get(ref, "type"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *uri = json_string_value(json_object_get(ref, "uri"));
    struct exec_mcp_upc *uc = NULL;
    json_t *p = NULL, *r, *result = NULL, *error = NULL;
    const char *rest = NULL;
    struct ig_err err;
    int found = 0;

    if (type != NULL && strcmp(type, "ref/prompt") == 0 && name != NULL)
        uc = split_name(q->m, name, &rest);
    else if (type != NULL && strcmp(type, "ref/resource") == 0 && uri != NULL)
        uc = resource_owner(q->m, uri);
    if (uc == NULL) {
        exec_mcp_error(q, 200, msg->id, EXEC_MCP_INVALID_PARAMS,
                       "the reference names no prompt or resource here", NULL);
        return;
    }
    p = json_deep_copy(msg->params);
    r = json_object_get(p, "ref");
    if (p == NULL || (rest != NULL &&
                      json_object_set_new(r, "name", json_string(rest)) != 0)) {
        json_decref(p);
        exec_mcp_error(q, 500, msg->id, EXEC_MCP_INTERNAL_ERROR,
                       "out of memory", NULL);
        return;
    }
    (void)json_object_del(p, "_meta");
    ig_err_clear(&err);
    if (exec_mcp_up_call(uc->up, "completion/complete", p, NULL, NULL, NULL,
                         &result, &error, &err) != IG_OK ||
        exec_scrub_json(exec_mcp_up_scrub(uc->up), &result, &found) != IG_OK ||
        exec_scrub_json(exec_mcp_up_scrub(uc->up), &error, &found) != IG_OK)
        exec_mcp_error(q, 200, msg->id, EXEC_MCP_INTERNAL_ERROR,
                       "the server could not complete this now", NULL);
    else if (error != NULL)
        exec_mcp_error(
            q, 200, msg->id, EXEC_MCP_INVALID_PARAMS,
            json_is_string(json_object_get(error, "message"))
                ? json_string_value(json_object_get(error, "message"))
                : "the server refused",
            NULL);
    else
        exec_mcp_result(q, msg->id, result);
    json_decref(p);
    json_decref(result);
    json_decref(error);
}

static void
initialize(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    const char *want =
        json_string_value(json_object_get(msg->params, "protocolVersion"));
    const json_t *caps = json_object_get(msg->params, "capabilities");
    const char *v = want != NULL && version_ok(want) ? want : versions[0];
    json_t *r;

    if (session_new(q, v, caps) != 0) {
        exec_mcp_error(q, 500, msg->id, EXEC_MCP_INTERNAL_ERROR,
                       "out of memory", NULL);
        return;
    }
    r = json_pack("{s:s, s:{s:{s:b}, s:{}, s:{}, s:{}, s:{}}, s:{s:s, "
                  "s:s}, s:s}",
                  "protocolVersion", v, "capabilities", "tools", "listChanged",
                  0, "prompts", "resources", "logging", "completions",
                  "serverInfo", "name", GATEWAY_NAME, "version",
                  GATEWAY_VERSION, "instructions",
                  "Every call goes through intentgate: it may be refused, or "
                  "held until a human approves it. A refusal says why.");
    exec_mcp_result(q, msg->id, r);
    json_decref(r);
}

/* A request of the stateless era (2026-07-28: its version in
   params._meta, no initialize, no session) gets that era's answer for a
   version the server does not speak: 400, -32022 {supported, requested}.
   The era is told apart here, so that it can be served beside this one.
   1 when answered. */
static int
modern_refused(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    const json_t *v =
        json_object_get(json_object_get(msg->params, "_meta"),
                        "io.modelcontextprotocol/protocolVersion");
    json_t *data, *sup;
    size_t i;

    if (v == NULL || q->session[0] != '\0')
        return 0;
    sup = json_array();
    for (i = 0; sup != NULL && versions[i] != NULL; i++)
        (void)json_array_append_new(sup, json_string(versions[i]));
    data = json_pack("{s:o*, s:O}", "supported", sup, "requested", v);
    exec_mcp_error(q, 400, msg->id, -32022, "Unsupported protocol version",
                   data);
    json_decref(data);
    return 1;
}

/* Gated calls in flight, for notifications/cancelled. */
static void
active_add(struct exec_mcp_req *q, const json_t *id)
{
    if (exec_mcp_id_text(id, q->rid, sizeof(q->rid)) != IG_OK)
        return; /* not findable: it runs to its end */
    pthread_mutex_lock(&q->m->mu);
    q->next_active = q->m->active;
    q->m->active = q;
    pthread_mutex_unlock(&q->m->mu);
}

static void
active_remove(struct exec_mcp_req *q)
{
    struct exec_mcp_req **pp;

    pthread_mutex_lock(&q->m->mu);
    for (pp = &q->m->active; *pp != NULL; pp = &(*pp)->next_active)
        if (*pp == q) {
            *pp = q->next_active;
            break;
        }
    pthread_mutex_unlock(&q->m->mu);
}

/* notifications/cancelled {requestId}: the agent's own call, in this
   session, stops waiting (for a human, or for its upstream). Another
   agent's or another session's id matches nothing. */
static void
cancel_request(struct exec_mcp_req *q, const struct exec_mcp_msg *msg)
{
    const json_t *rid = json_object_get(msg->params, "requestId");
    struct exec_mcp_req *a;
    char text[80];
    size_t i;

    if (rid == NULL || !exec_mcp_id_valid(rid) ||
        exec_mcp_id_text(rid, text, sizeof(text)) != IG_OK)
        return;
    pthread_mutex_lock(&q->m->mu);
    for (a = q->m->active; a != NULL; a = a->next_active)
        if (strcmp(a->rid, text) == 0 && strcmp(a->session, q->session) == 0 &&
            strcmp(a->principal, q->principal) == 0)
            atomic_store(&a->cancelled, 1);
    pthread_mutex_unlock(&q->m->mu);
    for (i = 0; i < q->m->nups; i++)
        exec_mcp_up_wake(q->m->ups[i].up);
}

void
exec_mcp_handle(struct exec_mcp_req *q)
{
    struct exec_mcp_msg msg;
    struct ig_err err;
    json_t *bad_id = NULL, *empty;
    int code;

    if (whoami(q) != 0)
        return;
    if (q->is_delete) {
        session_delete(q);
        return;
    }
    ig_err_clear(&err);
    if (exec_mcp_parse(q->body.data != NULL ? q->body.data : "", q->body.len,
                       &msg, &code, &bad_id, &err) != IG_OK) {
        exec_mcp_error(q, 400, bad_id, code, err.msg, NULL);
        json_decref(bad_id);
        return;
    }
    if (msg.kind == EXEC_MCP_REQUEST && strcmp(msg.method, "initialize") == 0) {
        initialize(q, &msg);
        exec_mcp_msg_release(&msg);
        return;
    }
    if (modern_refused(q, &msg)) {
        exec_mcp_msg_release(&msg);
        return;
    }
    if (session_find(q, msg.id) != 0) {
        exec_mcp_msg_release(&msg);
        return;
    }
    if (msg.kind != EXEC_MCP_REQUEST) {
        /* notifications/initialized, cancelled, and the client's answers
           (to an elicitation): nothing to send back. */
        if (msg.kind == EXEC_MCP_NOTIFICATION &&
            strcmp(msg.method, "notifications/cancelled") == 0)
            cancel_request(q, &msg);
        exec_mcp_answer_json(q, 202, "", 0);
        exec_mcp_msg_release(&msg);
        return;
    }
    q->progress_token =
        json_object_get(json_object_get(msg.params, "_meta"), "progressToken");
    empty = json_object();
    if (strcmp(msg.method, "ping") == 0 ||
        strcmp(msg.method, "logging/setLevel") == 0)
        exec_mcp_result(q, msg.id, empty);
    else if (strcmp(msg.method, "tools/list") == 0)
        tools_list(q, &msg);
    else if (strcmp(msg.method, "tools/call") == 0) {
        active_add(q, msg.id);
        tools_call(q, &msg);
        active_remove(q);
    } else if (strcmp(msg.method, "prompts/list") == 0)
        list_merged(q, &msg, "prompts", "prompts", 1);
    else if (strcmp(msg.method, "prompts/get") == 0) {
        active_add(q, msg.id);
        prompts_get(q, &msg);
        active_remove(q);
    } else if (strcmp(msg.method, "resources/list") == 0)
        list_merged(q, &msg, "resources", "resources", 0);
    else if (strcmp(msg.method, "resources/templates/list") == 0)
        list_merged(q, &msg, "resources", "resourceTemplates", 0);
    else if (strcmp(msg.method, "resources/read") == 0) {
        active_add(q, msg.id);
        resources_read(q, &msg);
        active_remove(q);
    } else if (strcmp(msg.method, "completion/complete") == 0)
        complete(q, &msg);
    else
        exec_mcp_error(q, 200, msg.id, EXEC_MCP_METHOD_NOT_FOUND,
                       "Method not found", NULL);
    json_decref(empty);
    exec_mcp_msg_release(&msg);
}

/* ---- the workers ---- */

static void
run_one(struct exec_mcp_req *q)
{
    exec_mcp_handle(q);
    pthread_mutex_lock(&q->mu);
    q->finished = 1;
    exec_mcp_wake_locked(q);
    pthread_mutex_unlock(&q->mu);
    /* The agent has its answer: now the outcome (the spool retries it). */
    if (q->has_report)
        exec_report_send(q->m->x, &q->rep);
    atomic_fetch_sub(&q->m->calls, 1);
    exec_mcp_req_unref(q);
}

static void *
work(void *arg)
{
    run_one(arg);
    return NULL;
}

/* A kept worker: one request after another until the gateway stops. */
static void *
keep_working(void *arg)
{
    struct exec_mcp *m = arg;
    struct exec_mcp_req *q;

    pthread_mutex_lock(&m->wmu);
    for (;;) {
        while (m->jobs == NULL && !m->wstop)
            pthread_cond_wait(&m->wcv, &m->wmu);
        if (m->jobs == NULL)
            break;
        q = m->jobs;
        m->jobs = q->next_job;
        pthread_mutex_unlock(&m->wmu);
        run_one(q);
        pthread_mutex_lock(&m->wmu);
        m->idle++;
    }
    pthread_mutex_unlock(&m->wmu);
    return NULL;
}

void
exec_mcp_workers_start(struct exec_mcp *m)
{
    pthread_attr_t a;

    pthread_mutex_init(&m->wmu, NULL);
    pthread_cond_init(&m->wcv, NULL);
    (void)pthread_attr_init(&a);
    (void)pthread_attr_setstacksize(&a, 512 * 1024);
    while (m->nworkers < EXEC_MCP_WORKERS &&
           pthread_create(&m->workers[m->nworkers], &a, keep_working, m) == 0)
        m->nworkers++;
    (void)pthread_attr_destroy(&a);
    m->idle = m->nworkers;
    m->workers_up = 1;
}

void
exec_mcp_workers_stop(struct exec_mcp *m)
{
    int i;

    if (!m->workers_up)
        return;
    m->workers_up = 0;
    pthread_mutex_lock(&m->wmu);
    m->wstop = 1;
    pthread_cond_broadcast(&m->wcv);
    pthread_mutex_unlock(&m->wmu);
    for (i = 0; i < m->nworkers; i++)
        (void)pthread_join(m->workers[i], NULL);
    m->nworkers = 0;
    pthread_mutex_destroy(&m->wmu);
    pthread_cond_destroy(&m->wcv);
}

/* To an idle kept worker, else to a new thread: 0, or -1. */
int
exec_mcp_dispatch(struct exec_mcp_req *q)
{
    struct exec_mcp *m = q->m;
    pthread_attr_t a;
    pthread_t t;
    int rc;

    pthread_mutex_lock(&m->wmu);
    if (m->idle > 0) {
        m->idle--;
        q->next_job = m->jobs;
        m->jobs = q;
        pthread_cond_signal(&m->wcv);
        pthread_mutex_unlock(&m->wmu);
        return 0;
    }
    pthread_mutex_unlock(&m->wmu);
    (void)pthread_attr_init(&a);
    (void)pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    (void)pthread_attr_setstacksize(&a, 512 * 1024);
    rc = pthread_create(&t, &a, work, q);
    (void)pthread_attr_destroy(&a);
    return rc == 0 ? 0 : -1;
}
