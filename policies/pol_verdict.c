/*
 * pol_verdict.c - the verdict values policies return, and combining them.
 *
 *   ALLOW                                        a value
 *   BLOCK{reason="CODE", message="..."}          or BLOCK "CODE"
 *   ESCALATE{approvers={"group", ...}, quorum=n, ttl=seconds,
 *            reason="CODE", message="..."}       or ESCALATE "CODE"
 *   (`groups` is accepted for `approvers`.)
 *
 * How it works: a verdict is a full userdata (struct pol_vobj) with a
 * private metatable, so a policy cannot forge one from a table; the
 * constructors check every field when they are called (the error then
 * names the policy's line): reasons match ^[A-Z][A-Z0-9_]*$ and fit
 * POL_REASON_MAX, groups are [A-Za-z0-9][A-Za-z0-9_.:@-]* and fit
 * POL_GROUP_MAX, quorum is 1..IG_POLICY_QUORUM_MAX, ttl 1..IG_APPROVAL_TTL_MAX
 * seconds, and unknown fields are refused (a typo must not weaken a rule).
 *
 * Combining (pol_acc_*): any BLOCK wins, with the distinct BLOCK reasons in
 * file order and the first BLOCK message; else any ESCALATE, with reasons
 * united, approver groups united (more than POL_MAX_GROUPS is an error),
 * the largest quorum and the shortest ttl (0 for either: the configured
 * default); else ALLOW if any policy allowed; else BLOCK NO_POLICY_MATCHED.
 */
#include "pol_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POL_VERDICT_MT "intentgate.verdict"

struct pol_vobj {
    enum pol_verdict verdict;
    int quorum;
    int64_t ttl;
    size_t ngroups;
    char reason[POL_REASON_MAX];
    char message[POL_MESSAGE_MAX];
    char groups[POL_MAX_GROUPS][POL_GROUP_MAX];
};

const char *
pol_verdict_name(enum pol_verdict v)
{
    switch (v) {
    case POL_ALLOW:
        return "ALLOW";
    case POL_ESCALATE:
        return "ESCALATE";
    case POL_BLOCK:
    default:
        return "BLOCK";
    }
}

int
pol_reason_valid(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n >= POL_REASON_MAX || s[0] < 'A' || s[0] > 'Z')
        return 0;
    for (i = 1; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_'))
            return 0;
    return 1;
}

static int
pol_group_valid(const char *s, size_t n)
{
    size_t i;
    char c;

    if (n == 0 || n >= POL_GROUP_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        c = s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9'))
            continue;
        if (i == 0 ||
            (c != '_' && c != '.' && c != ':' && c != '@' && c != '-'))
            return 0;
    }
    return 1;
}

static struct pol_vobj *
pol_new_vobj(lua_State *L, enum pol_verdict v)
{
    struct pol_vobj *o = lua_newuserdatauv(L, sizeof(*o), 0);

    memset(o, 0, sizeof(*o));
    o->verdict = v;
    luaL_setmetatable(L, POL_VERDICT_MT);
    return o;
}

static void
pol_set_reason(lua_State *L, const char *ctor, struct pol_vobj *o, int idx)
{
    size_t n;
    const char *s;

    if (lua_type(L, idx) != LUA_TSTRING)
        (void)luaL_error(L, "%s: reason must be a string", ctor);
    s = lua_tolstring(L, idx, &n);
    if (!pol_reason_valid(s, n))
        (void)luaL_error(L,
                         "%s: reason must be an UPPER_SNAKE code "
                         "(^[A-Z][A-Z0-9_]*$, at most %d characters)",
                         ctor, POL_REASON_MAX - 1);
    memcpy(o->reason, s, n + 1);
}

/* Refuse fields of the table at 1 that are not in names. */
static void
pol_check_fields(lua_State *L, const char *ctor, const char *const *names)
{
    size_t i;

    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        lua_pop(L, 1);
        for (i = 0; lua_type(L, -1) == LUA_TSTRING && names[i] != NULL; i++)
            if (strcmp(lua_tostring(L, -1), names[i]) == 0)
                break;
        if (lua_type(L, -1) != LUA_TSTRING || names[i] == NULL)
            (void)luaL_error(L, "%s: unknown field '%s'", ctor,
                             lua_type(L, -1) == LUA_TSTRING
                                 ? lua_tostring(L, -1)
                                 : luaL_typename(L, -1));
    }
}

