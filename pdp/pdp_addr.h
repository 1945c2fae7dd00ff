/*
 * pdp_addr.h - client addresses: IP addresses read strictly from text,
 * address blocks (the trusted_proxies list), and who the client of a
 * request is, from the socket's peer and its X-Forwarded-For headers.
 *
 * An address is kept as 16 bytes, an IPv4 address as its IPv4-mapped
 * IPv6 form (::ffff:a.b.c.d), so "192.0.2.1" and "::ffff:192.0.2.1" are
 * one address and print as "192.0.2.1". Text is read with inet_pton
 * only: dotted quads, no octal or hex or shorthand IPv4, no zone ids.
 *
 * The client: the peer, unless the peer is a trusted proxy. Then the
 * X-Forwarded-For hops - every such header in order, each a comma-
 * separated list - are read from the right: each hop that is a trusted
 * proxy is skipped; the first one that is not is the client. A hop that
 * is not an address stops the walk: the client is then the trusted hop
 * that passed it on (never a value an untrusted party wrote). When every
 * hop is trusted, the leftmost is the client. At most IG_XFF_MAX_HOPS
 * hops are read.
 *
 * Pure functions of their arguments; thread safe.
 */
#ifndef PDP_ADDR_H
#define PDP_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

/* The longest address text written, with its NUL (INET6_ADDRSTRLEN is
   46). */
#define PDP_ADDR_STRLEN 64

struct pdp_addr {
    unsigned char b[16];
};

/* An address block: the addresses whose first bits bits equal addr's
   (bits 0..128, over the 16-byte form: an IPv4 /8 is 104 bits). */
struct pdp_net {
    struct pdp_addr addr;
    unsigned bits;
};

/* Read exactly len bytes of s as an IPv4 or IPv6 address. 0, or -1 when
   they are not one. */
int pdp_addr_parse(const char *s, size_t len, struct pdp_addr *out);

/* Read one X-Forwarded-For hop: an address with optional spaces and tabs
   around it, "a.b.c.d:port", "[v6]" or "[v6]:port". 0 or -1. */
int pdp_addr_parse_hop(const char *s, size_t len, struct pdp_addr *out);

/* The address of an AF_INET or AF_INET6 socket address: 0, or -1 for
   any other family (NULL included). */
int pdp_addr_from_sockaddr(const struct sockaddr *sa, struct pdp_addr *out);

/* a as text: dotted quad for IPv4 (mapped), RFC 5952 form for IPv6. */
void pdp_addr_format(const struct pdp_addr *a, char out[PDP_ADDR_STRLEN]);

/* The key a login limiter counts a by: its text for IPv4, its /64 for
   IPv6 ("2001:db8:1:2::/64": one site gets one budget, however many
   addresses it holds). */
void pdp_addr_key(const struct pdp_addr *a, char out[PDP_ADDR_STRLEN]);

/* Read "ADDRESS" or "ADDRESS/BITS" (BITS up to 32 for IPv4, 128 for
   IPv6; host bits must be zero). 0, or -1 with why (a sentence for a
   config error, may be NULL) filled. */
int pdp_net_parse(const char *s, struct pdp_net *out, char *why, size_t whylen);

/* 1 when a is in one of the n blocks. */
int pdp_nets_contain(const struct pdp_net *nets, size_t n,
                     const struct pdp_addr *a);

/* The client of a request (see above): peer, the nxff X-Forwarded-For
   header values in the order received (NULL entries are skipped), the
   trusted blocks. */
void pdp_addr_client(const struct pdp_addr *peer, const char *const *xff,
                     size_t nxff, const struct pdp_net *trusted,
                     size_t ntrusted, struct pdp_addr *out);

#endif
