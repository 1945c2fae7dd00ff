/*
 * test_addr.c - client addresses (pdp/pdp_addr.c): strict address text,
 * X-Forwarded-For hops, trusted_proxies blocks, and who the client is
 * behind a chain of proxies - a spoofed hop, an untrusted peer, garbage,
 * several headers, a chain longer than the walk.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "ig_limits.h"
#include "pdp_addr.h"

static struct pdp_addr
addr(const char *s)
{
    struct pdp_addr a;

    if (pdp_addr_parse(s, strlen(s), &a) != 0)
        fail_msg("not an address: %s", s);
    return a;
}

static void
assert_text(const struct pdp_addr *a, const char *want)
{
    char text[PDP_ADDR_STRLEN];

    pdp_addr_format(a, text);
    assert_string_equal(text, want);
}

static void
test_parse_strict(void **state)
{
    static const char *const bad[] = {
        "",           "1.2.3",        "127.1",          "0x7f.0.0.1",
        "0177.0.0.1", "1.2.3.4 ",     " 1.2.3.4",       "1.2.3.4.5",
        "256.0.0.1",  "fe80::1%eth0", "2001:db8::1::1", "unknown",
        "1.2.3.4/8",  "::ffff:127.1"};
    struct pdp_addr a;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(pdp_addr_parse(bad[i], strlen(bad[i]), &a), -1);
    /* An embedded NUL is not the end of the text. */
    assert_int_equal(pdp_addr_parse("1.2.3.4\0x", 9, &a), -1);
    a = addr("192.0.2.1");
    assert_text(&a, "192.0.2.1");
    a = addr("::ffff:192.0.2.1"); /* mapped: the same address */
    assert_text(&a, "192.0.2.1");
    a = addr("2001:DB8:0:0:0:0:0:1");
    assert_text(&a, "2001:db8::1");
}

static void
test_hops(void **state)
{
    static const struct {
        const char *in, *want;
    } ok[] = {{" 198.51.100.7\t", "198.51.100.7"},
              {"198.51.100.7:8080", "198.51.100.7"},
              {"[2001:db8::7]", "2001:db8::7"},
              {"[2001:db8::7]:443", "2001:db8::7"},
              {"2001:db8::7", "2001:db8::7"},
              {"[::ffff:192.0.2.9]", "192.0.2.9"}};
    static const char *const bad[] = {
        "",         "unknown",        "[2001:db8::7",   "[192.0.2.1]",
        "1.2.3.4:", "1.2.3.4:123456", "1.2.3.4:x",      "[::1]x",
        "[::1]:",   "_hidden",        "1.2.3.4 5.6.7.8"};
    struct pdp_addr a;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(pdp_addr_parse_hop(ok[i].in, strlen(ok[i].in), &a), 0);
        assert_text(&a, ok[i].want);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(pdp_addr_parse_hop(bad[i], strlen(bad[i]), &a), -1);
}

static void
test_nets(void **state)
{
    struct pdp_net n[3];
    struct pdp_addr a;
    char why[128];
    (void)state;

    assert_int_equal(pdp_net_parse("10.0.0.0/8", &n[0], why, sizeof(why)), 0);
    assert_int_equal(pdp_net_parse("192.0.2.7", &n[1], why, sizeof(why)), 0);
    assert_int_equal(pdp_net_parse("2001:db8::/32", &n[2], why, sizeof(why)),
                     0);
    a = addr("10.200.3.4");
    assert_true(pdp_nets_contain(n, 3, &a));
    a = addr("11.0.0.1");
    assert_false(pdp_nets_contain(n, 3, &a));
    a = addr("192.0.2.7");
    assert_true(pdp_nets_contain(n, 3, &a));
    a = addr("192.0.2.8");
    assert_false(pdp_nets_contain(n, 3, &a));
    a = addr("2001:db8:ffff::1");
    assert_true(pdp_nets_contain(n, 3, &a));
    a = addr("2001:db9::1");
    assert_false(pdp_nets_contain(n, 3, &a));
    /* A /0 holds everything; none holds nothing. */
    assert_int_equal(pdp_net_parse("0.0.0.0/0", &n[0], why, sizeof(why)), 0);
    a = addr("203.0.113.5");
    assert_true(pdp_nets_contain(n, 1, &a));
    assert_false(pdp_nets_contain(n, 0, &a));
    /* Mistakes, each explained. */
    assert_int_equal(pdp_net_parse("10.0.0.1/8", &n[0], why, sizeof(why)), -1);
    assert_non_null(strstr(why, "past the prefix length"));
    assert_int_equal(pdp_net_parse("10.0.0.0/33", &n[0], why, sizeof(why)), -1);
    assert_non_null(strstr(why, "0 to 32"));
    assert_int_equal(pdp_net_parse("::/129", &n[0], why, sizeof(why)), -1);
    assert_int_equal(pdp_net_parse("10.0.0.0/", &n[0], why, sizeof(why)), -1);
    assert_int_equal(pdp_net_parse("10.0.0.0/8x", &n[0], why, sizeof(why)), -1);
    assert_int_equal(pdp_net_parse("proxy.example", &n[0], why, sizeof(why)),
                     -1);
    assert_non_null(strstr(why, "not an IPv4 or IPv6 address"));
}

