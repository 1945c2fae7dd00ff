/*
 * pol_test.c - pol_bundle_test(): run a bundle's own `*_test.lua` files.
 *
 * A test file runs in the same sandbox as policies (its own state, no
 * counter) and returns an array of cases:
 *   { name = "...", intent = {...}, expect = "ALLOW"|"ESCALATE"|"BLOCK",
 *     reasons = {"CODE", ...},   -- optional, compared as a set
 *     counts = {["key"] = n} }   -- optional, what count(key) returns
 * Each case's intent table is converted to JSON (a table with keys 1..n is
 * an array, one with string keys or none an object; `null` is JSON null),
 * missing binding fields get fixed defaults (principal "test-agent", tenant
 * "test", version, intent_id, times, resource "", params {}, context {};
 * action is required), and it is evaluated by a real engine whose counter
 * answers from `counts` (1 for keys not listed). One line per case goes to
 * the output ("ok   FILE: NAME" or "FAIL FILE: NAME: expected ..., got
 * ..."), then "N passed, M failed". A test file that fails to run, or a
 * malformed case, counts as a failure.
 *
 * With coverage (pol_bundle_test_cover), a second engine is built while
 * the coverage collector watches this thread (pol_cover.h): its policies
 * carry branch probes and its runs a line hook. Each case is decided by
 * the plain engine, exactly as without coverage, and then run again in
 * the watched one, whose decision is only compared: a difference is a bug
 * the report names, never a changed result.
 */
#include "pol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_cover.h"
#include "pol_int.h"

struct pol_case {
    char name[IG_POLICY_CASE_NAME_MAX];
    json_t *holder; /* [intent]: owns the converted intent */
    json_t *counts; /* key -> integer, or NULL */
    enum pol_verdict expect;
    int has_reasons;
    size_t nreasons;
    char reasons[POL_MAX_REASONS][POL_REASON_MAX];
    char error[POL_MESSAGE_MAX]; /* the case is malformed */
};

struct pol_suite {
    struct pol_vm *vm;
    const struct pol_file *file;
    struct pol_case *cases;
    size_t ncases;
    char msg[POL_MESSAGE_MAX]; /* the file is malformed */
};

struct pol_counter {
    const struct pol_case *cur;
};

/* One test run: the engines, the counter, the coverage and the tally. */
struct pol_runner {
    struct pol_engine *e;  /* decides every case */
    struct pol_engine *ce; /* coverage: watched, only compared */
    struct pol_counter k;
    struct pol_coverage *cov;
    struct pol_vm_watch w;
    FILE *out;
    int passed, failed;
};

static const char *const pol_case_fields[] = {"name",    "intent", "expect",
                                              "reasons", "counts", NULL};

static int
pol_attach(json_t *parent, const char *key, size_t klen, json_t *v)
{
    if (v == NULL)
        return -1;
    if (key == NULL)
        return json_array_append_new(parent, v);
    return json_object_setn_new(parent, key, klen, v);
}

/* 'a' for keys 1..n, 'o' for string keys (or none), 0 otherwise. */
static int
pol_table_kind(lua_State *L, int t)
{
    lua_Integer max = 0, n = 0;
    int strs = 0, ints = 0;

    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        lua_pop(L, 1);
        n++;
        if (lua_type(L, -1) == LUA_TSTRING) {
            strs = 1;
        } else if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1) {
            ints = 1;
            if (lua_tointeger(L, -1) > max)
                max = lua_tointeger(L, -1);
        } else {
            lua_pop(L, 1);
            return 0;
        }
    }
    if (strs && ints)
        return 0;
    return ints ? (max == n ? 'a' : 0) : 'o';
}

static int pol_json_put(lua_State *L, int idx, json_t *parent, const char *key,
                        size_t klen, int depth, char *why, size_t whysz);

/* Fill the empty container dst (already in the tree) from table t. */
static int
pol_json_fill(lua_State *L, int t, json_t *dst, int kind, int depth, char *why,
              size_t whysz)
{
    lua_Integer i, n;
    const char *k;
    size_t klen;

    if (kind == 'a') {
        n = (lua_Integer)lua_rawlen(L, t);
        for (i = 1; i <= n; i++) {
            lua_rawgeti(L, t, i);
            if (pol_json_put(L, lua_gettop(L), dst, NULL, 0, depth, why,
                             whysz) != 0)
                return -1;
            lua_pop(L, 1);
        }
        return 0;
    }
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        k = lua_tolstring(L, -2, &klen);
        if (pol_json_put(L, lua_gettop(L), dst, k, klen, depth, why, whysz) !=
            0)
            return -1;
        lua_pop(L, 1);
    }
    return 0;
}

