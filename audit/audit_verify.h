/*
 * audit_verify.h - offline verification of an audit log with the log's
 * public key alone: every leaf hash and tree node is recomputed, every
 * checkpoint's signature and root checked, and checkpoints must agree
 * with each other (one tree: no two roots for one size, each a prefix of
 * the next - which holds exactly when each root matches the recomputed
 * tree of the same leaves).
 *
 *   audit_verify_start(&v, key, notes...)  all checkpoints, any order
 *   audit_verify_leaf(v, leaf, len)        every leaf, in log order
 *   audit_verify_end(v, &report)           counts and the first failure
 *
 * The first failure stops the checks; later calls are no-ops. Not thread
 * safe (one verification per object).
 */
#ifndef AUDIT_VERIFY_H
#define AUDIT_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "audit_note.h"
#include "ig_error.h"

/* What the first failure was. */
enum audit_failure {
    AUDIT_OK = 0,
    AUDIT_BAD_SIGNATURE,  /* a checkpoint's signature does not verify */
    AUDIT_BAD_CHECKPOINT, /* malformed, or another origin */
    AUDIT_FORK,           /* two checkpoints, one size, two roots */
    AUDIT_ROOT_MISMATCH,  /* the leaves do not hash to a checkpoint */
    AUDIT_TRUNCATED,      /* fewer leaves than a checkpoint's size */
    AUDIT_MISSING_LEAF,   /* a gap in the leaf indexes (reader reports) */
    AUDIT_LEAF_MISMATCH,  /* a leaf differs from its stored hash */
    AUDIT_BAD_TILE        /* a stored tile is missing, malformed, extra or
                             not the events' (reader reports) */
};

struct audit_report {
    uint64_t leaves;      /* leaves read */
    uint64_t checkpoints; /* checkpoints given */
    uint64_t checked;     /* checkpoints whose root matched */
    enum audit_failure failure;
    /* The leaf index, or the checkpoint size, it concerns: ROOT_MISMATCH,
       TRUNCATED and FORK give the checkpoint's size (a changed leaf is
       found at the first checkpoint after it), BAD_SIGNATURE and
       BAD_CHECKPOINT the size the note claims (0 if unreadable). */
    uint64_t index;
    char detail[256];
};

/* A short name for a failure ("root_mismatch", ...). */
const char *audit_failure_name(enum audit_failure f);

struct audit_verify;

/*
 * Start: parse and verify every checkpoint note (n of them) with key.
 * Failures found here (bad signature, malformed, fork) are recorded for
 * the report; IG_OK is returned unless memory runs out.
 */
enum ig_status audit_verify_start(struct audit_verify **out,
                                  const struct audit_verifier *key,
                                  const char *const *notes, const size_t *lens,
                                  size_t n) IG_WUR;

/* The next leaf (its exact bytes). */
void audit_verify_leaf(struct audit_verify *v, const void *leaf, size_t len);

/* The next leaf by its hash (when the reader hashed it already). */
void audit_verify_leaf_hash(struct audit_verify *v,
                            const unsigned char hash[AUDIT_HASH_BYTES]);

/* Have fn called with every complete subtree the recomputed tree gets
   (audit_frontier_append's on_node: a reader compares them with what is
   stored); fn must return 0. Before the first leaf. */
void audit_verify_on_node(struct audit_verify *v, audit_node_fn fn, void *ctx);

/* A reader's own finding (a gap, a stored hash that differs). */
void audit_verify_fail(struct audit_verify *v, enum audit_failure f,
                       uint64_t index, const char *detail);

/* The tree of the leaves read so far (its size and, with
   audit_frontier_root, its root); valid until audit_verify_free. */
const struct audit_frontier *audit_verify_tree(const struct audit_verify *v);

/* Finish (checkpoints beyond the last leaf are AUDIT_TRUNCATED) and fill
   the report. */
void audit_verify_end(struct audit_verify *v, struct audit_report *out);

void audit_verify_free(struct audit_verify *v);

#endif
