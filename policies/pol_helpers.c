/*
 * pol_helpers.c - string and counter helpers given to policies as globals:
 *   glob(pattern, s)        `*` any run of characters, `?` one character
 *   starts_with(s, prefix)  ends_with(s, suffix)
 *   count(key, window)      hits of key in the last window seconds
 *
 * How it works: glob is the iterative two-pointer matcher (remember the
 * last `*`, retry one character further on a mismatch): no recursion, no
 * Lua patterns, at most len(s) * len(pattern) steps, which are charged to
 * the run's instruction budget. It works on UTF-8 characters (an invalid
 * byte counts as one character); there is no escape syntax. The subject
 * argument usually comes from the intent and may be any value: a
 * non-string never matches. Patterns, prefixes and suffixes are the
 * policy's own and must be strings.
 *
 * count() calls the engine's pol_count_fn. A missing counter or a failing
 * one fails the whole evaluation with POLICY_ERROR (sticky: pcall cannot
 * hide it), because a quota that cannot be checked must not pass.
 */
#include "pol_int.h"

#include <stdint.h>
#include <string.h>

/* Length of the character at s: a valid UTF-8 sequence, else 1. */
static size_t
pol_char_len(const unsigned char *s, size_t n)
{
    size_t len = pol_utf8_char(s, n);

    return len > 0 ? len : 1;
}

#define POL_GLOB_CHARGE 4096 /* steps between budget charges */

/* 1 when s matches pattern p. */
static int
pol_glob_match(lua_State *L, const unsigned char *p, size_t m,
               const unsigned char *s, size_t n)
{
    size_t pi = 0, si = 0, star = SIZE_MAX, mark = 0, pl, sl;
    int64_t steps = 0;

    while (si < n) {
        if (++steps == POL_GLOB_CHARGE) {
            pol_vm_charge(L, steps);
            steps = 0;
        }
        sl = pol_char_len(s + si, n - si);
        if (pi < m && p[pi] == '*') {
            star = pi++;
            mark = si;
            continue;
        }
        if (pi < m) {
            pl = pol_char_len(p + pi, m - pi);
            if ((pl == 1 && p[pi] == '?') ||
                (pl == sl && memcmp(p + pi, s + si, pl) == 0)) {
                pi += pl;
                si += sl;
                continue;
            }
        }
        if (star == SIZE_MAX)
            break;
        pi = star + 1;
        mark += pol_char_len(s + mark, n - mark);
        si = mark;
    }
    pol_vm_charge(L, steps);
    if (si < n)
        return 0;
    while (pi < m && p[pi] == '*')
        pi++;
    return pi == m;
}

static int
pol_glob(lua_State *L)
{
    size_t m, n;
    const char *p = luaL_checklstring(L, 1, &m);
    const char *s;

    if (m > IG_POLICY_GLOB_PATTERN_MAX)
        return pol_vm_fail(L, POL_FAIL_LIMIT,
                           "glob: pattern longer than %d bytes",
                           IG_POLICY_GLOB_PATTERN_MAX);
    if (lua_type(L, 2) != LUA_TSTRING) {
        lua_pushboolean(L, 0);
        return 1;
    }
    s = lua_tolstring(L, 2, &n);
    if (n > IG_POLICY_STRING_MAX)
        return pol_vm_fail(L, POL_FAIL_LIMIT,
                           "glob: string longer than %d bytes",
                           IG_POLICY_STRING_MAX);
    lua_pushboolean(L, pol_glob_match(L, (const unsigned char *)p, m,
                                      (const unsigned char *)s, n));
    return 1;
}

static int
pol_affix(lua_State *L, int at_end)
{
    size_t n, m;
    const char *a = luaL_checklstring(L, 2, &m);
    const char *s;

    if (lua_type(L, 1) != LUA_TSTRING) {
        lua_pushboolean(L, 0);
        return 1;
    }
    s = lua_tolstring(L, 1, &n);
    lua_pushboolean(L, n >= m && memcmp(at_end ? s + n - m : s, a, m) == 0);
    return 1;
}

static int
pol_starts_with(lua_State *L)
{
    return pol_affix(L, 0);
}

static int
pol_ends_with(lua_State *L)
{
    return pol_affix(L, 1);
}

static int
pol_count(lua_State *L)
{
    struct pol_vm *vm = pol_vm_of(L);
    size_t klen;
    const char *key = luaL_checklstring(L, 1, &klen);
    lua_Integer window = luaL_checkinteger(L, 2);
    int64_t n;

    if (klen == 0 || klen > IG_STORE_COUNT_KEY_MAX || strlen(key) != klen)
        return luaL_argerror(L, 1,
                             lua_pushfstring(L,
                                             "key must be 1 to %d bytes, "
                                             "without NUL",
                                             IG_STORE_COUNT_KEY_MAX));
    if (window < 1 || window > IG_STORE_COUNT_WINDOW_MAX)
        return luaL_argerror(L, 2,
                             lua_pushfstring(L,
                                             "window must be 1 to %d seconds",
                                             IG_STORE_COUNT_WINDOW_MAX));
    if (vm->count == NULL)
        return pol_vm_fail(L, POL_FAIL_ERROR,
                           "count(): no counter is configured");
    n = vm->count(vm->count_ctx, key, (int64_t)window);
    if (n < 0)
        return pol_vm_fail(L, POL_FAIL_ERROR, "count(): the counter failed");
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* 1 when the array at idx holds the string group. */
static int
pol_has_group(lua_State *L, int idx, const char *group)
{
    lua_Integer i, n;
    int found = 0;

    if (!lua_istable(L, idx))
        return 0;
    n = luaL_len(L, idx);
    for (i = 1; i <= n && !found; i++) {
        if (lua_geti(L, idx, i) == LUA_TSTRING &&
            strcmp(lua_tostring(L, -1), group) == 0)
            found = 1;
        lua_pop(L, 1);
    }
    return found;
}

/*
 * approved(intent, group [, n]): true when intent.approval (present only
 * when the policies are re-evaluated after a human approval reached its
 * quorum) holds at least n approvals by approvers in group; n defaults to
 * the request's quorum (at least 1).
 */
static int
pol_approved(lua_State *L)
{
    const char *group = luaL_checkstring(L, 2);
    lua_Integer need = luaL_optinteger(L, 3, 0), have = 0, i, n;
    int ap;

    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 3);
    if (lua_getfield(L, 1, "approval") != LUA_TTABLE) {
        lua_pushboolean(L, 0);
        return 1;
    }
    ap = lua_gettop(L);
    if (need <= 0) {
        lua_getfield(L, ap, "quorum");
        need = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 1;
        lua_pop(L, 1);
        if (need < 1)
            need = 1;
    }
    if (lua_getfield(L, ap, "approvals") == LUA_TTABLE) {
        n = luaL_len(L, -1);
        for (i = 1; i <= n; i++) {
            if (lua_geti(L, -1, i) == LUA_TTABLE) {
                lua_getfield(L, -1, "groups");
                have += pol_has_group(L, lua_gettop(L), group);
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    }
    lua_pushboolean(L, have >= need);
    return 1;
}

static const luaL_Reg pol_helpers[] = {{"glob", pol_glob},
                                       {"approved", pol_approved},
                                       {"starts_with", pol_starts_with},
                                       {"ends_with", pol_ends_with},
                                       {"count", pol_count},
                                       {NULL, NULL}};

void
pol_open_helpers(lua_State *L, int idx)
{
    const luaL_Reg *r;

    for (r = pol_helpers; r->name != NULL; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, idx, r->name);
    }
}
