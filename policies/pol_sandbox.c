/*
 * pol_sandbox.c - the environment a policy runs in: what it can call and
 * see, and nothing else.
 *
 * How it works (each point is a Lua 5.4 pitfall a test here exercises):
 *   - Environment: the real libraries are opened into the registry only.
 *     The sandbox environment is a new table holding copies of allowlisted
 *     functions, read-only library tables, the helpers and verdicts, `null`
 *     and `config`; it is frozen (writes to globals raise) and strict
 *     (reading an undefined global raises). It also replaces the registry's
 *     globals (pol_vm_set_env), so no path leads back to the real `_G`.
 *   - Message handlers: Lua runs an xpcall handler at the error point,
 *     which for a budget error is inside the hook, with hooks off. So the
 *     sandbox's xpcall calls the handler after unwinding instead.
 * The state, its heap cap and budget are pol_vm.c's; this file sits above
 * every file whose functions it puts in the environment, and none of them
 * calls back into it.
 */
#include "pol_int.h"

#include <lualib.h>
#include <string.h>

/* Base functions copied as they are (the raw* and next are wrapped). */
static const char *const pol_base_names[] = {
    "assert",   "error",    "ipairs", "pairs",    "pcall", "select",
    "tonumber", "tostring", "type",   "rawequal", NULL};

struct pol_setup {
    const json_t *settings;
};

static int
pol_undefined_global(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING)
        return luaL_error(L, "undefined global '%s'", lua_tostring(L, 2));
    return luaL_error(L, "undefined global (a %s key)", luaL_typename(L, 2));
}

/*
 * xpcall(f, msgh, ...) with msgh called after the stack has unwound, not at
 * the error point. Lua's own xpcall calls the handler from inside the hook
 * that raised a budget error, where hooks are off: a looping handler would
 * run forever. (Policies have no debug library, so nothing else differs.)
 */
static int
pol_xpcall(lua_State *L)
{
    int n = lua_gettop(L), i, st;

    luaL_checktype(L, 2, LUA_TFUNCTION);
    luaL_checkstack(L, n + 2, "too many arguments");
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    for (i = 3; i <= n; i++)
        lua_pushvalue(L, i);
    st = lua_pcall(L, n - 2, LUA_MULTRET, 0);
    if (st == LUA_OK)
        return lua_gettop(L) - n;
    if (st != LUA_ERRMEM) {
        lua_pushvalue(L, 2);
        lua_insert(L, -2);
        (void)lua_pcall(L, 1, 1, 0);
    }
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
}

/* Copy every field of the table at from into a new table, except skip. */
static void
pol_push_copy(lua_State *L, int from, const char *skip)
{
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, from) != 0) {
        if (skip != NULL && lua_type(L, -2) == LUA_TSTRING &&
            strcmp(lua_tostring(L, -2), skip) == 0) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
}

static void
pol_set_libs(lua_State *L, int base, int g)
{
    size_t i;

    for (i = 0; pol_base_names[i] != NULL; i++) {
        lua_getfield(L, g, pol_base_names[i]);
        lua_setfield(L, base, pol_base_names[i]);
    }
    lua_pushcfunction(L, pol_xpcall);
    lua_setfield(L, base, "xpcall");
    lua_pushcfunction(L, pol_lua_next);
    lua_setfield(L, base, "next");
    lua_pushcfunction(L, pol_lua_rawget);
    lua_setfield(L, base, "rawget");
    lua_pushcfunction(L, pol_lua_rawset);
    lua_setfield(L, base, "rawset");
    lua_pushcfunction(L, pol_lua_rawlen);
    lua_setfield(L, base, "rawlen");
    pol_push_string_lib(L, g + 1);
    pol_freeze(L);
    lua_setfield(L, base, "string");
    pol_push_table_lib(L, g + 2);
    pol_freeze(L);
    lua_setfield(L, base, "table");
    pol_push_copy(L, g + 3, "randomseed");
    pol_freeze(L);
    lua_setfield(L, base, "math");
    pol_push_copy(L, g + 4, NULL);
    pol_freeze(L);
    lua_setfield(L, base, "utf8");
    lua_createtable(L, 0, 2);
    lua_getfield(L, g + 5, "time");
    lua_setfield(L, -2, "time");
    lua_getfield(L, g + 5, "date");
    lua_setfield(L, -2, "date");
    pol_freeze(L);
    lua_setfield(L, base, "os");
}

/* Protected: build the environment (settings at 1 as light userdata). */
static int
pol_build_env(lua_State *L)
{
    const struct pol_setup *s = lua_touserdata(L, 1);
    int g = 2, base = 8;

    luaL_requiref(L, LUA_GNAME, luaopen_base, 0);        /* 2 */
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0); /* 3 */
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 0);  /* 4 */
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);  /* 5 */
    luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 0);  /* 6 */
    luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);      /* 7 */
    lua_createtable(L, 0, 40);                           /* 8: base */
    pol_set_libs(L, base, g);
    pol_open_helpers(L, base);
    pol_open_net(L, base);
    pol_open_url(L, base);
    pol_open_text(L, base);
    pol_open_verdicts(L, base);
    pol_push_new_null(L);
    lua_setfield(L, base, "null");
    if (s->settings != NULL) {
        pol_push_json(L, s->settings);
    } else {
        lua_newtable(L);
        pol_freeze(L);
    }
    lua_setfield(L, base, "config");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, pol_undefined_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, base);
    lua_pushvalue(L, base);
    pol_freeze_env(L);
    pol_vm_set_env(L);
    return 0;
}

enum ig_status
pol_vm_open(struct pol_vm *vm, const struct pol_limits *l,
            const json_t *settings, pol_count_fn count, void *count_ctx,
            struct ig_err *err)
{
    struct pol_setup setup = {settings};
    enum ig_status ist;
    int st;

    ist = pol_vm_create(vm, l, count, count_ctx, err);
    if (ist != IG_OK)
        return ist;
    lua_pushcfunction(vm->L, pol_build_env);
    lua_pushlightuserdata(vm->L, &setup);
    st = lua_pcall(vm->L, 1, 0, 0);
    if (st != LUA_OK) {
        (void)ig_err_set(err, st == LUA_ERRMEM ? IG_ERR_NOMEM : IG_ERR_INVALID,
                         "policy sandbox: %s",
                         st == LUA_ERRMEM ? "out of memory (settings too "
                                            "large for the memory limit?)"
                                          : lua_tostring(vm->L, -1));
        pol_vm_close(vm);
        return st == LUA_ERRMEM ? IG_ERR_NOMEM : IG_ERR_INVALID;
    }
    lua_gc(vm->L, LUA_GCGEN, 0, 0);
    return IG_OK;
}
