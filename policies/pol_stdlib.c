/*
 * pol_stdlib.c - the `string` and `table` libraries as policies see them.
 *
 * How it works: each sandbox library is a new table holding the real
 * library's harmless functions plus wrappers for the ones that could run
 * long inside one C call, where the instruction hook cannot interrupt:
 *   - string.find is always a plain find (no Lua patterns at all: a
 *     pattern like '.-.-.-b' can run for minutes), linear time (KMP for
 *     needles over 32 bytes), on strings of at most IG_POLICY_STRING_MAX;
 *   - string.rep and table.concat refuse results over IG_POLICY_STRING_MAX
 *     (and rep('', huge) returns at once instead of looping);
 *   - table.insert/remove/sort/unpack charge their element work to the
 *     run's instruction budget before the real function runs.
 * Left out: string.dump, match, gmatch, gsub, pack, packsize, unpack and
 * table.move. The string metatable's __index is pointed at the sandbox
 * string table (and its __metatable set to false), so ('x'):rep(...)
 * reaches the capped rep, never the real library.
 */
#include "pol_int.h"

#include <stdint.h>
#include <string.h>

/* Real string functions exposed as they are. */
static const char *const pol_string_names[] = {
    "byte", "char", "format", "len", "lower", "reverse", "sub", "upper", NULL};

#define POL_KMP_MIN 32 /* needles longer than this use KMP */

static const char *
pol_find_kmp(lua_State *L, const char *s, size_t n, const char *p, size_t m)
{
    uint32_t *fail = lua_newuserdatauv(L, m * sizeof(*fail), 0);
    const char *hit = NULL;
    size_t i, k = 0;

    fail[0] = 0;
    for (i = 1; i < m; i++) {
        while (k > 0 && p[i] != p[k])
            k = fail[k - 1];
        if (p[i] == p[k])
            k++;
        fail[i] = (uint32_t)k;
    }
    k = 0;
    for (i = 0; i < n; i++) {
        while (k > 0 && s[i] != p[k])
            k = fail[k - 1];
        if (s[i] == p[k])
            k++;
        if (k == m) {
            hit = s + i + 1 - m;
            break;
        }
    }
    lua_pop(L, 1);
    return hit;
}

/* First occurrence of p (m bytes) in s (n bytes), or NULL. */
static const char *
pol_find(lua_State *L, const char *s, size_t n, const char *p, size_t m)
{
    const char *q;

    if (m == 0)
        return s;
    if (m > n)
        return NULL;
    if (m > POL_KMP_MIN)
        return pol_find_kmp(L, s, n, p, m);
    /* As Lua's lmemfind; at most POL_KMP_MIN compares per position. */
    n -= m - 1;
    while (n > 0 && (q = memchr(s, p[0], n)) != NULL) {
        if (memcmp(q + 1, p + 1, m - 1) == 0)
            return q;
        n -= (size_t)(q + 1 - s);
        s = q + 1;
    }
    return NULL;
}

