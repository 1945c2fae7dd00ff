/*
 * pol_url.c - parse_url(url), given to policies as a global: {scheme, host,
 * port, path, query?, userinfo?} or nil.
 *
 * How it works: one strict pass that returns nil rather than guess where
 * URL parsers disagree. It refuses spaces, control bytes, non-ASCII,
 * backslashes (WHATWG reads "\" as "/" in http URLs, curl does not), a
 * missing "//", and a host that is neither a bracketed IPv6 address (no
 * zone id), nor a strict dotted-quad IPv4 address, nor a DNS name of
 * [A-Za-z0-9_-] labels (1 to 63 bytes, 253 in all, one final dot allowed)
 * whose last label is not numeric: so no percent-encoded hosts and no
 * IPv4 shorthands (2130706433, 0x7f.1, 127.1), which parsers read
 * differently. The userinfo ends at the last '@' of the authority, as
 * WHATWG parsers do; it is returned, and policies should refuse it.
 * Scheme and host are lowercased; port defaults to 80/443 for http/https
 * and an explicit port is 1..65535 (at most five digits); an empty path is
 * "/". Nothing is percent-decoded.
 */
#include "pol_int.h"

#include <string.h>

struct pol_url {
    char scheme[32];
    char host[IG_DNS_NAME_MAX + 2];
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

static char
pol_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
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
            !pol_ip_parse(h, (size_t)(close - h) + 1, &ip) || !ip.v6)
            return 0;
        p = close + 1;
        h++;
        hl = (size_t)(close - h);
    } else {
        close = memchr(h, ':', n);
        hl = close != NULL ? (size_t)(close - h) : n;
        p = h + hl;
        if (!pol_host_name_ok(h, hl) && !(pol_ip_parse(h, hl, &ip) && !ip.v6))
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
    if (n == 0 || n > IG_POLICY_URL_MAX || !pol_is_alpha(s[0]))
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

int
pol_url_valid(const char *s, size_t n, char *host, size_t hostsz, long *port)
{
    struct pol_url u;
    size_t hl;

    if (!pol_url_split(s, n, &u))
        return 0;
    hl = strlen(u.host);
    if (hostsz > 0) {
        hl = hl < hostsz ? hl : hostsz - 1;
        memcpy(host, u.host, hl);
        host[hl] = '\0';
    }
    *port = (long)u.port;
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

void
pol_open_url(lua_State *L, int idx)
{
    lua_pushcfunction(L, pol_parse_url);
    lua_setfield(L, idx, "parse_url");
}