/* A new JSON scalar for the value at idx, or NULL. */
static json_t *
pol_json_scalar(lua_State *L, int idx)
{
    json_t *v = NULL;
    const char *s;
    size_t n;

    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &n);
        v = json_stringn(s, n); /* NULL for invalid UTF-8 */
        break;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx))
            v = json_integer((json_int_t)lua_tointeger(L, idx));
        else if (isfinite(lua_tonumber(L, idx)))
            v = json_real(lua_tonumber(L, idx));
        break;
    case LUA_TBOOLEAN:
        v = json_boolean(lua_toboolean(L, idx));
        break;
    case LUA_TUSERDATA:
        pol_push_null(L);
        if (lua_rawequal(L, idx, -1))
            v = json_null();
        lua_pop(L, 1);
        break;
    default:
        break;
    }
    return v;
}

/* Convert the value at idx and add it to parent; why says what failed. */
static int
pol_json_put(lua_State *L, int idx, json_t *parent, const char *key,
             size_t klen, int depth, char *why, size_t whysz)
{
    json_t *v;
    int kind;

    luaL_checkstack(L, 8, "test case nested too deeply");
    if (lua_type(L, idx) != LUA_TTABLE) {
        v = pol_json_scalar(L, idx);
        if (v == NULL) {
            (void)snprintf(why, whysz,
                           "a %s value that JSON cannot hold (or bad UTF-8)",
                           luaL_typename(L, idx));
            return -1;
        }
        if (pol_attach(parent, key, klen, v) == 0)
            return 0;
        goto bad;
    }
    if (depth >= IG_JSON_MAX_DEPTH) {
        (void)snprintf(why, whysz, "nested deeper than %d levels",
                       IG_JSON_MAX_DEPTH);
        return -1;
    }
    if (pol_proxy_data(L, idx))
        lua_replace(L, idx);
    kind = pol_table_kind(L, idx);
    if (kind == 0) {
        (void)snprintf(why, whysz,
                       "a table mixes array and object keys, or "
                       "has holes");
        return -1;
    }
    v = kind == 'a' ? json_array() : json_object();
    if (pol_attach(parent, key, klen, v) == 0)
        return pol_json_fill(L, idx, v, kind, depth + 1, why, whysz);
bad:
    (void)snprintf(why, whysz, "a key that is not valid UTF-8");
    return -1;
}

