/*
 * cmd_audit.c - `intentgate audit SUBCOMMAND`: a compliance reviewer's
 * tools for the PDP's audit log, and `audit verify`.
 *
 * verify recomputes the log's RFC 6962 Merkle tree from its leaves and
 * checks every signed checkpoint against it with the log's public key
 * alone (audit/audit_verify.h does the checking; this file only feeds
 * it). Leaves come from the PDP's database, opened read-only, or from an
 * export (`audit export --format jsonl` + `--checkpoints-out`). Reading
 * the database it also reports what only a reader sees: a gap in the
 * sequence numbers (a deleted leaf), and a leaf whose bytes no longer hash
 * to the leaf hash stored when it was appended (audit_nodes level 0) -
 * that locates an edit; the signed roots remain the trust anchor.
 *
 * The other subcommands live in cmd_audit_show.c (show),
 * cmd_audit_export.c (export) and cmd_audit_proof.c (proofs and
 * hash-value); cmd_audit_db.c has the readers they share.
 */
#include "cli.h"

#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_verify.h"
#include "cmd_audit_int.h"
#include "ig_b64.h"

static const char audit_usage[] =
    "usage: intentgate audit SUBCOMMAND [ARGS]\n"
    "\n"
    "Verify, read and export the PDP's audit log (docs/audit.md).\n"
    "\n"
    "Subcommands:\n"
    "  verify         check every leaf and signed checkpoint (exit 1 on any "
    "failure)\n"
    "  show           the timeline of one intent\n"
    "  export         the leaves as JSONL or CSV, and the checkpoints\n"
    "  proof          the inclusion proof (C2SP tlog-proof) of one leaf\n"
    "  consistency    the consistency proof between two checkpoints\n"
    "  verify-proof   check one tlog-proof offline\n"
    "  hash-value     the HMAC the log stores for a redacted value\n"
    "\n"
    "Run `intentgate audit SUBCOMMAND --help` for its options.\n"
    "Exit status: 0 ok, 1 verification failed (or I/O), 2 bad arguments or "
    "input.\n";

static const char verify_usage[] =
    "usage: intentgate audit verify --db FILE [--checkpoints FILE] --key KEY\n"
    "       intentgate audit verify --leaves FILE.jsonl --checkpoints FILE "
    "--key KEY\n"
    "\n"
    "Verify an audit log with the log's public key alone: recompute every\n"
    "leaf hash and the Merkle tree (RFC 6962), check every checkpoint's\n"
    "signature, and check that each checkpoint's root is the tree of the\n"
    "leaves before it (so no recorded event was changed, removed, reordered\n"
    "or added below a checkpoint, and no two checkpoints disagree).\n"
    "\n"
    "  --db FILE           the PDP's SQLite database, opened read-only (a\n"
    "                      copy, or the live file). Also reports a gap in\n"
    "                      the sequence (missing_leaf) and a leaf that no\n"
    "                      longer matches its stored hash (leaf_mismatch).\n"
    "  --leaves FILE       an export: one leaf (canonical JSON) a line\n"
    "  --checkpoints FILE  checkpoints as JSONL {\"size\":N,\"note\":\"...\"}\n"
    "                      (from `audit export --checkpoints-out`); with\n"
    "                      --db, checkpoints kept elsewhere to check too\n"
    "  --key KEY           the log's verifier key NAME+ID+KEY, or a file\n"
    "                      holding it (default: $INTENTGATE_AUDIT_KEY);\n"
    "                      repeat it for a log whose key was rotated (each\n"
    "                      checkpoint must be signed by one of them)\n"
    "\n"
    "Prints the counts (leaves, checkpoints, checkpoints checked) and the\n"
    "first failure: its kind (bad_signature, bad_checkpoint, fork,\n"
    "root_mismatch, truncated, missing_leaf, leaf_mismatch) and the leaf\n"
    "index or checkpoint size it concerns. Exit 0 when everything verifies,\n"
    "1 on any failure (also when there is no checkpoint at all), 2 on bad\n"
    "arguments or unreadable input.\n";

#define KEYS_MAX 8 /* --key options: a log's keys over its rotations */

