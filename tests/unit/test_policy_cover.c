/*
 * test_policy_cover.c - `policy test --coverage`: the branch-probe
 * instrumenter on hostile sources (keywords inside strings, comments and
 * long brackets, escapes, goto, nested and one-line functions, if inside
 * table constructors, elseif chains, CRLF), the files it must refuse to
 * instrument, and the differential property - every case decides the same
 * with and without coverage, on the example bundle and on a hostile one -
 * with the exact report of a bundle with a known untested branch.
 */
#include "policy_util.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_cover.h"

#define P "local __igcov = ...;"

/* Lines as Lua counts them (\n, \r, \r\n, \n\r). */
static int
pc_lines(const char *s, size_t n)
{
    size_t i = 0;
    int lines = 1;

    while (i < n) {
        if (s[i] == '\n' || s[i] == '\r') {
            i += (i + 1 < n && (s[i + 1] == '\n' || s[i + 1] == '\r') &&
                  s[i + 1] != s[i])
                     ? 2
                     : 1;
            lines++;
        } else {
            i++;
        }
    }
    return lines;
}

/* 1 when the chunk compiles. */
static int
pc_compiles(const char *s, size_t n)
{
    lua_State *L = luaL_newstate();
    int ok;

    assert_non_null(L);
    ok = luaL_loadbufferx(L, s, n, "=t", "t") == LUA_OK;
    lua_close(L);
    return ok;
}

/* Instrument src; want the text (or NULL: not instrumented). */
static void
pc_expect(const char *src, const char *want)
{
    struct pol_cover_src r;

    assert_int_equal(pol_cover_instrument(src, strlen(src), &r), IG_OK);
    assert_int_equal(r.nlines, pc_lines(src, strlen(src)));
    if (want == NULL) {
        if (r.text != NULL)
            fail_msg("instrumented, expected a refusal:\n%s", r.text);
        assert_true(r.why[0] != '\0');
    } else {
        if (r.text == NULL)
            fail_msg("not instrumented (%s):\n%s", r.why, src);
        assert_string_equal(r.text, want);
        assert_int_equal(pc_lines(r.text, r.len), r.nlines);
        assert_int_equal(pc_compiles(src, strlen(src)),
                         pc_compiles(r.text, r.len));
    }
    pol_cover_src_release(&r);
}

static void
test_instrument_shapes(void **state)
{
    (void)state;
    pc_expect("", P);
    pc_expect("if a then b() end",
              P "if a then __igcov(1); b()  else __igcov(2);end");
    pc_expect("if a then b() else c() end",
              P "if a then __igcov(1); b() else __igcov(2); c() end");
    pc_expect("if a then x=1 elseif b then x=2 elseif c then x=3 end",
              P "if a then __igcov(1); x=1 elseif b then __igcov(2); x=2 "
                "elseif c then __igcov(3); x=3  else __igcov(4);end");
    /* nested, and the inner if closes first */
    pc_expect("if a then\n  if b then\n  end\nend\n",
              P "if a then __igcov(1);\n  if b then __igcov(2);\n  "
                " else __igcov(3);end\n else __igcov(4);end\n");
    /* a block that starts with a parenthesis needs the ';' */
    pc_expect("if a then (f)() end",
              P "if a then __igcov(1); (f)()  else __igcov(2);end");
    /* return and break at the end of a then-block */
    pc_expect("while x do if y then break end end",
              P "while x do if y then __igcov(1); break  else __igcov(2);end "
                "end");
    pc_expect("return function(i) if i then return 1 end end",
              P "return function(i) if i then __igcov(1); return 1  else "
                "__igcov(2);end end");
    /* goto, labels, repeat-until, for, do */
    pc_expect("for i=1,2 do if i then goto c end ::c:: end",
              P "for i=1,2 do if i then __igcov(1); goto c  else __igcov(2);"
                "end ::c:: end");
    pc_expect("repeat if a then x=1 end until b do end",
              P "repeat if a then __igcov(1); x=1  else __igcov(2);end until "
                "b do end");
    /* a function (with if inside) in a while condition and a table */
    pc_expect("while f(function() if a then end end) do end",
              P "while f(function() if a then __igcov(1);  else "
                "__igcov(2);end end) do end");
    pc_expect("t = { k = function() if a then return 1 end end, 2 }",
              P "t = { k = function() if a then __igcov(1); return 1  else "
                "__igcov(2);end end, 2 }");
    /* an if whose condition holds a function with its own if */
    pc_expect("if (function() if a then return 1 end end)() then end",
              P "if (function() if a then __igcov(1); return 1  else "
                "__igcov(2);end end)() then __igcov(3);  else __igcov(4);end");
    /* `...` inside a function is fine */
    pc_expect("return function(...) if ... then end end",
              P "return function(...) if ... then __igcov(1);  else "
                "__igcov(2);end end");
}