/* reason and message fields of the table at 1. */
static void
pol_common_fields(lua_State *L, const char *ctor, struct pol_vobj *o)
{
    size_t n;
    const char *s;

    if (lua_getfield(L, 1, "reason") != LUA_TNIL)
        pol_set_reason(L, ctor, o, -1);
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "message") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TSTRING)
            (void)luaL_error(L, "%s: message must be a string", ctor);
        s = lua_tolstring(L, -1, &n);
        pol_copy_text(o->message, sizeof(o->message), s, n);
    }
    lua_pop(L, 1);
}

static int
pol_block(lua_State *L)
{
    static const char *const fields[] = {"reason", "message", NULL};
    struct pol_vobj *o;

    lua_settop(L, 1);
    o = pol_new_vobj(L, POL_BLOCK);

    if (lua_type(L, 1) == LUA_TSTRING) {
        pol_set_reason(L, "BLOCK", o, 1);
    } else if (lua_type(L, 1) == LUA_TTABLE) {
        pol_check_fields(L, "BLOCK", fields);
        pol_common_fields(L, "BLOCK", o);
    } else {
        return luaL_error(L, "BLOCK: expected BLOCK{reason=\"CODE\", "
                             "message=\"...\"} or BLOCK \"CODE\"");
    }
    if (o->reason[0] == '\0')
        return luaL_error(L, "BLOCK: a reason code is required");
    return 1;
}

/* The approvers (or groups) array at idx into o. */
static void
pol_set_groups(lua_State *L, struct pol_vobj *o, int idx)
{
    lua_Integer i, n;
    size_t len, j;
    const char *s;

    if (lua_type(L, idx) != LUA_TTABLE)
        (void)luaL_error(L, "ESCALATE: approvers must be an array of "
                            "group names");
    n = luaL_len(L, idx);
    if (n > POL_MAX_GROUPS)
        (void)luaL_error(L, "ESCALATE: more than %d approver groups",
                         POL_MAX_GROUPS);
    for (i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : "";
        if (!pol_group_valid(s, strlen(s)) || strlen(s) != len)
            (void)luaL_error(L,
                             "ESCALATE: approver group %d is not a group "
                             "name ([A-Za-z0-9][A-Za-z0-9_.:@-]*)",
                             (int)i);
        for (j = 0; j < o->ngroups && strcmp(o->groups[j], s) != 0; j++)
            ;
        if (j == o->ngroups)
            memcpy(o->groups[o->ngroups++], s, len + 1);
        lua_pop(L, 1);
    }
}

static lua_Integer
pol_int_field(lua_State *L, const char *name, lua_Integer max)
{
    lua_Integer v = 0;
    int isint = 0;

    if (lua_getfield(L, 1, name) != LUA_TNIL) {
        v = lua_tointegerx(L, -1, &isint);
        if (!isint || lua_type(L, -1) != LUA_TNUMBER || v < 1 || v > max)
            (void)luaL_error(L, "ESCALATE: %s must be an integer from 1 to %d",
                             name, (int)max);
    }
    lua_pop(L, 1);
    return v;
}

static int
pol_escalate(lua_State *L)
{
    static const char *const fields[] = {
        "reason", "message", "approvers", "groups", "quorum", "ttl", NULL};
    struct pol_vobj *o;
    int t = lua_type(L, 1);

    lua_settop(L, 1);
    o = pol_new_vobj(L, POL_ESCALATE);

    if (t == LUA_TSTRING) {
        pol_set_reason(L, "ESCALATE", o, 1);
        return 1;
    }
    if (t == LUA_TNONE || t == LUA_TNIL)
        return 1;
    if (t != LUA_TTABLE)
        return luaL_error(L, "ESCALATE: expected ESCALATE{approvers={...}, "
                             "quorum=n, ttl=seconds, reason=\"CODE\"}");
    pol_check_fields(L, "ESCALATE", fields);
    pol_common_fields(L, "ESCALATE", o);
    lua_getfield(L, 1, "approvers");
    lua_getfield(L, 1, "groups");
    if (!lua_isnil(L, -2) && !lua_isnil(L, -1))
        return luaL_error(L, "ESCALATE: give approvers or groups, not both");
    if (!lua_isnil(L, -2) || !lua_isnil(L, -1))
        pol_set_groups(L, o,
                       lua_isnil(L, -2) ? lua_gettop(L) : lua_gettop(L) - 1);
    lua_pop(L, 2);
    o->quorum = (int)pol_int_field(L, "quorum", IG_POLICY_QUORUM_MAX);
    o->ttl = (int64_t)pol_int_field(L, "ttl", IG_APPROVAL_TTL_MAX);
    lua_settop(L, 2);
    return 1;
}

