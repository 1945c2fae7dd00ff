/*
 * store_anchor_open.c - the audit anchor at open (store_anchor.c
 * has the design): after the database was checked against itself
 * (store_audit_check.c), its tree must extend the checkpoint in the
 * anchor file. What does not is refused with one line saying what to do,
 * or - when the operator adopts the database (STORE_ANCHOR_ADOPT, or a dev
 * start with no anchor) - logged, recorded as an event of the log, and
 * anchored as it is. An anchor behind the database catches up; one of
 * another key is re-signed; the running marker is written.
 */
#include "store_int.h"

#include <errno.h>
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
b64(const unsigned char root[AUDIT_HASH_BYTES], char out[64])
{
    (void)sodium_bin2base64(out, 64, root, AUDIT_HASH_BYTES,
                            sodium_base64_VARIANT_ORIGINAL);
}

static enum ig_status
set_paths(struct store_sq *s, struct ig_err *err)
{
    struct store_anchor_state *an = &s->anchor;
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
put_anchor(struct store_sq *s, uint64_t size,
           const unsigned char root[AUDIT_HASH_BYTES], struct ig_err *err)
{
    struct ig_buf note;
    enum ig_status rc;

    ig_buf_init(&note, AUDIT_NOTE_MAX);
    rc = store_audit_sign_note(s, size, root, &note);
    if (rc != IG_OK)
        (void)ig_err_set(err, rc, "cannot sign the audit anchor: %s",
                         ig_strerror(rc));
    else if (store_anchor_write(s, note.data, note.len, err) == IG_OK) {
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
record_adoption(struct store_sq *s, const char *reason,
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
                 ? store_append_events(s, ev, 1)
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
adopt(struct store_sq *s, const char *reason,
      const struct audit_checkpoint *old, struct ig_err *err)
{
    const struct store_audit_state *a = &s->audit;
    char r[64] = "", o[64] = "";

    if (a->ckpt_size > 0)
        b64(a->ckpt_root, r);
    if (old != NULL)
        b64(old->root, o);
    store_audit_log(
        s, "warning", "audit.anchor_adopted",
        json_pack("{s:s, s:s, s:I, s:s, s:I, s:s, s:I, s:s}", "anchor",
                  s->anchor.path, "reason", reason, "size",
                  (json_int_t)a->ckpt_size, "root", r, "previous_size",
                  (json_int_t)(old != NULL ? old->size : 0), "previous_root", o,
                  "tree_size", (json_int_t)a->tree.size, "message",
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
mismatch(struct store_sq *s, const struct audit_checkpoint *cp)
{
    unsigned char root[AUDIT_HASH_BYTES];

    if (cp->size > s->audit.tree.size)
        return "shorter";
    if (cp->size > 0 &&
        (audit_root_at(cp->size, store_audit_wfetch, s, root) != IG_OK ||
         sodium_memcmp(root, cp->root, sizeof(root)) != 0))
        return "rewritten";
    return NULL;
}

static enum ig_status
refuse(struct store_sq *s, const char *why, const struct audit_checkpoint *cp,
       struct ig_err *err)
{
    const struct store_audit_state *a = &s->audit;
    const char *path = s->anchor.path;
    unsigned long long at = cp != NULL ? (unsigned long long)cp->size : 0,
                       n = (unsigned long long)a->tree.size;

    store_audit_log(s, "error", "audit.anchor_refused",
                    json_pack("{s:s, s:s, s:I, s:I, s:I, s:s}", "anchor", path,
                              "reason", why, "anchor_size", (json_int_t)at,
                              "tree_size", (json_int_t)n, "newest_stored",
                              (json_int_t)a->ckpt_size, "message",
                              "refusing to start: " ADOPT_HINT));
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
    if (strcmp(why, "refused") == 0)
        return ig_err_set(err, IG_ERR_IO,
                          "audit leaf %llu to %llu: the previous run refused "
                          "to sign them (audit.checkpoint_refused: the "
                          "stored tree was not the one it wrote), so they "
                          "are not its unsigned tail (anchor %s): refusing "
                          "(or --adopt-audit-anchor)",
                          at, n - 1, path);
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
catch_up(struct store_sq *s, int other_key, struct ig_err *err)
{
    struct store_anchor_state *an = &s->anchor;
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
        if (store_anchor_write(s, note, strlen(note), err) != IG_OK)
            return IG_ERR_IO;
        an->size = cp.size;
        memcpy(an->root, cp.root, AUDIT_HASH_BYTES);
        return IG_OK;
    }
    store_audit_log(
        s, "warning", "audit.anchor_not_updated",
        json_pack("{s:I, s:I, s:s}", "anchor_size", (json_int_t)an->size,
                  "newest_stored", (json_int_t)s->audit.ckpt_size, "message",
                  "the database's newest checkpoint is not signed by the "
                  "audit key: the anchor stays where it was"));
    return other_key ? put_anchor(s, an->size, an->root, err) : IG_OK;
}

/* An anchor that was read: check it, and bring it up to date. */
static enum ig_status
check_present(struct store_sq *s, const struct audit_checkpoint *cp,
              int other_key, int running, struct ig_err *err)
{
    struct store_audit_state *a = &s->audit;
    const char *why = mismatch(s, cp);
    int strict = s->opts.anchor_adopt != STORE_ANCHOR_ADOPT;

    if (why == NULL && a->tree.size > cp->size)
        why = !running                                        ? "appended"
              : store_anchor_marker_refused(s->anchor.marker) ? "refused"
                                                              : NULL;
    if (why != NULL)
        return strict ? refuse(s, why, cp, err) : adopt(s, why, cp, err);
    s->anchor.size = cp->size;
    memcpy(s->anchor.root, cp->root, AUDIT_HASH_BYTES);
    if (a->ckpt_size < cp->size) {
        store_audit_log(
            s, "warning", "audit.checkpoints_missing",
            json_pack("{s:I, s:I, s:s}", "anchor_size", (json_int_t)cp->size,
                      "newest_stored", (json_int_t)a->ckpt_size, "message",
                      "the database lacks signed checkpoints the anchor "
                      "holds; its events are intact"));
        a->ckpt_size = cp->size;
        memcpy(a->ckpt_root, cp->root, AUDIT_HASH_BYTES);
    }
    if (running && a->tree.size > a->ckpt_size)
        store_audit_log(
            s, "warning", "audit.unanchored_leaves",
            json_pack("{s:I, s:I, s:s}", "from", (json_int_t)a->ckpt_size, "to",
                      (json_int_t)a->tree.size, "message",
                      "the previous run did not stop cleanly: these events "
                      "were not signed; the next checkpoint signs them"));
    if (other_key)
        store_audit_log(
            s, "warning", "audit.anchor_key_changed",
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
warn_if_beside(struct store_sq *s)
{
    struct stat a, d;

    if (stat_dir(s->anchor.path, &a) == 0 && stat_dir(s->path, &d) == 0 &&
        a.st_dev == d.st_dev && a.st_ino == d.st_ino)
        store_audit_log(
            s, "warning", "audit.anchor_beside_database",
            json_pack("{s:s, s:s}", "anchor", s->anchor.path, "message",
                      "the anchor is in the database's directory: keep it "
                      "where those who can write the database cannot "
                      "([audit] anchor)"));
}

enum ig_status
store_anchor_open(struct store_sq *s, struct ig_err *err)
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
    rc = store_anchor_read(s->anchor.path, buf, AUDIT_NOTE_MAX + 1, &len, err);
    if (rc == IG_OK)
        rc = store_anchor_parse(s, buf, len, &cp, &other, err);
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
