/*
 * pol_net.c - address helpers given to policies as globals:
 *   cidr_contains(cidr, addr)  is the literal address addr in cidr?
 *   ip_is_private(host)        could host be anything but a public
 *                              destination?
 * and the host rules parse_url (pol_url.c, the layer above) builds on.
 *
 * How it works: addresses are parsed with inet_pton() only (no DNS, no
 * locale): strict dotted-quad IPv4, or IPv6 (in [brackets] or not).
 *
 * ip_is_private() fails closed. It is false only for a host name of the
 * usual shape that is not a local one, or for an address outside every
 * special block; everything else is true:
 *   - IPv4 in a block of the IANA IPv4 Special-Purpose Address Registry
 *     (all of them, even the few marked globally reachable: an agent has
 *     no business with an AS112 server or an anycast relay), multicast
 *     224/4 and 240/4 with the broadcast address (one block, 224/3);
 *   - IPv6 outside global unicast 2000::/3 (loopback, unspecified, every
 *     form that carries an IPv4 address in ::/8 or 64:ff9b::/96 and
 *     64:ff9b:1::/48, discard, SRv6, unique-local, link- and site-local,
 *     multicast, unassigned space) or in a registry block inside it
 *     (2001::/23 with Teredo, 2001:db8::/32, 6to4 2002::/16,
 *     2620:4f:8000::/48, 3fff::/20). Whole blocks count, so there is
 *     nothing to unwrap: ::ffff:8.8.8.8 is private too, as no URL has a
 *     reason to spell a public address that way;
 *   - a string that is neither an address nor a well-formed name: the
 *     IPv4 shorthands inet_aton() and getaddrinfo() accept (2130706433,
 *     0x7f.1, 0177.0.0.1, 127.1, "127.0.0.1 junk"), a zone id (fe80::1%0),
 *     brackets around anything but IPv6, percent signs, non-ASCII, empty
 *     labels, a label over 63 or a name over 253 bytes, a NUL, a
 *     non-string;
 *   - a name that resolves locally: one label only (the resolver's search
 *     list makes "intranet" an internal host), localhost, and names under
 *     localhost, local (mDNS), internal, home.arpa and localdomain.
 * Names are not resolved: a public name that resolves to a private
 * address must be stopped where the connection is made.
 *
 * The tables come from IANA's iana-ipv4-special-registry-1.csv and
 * iana-ipv6-special-registry-1.csv as of 2026-07-18 (see
 * tests/vectors/ip/special-addresses.txt, which the unit test reads);
 * refresh them before a release.
 */
#include "pol_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

/* A prefix: the first bytes of the network address and its length. */
struct pol_block {
    unsigned char net[16];
    int bits;
};

/* IPv4 blocks that are never a public destination. */
static const struct pol_block pol_v4_special[] = {
    {{0, 0, 0, 0}, 8},       /* "this network" */
    {{10, 0, 0, 0}, 8},      /* private-use */
    {{100, 64, 0, 0}, 10},   /* shared address space (CGN) */
    {{127, 0, 0, 0}, 8},     /* loopback */
    {{169, 254, 0, 0}, 16},  /* link local, cloud metadata */
    {{172, 16, 0, 0}, 12},   /* private-use */
    {{192, 0, 0, 0}, 24},    /* IETF protocol assignments */
    {{192, 0, 2, 0}, 24},    /* TEST-NET-1 */
    {{192, 31, 196, 0}, 24}, /* AS112-v4 */
    {{192, 52, 193, 0}, 24}, /* AMT */
    {{192, 88, 99, 0}, 24},  /* 6to4 relay anycast (deprecated) */
    {{192, 168, 0, 0}, 16},  /* private-use */
    {{192, 175, 48, 0}, 24}, /* direct delegation AS112 */
    {{198, 18, 0, 0}, 15},   /* benchmarking */
    {{198, 51, 100, 0}, 24}, /* TEST-NET-2 */
    {{203, 0, 113, 0}, 24},  /* TEST-NET-3 */
    {{224, 0, 0, 0}, 3},     /* multicast 224/4, reserved 240/4, broadcast */
};

