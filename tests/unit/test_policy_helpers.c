/*
 * test_policy_helpers.c - the helper globals policies get: glob,
 * starts_with, ends_with, cidr_contains, ip_is_private, parse_url. Each
 * test is Lua code asserting what the helper returns; a failing assert
 * shows up as POLICY_ERROR naming its line.
 */
#include "policy_util.h"

#include <stdio.h>
#include <time.h>

static void
test_glob(void **state)
{
    (void)state;
    pt_lua_asserts(
        "assert(glob('*', '') and glob('*', 'anything'))\n"
        "assert(glob('', '') and not glob('', 'a'))\n"
        "assert(glob('refs/heads/agent/*', 'refs/heads/agent/x/y'))\n"
        "assert(not glob('refs/heads/agent/*', 'refs/heads/main'))\n"
        "assert(glob('a?c', 'abc') and not glob('a?c', 'ac'))\n"
        "assert(glob('a*b*c', 'aXXbYYc') and not glob('a*b*c', 'aXXbYY'))\n"
        "assert(glob('*.example.com', 'api.example.com'))\n"
        "assert(not glob('*.example.com', 'example.com'))\n"
        "assert(glob('**a**', 'xxaxx') and glob('*a', 'aaa'))\n"
        "assert(glob('?', '\\u{e9}') and not glob('?' .. '?', '\\u{e9}'))\n"
        "assert(glob('caf?', 'caf\\u{e9}') and glob('*\\u{e9}', 'x\\u{e9}'))\n"
        "assert(glob('[ab]', '[ab]') and not glob('[ab]', 'a'))\n"
        "assert(glob('%d.+', '%d.+') and not glob('%d', '5'))\n"
        "assert(glob('a*', 'a\\0b'))\n"
        "assert(glob('x', 1) == false and glob('*', nil) == false)\n"
        "assert(not pcall(glob, nil, 'x'))\n"
        "assert(not glob('a*a*a*a*a*a*a*b', ('a'):rep(1000)))\n");
}