static void
test_keys(void **state)
{
    struct pdp_addr a;
    char key[PDP_ADDR_STRLEN];
    (void)state;

    a = addr("198.51.100.7");
    pdp_addr_key(&a, key);
    assert_string_equal(key, "198.51.100.7");
    a = addr("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    pdp_addr_key(&a, key);
    assert_string_equal(key, "2001:db8:1:2::/64");
}

/* The client of a request from peer with these X-Forwarded-For headers,
   127.0.0.1 and 10.0.0.0/8 trusted, as text. */
static const char *
client_of(const char *peer, const char *const *xff, size_t n)
{
    static char text[PDP_ADDR_STRLEN];
    struct pdp_net trusted[2];
    struct pdp_addr p = addr(peer), out;

    assert_int_equal(pdp_net_parse("127.0.0.1", &trusted[0], NULL, 0), 0);
    assert_int_equal(pdp_net_parse("10.0.0.0/8", &trusted[1], NULL, 0), 0);
    pdp_addr_client(&p, xff, n, trusted, 2, &out);
    pdp_addr_format(&out, text);
    return text;
}

static void
test_client(void **state)
{
    const char *one[1], *two[2];
    (void)state;

    /* No header, or an untrusted peer: the peer. */
    assert_string_equal(client_of("127.0.0.1", NULL, 0), "127.0.0.1");
    one[0] = "198.51.100.7";
    assert_string_equal(client_of("203.0.113.1", one, 1), "203.0.113.1");
    /* A trusted peer: the rightmost hop that is not trusted. */
    assert_string_equal(client_of("127.0.0.1", one, 1), "198.51.100.7");
    one[0] = "203.0.113.9, 10.1.2.3";
    assert_string_equal(client_of("127.0.0.1", one, 1), "203.0.113.9");
    one[0] = "6.6.6.6, 203.0.113.10"; /* the client wrote 6.6.6.6 */
    assert_string_equal(client_of("127.0.0.1", one, 1), "203.0.113.10");
    /* Every hop trusted: the leftmost. */
    one[0] = "10.9.9.9,10.0.0.1";
    assert_string_equal(client_of("10.0.0.2", one, 1), "10.9.9.9");
    /* Garbage stops the walk at the trusted hop that passed it on. */
    one[0] = "garbage";
    assert_string_equal(client_of("127.0.0.1", one, 1), "127.0.0.1");
    one[0] = "198.51.100.1, garbage, 10.0.0.7";
    assert_string_equal(client_of("127.0.0.1", one, 1), "10.0.0.7");
    one[0] = "";
    assert_string_equal(client_of("127.0.0.1", one, 1), "127.0.0.1");
    one[0] = "198.51.100.1,";
    assert_string_equal(client_of("127.0.0.1", one, 1), "127.0.0.1");
    /* Several headers are one list, in order. */
    two[0] = "6.6.6.6";
    two[1] = "203.0.113.11";
    assert_string_equal(client_of("127.0.0.1", two, 2), "203.0.113.11");
    two[0] = "198.51.100.3";
    two[1] = "10.0.0.9";
    assert_string_equal(client_of("127.0.0.1", two, 2), "198.51.100.3");
    two[1] = NULL;
    assert_string_equal(client_of("127.0.0.1", two, 2), "198.51.100.3");
    /* Ports and brackets. */
    one[0] = "[2001:db8::1]:443, 10.0.0.1:80";
    assert_string_equal(client_of("127.0.0.1", one, 1), "2001:db8::1");
    /* IPv4-mapped IPv6 is the IPv4 address, in a hop and as the peer. */
    one[0] = "198.51.100.4, ::ffff:10.0.0.3";
    assert_string_equal(client_of("127.0.0.1", one, 1), "198.51.100.4");
    one[0] = "198.51.100.5";
    assert_string_equal(client_of("::ffff:127.0.0.1", one, 1), "198.51.100.5");
    one[0] = "::ffff:198.51.100.6";
    assert_string_equal(client_of("127.0.0.1", one, 1), "198.51.100.6");
    /* Spaces, tabs and empty hops: only a hop that parses counts. */
    one[0] = " 198.51.100.8 ,\t10.0.0.4\t";
    assert_string_equal(client_of("127.0.0.1", one, 1), "198.51.100.8");
    one[0] = "198.51.100.8, , 10.0.0.4";
    assert_string_equal(client_of("127.0.0.1", one, 1), "10.0.0.4");
    one[0] = "198.51.100.8 10.0.0.4";
    assert_string_equal(client_of("127.0.0.1", one, 1), "127.0.0.1");
    one[0] = "for=198.51.100.8"; /* Forwarded syntax is not an address */
    assert_string_equal(client_of("127.0.0.1", one, 1), "127.0.0.1");
}

static void
test_walk_is_bounded(void **state)
{
    char list[IG_XFF_MAX_HOPS * 16 + 64];
    const char *one[1] = {list};
    size_t n = 0;
    int i;
    (void)state;

    /* An untrusted client, then more trusted hops than are read. */
    n += (size_t)snprintf(list + n, sizeof(list) - n, "198.51.100.9");
    for (i = 0; i < IG_XFF_MAX_HOPS + 2; i++)
        n += (size_t)snprintf(list + n, sizeof(list) - n, ", 10.0.%d.1", i);
    assert_string_equal(client_of("127.0.0.1", one, 1), "10.0.2.1");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_strict),
        cmocka_unit_test(test_hops),
        cmocka_unit_test(test_nets),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_client),
        cmocka_unit_test(test_walk_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
