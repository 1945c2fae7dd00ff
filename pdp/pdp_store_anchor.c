/*
 * pdp_store_anchor.c - the audit log's anchor: the latest signed
 * checkpoint kept in a file outside the database ([audit] anchor, by
 * default beside the audit key), so that whoever can write the database
 * but not that file cannot get a rewritten history signed.
 *
 * DESIGN
 * The file holds one C2SP signed checkpoint, exactly the note the PDP
 * stored (or one it signed for the same size and root), mode 0600. It is
 * replaced atomically - a temporary file beside it, fsync, rename, fsync
 * of the directory - after the transaction holding each new checkpoint
 * committed (run_batch calls pdp_anchor_after_commit), so the file never
 * names a checkpoint the database does not durably hold. A write that
 * fails is retried before the next checkpoint, which is refused until it
 * succeeds: the anchor never falls more than one checkpoint behind.
 *
 * Before signing, the new tree must extend the anchor (a consistency
 * proof from the stored nodes, verified against the anchor's root). At
 * open (after pdp_store_audit_check.c has checked the database against
 * itself) the tree must extend the anchor; a database that does not - or
 * is shorter (restored from an older backup), or holds signed checkpoints
 * while the anchor is missing - is refused unless the operator adopts its
 * state (PDP_ANCHOR_ADOPT, `serve --adopt-audit-anchor`; a dev-mode start
 * adopts a missing anchor only), which is logged. An anchor signed by
 * another key (after a key rotation) is accepted with a warning and
 * re-signed: its protection is where it is kept, not its signature.
 *
 * The marker file <anchor>.running exists while a PDP has the log open;
 * a clean stop removes it once the final checkpoint is anchored. So at
 * open, leaves beyond the anchor with no marker were added while no PDP
 * ran (refused, like a rewrite); with the marker they are the unsigned
 * tail of a PDP that crashed (a warning; the next checkpoint signs them).
 * Writing the marker at open also proves the directory writable.
 */
#include "pdp_store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_note.h"
#include "ig_canon.h"
#include "ig_file.h"

#define ADOPT_HINT                                                             \
    "check the log with `intentgate audit verify --anchor`; to take the "      \
    "database as it is, start once with --adopt-audit-anchor (docs/audit.md)"

static void
alog(struct pdp_store *s, const char *level, const char *event, json_t *f)
{
    if (s->opts.log != NULL)
        s->opts.log(level, event, f);
    else
        json_decref(f);
}

static void
note_free(struct pdp_anchor_note *n)
{
    free(n->text);
    memset(n, 0, sizeof(*n));
}

static void
b64(const unsigned char root[AUDIT_HASH_BYTES], char out[64])
{
    (void)sodium_bin2base64(out, 64, root, AUDIT_HASH_BYTES,
                            sodium_base64_VARIANT_ORIGINAL);
}

/* ---- the file ---- */

static enum ig_status
write_anchor(struct pdp_store *s, const char *note, size_t len,
             struct ig_err *err)
{
    const struct pdp_anchor *an = &s->anchor;

    (void)unlink(an->tmp);
    if (ig_file_write(an->tmp, note, len, 0600, 1, err) != IG_OK)
        return IG_ERR_IO;
    if (rename(an->tmp, an->path) != 0) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot replace %s: %s", an->path,
                         strerror(errno));
        (void)unlink(an->tmp);
        return IG_ERR_IO;
    }
    return ig_file_sync_parent(an->path, err);
}

/* Read the file: IG_OK, IG_ERR_NOTFOUND (none), IG_ERR_IO with err. */
static enum ig_status
read_anchor(const char *path, char *buf, size_t cap, size_t *len,
            struct ig_err *err)
{
    struct stat sb;
    ssize_t n;
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