/* Registry blocks inside global unicast 2000::/3. */
static const struct pol_block pol_v6_special[] = {
    {{0x20, 0x01, 0x00, 0x00}, 23},             /* IETF, Teredo 2001::/32 */
    {{0x20, 0x01, 0x0d, 0xb8}, 32},             /* documentation */
    {{0x20, 0x02}, 16},                         /* 6to4 */
    {{0x26, 0x20, 0x00, 0x4f, 0x80, 0x00}, 48}, /* direct delegation AS112 */
    {{0x3f, 0xff, 0x00}, 20},                   /* documentation */
};

/* Names (and the names below them) that resolve locally. */
static const char *const pol_local_names[] = {
    "localhost", "local", "internal", "home.arpa", "localdomain", NULL};

static int
pol_is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int
pol_is_hex(int c)
{
    return pol_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static char
pol_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int
pol_ip_parse(const char *s, size_t n, struct pol_ip *ip)
{
    char buf[64], *pct;

    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        s++;
        n -= 2;
    }
    if (n == 0 || n >= sizeof(buf) || memchr(s, '\0', n) != NULL)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    memset(ip, 0, sizeof(*ip));
    if (strchr(buf, ':') != NULL) {
        pct = strchr(buf, '%');
        if (pct != NULL)
            *pct = '\0';
        ip->v6 = 1;
        return inet_pton(AF_INET6, buf, ip->b) == 1;
    }
    return inet_pton(AF_INET, buf, ip->b) == 1;
}

static int
pol_prefix_equal(const unsigned char *a, const unsigned char *b, int bits)
{
    size_t full = (size_t)bits / 8;
    unsigned rest = (unsigned)bits % 8;
    unsigned char mask;

    if (memcmp(a, b, full) != 0)
        return 0;
    if (rest == 0)
        return 1;
    mask = (unsigned char)(0xFFu << (8 - rest));
    return (a[full] & mask) == (b[full] & mask);
}

static int
pol_in_blocks(const unsigned char *a, const struct pol_block *t, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (pol_prefix_equal(a, t[i].net, t[i].bits))
            return 1;
    return 0;
}

static int
pol_ip_private(const struct pol_ip *ip)
{
    if (!ip->v6)
        return pol_in_blocks(ip->b, pol_v4_special,
                             sizeof(pol_v4_special) /
                                 sizeof(pol_v4_special[0]));
    if ((ip->b[0] & 0xE0) != 0x20) /* outside 2000::/3 */
        return 1;
    return pol_in_blocks(ip->b, pol_v6_special,
                         sizeof(pol_v6_special) / sizeof(pol_v6_special[0]));
}

int
pol_ends_in_number(const char *h, size_t n)
{
    size_t start, i;

    if (n > 0 && h[n - 1] == '.')
        n--;
    start = n;
    while (start > 0 && h[start - 1] != '.')
        start--;
    if (start == n)
        return 0;
    if (n - start >= 2 && h[start] == '0' && pol_lower(h[start + 1]) == 'x') {
        for (i = start + 2; i < n; i++)
            if (!pol_is_hex(h[i]))
                return 0;
        return 1;
    }
    for (i = start; i < n; i++)
        if (!pol_is_digit(h[i]))
            return 0;
    return 1;
}

int
pol_host_name_ok(const char *h, size_t n)
{
    size_t i, label = 0;
    char c;

    if (n > 1 && h[n - 1] == '.')
        n--;
    if (n == 0 || n > IG_DNS_NAME_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        c = h[i];
        if (c == '.') {
            if (label == 0)
                return 0;
            label = 0;
            continue;
        }
        if (!pol_is_digit(c) && !(pol_lower(c) >= 'a' && pol_lower(c) <= 'z') &&
            c != '-' && c != '_')
            return 0;
        if (++label > IG_DNS_LABEL_MAX)
            return 0;
    }
    return label > 0 && !pol_ends_in_number(h, n);
}

