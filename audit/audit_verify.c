/*
 * audit_verify.c - the offline verifier of an audit log (audit_verify.h).
 *
 * How it works. audit_verify_start opens every checkpoint with the log's
 * key, then sorts them by size: two of one size must have one root (else
 * a fork), duplicates fold into one. The leaves then stream through a
 * frontier (audit_tree.h: O(1) hashes a leaf on average, no storage);
 * whenever the tree reaches the size of the next checkpoint its root is
 * computed and compared. One tree that matches every checkpoint proves
 * them all consistent with each other and with the leaves, so no
 * consistency proofs are needed. A checkpoint of size 0 is checked at
 * once against the empty root; checkpoints still ahead at the end mean
 * the log was truncated.
 *
 * The first failure is kept with the leaf index or checkpoint size it
 * concerns; everything after it is a no-op.
 */
#include "audit_verify.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_tree.h"

struct vcp {
    uint64_t size;
    unsigned char root[AUDIT_HASH_BYTES];
};

struct audit_verify {
    struct audit_verifier key;
    struct audit_frontier tree;
    audit_node_fn on_node; /* a reader's, or NULL */
    void *on_node_ctx;
    struct vcp *cps; /* sorted by size, one per size */
    size_t ncps, next;
    uint64_t leaves, given, checked;
    enum audit_failure failure;
    uint64_t index;
    char detail[sizeof(((struct audit_report *)0)->detail)];
};

const char *
audit_failure_name(enum audit_failure f)
{
    switch (f) {
    case AUDIT_OK:
        return "ok";
    case AUDIT_BAD_SIGNATURE:
        return "bad_signature";
    case AUDIT_BAD_CHECKPOINT:
        return "bad_checkpoint";
    case AUDIT_FORK:
        return "fork";
    case AUDIT_ROOT_MISMATCH:
        return "root_mismatch";
    case AUDIT_TRUNCATED:
        return "truncated";
    case AUDIT_MISSING_LEAF:
        return "missing_leaf";
    case AUDIT_LEAF_MISMATCH:
        return "leaf_mismatch";
    case AUDIT_BAD_TILE:
        return "bad_tile";
    }
    return "unknown";
}

static void record(struct audit_verify *v, enum audit_failure f, uint64_t index,
                   const char *fmt, ...) IG_PRINTF(4, 5);

static void
record(struct audit_verify *v, enum audit_failure f, uint64_t index,
       const char *fmt, ...)
{
    va_list ap;

    if (v->failure != AUDIT_OK || f == AUDIT_OK)
        return;
    v->failure = f;
    v->index = index;
    va_start(ap, fmt);
    (void)vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
    va_end(ap);
}

static int
same_root(const unsigned char *a, const unsigned char *b)
{
    return sodium_memcmp(a, b, AUDIT_HASH_BYTES) == 0;
}

static int
cmp_size(const void *a, const void *b)
{
    const struct vcp *x = a, *y = b;

    return (x->size > y->size) - (x->size < y->size);
}

/* The size a note claims, read without trusting it (0 if unreadable). */
static uint64_t
claimed_size(const char *note, size_t len)
{
    struct audit_checkpoint c;
    const char *blank = NULL;
    size_t i;

    for (i = 0; i + 1 < len; i++)
        if (note[i] == '\n' && note[i + 1] == '\n')
            blank = note + i;
    if (blank == NULL ||
        audit_checkpoint_parse(note, (size_t)(blank - note) + 1, &c, NULL) !=
            IG_OK)
        return 0;
    return c.size;
}

/* Check every checkpoint whose size the tree has just reached. */
static void
check_due(struct audit_verify *v)
{
    unsigned char root[AUDIT_HASH_BYTES];
    const struct vcp *c;

    if (v->next >= v->ncps || v->cps[v->next].size != v->tree.size)
        return;
    c = &v->cps[v->next++];
    audit_frontier_root(&v->tree, root);
    if (!same_root(root, c->root)) {
        record(v, AUDIT_ROOT_MISMATCH, c->size,
               "the first %" PRIu64 " leaves do not hash to the checkpoint's "
               "root",
               c->size);
        return;
    }
    v->checked++;
}