static int
pol_intent_defaults(json_t *intent)
{
    static const char *const d[][2] = {
        {"version", "intentgate.intent/1"},
        {"intent_id", "00000000-0000-4000-8000-000000000000"},
        {"principal", "test-agent"},
        {"tenant", "test"},
        {"resource", ""},
        {"created_at", "2026-01-01T00:00:00Z"},
        {"expires_at", "2026-01-01T00:01:00Z"}};
    size_t i;

    for (i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        if (json_object_get(intent, d[i][0]) == NULL &&
            json_object_set_new(intent, d[i][0], json_string(d[i][1])) != 0)
            return -1;
    if (json_object_get(intent, "params") == NULL &&
        json_object_set_new(intent, "params", json_object()) != 0)
        return -1;
    if (json_object_get(intent, "context") == NULL &&
        json_object_set_new(intent, "context", json_object()) != 0)
        return -1;
    return 0;
}

static int
pol_case_intent(lua_State *L, int idx, struct pol_case *c)
{
    char why[128] = "";
    json_t *intent;

    lua_getfield(L, idx, "intent");
    if (!lua_istable(L, -1)) {
        (void)snprintf(c->error, sizeof(c->error), "intent must be a table");
        return 0;
    }
    c->holder = json_array();
    if (c->holder == NULL || pol_json_put(L, lua_gettop(L), c->holder, NULL, 0,
                                          0, why, sizeof(why)) != 0) {
        (void)snprintf(c->error, sizeof(c->error), "intent: %s", why);
        return 0;
    }
    intent = json_array_get(c->holder, 0);
    if (!json_is_object(intent) ||
        !json_is_string(json_object_get(intent, "action"))) {
        (void)snprintf(c->error, sizeof(c->error),
                       "intent must be a table with an action string");
        return 0;
    }
    if (pol_intent_defaults(intent) != 0) {
        (void)snprintf(c->error, sizeof(c->error), "out of memory");
        return 0;
    }
    return 1;
}

static int
pol_case_expect(lua_State *L, int idx, struct pol_case *c)
{
    const char *s;

    lua_getfield(L, idx, "expect");
    s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (strcmp(s, "ALLOW") == 0)
        c->expect = POL_ALLOW;
    else if (strcmp(s, "ESCALATE") == 0)
        c->expect = POL_ESCALATE;
    else if (strcmp(s, "BLOCK") == 0)
        c->expect = POL_BLOCK;
    else
        (void)snprintf(c->error, sizeof(c->error),
                       "expect must be \"ALLOW\", \"ESCALATE\" or \"BLOCK\"");
    lua_pop(L, 1);
    return c->error[0] == '\0';
}

static int
pol_case_reasons(lua_State *L, int idx, struct pol_case *c)
{
    lua_Integer i, n;
    size_t len, j;
    const char *s;

    if (lua_getfield(L, idx, "reasons") == LUA_TNIL)
        return 1;
    c->has_reasons = 1;
    n = lua_istable(L, -1) ? (lua_Integer)lua_rawlen(L, -1) : -1;
    for (i = 1; i <= n && n <= POL_MAX_REASONS; i++) {
        lua_rawgeti(L, -1, i);
        len = 0;
        s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : "";
        if (!pol_reason_valid(s, len))
            break;
        for (j = 0; j < c->nreasons && strcmp(c->reasons[j], s) != 0; j++)
            ;
        if (j == c->nreasons)
            memcpy(c->reasons[c->nreasons++], s, len + 1);
        lua_pop(L, 1);
    }
    if (n < 0 || n > POL_MAX_REASONS || i <= n) {
        (void)snprintf(c->error, sizeof(c->error),
                       "reasons must be an array of at most %d reason codes",
                       POL_MAX_REASONS);
        return 0;
    }
    return 1;
}

static int
pol_case_counts(lua_State *L, int idx, struct pol_case *c)
{
    const char *k;
    size_t klen;

    if (lua_getfield(L, idx, "counts") == LUA_TNIL)
        return 1;
    c->counts = json_object();
    if (!lua_istable(L, -1) || c->counts == NULL)
        goto bad;
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isinteger(L, -1) ||
            lua_tointeger(L, -1) < 0)
            goto bad;
        k = lua_tolstring(L, -2, &klen);
        if (json_object_setn_new(c->counts, k, klen,
                                 json_integer(lua_tointeger(L, -1))) != 0)
            goto bad;
        lua_pop(L, 1);
    }
    return 1;
bad:
    (void)snprintf(c->error, sizeof(c->error),
                   "counts must map key strings to integers >= 0");
    return 0;
}

static int
pol_case_fields_ok(lua_State *L, int idx, struct pol_case *c)
{
    size_t i;

    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        for (i = 0;
             lua_type(L, -1) == LUA_TSTRING && pol_case_fields[i] != NULL &&
             strcmp(lua_tostring(L, -1), pol_case_fields[i]) != 0;
             i++)
            ;
        if (lua_type(L, -1) != LUA_TSTRING || pol_case_fields[i] == NULL) {
            (void)snprintf(c->error, sizeof(c->error),
                           "unknown field (allowed: name, intent, expect, "
                           "reasons, counts)");
            return 0;
        }
    }
    return 1;
}

/* Read the case table at idx (absolute) into c; c->error when malformed. */
static void
pol_case_read(lua_State *L, int idx, struct pol_case *c, size_t i)
{
    const char *s;
    size_t n;

    (void)snprintf(c->name, sizeof(c->name), "case %zu", i + 1);
    if (!lua_istable(L, idx)) {
        (void)snprintf(c->error, sizeof(c->error), "a case must be a table");
        return;
    }
    if (lua_getfield(L, idx, "name") == LUA_TSTRING) {
        s = lua_tolstring(L, -1, &n);
        pol_copy_text(c->name, sizeof(c->name), s, n);
    }
    lua_pop(L, 1);
    if (pol_case_fields_ok(L, idx, c) && pol_case_expect(L, idx, c) &&
        pol_case_reasons(L, idx, c) && pol_case_counts(L, idx, c))
        (void)pol_case_intent(L, idx, c);
}