/* The worst case is charged to the budget, and long inputs are caps. */
static void
test_glob_limits(void **state)
{
    struct pol_decision d;
    struct timespec t0, t1;

    (void)state;
    (void)clock_gettime(CLOCK_MONOTONIC, &t0);
    pt_eval1("return function(i)\n"
             "  local p = '*' .. ('a'):rep(1000) .. 'b'\n"
             "  return glob(p, ('a'):rep(65536)) and ALLOW or BLOCK 'NO'\n"
             "end\n",
             pt_intent("x", NULL), &d);
    (void)clock_gettime(CLOCK_MONOTONIC, &t1);
    pt_expect(&d, POL_BLOCK, "POLICY_LIMIT", "instruction budget exceeded");
    assert_true(t1.tv_sec - t0.tv_sec < 2);
    pt_eval1("return function(i) glob(('*'):rep(1025), 'x') end\n",
             pt_intent("x", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_LIMIT",
              "glob: pattern longer than 1024 bytes");
    pt_eval1("return function(i) glob('*', ('x'):rep(65536) .. 'y') end\n",
             pt_intent("x", NULL), &d);
    pt_expect(&d, POL_BLOCK, "POLICY_LIMIT", "glob: string longer");
}

static void
test_affixes(void **state)
{
    (void)state;
    pt_lua_asserts(
        "assert(starts_with('prod/db', 'prod/') and starts_with('x', ''))\n"
        "assert(not starts_with('pro', 'prod/') and not starts_with(nil, "
        "'a'))\n"
        "assert(ends_with('a.lua', '.lua') and not ends_with('a.lu', '.lua'))\n"
        "assert(not ends_with(5, '5') and not ends_with({}, ''))\n"
        "assert(not pcall(starts_with, 'x', nil))\n"
        "assert(not pcall(ends_with, 'x'))\n");
}

static void
test_cidr(void **state)
{
    (void)state;
    pt_lua_asserts(
        "assert(cidr_contains('10.0.0.0/8', '10.200.3.4'))\n"
        "assert(not cidr_contains('10.0.0.0/8', '11.0.0.1'))\n"
        "assert(cidr_contains('192.168.1.0/24', '192.168.1.255'))\n"
        "assert(not cidr_contains('192.168.1.0/25', '192.168.1.128'))\n"
        "assert(cidr_contains('172.16.0.0/12', '172.31.0.1'))\n"
        "assert(not cidr_contains('172.16.0.0/12', '172.32.0.1'))\n"
        "assert(cidr_contains('0.0.0.0/0', '8.8.8.8'))\n"
        "assert(cidr_contains('1.2.3.4', '1.2.3.4'))\n"
        "assert(cidr_contains('10.1.2.3/8', '10.9.9.9'))\n"
        "assert(cidr_contains('10.0.0.0/8', '::ffff:10.1.1.1'))\n"
        "assert(cidr_contains('fc00::/7', 'fd12:3456::1'))\n"
        "assert(not cidr_contains('fc00::/7', 'fe80::1'))\n"
        "assert(cidr_contains('2001:db8::/32', '[2001:DB8::1]'))\n"
        "assert(cidr_contains('fe80::/10', 'fe80::1%eth0'))\n"
        "assert(not cidr_contains('::/0', '1.2.3.4'))\n"
        "assert(not cidr_contains('10.0.0.0/8', 'example.com'))\n"
        "assert(not cidr_contains('10.0.0.0/8', '010.0.0.1'))\n"
        "assert(not cidr_contains('10.0.0.0/8', nil))\n"
        "for _, bad in ipairs{'10.0.0.0/33', '10.0.0/8', 'x/8', '10.0.0.0/',\n"
        "    '10.0.0.0/-1', '::/129', '', '10.0.0.0/8/8', '10.0.0.0/0008'} do\n"
        "  local ok, err = pcall(cidr_contains, bad, '10.0.0.1')\n"
        "  assert(not ok and err:find('malformed CIDR'), bad)\n"
        "end\n");
}

static void
test_ip_is_private(void **state)
{
    (void)state;
    pt_lua_asserts(
        "for _, h in ipairs{'10.0.0.1', '10.255.255.255', '172.16.0.1',\n"
        "    '172.31.255.255', '192.168.0.1', '127.0.0.1', '127.9.9.9',\n"
        "    '169.254.169.254', '0.0.0.0', '100.100.100.200', '::1', '::',\n"
        "    '[::1]', 'fc00::1', 'fd00:ec2::254', 'fe80::1', 'fe80::1%eth0',\n"
        "    '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:7f00:1',\n"
        "    '64:ff9b::10.0.0.1', 'localhost', 'LOCALHOST', 'localhost.',\n"
        "    'a.localhost', 'x.LocalHost.', '127.0.0.1.', '2130706433',\n"
        "    '0x7f.0.0.1', '0177.0.0.1', '127.1', '010.0.0.1', '1.2.3.0x4'}\n"
        "do\n"
        "  assert(ip_is_private(h), h)\n"
        "end\n"
        "for _, h in ipairs{'8.8.8.8', '172.32.0.1', '172.15.0.1',\n"
        "    '192.169.0.1', '169.255.0.1', '100.128.0.1', '1.1.1.1',\n"
        "    '2606:4700::1111', 'example.com', 'localhost.example.com',\n"
        "    'notlocalhost.com', 'api.github.com', '10.example.com',\n"
        "    'fec0x.example', 'a1.example', '0xg.example'}\n"
        "do\n"
        "  assert(ip_is_private(h) == false, h)\n"
        "end\n"
        "for _, h in ipairs{'', '::ffff:8.8.8.8', 'notlocalhost', 'a1'} do\n"
        "  assert(ip_is_private(h) == true, h)\n"
        "end\n"
        "assert(ip_is_private(nil) == true and ip_is_private(10) == true)\n");
}

static void
test_parse_url(void **state)
{
    (void)state;
    pt_lua_asserts(
        "local u = parse_url('HTTPS://User:pw@API.GitHub.com:8443/a/b?x=1#f')\n"
        "assert(u.scheme == 'https' and u.host == 'api.github.com')\n"
        "assert(u.port == 8443 and u.path == '/a/b' and u.query == 'x=1')\n"
        "assert(u.userinfo == 'User:pw')\n"
        "u = parse_url('http://example.com')\n"
        "assert(u.port == 80 and u.path == '/' and u.query == nil)\n"
        "assert(u.userinfo == nil)\n"
        "u = parse_url('https://example.com?q')\n"
        "assert(u.port == 443 and u.path == '/' and u.query == 'q')\n"
        "u = parse_url('http://[::1]:8080/x')\n"
        "assert(u.host == '::1' and u.port == 8080 and u.path == '/x')\n"
        "u = parse_url('http://[FE80::1]/')\n"
        "assert(u.host == 'fe80::1')\n"
        "u = parse_url('http://a@b@evil.io/')\n"
        "assert(u.host == 'evil.io' and u.userinfo == 'a@b')\n"
        "u = parse_url('ftp://files.example.com/x')\n"
        "assert(u.scheme == 'ftp' and u.port == nil)\n"
        "u = parse_url('http://10.0.0.1:/')\n"
        "assert(u.host == '10.0.0.1' and u.port == 80)\n"
        "u = parse_url('http://under_score.example./')\n"
        "assert(u.host == 'under_score.example.')\n"
        "for _, bad in ipairs{'', 'example.com', '/path', 'http:/x',\n"
        "    'mailto:a@b.c', 'http://', 'http:///x', 'http://a b/',\n"
        "    'http://exa\\tmple.com/', 'http://ex\\u{e4}mple.com/',\n"
        "    'http://a.com\\\\@b.com/', 'http://%31.0.0.1/', 'http://[::1/',\n"
        "    'http://[::1]x/', 'http://[fe80::1%25eth0]/', "
        "'http://[1.2.3.4]/',\n"
        "    'http://a:b:c/', 'http://a:0/', 'http://a:65536/',\n"
        "    'http://a:123456/', 'http://a:8x/', 'http://2130706433/',\n"
        "    'http://127.1/', 'http://0x7f.0.0.1/', 'http://1.2.3.4./',\n"
        "    'http://01.2.3.4/', 'http://.a.com/', 'http://a..com/',\n"
        "    '1http://a/', 'ht!tp://a/', 'http://a/\\0',\n"
        "    'http://' .. ('a'):rep(300) .. '/',\n"
        "    'http://' .. ('a'):rep(64) .. '.com/',\n"
        "    'http://' .. ('a.'):rep(127) .. 'com/',\n"
        "    'http://a.com\\\\b.com/', 'https:\\\\\\\\a.com/',\n"
        "    'http://a%2ecom/', 'http://[::1]%2f/', 'http://127.0.0.01/',\n"
        "    'http://0x7f000001/', 'http://017700000001/',\n"
        "    'http://a.com/' .. ('x'):rep(9000)}\n"
        "do\n"
        "  assert(parse_url(bad) == nil, bad)\n"
        "end\n"
        "assert(parse_url(nil) == nil and parse_url(42) == nil)\n"
        "u = parse_url('http://' .. ('a'):rep(63) .. '.com/')\n"
        "assert(u.host == ('a'):rep(63) .. '.com')\n"
        "u = parse_url('https://@a.com:0443/')\n"
        "assert(u.userinfo == '' and u.host == 'a.com' and u.port == 443)\n"
        "u = parse_url('http://1.2.3.4/')\n"
        "assert(u.host == '1.2.3.4')\n"
        "u.host = 'mutable'\n");
}

int
pt_run_helper_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob),
        cmocka_unit_test(test_glob_limits),
        cmocka_unit_test(test_affixes),
        cmocka_unit_test(test_cidr),
        cmocka_unit_test(test_ip_is_private),
        cmocka_unit_test(test_parse_url),
    };

    return cmocka_run_group_tests_name("policy helpers", tests, NULL, NULL);
}
