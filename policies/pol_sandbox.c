/*
 * pol_sandbox.c - one sandboxed Lua 5.4 state: capped heap, budgeted runs,
 * an allowlisted environment, text-only loading.
 *
 * How it works (each point is a Lua 5.4 pitfall a test here exercises):
 *   - Heap: pol_alloc() refuses any growth past lim.memory_bytes (shrinking
 *     and freeing always succeed; when ptr is NULL osize is a type tag, so
 *     the old size is 0). A refusal is remembered: the run fails with
 *     POLICY_LIMIT even if the policy catches "not enough memory".
 *   - Budget: a count hook every POL_HOOK_GRAIN instructions subtracts from
 *     the run's instruction budget and checks the wall-clock deadline. When
 *     either is spent - or a C helper fails the run through pol_vm_fail() -
 *     the hook is re-armed with count 1, so every further instruction
 *     raises again: `pcall` cannot swallow the failure. C helpers that loop
 *     charge their work to the same budget (pol_vm_charge).
 *   - Message handlers: Lua runs an xpcall handler at the error point,
 *     which for a budget error is inside the hook, with hooks off. So the
 *     sandbox's xpcall calls the handler after unwinding instead.
 *   - Environment: the real libraries are opened into the registry only.
 *     The sandbox environment is a new table holding copies of allowlisted
 *     functions, read-only library tables, the helpers and verdicts, `null`
 *     and `config`; it is frozen (writes to globals raise) and strict
 *     (reading an undefined global raises). It also replaces the registry's
 *     globals, so no path leads back to the real `_G`.
 *   - Loading: luaL_loadbufferx(..., "t") refuses bytecode; the chunk's
 *     _ENV upvalue is set to the sandbox environment; the chunk name is
 *     "=FILE" so messages read "FILE:LINE: ...".
 */
#include "pol_int.h"

#include <lualib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char pol_key_env; /* registry key of the sandbox environment */

/* Base functions copied as they are (the raw* and next are wrapped). */
static const char *const pol_base_names[] = {
    "assert",   "error",    "ipairs", "pairs",    "pcall", "select",
    "tonumber", "tostring", "type",   "rawequal", NULL};

struct pol_setup {
    const json_t *settings;
};

struct pol_vm *
pol_vm_of(lua_State *L)
{
    struct pol_vm *vm;

    memcpy(&vm, lua_getextraspace(L), sizeof(vm));
    return vm;
}

static void *
pol_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct pol_vm *vm = ud;
    size_t old = ptr != NULL ? osize : 0;
    void *p;

    if (nsize == 0) {
        free(ptr);
        vm->mem_used -= old;
        return NULL;
    }
    if (nsize > old && nsize - old > vm->lim.memory_bytes - vm->mem_used) {
        vm->mem_refused = 1;
        return NULL;
    }
    p = realloc(ptr, nsize);
    if (p == NULL)
        return NULL;
    vm->mem_used = vm->mem_used - old + nsize;
    return p;
}

static int64_t
pol_now_us(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* "FILE:LINE: " of the function at level, or "" without line info. */
static void
pol_where(lua_State *L, int level, char *buf, size_t n)
{
    lua_Debug ar;

    buf[0] = '\0';
    if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) &&
        ar.currentline > 0)
        (void)snprintf(buf, n, "%s:%d: ", ar.short_src, ar.currentline);
}

/* Record the first failure of the run (where + text, or file + text). */
static void
pol_set_sticky(struct pol_vm *vm, enum pol_status st, const char *where,
               const char *text)
{
    char *m = vm->sticky_msg;
    size_t n;

    if (vm->sticky != POL_OK)
        return;
    vm->sticky = st;
    /* where + text, or file + ": " + text; capped, as all messages. */
    if (where[0] != '\0') {
        pol_copy_text(m, sizeof(vm->sticky_msg), where, strlen(where));
    } else {
        where = vm->file != NULL ? vm->file : "policy";
        pol_copy_text(m, sizeof(vm->sticky_msg) - 2, where, strlen(where));
        n = strlen(m);
        memcpy(m + n, ": ", 3);
    }
    n = strlen(m);
    pol_copy_text(m + n, sizeof(vm->sticky_msg) - n, text, strlen(text));
}

