/*
 * fuzz_xff.c - libFuzzer target for client addresses (pdp/pdp_addr.c):
 * the X-Forwarded-For walk, its hops, and the trusted_proxies blocks.
 *
 * The input's first line is a trusted_proxies list (comma-separated;
 * entries that do not parse are dropped), its first byte also picks the
 * peer; every further line is one X-Forwarded-For header value. Checked:
 * the client pdp_addr_client picks equals the one a naive reference walk
 * picks (split every value on commas, read the hops from the right); an
 * untrusted peer is always its own client; every address that parses
 * prints as text that parses back to the same address; a block contains
 * its own address. Any broken property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_limits.h"
#include "pdp_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINES 8
#define MAX_NETS 8

static void
check(int ok, const char *what)
{
    if (ok)
        return;
    (void)fprintf(stderr, "fuzz_xff: %s\n", what);
    abort();
}

static void
round_trip(const struct pdp_addr *a)
{
    char text[PDP_ADDR_STRLEN];
    struct pdp_addr back;

    pdp_addr_format(a, text);
    check(pdp_addr_parse(text, strlen(text), &back) == 0,
          "a printed address does not parse");
    check(memcmp(a->b, back.b, 16) == 0, "an address changed in print");
}

/* The reference walk: every hop in order (at most cap of them: the
   input's size bounds them), then from the right. */
static void
naive_client(const struct pdp_addr *peer, char **lines, size_t n,
             const struct pdp_net *nets, size_t nn, size_t cap,
             struct pdp_addr *out)
{
    const char **hop = calloc(cap, sizeof(*hop));
    size_t *len = calloc(cap, sizeof(*len)), nh = 0, i, seen = 0;
    struct pdp_addr a;

    check(hop != NULL && len != NULL, "out of memory");
    *out = *peer;
    for (i = 0; i < n && pdp_nets_contain(nets, nn, peer); i++) {
        const char *s = lines[i], *c;
        for (;;) {
            c = strchr(s, ',');
            check(nh < cap, "more hops than bytes");
            hop[nh] = s;
            len[nh++] = c != NULL ? (size_t)(c - s) : strlen(s);
            if (c == NULL)
                break;
            s = c + 1;
        }
    }
    for (i = nh; i-- > 0 && seen++ < IG_XFF_MAX_HOPS;) {
        if (pdp_addr_parse_hop(hop[i], len[i], &a) != 0)
            break;
        *out = a;
        if (!pdp_nets_contain(nets, nn, &a))
            break;
    }
    free(hop);
    free(len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *lines[MAX_LINES], *p, *nl, *comma;
    struct pdp_net nets[MAX_NETS];
    struct pdp_addr peer, got, want, a;
    size_t n = 0, nn = 0, i;
    static const char *const peers[] = {"127.0.0.1", "10.1.2.3", "203.0.113.1",
                                        "2001:db8::1"};

    if (text == NULL || size == 0) {
        free(text);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    check(pdp_addr_parse(peers[data[0] % 4], strlen(peers[data[0] % 4]),
                         &peer) == 0,
          "a fixed peer does not parse");
    /* First line: the trusted blocks. */
    nl = strchr(text, '\n');
    if (nl != NULL)
        *nl = '\0';
    for (p = text; p != NULL && nn < MAX_NETS; p = comma) {
        comma = strchr(p, ',');
        if (comma != NULL)
            *comma++ = '\0';
        while (*p == ' ')
            p++;
        if (pdp_net_parse(p, &nets[nn], NULL, 0) != 0)
            continue;
        check(nets[nn].bits <= 128, "a prefix longer than 128 bits");
        check(pdp_nets_contain(&nets[nn], 1, &nets[nn].addr),
              "a block does not hold its own address");
        round_trip(&nets[nn].addr);
        nn++;
    }
    /* The rest: one header value per line. */
    for (p = nl != NULL ? nl + 1 : NULL; p != NULL && n < MAX_LINES;) {
        lines[n++] = p;
        nl = strchr(p, '\n');
        if (nl != NULL)
            *nl++ = '\0';
        p = nl;
    }
    for (i = 0; i < n; i++) {
        if (pdp_addr_parse_hop(lines[i], strlen(lines[i]), &a) == 0)
            round_trip(&a);
        if (pdp_addr_parse(lines[i], strlen(lines[i]), &a) == 0)
            round_trip(&a);
    }
    pdp_addr_client(&peer, (const char *const *)lines, n, nets, nn, &got);
    naive_client(&peer, lines, n, nets, nn, size + 1, &want);
    check(memcmp(got.b, want.b, 16) == 0, "the walk and the reference differ");
    if (!pdp_nets_contain(nets, nn, &peer))
        check(memcmp(got.b, peer.b, 16) == 0,
              "an untrusted peer's header was believed");
    round_trip(&got);
    free(text);
    return 0;
}
