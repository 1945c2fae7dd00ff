/*
 * cmd_audit_int.h - private to `intentgate audit` (cmd_audit*.c): reading
 * an audit log - the PDP's database, opened read-only through the store
 * (store/store_log.h: one snapshot, never written), or an export (leaves
 * as JSONL, checkpoints as JSONL) - and the verifier key. Nothing here
 * knows the database's schema.
 *
 * Helpers return enum ig_status with err filled; cli_audit_exit() maps a status
 * to the command's exit code: bad input (IG_ERR_INVALID, IG_ERR_LIMIT,
 * IG_ERR_NOTFOUND) exits 2, anything else 1.
 */
#ifndef CMD_AUDIT_INT_H
#define CMD_AUDIT_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "audit_cosig.h"
#include "audit_note.h"
#include "audit_tree.h"
#include "audit_verify.h"
#include "cli.h"
#include "ig_error.h"
#include "ig_limits.h"
#include "store_log.h"

/* The subcommands (cmd_audit*.c), argv[0] their name. */
int cli_audit_verify(int argc, char **argv);
int cli_audit_show(int argc, char **argv);
int cli_audit_export(int argc, char **argv);
int cli_audit_proof(int argc, char **argv);
int cli_audit_consistency(int argc, char **argv);
int cli_audit_verify_proof(int argc, char **argv);
int cli_audit_hash_value(int argc, char **argv);

int cli_audit_exit(enum ig_status st);

/* Print help when asked: 1 when printed (exit 0). */
int cli_audit_help(int argc, char **argv, const char *usage);

/* ---- options ---- */

/*
 * Option parsing: argv[*i] is "--name VALUE" or "--name=VALUE"; when it
 * names `name`, *value gets the value, *i moves past it and 1 is
 * returned; a repeated option (*value already set) or a missing value is
 * reported and -1 returned; 0 when argv[*i] is another argument.
 */
int cli_audit_opt(const char *cmd, int argc, char **argv, int *i,
                  const char *name, const char **value);

/* Parse a decimal uint64 (no sign, no spaces). -1 when s is not one. */
int cli_audit_u64(const char *s, uint64_t *out);

/* ---- the verifier key ---- */

/*
 * The verifier key from arg: the key text itself, or a file holding it
 * (when arg does not parse as a key); arg NULL: the environment variable
 * INTENTGATE_AUDIT_KEY. IG_ERR_INVALID with err naming the problem.
 */
enum ig_status cli_audit_key_load(const char *arg, struct audit_verifier *out,
                                  struct ig_err *err) IG_WUR;

/* ---- checkpoint notes ---- */

struct cli_audit_notes {
    char **note;
    size_t *len;
    uint64_t *size; /* the size the source gave (table column, JSONL) */
    int64_t *at;    /* when it was signed (the database's created_at); 0 */
    size_t n, cap;
    size_t ndb; /* note[0..ndb) came from the database, in size order */
};

void cli_audit_notes_init(struct cli_audit_notes *ns);
void cli_audit_notes_release(struct cli_audit_notes *ns);
/* Add a copy of note (len bytes) given as size, signed at `at` (0:
   unknown). */
enum ig_status cli_audit_notes_add(struct cli_audit_notes *ns, uint64_t size,
                                   int64_t at, const char *note,
                                   size_t len) IG_WUR;
/* Add every line {"size":N,"note":"..."} of a JSONL file. */
enum ig_status cli_audit_notes_read_file(struct cli_audit_notes *ns,
                                         const char *path,
                                         struct ig_err *err) IG_WUR;
/* Add every checkpoint of the database, in size order (first: before
   any other note). */
enum ig_status cli_audit_notes_read_db(struct cli_audit_notes *ns,
                                       struct store_log *db,
                                       struct ig_err *err) IG_WUR;

/* The tree size a checkpoint note's text states (its second line), or -1
   when the note is not shaped like a checkpoint. */
int cli_audit_note_size(const char *note, size_t len, uint64_t *size);

/* ---- the database ---- */

/*
 * Call fn(ctx, leaf index, event, err) for each event whose top-level key
 * is the string value, in log order (found by the text `"key":"value"`,
 * then checked on the parsed event; leaves that do not parse are skipped:
 * `audit verify` reports them). fn returns IG_OK to go on.
 */
typedef enum ig_status (*cli_audit_event_fn)(void *ctx, uint64_t index,
                                             json_t *ev, struct ig_err *err);