static void
test_instrument_lexer(void **state)
{
    (void)state;
    /* keywords in strings, comments and long brackets stay text */
    pc_expect("s = \"if then end\" -- if x then\nt = 'else end'",
              P "s = \"if then end\" -- if x then\nt = 'else end'");
    pc_expect("t = [==[ end ]] then ]=] ]==] --[[ if\nthen ]]",
              P "t = [==[ end ]] then ]=] ]==] --[[ if\nthen ]]");
    pc_expect("t = [[\nend]] --[==[\n]] end ]==] x = 1",
              P "t = [[\nend]] --[==[\n]] end ]==] x = 1");
    /* escapes: a quote, a backslash, \z over lines, a line break */
    pc_expect("s = \"\\\"then\" if a then end",
              P "s = \"\\\"then\" if a then __igcov(1);  else __igcov(2);end");
    pc_expect("s = '\\\\' if a then end",
              P "s = '\\\\' if a then __igcov(1);  else __igcov(2);end");
    pc_expect("s = \"a\\z\n   end\" if a then end",
              P "s = \"a\\z\n   end\" if a then __igcov(1);  else "
                "__igcov(2);end");
    pc_expect("s = \"a\\\nthen\" if a then end",
              P "s = \"a\\\nthen\" if a then __igcov(1);  else __igcov(2);end");
    /* numbers: exponents, hex, a dot; `..` and `...` */
    pc_expect("x = 1e-5 + 0x1p+4 + .5 + 0xe-1 if x then end",
              P "x = 1e-5 + 0x1p+4 + .5 + 0xe-1 if x then __igcov(1);  else "
                "__igcov(2);end");
    pc_expect("x = 'a'..'b' if x then end",
              P "x = 'a'..'b' if x then __igcov(1);  else __igcov(2);end");
    /* CRLF and lone CR: every line keeps its number */
    pc_expect("if a then\r\n  b()\r\nend\r\n",
              P "if a then __igcov(1);\r\n  b()\r\n else __igcov(2);end\r\n");
    pc_expect("if a then\r  b()\rend",
              P "if a then __igcov(1);\r  b()\r else __igcov(2);end");
    /* names that only look like keywords */
    pc_expect("local endx, ifx, then_ = 1, 2, 3",
              P "local endx, ifx, then_ = 1, 2, 3");
}

static void
test_instrument_refusals(void **state)
{
    (void)state;
    pc_expect("end", NULL);
    pc_expect("if a then", NULL);
    pc_expect("then", NULL);
    pc_expect("if a then else else end", NULL);
    pc_expect("if a then else elseif b then end", NULL);
    pc_expect("until x", NULL);
    pc_expect("if a end", NULL);
    pc_expect("local __igcov = 1", NULL);
    pc_expect("local n = select('#', ...)", NULL);
    pc_expect("s = \"unclosed", NULL);
    pc_expect("s = [==[ unclosed ]=]", NULL);
    pc_expect("--[[ unclosed", NULL);
    pc_expect("x = 3end", NULL);
    pc_expect("s = \"a\nb\"", NULL);
}

