/*
 * pol_net.c - network helpers given to policies as globals:
 *   cidr_contains(cidr, addr)  is the literal address addr in cidr?
 *   ip_is_private(host)        is host local, private or link-local?
 *   parse_url(url)             {scheme, host, port, path, query?,
 *                              userinfo?} or nil
 *
 * How it works: addresses are parsed with inet_pton() only (no DNS, no
 * locale): dotted-quad IPv4, or IPv6 (optionally in [brackets], a %zone is
 * dropped). An IPv6 address that carries an IPv4 one (::ffff:a.b.c.d,
 * ::a.b.c.d, 64:ff9b::a.b.c.d) is judged by that IPv4 address.
 *
 * ip_is_private() is true for 0/8, 10/8, 100.64/10, 127/8, 169.254/16,
 * 172.16/12, 192.168/16, ::, ::1, fc00::/7, fe80::/10, fec0::/10, those
 * carried in IPv6, and the names localhost and *.localhost (any case, one
 * trailing dot allowed). It fails closed on a host that URL parsers would
 * read as an IPv4 number but that is not a canonical dotted quad
 * (2130706433, 0x7f.1, 010.0.0.1, 127.1): where it goes depends on the
 * client, so it counts as private. Names are not resolved: a DNS name that
 * resolves to a private address must be stopped where the connection is
 * made.
 *
 * parse_url() is strict and returns nil rather than guess: it refuses
 * spaces, control bytes, non-ASCII, backslashes, a missing "//", a host
 * with characters outside [A-Za-z0-9._-] (so no percent-encoded hosts),
 * and a numeric-looking host that is not a canonical dotted quad. The
 * userinfo ends at the last '@' of the authority, as WHATWG parsers do.
 * Scheme and host are lowercased; port defaults to 80/443 for http/https;
 * an empty path is "/". Nothing is percent-decoded.
 */
#include "pol_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

struct pol_ip {
    int v6;
    unsigned char b[16]; /* IPv4 in b[0..3] */
};

struct pol_url {
    char scheme[32];
    char host[256];
    lua_Integer port; /* 0: none */
    const char *path, *query, *userinfo;
    size_t pathlen, querylen, userlen;
};

static int
pol_is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int
pol_is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
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

/* A literal IPv4 or IPv6 address, strictly. */
static int
pol_parse_ip(const char *s, size_t n, struct pol_ip *ip)
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

/* The IPv4 address an IPv6 one carries (mapped, compatible, NAT64). */
static int
pol_v6_carried_v4(const unsigned char *b, unsigned char v4[4])
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
                                             0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char compat[12] = {0};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0,
                                            0, 0,    0,    0,    0, 0};

    if (memcmp(b, mapped, 12) != 0 && memcmp(b, compat, 12) != 0 &&
        memcmp(b, nat64, 12) != 0)
        return 0;
    memcpy(v4, b + 12, 4);
    return 1;
}

static int
pol_v4_private(const unsigned char *a)
{
    return a[0] == 0 || a[0] == 10 || a[0] == 127 ||
           (a[0] == 100 && (a[1] & 0xC0) == 64) ||
           (a[0] == 169 && a[1] == 254) ||
           (a[0] == 172 && (a[1] & 0xF0) == 16) || (a[0] == 192 && a[1] == 168);
}

static int
pol_ip_private(const struct pol_ip *ip)
{
    unsigned char v4[4];

    if (!ip->v6)
        return pol_v4_private(ip->b);
    if (pol_v6_carried_v4(ip->b, v4))
        return pol_v4_private(v4); /* also :: and ::1 (0.0.0.0/8) */
    return (ip->b[0] & 0xFE) == 0xFC ||
           (ip->b[0] == 0xFE && (ip->b[1] & 0x80) == 0x80);
}

/* WHATWG "ends in a number": the last label is digits or 0x-hex. */
static int
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

static int
pol_is_localhost(const char *h, size_t n)
{
    static const char name[] = "localhost";
    size_t m = sizeof(name) - 1, i;

    if (n > 0 && h[n - 1] == '.')
        n--;
    if (n < m || (n > m && h[n - m - 1] != '.'))
        return 0;
    for (i = 0; i < m; i++)
        if (pol_lower(h[n - m + i]) != name[i])
            return 0;
    return 1;
}

static int
pol_host_private(const char *h, size_t n)
{
    struct pol_ip ip;
    size_t m = n > 0 && h[n - 1] == '.' ? n - 1 : n;

    if (pol_is_localhost(h, n))
        return 1;
    if (pol_parse_ip(h, m, &ip))
        return pol_ip_private(&ip);
    return pol_ends_in_number(h, n);
}

