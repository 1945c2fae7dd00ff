/*
 * witness_state.h - what the witness remembers, in SQLite: per log origin
 * the latest checkpoint it cosigned (size, root, the note with the log's
 * signature, the cosignature line it answered), and the evidence of
 * refused checkpoints the log did sign (forks, inconsistent extensions,
 * rollbacks).
 *
 * witness_state_submit is the tlog-witness add-checkpoint decision after
 * the log's signature has been checked: the comparison with the stored
 * checkpoint and the update are one transaction (BEGIN IMMEDIATE), so two
 * requests racing from the same old size cannot both be cosigned, and
 * neither can roll the other back. The new state is committed
 * (synchronous=FULL) before the cosignature is handed out.
 */
#ifndef WITNESS_STATE_H
#define WITNESS_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "audit_cosig.h"
#include "ig_error.h"
#include "ig_key.h"

struct witness_state;

struct witness_state_opts {
    const char *path;    /* the SQLite file */
    int read_only;       /* `witness show`: never writes, never creates */
    size_t evidence_max; /* rows per origin; 0: WITNESS_EVIDENCE_MAX */
};

/* Open (creating the file and its schema unless read_only). IG_ERR_IO with
   err naming the path, IG_ERR_NOTFOUND (read_only and no such file),
   IG_ERR_NOMEM. */
enum ig_status witness_state_open(const struct witness_state_opts *o,
                                  struct witness_state **out,
                                  struct ig_err *err) IG_WUR;

/* NULL is fine. */
void witness_state_close(struct witness_state *s);

/* Why a signed checkpoint was refused, when that is evidence against the
   log. The zero value is no evidence. */
enum witness_reason {
    WITNESS_REASON_NONE = 0,
    WITNESS_REASON_FORK,         /* same size, another root */
    WITNESS_REASON_INCONSISTENT, /* the proof from the stored one fails */
    WITNESS_REASON_ROLLBACK      /* smaller than the stored one */
};

const char *witness_reason_name(enum witness_reason r);

/* A checkpoint whose log signature verified, and the request's old size
   and proof. */
struct witness_submit {
    const char *origin;
    uint64_t old, size;
    const unsigned char *root; /* 32 bytes */
    const unsigned char (*proof)[AUDIT_HASH_BYTES];
    size_t nproof;
    const char *text; /* its checkpoint text, with the final newline */
    size_t text_len;
    const char *kept; /* what to serve and keep as evidence: the text, a */
    size_t kept_len;  /* blank line, and the log's own signature lines */
    int64_t now;      /* the cosignature's timestamp, seconds (>= 1) */
};

/* Who cosigns. */
struct witness_signer {
    const char *name;
    const struct ig_signing_key *key;
};

struct witness_result {
    unsigned int status; /* the HTTP answer: 200, 400, 409 or 422 */
    uint64_t size;       /* the stored size (0 when none) */
    const char *problem; /* a refusal: one line naming it (static) */
    enum witness_reason reason;
    int evidence; /* 1: a new row; 0: none or a duplicate; -1: over the
                     cap, counted */
    char line[AUDIT_COSIG_LINE_MAX + 1]; /* 200: the cosignature line */
};

/*
 * Decide on in, in the order the spec gives: old > size is 400 (a
 * rollback's evidence when old is the stored size), old other than the
 * stored size 409, a size-0 tree with another root than SHA-256("") 422,
 * old 0 with a proof 422, an equal size with another root 422 (a fork),
 * a proof that fails 422 (inconsistent); else cosign as sg at in->now,
 * store, commit, and 200 with the line. Evidence rows are committed with
 * the refusal. IG_OK with *out filled; IG_ERR_IO when the database failed
 * (nothing was cosigned or changed), IG_ERR_INVALID for a bad signer.
 * Thread safe (one connection, a mutex; other processes wait on SQLite's
 * lock).
 */
enum ig_status witness_state_submit(struct witness_state *s,
                                    const struct witness_submit *in,
                                    const struct witness_signer *sg,
                                    struct witness_result *out,
                                    struct ig_err *err) IG_WUR;

/* The latest cosigned checkpoint of origin: its note with the log's
   signatures and the cosignature line appended (malloc'd, NUL-terminated,
   *len bytes), and its size. IG_ERR_NOTFOUND: never cosigned. IG_ERR_IO,
   IG_ERR_NOMEM. Thread safe. */
enum ig_status witness_state_latest(struct witness_state *s, const char *origin,
                                    char **note, size_t *len,
                                    uint64_t *size) IG_WUR;

/* What `witness show` lists. Strings valid during the call only. */
struct witness_log_row {
    const char *origin;
    uint64_t size;
    const unsigned char *root; /* 32 bytes */
    const char *note;          /* with the cosignature line */
    int64_t updated_at;
};

struct witness_evidence_row {
    int64_t id;
    const char *origin;
    const char *reason;
    uint64_t old;
    const char *proof;  /* base64 hashes, one a line */
    const char *note;   /* as received */
    const char *stored; /* the cosigned note it conflicts with */
    int64_t received_at;
};

/* Call fn for each stored log (by origin), each evidence row (by id), and
   each origin's count of evidence over the cap. fn returns 0 to go on.
   IG_ERR_IO. */
enum ig_status
witness_state_each_log(struct witness_state *s,
                       int (*fn)(void *ctx, const struct witness_log_row *r),
                       void *ctx) IG_WUR;
enum ig_status witness_state_each_evidence(
    struct witness_state *s,
    int (*fn)(void *ctx, const struct witness_evidence_row *r),
    void *ctx) IG_WUR;
enum ig_status witness_state_each_dropped(
    struct witness_state *s,
    int (*fn)(void *ctx, const char *origin, uint64_t count), void *ctx) IG_WUR;

#endif