enum ig_status
audit_verify_start(struct audit_verify **out, const struct audit_verifier *key,
                   const char *const *notes, const size_t *lens, size_t n)
{
    struct audit_verify *v;
    struct audit_checkpoint c;
    struct ig_err err;
    enum ig_status st;
    size_t i, k = 0;

    *out = NULL;
    v = calloc(1, sizeof(*v));
    if (v == NULL)
        return IG_ERR_NOMEM;
    v->cps = calloc(n ? n : 1, sizeof(*v->cps));
    if (v->cps == NULL) {
        free(v);
        return IG_ERR_NOMEM;
    }
    v->key = *key;
    v->given = n;
    audit_frontier_init(&v->tree);
    for (i = 0; i < n; i++) {
        st = audit_checkpoint_open(notes[i], lens[i], key, &c, &err);
        if (st == IG_OK) {
            v->cps[k].size = c.size;
            memcpy(v->cps[k++].root, c.root, AUDIT_HASH_BYTES);
            continue;
        }
        record(v,
               st == IG_ERR_CRYPTO ? AUDIT_BAD_SIGNATURE : AUDIT_BAD_CHECKPOINT,
               claimed_size(notes[i], lens[i]), "checkpoint %zu: %s", i + 1,
               err.msg);
    }
    qsort(v->cps, k, sizeof(*v->cps), cmp_size);
    for (i = 0; i < k; i++) {
        if (v->ncps > 0 && v->cps[v->ncps - 1].size == v->cps[i].size) {
            if (!same_root(v->cps[v->ncps - 1].root, v->cps[i].root))
                record(v, AUDIT_FORK, v->cps[i].size,
                       "two checkpoints of size %" PRIu64
                       " with different roots",
                       v->cps[i].size);
            continue;
        }
        v->cps[v->ncps++] = v->cps[i];
    }
    check_due(v); /* a checkpoint of the empty tree */
    *out = v;
    return IG_OK;
}

void
audit_verify_leaf_hash(struct audit_verify *v,
                       const unsigned char hash[AUDIT_HASH_BYTES])
{
    v->leaves++;
    if (v->failure != AUDIT_OK)
        return;
    if (audit_frontier_append(&v->tree, hash, v->on_node, v->on_node_ctx) !=
        IG_OK) {
        record(v, AUDIT_BAD_CHECKPOINT, v->tree.size, "too many leaves");
        return;
    }
    check_due(v);
}

void
audit_verify_leaf(struct audit_verify *v, const void *leaf, size_t len)
{
    unsigned char h[AUDIT_HASH_BYTES];

    if (v->failure != AUDIT_OK) {
        v->leaves++;
        return;
    }
    audit_leaf_hash(leaf, len, h);
    audit_verify_leaf_hash(v, h);
}

void
audit_verify_on_node(struct audit_verify *v, audit_node_fn fn, void *ctx)
{
    v->on_node = fn;
    v->on_node_ctx = ctx;
}

void
audit_verify_fail(struct audit_verify *v, enum audit_failure f, uint64_t index,
                  const char *detail)
{
    record(v, f, index, "%s", detail ? detail : audit_failure_name(f));
}

const struct audit_frontier *
audit_verify_tree(const struct audit_verify *v)
{
    return &v->tree;
}

void
audit_verify_end(struct audit_verify *v, struct audit_report *out)
{
    memset(out, 0, sizeof(*out));
    if (v->next < v->ncps)
        record(v, AUDIT_TRUNCATED, v->cps[v->next].size,
               "the log has %" PRIu64 " leaves, a checkpoint has %" PRIu64,
               v->tree.size, v->cps[v->next].size);
    out->leaves = v->leaves;
    out->checkpoints = v->given;
    out->checked = v->checked;
    out->failure = v->failure;
    out->index = v->index;
    memcpy(out->detail, v->detail, sizeof(out->detail));
}

void
audit_verify_free(struct audit_verify *v)
{
    if (v == NULL)
        return;
    free(v->cps);
    free(v);
}
