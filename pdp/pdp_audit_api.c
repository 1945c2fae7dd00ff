/*
 * pdp_audit_api.c - the audit log over HTTP, for auditors and admins:
 *
 *   GET /v1/audit/checkpoint                    the latest signed note,
 *                                               with its cosignatures
 *   GET /v1/audit/leaves?start=&end=            leaves [start, end), NDJSON
 *   GET /v1/audit/proof/inclusion?index=&size=  C2SP tlog-proof text
 *   GET /v1/audit/proof/consistency?old=&new=   one base64 hash a line
 *
 * Everything is read from the store's read connections (one read
 * transaction per call) and built from stored checkpoints and tree nodes;
 * nothing here writes. A client needs only the log's verifier key to check
 * what it gets: the note's signature, the proofs against its root.
 */
#include "pdp_int.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "ig_limits.h"

#define TEXT_PLAIN "text/plain; charset=utf-8"
#define NDJSON "application/x-ndjson"

static void
store_error(struct pdp_req *r, enum ig_status st)
{
    if (st == IG_ERR_NOMEM)
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
    else
        pdp_reply_error(r, 503, "STORE_UNAVAILABLE", NULL,
                        "the audit log could not be read");
}

/*
 * Query parameter name as a decimal count: 1 when present and valid, 0
 * when absent (and optional), -1 after replying 400.
 */
static int
query_u64(struct pdp_req *r, const char *name, int required, uint64_t *out)
{
    const char *v =
        MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
    unsigned long long n = 0;
    char *end = NULL;

    if (v == NULL && !required)
        return 0;
    if (v != NULL && v[0] >= '0' && v[0] <= '9' && strlen(v) <= 19)
        n = strtoull(v, &end, 10);
    if (end == NULL || *end != '\0') {
        pdp_reply_error(r, 400, "INVALID_QUERY", name,
                        "%s must be a whole number (0 or more)", name);
        return -1;
    }
    *out = (uint64_t)n;
    return 1;
}

/* The latest signed note with its witnesses' cosignature lines appended
   after the log's signature (still one signed note: a verifier without
   the witness keys ignores them). */
static void
get_checkpoint(struct pdp_req *r)
{
    char *note = NULL, *cosigs = NULL;
    struct ig_buf b;
    enum ig_status st;
    uint64_t size = 0;

    st = store_checkpoint_get(r->srv->store, 0, &note, &size);
    if (st == IG_OK)
        st = store_cosig_get(r->srv->store, size, &cosigs);
    if (st == IG_ERR_NOTFOUND) {
        pdp_reply_error(r, 404, "NO_CHECKPOINT", NULL,
                        "no checkpoint has been signed yet");
    } else if (st != IG_OK) {
        store_error(r, st);
    } else {
        ig_buf_init(&b, strlen(note) + strlen(cosigs) + 1);
        st = ig_buf_adds(&b, note) == IG_OK && ig_buf_adds(&b, cosigs) == IG_OK
                 ? IG_OK
                 : IG_ERR_NOMEM;
        if (st == IG_OK)
            pdp_reply_text(r, 200, b.data, b.len, TEXT_PLAIN);
        else
            pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
        ig_buf_release(&b);
    }
    free(note);
    free(cosigs);
}

static void
get_leaves(struct pdp_req *r)
{
    uint64_t start = 0, end = 0, size = 0, count = 0;
    char num[24];
    struct ig_buf b;
    enum ig_status st;

    if (query_u64(r, "start", 1, &start) < 0 ||
        query_u64(r, "end", 1, &end) < 0)
        return;
    if (start >= end || end - start > IG_AUDIT_LEAVES_MAX) {
        pdp_reply_error(r, 400, "INVALID_QUERY", NULL,
                        "want 0 <= start < end with at most %d leaves",
                        IG_AUDIT_LEAVES_MAX);
        return;
    }
    ig_buf_init(&b, IG_AUDIT_LEAVES_MAX_BYTES + IG_CANON_MAX_BYTES + 2);
    st = store_audit_leaves(r->srv->store, start, end,
                            IG_AUDIT_LEAVES_MAX_BYTES, &b, &size, &count);
    if (st != IG_OK) {
        ig_buf_release(&b);
        store_error(r, st);
        return;
    }
    pdp_reply_text(r, 200, b.data != NULL ? b.data : "", b.len, NDJSON);
    ig_buf_release(&b);
    (void)snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
    (void)pdp_reply_header(r, "X-Audit-Tree-Size", num);
}

/* One hash in standard base64 and a newline onto b. */
static enum ig_status
add_hash(struct ig_buf *b, const unsigned char h[AUDIT_HASH_BYTES])
{
    char text[sodium_base64_ENCODED_LEN(AUDIT_HASH_BYTES,
                                        sodium_base64_VARIANT_ORIGINAL)];

    (void)sodium_bin2base64(text, sizeof(text), h, AUDIT_HASH_BYTES,
                            sodium_base64_VARIANT_ORIGINAL);
    if (ig_buf_adds(b, text) != IG_OK || ig_buf_addc(b, '\n') != IG_OK)
        return IG_ERR_NOMEM;
    return IG_OK;
}

