/*
 * cmd_audit_proof.c - proofs a reviewer can hand to someone else:
 *
 *   audit proof INDEX --db FILE [--size N] [--leaf-out FILE]
 *       the C2SP tlog-proof that leaf INDEX is in the signed checkpoint of
 *       size N (default: the latest), built from the stored subtree hashes
 *   audit consistency OLD NEW --db FILE [--key KEY]
 *       the RFC 9162 consistency proof between two checkpoints
 *   audit verify-proof --key KEY --proof FILE --leaf FILE
 *       check a tlog-proof offline: the checkpoint's signature and origin,
 *       then the inclusion of the leaf's exact bytes
 *
 * proof and consistency check what they print against the checkpoint
 * roots before printing it (a database whose stored hashes disagree with
 * its checkpoints gives no proof, and exit 1). hash-value is in
 * cmd_audit_redact.c.
 */
#include "cli.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_audit_int.h"

#define PROOF_FILE_MAX (AUDIT_NOTE_MAX + 16 * 1024)

static const char proof_usage[] =
    "usage: intentgate audit proof INDEX --db FILE|URL [--size N] "
    "[--leaf-out FILE]\n"
    "\n"
    "Print the inclusion proof of leaf INDEX (0-based; a leaf's seq - 1, as\n"
    "`audit show` prints it) in the tree of the signed checkpoint of size N\n"
    "(default: the latest checkpoint), as a C2SP tlog-proof:\n"
    "  c2sp.org/tlog-proof@v1\n"
    "  index INDEX\n"
    "  <base64 hash>...\n"
    "  <blank line>\n"
    "  <the signed checkpoint>\n"
    "  --leaf-out FILE   also write the leaf's exact bytes to FILE, for\n"
    "                    `audit verify-proof --leaf FILE`\n";

static const char consistency_usage[] =
    "usage: intentgate audit consistency OLD NEW --db FILE|URL [--key KEY]\n"
    "\n"
    "Print the consistency proof (RFC 9162) that the checkpointed tree of\n"
    "OLD leaves is a prefix of the checkpointed tree of NEW leaves: one\n"
    "base64 hash a line, in RFC 9162 order (none when OLD = NEW), as\n"
    "GET /v1/audit/proof/consistency gives it.\n"
    "OLD and NEW must be sizes of checkpoints in the log. With --key the\n"
    "two checkpoints' signatures are checked first. The proof is checked\n"
    "against the two roots before it is printed.\n";

static const char verify_proof_usage[] =
    "usage: intentgate audit verify-proof --key KEY --proof FILE --leaf "
    "FILE\n"
    "\n"
    "Check a C2SP tlog-proof (from `audit proof`) offline with the log's\n"
    "verifier key: the checkpoint it carries must be signed by KEY with\n"
    "KEY's name as its origin, and the proof must show that the exact bytes\n"
    "of the leaf FILE (one trailing newline is ignored) are leaf INDEX of\n"
    "that tree. Exit 0 when it holds, 1 when it does not, 2 on bad input.\n"
    "  --key KEY   the verifier key NAME+ID+KEY, or a file holding it\n"
    "              (default: $INTENTGATE_AUDIT_KEY)\n";

/* The checkpoint of a note: opened with key when given, else only its
   text parsed. */
static enum ig_status
note_checkpoint(const char *note, size_t len, const struct audit_verifier *key,
                struct audit_checkpoint *cp, struct ig_err *err)
{
    const char *blank;

    if (key != NULL)
        return audit_checkpoint_open(note, len, key, cp, err);
    blank = strstr(note, "\n\n");
    if (blank == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "a checkpoint is malformed");
    return audit_checkpoint_parse(note, (size_t)(blank - note) + 1, cp, err);
}

static int
fail(const char *cmd, enum ig_status st, const struct ig_err *err)
{
    cli_error(cmd, "%s", err->msg[0] != '\0' ? err->msg : ig_strerror(st));
    return cli_audit_exit(st);
}

/* ---- proof ---- */

struct proof_args {
    const char *db, *size, *leaf_out, *index;
    uint64_t i, n;
};

static int
proof_args(int argc, char **argv, struct proof_args *a)
{
    int i, r;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        if ((r = cli_audit_opt(argv[0], argc, argv, &i, "--db", &a->db)) == 0 &&
            (r = cli_audit_opt(argv[0], argc, argv, &i, "--size", &a->size)) ==
                0 &&
            (r = cli_audit_opt(argv[0], argc, argv, &i, "--leaf-out",
                               &a->leaf_out)) == 0) {
            if (argv[i][0] == '-' || a->index != NULL) {
                cli_error(argv[0], "unexpected argument %s (see --help)",
                          argv[i]);
                return -1;
            }
            a->index = argv[i];
        }
        if (r < 0)
            return -1;
    }
    if (a->index == NULL || a->db == NULL) {
        cli_error(argv[0], "usage: audit proof INDEX --db FILE [--size N]");
        return -1;
    }
    if (cli_audit_u64(a->index, &a->i) != 0 ||
        (a->size != NULL &&
         (cli_audit_u64(a->size, &a->n) != 0 || a->n == 0))) {
        cli_error(argv[0], "INDEX and --size must be decimal numbers (size "
                           "> 0)");
        return -1;
    }
    return 0;
}

