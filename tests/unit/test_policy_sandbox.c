/*
 * test_policy_sandbox.c - the Lua sandbox holds: every escape attempt is
 * refused, every resource bomb ends as POLICY_LIMIT, pcall cannot swallow a
 * limit, and the engine answers correctly right after each failure.
 * Hostile policies are written to throwaway bundle directories.
 */
#include "policy_util.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* A policy that runs body for action "bad" and allows action "ok". */
static const char *
pt_hostile(const char *body)
{
    static char src[4096];

    (void)snprintf(src, sizeof(src),
                   "return function(intent)\n"
                   "  if intent.action == 'ok' then return ALLOW end\n"
                   "  do %s end\n"
                   "  return ALLOW\n"
                   "end\n",
                   body);
    return src;
}

struct pt_case {
    const char *body;
    enum pol_verdict verdict;
    const char *reason;
    const char *msg; /* substring of the message */
};

/*
 * Run each case's body in its own bundle; after the failure, the same
 * engine must still allow action "ok".
 */
static void
pt_run_cases(const struct pt_case *cases, size_t n, const struct pol_limits *l)
{
    struct pol_decision d;
    size_t i;

    for (i = 0; i < n; i++) {
        const char *files[] = {"p.lua", pt_hostile(cases[i].body), NULL};
        char *dir = pt_bundle_dir(files);
        struct pol_bundle *b = pt_load(dir, NULL);
        struct pol_engine *e = pt_engine(b, l, NULL, NULL);

        print_message("case: %s\n", cases[i].body);
        pt_eval(e, pt_intent("bad", "{\"refs\":[\"a\",\"b\"]}"), &d);
        pt_expect(&d, cases[i].verdict, cases[i].reason, cases[i].msg);
        pt_eval(e, pt_intent("ok", NULL), &d);
        pt_expect(&d, POL_ALLOW, NULL, NULL);
        pol_engine_free(e);
        pol_bundle_unref(b);
        pt_rmdir(dir);
    }
}

#define NCASES(a) (sizeof(a) / sizeof(a[0]))

static void
test_escapes_refused(void **state)
{
    static const struct pt_case cases[] = {
        {"io.open('/etc/passwd')", POL_BLOCK, "POLICY_ERROR",
         "p.lua:3: undefined global 'io'"},
        {"os.execute('id')", POL_BLOCK, "POLICY_ERROR", "field 'execute'"},
        {"os.exit(1)", POL_BLOCK, "POLICY_ERROR", "field 'exit'"},
        {"os.getenv('HOME')", POL_BLOCK, "POLICY_ERROR", "getenv"},
        {"load('return 1')", POL_BLOCK, "POLICY_ERROR", "'load'"},
        {"loadstring('x')", POL_BLOCK, "POLICY_ERROR", "'loadstring'"},
        {"dofile('/etc/passwd')", POL_BLOCK, "POLICY_ERROR", "'dofile'"},
        {"loadfile('/etc/passwd')", POL_BLOCK, "POLICY_ERROR", "'loadfile'"},
        {"require('os')", POL_BLOCK, "POLICY_ERROR", "'require'"},
        {"local x = package", POL_BLOCK, "POLICY_ERROR", "'package'"},
        {"debug.sethook()", POL_BLOCK, "POLICY_ERROR", "'debug'"},
        {"string.dump(function() end)", POL_BLOCK, "POLICY_ERROR", "dump"},
        {"setmetatable({}, {__gc = function() while true do end end})",
         POL_BLOCK, "POLICY_ERROR", "'setmetatable'"},
        {"getmetatable('').__index = {}", POL_BLOCK, "POLICY_ERROR",
         "'getmetatable'"},
        {"collectgarbage('stop')", POL_BLOCK, "POLICY_ERROR",
         "'collectgarbage'"},
        {"print('x')", POL_BLOCK, "POLICY_ERROR", "'print'"},
        {"local c = coroutine.create(print)", POL_BLOCK, "POLICY_ERROR",
         "'coroutine'"},
        {"local g = _G.io", POL_BLOCK, "POLICY_ERROR", "'_G'"},
        {"math.randomseed(1)", POL_BLOCK, "POLICY_ERROR", "randomseed"},
        {"string.pack('i4', 1)", POL_BLOCK, "POLICY_ERROR", "pack"},
        {"table.move({1}, 1, 1e12, 2)", POL_BLOCK, "POLICY_ERROR", "move"},
        /* the string metatable leads to the sandbox string table only */
        {"local f = ('x').dump; f(1)", POL_BLOCK, "POLICY_ERROR",
         "call a nil value"},
        {"('x'):gsub('x', 'y')", POL_BLOCK, "POLICY_ERROR", "gsub"},
        {"('x'):match('.')", POL_BLOCK, "POLICY_ERROR", "match"},
        {"for w in ('x'):gmatch('.') do end", POL_BLOCK, "POLICY_ERROR",
         "gmatch"},
        /* globals, library tables and the intent are read-only */
        {"ALLOW = BLOCK 'X'", POL_BLOCK, "POLICY_ERROR",
         "cannot set global 'ALLOW'"},
        {"string.rep = nil", POL_BLOCK, "POLICY_ERROR", "read-only"},
        {"rawset(string, 'find', tostring)", POL_BLOCK, "POLICY_ERROR",
         "read-only"},
        {"rawset(_ENV, 'ALLOW', 1)", POL_BLOCK, "POLICY_ERROR", "read-only"},
        {"intent.action = 'ok'", POL_BLOCK, "POLICY_ERROR",
         "read-only table (key 'action')"},
        {"intent.params.refs[1] = 'x'", POL_BLOCK, "POLICY_ERROR", "read-only"},
        {"rawset(intent.params, 'x', 1)", POL_BLOCK, "POLICY_ERROR",
         "read-only"},
        {"table.insert(intent.params.refs, 'x')", POL_BLOCK, "POLICY_ERROR",
         "read-only"},
        {"table.sort(intent.params.refs, function(a, b) return a > b end)",
         POL_BLOCK, "POLICY_ERROR", "read-only"},
        {"config.x = 1", POL_BLOCK, "POLICY_ERROR", "read-only"},
        {"local t = {}; t[intent] = 1; intent.params.x = t", POL_BLOCK,
         "POLICY_ERROR", "read-only"},
    };
    (void)state;
    pt_run_cases(cases, NCASES(cases), NULL);
}