static void pol_hook(lua_State *L, lua_Debug *ar);

/* From now on every instruction of this run raises. */
static void
pol_arm_trip(lua_State *L, struct pol_vm *vm)
{
    if (vm->budget_on) {
        vm->hook_count = 1;
        lua_sethook(L, pol_hook, LUA_MASKCOUNT, 1);
    }
}

static void
pol_hook(lua_State *L, lua_Debug *ar)
{
    struct pol_vm *vm = pol_vm_of(L);
    char where[LUA_IDSIZE + 32];

    (void)ar;
    if (vm->sticky == POL_OK) {
        vm->steps_left -= vm->hook_count;
        if (vm->steps_left > 0 && pol_now_us() <= vm->deadline_us) {
            if (vm->steps_left < vm->hook_count) {
                vm->hook_count = (int)vm->steps_left;
                lua_sethook(L, pol_hook, LUA_MASKCOUNT, vm->hook_count);
            }
            return;
        }
        pol_where(L, 0, where, sizeof(where));
        pol_set_sticky(vm, POL_FAIL_LIMIT, where,
                       vm->steps_left > 0 ? "wall-clock budget exceeded"
                                          : "instruction budget exceeded");
    }
    pol_arm_trip(L, vm);
    lua_pushstring(L, vm->sticky_msg);
    (void)lua_error(L);
}

void
pol_vm_charge(lua_State *L, int64_t n)
{
    struct pol_vm *vm = pol_vm_of(L);

    if (!vm->budget_on)
        return;
    vm->steps_left -= n;
    if (vm->steps_left <= 0)
        (void)pol_vm_fail(L, POL_FAIL_LIMIT, "instruction budget exceeded");
}

int
pol_vm_fail(lua_State *L, enum pol_status st, const char *fmt, ...)
{
    struct pol_vm *vm = pol_vm_of(L);
    char where[LUA_IDSIZE + 32], text[POL_MESSAGE_MAX];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    pol_where(L, 1, where, sizeof(where));
    pol_set_sticky(vm, st, where, text);
    pol_arm_trip(L, vm);
    lua_pushfstring(L, "%s%s", where, text);
    return lua_error(L);
}

void
pol_vm_begin(struct pol_vm *vm)
{
    int64_t now;

    vm->sticky = POL_OK;
    vm->sticky_msg[0] = '\0';
    vm->mem_refused = 0;
    vm->steps_left = vm->lim.instructions;
    vm->hook_count =
        vm->steps_left < POL_HOOK_GRAIN ? (int)vm->steps_left : POL_HOOK_GRAIN;
    now = pol_now_us();
    vm->deadline_us = vm->lim.wall_microseconds > INT64_MAX - now
                          ? INT64_MAX
                          : now + vm->lim.wall_microseconds;
    vm->budget_on = 1;
    lua_sethook(vm->L, pol_hook, LUA_MASKCOUNT, vm->hook_count);
}

void
pol_vm_end(struct pol_vm *vm)
{
    lua_sethook(vm->L, NULL, 0, 0);
    vm->budget_on = 0;
}

/* msg = the error object at top, prefixed with the file when it lacks it. */
static void
pol_error_text(lua_State *L, const char *file, char *msg, size_t msgsz)
{
    char buf[POL_MESSAGE_MAX];
    const char *s;
    size_t n, flen = strlen(file);

    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
        s = lua_tolstring(L, -1, &n);
        if (n > flen && memcmp(s, file, flen) == 0 && s[flen] == ':') {
            pol_copy_text(msg, msgsz, s, n);
            return;
        }
        (void)snprintf(buf, sizeof(buf), "%s: %.*s", file,
                       (int)(n < sizeof(buf) ? n : sizeof(buf)), s);
    } else {
        (void)snprintf(buf, sizeof(buf), "%s: (error object is a %s value)",
                       file, luaL_typename(L, -1));
    }
    pol_copy_text(msg, msgsz, buf, strlen(buf));
}