enum ig_status cli_audit_db_events(struct store_log *db, const char *key,
                                   const char *value, cli_audit_event_fn fn,
                                   void *ctx, struct ig_err *err) IG_WUR;

/* The note of the checkpoint of size (size 0: the latest): *note malloc'd,
 *got the size. IG_ERR_NOTFOUND when there is none. */
enum ig_status cli_audit_db_checkpoint(struct store_log *db, uint64_t size,
                                       char **note, size_t *len, uint64_t *got,
                                       struct ig_err *err) IG_WUR;

/* ---- verify: one verifier per key, the leaves (cmd_audit_leaves.c) ---- */

struct cli_audit_times;

/* The verifiers of a log whose key was rotated: each checkpoint goes to
   the one of the key that signed it (one no key opens to the first),
   every leaf to all of them. */
struct cli_audit_vset {
    struct audit_verifier key[IG_AUDIT_CLI_KEYS_MAX];
    struct audit_verify *v[IG_AUDIT_CLI_KEYS_MAX];
    size_t n;
};

/* Start one verifier per key (s->key[0..n) filled) on the notes. */
enum ig_status cli_audit_vset_start(struct cli_audit_vset *s,
                                    const struct cli_audit_notes *ns) IG_WUR;
/* Record a reader's finding in every verifier. */
void cli_audit_vset_fail(struct cli_audit_vset *s, enum audit_failure f,
                         uint64_t index, const char *fmt, ...) IG_PRINTF(4, 5);
/* The reports merged: counts summed, the failure at the lowest index. */
void cli_audit_vset_end(struct cli_audit_vset *s, struct audit_report *out);
void cli_audit_vset_free(struct cli_audit_vset *s);

/* The check of the stored tiles (cmd_audit_tiles.c): new reads db's
   audit_tiles (IG_ERR_IO/NOMEM with err); node is the audit_node_fn to
   give the first verifier; end names tiles past the log of size leaves;
   finding gives the first finding (1) or 0; status is IG_OK or the read
   error (err was set). */
struct cli_audit_tiles;
enum ig_status cli_audit_tiles_new(struct store_log *db,
                                   struct cli_audit_tiles **out,
                                   struct ig_err *err) IG_WUR;
void cli_audit_tiles_free(struct cli_audit_tiles *t);
int cli_audit_tiles_node(void *ctx, unsigned level, uint64_t index,
                         const unsigned char hash[AUDIT_HASH_BYTES]);
void cli_audit_tiles_end(struct cli_audit_tiles *t, uint64_t size);
int cli_audit_tiles_finding(const struct cli_audit_tiles *t,
                            enum audit_failure *f, uint64_t *index,
                            const char **detail);
uint64_t cli_audit_tiles_compared(const struct cli_audit_tiles *t);
enum ig_status cli_audit_tiles_status(const struct cli_audit_tiles *t);

/* Feed every leaf of the database (in seq order; gaps, leaves that no
   longer match their stored hash and tiles that are not the leaves' are
   recorded; *compared counts the stored hashes compared) or of an export file
   to the verifiers and to t (may be NULL). IG_ERR_IO / IG_ERR_INVALID /
   IG_ERR_LIMIT with err. */
enum ig_status cli_audit_leaves_db(struct store_log *db,
                                   struct cli_audit_vset *v,
                                   struct cli_audit_times *t,
                                   uint64_t *compared,
                                   struct ig_err *err) IG_WUR;
enum ig_status cli_audit_leaves_file(const char *path, struct cli_audit_vset *v,
                                     struct cli_audit_times *t,
                                     struct ig_err *err) IG_WUR;

/* ---- verify: the leaves' times (cmd_audit_times.c) ---- */

/* A limit's value in a usage text. */
#define ACLI_STR_(x) #x
#define ACLI_STR(x) ACLI_STR_(x)

/* verify's status when everything verifies but a leaf was left unsigned
   longer than the PDP would (cmd_audit_times.c). */
#define ACLI_EXIT_UNSIGNED 3

/* Parse TIME (YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DD, midnight UTC) for the
   option opt into *t; s NULL: 0 and nothing set. -1 after one line on
   stderr. */
int cli_audit_time_arg(const char *cmd, const char *opt, const char *s,
                       int64_t *t);

