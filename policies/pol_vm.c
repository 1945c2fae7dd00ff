/*
 * pol_vm.c - one capped, budgeted Lua 5.4 state (struct pol_vm): the layer
 * every policy helper stands on.
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
 *   - Loading: luaL_loadbufferx(..., "t") refuses bytecode; the chunk's
 *     _ENV upvalue is set to the environment the sandbox (pol_sandbox.c)
 *     installed with pol_vm_set_env(); the chunk name is "=FILE" so
 *     messages read "FILE:LINE: ...".
 *   - Coverage (the test runner only, pol_cover.h): a thread-local watch.
 *     While one is set, runs also get a line hook - the one hook function
 *     dispatches on ar->event, and line events never touch the budget -
 *     and a covered file is loaded from its instrumented source, wrapped
 *     so the chunk receives its probe as `...` and what it returns is
 *     shown to the watch. With no watch (the server) the only cost is one
 *     thread-local read per run.
 * The environment itself - which functions a policy sees - is built one
 * layer up, in pol_sandbox.c, from the helpers that use this file.
 */
#include "pol_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pol_cover.h"

static char pol_key_env; /* registry key of the sandbox environment */

static _Thread_local const struct pol_vm_watch *pol_watch;

void
pol_vm_watch(const struct pol_vm_watch *w)
{
    pol_watch = w;
}

void
pol_limits_default(struct pol_limits *l)
{
    l->memory_bytes = IG_POLICY_MEMORY_BYTES;
    l->instructions = IG_POLICY_INSTRUCTIONS;
    l->wall_microseconds = IG_POLICY_WALL_US;
}

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

    if (ar->event == LUA_HOOKLINE) {
        if (pol_watch != NULL)
            pol_watch->line(pol_watch->ctx, L, ar);
        return;
    }
    if (vm->sticky == POL_OK) {
        vm->steps_left -= vm->hook_count;
        if (vm->steps_left > 0 && pol_now_us() <= vm->deadline_us) {
            if (vm->steps_left < vm->hook_count) {
                vm->hook_count = (int)vm->steps_left;
                lua_sethook(L, pol_hook, lua_gethookmask(L), vm->hook_count);
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
    lua_sethook(vm->L, pol_hook,
                LUA_MASKCOUNT | (pol_watch != NULL ? LUA_MASKLINE : 0),
                vm->hook_count);
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
    int st = lua_pcall(vm->L, nargs, nres, 0);
    /* The file that failed: the call itself moves vm->file along. */
    const char *file = vm->file != NULL ? vm->file : "policy";
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

/* A covered file's probe: count it, give its instructions back. */
static int
pol_watch_probe(lua_State *L)
{
    struct pol_vm *vm = pol_vm_of(L);

    if (vm->budget_on)
        vm->steps_left += POL_COVER_PROBE_COST;
    if (pol_watch != NULL && lua_isinteger(L, 1))
        pol_watch->probe(pol_watch->ctx,
                         (int)lua_tointeger(L, lua_upvalueindex(1)),
                         lua_tointeger(L, 1));
    return 0;
}

/* A covered chunk: show it to the watch, run it (with its probe when
   instrumented), show the watch what it returned. */
static int
pol_watch_chunk(lua_State *L)
{
    int fi = (int)lua_tointeger(L, lua_upvalueindex(2));
    int probed = lua_toboolean(L, lua_upvalueindex(3));
    int i, n;

    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    if (pol_watch != NULL)
        pol_watch->reach(pol_watch->ctx, L, fi, 1);
    lua_pushvalue(L, 1);
    if (probed) {
        lua_pushinteger(L, fi);
        lua_pushcclosure(L, pol_watch_probe, 1);
    }
    lua_call(L, probed, LUA_MULTRET);
    n = lua_gettop(L) - 1;
    for (i = 2; pol_watch != NULL && i <= n + 1; i++)
        pol_watch->reach(pol_watch->ctx, L, fi, i);
    return n;
}

static int
pol_load_text(struct pol_vm *vm, const char *src, size_t len, const char *name)
{
    char chunk[LUA_IDSIZE];

    (void)snprintf(chunk, sizeof(chunk), "=%s", name);
    return luaL_loadbufferx(vm->L, src, len, chunk, "t");
}

enum pol_status
pol_vm_load(struct pol_vm *vm, const struct pol_file *f, char *msg,
            size_t msgsz)
{
    const struct pol_vm_watch *w = pol_watch;
    const char *isrc = NULL;
    size_t ilen = 0;
    int st, fi = w != NULL ? w->file(w->ctx, f->name) : -1;

    if (fi >= 0 && (isrc = w->source(w->ctx, fi, &ilen)) != NULL &&
        pol_load_text(vm, isrc, ilen, f->name) != LUA_OK) {
        w->fallback(w->ctx, fi, lua_tostring(vm->L, -1));
        lua_pop(vm->L, 1);
        isrc = NULL;
    }
    if (isrc == NULL) {
        st = pol_load_text(vm, f->src, f->len, f->name);
        if (st != LUA_OK) {
            pol_error_text(vm->L, f->name, msg, msgsz);
            lua_pop(vm->L, 1);
            return st == LUA_ERRMEM ? POL_FAIL_LIMIT : POL_FAIL_ERROR;
        }
    }
    lua_rawgetp(vm->L, LUA_REGISTRYINDEX, &pol_key_env);
    if (lua_setupvalue(vm->L, -2, 1) == NULL)
        lua_pop(vm->L, 1);
    if (fi >= 0) {
        lua_pushinteger(vm->L, fi);
        lua_pushboolean(vm->L, isrc != NULL);
        lua_pushcclosure(vm->L, pol_watch_chunk, 3);
    }
    return POL_OK;
}

void
pol_vm_set_env(lua_State *L)
{
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &pol_key_env);
    lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
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
pol_vm_create(struct pol_vm *vm, const struct pol_limits *l, pol_count_fn count,
              void *count_ctx, struct ig_err *err)
{
    memset(vm, 0, sizeof(*vm));
    if (l != NULL)
        vm->lim = *l;
    else
        pol_limits_default(&vm->lim);
    if (vm->lim.memory_bytes < IG_POLICY_MEMORY_MIN ||
        vm->lim.instructions < 1 || vm->lim.wall_microseconds < 1)
        return ig_err_set(err, IG_ERR_INVALID,
                          "policy limits: memory must be at least %d bytes, "
                          "instructions and wall clock at least 1",
                          IG_POLICY_MEMORY_MIN);
    vm->count = count;
    vm->count_ctx = count_ctx;
    vm->L = lua_newstate(pol_alloc, vm);
    if (vm->L == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot create a Lua state");
    lua_atpanic(vm->L, pol_panic);
    memcpy(lua_getextraspace(vm->L), &vm, sizeof(vm));
    return IG_OK;
}

void
pol_vm_close(struct pol_vm *vm)
{
    if (vm->L != NULL)
        lua_close(vm->L);
    vm->L = NULL;
}