static enum ig_status
write_leaf(struct store_log *db, uint64_t index, const char *path,
           struct ig_err *err)
{
    char *leaf = NULL;
    size_t len;
    FILE *f;
    enum ig_status st = store_log_leaf(db, index, &leaf, &len, err);

    if (st != IG_OK)
        return st;
    if ((f = fopen(path, "wb")) == NULL) {
        st = ig_err_set(err, IG_ERR_INVALID, "cannot create %s: %s", path,
                        strerror(errno));
    } else {
        if (cli_audit_write(f, leaf, len) != 0)
            st = IG_ERR_IO;
        if (fclose(f) != 0)
            st = IG_ERR_IO;
        if (st != IG_OK)
            (void)ig_err_set(err, st, "cannot write %s", path);
    }
    free(leaf);
    return st;
}

/* Check the proof against the checkpoint's root and the stored leaf. */
static enum ig_status
proof_self_check(struct store_log *db, const struct proof_args *a,
                 const char *note, size_t note_len,
                 unsigned char proof[][AUDIT_HASH_BYTES], size_t n,
                 struct ig_err *err)
{
    struct audit_checkpoint cp;
    unsigned char h[AUDIT_HASH_BYTES];
    char *leaf = NULL;
    size_t len;
    enum ig_status st;

    if ((st = note_checkpoint(note, note_len, NULL, &cp, err)) != IG_OK ||
        (st = store_log_leaf(db, a->i, &leaf, &len, err)) != IG_OK)
        return st;
    audit_leaf_hash(leaf, len, h);
    free(leaf);
    if (cp.size != a->n ||
        audit_verify_inclusion(h, a->i, a->n, (const unsigned char(*)[32])proof,
                               n, cp.root) != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "the stored tree does not prove leaf %llu in the "
                          "checkpoint of size %llu: the log was altered (run "
                          "`audit verify`)",
                          (unsigned long long)a->i, (unsigned long long)a->n);
    return IG_OK;
}

int
cli_audit_proof(int argc, char **argv)
{
    unsigned char proof[AUDIT_PROOF_MAX][AUDIT_HASH_BYTES];
    struct proof_args a;
    struct ig_buf out;
    struct ig_err err;
    struct store_log *db = NULL;
    char *note = NULL;
    size_t note_len, n = 0;
    enum ig_status st;
    int rc;

    if (cli_audit_help(argc, argv, proof_usage))
        return CLI_EXIT_OK;
    if (proof_args(argc, argv, &a) != 0)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    ig_buf_init(&out, PROOF_FILE_MAX);
    if ((st = store_log_open(a.db, &db, &err)) != IG_OK ||
        (st = cli_audit_db_checkpoint(db, a.n, &note, &note_len, &a.n, &err)) !=
            IG_OK)
        goto out;
    if (a.i >= a.n) {
        st = ig_err_set(&err, IG_ERR_INVALID,
                        "leaf %llu is not in the checkpoint of size %llu",
                        (unsigned long long)a.i, (unsigned long long)a.n);
        goto out;
    }
    if ((st = store_log_nodes(db, a.n, &err)) != IG_OK)
        goto out;
    st = audit_inclusion_proof(a.i, a.n, store_log_fetch_node, db, proof, &n);
    if (st != IG_OK) {
        (void)ig_err_set(&err, st == IG_ERR_NOTFOUND ? IG_ERR_IO : st,
                         "cannot build the proof from the stored tree: %s",
                         ig_strerror(st));
        st = st == IG_ERR_NOTFOUND ? IG_ERR_IO : st;
        goto out;
    }
    if ((st = proof_self_check(db, &a, note, note_len, proof, n, &err)) !=
            IG_OK ||
        (a.leaf_out != NULL &&
         (st = write_leaf(db, a.i, a.leaf_out, &err)) != IG_OK))
        goto out;
    if ((st = audit_proof_format(a.i, (const unsigned char(*)[32])proof, n,
                                 note, &out)) != IG_OK) {
        (void)ig_err_set(&err, st, "cannot format the proof: %s",
                         ig_strerror(st));
        goto out;
    }
    if (cli_audit_write(stdout, out.data, out.len) != 0 || fflush(stdout) != 0)
        st = ig_err_set(&err, IG_ERR_IO, "cannot write to standard output");
out:
    rc = st == IG_OK ? CLI_EXIT_OK : fail(argv[0], st, &err);
    store_log_close(db);
    free(note);
    ig_buf_release(&out);
    return rc;
}