struct cli_audit_times_opts {
    int64_t at;           /* the time of the check (now, or --at) */
    int64_t interval;     /* the PDP's checkpoint_interval, seconds */
    int64_t max_gap;      /* report gaps between events over this; 0: none */
    uint64_t signed_size; /* leaves the latest valid checkpoint covers */
};

struct cli_audit_times;

/* Start: the database's notes in ns (ns->ndb of them; ns may be NULL)
   give the checkpoints' signing times. ns must outlive t. */
enum ig_status cli_audit_times_new(const struct cli_audit_times_opts *o,
                                   const struct cli_audit_notes *ns,
                                   struct cli_audit_times **out,
                                   struct ig_err *err) IG_WUR;
/* The next leaf (index in log order, its exact bytes). */
void cli_audit_times_leaf(struct cli_audit_times *t, uint64_t index,
                          const char *leaf, size_t len);
/* Print the findings (gap:, backwards:, late:, unsigned: lines). 1 when a
   leaf has waited unsigned too long (why: one line saying which), else 0. */
int cli_audit_times_report(const struct cli_audit_times *t, char *why,
                           size_t cap);
void cli_audit_times_free(struct cli_audit_times *t);

/* ---- verify: the witnesses' cosignatures (cmd_audit_witness.c) ---- */

/* verify's status when the log verifies but fewer than --witness-quorum
   of the named witnesses cosigned the checkpoint it ends on. */
#define ACLI_EXIT_QUORUM 4

/* A witness's cosignature on the latest checkpoint. */
enum { ACLI_COSIG_MISSING = 0, ACLI_COSIG_OK, ACLI_COSIG_INVALID };

struct cli_audit_witness {
    struct audit_witness_key key;
    int state;             /* ACLI_COSIG_* on the latest checkpoint */
    uint64_t ts;           /* its timestamp there (the latest, with several) */
    int viewed;            /* it validly cosigned some checkpoint: */
    uint64_t view_size;    /* the largest, */
    uint64_t view_ts;      /* when */
    int invalid;           /* a line by its name and key id failed: */
    uint64_t invalid_size; /* on the largest such checkpoint, */
    char why[IG_ERR_MSGMAX]; /* why */
};

struct cli_audit_witnesses {
    struct cli_audit_witness w[IG_AUDIT_CLI_WITNESSES_MAX];
    size_t n;
    size_t quorum;
    int have_final;                /* a note opened with the log's keys: */
    struct audit_checkpoint final; /* the largest */
    size_t cosigned;               /* witnesses with a valid cosignature
                                      on it */
};

/*
 * The witnesses of --witness args[0..nargs): each a vkey (type 04) or a
 * file of them (one a line; blank and '#' lines skipped); quorum 0 means
 * every witness. IG_ERR_INVALID with err: a bad key or file, a witness
 * named twice, a quorum over the number of witnesses; IG_ERR_LIMIT: more
 * than IG_AUDIT_CLI_WITNESSES_MAX.
 */
enum ig_status cli_audit_witnesses_load(struct cli_audit_witnesses *ws,
                                        const char *const *args, size_t nargs,
                                        uint64_t quorum,
                                        struct ig_err *err) IG_WUR;
/* IG_ERR_INVALID (err names both) when a witness's public key is one of
   the log's keys[0..nkeys): the log cosigning itself is no witness. */
enum ig_status cli_audit_witnesses_not_log(const struct cli_audit_witnesses *ws,
                                           const struct audit_verifier *keys,
                                           size_t nkeys,
                                           struct ig_err *err) IG_WUR;
/* Search every note that opens with one of keys[0..nkeys) for each
   witness's cosignatures; final is the latest checkpoint (the largest
   that opens; NULL: none), whose cosignatures count for the quorum. */
void cli_audit_witnesses_check(struct cli_audit_witnesses *ws,
                               const struct cli_audit_notes *ns,
                               const struct audit_verifier *keys, size_t nkeys,
                               const struct audit_checkpoint *final);
/* Print one "witness:" line per witness and a "witnesses:" summary. The
   verdict; why (cap bytes) says what is wrong when it is not MET. */
enum { ACLI_WITNESS_MET = 0, ACLI_WITNESS_SHORT, ACLI_WITNESS_INVALID };
int cli_audit_witnesses_report(const struct cli_audit_witnesses *ws, char *why,
                               size_t cap);

/* ---- output ---- */

/* Write n bytes to f; -1 on a write error. */
int cli_audit_write(FILE *f, const void *p, size_t n);

#endif
