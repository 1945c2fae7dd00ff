/*
 * cmd_audit_verify.c - `intentgate audit verify`: check an audit log with
 * its public key alone.
 *
 * verify recomputes the log's RFC 6962 Merkle tree from its leaves and
 * checks every signed checkpoint against it (audit/audit_verify.h does
 * the checking; cmd_audit_leaves.c feeds it). Leaves come from the PDP's
 * database, opened read-only, or from an export (`audit export --format
 * jsonl` + `--checkpoints-out`). Checkpoints kept elsewhere (--checkpoints,
 * and the PDP's anchor file, --anchor) are checked with the others: one
 * tree must match them all. The leaves' times are read on the way
 * (cmd_audit_times.c): a leaf left unsigned longer than the PDP would
 * leave it makes the status ACLI_EXIT_UNSIGNED.
 */
#include "cli.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_audit_int.h"
#include "ig_time.h"

/* The limits in the usage text, as strings. */
#define WITNESSES_MAX_S ACLI_STR(IG_AUDIT_CLI_WITNESSES_MAX)
#define INTERVAL_S ACLI_STR(IG_AUDIT_VERIFY_INTERVAL)
#define MAX_GAP_S ACLI_STR(IG_AUDIT_VERIFY_MAX_GAP)
#define MARGIN_S ACLI_STR(IG_AUDIT_UNSIGNED_MARGIN)

static const char verify_usage[] =
    "usage: intentgate audit verify --db FILE|URL [--checkpoints FILE] "
    "[--anchor FILE] --key KEY\n"
    "                               [--witness VKEY ... [--witness-quorum K]]\n"
    "                               [--checkpoint-interval S] [--at TIME] "
    "[--max-gap S]\n"
    "       intentgate audit verify --leaves FILE.jsonl --checkpoints FILE "
    "--key KEY ...\n"
    "\n"
    "Verify an audit log with the log's public key alone: recompute every\n"
    "leaf hash and the Merkle tree (RFC 6962), check every checkpoint's\n"
    "signature, and check that each checkpoint's root is the tree of the\n"
    "leaves before it (so no recorded event was changed, removed, reordered\n"
    "or added below a checkpoint, and no two checkpoints disagree).\n"
    "\n"
    "  --db FILE|URL       the PDP's SQLite database, opened read-only (a\n"
    "                      copy, or the live file), or its PostgreSQL\n"
    "                      database (postgresql://USER@HOST:PORT/DBNAME, no\n"
    "                      password: PGPASSWORD or ~/.pgpass), read in one\n"
    "                      read-only snapshot. Also reports a gap in\n"
    "                      the sequence (missing_leaf) and a leaf that no\n"
    "                      longer matches its stored hash (leaf_mismatch),\n"
    "                      and a stored tile that is missing, malformed or\n"
    "                      not the leaves' (bad_tile).\n"
    "  --leaves FILE       an export: one leaf (canonical JSON) a line\n"
    "  --checkpoints FILE  checkpoints as JSONL {\"size\":N,\"note\":\"...\"}\n"
    "                      (from `audit export --checkpoints-out`); with\n"
    "                      --db, checkpoints kept elsewhere to check too\n"
    "  --anchor FILE       the PDP's anchor file ([audit] anchor: the latest\n"
    "                      signed checkpoint, kept outside the database):\n"
    "                      the log must hold and match it\n"
    "  --key KEY           the log's verifier key NAME+ID+KEY, or a file\n"
    "                      holding it (default: $INTENTGATE_AUDIT_KEY);\n"
    "                      repeat it for a log whose key was rotated (each\n"
    "                      checkpoint must be signed by one of them)\n"
    "  --witness VKEY      a witness's verifier key NAME+ID+KEY (type 04,\n"
    "                      c2sp.org/tlog-cosignature), or a file of them, one\n"
    "                      a line; repeat it for each witness (at "
    "most " WITNESSES_MAX_S ")\n"
    "  --witness-quorum K  how many of the named witnesses must have\n"
    "                      cosigned the latest checkpoint (default: all)\n"
    "  --checkpoint-interval S  the PDP's checkpoint_interval "
    "(default " INTERVAL_S ")\n"
    "  --at TIME           when the copy was taken (YYYY-MM-DDTHH:MM:SSZ;\n"
    "                      default now)\n"
    "  --max-gap S         report gaps between events longer than S seconds\n"
    "                      (default " MAX_GAP_S "; 0: none)\n"
    "\n"
    "Prints the counts (leaves, checkpoints, checkpoints checked), the\n"
    "leaves' times with gaps over --max-gap, times going back, checkpoints\n"
    "signed late, and the first failure: its kind (bad_signature,\n"
    "bad_checkpoint, fork, root_mismatch, truncated, missing_leaf,\n"
    "leaf_mismatch, bad_tile) and the leaf index or checkpoint size it "
    "concerns.\n"
    "With --witness, one line per witness: whether it cosigned the latest\n"
    "checkpoint (the largest size read: the database's notes, --checkpoints\n"
    "and --anchor carry the cosignature lines), missing, or INVALID, and its\n"
    "view: the largest size it validly cosigned, and when.\n"
    "\n"
    "Exit status: 0 everything verifies; 1 a failure (also when there is no\n"
    "checkpoint at all, or a cosignature by a named witness that does not\n"
    "verify: a forgery, or a line copied from another checkpoint), or an\n"
    "I/O error; 2 bad arguments or unreadable input;\n"
    "3 everything verifies but a leaf is not covered by any checkpoint\n"
    "although it was logged more than checkpoint_interval + " MARGIN_S " s\n"
    "before --at (a running PDP signs within the interval and everything at\n"
    "a clean stop: the leaf was added behind its back, or the PDP stopped\n"
    "without signing);\n"
    "4 everything verifies but fewer than --witness-quorum of the named\n"
    "witnesses cosigned the latest checkpoint (4 wins over 3).\n";

