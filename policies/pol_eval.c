/*
 * pol_eval.c - struct pol_engine: one thread's long-lived Lua state holding
 * the compiled bundle, and the evaluation of an intent against it.
 *
 * How it works: pol_engine_new() opens a sandbox (pol_sandbox.c), runs each
 * policy file's chunk once under the budget, and keeps the functions they
 * return in a registry array, in file name order. Every evaluation then:
 *   1. starts a budgeted run (one instruction/wall/memory budget shared by
 *      all files of the evaluation);
 *   2. inside one protected call, converts the intent to a read-only table
 *      (the only thing built per evaluation), calls every policy function
 *      with it, and folds each returned verdict into a struct pol_acc;
 *   3. turns a failure of any kind into BLOCK POLICY_LIMIT (budget, memory,
 *      size caps) or BLOCK POLICY_ERROR (anything else, including a return
 *      value that is not a verdict), with a message naming the file.
 * After a failed evaluation the state is collected; if the heap stays well
 * above what the bundle needed after loading (a policy keeping garbage
 * alive in an upvalue, say), the state is thrown away and rebuilt, so one
 * bad evaluation never poisons the next.
 */
#include "pol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pol_int.h"

struct pol_engine {
    struct pol_vm vm;
    struct pol_bundle *b;
    struct pol_limits lim;
    pol_count_fn count;
    void *count_ctx;
    size_t baseline; /* heap in use right after loading */
    int ready;       /* vm holds the compiled bundle */
    char broken[POL_MESSAGE_MAX];
};

static char pol_key_fns; /* registry key of the policy function array */

struct pol_load_ctx {
    struct pol_engine *e;
    enum pol_status st;
    char msg[POL_MESSAGE_MAX];
};

struct pol_run_ctx {
    struct pol_engine *e;
    const json_t *intent;
    struct pol_acc acc;
    enum pol_status st;
    char msg[POL_MESSAGE_MAX];
    struct pol_trace *trace; /* NULL: not traced */
    size_t cur;              /* file running now; nfiles: none */
    int64_t t0;              /* traced: when file cur started */
};

/* Protected: compile and run each policy file, keep what it returns. */
static int
pol_load_all(lua_State *L)
{
    struct pol_load_ctx *c = lua_touserdata(L, 1);
    struct pol_engine *e = c->e;
    const struct pol_file *f;
    size_t i;

    lua_createtable(L, (int)e->b->nfiles, 0); /* 2 */
    for (i = 0; i < e->b->nfiles; i++) {
        f = &e->b->files[i];
        e->vm.file = f->name;
        c->st = pol_vm_load(&e->vm, f, c->msg, sizeof(c->msg));
        if (c->st != POL_OK)
            return 0;
        pol_vm_begin(&e->vm);
        c->st = pol_vm_pcall(&e->vm, 0, 1, c->msg, sizeof(c->msg));
        pol_vm_end(&e->vm);
        if (c->st != POL_OK)
            return 0;
        if (lua_type(L, -1) != LUA_TFUNCTION || lua_iscfunction(L, -1)) {
            (void)snprintf(c->msg, sizeof(c->msg),
                           "%s: a policy file must return a function(intent)"
                           " (it returned a %s)",
                           f->name, luaL_typename(L, -1));
            c->st = POL_FAIL_ERROR;
            return 0;
        }
        lua_rawseti(L, 2, (lua_Integer)i + 1);
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &pol_key_fns);
    return 0;
}

/* The line number in "file:LINE: ..." messages, else 0. */
static int
pol_msg_line(const char *msg)
{
    const char *p = strchr(msg, ':');
    int line = 0;

    if (p == NULL)
        return 0;
    for (p++; *p >= '0' && *p <= '9' && line < 10000000; p++)
        line = line * 10 + (*p - '0');
    return *p == ':' ? line : 0;
}

static enum ig_status
pol_engine_load(struct pol_engine *e, struct ig_err *err)
{
    struct pol_load_ctx c;
    enum ig_status st;
    int rc;

    st = pol_vm_open(&e->vm, &e->lim, e->b->settings, e->count, e->count_ctx,
                     err);
    if (st != IG_OK)
        return st;
    memset(&c, 0, sizeof(c));
    c.e = e;
    lua_pushcfunction(e->vm.L, pol_load_all);
    lua_pushlightuserdata(e->vm.L, &c);
    rc = lua_pcall(e->vm.L, 1, 0, 0);
    if (rc != LUA_OK) {
        c.st = POL_FAIL_ERROR;
        (void)snprintf(c.msg, sizeof(c.msg), "loading the bundle: %s",
                       rc == LUA_ERRMEM ? "memory limit exceeded"
                                        : lua_tostring(e->vm.L, -1));
    }
    if (c.st != POL_OK) {
        st = ig_err_set(err, IG_ERR_INVALID, "%s", c.msg);
        if (err != NULL)
            err->line = pol_msg_line(c.msg);
        pol_vm_close(&e->vm);
        return st;
    }
    lua_settop(e->vm.L, 0);
    lua_gc(e->vm.L, LUA_GCCOLLECT);
    e->baseline = e->vm.mem_used;
    e->ready = 1;
    return IG_OK;
}