struct verify_args {
    const char *db, *leaves, *checkpoints;
    const char *keys[KEYS_MAX];
    size_t nkeys;
};

/* ---- reading leaves ---- */

struct node_cursor {
    sqlite3_stmt *q;
    int have;
    uint64_t idx;
    const unsigned char *hash;
    int hash_len;
};

static void
node_next(struct node_cursor *c)
{
    sqlite3_int64 idx;

    c->have = 0;
    while (c->q != NULL && sqlite3_step(c->q) == SQLITE_ROW) {
        idx = sqlite3_column_int64(c->q, 0);
        if (idx < 0)
            continue;
        c->idx = (uint64_t)idx;
        c->hash = sqlite3_column_blob(c->q, 1);
        c->hash_len = sqlite3_column_bytes(c->q, 1);
        c->have = 1;
        return;
    }
}

/* Compare a leaf's hash with its stored level-0 node: 0 same or not
   stored, -1 different. *compared counts comparisons. */
static int
node_check(struct node_cursor *c, uint64_t index,
           const unsigned char hash[AUDIT_HASH_BYTES], uint64_t *compared)
{
    while (c->have && c->idx < index)
        node_next(c);
    if (!c->have || c->idx != index)
        return 0;
    (*compared)++;
    return c->hash_len == AUDIT_HASH_BYTES &&
                   memcmp(c->hash, hash, AUDIT_HASH_BYTES) == 0
               ? 0
               : -1;
}

/* ---- one verifier per key ---- */

/*
 * After a key rotation the log holds checkpoints signed by each key in
 * turn. Each checkpoint goes to the verifier of the key that signed it
 * (one no key opens goes to the first, which reports its bad signature);
 * every verifier sees every leaf, hashed once here. All of them recompute
 * the same tree, so checkpoints of different keys are checked against
 * each other too.
 */
struct vset {
    struct audit_verifier key[KEYS_MAX];
    struct audit_verify *v[KEYS_MAX];
    size_t n;
};

static void
vset_leaf(struct vset *s, const unsigned char h[AUDIT_HASH_BYTES])
{
    size_t i;

    for (i = 0; i < s->n; i++)
        audit_verify_leaf_hash(s->v[i], h);
}

static void fail_at(struct vset *s, enum audit_failure f, uint64_t index,
                    const char *fmt, ...) IG_PRINTF(4, 5);

static void
fail_at(struct vset *s, enum audit_failure f, uint64_t index, const char *fmt,
        ...)
{
    char detail[160];
    va_list ap;
    size_t i;

    va_start(ap, fmt);
    (void)vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    for (i = 0; i < s->n; i++)
        audit_verify_fail(s->v[i], f, index, detail);
}

static enum ig_status
vset_start(struct vset *s, const struct acli_notes *ns)
{
    const char **note = calloc(ns->n + 1, sizeof(*note));
    size_t *len = calloc(ns->n + 1, sizeof(*len));
    unsigned char *owner = calloc(ns->n + 1, 1);
    size_t i, k, m, text_len;
    enum ig_status st =
        note != NULL && len != NULL && owner != NULL ? IG_OK : IG_ERR_NOMEM;

    for (i = 0; st == IG_OK && i < ns->n; i++)
        for (k = 1; k < s->n && owner[i] == 0; k++)
            if (audit_note_open(ns->note[i], ns->len[i], &s->key[k], &text_len,
                                NULL) == IG_OK)
                owner[i] = (unsigned char)k;
    for (k = 0; st == IG_OK && k < s->n; k++) {
        for (i = 0, m = 0; i < ns->n; i++)
            if (owner[i] == k) {
                note[m] = ns->note[i];
                len[m++] = ns->len[i];
            }
        st = audit_verify_start(&s->v[k], &s->key[k], note, len, m);
    }
    free(note);
    free(len);
    free(owner);
    return st;
}

