/*
 * test_policy_net.c - ip_is_private() against the IANA special-purpose
 * address registries (tests/vectors/ip/special-addresses.txt): the first
 * and last address of every block are private, the addresses just outside
 * are public unless another block holds them. Then the spellings a
 * hostile agent tries: IPv4 shorthands glibc accepts, IPv6 forms that
 * carry an IPv4 address, zone ids, and names that resolve locally.
 *
 * The classifier is called through its C entry point (pol_host_private,
 * pol_int.h) for the table, and through Lua for the helper's contract.
 */
#include "policy_util.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_int.h"

#define PT_ROWS_MAX 128

/* One row of the table: an address family, a prefix and its length. */
struct pt_block {
    int v6;
    unsigned char net[16];
    int bits;
    char text[64];
};

static int
pt_host_private(const char *h)
{
    return pol_host_private(h, strlen(h));
}

/* Parse "addr/len" into b; fails the test on a malformed row. */
static void
pt_parse_block(const char *text, size_t n, struct pt_block *b)
{
    char addr[64];
    const char *slash = memchr(text, '/', n);
    char *end;
    long bits;

    assert_non_null(slash);
    assert_true((size_t)(slash - text) < sizeof(addr) && n < sizeof(b->text));
    memcpy(addr, text, (size_t)(slash - text));
    addr[slash - text] = '\0';
    memcpy(b->text, text, n);
    b->text[n] = '\0';
    b->v6 = strchr(addr, ':') != NULL;
    memset(b->net, 0, sizeof(b->net));
    if (inet_pton(b->v6 ? AF_INET6 : AF_INET, addr, b->net) != 1)
        fail_msg("special-addresses.txt: bad prefix '%s'", b->text);
    bits = strtol(slash + 1, &end, 10);
    if (end != text + n || bits < 0 || bits > (b->v6 ? 128 : 32))
        fail_msg("special-addresses.txt: bad length in '%s'", b->text);
    b->bits = (int)bits;
}

/* Read the table: prefix TAB source TAB name, '#' comments. */
static size_t
pt_read_table(struct pt_block *rows, size_t max)
{
    char *text = tu_read_vector("ip/special-addresses.txt", NULL);
    char *line = text, *nl, *tab;
    size_t n = 0;

    for (; *line != '\0'; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL)
            fail_msg("special-addresses.txt: no final newline");
        if (line[0] == '#' || line == nl)
            continue;
        tab = memchr(line, '\t', (size_t)(nl - line));
        assert_non_null(tab);
        assert_true(n < max);
        pt_parse_block(line, (size_t)(tab - line), &rows[n++]);
    }
    free(text);
    return n;
}

static int
pt_in_block(const struct pt_block *b, int v6, const unsigned char *a)
{
    int full = b->bits / 8, rest = b->bits % 8;
    unsigned char mask;

    if (b->v6 != v6 || memcmp(a, b->net, (size_t)full) != 0)
        return 0;
    mask = (unsigned char)(0xFF00u >> rest);
    return rest == 0 || (a[full] & mask) == (b->net[full] & mask);
}

/* The first (last = 0) or last address of b into out. */
static void
pt_edge(const struct pt_block *b, int last, unsigned char *out)
{
    int i, len = b->v6 ? 16 : 4;

    for (i = 0; i < len; i++) {
        int keep = b->bits - i * 8;
        unsigned mask = keep >= 8 ? 0xFFu : keep <= 0 ? 0u : 0xFF00u >> keep;

        out[i] =
            (unsigned char)(((b->net[i] & mask) | (last ? ~mask : 0u)) & 0xFFu);
    }
}

/* Add delta (+1 or -1) to the address; 0 when it wraps around. */
static int
pt_step(unsigned char *a, int len, int delta)
{
    int i;

    for (i = len - 1; i >= 0; i--) {
        if (delta > 0 && a[i]++ != 0xFF)
            return 1;
        if (delta < 0 && a[i]-- != 0)
            return 1;
    }
    return 0;
}

static void
pt_check_addr(const unsigned char *a, int v6, int want, const char *why,
              const struct pt_block *row)
{
    char text[INET6_ADDRSTRLEN + 2], bracketed[INET6_ADDRSTRLEN + 4];

    assert_non_null(inet_ntop(v6 ? AF_INET6 : AF_INET, a, text, sizeof(text)));
    if (pt_host_private(text) != want)
        fail_msg("%s %s of %s: ip_is_private should be %s", why, text,
                 row->text, want ? "true" : "false");
    if (v6) {
        (void)snprintf(bracketed, sizeof(bracketed), "[%s]", text);
        assert_int_equal(pt_host_private(bracketed), want);
    }
}

static void
test_special_registries(void **state)
{
    struct pt_block rows[PT_ROWS_MAX];
    unsigned char a[16];
    size_t n = pt_read_table(rows, PT_ROWS_MAX), i, j;
    int side, want, len;

    (void)state;
    assert_true(n >= 60);
    for (i = 0; i < n; i++) {
        len = rows[i].v6 ? 16 : 4;
        for (side = 0; side < 2; side++) {
            pt_edge(&rows[i], side, a);
            pt_check_addr(a, rows[i].v6, 1, side ? "last" : "first", &rows[i]);
            if (!pt_step(a, len, side ? 1 : -1))
                continue;
            want = 0;
            for (j = 0; j < n; j++)
                want |= pt_in_block(&rows[j], rows[i].v6, a);
            pt_check_addr(a, rows[i].v6, want, "neighbour", &rows[i]);
        }
    }
}