/* Protected: run the test file and read its cases into the suite. */
static int
pol_collect(lua_State *L)
{
    struct pol_suite *s = lua_touserdata(L, 1);
    size_t i, n;

    if (pol_vm_load(s->vm, s->file, s->msg, sizeof(s->msg)) != POL_OK)
        return 0;
    lua_call(L, 0, 1); /* 2: the cases */
    n = lua_type(L, 2) == LUA_TTABLE ? lua_rawlen(L, 2) : 0;
    if (n == 0 || n > IG_POLICY_TEST_CASES_MAX) {
        (void)snprintf(s->msg, sizeof(s->msg),
                       "%s: a test file must return an array of 1 to %d "
                       "cases",
                       s->file->name, IG_POLICY_TEST_CASES_MAX);
        return 0;
    }
    s->cases = calloc(n, sizeof(*s->cases));
    if (s->cases == NULL) {
        (void)snprintf(s->msg, sizeof(s->msg), "out of memory");
        return 0;
    }
    s->ncases = n;
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        pol_case_read(L, 3, &s->cases[i], i);
        lua_settop(L, 2);
    }
    return 0;
}

static int64_t
pol_test_count(void *ctx, const char *key, int64_t window)
{
    const struct pol_counter *k = ctx;
    json_t *v = NULL;

    (void)window;
    if (k->cur != NULL && k->cur->counts != NULL)
        v = json_object_get(k->cur->counts, key);
    return v != NULL ? (int64_t)json_integer_value(v) : 1;
}

static void
pol_join(char *dst, size_t dstsz, const char *r, size_t n)
{
    size_t i, o = 0;

    dst[0] = '\0';
    for (i = 0; i < n && o < dstsz; i++)
        o += (size_t)snprintf(dst + o, dstsz - o, "%s%s", i ? "," : "",
                              r + i * POL_REASON_MAX);
}

static int
pol_same_reasons(const struct pol_case *c, const struct pol_decision *d)
{
    size_t i, j;

    if (c->nreasons != d->nreasons)
        return 0;
    for (i = 0; i < c->nreasons; i++) {
        for (j = 0; j < d->nreasons; j++)
            if (strcmp(c->reasons[i], d->reasons[j]) == 0)
                break;
        if (j == d->nreasons)
            return 0;
    }
    return 1;
}

static int
pol_same_decision(const struct pol_decision *a, const struct pol_decision *b)
{
    size_t i;

    if (a->verdict != b->verdict || a->nreasons != b->nreasons ||
        strcmp(a->message, b->message) != 0)
        return 0;
    for (i = 0; i < a->nreasons; i++)
        if (strcmp(a->reasons[i], b->reasons[i]) != 0)
            return 0;
    return 1;
}

/* Coverage: run the case again in the watched engine and compare. */
static void
pol_case_cover(struct pol_runner *r, const char *file, const struct pol_case *c,
               const struct pol_decision *d)
{
    struct pol_decision cd;

    if (r->ce == NULL)
        return;
    r->k.cur = c;
    pol_vm_watch(&r->w);
    pol_engine_eval(r->ce, json_array_get(c->holder, 0), &cd);
    pol_vm_watch(NULL);
    r->k.cur = NULL;
    if (!pol_same_decision(d, &cd))
        pol_coverage_mismatch(r->cov, file, c->name);
}

/* Evaluate one case and print its line; 1 when it failed. */
static int
pol_case_run(struct pol_runner *r, const char *file, const struct pol_case *c)
{
    char want[POL_MAX_REASONS * POL_REASON_MAX], got[sizeof(want)];
    struct pol_decision d;
    FILE *out = r->out;

    if (c->error[0] != '\0') {
        (void)fprintf(out, "FAIL %s: %s: bad test case: %s\n", file, c->name,
                      c->error);
        return 1;
    }
    r->k.cur = c;
    pol_engine_eval(r->e, json_array_get(c->holder, 0), &d);
    r->k.cur = NULL;
    pol_case_cover(r, file, c, &d);
    if (d.verdict == c->expect &&
        (!c->has_reasons || pol_same_reasons(c, &d))) {
        (void)fprintf(out, "ok   %s: %s\n", file, c->name);
        return 0;
    }
    pol_join(want, sizeof(want), c->reasons[0], c->nreasons);
    pol_join(got, sizeof(got), d.reasons[0], d.nreasons);
    (void)fprintf(out, "FAIL %s: %s: expected %s%s%s%s, got %s [%s]%s%s%s\n",
                  file, c->name, pol_verdict_name(c->expect),
                  c->has_reasons ? " [" : "", want, c->has_reasons ? "]" : "",
                  pol_verdict_name(d.verdict), got,
                  d.message[0] != '\0' ? " (" : "", d.message,
                  d.message[0] != '\0' ? ")" : "");
    return 1;
}