/* The reports merged: counts summed, the failure at the lowest index. */
static void
vset_end(struct vset *s, struct audit_report *out)
{
    struct audit_report r;
    size_t k;

    memset(out, 0, sizeof(*out));
    for (k = 0; k < s->n; k++) {
        audit_verify_end(s->v[k], &r);
        out->leaves = r.leaves > out->leaves ? r.leaves : out->leaves;
        out->checkpoints += r.checkpoints;
        out->checked += r.checked;
        if (r.failure != AUDIT_OK &&
            (out->failure == AUDIT_OK || r.index < out->index)) {
            out->failure = r.failure;
            out->index = r.index;
            memcpy(out->detail, r.detail, sizeof(out->detail));
        }
    }
}

static void
vset_free(struct vset *s)
{
    size_t k;

    for (k = 0; k < s->n; k++)
        audit_verify_free(s->v[k]);
}

/* Feed the database's leaves in seq order. */
static enum ig_status
leaves_from_db(sqlite3 *db, struct vset *v, uint64_t *compared,
               struct ig_err *err)
{
    struct node_cursor nodes;
    unsigned char h[AUDIT_HASH_BYTES];
    sqlite3_stmt *q = NULL;
    sqlite3_int64 seq;
    uint64_t next = 0;
    enum ig_status st;
    int rc, failed = 0;

    memset(&nodes, 0, sizeof(nodes));
    if ((st = acli_prepare(db,
                           "SELECT idx, hash FROM audit_nodes WHERE level = 0"
                           " ORDER BY idx",
                           &nodes.q, err)) != IG_OK ||
        (st = acli_prepare(db,
                           "SELECT seq, event FROM audit_events ORDER BY seq",
                           &q, err)) != IG_OK)
        goto out;
    node_next(&nodes);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        seq = sqlite3_column_int64(q, 0);
        if (!failed && (seq < 1 || (uint64_t)seq - 1 < next)) {
            fail_at(v, AUDIT_LEAF_MISMATCH, next,
                    "a row with seq %lld is outside the log", (long long)seq);
            failed = 1;
        } else if (!failed && (uint64_t)seq - 1 > next) {
            fail_at(v, AUDIT_MISSING_LEAF, next,
                    "leaf %llu is missing (a gap in audit_events.seq)",
                    (unsigned long long)next);
            failed = 1;
        }
        audit_leaf_hash(sqlite3_column_text(q, 1),
                        (size_t)sqlite3_column_bytes(q, 1), h);
        if (!failed && node_check(&nodes, next, h, compared) != 0) {
            fail_at(v, AUDIT_LEAF_MISMATCH, next,
                    "leaf %llu no longer hashes to the leaf hash stored "
                    "when it was appended (audit_nodes level 0)",
                    (unsigned long long)next);
            failed = 1;
        }
        vset_leaf(v, h);
        next = seq > 0 ? (uint64_t)seq : next + 1;
    }
    if (rc != SQLITE_DONE)
        st = ig_err_set(err, IG_ERR_IO, "reading audit_events: %s",
                        sqlite3_errmsg(db));
out:
    sqlite3_finalize(q);
    sqlite3_finalize(nodes.q);
    return st;
}

/* Feed an export's lines. */
static enum ig_status
leaves_from_file(const char *path, struct vset *v, struct ig_err *err)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[AUDIT_HASH_BYTES];
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    enum ig_status st = IG_OK;

    if (f == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "cannot open %s: %s", path,
                          strerror(errno));
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (got > 0 && line[got - 1] == '\n')
            got--;
        if (got == 0) {
            st =
                ig_err_set(err, IG_ERR_INVALID,
                           "%s:%ld: an empty line is not a leaf", path, lineno);
            break;
        }
        if ((size_t)got > ACLI_LEAF_MAX) {
            st = ig_err_set(err, IG_ERR_LIMIT, "%s:%ld: leaf over %u bytes",
                            path, lineno, (unsigned)ACLI_LEAF_MAX);
            break;
        }
        audit_leaf_hash(line, (size_t)got, h);
        vset_leaf(v, h);
    }
    if (st == IG_OK && ferror(f))
        st = ig_err_set(err, IG_ERR_IO, "cannot read %s", path);
    free(line);
    (void)fclose(f);
    return st;
}

/* ---- verify ---- */