static void
test_instrument_conds(void **state)
{
    const char *src = "if a then\nelseif b then\n  if c then else end\n"
                      "elseif d then\nend\n";
    struct pol_cover_src r;

    (void)state;
    assert_int_equal(pol_cover_instrument(src, strlen(src), &r), IG_OK);
    assert_non_null(r.text);
    assert_int_equal(r.nconds, 4);
    assert_int_equal(r.nprobes, 6);
    /* if a (1), elseif b (2), if c (3, else 4), elseif d (5), added 6 */
    assert_int_equal(r.conds[0].line, 1);
    assert_int_equal(r.conds[0].elseif, 0);
    assert_int_equal(r.conds[0].then_probe, 1);
    assert_int_equal(r.conds[0].next, 2);
    assert_int_equal(r.conds[0].else_probe, 6);
    assert_int_equal(r.conds[1].line, 2);
    assert_int_equal(r.conds[1].elseif, 1);
    assert_int_equal(r.conds[1].next, 4);
    assert_int_equal(r.conds[2].line, 3);
    assert_int_equal(r.conds[2].then_probe, 3);
    assert_int_equal(r.conds[2].else_probe, 4);
    assert_int_equal(r.conds[2].next, 0);
    assert_int_equal(r.conds[3].line, 4);
    assert_int_equal(r.conds[3].then_probe, 5);
    assert_int_equal(r.conds[3].else_probe, 6);
    /* quiet lines: 5 holds only `end`; 1..4 hold conditions */
    assert_int_equal(r.quiet[5], 1);
    assert_int_equal(r.quiet[1], 0);
    assert_int_equal(r.quiet[3], 0);
    pol_cover_src_release(&r);
}

/* Run dir's tests with and without coverage; the outputs must match and
   no case may decide differently. Returns the coverage (JSON). */
static json_t *
pc_run(const char *dir, const json_t *settings, int want_failed)
{
    struct pol_bundle *b = pt_load(dir, settings);
    struct pol_coverage *cov = NULL;
    static char plain[262144], covered[262144];
    FILE *f = tmpfile(), *g = tmpfile();
    struct ig_err err;
    json_t *j;
    size_t n;

    assert_non_null(f);
    assert_non_null(g);
    ig_err_clear(&err);
    assert_int_equal(pol_bundle_test(b, f, &err), want_failed);
    assert_int_equal(pol_bundle_test_cover(b, g, &cov, &err), want_failed);
    assert_non_null(cov);
    rewind(f);
    rewind(g);
    n = fread(plain, 1, sizeof(plain) - 1, f);
    plain[n] = '\0';
    n = fread(covered, 1, sizeof(covered) - 1, g);
    covered[n] = '\0';
    assert_string_equal(plain, covered);
    j = pol_coverage_json(cov);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "mismatches")), 0);
    (void)fclose(f);
    (void)fclose(g);
    pol_coverage_free(cov);
    pol_bundle_unref(b);
    return j;
}

static void
test_example_bundle_same_decisions(void **state)
{
    json_t *j, *file, *t;
    json_int_t run, total;
    size_t i;

    (void)state;
    j = pc_run(IG_POLICY_BUNDLE_DIR, NULL, 0);
    json_array_foreach(json_object_get(j, "files"), i, file)
    {
        if (!json_is_object(json_object_get(file, "branches")))
            fail_msg("%s: branches not counted: %s",
                     json_string_value(json_object_get(file, "file")),
                     json_string_value(json_object_get(file, "branches_note")));
    }
    t = json_object_get(json_object_get(j, "total"), "lines");
    run = json_integer_value(json_object_get(t, "run"));
    total = json_integer_value(json_object_get(t, "total"));
    assert_true(total > 400);
    assert_true(run * 100 >= total * 90);
    json_decref(j);
    /* the project_roots fixture file_test.lua knows */
    t = pt_json("{\"project_roots\": \"/home/dev/proj, /srv/app/\"}");
    j = pc_run(IG_POLICY_BUNDLE_DIR, t, 0);
    json_decref(j);
    json_decref(t);
}

/* A policy with every shape the instrumenter must get right, and cases
   that take each path - including errors, budgets and pcall. */