static void
test_bombs_hit_limits(void **state)
{
    static const struct pt_case cases[] = {
        {"while true do end", POL_BLOCK, "POLICY_LIMIT",
         "p.lua:3: instruction budget exceeded"},
        {"local function f() return f() end return f()", POL_BLOCK,
         "POLICY_LIMIT", "instruction budget exceeded"},
        {"while true do pcall(function() while true do end end) end", POL_BLOCK,
         "POLICY_LIMIT", "instruction budget exceeded"},
        {"xpcall(function() while true do end end, "
         "function() while true do end end)",
         POL_BLOCK, "POLICY_LIMIT", "instruction budget"},
        {"pcall(function() while true do end end) return ALLOW", POL_BLOCK,
         "POLICY_LIMIT", "instruction budget"},
        {"local s = string.rep('x', 1e9)", POL_BLOCK, "POLICY_LIMIT",
         "string.rep: result longer than 65536 bytes"},
        {"local s = ('x'):rep(100000)", POL_BLOCK, "POLICY_LIMIT",
         "string.rep"},
        {"local s = ('x'):rep(1000, ('y'):rep(1000))", POL_BLOCK,
         "POLICY_LIMIT", "string.rep"},
        {"pcall(string.rep, 'x', 1e9) return ALLOW", POL_BLOCK, "POLICY_LIMIT",
         "string.rep"},
        {"local s = 'x' while true do s = s .. s end", POL_BLOCK,
         "POLICY_LIMIT", "memory limit exceeded"},
        {"pcall(function() local s = 'x' while true do s = s .. s end end) "
         "return ALLOW",
         POL_BLOCK, "POLICY_LIMIT", "memory limit exceeded"},
        {"local t = {} for i = 1, 100 do t[i] = ('x'):rep(60000) .. i end "
         "local s = table.concat(t)",
         POL_BLOCK, "POLICY_LIMIT", "table.concat"},
        {"local s = ('x'):rep(65536) .. 'y' local i = s:find('y')", POL_BLOCK,
         "POLICY_LIMIT", "string.find"},
    };
    struct pol_limits l;

    (void)state;
    /* The instruction and memory budgets are under test, not the wall
       clock (test_wall_clock): a loaded machine must not answer first. */
    pol_limits_default(&l);
    l.wall_microseconds = INT64_MAX;
    pt_run_cases(cases, NCASES(cases), &l);
}

/*
 * C functions that loop charge their work to the budget: with 100000
 * instructions, a 60000-element table (built by one C call) can be
 * shifted, sorted or unpacked once, not ten times.
 */
