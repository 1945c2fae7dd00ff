/*
 * pdp_addr.c - addresses, address blocks and the X-Forwarded-For walk
 * (the rules are in pdp_addr.h).
 *
 * Every parser here reads bytes an untrusted client sent (the header) or
 * an operator wrote (the config): each copies at most PDP_ADDR_STRLEN
 * bytes into a buffer of its own, refuses an embedded NUL, and hands the
 * text to inet_pton, which takes only the strict forms.
 */
#include "pdp_addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "ig_limits.h"

static const unsigned char mapped_prefix[12] = {0, 0, 0, 0, 0,    0,
                                                0, 0, 0, 0, 0xff, 0xff};

static int
is_v4(const struct pdp_addr *a)
{
    return memcmp(a->b, mapped_prefix, sizeof(mapped_prefix)) == 0;
}

int
pdp_addr_parse(const char *s, size_t len, struct pdp_addr *out)
{
    char text[PDP_ADDR_STRLEN];
    struct in_addr v4;

    if (s == NULL || len == 0 || len >= sizeof(text) ||
        memchr(s, '\0', len) != NULL)
        return -1;
    memcpy(text, s, len);
    text[len] = '\0';
    if (inet_pton(AF_INET, text, &v4) == 1) {
        memcpy(out->b, mapped_prefix, sizeof(mapped_prefix));
        memcpy(out->b + 12, &v4, 4);
        return 0;
    }
    return inet_pton(AF_INET6, text, out->b) == 1 ? 0 : -1;
}

/* 1 when the len bytes at s are 1 to 5 decimal digits. */
static int
is_port(const char *s, size_t len)
{
    size_t i;

    if (len == 0 || len > 5)
        return 0;
    for (i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

int
pdp_addr_parse_hop(const char *s, size_t len, struct pdp_addr *out)
{
    const char *colon, *close;

    while (len > 0 && (s[0] == ' ' || s[0] == '\t')) {
        s++;
        len--;
    }
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len > 0 && s[0] == '[') { /* [v6] or [v6]:port */
        close = memchr(s, ']', len);
        if (close == NULL)
            return -1;
        if ((size_t)(close - s) + 1 < len &&
            (close[1] != ':' ||
             !is_port(close + 2, len - (size_t)(close - s) - 2)))
            return -1;
        /* Brackets hold IPv6 text only. */
        if (memchr(s, ':', (size_t)(close - s)) == NULL)
            return -1;
        return pdp_addr_parse(s + 1, (size_t)(close - s) - 1, out);
    }
    colon = memchr(s, ':', len);
    if (colon != NULL &&
        memchr(colon + 1, ':', len - (size_t)(colon - s) - 1) == NULL) {
        /* One colon: a.b.c.d:port. */
        if (!is_port(colon + 1, len - (size_t)(colon - s) - 1) ||
            pdp_addr_parse(s, (size_t)(colon - s), out) != 0 || !is_v4(out))
            return -1;
        return 0;
    }
    return pdp_addr_parse(s, len, out);
}

int
pdp_addr_from_sockaddr(const struct sockaddr *sa, struct pdp_addr *out)
{
    if (sa == NULL)
        return -1;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)sa;
        memcpy(out->b, mapped_prefix, sizeof(mapped_prefix));
        memcpy(out->b + 12, &in->sin_addr, 4);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)sa;
        memcpy(out->b, &in6->sin6_addr, 16);
        return 0;
    }
    return -1;
}

void
pdp_addr_format(const struct pdp_addr *a, char out[PDP_ADDR_STRLEN])
{
    const char *ok = is_v4(a)
                         ? inet_ntop(AF_INET, a->b + 12, out, PDP_ADDR_STRLEN)
                         : inet_ntop(AF_INET6, a->b, out, PDP_ADDR_STRLEN);

    if (ok == NULL)
        (void)snprintf(out, PDP_ADDR_STRLEN, "unknown");
}