/* string.find(s, sub [, init]): always plain. */
static int
pol_str_find(lua_State *L)
{
    size_t ls, lp, start;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    lua_Integer init = luaL_optinteger(L, 3, 1);
    const char *hit;

    if (ls > IG_POLICY_STRING_MAX || lp > IG_POLICY_STRING_MAX)
        return pol_vm_fail(L, POL_FAIL_LIMIT,
                           "string.find: string longer than %d bytes",
                           IG_POLICY_STRING_MAX);
    if (init > 0)
        start = (lua_Unsigned)init - 1 > ls ? ls + 1 : (size_t)(init - 1);
    else if (init == 0 || init < -(lua_Integer)ls)
        start = 0;
    else
        start = ls - (size_t)(-init);
    if (start > ls) {
        luaL_pushfail(L);
        return 1;
    }
    hit = pol_find(L, s + start, ls - start, p, lp);
    if (hit == NULL) {
        luaL_pushfail(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
    lua_pushinteger(L, (lua_Integer)(hit - s) + (lua_Integer)lp);
    return 2;
}

/* string.rep(s, n [, sep]) with the result capped. */
static int
pol_str_rep(lua_State *L)
{
    size_t l, lsep, total, i, count;
    const char *s = luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    const char *sep = luaL_optlstring(L, 3, "", &lsep);
    luaL_Buffer b;
    char *out;

    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    if (n > IG_POLICY_STRING_MAX + 1 || l > IG_POLICY_STRING_MAX ||
        lsep > IG_POLICY_STRING_MAX)
        goto over;
    count = (size_t)n;
    total = l * count + lsep * (count - 1);
    if (total > IG_POLICY_STRING_MAX)
        goto over;
    out = luaL_buffinitsize(L, &b, total);
    for (i = 0; i < count; i++) {
        memcpy(out, s, l);
        out += l;
        if (lsep > 0 && i + 1 < count) {
            memcpy(out, sep, lsep);
            out += lsep;
        }
    }
    luaL_pushresultsize(&b, total);
    return 1;
over:
    return pol_vm_fail(L, POL_FAIL_LIMIT,
                       "string.rep: result longer than %d bytes",
                       IG_POLICY_STRING_MAX);
}

void
pol_push_string_lib(lua_State *L, int string_idx)
{
    size_t i;

    lua_createtable(L, 0, 12);
    for (i = 0; pol_string_names[i] != NULL; i++) {
        lua_getfield(L, string_idx, pol_string_names[i]);
        lua_setfield(L, -2, pol_string_names[i]);
    }
    lua_pushcfunction(L, pol_str_find);
    lua_setfield(L, -2, "find");
    lua_pushcfunction(L, pol_str_rep);
    lua_setfield(L, -2, "rep");
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_pushvalue(L, -3);
        lua_setfield(L, -2, "__index");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* table.concat with the result capped and its elements charged. */
static int
pol_tab_concat(lua_State *L)
{
    luaL_Buffer b;
    size_t lsep, len, total = 0;
    const char *sep;
    lua_Integer i, last;

    luaL_checktype(L, 1, LUA_TTABLE);
    sep = luaL_optlstring(L, 2, "", &lsep);
    i = luaL_optinteger(L, 3, 1);
    last = luaL_opt(L, luaL_checkinteger, 4, luaL_len(L, 1));
    luaL_buffinit(L, &b);
    for (; i <= last; i++) {
        pol_vm_charge(L, 1);
        lua_geti(L, 1, i);
        if (!lua_isstring(L, -1))
            return luaL_error(L,
                              "invalid value (at index %I) in table for "
                              "'concat'",
                              (LUAI_UACINT)i);
        (void)lua_tolstring(L, -1, &len);
        total += len + (i < last ? lsep : 0);
        if (total > IG_POLICY_STRING_MAX)
            return pol_vm_fail(L, POL_FAIL_LIMIT,
                               "table.concat: result longer than %d bytes",
                               IG_POLICY_STRING_MAX);
        luaL_addvalue(&b);
        if (i < last)
            luaL_addlstring(&b, sep, lsep);
        if (i == LUA_MAXINTEGER)
            break;
    }
    luaL_pushresult(&b);
    return 1;
}

/* Run the real function held in upvalue 1 on this call's arguments. */
static int
pol_call_real(lua_State *L)
{
    lua_CFunction f = lua_tocfunction(L, lua_upvalueindex(1));

    return f(L);
}

static int64_t
pol_span(lua_Integer from, lua_Integer to)
{
    lua_Unsigned d;

    if (to < from)
        return 0;
    d = (lua_Unsigned)to - (lua_Unsigned)from;
    return d >= (lua_Unsigned)INT64_MAX ? INT64_MAX : (int64_t)d + 1;
}

static int
pol_tab_insert(lua_State *L)
{
    lua_Integer e, pos;

    if (lua_type(L, 1) == LUA_TTABLE && lua_gettop(L) == 3) {
        e = luaL_len(L, 1);
        pos = luaL_checkinteger(L, 2);
        if (pos >= 1 && e < LUA_MAXINTEGER && pos <= e + 1)
            pol_vm_charge(L, pol_span(pos, e));
    }
    return pol_call_real(L);
}

static int
pol_tab_remove(lua_State *L)
{
    lua_Integer size, pos;

    if (lua_type(L, 1) == LUA_TTABLE) {
        size = luaL_len(L, 1);
        pos = luaL_optinteger(L, 2, size);
        if (pos >= 1)
            pol_vm_charge(L, pol_span(pos, size));
    }
    return pol_call_real(L);
}

static int
pol_tab_sort(lua_State *L)
{
    lua_Integer n;
    int64_t bits = 1;

    if (lua_type(L, 1) == LUA_TTABLE) {
        n = luaL_len(L, 1);
        while (bits < 62 && ((lua_Integer)1 << bits) < n)
            bits++;
        if (n > 1)
            pol_vm_charge(L, n > INT64_MAX / 64 ? INT64_MAX : n * bits);
    }
    return pol_call_real(L);
}

static int
pol_tab_unpack(lua_State *L)
{
    lua_Integer i = luaL_optinteger(L, 2, 1);
    lua_Integer e = luaL_opt(L, luaL_checkinteger, 3, luaL_len(L, 1));

    pol_vm_charge(L, pol_span(i, e));
    return pol_call_real(L);
}

static void
pol_wrap(lua_State *L, int from, const char *name, lua_CFunction fn)
{
    lua_getfield(L, from, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
}

void
pol_push_table_lib(lua_State *L, int table_idx)
{
    lua_createtable(L, 0, 8);
    lua_getfield(L, table_idx, "pack");
    lua_setfield(L, -2, "pack");
    lua_pushcfunction(L, pol_tab_concat);
    lua_setfield(L, -2, "concat");
    pol_wrap(L, table_idx, "insert", pol_tab_insert);
    pol_wrap(L, table_idx, "remove", pol_tab_remove);
    pol_wrap(L, table_idx, "sort", pol_tab_sort);
    pol_wrap(L, table_idx, "unpack", pol_tab_unpack);
}