enum ig_status
pol_engine_new(struct pol_bundle *b, const struct pol_limits *l,
               pol_count_fn count, void *count_ctx, struct pol_engine **out,
               struct ig_err *err)
{
    struct pol_engine *e;
    enum ig_status st;

    *out = NULL;
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    pol_bundle_ref(b);
    e->b = b;
    if (l != NULL)
        e->lim = *l;
    else
        pol_limits_default(&e->lim);
    e->count = count;
    e->count_ctx = count_ctx;
    st = pol_engine_load(e, err);
    if (st != IG_OK) {
        pol_engine_free(e);
        return st;
    }
    *out = e;
    return IG_OK;
}

void
pol_engine_free(struct pol_engine *e)
{
    if (e == NULL)
        return;
    if (e->ready)
        pol_vm_close(&e->vm);
    pol_bundle_unref(e->b);
    free(e);
}

struct pol_bundle *
pol_engine_bundle(const struct pol_engine *e)
{
    return e->b;
}

/* Make the engine ready again after its state was dropped. */
static int
pol_engine_rebuild(struct pol_engine *e)
{
    struct ig_err err;

    if (e->ready)
        return 1;
    ig_err_clear(&err);
    if (pol_engine_load(e, &err) == IG_OK)
        return 1;
    (void)snprintf(e->broken, sizeof(e->broken),
                   "policy engine unusable: %.200s", err.msg);
    return 0;
}

/* After a failed evaluation: collect, and rebuild if garbage survives. */
static void
pol_engine_recover(struct pol_engine *e)
{
    lua_settop(e->vm.L, 0);
    lua_gc(e->vm.L, LUA_GCCOLLECT);
    if (e->vm.mem_used <= e->baseline + e->lim.memory_bytes / 4)
        return;
    pol_vm_close(&e->vm);
    e->ready = 0;
    (void)pol_engine_rebuild(e);
}

/* CLOCK_MONOTONIC in nanoseconds (only read when tracing). */
static int64_t
pol_now_ns(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Protected: the intent as a read-only table, then every policy. c->cur
 * names the file running, so a failure (raised, or a sticky one a policy
 * caught with pcall) is traced to it.
 */
static int
pol_run(lua_State *L)
{
    struct pol_run_ctx *c = lua_touserdata(L, 1);
    struct pol_engine *e = c->e;
    size_t i;

    e->vm.file = "intent";
    pol_push_json(L, c->intent);                     /* 2 */
    lua_rawgetp(L, LUA_REGISTRYINDEX, &pol_key_fns); /* 3 */
    for (i = 0; i < e->b->nfiles; i++) {
        e->vm.file = e->b->files[i].name;
        c->cur = i;
        if (c->trace != NULL)
            c->t0 = pol_now_ns();
        lua_rawgeti(L, 3, (lua_Integer)i + 1);
        lua_pushvalue(L, 2);
        lua_call(L, 1, 1);
        if (c->trace != NULL) {
            if (e->vm.sticky != POL_OK)
                return 0; /* failed, then caught: the file fails */
            pol_trace_put(c->trace, L, -1, e->vm.file, pol_now_ns() - c->t0);
        }
        c->st = pol_acc_add(&c->acc, L, -1, e->vm.file, c->msg, sizeof(c->msg));
        if (c->st != POL_OK)
            return 0;
        lua_pop(L, 1);
    }
    c->cur = e->b->nfiles;
    return 0;
}

void
pol_engine_eval(struct pol_engine *e, const json_t *intent,
                struct pol_decision *out)
{
    pol_engine_eval_traced(e, intent, out, NULL);
}

void
pol_engine_eval_traced(struct pol_engine *e, const json_t *intent,
                       struct pol_decision *out, struct pol_trace *t)
{
    struct pol_run_ctx c;
    enum pol_status st;
    char msg[POL_MESSAGE_MAX];

    memset(out, 0, sizeof(*out));
    if (t != NULL)
        t->n = 0;
    if (intent == NULL || !json_is_object(intent)) {
        pol_decision_fail(out, "POLICY_ERROR", "intent is not a JSON object");
        return;
    }
    if (!pol_engine_rebuild(e)) {
        pol_decision_fail(out, "POLICY_ERROR", e->broken);
        return;
    }
    c.e = e;
    c.intent = intent;
    c.st = POL_OK;
    c.msg[0] = '\0';
    c.trace = t;
    c.cur = e->b->nfiles;
    c.t0 = 0;
    pol_acc_init(&c.acc);
    pol_vm_begin(&e->vm);
    lua_pushcfunction(e->vm.L, pol_run);
    lua_pushlightuserdata(e->vm.L, &c);
    st = pol_vm_pcall(&e->vm, 1, 0, msg, sizeof(msg));
    pol_vm_end(&e->vm);
    if (st == POL_OK && c.st != POL_OK) {
        st = c.st;
        memcpy(msg, c.msg, sizeof(msg));
    }
    if (st != POL_OK) {
        if (t != NULL && c.cur < e->b->nfiles)
            pol_trace_fail(t, e->b->files[c.cur].name, st, pol_now_ns() - c.t0);
        pol_decision_fail(
            out, st == POL_FAIL_LIMIT ? "POLICY_LIMIT" : "POLICY_ERROR", msg);
        pol_engine_recover(e);
        return;
    }
    lua_settop(e->vm.L, 0);
    pol_acc_finish(&c.acc, out);
}
