/*
 * cmd_audit_leaves.c - `audit verify`'s reading: the leaves of the PDP's
 * database or of an export, streamed once through one verifier per key
 * (audit/audit_verify.h) and the times check (cmd_audit_times.c).
 *
 * From the database it also reports what only a reader sees: a gap in the
 * sequence numbers (a deleted leaf), a leaf whose bytes no longer hash
 * to the leaf hash stored when it was appended (its entry of a level-0
 * tile, cmd_audit_tiles.c; audit_nodes level 0 in a schema-3 file), and
 * a stored tile that is not the leaves' - that locates an edit; the
 * signed roots remain the trust anchor.
 */
#include "cmd_audit_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_verify.h"

/* ---- the stored leaf hashes ---- */

struct node_cursor {
    struct store_log_cursor *c;
    int have;
    uint64_t idx;
    const unsigned char *hash;
    size_t hash_len;
    enum ig_status st; /* IG_ERR_IO once a read failed */
};

static void
node_next(struct node_cursor *n, struct ig_err *err)
{
    struct store_log_row row;
    enum ig_status st = IG_OK;

    n->have = 0;
    while (n->st == IG_OK && (st = store_log_next(n->c, &row, err)) == IG_OK) {
        if (row.key < 0)
            continue;
        n->idx = (uint64_t)row.key;
        n->hash = row.data;
        n->hash_len = row.len;
        n->have = 1;
        return;
    }
    if (n->st == IG_OK && st != IG_ERR_NOTFOUND)
        n->st = st;
}

/* Compare a leaf's hash with its stored level-0 node: 0 same or not
   stored, -1 different. *compared counts comparisons. */
static int
node_check(struct node_cursor *n, uint64_t index,
           const unsigned char hash[AUDIT_HASH_BYTES], uint64_t *compared,
           struct ig_err *err)
{
    while (n->have && n->idx < index)
        node_next(n, err);
    if (!n->have || n->idx != index)
        return 0;
    (*compared)++;
    return n->hash_len == AUDIT_HASH_BYTES && n->hash != NULL &&
                   memcmp(n->hash, hash, AUDIT_HASH_BYTES) == 0
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
static void
vset_leaf(struct cli_audit_vset *s, const unsigned char h[AUDIT_HASH_BYTES])
{
    size_t i;

    for (i = 0; i < s->n; i++)
        audit_verify_leaf_hash(s->v[i], h);
}

void
cli_audit_vset_fail(struct cli_audit_vset *s, enum audit_failure f,
                    uint64_t index, const char *fmt, ...)
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

enum ig_status
cli_audit_vset_start(struct cli_audit_vset *s, const struct cli_audit_notes *ns)
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
void
cli_audit_vset_end(struct cli_audit_vset *s, struct audit_report *out)
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

void
cli_audit_vset_free(struct cli_audit_vset *s)
{
    size_t k;

    for (k = 0; k < s->n; k++)
        audit_verify_free(s->v[k]);
}

/* One leaf of the database: its place in the sequence, its hash against
   the stored one, then to the verifiers. *next is the index it should
   have; *failed once a finding was recorded (the first is enough). */
static void
db_leaf(const struct store_log_row *row, struct cli_audit_vset *v,
        struct cli_audit_times *t, struct node_cursor *nodes, uint64_t *next,
        int *failed, uint64_t *compared, struct ig_err *err)
{
    unsigned char h[AUDIT_HASH_BYTES];
    int64_t seq = row->key;

    if (!*failed && (seq < 1 || (uint64_t)seq - 1 < *next)) {
        cli_audit_vset_fail(v, AUDIT_LEAF_MISMATCH, *next,
                            "a row with seq %lld is outside the log",
                            (long long)seq);
        *failed = 1;
    } else if (!*failed && (uint64_t)seq - 1 > *next) {
        cli_audit_vset_fail(v, AUDIT_MISSING_LEAF, *next,
                            "leaf %llu is missing (a gap in audit_events.seq)",
                            (unsigned long long)*next);
        *failed = 1;
    }
    audit_leaf_hash(row->data, row->len, h);
    if (t != NULL)
        cli_audit_times_leaf(t, *next, row->data, row->len);
    if (!*failed && nodes != NULL &&
        node_check(nodes, *next, h, compared, err) != 0) {
        cli_audit_vset_fail(
            v, AUDIT_LEAF_MISMATCH, *next,
            "leaf %llu no longer hashes to the leaf hash stored "
            "when it was appended (audit_nodes level 0)",
            (unsigned long long)*next);
        *failed = 1;
    }
    vset_leaf(v, h);
    *next = seq > 0 ? (uint64_t)seq : *next + 1;
}

/* A finding of the tile check, once, to the verifiers. */
static void
tiles_report(struct cli_audit_tiles *tiles, struct cli_audit_vset *v,
             int *failed)
{
    enum audit_failure f;
    const char *detail;
    uint64_t index;

    if (*failed || !cli_audit_tiles_finding(tiles, &f, &index, &detail))
        return;
    cli_audit_vset_fail(v, f, index, "%s", detail);
    *failed = 1;
}

/* The leaves against the tiles (a file of schema 4 and later). */
static enum ig_status
leaves_tiles(struct store_log *db, struct store_log_cursor *q,
             struct cli_audit_vset *v, struct cli_audit_times *t,
             uint64_t *compared, struct ig_err *err)
{
    struct cli_audit_tiles *tiles = NULL;
    struct store_log_row row;
    uint64_t next = 0;
    enum ig_status st;
    int failed = 0;

    if ((st = cli_audit_tiles_new(db, &tiles, err)) != IG_OK)
        return st;
    audit_verify_on_node(v->v[0], cli_audit_tiles_node, tiles);
    while (cli_audit_tiles_status(tiles) == IG_OK &&
           (st = store_log_next(q, &row, err)) == IG_OK) {
        db_leaf(&row, v, t, NULL, &next, &failed, compared, err);
        tiles_report(tiles, v, &failed);
    }
    if (st == IG_ERR_NOTFOUND && cli_audit_tiles_status(tiles) == IG_OK) {
        cli_audit_tiles_end(tiles, next);
        tiles_report(tiles, v, &failed);
    }
    if (cli_audit_tiles_status(tiles) != IG_OK)
        st = cli_audit_tiles_status(tiles); /* err says which read failed */
    else if (st == IG_ERR_NOTFOUND)
        st = IG_OK;
    *compared = cli_audit_tiles_compared(tiles);
    audit_verify_on_node(v->v[0], NULL, NULL);
    cli_audit_tiles_free(tiles);
    return st;
}

/* Feed the database's leaves in seq order. */
enum ig_status
cli_audit_leaves_db(struct store_log *db, struct cli_audit_vset *v,
                    struct cli_audit_times *t, uint64_t *compared,
                    struct ig_err *err)
{
    struct node_cursor nodes;
    struct store_log_cursor *q = NULL;
    struct store_log_row row;
    uint64_t next = 0;
    enum ig_status st;
    int failed = 0;

