/*
 * test_policy_text.c - the text helpers policies get: git_ref_valid (the
 * rules of `git check-ref-format`, as checked with git 2.39.5 in NOTES-2
 * section 6), resource_canonical and clean_text (no invisible, control or
 * ill-formed characters; no whitespace at a segment's edge; no empty, "."
 * or ".." segments). Lua strings may hold NUL bytes: the helpers must see
 * the whole string.
 */
#include "policy_util.h"

#include <stdio.h>
#include <string.h>

#include "pol_int.h"

static void
test_git_ref_valid(void **state)
{
    (void)state;
    pt_lua_asserts(
        "for _, r in ipairs{'refs/heads/main', 'refs/heads/agent/x',\n"
        "    'a/b', 'refs/heads/-x', 'refs/heads/+x', '+refs/heads/x',\n"
        "    'refs/heads/@', 'refs/heads/a@b', 'refs/heads/a.lockx',\n"
        "    'refs/heads/x.lock.y', 'refs/heads/{}#%;|$\"!&=,',\n"
        "    'refs/heads/caf\\u{e9}', 'refs/heads/a.b/c.d', 'refs/tags/v1.0',\n"
        "    'refs/heads/\\xff', 'refs/heads/x@', 'refs/heads/@x',\n"
        "    'r/{'} do\n"
        "  local ok, why = git_ref_valid(r)\n"
        "  assert(ok == true and why == nil, r)\n"
        "end\n"
        "for _, r in ipairs{'', 'main', 'HEAD', '@', '.x/y', 'refs/.x',\n"
        "    'x.lock/y', 'refs/x.lock', 'refs/heads/.lock', 'refs/a..b',\n"
        "    'refs/..', 'refs/.', 'refs/x.', 'refs/x/', '/refs/x',\n"
        "    'refs//x', '//', '/', 'refs/a@{b', 'refs/@{', 'refs/a b',\n"
        "    'refs/a\\tb', 'refs/a\\127', 'refs/a~1', 'refs/a^', 'refs/a:b',\n"
        "    'refs/a?', 'refs/a*', 'refs/*', 'refs/[a', 'refs/a\\\\b',\n"
        "    'refs/a\\0', 'refs/a\\0/b', "
        "'refs/heads/agent/x\\0:refs/heads/m',\n"
        "    'refs/x\\n', 'refs/heads/agent/x\\nrefs/heads/main',\n"
        "    'refs/heads/agent/x:refs/heads/main', 'refs/heads/agent/*',\n"
        "    'refs/heads/agent//main', 'refs/\\31x', '\\0refs/heads/x'} do\n"
        "  local ok, why = git_ref_valid(r)\n"
        "  assert(ok == false and type(why) == 'string', r)\n"
        "end\n"
        "local function why(r) return select(2, git_ref_valid(r)) end\n"
        "assert(why('refs/a:b'):find(\"':'\", 1, true), why('refs/a:b'))\n"
        "assert(why('refs/a\\0b'):find('control', 1, true))\n"
        "assert(why('refs/a\\0b'):find('byte 7', 1, true), why('refs/a\\0b'))\n"
        "assert(why('refs/a..b'):find(\"'..'\", 1, true))\n"
        "assert(why('refs/a@{1}'):find(\"'@{'\", 1, true))\n"
        "assert(why('refs//a'):find('empty component', 1, true))\n"
        "assert(why('refs/a/'):find('empty component', 1, true))\n"
        "assert(why('refs/.a'):find(\"starts with '.'\", 1, true))\n"
        "assert(why('refs/a.lock'):find('.lock', 1, true))\n"
        "assert(why('refs/a.'):find(\"ends with '.'\", 1, true))\n"
        "assert(why('main'):find('one level', 1, true))\n"
        "assert(why('@'):find(\"'@'\", 1, true))\n"
        "assert(why(nil) == 'not a string' and why(7) == 'not a string')\n"
        "assert(why(('a/'):rep(32768) .. 'b'):find('longer', 1, true))\n");
}