struct verify_args {
    const char *db, *leaves, *checkpoints, *anchor;
    const char *interval, *at, *max_gap, *quorum;
    const char *keys[IG_AUDIT_CLI_KEYS_MAX];
    size_t nkeys;
    const char *witnesses[IG_AUDIT_CLI_WITNESSES_MAX];
    size_t nwitnesses;
    uint64_t witness_quorum; /* 0: every witness */
    struct cli_audit_times_opts t;
};

/* A repeatable option `name` (--key, --witness) into list[*n], at most
   max: *i moves past it. 1, 0 (another argument), -1. */
static int
list_opt(int argc, char **argv, int *i, const char *name, const char **list,
         size_t *n, size_t max)
{
    const char *v = NULL;
    int r = cli_audit_opt(argv[0], argc, argv, i, name, &v);

    if (r <= 0)
        return r;
    if (*n == max) {
        cli_error(argv[0], "at most %zu %s options", max, name);
        return -1;
    }
    list[(*n)++] = v;
    return 1;
}

/* A number of seconds (0 .. 1e9) for opt; s NULL keeps *out. */
static int
seconds_arg(const char *cmd, const char *opt, const char *s, int64_t *out)
{
    uint64_t v;

    if (s == NULL)
        return 0;
    if (cli_audit_u64(s, &v) != 0 || v > 1000000000u) {
        cli_error(cmd, "%s %s: expected a number of seconds", opt, s);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static int
verify_opt(int argc, char **argv, int *i, struct verify_args *a)
{
    const char *cmd = argv[0];
    int r;

    if ((r = cli_audit_opt(cmd, argc, argv, i, "--db", &a->db)) != 0 ||
        (r = cli_audit_opt(cmd, argc, argv, i, "--leaves", &a->leaves)) != 0 ||
        (r = cli_audit_opt(cmd, argc, argv, i, "--checkpoints",
                           &a->checkpoints)) != 0 ||
        (r = cli_audit_opt(cmd, argc, argv, i, "--anchor", &a->anchor)) != 0 ||
        (r = cli_audit_opt(cmd, argc, argv, i, "--checkpoint-interval",
                           &a->interval)) != 0 ||
        (r = cli_audit_opt(cmd, argc, argv, i, "--at", &a->at)) != 0 ||
        (r = cli_audit_opt(cmd, argc, argv, i, "--max-gap", &a->max_gap)) !=
            0 ||
        (r = cli_audit_opt(cmd, argc, argv, i, "--witness-quorum",
                           &a->quorum)) != 0 ||
        (r = list_opt(argc, argv, i, "--witness", a->witnesses, &a->nwitnesses,
                      IG_AUDIT_CLI_WITNESSES_MAX)) != 0)
        return r;
    return list_opt(argc, argv, i, "--key", a->keys, &a->nkeys,
                    IG_AUDIT_CLI_KEYS_MAX);
}

static int
verify_args(int argc, char **argv, struct verify_args *a)
{
    const char *cmd = argv[0];
    int i, r;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        if ((r = verify_opt(argc, argv, &i, a)) == 0) {
            cli_error(cmd, "unexpected argument %s (see --help)", argv[i]);
            return -1;
        }
        if (r < 0)
            return -1;
    }
    if ((a->db == NULL) == (a->leaves == NULL)) {
        cli_error(cmd, "give either --db FILE or --leaves FILE (see --help)");
        return -1;
    }
    if (a->leaves != NULL && a->checkpoints == NULL) {
        cli_error(cmd, "--leaves needs --checkpoints FILE");
        return -1;
    }
    if (a->quorum != NULL && a->nwitnesses == 0) {
        cli_error(cmd, "--witness-quorum needs --witness VKEY");
        return -1;
    }
    if (a->quorum != NULL &&
        (cli_audit_u64(a->quorum, &a->witness_quorum) != 0 ||
         a->witness_quorum == 0)) {
        cli_error(cmd,
                  "--witness-quorum %s: expected a number of witnesses "
                  "(1 or more)",
                  a->quorum);
        return -1;
    }
    a->t.at = ig_time_now();
    a->t.interval = IG_AUDIT_VERIFY_INTERVAL;
    a->t.max_gap = IG_AUDIT_VERIFY_MAX_GAP;
    if (seconds_arg(cmd, "--checkpoint-interval", a->interval,
                    &a->t.interval) != 0 ||
        seconds_arg(cmd, "--max-gap", a->max_gap, &a->t.max_gap) != 0 ||
        cli_audit_time_arg(cmd, "--at", a->at, &a->t.at) != 0)
        return -1;
    return 0;
}

/* Report column sizes that disagree with their notes (a moved note). */
static void
check_sizes(struct cli_audit_vset *v, const struct cli_audit_notes *ns)
{
    uint64_t size;
    size_t i;

    for (i = 0; i < ns->n; i++)
        if (cli_audit_note_size(ns->note[i], ns->len[i], &size) == 0 &&
            size != ns->size[i])
            cli_audit_vset_fail(
                v, AUDIT_BAD_CHECKPOINT, ns->size[i],
                "the checkpoint stored as size %llu signs another "
                "size",
                (unsigned long long)ns->size[i]);
}

/* The latest checkpoint that opens with one of the keys; 0 when none. */
static int
latest(const struct cli_audit_notes *ns, const struct cli_audit_vset *vs,
       struct audit_checkpoint *best)
{
    struct audit_checkpoint cp;
    size_t i, k;
    int have = 0;

    for (i = 0; i < ns->n; i++)
        for (k = 0; k < vs->n; k++)
            if (audit_checkpoint_open(ns->note[i], ns->len[i], &vs->key[k], &cp,
                                      NULL) == IG_OK &&
                (!have || cp.size > best->size)) {
                *best = cp;
                have = 1;
            }
    return have;
}

static void
print_checkpoint(const char *label, const struct audit_checkpoint *cp,
                 const char *file)
{
    char root[64];

    (void)sodium_bin2base64(root, sizeof(root), cp->root, sizeof(cp->root),
                            sodium_base64_VARIANT_ORIGINAL);
    (void)printf("%-13ssize %llu, root %s%s%s%s\n", label,
                 (unsigned long long)cp->size, root, file ? " (" : "",
                 file ? file : "", file ? ")" : "");
}

struct verify_run {
    struct verify_args a;
    struct cli_audit_vset vs;
    struct cli_audit_notes ns;
    struct audit_report rep;
    struct cli_audit_times *times;
    struct store_log *db;
    uint64_t compared;
    uint64_t queued;                /* PostgreSQL: events not yet in the log */
    int anchored;                   /* the anchor's note was read */
    struct audit_checkpoint anchor; /* its claim (size 0 if unreadable) */
    struct cli_audit_witnesses *ws; /* --witness; NULL without */
    int have_best;                  /* a note opened with the keys: */
    struct audit_checkpoint best;   /* the latest (largest) */
};

static int
failed(const char *cmd, const struct verify_run *r)
{
    const struct audit_report *rep = &r->rep;
    int at_anchor = r->anchored && rep->index == r->anchor.size &&
                    rep->failure != AUDIT_MISSING_LEAF &&
                    rep->failure != AUDIT_LEAF_MISMATCH;

    (void)printf("result:      FAILED %s at %llu: %s\n",
                 audit_failure_name(rep->failure),
                 (unsigned long long)rep->index, rep->detail);
    (void)fflush(stdout);
    cli_error(cmd, "verification failed: %s at %llu: %s%s%s%s",
              audit_failure_name(rep->failure), (unsigned long long)rep->index,
              rep->detail, at_anchor ? " (the checkpoint in --anchor " : "",
              at_anchor ? r->a.anchor : "", at_anchor ? ")" : "");
    return CLI_EXIT_FAIL;
}

/* The witnesses' lines, when --witness named some: their verdict
   (ACLI_WITNESS_*), why says what is wrong. */
static int
witnesses(const struct verify_run *r, char *why, size_t cap)
{
    return r->ws != NULL ? cli_audit_witnesses_report(r->ws, why, cap)
                         : ACLI_WITNESS_MET;
}

/* The result line and the status, once the log itself verified. */
static int
verdict(const char *cmd, int late, const char *why, int wv, const char *wwhy)
{
    (void)printf("result:      %s%s\n",
                 wv == ACLI_WITNESS_INVALID ? "FAILED bad_cosignature: "
                 : wv == ACLI_WITNESS_SHORT ? "QUORUM NOT MET: "
                 : late                     ? "UNSIGNED"
                                            : "ok",
                 wv != ACLI_WITNESS_MET ? wwhy : "");
    if (fflush(stdout) != 0) {
        cli_error(cmd, "cannot write to standard output");
        return CLI_EXIT_FAIL;
    }
    if (wv == ACLI_WITNESS_INVALID) {
        cli_error(cmd, "verification failed: %s", wwhy);
        return CLI_EXIT_FAIL;
    }
    if (wv == ACLI_WITNESS_SHORT) {
        cli_error(cmd, "witness quorum not met: %s", wwhy);
        return ACLI_EXIT_QUORUM;
    }
    if (late) {
        cli_error(cmd, "unsigned leaves: %s", why);
        return ACLI_EXIT_UNSIGNED;
    }
    return CLI_EXIT_OK;
}

static int
report(const char *cmd, const struct verify_run *r)
{
    const struct audit_report *rep = &r->rep;
    const struct audit_checkpoint *best = &r->best;
    char why[320], wwhy[IG_ERR_MSGMAX + 2 * AUDIT_NAME_MAX];
    int have = r->have_best, late, wv;

    (void)printf("log:         %s\n", r->vs.key[0].name);
    (void)printf("leaves:      %llu\n", (unsigned long long)rep->leaves);
    (void)printf("checkpoints: %llu\n", (unsigned long long)rep->checkpoints);
    (void)printf("checked:     %llu\n", (unsigned long long)rep->checked);
    if (r->db != NULL)
        (void)printf("leaf hashes: %llu compared with the stored tree\n",
                     (unsigned long long)r->compared);
    if (r->queued > 0)
        (void)printf("queued:      %llu events queued, not yet sequenced "
                     "(not in the log read here)\n",
                     (unsigned long long)r->queued);
    if (r->anchored)
        print_checkpoint("anchor:", &r->anchor, r->a.anchor);
    late = cli_audit_times_report(r->times, why, sizeof(why));
    if (have)
        print_checkpoint("latest:", best, NULL);
    wv = witnesses(r, wwhy, sizeof(wwhy));
    if (rep->failure != AUDIT_OK)
        return failed(cmd, r);
    if (rep->checkpoints == 0) {
        (void)printf("result:      FAILED: no checkpoint, nothing is signed\n");
        (void)fflush(stdout);
        cli_error(cmd, "verification failed: the log has no checkpoint");
        return CLI_EXIT_FAIL;
    }
    if (have && rep->leaves > best->size)
        (void)printf("unsigned:    %llu leaves after the latest checkpoint "
                     "(not yet covered by a signature)\n",
                     (unsigned long long)(rep->leaves - best->size));
    return verdict(cmd, late, why, wv, wwhy);
}

/* The blank line ending a note's text, or NULL. */
static const char *
note_blank(const char *note, size_t len)
{
    size_t i;

    for (i = 0; i + 1 < len; i++)
        if (note[i] == '\n' && note[i + 1] == '\n')
            return note + i;
    return NULL;
}

/* The anchor file: one signed checkpoint note, added to the others. */
static enum ig_status
read_anchor(struct verify_run *r, struct ig_err *err)
{
    char *buf = malloc(AUDIT_NOTE_MAX + 1);
    FILE *f = fopen(r->a.anchor, "rb");
    const char *blank;
    size_t n = 0;
    uint64_t size = 0;
    enum ig_status st = IG_OK;

    if (buf == NULL || f == NULL)
        st = ig_err_set(err, buf == NULL ? IG_ERR_NOMEM : IG_ERR_INVALID,
                        "cannot open %s: %s", r->a.anchor,
                        buf == NULL ? "out of memory" : strerror(errno));
    if (st == IG_OK && ((n = fread(buf, 1, AUDIT_NOTE_MAX + 1, f)) == 0 ||
                        n > AUDIT_NOTE_MAX || ferror(f)))
        st = ig_err_set(err, IG_ERR_INVALID,
                        "%s: not a checkpoint (empty, unreadable or over %d "
                        "bytes)",
                        r->a.anchor, AUDIT_NOTE_MAX);
    if (st == IG_OK) {
        (void)cli_audit_note_size(buf, n, &size);
        if ((st = cli_audit_notes_add(&r->ns, size, 0, buf, n)) != IG_OK)
            (void)ig_err_set(err, st, "cannot keep %s", r->a.anchor);
    }
    /* What it claims, for the report; the verifier checks it. */
    r->anchored = st == IG_OK;
    blank = r->anchored ? note_blank(buf, n) : NULL;
    if (blank == NULL || audit_checkpoint_parse(buf, (size_t)(blank - buf) + 1,
                                                &r->anchor, NULL) != IG_OK)
        memset(&r->anchor, 0, sizeof(r->anchor));
    if (f != NULL)
        (void)fclose(f);
    free(buf);
    return st;
}

/* The keys, the database and the checkpoints. */
static enum ig_status
verify_inputs(struct verify_run *r, struct ig_err *err)
{
    const struct verify_args *a = &r->a;
    struct cli_audit_vset *vs = &r->vs;
    enum ig_status st = IG_OK;
    size_t k;

    vs->n = a->nkeys > 0 ? a->nkeys : 1;
    for (k = 0; k < vs->n && st == IG_OK; k++)
        st = cli_audit_key_load(a->nkeys > 0 ? a->keys[k] : NULL, &vs->key[k],
                                err);
    for (k = 1; k < vs->n && st == IG_OK; k++)
        if (strcmp(vs->key[k].name, vs->key[0].name) != 0)
            st = ig_err_set(err, IG_ERR_INVALID,
                            "the keys name two logs (%s, %s): one log at a "
                            "time",
                            vs->key[0].name, vs->key[k].name);
    if (st == IG_OK && a->db != NULL &&
        (st = store_log_open(a->db, &r->db, err)) == IG_OK &&
        (st = store_log_queued(r->db, &r->queued, err)) == IG_OK)
        st = cli_audit_notes_read_db(&r->ns, r->db, err);
    if (st == IG_OK && a->checkpoints != NULL)
        st = cli_audit_notes_read_file(&r->ns, a->checkpoints, err);
    if (st == IG_OK && a->anchor != NULL)
        st = read_anchor(r, err);
    if (st == IG_OK && a->nwitnesses > 0) {
        if ((r->ws = malloc(sizeof(*r->ws))) == NULL)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        st = cli_audit_witnesses_load(r->ws, a->witnesses, a->nwitnesses,
                                      a->witness_quorum, err);
    }
    if (st == IG_OK && r->ws != NULL)
        st = cli_audit_witnesses_not_log(r->ws, vs->key, vs->n, err);
    return st;
}

static enum ig_status
run(struct verify_run *r, struct ig_err *err)
{
    enum ig_status st;

    if ((st = verify_inputs(r, err)) != IG_OK)
        return st;
    r->have_best = latest(&r->ns, &r->vs, &r->best);
    r->a.t.signed_size = r->have_best ? r->best.size : 0;
    if ((st = cli_audit_times_new(&r->a.t, &r->ns, &r->times, err)) != IG_OK)
        return st;
    if ((st = cli_audit_vset_start(&r->vs, &r->ns)) != IG_OK)
        return ig_err_set(err, st, "cannot start: %s", ig_strerror(st));
    if (r->db != NULL)
        check_sizes(&r->vs, &r->ns);
    st = r->db != NULL
             ? cli_audit_leaves_db(r->db, &r->vs, r->times, &r->compared, err)
             : cli_audit_leaves_file(r->a.leaves, &r->vs, r->times, err);
    if (st == IG_OK)
        cli_audit_vset_end(&r->vs, &r->rep);
    if (st == IG_OK && r->ws != NULL)
        cli_audit_witnesses_check(r->ws, &r->ns, r->vs.key, r->vs.n,
                                  r->have_best ? &r->best : NULL);
    return st;
}

int
cli_audit_verify(int argc, char **argv)
{
    struct verify_run *r;
    struct ig_err err;
    enum ig_status st;
    int rc;

    if (cli_audit_help(argc, argv, verify_usage))
        return CLI_EXIT_OK;
    if ((r = calloc(1, sizeof(*r))) == NULL) {
        cli_error(argv[0], "out of memory");
        return CLI_EXIT_FAIL;
    }
    if (verify_args(argc, argv, &r->a) != 0) {
        free(r);
        return CLI_EXIT_USAGE;
    }
    cli_audit_notes_init(&r->ns);
    ig_err_clear(&err);
    st = run(r, &err);
    if (st != IG_OK) {
        cli_error(argv[0], "%s", err.msg);
        rc = cli_audit_exit(st);
    } else {
        rc = report(argv[0], r);
    }
    cli_audit_times_free(r->times);
    cli_audit_vset_free(&r->vs);
    store_log_close(r->db);
    cli_audit_notes_release(&r->ns);
    free(r->ws);
    free(r);
    return rc;
}