void
pdp_addr_key(const struct pdp_addr *a, char out[PDP_ADDR_STRLEN])
{
    struct pdp_addr site = *a;
    size_t n;

    if (is_v4(a)) {
        pdp_addr_format(a, out);
        return;
    }
    memset(site.b + 8, 0, 8);
    pdp_addr_format(&site, out);
    n = strlen(out);
    (void)snprintf(out + n, PDP_ADDR_STRLEN - n, "/64");
}

static void
say(char *why, size_t whylen, const char *text)
{
    if (why != NULL && whylen > 0)
        (void)snprintf(why, whylen, "%s", text);
}

/* 1 when the bits beyond the first `bits` of a are all zero. */
static int
host_bits_zero(const struct pdp_addr *a, unsigned bits)
{
    unsigned i;

    for (i = bits; i < 128; i++)
        if (a->b[i / 8] & (0x80u >> (i % 8)))
            return 0;
    return 1;
}

int
pdp_net_parse(const char *s, struct pdp_net *out, char *why, size_t whylen)
{
    const char *slash = strchr(s, '/');
    size_t alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
    unsigned long n = 0, max;
    size_t i;

    if (pdp_addr_parse(s, alen, &out->addr) != 0) {
        say(why, whylen, "not an IPv4 or IPv6 address");
        return -1;
    }
    max = is_v4(&out->addr) ? 32 : 128;
    out->bits = 128;
    if (slash == NULL)
        return 0;
    for (i = 1; slash[i] != '\0'; i++) {
        if (slash[i] < '0' || slash[i] > '9' || i > 3) {
            say(why, whylen, "the prefix length must be a number");
            return -1;
        }
        n = n * 10 + (unsigned long)(slash[i] - '0');
    }
    if (i == 1 || n > max) {
        say(why, whylen,
            max == 32 ? "the prefix length must be 0 to 32 for IPv4"
                      : "the prefix length must be 0 to 128 for IPv6");
        return -1;
    }
    out->bits = (unsigned)(max == 32 ? 96 + n : n);
    if (!host_bits_zero(&out->addr, out->bits)) {
        say(why, whylen,
            "the address has bits set past the prefix length (write the "
            "block's first address, e.g. 10.0.0.0/8)");
        return -1;
    }
    return 0;
}

static int
net_contains(const struct pdp_net *net, const struct pdp_addr *a)
{
    unsigned full = net->bits / 8, rest = net->bits % 8;
    unsigned char mask;

    if (memcmp(net->addr.b, a->b, full) != 0)
        return 0;
    if (rest == 0)
        return 1;
    mask = (unsigned char)(0xffu << (8 - rest));
    return (net->addr.b[full] & mask) == (a->b[full] & mask);
}

int
pdp_nets_contain(const struct pdp_net *nets, size_t n, const struct pdp_addr *a)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (net_contains(&nets[i], a))
            return 1;
    return 0;
}

void
pdp_addr_client(const struct pdp_addr *peer, const char *const *xff,
                size_t nxff, const struct pdp_net *trusted, size_t ntrusted,
                struct pdp_addr *out)
{
    struct pdp_addr hop;
    size_t i, start, end, hops = 0;

    *out = *peer;
    if (!pdp_nets_contain(trusted, ntrusted, peer))
        return;
    for (i = nxff; i-- > 0;) {
        if (xff[i] == NULL)
            continue;
        end = strlen(xff[i]);
        for (;;) {
            start = end;
            while (start > 0 && xff[i][start - 1] != ',')
                start--;
            if (hops++ >= IG_XFF_MAX_HOPS ||
                pdp_addr_parse_hop(xff[i] + start, end - start, &hop) != 0)
                return; /* out: the last trusted hop */
            *out = hop;
            if (!pdp_nets_contain(trusted, ntrusted, &hop))
                return;
            if (start == 0)
                break;
            end = start - 1;
        }
    }
}