static void
test_resource_canonical(void **state)
{
    (void)state;
    pt_lua_asserts(
        "for _, r in ipairs{'prod/orders', 'orders', 'caf\\u{e9}/x',\n"
        "    'a b/c d', '.hidden/x', '...', 'a.b/c..d', 'a\\u{200a}b',\n"
        "    '\\u{ac}\\u{ae}', 'x\\u{2010}y', '\\u{fe10}', '\\u{fefe}',\n"
        "    '\\u{1bca4}', '\\u{e1000}', '\\u{10ffff}', 'a\\\\b', 'a%2fb',\n"
        "    '%2e%2e%2e', '%2ex', 'x%2e', '%2', '%2e%2', '%2f', '..%2e',\n"
        "    'a/%2e%2e%2e/b', '%%2e', '%2E%2E.'} do\n"
        "  assert(resource_canonical(r) == r, r)\n"
        "  assert(clean_text(r) == true, r)\n"
        "end\n"
        "local cases = {\n"
        "  {' prod', 'EDGE_WHITESPACE'}, {'prod ', 'EDGE_WHITESPACE'},\n"
        "  {'a /b', 'EDGE_WHITESPACE'}, {'a/ b', 'EDGE_WHITESPACE'},\n"
        "  {'\\u{a0}x', 'EDGE_WHITESPACE'}, {'x\\u{3000}', "
        "'EDGE_WHITESPACE'},\n"
        "  {'\\u{2003}x', 'EDGE_WHITESPACE'}, {'\\u{1680}x', "
        "'EDGE_WHITESPACE'},\n"
        "  {'x/\\u{202f}', 'EDGE_WHITESPACE'}, {'\\u{205f}', "
        "'EDGE_WHITESPACE'},\n"
        "  {'', 'EMPTY_SEGMENT'}, {'/a', 'EMPTY_SEGMENT'},\n"
        "  {'a/', 'EMPTY_SEGMENT'}, {'a//b', 'EMPTY_SEGMENT'},\n"
        "  {'.', 'DOT_SEGMENT'}, {'..', 'DOT_SEGMENT'}, {'./a', "
        "'DOT_SEGMENT'},\n"
        "  {'a/.', 'DOT_SEGMENT'}, {'a/../b', 'DOT_SEGMENT'},\n"
        "  {'%2e', 'DOT_SEGMENT'}, {'%2E', 'DOT_SEGMENT'},\n"
        "  {'a/%2e%2e/b', 'DOT_SEGMENT'}, {'a/%2E%2e', 'DOT_SEGMENT'},\n"
        "  {'.%2e/b', 'DOT_SEGMENT'}, {'a/%2e./b', 'DOT_SEGMENT'},\n"
        "  {'a/%2E/b', 'DOT_SEGMENT'},\n"
        "  {'a\\0b', 'CONTROL_CHARACTER'}, {'a\\nb', 'CONTROL_CHARACTER'},\n"
        "  {'a\\127', 'CONTROL_CHARACTER'}, {'\\u{80}', "
        "'CONTROL_CHARACTER'},\n"
        "  {'\\u{85}x', 'CONTROL_CHARACTER'}, {'\\u{9f}', "
        "'CONTROL_CHARACTER'},\n"
        "  {'a\\u{2028}b', 'CONTROL_CHARACTER'}, {'a\\u{2029}b', "
        "'CONTROL_CHARACTER'},\n"
        "  {'a\\xff', 'INVALID_UTF8'}, {'a\\xc0\\xaf', 'INVALID_UTF8'},\n"
        "  {'\\xed\\xa0\\x80', 'INVALID_UTF8'}, {'\\xf4\\x90\\x80\\x80', "
        "'INVALID_UTF8'},\n"
        "  {'a\\xe2\\x80', 'INVALID_UTF8'}, {'\\x80', 'INVALID_UTF8'},\n"
        "  {'a//b\\u{200b}', 'FORMAT_CHARACTER'}, {' a\\n', "
        "'CONTROL_CHARACTER'},\n"
        "}\n"
        "for _, c in ipairs(cases) do\n"
        "  local r, code, detail = resource_canonical(c[1])\n"
        "  assert(r == nil and code == c[2], c[1] .. ': ' .. tostring(code))\n"
        "  assert(type(detail) == 'string' and #detail > 0)\n"
        "  local seg = code == 'EDGE_WHITESPACE' or code == 'EMPTY_SEGMENT'\n"
        "    or code == 'DOT_SEGMENT'\n"
        "  local ok, code2 = clean_text(c[1])\n"
        "  assert(ok == seg and (seg or code2 == code), c[1])\n"
        "end\n"
        "local r, code, detail = resource_canonical('\\u{200b}prod/x')\n"
        "assert(code == 'FORMAT_CHARACTER' and detail:find('U+200B', 1, "
        "true))\n"
        "assert(detail:find('byte 1', 1, true), detail)\n"
        "r, code, detail = resource_canonical('ab/c\\xff')\n"
        "assert(detail:find('byte 5', 1, true), detail)\n"
        "r, code, detail = resource_canonical('x/%2e%2e/prod')\n"
        "assert(detail:find('percent-encoded', 1, true), detail)\n"
        "r, code, detail = resource_canonical('x/../prod')\n"
        "assert(not detail:find('percent', 1, true), detail)\n"
        "r, code, detail = resource_canonical('ab/ c')\n"
        "assert(detail:find('segment 2', 1, true), detail)\n"
        "assert(select(2, resource_canonical(nil)) == 'NOT_A_STRING')\n"
        "assert(select(2, clean_text({})) == 'NOT_A_STRING')\n"
        "local long = ('a'):rep(65536)\n"
        "assert(resource_canonical(long) == long)\n"
        "assert(select(2, resource_canonical(long .. 'b')) == 'TOO_LONG')\n"
        "assert(select(2, clean_text(long .. 'b')) == 'TOO_LONG')\n");
}