static void
reply_buf(struct pdp_req *r, struct ig_buf *b, enum ig_status st)
{
    if (st == IG_OK)
        pdp_reply_text(r, 200, b->data != NULL ? b->data : "", b->len,
                       TEXT_PLAIN);
    else
        pdp_reply_error(r, 500, "INTERNAL", NULL, "out of memory");
    ig_buf_release(b);
}

static void
get_inclusion(struct pdp_req *r)
{
    unsigned char proof[AUDIT_PROOF_MAX][AUDIT_HASH_BYTES];
    uint64_t index = 0, size = 0, got = 0;
    struct ig_buf b;
    enum ig_status st;
    char *note = NULL;
    size_t n = 0;
    int has;

    if (query_u64(r, "index", 1, &index) < 0 ||
        (has = query_u64(r, "size", 0, &size)) < 0)
        return;
    if (has && size == 0) {
        pdp_reply_error(r, 400, "INVALID_QUERY", "size",
                        "size must be a checkpoint's tree size (1 or more)");
        return;
    }
    st = store_audit_inclusion(r->srv->store, index, size, proof, &n, &note,
                               &got);
    if (st == IG_ERR_NOTFOUND) {
        pdp_reply_error(r, 404, "NO_CHECKPOINT", NULL,
                        has ? "no checkpoint of that tree size"
                            : "no checkpoint has been signed yet");
        return;
    }
    if (st == IG_ERR_INVALID) {
        pdp_reply_error(r, 400, "INVALID_QUERY", "index",
                        "index must be below the tree size %llu",
                        (unsigned long long)got);
        return;
    }
    if (st != IG_OK) {
        store_error(r, st);
        return;
    }
    ig_buf_init(&b, AUDIT_NOTE_MAX + 64 * (AUDIT_PROOF_MAX + 2));
    st = audit_proof_format(index, (const unsigned char(*)[32])proof, n, note,
                            &b);
    free(note);
    reply_buf(r, &b, st);
}

static void
get_consistency(struct pdp_req *r)
{
    unsigned char proof[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    uint64_t old_size = 0, new_size = 0;
    char head[128];
    struct ig_buf b;
    enum ig_status st;
    size_t n = 0, i;

    if (query_u64(r, "old", 1, &old_size) < 0 ||
        query_u64(r, "new", 1, &new_size) < 0)
        return;
    if (old_size == 0 || old_size > new_size) {
        pdp_reply_error(r, 400, "INVALID_QUERY", NULL,
                        "want 0 < old <= new (checkpoint tree sizes)");
        return;
    }
    st = store_audit_consistency(r->srv->store, old_size, new_size, proof, &n);
    if (st == IG_ERR_NOTFOUND) {
        pdp_reply_error(r, 404, "NO_CHECKPOINT", NULL,
                        "old and new must both be stored checkpoints' sizes");
        return;
    }
    if (st != IG_OK) {
        store_error(r, st);
        return;
    }
    ig_buf_init(&b, sizeof(head) + 64 * AUDIT_CPROOF_MAX);
    (void)snprintf(head, sizeof(head),
                   "intentgate.org/consistency-proof@v1\nold %llu\nnew %llu\n",
                   (unsigned long long)old_size, (unsigned long long)new_size);
    st = ig_buf_adds(&b, head) == IG_OK ? IG_OK : IG_ERR_NOMEM;
    for (i = 0; st == IG_OK && i < n; i++)
        st = add_hash(&b, proof[i]);
    reply_buf(r, &b, st);
}

int
pdp_audit_api_route(struct pdp_req *r, const char *url, const char *method)
{
    static const struct {
        const char *path;
        void (*fn)(struct pdp_req *r);
    } routes[] = {
        {"/v1/audit/checkpoint", get_checkpoint},
        {"/v1/audit/leaves", get_leaves},
        {"/v1/audit/proof/inclusion", get_inclusion},
        {"/v1/audit/proof/consistency", get_consistency},
    };
    size_t i;

    if (strncmp(url, "/v1/audit/", 10) != 0)
        return 0;
    for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (strcmp(url, routes[i].path) != 0)
            continue;
        if (strcmp(method, "GET") != 0) {
            pdp_reply_error(r, 405, "METHOD_NOT_ALLOWED", NULL,
                            "use GET for this path");
            r->reply.allow = "GET";
        } else if (pdp_req_auth(r, (1u << PDP_ROLE_AUDITOR) |
                                       (1u << PDP_ROLE_ADMIN)) != NULL) {
            routes[i].fn(r);
        }
        return 1;
    }
    pdp_reply_error(r, 404, "NOT_FOUND", NULL, "no such path: %s", url);
    return 1;
}