    memset(&nodes, 0, sizeof(nodes));
    if (store_log_has_tiles(db)) {
        if ((st = store_log_scan(db, STORE_LOG_LEAVES, NULL, &q, err)) == IG_OK)
            st = leaves_tiles(db, q, v, t, compared, err);
        store_log_cursor_free(q);
        return st;
    }
    if ((st = store_log_scan(db, STORE_LOG_LEAF_HASHES, NULL, &nodes.c, err)) !=
            IG_OK ||
        (st = store_log_scan(db, STORE_LOG_LEAVES, NULL, &q, err)) != IG_OK)
        goto out;
    node_next(&nodes, err);
    while (nodes.st == IG_OK && (st = store_log_next(q, &row, err)) == IG_OK)
        db_leaf(&row, v, t, &nodes, &next, &failed, compared, err);
    if (nodes.st != IG_OK)
        st = nodes.st; /* err says which read failed */
    else if (st == IG_ERR_NOTFOUND)
        st = IG_OK;
out:
    store_log_cursor_free(q);
    store_log_cursor_free(nodes.c);
    return st;
}

/* Feed an export's lines. */
enum ig_status
cli_audit_leaves_file(const char *path, struct cli_audit_vset *v,
                      struct cli_audit_times *t, struct ig_err *err)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[AUDIT_HASH_BYTES];
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    uint64_t index = 0;
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
        if ((size_t)got > IG_AUDIT_CLI_LEAF_MAX) {
            st = ig_err_set(err, IG_ERR_LIMIT, "%s:%ld: leaf over %u bytes",
                            path, lineno, (unsigned)IG_AUDIT_CLI_LEAF_MAX);
            break;
        }
        audit_leaf_hash(line, (size_t)got, h);
        vset_leaf(v, h);
        if (t != NULL)
            cli_audit_times_leaf(t, index, line, (size_t)got);
        index++;
    }
    if (st == IG_OK && ferror(f))
        st = ig_err_set(err, IG_ERR_IO, "cannot read %s", path);
    free(line);
    (void)fclose(f);
    return st;
}