/* ---- consistency ---- */

struct cons_args {
    const char *db, *key, *sizes[2];
    uint64_t size[2];
};

static int
cons_args(int argc, char **argv, struct cons_args *a)
{
    int i, r, k = 0;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        if ((r = cli_audit_opt(argv[0], argc, argv, &i, "--db", &a->db)) == 0 &&
            (r = cli_audit_opt(argv[0], argc, argv, &i, "--key", &a->key)) ==
                0) {
            if (argv[i][0] == '-' || k == 2) {
                cli_error(argv[0], "unexpected argument %s (see --help)",
                          argv[i]);
                return -1;
            }
            a->sizes[k++] = argv[i];
        }
        if (r < 0)
            return -1;
    }
    if (k != 2 || a->db == NULL) {
        cli_error(argv[0], "usage: audit consistency OLD NEW --db FILE");
        return -1;
    }
    if (cli_audit_u64(a->sizes[0], &a->size[0]) != 0 ||
        cli_audit_u64(a->sizes[1], &a->size[1]) != 0 || a->size[0] == 0 ||
        a->size[0] > a->size[1]) {
        cli_error(argv[0], "OLD and NEW must be sizes with 0 < OLD <= NEW");
        return -1;
    }
    return 0;
}

/* The roots of the two checkpoints (signatures checked with key). */
static enum ig_status
cons_roots(struct store_log *db, const struct cons_args *a,
           const struct audit_verifier *key, struct audit_checkpoint cp[2],
           struct ig_err *err)
{
    char *note = NULL;
    size_t len;
    uint64_t got;
    enum ig_status st = IG_OK;
    int k;

    for (k = 0; k < 2 && st == IG_OK; k++) {
        st = cli_audit_db_checkpoint(db, a->size[k], &note, &len, &got, err);
        if (st == IG_OK)
            st = note_checkpoint(note, len, key, &cp[k], err);
        if (st == IG_OK && cp[k].size != a->size[k])
            st = ig_err_set(err, IG_ERR_CRYPTO,
                            "the checkpoint stored as size %llu signs "
                            "another size",
                            (unsigned long long)a->size[k]);
        free(note);
        note = NULL;
    }
    return st;
}

static enum ig_status
cons_print(unsigned char proof[][AUDIT_HASH_BYTES], size_t n)
{
    char b64[AUDIT_HASH_BYTES * 2];
    size_t i;

    for (i = 0; i < n; i++) {
        (void)sodium_bin2base64(b64, sizeof(b64), proof[i], AUDIT_HASH_BYTES,
                                sodium_base64_VARIANT_ORIGINAL);
        if (printf("%s\n", b64) < 0)
            return IG_ERR_IO;
    }
    return fflush(stdout) == 0 ? IG_OK : IG_ERR_IO;
}