static void
test_charged_work(void **state)
{
    static const struct pt_case cases[] = {
        {"local t = {('x'):rep(60000):byte(1, -1)} "
         "for i = 1, 10 do table.insert(t, 1, 0) end",
         POL_BLOCK, "POLICY_LIMIT", "instruction budget exceeded"},
        {"local t = {('x'):rep(60000):byte(1, -1)} "
         "for i = 1, 10 do table.remove(t, 1) end",
         POL_BLOCK, "POLICY_LIMIT", "instruction budget exceeded"},
        {"local t = {('x'):rep(60000):byte(1, -1)} table.sort(t)", POL_BLOCK,
         "POLICY_LIMIT", "instruction budget exceeded"},
        {"local t = {('x'):rep(60000):byte(1, -1)} "
         "for i = 1, 10 do local n = select('#', table.unpack(t)) end",
         POL_BLOCK, "POLICY_LIMIT", "instruction budget exceeded"},
        {"local n = select('#', table.unpack({}, 1, 1e8))", POL_BLOCK,
         "POLICY_LIMIT", "instruction budget"},
        {"local t = {('1'):rep(30000):byte(1, -1)} "
         "for i = 1, 10 do local s = table.concat(t) end",
         POL_BLOCK, "POLICY_LIMIT", "instruction budget exceeded"},
        {"local t = {('x'):rep(60000):byte(1, -1)} table.insert(t, 1, 0)",
         POL_ALLOW, NULL, NULL},
    };
    struct pol_limits l;

    (void)state;
    pol_limits_default(&l);
    l.instructions = 100000;
    l.wall_microseconds = INT64_MAX;
    pt_run_cases(cases, NCASES(cases), &l);
}

/* Memory bombs with a budget large enough that only the heap cap stops
   them. */
static void
test_memory_bombs(void **state)
{
    static const struct pt_case cases[] = {
        {"local t = {} for i = 1, 1e9 do t[i] = i end", POL_BLOCK,
         "POLICY_LIMIT", "memory limit exceeded"},
        {"local t = {} for i = 1, 1e9 do t[#t + 1] = {i} end", POL_BLOCK,
         "POLICY_LIMIT", "memory limit exceeded"},
        {"local t, s = {}, ('x'):rep(1000) "
         "for i = 1, 1e9 do t[i] = s .. i end",
         POL_BLOCK, "POLICY_LIMIT", "memory limit exceeded"},
        {"local t = {} for i = 1, 1e9 do t['k' .. i] = true end", POL_BLOCK,
         "POLICY_LIMIT", "memory limit exceeded"},
    };
    struct pol_limits l;

    (void)state;
    pol_limits_default(&l);
    l.memory_bytes = 2 * 1024 * 1024;
    l.instructions = 2000000000;
    l.wall_microseconds = 5 * 1000 * 1000;
    pt_run_cases(cases, NCASES(cases), &l);
}

static void
test_wall_clock(void **state)
{
    static const struct pt_case cases[] = {
        {"while true do end", POL_BLOCK, "POLICY_LIMIT",
         "wall-clock budget exceeded"},
    };
    static const struct pt_case instr[] = {
        {"while true do end", POL_BLOCK, "POLICY_LIMIT",
         "instruction budget exceeded"},
    };
    struct pol_limits l;
    struct timespec t0, t1;
    double ms;

    (void)state;
    pol_limits_default(&l);
    l.instructions = INT64_MAX;
    l.wall_microseconds = 20000;
    (void)clock_gettime(CLOCK_MONOTONIC, &t0);
    pt_run_cases(cases, NCASES(cases), &l);
    l.wall_microseconds = INT64_MAX; /* no overflow: only instructions */
    l.instructions = 100000;
    pt_run_cases(instr, NCASES(instr), &l);
    (void)clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
         (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms < 2000);
}

/* Lua patterns are gone: find is plain, and a pattern that would
   backtrack catastrophically in Lua's matcher takes no time. */