/* --key KEY, repeatable: *i moves past it. 1, 0 (another argument), -1. */
static int
key_opt(int argc, char **argv, int *i, struct verify_args *a)
{
    const char *v = NULL;
    int r = acli_opt(argv[0], argc, argv, i, "--key", &v);

    if (r <= 0)
        return r;
    if (a->nkeys == KEYS_MAX) {
        cli_error(argv[0], "at most %d --key options", KEYS_MAX);
        return -1;
    }
    a->keys[a->nkeys++] = v;
    return 1;
}

static int
verify_args(int argc, char **argv, struct verify_args *a)
{
    int i, r;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        if ((r = acli_opt(argv[0], argc, argv, &i, "--db", &a->db)) == 0 &&
            (r = acli_opt(argv[0], argc, argv, &i, "--leaves", &a->leaves)) ==
                0 &&
            (r = acli_opt(argv[0], argc, argv, &i, "--checkpoints",
                          &a->checkpoints)) == 0 &&
            (r = key_opt(argc, argv, &i, a)) == 0) {
            cli_error(argv[0], "unexpected argument %s (see --help)", argv[i]);
            return -1;
        }
        if (r < 0)
            return -1;
    }
    if ((a->db == NULL) == (a->leaves == NULL)) {
        cli_error(argv[0], "give either --db FILE or --leaves FILE (see "
                           "--help)");
        return -1;
    }
    if (a->leaves != NULL && a->checkpoints == NULL) {
        cli_error(argv[0], "--leaves needs --checkpoints FILE");
        return -1;
    }
    return 0;
}

/* Report column sizes that disagree with their notes (a moved note). */
static void
check_sizes(struct vset *v, const struct acli_notes *ns)
{
    uint64_t size;
    size_t i;

    for (i = 0; i < ns->n; i++)
        if (acli_note_size(ns->note[i], ns->len[i], &size) == 0 &&
            size != ns->size[i])
            fail_at(v, AUDIT_BAD_CHECKPOINT, ns->size[i],
                    "the checkpoint stored as size %llu signs another size",
                    (unsigned long long)ns->size[i]);
}

/* The latest checkpoint that opens with one of the keys: size and root. */
static void
print_latest(const struct acli_notes *ns, const struct vset *vs,
             uint64_t leaves)
{
    struct audit_checkpoint cp, best;
    char root[64];
    size_t i, k;
    int have = 0;

    for (i = 0; i < ns->n; i++)
        for (k = 0; k < vs->n; k++)
            if (audit_checkpoint_open(ns->note[i], ns->len[i], &vs->key[k], &cp,
                                      NULL) == IG_OK &&
                (!have || cp.size > best.size)) {
                best = cp;
                have = 1;
            }
    if (!have)
        return;
    (void)sodium_bin2base64(root, sizeof(root), best.root, sizeof(best.root),
                            sodium_base64_VARIANT_ORIGINAL);
    (void)printf("latest:      size %llu, root %s\n",
                 (unsigned long long)best.size, root);
    if (leaves > best.size)
        (void)printf("unsigned:    %llu leaves after the latest checkpoint "
                     "(not yet covered by a signature)\n",
                     (unsigned long long)(leaves - best.size));
}

