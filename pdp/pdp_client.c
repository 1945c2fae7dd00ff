/*
 * pdp_client.c - who a request comes from, and its refusals counted.
 *
 * The client address is the socket's peer, or behind a trusted proxy the
 * X-Forwarded-For hop pdp_addr.h picks (every such header, in arrival
 * order: MHD keeps headers as they came); it is worked out once per
 * request and is the one address every limiter, refusal and audit event
 * names. A refusal is counted in the server's refusal table
 * (pdp_refusals.h) under its kind, that address, its principal and
 * reason: never a write.
 */
#include "pdp_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ig_limits.h"

/* The last IG_XFF_MAX_HOPS X-Forwarded-For values, in the order received
   (a ring: the walk reads from the right, so what a proxy appended last
   is never pushed out by a client sending many headers before it). */
struct xff_values {
    const char *v[IG_XFF_MAX_HOPS];
    size_t n; /* values seen */
};

static enum MHD_Result
collect_xff(void *cls, enum MHD_ValueKind kind, const char *key,
            const char *value)
{
    struct xff_values *x = cls;
    (void)kind;

    if (key != NULL && strcasecmp(key, "X-Forwarded-For") == 0)
        x->v[x->n++ % IG_XFF_MAX_HOPS] = value;
    return MHD_YES;
}

int
pdp_req_client_addr(struct pdp_req *r, struct pdp_addr *out)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct pdp_config *c = r->srv->cfg;
    struct xff_values x;
    const char *ordered[IG_XFF_MAX_HOPS];
    struct pdp_addr peer;
    size_t i, n;

    if (ci == NULL || pdp_addr_from_sockaddr(ci->client_addr, &peer) != 0)
        return -1;
    x.n = 0;
    if (pdp_nets_contain(c->trusted_proxies, c->ntrusted_proxies, &peer))
        (void)MHD_get_connection_values(r->conn, MHD_HEADER_KIND, collect_xff,
                                        &x);
    n = x.n < IG_XFF_MAX_HOPS ? x.n : IG_XFF_MAX_HOPS;
    for (i = 0; i < n; i++)
        ordered[i] = x.v[(x.n - n + i) % IG_XFF_MAX_HOPS];
    pdp_addr_client(&peer, ordered, n, c->trusted_proxies, c->ntrusted_proxies,
                    out);
    return 0;
}

void
pdp_req_client(struct pdp_req *r, char out[PDP_ADDR_STRLEN])
{
    struct pdp_addr a;

    if (r->client[0] == '\0') {
        if (pdp_req_client_addr(r, &a) == 0)
            pdp_addr_format(&a, r->client);
        else
            (void)snprintf(r->client, sizeof(r->client), "unknown");
    }
    memcpy(out, r->client, sizeof(r->client));
}

void
pdp_req_refused(struct pdp_req *r, enum pdp_refusal_kind kind,
                const struct pdp_principal *p, const char *reason)
{
    char client[PDP_ADDR_STRLEN];

    pdp_req_client(r, client);
    pdp_refusals_note(r->srv->refusals, kind, client, p != NULL ? p->id : NULL,
                      p != NULL ? pdp_role_name(p->role) : NULL, reason);
}

void
pdp_req_refused_reply(struct pdp_req *r, enum pdp_refusal_kind kind,
                      const struct pdp_principal *p)
{
    if (r->phase == PH_READY && r->reply.status >= 400 &&
        r->reply.status < 500 && r->reply.code[0] != '\0')
        pdp_req_refused(r, kind, p, r->reply.code);
}