static void
test_no_patterns(void **state)
{
    struct pol_decision d;
    struct timespec t0, t1;

    (void)state;
    (void)clock_gettime(CLOCK_MONOTONIC, &t0);
    pt_eval1("return function(i)\n"
             "  assert(string.match == nil and string.gmatch == nil)\n"
             "  assert(string.gsub == nil and string.dump == nil)\n"
             "  assert(('a'):rep(3000):find('.-.-.-.-b') == nil)\n"
             "  assert(('a.c'):find('.') == 2)\n"
             "  assert(('a%d'):find('%d', 1, false) == 2)\n"
             "  local s, e = ('hello world'):find('o w')\n"
             "  assert(s == 5 and e == 7)\n"
             "  assert(('abc'):find('c', -1) == 3)\n"
             "  assert(('abc'):find('a', 10) == nil)\n"
             "  assert(('abc'):find('') == 1)\n"
             "  local long = ('ab'):rep(20000) .. ('ab'):rep(20) .. 'c'\n"
             "  assert(long:find(('ab'):rep(20) .. 'c') == 40001)\n"
             "  assert(long:find(('ab'):rep(21) .. 'd') == nil)\n"
             "  assert(('x'):rep(3, ',') == 'x,x,x')\n"
             "  assert(('x'):rep(0) == '' and (''):rep(1e18) == '')\n"
             "  assert(table.concat({1, 'b', 3}, '-') == '1-b-3')\n"
             "  assert(not pcall(string.format, '%99999d', 1))\n"
             "  assert(#string.format('%99d', 1) == 99)\n"
             "  assert(string.format('%5.1f|%s', 1.25, 'x') == '  1.2|x')\n"
             "  return ALLOW\n"
             "end\n",
             pt_intent("x", NULL), &d);
    (void)clock_gettime(CLOCK_MONOTONIC, &t1);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    assert_true(t1.tv_sec - t0.tv_sec < 2);
}