int
cli_audit_consistency(int argc, char **argv)
{
    unsigned char proof[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    struct audit_checkpoint cp[2];
    struct audit_verifier key;
    struct cons_args a;
    struct ig_err err;
    struct store_log *db = NULL;
    size_t n = 0;
    enum ig_status st;

    if (cli_audit_help(argc, argv, consistency_usage))
        return CLI_EXIT_OK;
    if (cons_args(argc, argv, &a) != 0)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    if ((a.key != NULL &&
         (st = cli_audit_key_load(a.key, &key, &err)) != IG_OK) ||
        (st = store_log_open(a.db, &db, &err)) != IG_OK ||
        (st = cons_roots(db, &a, a.key != NULL ? &key : NULL, cp, &err)) !=
            IG_OK ||
        (st = store_log_nodes(db, a.size[1], &err)) != IG_OK)
        goto out;
    if (a.size[0] < a.size[1] &&
        (st = audit_consistency_proof(a.size[0], a.size[1],
                                      store_log_fetch_node, db, proof, &n)) !=
            IG_OK) {
        st = ig_err_set(&err, IG_ERR_IO,
                        "cannot build the proof from the stored tree: %s",
                        ig_strerror(st));
        goto out;
    }
    if (a.size[0] == a.size[1]
            ? memcmp(cp[0].root, cp[1].root, AUDIT_HASH_BYTES) != 0
            : audit_verify_consistency(
                  a.size[0], a.size[1], cp[0].root, cp[1].root,
                  (const unsigned char(*)[32])proof, n) != IG_OK) {
        st = ig_err_set(&err, IG_ERR_CRYPTO,
                        "the checkpoints of sizes %llu and %llu are not "
                        "consistent with the stored tree: the log was altered "
                        "or forked (run `audit verify`)",
                        (unsigned long long)a.size[0],
                        (unsigned long long)a.size[1]);
        goto out;
    }
    if (cons_print(proof, n) != IG_OK)
        st = ig_err_set(&err, IG_ERR_IO, "cannot write to standard output");
out:
    store_log_close(db);
    return st == IG_OK ? CLI_EXIT_OK : fail(argv[0], st, &err);
}

/* ---- verify-proof ---- */

static int
vp_args(int argc, char **argv, const char **key, const char **proof,
        const char **leaf)
{
    int i, r;

    *key = *proof = *leaf = NULL;
    for (i = 1; i < argc; i++) {
        if ((r = cli_audit_opt(argv[0], argc, argv, &i, "--key", key)) == 0 &&
            (r = cli_audit_opt(argv[0], argc, argv, &i, "--proof", proof)) ==
                0 &&
            (r = cli_audit_opt(argv[0], argc, argv, &i, "--leaf", leaf)) == 0) {
            cli_error(argv[0], "unexpected argument %s (see --help)", argv[i]);
            return -1;
        }
        if (r < 0)
            return -1;
    }
    if (*proof == NULL || *leaf == NULL) {
        cli_error(argv[0], "usage: audit verify-proof --key KEY --proof FILE "
                           "--leaf FILE");
        return -1;
    }
    return 0;
}

/* Read path into b (initialised by the caller with its cap). */
static enum ig_status
read_file(const char *path, struct ig_buf *b, struct ig_err *err)
{
    struct ig_err rerr;
    enum ig_status st;

    st = cli_read_input(path, b, &rerr);
    if (st != IG_OK)
        return ig_err_set(err, st == IG_ERR_NOMEM ? st : IG_ERR_INVALID, "%s",
                          rerr.msg);
    if (b->data == NULL && ig_buf_add(b, "", 0) != IG_OK)
        return IG_ERR_NOMEM;
    return IG_OK;
}

static enum ig_status
check_proof(const struct audit_verifier *key, const struct ig_buf *pf,
            const struct ig_buf *lf, struct ig_err *err)
{
    unsigned char proof[AUDIT_PROOF_MAX][AUDIT_HASH_BYTES];
    unsigned char h[AUDIT_HASH_BYTES];
    struct audit_checkpoint cp;
    const char *note;
    size_t n, note_len, leaf_len = lf->len;
    uint64_t index;
    enum ig_status st;

    st = audit_proof_parse(pf->data, pf->len, &index, proof, &n, &note,
                           &note_len, err);
    if (st != IG_OK)
        return IG_ERR_INVALID;
    if ((st = audit_checkpoint_open(note, note_len, key, &cp, err)) != IG_OK)
        return st == IG_ERR_INVALID ? st : IG_ERR_CRYPTO;
    if (leaf_len > 0 && lf->data[leaf_len - 1] == '\n')
        leaf_len--;
    audit_leaf_hash(lf->data, leaf_len, h);
    if (index >= cp.size ||
        audit_verify_inclusion(h, index, cp.size,
                               (const unsigned char(*)[32])proof, n,
                               cp.root) != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "the proof does not show this leaf at index %llu "
                          "in the checkpoint of size %llu",
                          (unsigned long long)index,
                          (unsigned long long)cp.size);
    if (printf("ok: leaf %llu is in log %s at size %llu\n",
               (unsigned long long)index, cp.origin,
               (unsigned long long)cp.size) < 0 ||
        fflush(stdout) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot write to standard output");
    return IG_OK;
}

int
cli_audit_verify_proof(int argc, char **argv)
{
    const char *key_arg, *proof_path, *leaf_path;
    struct audit_verifier key;
    struct ig_buf pf, lf;
    struct ig_err err;
    enum ig_status st;
    int rc;

    if (cli_audit_help(argc, argv, verify_proof_usage))
        return CLI_EXIT_OK;
    if (vp_args(argc, argv, &key_arg, &proof_path, &leaf_path) != 0)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    ig_buf_init(&pf, PROOF_FILE_MAX);
    ig_buf_init(&lf, IG_AUDIT_CLI_LEAF_MAX + 1);
    if ((st = cli_audit_key_load(key_arg, &key, &err)) == IG_OK &&
        (st = read_file(proof_path, &pf, &err)) == IG_OK &&
        (st = read_file(leaf_path, &lf, &err)) == IG_OK)
        st = check_proof(&key, &pf, &lf, &err);
    if (st == IG_ERR_CRYPTO) {
        cli_error(argv[0], "proof refused: %s", err.msg);
        rc = CLI_EXIT_FAIL;
    } else {
        rc = st == IG_OK ? CLI_EXIT_OK : fail(argv[0], st, &err);
    }
    ig_buf_release(&pf);
    ig_buf_release(&lf);
    return rc;
}