static int
pol_verdict_tostring(lua_State *L)
{
    const struct pol_vobj *o = luaL_checkudata(L, 1, POL_VERDICT_MT);

    if (o->reason[0] != '\0')
        lua_pushfstring(L, "%s(%s)", pol_verdict_name(o->verdict), o->reason);
    else
        lua_pushstring(L, pol_verdict_name(o->verdict));
    return 1;
}

void
pol_open_verdicts(lua_State *L, int idx)
{
    luaL_newmetatable(L, POL_VERDICT_MT);
    lua_pushcfunction(L, pol_verdict_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    (void)pol_new_vobj(L, POL_ALLOW);
    lua_setfield(L, idx, "ALLOW");
    lua_pushcfunction(L, pol_block);
    lua_setfield(L, idx, "BLOCK");
    lua_pushcfunction(L, pol_escalate);
    lua_setfield(L, idx, "ESCALATE");
}

void
pol_acc_init(struct pol_acc *a)
{
    memset(a, 0, sizeof(*a));
}

static void
pol_add_reason(struct pol_decision *d, const char *r)
{
    size_t i;

    if (r[0] == '\0')
        return;
    for (i = 0; i < d->nreasons; i++)
        if (strcmp(d->reasons[i], r) == 0)
            return;
    if (d->nreasons < POL_MAX_REASONS)
        (void)snprintf(d->reasons[d->nreasons++], POL_REASON_MAX, "%s", r);
}

static enum pol_status
pol_acc_escalate(struct pol_acc *a, const struct pol_vobj *o, const char *file,
                 char *msg, size_t msgsz)
{
    struct pol_decision *d = &a->esc;
    size_t i, j;

    a->any_escalate = 1;
    pol_add_reason(d, o->reason);
    if (d->message[0] == '\0')
        memcpy(d->message, o->message, sizeof(d->message));
    for (i = 0; i < o->ngroups; i++) {
        for (j = 0; j < d->ngroups; j++)
            if (strcmp(d->groups[j], o->groups[i]) == 0)
                break;
        if (j < d->ngroups)
            continue;
        if (d->ngroups == POL_MAX_GROUPS) {
            (void)snprintf(msg, msgsz,
                           "%s: ESCALATE requirements name more than %d "
                           "approver groups in all",
                           file, POL_MAX_GROUPS);
            return POL_FAIL_ERROR;
        }
        memcpy(d->groups[d->ngroups++], o->groups[i], POL_GROUP_MAX);
    }
    if (o->quorum > d->quorum)
        d->quorum = o->quorum;
    if (o->ttl > 0 && (d->ttl_seconds == 0 || o->ttl < d->ttl_seconds))
        d->ttl_seconds = o->ttl;
    return POL_OK;
}

enum pol_status
pol_acc_add(struct pol_acc *a, lua_State *L, int idx, const char *file,
            char *msg, size_t msgsz)
{
    const struct pol_vobj *o;

    if (lua_isnil(L, idx))
        return POL_OK;
    o = luaL_testudata(L, idx, POL_VERDICT_MT);
    if (o == NULL) {
        (void)snprintf(msg, msgsz,
                       "%s: policy returned a %s (expected ALLOW, "
                       "ESCALATE{...}, BLOCK{...} or nil)%s",
                       file, luaL_typename(L, idx),
                       lua_isfunction(L, idx) ? "; call it: BLOCK{...}" : "");
        return POL_FAIL_ERROR;
    }
    switch (o->verdict) {
    case POL_ALLOW:
        a->any_allow = 1;
        break;
    case POL_ESCALATE:
        return pol_acc_escalate(a, o, file, msg, msgsz);
    case POL_BLOCK:
    default:
        a->any_block = 1;
        pol_add_reason(&a->block, o->reason);
        if (a->block.message[0] == '\0')
            memcpy(a->block.message, o->message, sizeof(a->block.message));
        break;
    }
    return POL_OK;
}

void
pol_acc_finish(const struct pol_acc *a, struct pol_decision *out)
{
    memset(out, 0, sizeof(*out));
    if (a->any_block) {
        out->nreasons = a->block.nreasons;
        memcpy(out->reasons, a->block.reasons, sizeof(out->reasons));
        memcpy(out->message, a->block.message, sizeof(out->message));
        out->verdict = POL_BLOCK;
    } else if (a->any_escalate) {
        *out = a->esc;
        out->verdict = POL_ESCALATE;
        /* quorum 0: no policy named one; the PDP's [approvals] quorum
           applies. */
    } else if (a->any_allow) {
        out->verdict = POL_ALLOW;
    } else {
        pol_decision_fail(out, "NO_POLICY_MATCHED",
                          "no policy had an opinion on this intent");
    }
}

void
pol_decision_fail(struct pol_decision *out, const char *reason, const char *msg)
{
    memset(out, 0, sizeof(*out));
    out->verdict = POL_BLOCK;
    out->nreasons = 1;
    (void)snprintf(out->reasons[0], POL_REASON_MAX, "%s", reason);
    pol_copy_text(out->message, sizeof(out->message), msg, strlen(msg));
}

/* ---- the explain trace ---- */

struct pol_trace *
pol_trace_new(void)
{
    return calloc(1, sizeof(struct pol_trace));
}

void
pol_trace_free(struct pol_trace *t)
{
    free(t);
}

static void
pol_trace_append(struct pol_trace *t, const char *file,
                 enum pol_trace_verdict v, const char *reason, int64_t ns)
{
    struct pol_trace_entry *x;

    if (t->n == IG_POLICY_MAX_FILES) /* a bundle has no more files */
        return;
    x = &t->e[t->n++];
    x->verdict = v;
    x->ns = ns;
    (void)snprintf(x->reason, sizeof(x->reason), "%s", reason);
    (void)snprintf(x->policy, sizeof(x->policy), "%s", file);
}

void
pol_trace_put(struct pol_trace *t, lua_State *L, int idx, const char *file,
              int64_t ns)
{
    const struct pol_vobj *o = luaL_testudata(L, idx, POL_VERDICT_MT);

    if (o != NULL)
        pol_trace_append(t, file, (enum pol_trace_verdict)o->verdict, o->reason,
                         ns);
}

void
pol_trace_fail(struct pol_trace *t, const char *file, enum pol_status st,
               int64_t ns)
{
    enum pol_trace_verdict v =
        st == POL_FAIL_LIMIT ? POL_TRACE_LIMIT : POL_TRACE_ERROR;
    const char *reason = st == POL_FAIL_LIMIT ? "POLICY_LIMIT" : "POLICY_ERROR";

    if (t->n > 0 && strcmp(t->e[t->n - 1].policy, file) == 0)
        t->n--;
    pol_trace_append(t, file, v, reason, ns);
}

size_t
pol_trace_len(const struct pol_trace *t)
{
    return t->n;
}

const char *
pol_trace_policy(const struct pol_trace *t, size_t i)
{
    return i < t->n ? t->e[i].policy : "";
}

enum pol_trace_verdict
pol_trace_verdict(const struct pol_trace *t, size_t i)
{
    return i < t->n ? t->e[i].verdict : POL_TRACE_ERROR;
}

int64_t
pol_trace_ns(const struct pol_trace *t, size_t i)
{
    return i < t->n ? t->e[i].ns : 0;
}

size_t
pol_trace_nreasons(const struct pol_trace *t, size_t i)
{
    return i < t->n && t->e[i].reason[0] != '\0' ? 1 : 0;
}

const char *
pol_trace_reason(const struct pol_trace *t, size_t i, size_t j)
{
    return j < pol_trace_nreasons(t, i) ? t->e[i].reason : "";
}

const char *
pol_trace_verdict_name(enum pol_trace_verdict v)
{
    switch (v) {
    case POL_TRACE_ERROR:
        return "ERROR";
    case POL_TRACE_LIMIT:
        return "LIMIT";
    case POL_TRACE_ALLOW:
    case POL_TRACE_ESCALATE:
    case POL_TRACE_BLOCK:
    default:
        return pol_verdict_name((enum pol_verdict)v);
    }
}

json_t *
pol_trace_entry_json(const struct pol_trace *t, size_t i)
{
    json_t *reasons = json_array();
    size_t j;

    if (reasons == NULL)
        return NULL;
    for (j = 0; j < pol_trace_nreasons(t, i); j++)
        if (json_array_append_new(
                reasons, json_string(pol_trace_reason(t, i, j))) != 0) {
            json_decref(reasons);
            return NULL;
        }
    /* "o" steals reasons, also when json_pack fails. */
    return json_pack("{s:s, s:s, s:o}", "policy", pol_trace_policy(t, i),
                     "verdict", pol_trace_verdict_name(pol_trace_verdict(t, i)),
                     "reasons", reasons);
}

json_t *
pol_trace_json(const struct pol_trace *t)
{
    json_t *a = json_array(), *x;
    size_t i;

    if (a == NULL)
        return NULL;
    for (i = 0; i < t->n; i++) {
        x = pol_trace_entry_json(t, i);
        /* append_new steals x */
        if (x == NULL || json_array_append_new(a, x) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