static int
pol_ip_is_private(lua_State *L)
{
    size_t n;
    const char *h;

    if (lua_type(L, 1) != LUA_TSTRING) {
        lua_pushboolean(L, 0);
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
    if (!pol_parse_ip(c, slash, net))
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
pol_cidr_contains(lua_State *L)
{
    size_t n, an;
    const char *c = luaL_checklstring(L, 1, &n), *a;
    struct pol_ip net, ip;
    unsigned char v4[4];
    int bits;

    if (!pol_parse_cidr(c, n, &net, &bits))
        return luaL_error(L, "cidr_contains: malformed CIDR '%s'", c);
    if (lua_type(L, 2) != LUA_TSTRING) {
        lua_pushboolean(L, 0);
        return 1;
    }
    a = lua_tolstring(L, 2, &an);
    if (!pol_parse_ip(a, an, &ip)) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (!net.v6 && ip.v6 && pol_v6_carried_v4(ip.b, v4) && ip.b[10] == 0xff) {
        memcpy(ip.b, v4, 4);
        ip.v6 = 0;
    }
    lua_pushboolean(L, net.v6 == ip.v6 && pol_prefix_equal(net.b, ip.b, bits));
    return 1;
}

/* A registered name: [A-Za-z0-9._-], no empty label, not numeric. */
static int
pol_reg_name_ok(const char *h, size_t n)
{
    struct pol_ip ip;
    size_t i;

    if (n == 0 || h[0] == '.')
        return 0;
    for (i = 0; i < n; i++) {
        if (h[i] == '.' && i + 1 < n && h[i + 1] == '.')
            return 0;
        if (!pol_is_alpha(h[i]) && !pol_is_digit(h[i]) && h[i] != '.' &&
            h[i] != '-' && h[i] != '_')
            return 0;
    }
    return !pol_ends_in_number(h, n) || pol_parse_ip(h, n, &ip);
}

/* ":port" (1..65535; empty means none) or nothing. */
static int
pol_url_port(const char *p, const char *end, struct pol_url *u)
{
    lua_Integer port = 0;
    size_t nd = 0;

    u->port = 0;
    if (p == end)
        return 1;
    if (*p++ != ':')
        return 0;
    for (; p < end; p++, nd++) {
        if (!pol_is_digit(*p) || nd == 5)
            return 0;
        port = port * 10 + (*p - '0');
    }
    if (nd > 0 && (port == 0 || port > 65535))
        return 0;
    u->port = port;
    return 1;
}

/* Host and port of an authority without userinfo. */
static int
pol_url_hostport(const char *h, size_t n, struct pol_url *u)
{
    const char *end = h + n, *p, *close;
    struct pol_ip ip;
    size_t hl, i;

    if (n > 0 && h[0] == '[') {
        close = memchr(h, ']', n);
        if (close == NULL || memchr(h, '%', n) != NULL ||
            !pol_parse_ip(h, (size_t)(close - h) + 1, &ip) || !ip.v6)
            return 0;
        p = close + 1;
        h++;
        hl = (size_t)(close - h);
    } else {
        close = memchr(h, ':', n);
        hl = close != NULL ? (size_t)(close - h) : n;
        p = h + hl;
        if (!pol_reg_name_ok(h, hl))
            return 0;
    }
    if (hl >= sizeof(u->host))
        return 0;
    for (i = 0; i < hl; i++)
        u->host[i] = pol_lower(h[i]);
    u->host[hl] = '\0';
    return pol_url_port(p, end, u);
}

/* Split url (n bytes) into u; 0 when it is not a URL we accept. */
static int
pol_url_split(const char *s, size_t n, struct pol_url *u)
{
    size_t i, start, auth, hs;

    memset(u, 0, sizeof(*u));
    if (n == 0 || n > POL_URL_MAX || !pol_is_alpha(s[0]))
        return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f ||
            s[i] == '\\')
            return 0;
    for (i = 1; i < n && s[i] != ':'; i++)
        if (!pol_is_alpha(s[i]) && !pol_is_digit(s[i]) && s[i] != '+' &&
            s[i] != '-' && s[i] != '.')
            return 0;
    if (i >= sizeof(u->scheme) || n - i < 3 || memcmp(s + i, "://", 3) != 0)
        return 0;
    for (start = 0; start < i; start++)
        u->scheme[start] = pol_lower(s[start]);
    start = i + 3;
    for (auth = start;
         auth < n && s[auth] != '/' && s[auth] != '?' && s[auth] != '#'; auth++)
        ;
    for (hs = start, i = start; i < auth; i++)
        if (s[i] == '@')
            hs = i + 1;
    if (hs > start) {
        u->userinfo = s + start;
        u->userlen = hs - 1 - start;
    }
    if (!pol_url_hostport(s + hs, auth - hs, u))
        return 0;
    for (i = auth; i < n && s[i] != '?' && s[i] != '#'; i++)
        ;
    u->path = s + auth;
    u->pathlen = i - auth;
    if (i < n && s[i] == '?') {
        u->query = s + i + 1;
        for (i++; i < n && s[i] != '#'; i++)
            ;
        u->querylen = (size_t)(s + i - u->query);
    }
    if (u->port == 0 && strcmp(u->scheme, "http") == 0)
        u->port = 80;
    if (u->port == 0 && strcmp(u->scheme, "https") == 0)
        u->port = 443;
    return 1;
}

static int
pol_parse_url(lua_State *L)
{
    struct pol_url u;
    size_t n;
    const char *s;

    if (lua_type(L, 1) != LUA_TSTRING ||
        (s = lua_tolstring(L, 1, &n), !pol_url_split(s, n, &u))) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 6);
    lua_pushstring(L, u.scheme);
    lua_setfield(L, -2, "scheme");
    lua_pushstring(L, u.host);
    lua_setfield(L, -2, "host");
    if (u.port != 0) {
        lua_pushinteger(L, u.port);
        lua_setfield(L, -2, "port");
    }
    if (u.pathlen > 0)
        lua_pushlstring(L, u.path, u.pathlen);
    else
        lua_pushliteral(L, "/");
    lua_setfield(L, -2, "path");
    if (u.query != NULL) {
        lua_pushlstring(L, u.query, u.querylen);
        lua_setfield(L, -2, "query");
    }
    if (u.userinfo != NULL) {
        lua_pushlstring(L, u.userinfo, u.userlen);
        lua_setfield(L, -2, "userinfo");
    }
    return 1;
}

static const luaL_Reg pol_net_funcs[] = {{"cidr_contains", pol_cidr_contains},
                                         {"ip_is_private", pol_ip_is_private},
                                         {"parse_url", pol_parse_url},
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