    if (fd < 0 && errno == ENOENT)
        return IG_ERR_NOTFOUND;
    if (fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot open the audit anchor %s: %s",
                          path, strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        (void)close(fd);
        return ig_err_set(err, IG_ERR_IO,
                          "the audit anchor %s is not a regular file", path);
    }
    if ((sb.st_mode & 022) != 0) {
        (void)close(fd);
        return ig_err_set(err, IG_ERR_IO,
                          "the audit anchor %s may be written by group or "
                          "others: chmod 600 it",
                          path);
    }
    while (got < cap && (n = read(fd, buf + got, cap - got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        got += (size_t)n;
    }
    (void)close(fd);
    if (got == 0 || got >= cap)
        return ig_err_set(err, IG_ERR_IO,
                          "the audit anchor %s is empty or too large (at "
                          "most %d bytes)",
                          path, AUDIT_NOTE_MAX);
    *len = got;
    return IG_OK;
}

/* The blank line that ends a note's text: its first '\n', or NULL. */
static const char *
find_blank(const char *note, size_t len)
{
    size_t i;

    for (i = 0; i + 1 < len; i++)
        if (note[i] == '\n' && note[i + 1] == '\n')
            return note + i;
    return NULL;
}

/* Signature lines of the key name: *ours those with v's key id. */
static void
count_sigs(const char *note, size_t len, const struct audit_verifier *v,
           int *ours, int *named)
{
    static const char dash[] = "\xe2\x80\x94 ";
    unsigned char sig[4 + 64 + 8];
    const char *p, *end = note + len, *nl, *b;
    size_t nlen = strlen(v->name), got;
    uint32_t id;

    *ours = *named = 0;
    p = find_blank(note, len);
    for (p = p != NULL ? p + 2 : end; p < end; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        b = p + sizeof(dash) - 1 + nlen + 1;
        if (b >= nl || memcmp(p, dash, sizeof(dash) - 1) != 0 ||
            memcmp(p + sizeof(dash) - 1, v->name, nlen) != 0 || b[-1] != ' ' ||
            sodium_base642bin(sig, sizeof(sig), b, (size_t)(nl - b), NULL, &got,
                              NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
            got != 4 + 64)
            continue;
        id = (uint32_t)sig[0] << 24 | (uint32_t)sig[1] << 16 |
             (uint32_t)sig[2] << 8 | sig[3];
        (*named)++;
        *ours += id == v->key_id;
    }
}

/* Open the anchor's note: a checkpoint of this log signed by the audit
   key, or (*other_key = 1) only by another key of the log's name. */
static enum ig_status
parse_anchor(struct pdp_store *s, const char *note, size_t len,
             struct audit_checkpoint *cp, int *other_key, struct ig_err *err)
{
    const char *path = s->anchor.path, *blank;
    struct audit_verifier v;
    struct ig_public_key pub;
    struct ig_err e;
    int ours = 0, named = 0;

    *other_key = 0;
    ig_signing_key_public(s->opts.audit_key, &pub);
    if (audit_verifier_init(&v, s->opts.audit_name, pub.pk) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "bad audit log name");
    if (audit_checkpoint_open(note, len, &v, cp, &e) == IG_OK)
        return IG_OK;
    count_sigs(note, len, &v, &ours, &named);
    blank = find_blank(note, len);
    if (ours > 0 || named == 0 || blank == NULL ||
        audit_checkpoint_parse(note, (size_t)(blank - note) + 1, cp, &e) !=
            IG_OK ||
        strcmp(cp->origin, s->opts.audit_name) != 0)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "the audit anchor %s is not a checkpoint of %s "
                          "signed by its key (%s): it was edited or belongs "
                          "to another log",
                          path, s->opts.audit_name, e.msg);
    *other_key = 1;
    return IG_OK;
}

/* ---- open ---- */

static enum ig_status
set_paths(struct pdp_store *s, struct ig_err *err)
{
    struct pdp_anchor *an = &s->anchor;
    size_t n = strlen(s->opts.audit_anchor) + sizeof(".running");

    an->path = strdup(s->opts.audit_anchor);
    an->tmp = malloc(n);
    an->marker = malloc(n);
    if (an->path == NULL || an->tmp == NULL || an->marker == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    (void)snprintf(an->tmp, n, "%s.tmp", an->path);
    (void)snprintf(an->marker, n, "%s.running", an->path);
    return IG_OK;
}

/* Make (size, root) the anchor: signed here, written, remembered. */
static enum ig_status
put_anchor(struct pdp_store *s, uint64_t size,
           const unsigned char root[AUDIT_HASH_BYTES], struct ig_err *err)
{
    struct ig_buf note;
    enum ig_status rc;

    ig_buf_init(&note, AUDIT_NOTE_MAX);
    rc = pdp_audit_sign_note(s, size, root, &note);
    if (rc != IG_OK)
        (void)ig_err_set(err, rc, "cannot sign the audit anchor: %s",
                         ig_strerror(rc));
    else if (write_anchor(s, note.data, note.len, err) == IG_OK) {
        s->anchor.size = size;
        memcpy(s->anchor.root, root, AUDIT_HASH_BYTES);
    } else {
        rc = IG_ERR_IO;
    }
    ig_buf_release(&note);
    return rc;
}

/* The adoption as an event of the log itself (audit.anchor_adopted), so
   that the signed history says where the operator took it over. In a
   transaction of its own, before the writer starts. */
static enum ig_status
record_adoption(struct pdp_store *s, const char *reason,
                const struct audit_checkpoint *old, struct ig_err *err)
{
    char now[IG_TIME_STRLEN + 1];
    struct ig_buf text;
    const char *ev[1];
    enum ig_status rc = IG_ERR_NOMEM;
    json_t *e;

    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    e = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "type",
                  "audit.anchor_adopted", "time", now, "anchor", s->anchor.path,
                  "reason", reason, "size", (json_int_t)s->audit.ckpt_size,
                  "previous_size", (json_int_t)(old != NULL ? old->size : 0),
                  "tree_size", (json_int_t)s->audit.tree.size);
    ig_buf_init(&text, AUDIT_NOTE_MAX);
    if (e != NULL && ig_canon_write(e, &text, NULL) == IG_OK) {
        ev[0] = text.data;
        rc = sqlite3_exec(s->wdb, "BEGIN IMMEDIATE", NULL, NULL, NULL) ==
                     SQLITE_OK
                 ? pdp_store_append_events(s, ev, 1)
                 : IG_ERR_IO;
        if (rc == IG_OK &&
            sqlite3_exec(s->wdb, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            rc = IG_ERR_IO;
        if (rc != IG_OK)
            (void)sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
    }
    json_decref(e);
    ig_buf_release(&text);
    if (rc != IG_OK)
        return ig_err_set(err, IG_ERR_IO,
                          "cannot record the adoption of the audit anchor "
                          "in the log: %s",
                          sqlite3_errmsg(s->wdb));
    return IG_OK;
}

/* Log the adoption of the database's state, record it, then anchor it. */
static enum ig_status
adopt(struct pdp_store *s, const char *reason,
      const struct audit_checkpoint *old, struct ig_err *err)
{
    const struct pdp_audit_state *a = &s->audit;
    char r[64] = "", o[64] = "";

    if (a->ckpt_size > 0)
        b64(a->ckpt_root, r);
    if (old != NULL)
        b64(old->root, o);
    alog(s, "warning", "audit.anchor_adopted",
         json_pack("{s:s, s:s, s:I, s:s, s:I, s:s, s:I, s:s}", "anchor",
                   s->anchor.path, "reason", reason, "size",
                   (json_int_t)a->ckpt_size, "root", r, "previous_size",
                   (json_int_t)(old != NULL ? old->size : 0), "previous_root",
                   o, "tree_size", (json_int_t)a->tree.size, "message",
                   "the operator took the database's audit log as it is: "
                   "the anchor now holds its newest checkpoint"));
    if (record_adoption(s, reason, old, err) != IG_OK)
        return IG_ERR_IO;
    if (a->ckpt_size > 0)
        return put_anchor(s, a->ckpt_size, a->ckpt_root, err);
    /* Nothing signed yet: no anchor until the first checkpoint. */
    if (unlink(s->anchor.path) != 0 && errno != ENOENT)
        return ig_err_set(err, IG_ERR_IO, "cannot remove %s: %s",
                          s->anchor.path, strerror(errno));
    return ig_file_sync_parent(s->anchor.path, err);
}

/* The tree against a present anchor: NULL when it extends it. */
static const char *
mismatch(struct pdp_store *s, const struct audit_checkpoint *cp)
{
    unsigned char root[AUDIT_HASH_BYTES];

    if (cp->size > s->audit.tree.size)
        return "shorter";
    if (cp->size > 0 &&
        (audit_root_at(cp->size, pdp_audit_wfetch, s, root) != IG_OK ||
         sodium_memcmp(root, cp->root, sizeof(root)) != 0))
        return "rewritten";
    return NULL;
}

static enum ig_status
refuse(struct pdp_store *s, const char *why, const struct audit_checkpoint *cp,
       struct ig_err *err)
{
    const struct pdp_audit_state *a = &s->audit;
    const char *path = s->anchor.path;
    unsigned long long at = cp != NULL ? (unsigned long long)cp->size : 0,
                       n = (unsigned long long)a->tree.size;

    alog(s, "error", "audit.anchor_refused",
         json_pack("{s:s, s:s, s:I, s:I, s:I, s:s}", "anchor", path, "reason",
                   why, "anchor_size", (json_int_t)at, "tree_size",
                   (json_int_t)n, "newest_stored", (json_int_t)a->ckpt_size,
                   "message", "refusing to start: " ADOPT_HINT));
    if (strcmp(why, "missing") == 0)
        return ig_err_set(err, IG_ERR_IO,
                          "audit anchor %s is missing, the database has "
                          "checkpoints up to %llu: restore it or start with "
                          "--adopt-audit-anchor",
                          path, (unsigned long long)a->ckpt_size);
    if (strcmp(why, "shorter") == 0)
        return ig_err_set(err, IG_ERR_IO,
                          "audit log (%llu leaves) is shorter than its anchor "
                          "%s (size %llu): truncated or an older backup; "
                          "refusing (or --adopt-audit-anchor)",
                          n, path, at);
    if (strcmp(why, "appended") == 0)
        return ig_err_set(err, IG_ERR_IO,
                          "audit leaf %llu to %llu added after the PDP "
                          "stopped at %llu (anchor %s): refusing (or "
                          "--adopt-audit-anchor)",
                          at, n - 1, at, path);
    return ig_err_set(err, IG_ERR_IO,
                      "audit log does not extend its anchor %s (size %llu): "
                      "history rewritten below a signed checkpoint; refusing "
                      "to start",
                      path, at);
}

/* The database holds a newer checkpoint than the anchor (the previous run
   stopped between committing it and writing the file): anchor it when it
   carries the audit key's valid signature. */
static enum ig_status
catch_up(struct pdp_store *s, int other_key, struct ig_err *err)
{
    struct pdp_anchor *an = &s->anchor;
    struct audit_verifier v;
    struct ig_public_key pub;
    struct audit_checkpoint cp;
    const char *note = an->newest;

    ig_signing_key_public(s->opts.audit_key, &pub);
    if (note != NULL &&
        audit_verifier_init(&v, s->opts.audit_name, pub.pk) == IG_OK &&
        audit_checkpoint_open(note, strlen(note), &v, &cp, NULL) == IG_OK &&
        cp.size == s->audit.ckpt_size &&
        sodium_memcmp(cp.root, s->audit.ckpt_root, AUDIT_HASH_BYTES) == 0) {
        if (write_anchor(s, note, strlen(note), err) != IG_OK)
            return IG_ERR_IO;
        an->size = cp.size;
        memcpy(an->root, cp.root, AUDIT_HASH_BYTES);
        return IG_OK;
    }
    alog(s, "warning", "audit.anchor_not_updated",
         json_pack("{s:I, s:I, s:s}", "anchor_size", (json_int_t)an->size,
                   "newest_stored", (json_int_t)s->audit.ckpt_size, "message",
                   "the database's newest checkpoint is not signed by the "
                   "audit key: the anchor stays where it was"));
    return other_key ? put_anchor(s, an->size, an->root, err) : IG_OK;
}

/* An anchor that was read: check it, and bring it up to date. */
static enum ig_status
check_present(struct pdp_store *s, const struct audit_checkpoint *cp,
              int other_key, int running, struct ig_err *err)
{
    struct pdp_audit_state *a = &s->audit;
    const char *why = mismatch(s, cp);
    int strict = s->opts.anchor_adopt != PDP_ANCHOR_ADOPT;

    if (why == NULL && !running && a->tree.size > cp->size)
        why = "appended";
    if (why != NULL)
        return strict ? refuse(s, why, cp, err) : adopt(s, why, cp, err);
    s->anchor.size = cp->size;
    memcpy(s->anchor.root, cp->root, AUDIT_HASH_BYTES);
    if (a->ckpt_size < cp->size) {
        alog(s, "warning", "audit.checkpoints_missing",
             json_pack("{s:I, s:I, s:s}", "anchor_size", (json_int_t)cp->size,
                       "newest_stored", (json_int_t)a->ckpt_size, "message",
                       "the database lacks signed checkpoints the anchor "
                       "holds; its events are intact"));
        a->ckpt_size = cp->size;
        memcpy(a->ckpt_root, cp->root, AUDIT_HASH_BYTES);
    }
    if (running && a->tree.size > a->ckpt_size)
        alog(s, "warning", "audit.unanchored_leaves",
             json_pack("{s:I, s:I, s:s}", "from", (json_int_t)a->ckpt_size,
                       "to", (json_int_t)a->tree.size, "message",
                       "the previous run did not stop cleanly: these events "
                       "were not signed; the next checkpoint signs them"));
    if (other_key)
        alog(s, "warning", "audit.anchor_key_changed",
             json_pack("{s:s, s:s}", "anchor", s->anchor.path, "message",
                       "the anchor was signed by another key of this log "
                       "(a rotation): re-signed with the audit key"));
    if (a->ckpt_size > cp->size)
        return catch_up(s, other_key, err);
    if (other_key)
        return put_anchor(s, cp->size, cp->root, err);
    return IG_OK;
}

/* stat() of the directory holding path; -1 when it cannot. */
static int
stat_dir(const char *path, struct stat *sb)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash == NULL || slash == path ? 1 : (size_t)(slash - path);

    if (n >= sizeof(dir))
        return -1;
    memcpy(dir, slash == NULL ? "." : path, n);
    dir[n] = '\0';
    return stat(dir, sb);
}

/* An anchor in the database's own directory protects less: whoever may
   replace the database file there may replace the anchor too. */
static void
warn_if_beside(struct pdp_store *s)
{
    struct stat a, d;

    if (stat_dir(s->anchor.path, &a) == 0 && stat_dir(s->path, &d) == 0 &&
        a.st_dev == d.st_dev && a.st_ino == d.st_ino)
        alog(s, "warning", "audit.anchor_beside_database",
             json_pack("{s:s, s:s}", "anchor", s->anchor.path, "message",
                       "the anchor is in the database's directory: keep it "
                       "where those who can write the database cannot "
                       "([audit] anchor)"));
}

enum ig_status
pdp_anchor_open(struct pdp_store *s, struct ig_err *err)
{
    char *buf = NULL;
    struct audit_checkpoint cp;
    struct ig_err e;
    struct stat sb;
    size_t len = 0;
    int other = 0, running;
    enum ig_status rc;

    if (s->opts.audit_anchor == NULL || s->opts.audit_key == NULL)
        return IG_OK;
    if ((rc = set_paths(s, err)) != IG_OK)
        return rc;
    running = lstat(s->anchor.marker, &sb) == 0;
    if ((buf = malloc(AUDIT_NOTE_MAX + 1)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    rc = read_anchor(s->anchor.path, buf, AUDIT_NOTE_MAX + 1, &len, err);
    if (rc == IG_OK)
        rc = parse_anchor(s, buf, len, &cp, &other, err);
    if (rc == IG_OK)
        rc = check_present(s, &cp, other, running, err);
    else if (rc == IG_ERR_NOTFOUND && s->audit.ckpt_size == 0)
        rc = IG_OK; /* nothing signed yet */
    else if (rc == IG_ERR_NOTFOUND && s->opts.anchor_adopt != 0)
        rc = adopt(s, "missing", NULL, err);
    else if (rc == IG_ERR_NOTFOUND)
        rc = refuse(s, "missing", NULL, err);
    free(buf);
    free(s->anchor.newest);
    s->anchor.newest = NULL;
    /* The marker: this PDP has the log open (and the directory is
       writable). */
    if (rc == IG_OK && (ig_file_write(s->anchor.marker, "running\n", 8, 0600, 0,
                                      &e) != IG_OK ||
                        ig_file_sync_parent(s->anchor.marker, &e) != IG_OK))
        rc = ig_err_set(err, IG_ERR_IO,
                        "cannot write beside the audit anchor %s (%s): set "
                        "[audit] anchor to a file in a directory the PDP "
                        "can write, apart from the database",
                        s->anchor.path, e.msg);
    if (rc == IG_OK)
        warn_if_beside(s);
    return rc == IG_OK ? IG_OK : IG_ERR_IO;
}

/* ---- before and after each checkpoint ---- */

const char *
pdp_anchor_extends(struct pdp_store *s, uint64_t size,
                   const unsigned char root[AUDIT_HASH_BYTES])
{
    const struct pdp_anchor *an = &s->anchor;
    unsigned char proof[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    size_t n = 0;

    if (an->path == NULL || an->size == 0)
        return NULL;
    if (size < an->size)
        return "the tree is shorter than the anchored checkpoint";
    if (audit_consistency_proof(an->size, size, pdp_audit_wfetch, s, proof,
                                &n) != IG_OK)
        return "no consistency proof from the anchor can be built from the "
               "stored nodes";
    if (audit_verify_consistency(an->size, size, an->root, root,
                                 (const unsigned char(*)[32])proof, n) != IG_OK)
        return "the tree is not a consistent extension of the anchor";
    return NULL;
}

static void
write_failed(struct pdp_store *s, const struct ig_err *err)
{
    alog(s, "error", "audit.anchor_write_failed",
         json_pack("{s:s, s:I, s:s, s:s}", "anchor", s->anchor.path, "size",
                   (json_int_t)s->anchor.unwritten.size, "error", err->msg,
                   "message",
                   "no further checkpoint is signed until the anchor is "
                   "written"));
}

/* Write the committed checkpoint the file misses; IG_OK when none. */
static enum ig_status
flush(struct pdp_store *s)
{
    struct pdp_anchor *an = &s->anchor;
    struct ig_err err;

    if (an->unwritten.text == NULL)
        return IG_OK;
    ig_err_clear(&err);
    if (write_anchor(s, an->unwritten.text, an->unwritten.len, &err) != IG_OK) {
        write_failed(s, &err);
        return IG_ERR_IO;
    }
    an->size = an->unwritten.size;
    memcpy(an->root, an->unwritten.root, AUDIT_HASH_BYTES);
    note_free(&an->unwritten);
    return IG_OK;
}

enum ig_status
pdp_anchor_ready(struct pdp_store *s)
{
    return s->anchor.path != NULL ? flush(s) : IG_OK;
}

enum ig_status
pdp_anchor_stage(struct pdp_store *s, const char *note, size_t len,
                 uint64_t size, const unsigned char root[AUDIT_HASH_BYTES])
{
    struct pdp_anchor_note *n = &s->anchor.staged;

    if (s->anchor.path == NULL)
        return IG_OK;
    note_free(n);
    if ((n->text = malloc(len + 1)) == NULL)
        return IG_ERR_NOMEM;
    memcpy(n->text, note, len);
    n->text[len] = '\0';
    n->len = len;
    n->size = size;
    memcpy(n->root, root, AUDIT_HASH_BYTES);
    return IG_OK;
}

void
pdp_anchor_after_commit(struct pdp_store *s, int committed)
{
    struct pdp_anchor *an = &s->anchor;

    if (an->staged.text == NULL)
        return;
    if (!committed) {
        note_free(&an->staged);
        return;
    }
    note_free(&an->unwritten);
    an->unwritten = an->staged;
    memset(&an->staged, 0, sizeof(an->staged));
    (void)flush(s);
}

void
pdp_anchor_close(struct pdp_store *s, int clean)
{
    struct pdp_anchor *an = &s->anchor;
    struct ig_err err;

    if (clean && an->path != NULL && an->unwritten.text == NULL &&
        an->size == s->audit.tree.size && unlink(an->marker) == 0 &&
        ig_file_sync_parent(an->marker, &err) != IG_OK)
        alog(s, "warning", "audit.anchor_sync_failed",
             json_pack("{s:s}", "error", err.msg));
    note_free(&an->staged);
    note_free(&an->unwritten);
    free(an->newest);
    free(an->path);
    free(an->tmp);
    free(an->marker);
    memset(an, 0, sizeof(*an));
}