enum pol_status
pol_vm_pcall(struct pol_vm *vm, int nargs, int nres, char *msg, size_t msgsz)
{
    const char *file = vm->file != NULL ? vm->file : "policy";
    int st = lua_pcall(vm->L, nargs, nres, 0);
    char text[64];

    if (vm->sticky == POL_OK && (vm->mem_refused || st == LUA_ERRMEM)) {
        (void)snprintf(text, sizeof(text), "memory limit exceeded (%zu bytes)",
                       vm->lim.memory_bytes);
        pol_set_sticky(vm, POL_FAIL_LIMIT, "", text);
    }
    if (vm->sticky != POL_OK) {
        lua_pop(vm->L, st == LUA_OK ? nres : 1);
        pol_copy_text(msg, msgsz, vm->sticky_msg, strlen(vm->sticky_msg));
        return vm->sticky;
    }
    if (st == LUA_OK)
        return POL_OK;
    pol_error_text(vm->L, file, msg, msgsz);
    lua_pop(vm->L, 1);
    return POL_FAIL_ERROR;
}

enum pol_status
pol_vm_load(struct pol_vm *vm, const struct pol_file *f, char *msg,
            size_t msgsz)
{
    char chunk[LUA_IDSIZE];
    int st;

    (void)snprintf(chunk, sizeof(chunk), "=%s", f->name);
    st = luaL_loadbufferx(vm->L, f->src, f->len, chunk, "t");
    if (st != LUA_OK) {
        pol_error_text(vm->L, f->name, msg, msgsz);
        lua_pop(vm->L, 1);
        return st == LUA_ERRMEM ? POL_FAIL_LIMIT : POL_FAIL_ERROR;
    }
    lua_rawgetp(vm->L, LUA_REGISTRYINDEX, &pol_key_env);
    if (lua_setupvalue(vm->L, -2, 1) == NULL)
        lua_pop(vm->L, 1);
    return POL_OK;
}

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
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &pol_key_env);
    lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    return 0;
}

/* An error outside any protected call: Lua aborts after this returns.
   Every call into a policy is protected, so this is a bug: say so. */
static int
pol_panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);

    (void)fprintf(stderr, "intentgate: Lua panic (a bug): %s\n",
                  msg != NULL ? msg : "(no message)");
    (void)fflush(stderr);
    return 0;
}

enum ig_status
pol_vm_open(struct pol_vm *vm, const struct pol_limits *l,
            const json_t *settings, pol_count_fn count, void *count_ctx,
            struct ig_err *err)
{
    struct pol_setup setup = {settings};
    int st;

    memset(vm, 0, sizeof(*vm));
    if (l != NULL)
        vm->lim = *l;
    else
        pol_limits_default(&vm->lim);
    if (vm->lim.memory_bytes < POL_MEMORY_MIN || vm->lim.instructions < 1 ||
        vm->lim.wall_microseconds < 1)
        return ig_err_set(err, IG_ERR_INVALID,
                          "policy limits: memory must be at least %d bytes, "
                          "instructions and wall clock at least 1",
                          POL_MEMORY_MIN);
    vm->count = count;
    vm->count_ctx = count_ctx;
    vm->L = lua_newstate(pol_alloc, vm);
    if (vm->L == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot create a Lua state");
    lua_atpanic(vm->L, pol_panic);
    memcpy(lua_getextraspace(vm->L), &vm, sizeof(vm));
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

void
pol_vm_close(struct pol_vm *vm)
{
    if (vm->L != NULL)
        lua_close(vm->L);
    vm->L = NULL;
}