static const char pc_hostile[] =
    "local s1 = \"if x then end\" -- then else end\r\n"
    "local s2 = [==[\r\nend ]] elseif ]==] --[[ if\r\nthen ]]\r\n"
    "local s3 = 'a\\'b\\\\' .. \"\\z\r\n   end\"\r\n"
    "local T = { f = function(v) if v then return 1 end return 2 end }\r\n"
    "local function deep(n) if n > 0 then return deep(n - 1) end "
    "return 0 end\r\n"
    "return function(intent)\r\n"
    "  local a = intent.action\r\n"
    "  for i = 1, 3 do if i == 2 then goto next end ::next:: end\r\n"
    "  if a == 'x.loop' then while true do end\r\n"
    "  elseif a == 'x.err' then error('boom')\r\n"
    "  elseif a == 'x.pcall' then\r\n"
    "    local ok = pcall(function() if intent.params.q.r then end end)\r\n"
    "    if ok then return BLOCK{reason = 'CAUGHT_NOT'} end\r\n"
    "    return ALLOW\r\n"
    "  elseif a == 'x.str' then\r\n"
    "    if s1 .. s2 .. s3 ~= 'if x then endend ]] elseif ' .. "
    "\"a'b\\\\end\" then\r\n"
    "      return BLOCK{reason = 'STRINGS_CHANGED'}\r\n"
    "    end\r\n"
    "    return ALLOW\r\n"
    "  else\r\n"
    "    if T.f(a == 'x.t') == 1 then return ESCALATE{reason = 'T'} end\r\n"
    "    if deep(3) ~= 0 then return BLOCK{reason = 'DEEP'} end\r\n"
    "  end\r\n"
    "  return nil\r\n"
    "end\r\n";

static const char pc_hostile_test[] =
    "return {\n"
    "  { name = 'loop', intent = { action = 'x.loop' }, expect = 'BLOCK',\n"
    "    reasons = { 'POLICY_LIMIT' } },\n"
    "  { name = 'error', intent = { action = 'x.err' }, expect = 'BLOCK',\n"
    "    reasons = { 'POLICY_ERROR' } },\n"
    "  { name = 'pcall', intent = { action = 'x.pcall' },\n"
    "    expect = 'ALLOW' },\n"
    "  { name = 'strings', intent = { action = 'x.str' }, expect = 'ALLOW' },\n"
    "  { name = 'table fn', intent = { action = 'x.t' },\n"
    "    expect = 'ESCALATE', reasons = { 'T' } },\n"
    "  { name = 'none', intent = { action = 'x.none' }, expect = 'BLOCK',\n"
    "    reasons = { 'NO_POLICY_MATCHED' } },\n"
    "}\n";

static void
test_hostile_same_decisions(void **state)
{
    const char *files[] = {"h.lua", pc_hostile, "h_test.lua", pc_hostile_test,
                           NULL};
    char *dir = pt_bundle_dir(files);
    json_t *j, *br;

    (void)state;
    j = pc_run(dir, NULL, 0);
    br = json_object_get(json_array_get(json_object_get(j, "files"), 0),
                         "branches");
    if (!json_is_object(br))
        fail_msg("hostile file not instrumented");
    /* every if/elseif of the file: each outcome was taken but those the
       cases cannot reach (x.loop never leaves its branch...) */
    assert_true(json_integer_value(json_object_get(br, "total")) >= 22);
    json_decref(j);
    pt_rmdir(dir);
}