/* Every range of invisible characters: its ends refused, just outside not. */
static void
test_format_ranges(void **state)
{
    /* Cf (Unicode 15) and Default_Ignorable_Code_Point, merged. */
    static const unsigned long ranges[][2] = {
        {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x0600, 0x0605},
        {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
        {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x115F, 0x1160},
        {0x17B4, 0x17B5},   {0x180B, 0x180F},   {0x200B, 0x200F},
        {0x202A, 0x202E},   {0x2060, 0x206F},   {0x3164, 0x3164},
        {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0},
        {0xFFF0, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
        {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
        {0xE0000, 0xE0FFF},
    };
    struct pol_fault f;
    char buf[8];
    size_t i, n;
    int side;
    unsigned long cp;

    (void)state;
    for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
        for (side = 0; side < 4; side++) {
            cp = side == 0   ? ranges[i][0]
                 : side == 1 ? ranges[i][1]
                 : side == 2 ? ranges[i][0] - 1
                             : ranges[i][1] + 1;
            buf[0] = 'x';
            n = 1 + pol_utf8_encode(cp, buf + 1);
            buf[n++] = 'x';
            if (side < 2) {
                if (pol_text_clean(buf, n, &f))
                    fail_msg("U+%04lX should be refused", cp);
                assert_string_equal(f.code, "FORMAT_CHARACTER");
                assert_int_equal(f.at, 1);
            } else if (cp != 0x2029) { /* a control, not invisible */
                if (!pol_text_clean(buf, n, &f))
                    fail_msg("U+%04lX should pass (%s)", cp, f.code);
            }
        }
    }
}

/* The C entry points see every byte: a NUL ends nothing. */
static void
test_c_entry_points(void **state)
{
    static const char ref[] = "refs/heads/agent/x\0:refs/heads/main";
    static const char res[] = "staging\0/../prod";
    struct pol_fault f;

    (void)state;
    assert_true(pol_git_ref_valid(ref, strlen(ref), &f));
    assert_false(pol_git_ref_valid(ref, sizeof(ref) - 1, &f));
    assert_string_equal(f.code, "CONTROL_CHARACTER");
    assert_int_equal(f.at, 18);
    assert_true(pol_resource_canonical(res, strlen(res), &f));
    assert_false(pol_resource_canonical(res, sizeof(res) - 1, &f));
    assert_string_equal(f.code, "CONTROL_CHARACTER");
    assert_int_equal(f.at, 7);
    assert_int_equal(f.cp, 0);
}

int
pt_run_text_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_git_ref_valid),
        cmocka_unit_test(test_resource_canonical),
        cmocka_unit_test(test_format_ranges),
        cmocka_unit_test(test_c_entry_points),
    };

    return cmocka_run_group_tests_name("policy text helpers", tests, NULL,
                                       NULL);
}