/* 1 when the name h (n bytes, no final dot) is suffix or ends ".suffix". */
static int
pol_name_under(const char *h, size_t n, const char *suffix)
{
    size_t m = strlen(suffix), i;

    if (n < m || (n > m && h[n - m - 1] != '.'))
        return 0;
    for (i = 0; i < m; i++)
        if (pol_lower(h[n - m + i]) != suffix[i])
            return 0;
    return 1;
}

/* A well-formed name (pol_host_name_ok): does it resolve locally? */
static int
pol_name_local(const char *h, size_t n)
{
    size_t i;

    if (h[n - 1] == '.')
        n--;
    if (memchr(h, '.', n) == NULL)
        return 1;
    for (i = 0; pol_local_names[i] != NULL; i++)
        if (pol_name_under(h, n, pol_local_names[i]))
            return 1;
    return 0;
}

int
pol_host_private(const char *h, size_t n)
{
    struct pol_ip ip;

    if (n == 0 || memchr(h, '%', n) != NULL)
        return 1;
    if (h[0] == '[' || memchr(h, ':', n) != NULL)
        return !pol_ip_parse(h, n, &ip) || !ip.v6 || pol_ip_private(&ip);
    if (pol_ip_parse(h, n, &ip))
        return pol_ip_private(&ip);
    return !pol_host_name_ok(h, n) || pol_name_local(h, n);
}

static int
pol_ip_is_private(lua_State *L)
{
    size_t n;
    const char *h;

    if (lua_type(L, 1) != LUA_TSTRING) {
        lua_pushboolean(L, 1);
        return 1;
    }
    h = lua_tolstring(L, 1, &n);
    lua_pushboolean(L, pol_host_private(h, n));
    return 1;
}

/* "addr/len" or "addr" (a single host). */
static int
pol_parse_cidr(const char *c, size_t n, struct pol_ip *net, int *bits)
{
    size_t slash = n, i;
    int max, v = 0;

    for (i = 0; i < n; i++)
        if (c[i] == '/')
            slash = i;
    if (!pol_ip_parse(c, slash, net))
        return 0;
    max = net->v6 ? 128 : 32;
    if (slash == n) {
        *bits = max;
        return 1;
    }
    if (n - slash < 2 || n - slash > 4)
        return 0;
    for (i = slash + 1; i < n; i++) {
        if (!pol_is_digit(c[i]))
            return 0;
        v = v * 10 + (c[i] - '0');
    }
    if (v > max)
        return 0;
    *bits = v;
    return 1;
}

static int
pol_cidr_contains(lua_State *L)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
                                             0, 0, 0, 0, 0xff, 0xff};
    size_t n, an;
    const char *c = luaL_checklstring(L, 1, &n), *a;
    struct pol_ip net, ip;
    int bits;

    if (!pol_parse_cidr(c, n, &net, &bits))
        return luaL_error(L, "cidr_contains: malformed CIDR '%s'", c);
    if (lua_type(L, 2) != LUA_TSTRING) {
        lua_pushboolean(L, 0);
        return 1;
    }
    a = lua_tolstring(L, 2, &an);
    if (!pol_ip_parse(a, an, &ip)) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (!net.v6 && ip.v6 && memcmp(ip.b, mapped, 12) == 0) {
        memmove(ip.b, ip.b + 12, 4); /* ::ffff:a.b.c.d is IPv4 */
        ip.v6 = 0;
    }
    lua_pushboolean(L, net.v6 == ip.v6 && pol_prefix_equal(net.b, ip.b, bits));
    return 1;
}

static const luaL_Reg pol_net_funcs[] = {{"cidr_contains", pol_cidr_contains},
                                         {"ip_is_private", pol_ip_is_private},
                                         {NULL, NULL}};

void
pol_open_net(lua_State *L, int idx)
{
    const luaL_Reg *r;

    for (r = pol_net_funcs; r->name != NULL; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, idx, r->name);
    }
}