/* What a policy can still use, and how values look. */
static void
test_environment(void **state)
{
    struct pol_decision d;

    (void)state;
    pt_eval1(
        "local n = 0\n"
        "return function(i)\n"
        "  assert(type(ALLOW) == 'userdata' and tostring(ALLOW) == 'ALLOW')\n"
        "  assert(tostring(BLOCK 'X_1') == 'BLOCK(X_1)')\n"
        "  assert(math.floor(2.5) == 2 and math.maxinteger > 0)\n"
        "  assert(utf8.len('h\\u{e9}') == 2 and utf8.char(233) == '\\u{e9}')\n"
        "  assert(type(os.time()) == 'number' and os.date('!%Y', 0) == "
        "'1970')\n"
        "  local t = {3, 1, 2} table.sort(t) assert(t[1] == 1)\n"
        "  table.insert(t, 4) assert(table.remove(t) == 4)\n"
        "  assert(select('#', table.unpack({1, 2, 3})) == 3)\n"
        "  assert(table.pack(1, 2).n == 2)\n"
        "  assert(pcall(error, 'x') == false)\n"
        "  assert(tonumber('0x10') == 16 and tostring(1) == '1')\n"
        "  assert(rawequal(i, i) and rawget(i, 'action') == 'x')\n"
        "  assert(rawlen(i.params.list) == 3 and rawlen('ab') == 2)\n"
        "  local ok, msg = pcall(function() return undefined_name end)\n"
        "  assert(not ok and msg:find(\"undefined global 'undefined_name'\"))\n"
        "  n = n + 1\n"
        "  return ALLOW\n"
        "end\n",
        pt_intent("x", "{\"list\":[1,2,3]}"), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
}

/* JSON -> Lua: read-only tables, integers, floats, null, NUL bytes. */
static void
test_intent_values(void **state)
{
    struct pol_decision d;

    (void)state;
    pt_eval1(
        "return function(i)\n"
        "  local p = i.params\n"
        "  assert(math.type(p.one) == 'integer' and tostring(p.one) == '1')\n"
        "  assert(math.type(p.half) == 'float' and p.half == 0.5)\n"
        "  assert(math.type(p.neg) == 'integer' and p.neg == -42)\n"
        "  assert(math.type(p.big) == 'float')\n"
        "  assert(p.max53 == 9007199254740992)\n"
        "  assert(p.nothing == null and p.nothing ~= nil)\n"
        "  assert(tostring(null) == 'null' and p.absent == nil)\n"
        "  assert(#p.arr == 3 and p.arr[2] == null and p.arr[3] == 'c')\n"
        "  assert(p.t == true and p.f == false)\n"
        "  assert(#p.nul == 3 and p.nul:byte(2) == 0)\n"
        "  assert(p.deep.a.b[1].c == 'd')\n"
        "  local keys = 0\n"
        "  for k, v in pairs(p) do keys = keys + 1 end\n"
        "  assert(keys == 11)\n"
        "  local n = 0\n"
        "  for idx, v in ipairs(p.arr) do n = idx end\n"
        "  assert(n == 3)\n"
        "  assert(next(p) ~= nil and next({}) == nil)\n"
        "  local f, s = pairs(p)\n"
        "  assert(not pcall(rawset, s, 'x', 1))\n"
        "  assert(i.context.ticket == 'T-1')\n"
        "  return ALLOW\n"
        "end\n",
        "{\"action\":\"x\",\"context\":{\"ticket\":\"T-1\"},\"params\":"
        "{\"one\":1.0,\"half\":0.5,\"neg\":-42,\"big\":1e300,"
        "\"max53\":9007199254740992,\"nothing\":null,"
        "\"arr\":[\"a\",null,\"c\"],\"t\":true,\"f\":false,"
        "\"nul\":\"a\\u0000b\",\"deep\":{\"a\":{\"b\":[{\"c\":\"d\"}]}}}}",
        &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
}

/* One policy file cannot change what the next one sees. */
static void
test_files_isolated(void **state)
{
    const char *files[] = {
        "a.lua",
        "local seen = {}\n"
        "return function(i)\n"
        "  pcall(function() i.action = 'other' end)\n"
        "  pcall(rawset, i, 'action', 'other')\n"
        "  pcall(function() ALLOW = nil end)\n"
        "  seen[#seen + 1] = i\n"
        "  return nil\n"
        "end\n",
        "b.lua",
        "return function(i)\n"
        "  if i.action == 'x' and tostring(ALLOW) == 'ALLOW' then\n"
        "    return ALLOW\n"
        "  end\n"
        "  return BLOCK 'TAMPERED'\n"
        "end\n",
        NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_engine *e = pt_engine(b, NULL, NULL, NULL);
    struct pol_decision d;
    int i;

    (void)state;
    for (i = 0; i < 3; i++) {
        pt_eval(e, pt_intent("x", NULL), &d);
        pt_expect(&d, POL_ALLOW, NULL, NULL);
    }
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

/* A policy that keeps garbage alive across evaluations gets its state
   rebuilt after the failure, and the engine keeps answering. */
static void
test_rebuild_after_leak(void **state)
{
    const char *files[] = {
        "p.lua",
        "local keep = {}\n"
        "return function(i)\n"
        "  if i.action == 'ok' then return ALLOW end\n"
        "  while true do keep[#keep + 1] = ('x'):rep(60000) .. #keep end\n"
        "end\n",
        NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_limits l;
    struct pol_engine *e;
    struct pol_decision d;
    int i;

    (void)state;
    pol_limits_default(&l);
    l.memory_bytes = 4 * 1024 * 1024;
    e = pt_engine(b, &l, NULL, NULL);
    for (i = 0; i < 3; i++) {
        pt_eval(e, pt_intent("bad", NULL), &d);
        pt_expect(&d, POL_BLOCK, "POLICY_LIMIT", "memory limit exceeded");
        pt_eval(e, pt_intent("ok", NULL), &d);
        pt_expect(&d, POL_ALLOW, NULL, NULL);
    }
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

/* A huge or deep intent is refused as a limit, then all is well. */
static void
test_intent_too_big(void **state)
{
    const char *files[] = {"p.lua", "return function(i) return ALLOW end\n",
                           NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_limits l;
    struct pol_engine *e;
    struct pol_decision d;
    json_t *big, *arr, *deep, *cur, *next;
    int i;

    (void)state;
    pol_limits_default(&l);
    l.memory_bytes = 1024 * 1024;
    e = pt_engine(b, &l, NULL, NULL);
    big = pt_json(pt_intent("x", NULL));
    arr = json_array();
    for (i = 0; i < 40000; i++) {
        char item[32];

        (void)snprintf(item, sizeof(item), "item-%06d", i);
        json_array_append_new(arr, json_string(item));
    }
    json_object_set_new(json_object_get(big, "params"), "arr", arr);
    pol_engine_eval(e, big, &d);
    pt_expect(&d, POL_BLOCK, "POLICY_LIMIT", "intent: memory limit");
    deep = pt_json(pt_intent("x", NULL));
    cur = json_object_get(deep, "params");
    for (i = 0; i < 100; i++) {
        next = json_object();
        json_object_set_new(cur, "d", next);
        cur = next;
    }
    pol_engine_eval(e, deep, &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "nested deeper");
    pol_engine_eval(e, NULL, &d);
    pt_expect(&d, POL_BLOCK, "POLICY_ERROR", "not a JSON object");
    pt_eval(e, pt_intent("x", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    json_decref(big);
    json_decref(deep);
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

int
pt_run_sandbox_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes_refused),
        cmocka_unit_test(test_bombs_hit_limits),
        cmocka_unit_test(test_charged_work),
        cmocka_unit_test(test_memory_bombs),
        cmocka_unit_test(test_wall_clock),
        cmocka_unit_test(test_no_patterns),
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_intent_values),
        cmocka_unit_test(test_files_isolated),
        cmocka_unit_test(test_rebuild_after_leak),
        cmocka_unit_test(test_intent_too_big),
    };

    return cmocka_run_group_tests_name("policy sandbox", tests, NULL, NULL);
}
