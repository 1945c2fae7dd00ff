/*
 * pol_value.c - read-only tables and the JSON -> Lua conversion.
 *
 * How it works: Lua cannot freeze a table, so a read-only table is an
 * empty proxy whose own metatable has __index = the data table (reads stay
 * on the VM's fast path), __newindex raising, __len and __pairs reaching the
 * data, and __metatable = false. The data table is never handed out: the
 * sandbox's next/rawget/rawlen see through proxies to it, and rawset
 * refuses them. The intent, `config` and every library table are frozen
 * this way, nested tables too.
 *
 * JSON maps to Lua as: object/array -> read-only table (arrays 1-based),
 * string -> string (may hold NULs), true/false -> boolean, an integral
 * number within +-2^53 -> integer (so tostring(1) is "1"), other numbers ->
 * float, null -> the `null` sentinel (a unique userdata that prints as
 * "null"): a JSON null stays distinct from an absent member, and arrays
 * with nulls keep their length.
 */
#include "pol_int.h"

#include <string.h>

#include "ig_json.h"

static char pol_key_null; /* registry key of the null sentinel */

static int
pol_ro_newindex(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING && lua_rawlen(L, 2) <= 64)
        return luaL_error(L, "attempt to modify a read-only table (key '%s')",
                          lua_tostring(L, 2));
    return luaL_error(L, "attempt to modify a read-only table");
}

static int
pol_env_newindex(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING && lua_rawlen(L, 2) <= 64)
        return luaL_error(L,
                          "cannot set global '%s': globals are read-only "
                          "(use local)",
                          lua_tostring(L, 2));
    return luaL_error(L, "cannot set a global: globals are read-only");
}

int
pol_proxy_data(lua_State *L, int idx)
{
    lua_CFunction f;

    if (!lua_getmetatable(L, idx))
        return 0;
    lua_getfield(L, -1, "__newindex");
    f = lua_tocfunction(L, -1);
    lua_pop(L, 1);
    if (f != pol_ro_newindex && f != pol_env_newindex) {
        lua_pop(L, 1);
        return 0;
    }
    lua_getfield(L, -1, "__index");
    lua_remove(L, -2);
    return 1;
}

static int
pol_ro_len(lua_State *L)
{
    if (!pol_proxy_data(L, 1))
        return luaL_error(L, "not a read-only table");
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, -1));
    return 1;
}

/* __pairs: iterate with the proxy-aware next. */
static int
pol_ro_pairs(lua_State *L)
{
    lua_pushcfunction(L, pol_lua_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* The arguments of next/rawget/rawset: a table, then arguments 2..need
   present; the stack is cut to keep. Returns whether the table is a
   read-only proxy, its data table then pushed. */
static int
table_args(lua_State *L, int need, int keep)
{
    int i;

    luaL_checktype(L, 1, LUA_TTABLE);
    for (i = 2; i <= need; i++)
        luaL_checkany(L, i);
    lua_settop(L, keep);
    return pol_proxy_data(L, 1);
}

int
pol_lua_next(lua_State *L)
{
    if (table_args(L, 1, 2))
        lua_replace(L, 1);
    if (lua_next(L, 1))
        return 2;
    lua_pushnil(L);
    return 1;
}

int
pol_lua_rawget(lua_State *L)
{
    if (table_args(L, 2, 2))
        lua_replace(L, 1);
    lua_rawget(L, 1);
    return 1;
}

int
pol_lua_rawset(lua_State *L)
{
    if (table_args(L, 3, 3))
        return luaL_error(L, "attempt to modify a read-only table");
    lua_rawset(L, 1);
    return 1;
}

int
pol_lua_rawlen(lua_State *L)
{
    int t = lua_type(L, 1);

    luaL_argexpected(L, t == LUA_TTABLE || t == LUA_TSTRING, 1,
                     "table or string");
    if (t == LUA_TTABLE && pol_proxy_data(L, 1))
        lua_replace(L, 1);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1));
    return 1;
}

static void
pol_freeze_with(lua_State *L, lua_CFunction newindex)
{
    lua_createtable(L, 0, 0); /* data proxy */
    lua_createtable(L, 0, 5); /* data proxy mt */
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, pol_ro_len);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, pol_ro_pairs);
    lua_setfield(L, -2, "__pairs");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_replace(L, -2);
}

void
pol_freeze(lua_State *L)
{
    pol_freeze_with(L, pol_ro_newindex);
}

void
pol_freeze_env(lua_State *L)
{
    pol_freeze_with(L, pol_env_newindex);
}

static int
pol_null_tostring(lua_State *L)
{
    lua_pushliteral(L, "null");
    return 1;
}

void
pol_push_new_null(lua_State *L)
{
    (void)lua_newuserdatauv(L, 1, 0);
    lua_createtable(L, 0, 3);
    lua_pushcfunction(L, pol_null_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "null");
    lua_setfield(L, -2, "__name");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &pol_key_null);
}

void
pol_push_null(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &pol_key_null);
}

static void
pol_push_number(lua_State *L, double d)
{
    lua_Integer i;

    if (d >= -9007199254740992.0 && d <= 9007199254740992.0) {
        i = (lua_Integer)d;
        if ((double)i == d) {
            lua_pushinteger(L, i);
            return;
        }
    }
    lua_pushnumber(L, (lua_Number)d);
}

static void pol_push_value(lua_State *L, const json_t *v, int depth);

static void
pol_push_container(lua_State *L, const json_t *v, int depth)
{
    json_t *obj = ig_json_unconst(v);
    size_t i, n;
    void *it;

    if (depth >= IG_POLICY_DEPTH_MAX)
        (void)luaL_error(L, "JSON nested deeper than %d levels",
                         IG_POLICY_DEPTH_MAX);
    if (json_is_array(v)) {
        n = json_array_size(v);
        lua_createtable(L, n > 4096 ? 4096 : (int)n, 0);
        for (i = 0; i < n; i++) {
            pol_push_value(L, json_array_get(v, i), depth + 1);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
    } else {
        n = json_object_size(v);
        lua_createtable(L, 0, n > 4096 ? 4096 : (int)n);
        for (it = json_object_iter(obj); it != NULL;
             it = json_object_iter_next(obj, it)) {
            lua_pushlstring(L, json_object_iter_key(it),
                            json_object_iter_key_len(it));
            pol_push_value(L, json_object_iter_value(it), depth + 1);
            lua_rawset(L, -3);
        }
    }
    pol_freeze(L);
}

static void
pol_push_value(lua_State *L, const json_t *v, int depth)
{
    luaL_checkstack(L, 8, "JSON nested too deeply");
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        pol_push_container(L, v, depth);
        break;
    case JSON_STRING:
        lua_pushlstring(L, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        lua_pushinteger(L, (lua_Integer)json_integer_value(v));
        break;
    case JSON_REAL:
        pol_push_number(L, json_real_value(v));
        break;
    case JSON_TRUE:
        lua_pushboolean(L, 1);
        break;
    case JSON_FALSE:
        lua_pushboolean(L, 0);
        break;
    case JSON_NULL:
    default:
        pol_push_null(L);
        break;
    }
}

void
pol_push_json(lua_State *L, const json_t *v)
{
    pol_push_value(L, v, 0);
}