/* The report of a bundle with one untested branch, exactly. */
static void
test_report_exact(void **state)
{
    const char *files[] = {
        "p.lua",
        "-- p.lua\n"
        "return function(intent)\n"
        "  if intent.action == \"a\" then\n"
        "    return ALLOW\n"
        "  elseif intent.action == \"b\" then\n"
        "    return BLOCK{reason = \"B\"}\n"
        "  end\n"
        "  return nil\n"
        "end\n",
        "p_test.lua",
        "return {{ name = 'a', intent = { action = 'a' }, expect = 'ALLOW' },\n"
        "        { name = 'c', intent = { action = 'c' }, expect = 'BLOCK' "
        "}}\n",
        "q.lua",
        "local __igcov = 1\nreturn function(i) return nil end\n",
        NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_coverage *cov = NULL;
    static char out[4096];
    struct ig_err err;
    FILE *f = tmpfile(), *g = tmpfile();
    size_t n;

    (void)state;
    assert_non_null(f);
    assert_non_null(g);
    assert_int_equal(pol_bundle_test_cover(b, f, &cov, &err), 0);
    pol_coverage_print(cov, g);
    rewind(g);
    n = fread(out, 1, sizeof(out) - 1, g);
    out[n] = '\0';
    assert_string_equal(
        out, "coverage p.lua: lines 4/5 (80%), branches 3/4 (75%)\n"
             "  not run: 6\n"
             "  branch not taken: 5 `elseif` true (no case entered it)\n"
             "coverage q.lua: lines 2/2 (100%), branches not counted (line "
             "1: the source uses the name __igcov)\n"
             "total: lines 6/7 (85.7%), branches 3/4 (75.0%)\n");
    pol_coverage_free(cov);
    (void)fclose(f);
    (void)fclose(g);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

/* A failing policy's message names that policy, on the engine's very
   first failing run too (the file was once taken before the call: the
   message then began with the last file loaded, "c.lua: b.lua:2: boom"). */
static void
test_error_names_the_failing_file(void **state)
{
    const char *files[] = {
        "a.lua", "return function(i) return nil end\n",
        "b.lua", "return function(i)\n  error('boom')\nend\n",
        "c.lua", "return function(i) return nil end\n",
        NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_engine *e = pt_engine(b, NULL, NULL, NULL);
    struct pol_decision d;
    int i;

    (void)state;
    for (i = 0; i < 2; i++) {
        pt_eval(e, pt_intent("x.y", NULL), &d);
        pt_expect(&d, POL_BLOCK, "POLICY_ERROR", NULL);
        assert_string_equal(d.message, "b.lua:2: boom");
    }
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

/* The watch is what turns the line hook and the probes on: an engine
   built and run without it (the server's) never calls it, one built and
   run with it does. */
struct pc_calls {
    int file, line;
};

static int
pc_w_file(void *ctx, const char *name)
{
    ((struct pc_calls *)ctx)->file++;
    return strcmp(name, "p.lua") == 0 ? 0 : -1;
}

static const char *
pc_w_source(void *ctx, int file, size_t *len)
{
    (void)ctx;
    (void)file;
    (void)len;
    return NULL;
}

static void
pc_w_line(void *ctx, lua_State *L, lua_Debug *ar)
{
    (void)L;
    (void)ar;
    ((struct pc_calls *)ctx)->line++;
}

static void
pc_w_reach(void *ctx, lua_State *L, int file, int idx)
{
    (void)ctx;
    (void)L;
    (void)file;
    (void)idx;
}

static void
test_watch_only_when_set(void **state)
{
    const char *files[] = {"p.lua", "return function(i)\n  return ALLOW\nend\n",
                           NULL};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pc_calls calls = {0, 0};
    struct pol_vm_watch w;
    struct pol_engine *e;
    struct pol_decision d;

    (void)state;
    memset(&w, 0, sizeof(w));
    w.ctx = &calls;
    w.file = pc_w_file;
    w.source = pc_w_source;
    w.line = pc_w_line;
    w.reach = pc_w_reach;
    e = pt_engine(b, NULL, NULL, NULL);
    pt_eval(e, pt_intent("x.y", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    assert_int_equal(calls.file + calls.line, 0);
    pol_engine_free(e);
    pol_vm_watch(&w);
    e = pt_engine(b, NULL, NULL, NULL);
    assert_int_equal(calls.file, 1);
    calls.line = 0;
    pt_eval(e, pt_intent("x.y", NULL), &d);
    assert_true(calls.line >= 1);
    pol_vm_watch(NULL);
    calls.line = 0;
    pt_eval(e, pt_intent("x.y", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
    assert_int_equal(calls.line, 0);
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

/* An instrumented file Lua refuses (the probe's local is the 201st of
   the main chunk) falls back to lines only, and decides the same. */
static void
test_fallback_when_instrumented_fails(void **state)
{
    static char src[8192];
    const char *files[] = {"p.lua", src, "p_test.lua",
                           "return {{ name = 'a', intent = { action = 'a' },\n"
                           "          expect = 'ALLOW' }}\n",
                           NULL};
    json_t *j, *f;
    size_t o = 0;
    char *dir;
    int i;

    (void)state;
    for (i = 0; i < 200; i++)
        o += (size_t)snprintf(src + o, sizeof(src) - o, "local v%d = %d\n", i,
                              i);
    (void)snprintf(src + o, sizeof(src) - o,
                   "return function(i) if v1 == 1 then return ALLOW end "
                   "end\n");
    dir = pt_bundle_dir(files);
    j = pc_run(dir, NULL, 0);
    f = json_array_get(json_object_get(j, "files"), 0);
    assert_true(json_is_null(json_object_get(f, "branches")));
    assert_non_null(
        strstr(json_string_value(json_object_get(f, "branches_note")),
               "instrumented source: p.lua:"));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(f, "lines"), "run")),
        201);
    json_decref(j);
    pt_rmdir(dir);
}

/* A case that leaves garbage alive makes the engine rebuild its state
   (pol_eval.c); the coverage engine is rebuilt instrumented and watched
   too, so the cases after it still count. */
static void
test_rebuilt_state_still_counted(void **state)
{
    const char *files[] = {
        "p.lua",
        "local keep = {}\n"
        "return function(intent)\n"
        "  if intent.action == 'x.garbage' then\n"
        "    for i = 1, 100 do keep[i] = string.rep('x', 60000) .. i end\n"
        "    error('kept')\n"
        "  elseif intent.action == 'x.after' then\n"
        "    if #keep == 0 then return ALLOW end\n"
        "    return BLOCK{reason = 'NOT_REBUILT'}\n"
        "  end\n"
        "end\n",
        "p_test.lua",
        "return {\n"
        "  { name = 'garbage', intent = { action = 'x.garbage' },\n"
        "    expect = 'BLOCK', reasons = { 'POLICY_ERROR' } },\n"
        "  { name = 'after', intent = { action = 'x.after' },\n"
        "    expect = 'ALLOW' },\n"
        "}\n",
        NULL};
    char *dir = pt_bundle_dir(files);
    json_t *j, *f;

    (void)state;
    j = pc_run(dir, NULL, 0);
    f = json_array_get(json_object_get(j, "files"), 0);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(f, "branches"), "taken")),
                     4);
    /* only the line a state that was not rebuilt would run */
    assert_int_equal(
        json_integer_value(json_array_get(
            json_object_get(json_object_get(f, "lines"), "not_run"), 0)),
        8);
    json_decref(j);
    pt_rmdir(dir);
}

/* A function no case creates still shows its lines (each function is
   compiled alone for its lines), methods and varargs included; nothing
   of it runs while its lines are read. */
static void
test_uncreated_functions_counted(void **state)
{
    const char *files[] = {"p.lua",
                           "local t = { m = {} }\n"
                           "local function unused(x)\n"
                           "  local y = x + 1\n"
                           "  return function(...)\n"
                           "    return select('#', ...) + y\n"
                           "  end\n"
                           "end\n"
                           "function t.m:method(a)\n"
                           "  error('never')\n"
                           "end\n"
                           "return function(i) return nil end\n",
                           "p_test.lua",
                           "return {{ name = 'a', intent = { action = 'a' }, "
                           "expect = 'BLOCK' }}\n",
                           NULL};
    char *dir = pt_bundle_dir(files);
    json_t *j, *nr;
    char *dump;

    (void)state;
    j = pc_run(dir, NULL, 0);
    nr = json_object_get(
        json_object_get(json_array_get(json_object_get(j, "files"), 0),
                        "lines"),
        "not_run");
    dump = json_dumps(nr, JSON_COMPACT);
    assert_string_equal(dump, "[3,5,9]");
    free(dump);
    json_decref(j);
    pt_rmdir(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instrument_shapes),
        cmocka_unit_test(test_instrument_lexer),
        cmocka_unit_test(test_instrument_refusals),
        cmocka_unit_test(test_instrument_conds),
        cmocka_unit_test(test_example_bundle_same_decisions),
        cmocka_unit_test(test_hostile_same_decisions),
        cmocka_unit_test(test_report_exact),
        cmocka_unit_test(test_error_names_the_failing_file),
        cmocka_unit_test(test_watch_only_when_set),
        cmocka_unit_test(test_fallback_when_instrumented_fails),
        cmocka_unit_test(test_rebuilt_state_still_counted),
        cmocka_unit_test(test_uncreated_functions_counted),
    };

    return cmocka_run_group_tests_name("policy coverage", tests, NULL, NULL);
}