/* Strings that name private addresses in some spelling, or no host. */
static const char *const pt_private[] = {
    /* IPv4 shorthands inet_aton and getaddrinfo accept (NOTES-2 s. 7) */
    "2130706433",
    "0x7f000001",
    "017700000001",
    "0177.0.0.1",
    "0x7f.1",
    "127.1",
    "127.0.1",
    "0x7F.0.0.0x1",
    "127.0.0.01",
    "127.16777215",
    "0",
    "0x",
    "127.0.0.1 junk",
    "127.0.0.1\tx",
    "08.0.0.1",
    "256.0.0.1",
    "1.2.3.4.5",
    "4294967296",
    "127.0.0.1.",
    " 127.0.0.1",
    "127.0.0.1 ",
    "134744072",
    "8.8.2056",
    "8.526344",
    "1.2.3.0x4",
    "010.0.0.1",
    /* IPv6 forms carrying an IPv4 address, every spelling */
    "::ffff:127.0.0.1",
    "::FFFF:7F00:1",
    "::ffff:7f00:1",
    "0:0:0:0:0:ffff:127.0.0.1",
    "0000:0000:0000:0000:0000:ffff:7f00:0001",
    "[::ffff:7f00:1]",
    "::ffff:8.8.8.8",
    "::ffff:0.0.0.0",
    "::ffff:0:7f00:1",
    "::ffff:0:127.0.0.1",
    "::ffff:0:808:808",
    "::127.0.0.1",
    "::8.8.8.8",
    "::a9fe:a9fe",
    "64:ff9b::7f00:1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::8.8.8.8",
    "64:ff9b:1:c000:2:2100::",
    "64:ff9b:1::808:808",
    "2002:7f00:1::1",
    "2002:a9fe:a9fe::",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
    "::ffff:0177.0.0.1",
    "::ffff:127.1",
    "[::ffff:127.1]",
    /* zone ids, brackets that do not hold an IPv6 address */
    "fe80::1%eth0",
    "[fe80::1%25eth0]",
    "2606:4700::1111%eth0",
    "[::1",
    "::1]",
    "[]",
    "[127.0.0.1]",
    "[example.com]",
    "[::1]:80",
    ":::",
    /* names that resolve locally or through the search list */
    "localhost",
    "LOCALHOST",
    "localhost.",
    "a.localhost",
    "x.LocalHost.",
    "intranet",
    "intranet.",
    "metadata",
    "printer.local",
    "db.internal",
    "nas.home.arpa",
    "HOME.ARPA",
    "x.localdomain",
    /* not a host name at all */
    "",
    ".",
    "..",
    "a..com",
    ".example.com",
    "example.com..",
    "a b.com",
    "exa%6dple.com",
    "ex\\ample.com",
    "ex@mple.com",
    "example.com/x",
    "http://example.com",
    "caf\xc3\xa9.example",
    "\xff.example",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
    "example.123",
    "example.0x1f",
};

/* Public names and addresses: no false alarm. */
static const char *const pt_public[] = {
    "example.com",
    "example.com.",
    "api.github.com",
    "API.GitHub.COM",
    "xn--bcher-kva.example",
    "under_score.example.com",
    "a-b.example.org",
    "localhost.example.com",
    "notlocalhost.com",
    "local.example.com",
    "internal.example.com",
    "10.example.com",
    "127.0.0.1.example.com",
    "1e2.example",
    "0xg.example",
    "8.8.8.8",
    "1.1.1.1",
    "100.128.0.1",
    "198.20.0.1",
    "223.255.255.255",
    "2606:4700::1111",
    "[2606:4700::1111]",
    "2a00:1450:4001::200e",
    "2003::1",
    "3ffe::1",
    "2001:200::1",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
};

static void
test_spellings(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(pt_private) / sizeof(pt_private[0]); i++)
        if (!pt_host_private(pt_private[i]))
            fail_msg("'%s' should be private", pt_private[i]);
    for (i = 0; i < sizeof(pt_public) / sizeof(pt_public[0]); i++)
        if (pt_host_private(pt_public[i]))
            fail_msg("'%s' should be public", pt_public[i]);
}

/* Length limits of a DNS name: 63 bytes a label, 253 in all. */
static void
test_name_lengths(void **state)
{
    char name[300];
    size_t i;

    (void)state;
    memset(name, 'a', sizeof(name));
    memcpy(name + 63, ".com", 4);
    assert_false(pol_host_private(name, 67));
    memcpy(name + 64, ".com", 4);
    assert_true(pol_host_private(name, 68));
    memset(name, 'a', sizeof(name));
    for (i = 1; i < 253; i += 2)
        name[i] = '.';
    assert_false(pol_host_private(name, 253)); /* a.a...a: 253 bytes */
    name[253] = '.';
    assert_false(pol_host_private(name, 254)); /* and a final dot */
    assert_true(pol_host_private(name, 255));  /* a.a...a.a: 255 bytes */
}

/* The Lua helper: NUL inside, non-strings, and its cost on long input. */
static void
test_lua_contract(void **state)
{
    (void)state;
    pt_lua_asserts(
        "assert(ip_is_private('8.8.8.8') == false)\n"
        "assert(ip_is_private('127.0.0.1\\0') == true)\n"
        "assert(ip_is_private('example.com\\0.localhost') == true)\n"
        "assert(ip_is_private('8.8.8.8\\0') == true)\n"
        "assert(ip_is_private(nil) == true and ip_is_private(10) == true)\n"
        "assert(ip_is_private({}) == true)\n"
        "assert(ip_is_private(('a.'):rep(30000) .. 'com') == true)\n");
}

int
pt_run_net_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_special_registries),
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_name_lengths),
        cmocka_unit_test(test_lua_contract),
    };

    return cmocka_run_group_tests_name("policy ip_is_private", tests, NULL,
                                       NULL);
}