static void
pol_test_file(struct pol_vm *vm, struct pol_runner *r, const struct pol_file *f)
{
    struct pol_suite s;
    enum pol_status st;
    char msg[POL_MESSAGE_MAX];
    size_t i;

    memset(&s, 0, sizeof(s));
    s.vm = vm;
    s.file = f;
    vm->file = f->name;
    lua_settop(vm->L, 0);
    lua_pushcfunction(vm->L, pol_collect);
    lua_pushlightuserdata(vm->L, &s);
    pol_vm_begin(vm);
    st = pol_vm_pcall(vm, 1, 0, msg, sizeof(msg));
    pol_vm_end(vm);
    if (st == POL_OK && s.msg[0] != '\0') {
        st = POL_FAIL_ERROR;
        memcpy(msg, s.msg, sizeof(msg));
    }
    if (st != POL_OK) {
        (void)fprintf(r->out, "FAIL %s: %s\n", f->name, msg);
        r->failed++;
    }
    for (i = 0; st == POL_OK && i < s.ncases; i++) {
        if (pol_case_run(r, f->name, &s.cases[i]))
            r->failed++;
        else
            r->passed++;
    }
    for (i = 0; i < s.ncases; i++) {
        json_decref(s.cases[i].holder);
        json_decref(s.cases[i].counts);
    }
    free(s.cases);
    lua_settop(vm->L, 0);
    lua_gc(vm->L, LUA_GCCOLLECT);
}

/* Coverage: the collector and the watched engine (r->ce stays NULL and
   the report says why when that engine cannot be built). */
static int
pol_cover_start(struct pol_runner *r, struct pol_bundle *b,
                const struct pol_limits *lim, struct ig_err *err)
{
    struct ig_err cerr;
    enum ig_status st;

    if (pol_coverage_new(b->files, b->nfiles, &r->cov) != IG_OK) {
        (void)ig_err_set(err, IG_ERR_NOMEM, "coverage: out of memory");
        return -1;
    }
    pol_coverage_watch(r->cov, &r->w);
    ig_err_clear(&cerr);
    pol_vm_watch(&r->w);
    st = pol_engine_new(b, lim, pol_test_count, &r->k, &r->ce, &cerr);
    pol_vm_watch(NULL);
    if (st != IG_OK)
        pol_coverage_fail(r->cov, cerr.msg);
    return 0;
}

int
pol_bundle_test_cover(struct pol_bundle *b, FILE *out,
                      struct pol_coverage **cov, struct ig_err *err)
{
    struct pol_runner r;
    struct pol_vm vm;
    struct pol_limits lim;
    size_t i;

    if (cov != NULL)
        *cov = NULL;
    if (b->ntests == 0) {
        (void)ig_err_set(err, IG_ERR_NOTFOUND,
                         "%s: no *_test.lua files (a bundle must be tested)",
                         b->dir);
        return -1;
    }
    memset(&r, 0, sizeof(r));
    r.out = out;
    /* The server's budgets, but a wall clock 20 times longer: it is the
       backstop, the instruction budget the rule, and a loaded machine (a
       CI runner, the PDP starting beside other work) must not turn a
       descheduled case into a failed bundle that refuses to start. */
    pol_limits_default(&lim);
    lim.wall_microseconds *= 20;
    if (pol_engine_new(b, &lim, pol_test_count, &r.k, &r.e, err) != IG_OK)
        return -1;
    if (cov != NULL && pol_cover_start(&r, b, &lim, err) != 0) {
        pol_engine_free(r.e);
        return -1;
    }
    /* The files that list the cases run under the same budgets: with the
       server's 50 ms a loaded machine could fail a long case table. */
    if (pol_vm_open(&vm, &lim, b->settings, NULL, NULL, err) != IG_OK) {
        pol_engine_free(r.ce);
        pol_engine_free(r.e);
        pol_coverage_free(r.cov);
        return -1;
    }
    for (i = 0; i < b->ntests; i++)
        pol_test_file(&vm, &r, &b->tests[i]);
    (void)fprintf(out, "%d passed, %d failed\n", r.passed, r.failed);
    pol_vm_close(&vm);
    pol_engine_free(r.ce);
    pol_engine_free(r.e);
    if (cov != NULL)
        *cov = r.cov;
    return r.failed;
}

int
pol_bundle_test(struct pol_bundle *b, FILE *out, struct ig_err *err)
{
    return pol_bundle_test_cover(b, out, NULL, err);
}