static int
report(const char *cmd, const struct audit_report *rep,
       const struct acli_notes *ns, const struct vset *vs, int from_db,
       uint64_t compared)
{
    (void)printf("log:         %s\n", vs->key[0].name);
    (void)printf("leaves:      %llu\n", (unsigned long long)rep->leaves);
    (void)printf("checkpoints: %llu\n", (unsigned long long)rep->checkpoints);
    (void)printf("checked:     %llu\n", (unsigned long long)rep->checked);
    if (from_db)
        (void)printf("leaf hashes: %llu compared with audit_nodes\n",
                     (unsigned long long)compared);
    if (rep->failure != AUDIT_OK) {
        (void)printf("result:      FAILED %s at %llu: %s\n",
                     audit_failure_name(rep->failure),
                     (unsigned long long)rep->index, rep->detail);
        (void)fflush(stdout);
        cli_error(cmd, "verification failed: %s at %llu: %s",
                  audit_failure_name(rep->failure),
                  (unsigned long long)rep->index, rep->detail);
        return CLI_EXIT_FAIL;
    }
    if (rep->checkpoints == 0) {
        (void)printf("result:      FAILED: no checkpoint, nothing is signed\n");
        (void)fflush(stdout);
        cli_error(cmd, "verification failed: the log has no checkpoint");
        return CLI_EXIT_FAIL;
    }
    print_latest(ns, vs, rep->leaves);
    (void)printf("result:      ok\n");
    if (fflush(stdout) != 0) {
        cli_error(cmd, "cannot write to standard output");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* The keys, the database and the checkpoints. */
static enum ig_status
verify_inputs(const struct verify_args *a, struct vset *vs, sqlite3 **db,
              struct acli_notes *ns, struct ig_err *err)
{
    enum ig_status st = IG_OK;
    size_t k;

    vs->n = a->nkeys > 0 ? a->nkeys : 1;
    for (k = 0; k < vs->n && st == IG_OK; k++)
        st = acli_key_load(a->nkeys > 0 ? a->keys[k] : NULL, &vs->key[k], err);
    for (k = 1; k < vs->n && st == IG_OK; k++)
        if (strcmp(vs->key[k].name, vs->key[0].name) != 0)
            st = ig_err_set(err, IG_ERR_INVALID,
                            "the keys name two logs (%s, %s): one log at a "
                            "time",
                            vs->key[0].name, vs->key[k].name);
    if (st == IG_OK && a->db != NULL &&
        (st = acli_db_open(a->db, db, err)) == IG_OK)
        st = acli_notes_read_db(ns, *db, err);
    if (st == IG_OK && a->checkpoints != NULL)
        st = acli_notes_read_file(ns, a->checkpoints, err);
    return st;
}

int
acli_verify(int argc, char **argv)
{
    struct verify_args a;
    struct vset vs;
    struct acli_notes ns;
    struct audit_report rep;
    sqlite3 *db = NULL;
    struct ig_err err;
    uint64_t compared = 0;
    enum ig_status st;
    int rc;

    if (acli_help(argc, argv, verify_usage))
        return CLI_EXIT_OK;
    if (verify_args(argc, argv, &a) != 0)
        return CLI_EXIT_USAGE;
    memset(&vs, 0, sizeof(vs));
    acli_notes_init(&ns);
    ig_err_clear(&err);
    if ((st = verify_inputs(&a, &vs, &db, &ns, &err)) != IG_OK)
        goto out;
    if ((st = vset_start(&vs, &ns)) != IG_OK) {
        (void)ig_err_set(&err, st, "cannot start: %s", ig_strerror(st));
        goto out;
    }
    if (db != NULL)
        check_sizes(&vs, &ns);
    st = db != NULL ? leaves_from_db(db, &vs, &compared, &err)
                    : leaves_from_file(a.leaves, &vs, &err);
    if (st == IG_OK)
        vset_end(&vs, &rep);
out:
    if (st != IG_OK) {
        cli_error(argv[0], "%s", err.msg);
        rc = acli_exit(st);
    } else {
        rc = report(argv[0], &rep, &ns, &vs, db != NULL, compared);
    }
    vset_free(&vs);
    acli_db_close(db);
    acli_notes_release(&ns);
    return rc;
}

/* ---- dispatch ---- */

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} subcommands[] = {
    {"verify", acli_verify},           {"show", acli_show},
    {"export", acli_export},           {"proof", acli_proof},
    {"consistency", acli_consistency}, {"verify-proof", acli_verify_proof},
    {"hash-value", acli_hash_value},
};

int
cli_audit(int argc, char **argv)
{
    char name[64];
    size_t i;

    if (argc < 2) {
        (void)fputs(audit_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        (void)fputs(audit_usage, stdout);
        return CLI_EXIT_OK;
    }
    for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
        if (strcmp(argv[1], subcommands[i].name) != 0)
            continue;
        /* Error lines read "intentgate audit verify: ...". */
        (void)snprintf(name, sizeof(name), "audit %s", argv[1]);
        argv[1] = name;
        return subcommands[i].run(argc - 1, argv + 1);
    }
    cli_error(argv[0],
              "unknown subcommand '%s' (run `intentgate audit --help`)",
              argv[1]);
    return CLI_EXIT_USAGE;
}
