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
#include "store_anchor.h"

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
#include "ig_time.h"

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
set_paths(struct store_anchor_state *an, struct ig_err *err)
{
    const char *file = an->env.opts->audit_anchor;
    size_t n = strlen(file) + sizeof(".running");

    an->path = strdup(file);
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
put_anchor(struct store_anchor_state *an, uint64_t size,
           const unsigned char root[AUDIT_HASH_BYTES], struct ig_err *err)
{
    struct ig_buf note;
    enum ig_status rc;

    ig_buf_init(&note, AUDIT_NOTE_MAX);
    rc = store_anchor_sign(an->env.opts, size, root, &note);
    if (rc != IG_OK)
        (void)ig_err_set(err, rc, "cannot sign the audit anchor: %s",
                         ig_strerror(rc));
    else if (store_anchor_write(an, note.data, note.len, err) == IG_OK) {
        an->size = size;
        memcpy(an->root, root, AUDIT_HASH_BYTES);
    } else {
        rc = IG_ERR_IO;
    }
    ig_buf_release(&note);
    return rc;
}

/* The adoption as an event of the log itself (audit.anchor_adopted), so
   that the signed history says where the operator took it over: the
   backend appends it in a transaction of its own. */
static enum ig_status
record_adoption(struct store_anchor_state *an, const char *reason,
                const struct audit_checkpoint *old, struct ig_err *err)
{
    const struct store_audit_state *a = an->env.audit;
    char now[IG_TIME_STRLEN + 1];
    struct ig_buf text;
    enum ig_status rc = IG_ERR_NOMEM;
    json_t *e;

    if (ig_time_format(ig_time_now(), now) != IG_OK)
        now[0] = '\0';
    e = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "type",
                  "audit.anchor_adopted", "time", now, "anchor", an->path,
                  "reason", reason, "size", (json_int_t)a->ckpt_size,
                  "previous_size", (json_int_t)(old != NULL ? old->size : 0),
                  "tree_size", (json_int_t)a->tree.size);
    ig_buf_init(&text, AUDIT_NOTE_MAX);
    if (e != NULL && ig_canon_write(e, &text, NULL) == IG_OK)
        rc = an->env.record(an->env.ctx, text.data, err);
    else
        (void)ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    json_decref(e);
    ig_buf_release(&text);
    return rc == IG_OK ? IG_OK : IG_ERR_IO;
}

/* Log the adoption of the database's state, record it, then anchor it. */
static enum ig_status
adopt(struct store_anchor_state *an, const char *reason,
      const struct audit_checkpoint *old, struct ig_err *err)
{
    const struct store_audit_state *a = an->env.audit;
    char r[64] = "", o[64] = "";

    if (a->ckpt_size > 0)
        b64(a->ckpt_root, r);
    if (old != NULL)
        b64(old->root, o);
    store_anchor_log(
        an, "warning", "audit.anchor_adopted",
        json_pack("{s:s, s:s, s:I, s:s, s:I, s:s, s:I, s:s}", "anchor",
                  an->path, "reason", reason, "size", (json_int_t)a->ckpt_size,
                  "root", r, "previous_size",
                  (json_int_t)(old != NULL ? old->size : 0), "previous_root", o,
                  "tree_size", (json_int_t)a->tree.size, "message",
                  "the operator took the database's audit log as it is: "
                  "the anchor now holds its newest checkpoint"));
    if (record_adoption(an, reason, old, err) != IG_OK)
        return IG_ERR_IO;
    if (a->ckpt_size > 0)
        return put_anchor(an, a->ckpt_size, a->ckpt_root, err);
    /* Nothing signed yet: no anchor until the first checkpoint. */
    if (unlink(an->path) != 0 && errno != ENOENT)
        return ig_err_set(err, IG_ERR_IO, "cannot remove %s: %s", an->path,
                          strerror(errno));
    return ig_file_sync_parent(an->path, err);
}

/* The tree against a present anchor: NULL when it extends it. */
static const char *
mismatch(struct store_anchor_state *an, const struct audit_checkpoint *cp)
{
    unsigned char root[AUDIT_HASH_BYTES];

    if (cp->size > an->env.audit->tree.size)
        return "shorter";
    if (cp->size > 0 &&
        (audit_root_at(cp->size, an->env.fetch, an->env.ctx, root) != IG_OK ||
         sodium_memcmp(root, cp->root, sizeof(root)) != 0))
        return "rewritten";
    return NULL;
}

static enum ig_status
refuse(struct store_anchor_state *an, const char *why,
       const struct audit_checkpoint *cp, struct ig_err *err)
{
    const struct store_audit_state *a = an->env.audit;
    const char *path = an->path;
    unsigned long long at = cp != NULL ? (unsigned long long)cp->size : 0,
                       n = (unsigned long long)a->tree.size;

    store_anchor_log(an, "error", "audit.anchor_refused",
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
catch_up(struct store_anchor_state *an, int other_key, struct ig_err *err)
{
    const struct store_opts *o = an->env.opts;
    const struct store_audit_state *a = an->env.audit;
    struct audit_verifier v;
    struct ig_public_key pub;
    struct audit_checkpoint cp;
    const char *note = an->newest;

    ig_signing_key_public(o->audit_key, &pub);
    if (note != NULL &&
        audit_verifier_init(&v, o->audit_name, pub.pk) == IG_OK &&
        audit_checkpoint_open(note, strlen(note), &v, &cp, NULL) == IG_OK &&
        cp.size == a->ckpt_size &&
        sodium_memcmp(cp.root, a->ckpt_root, AUDIT_HASH_BYTES) == 0) {
        if (store_anchor_write(an, note, strlen(note), err) != IG_OK)
            return IG_ERR_IO;
        an->size = cp.size;
        memcpy(an->root, cp.root, AUDIT_HASH_BYTES);
        return IG_OK;
    }
    store_anchor_log(
        an, "warning", "audit.anchor_not_updated",
        json_pack("{s:I, s:I, s:s}", "anchor_size", (json_int_t)an->size,
                  "newest_stored", (json_int_t)a->ckpt_size, "message",
                  "the database's newest checkpoint is not signed by the "
                  "audit key: the anchor stays where it was"));
    return other_key ? put_anchor(an, an->size, an->root, err) : IG_OK;
}

/* An anchor that was read: check it, and bring it up to date. */
static enum ig_status
check_present(struct store_anchor_state *an, const struct audit_checkpoint *cp,
              int other_key, int running, struct ig_err *err)
{
    struct store_audit_state *a = an->env.audit;
    const char *why = mismatch(an, cp);
    int strict = an->env.opts->anchor_adopt != STORE_ANCHOR_ADOPT;

    /* Leaves beyond the anchor: another replica's (a shared log), this
       PDP's unsigned tail after a crash (the marker), or added while no
       PDP ran. */
    if (why == NULL && a->tree.size > cp->size)
        why = store_anchor_marker_refused(an->marker) ? "refused"
              : !running && !an->env.shared           ? "appended"
                                                      : NULL;
    if (why != NULL)
        return strict ? refuse(an, why, cp, err) : adopt(an, why, cp, err);
    an->size = cp->size;
    memcpy(an->root, cp->root, AUDIT_HASH_BYTES);
    if (a->ckpt_size < cp->size) {
        store_anchor_log(
            an, "warning", "audit.checkpoints_missing",
            json_pack("{s:I, s:I, s:s}", "anchor_size", (json_int_t)cp->size,
                      "newest_stored", (json_int_t)a->ckpt_size, "message",
                      "the database lacks signed checkpoints the anchor "
                      "holds; its events are intact"));
        a->ckpt_size = cp->size;
        memcpy(a->ckpt_root, cp->root, AUDIT_HASH_BYTES);
    }
    if (running && !an->env.shared && a->tree.size > a->ckpt_size)
        store_anchor_log(
            an, "warning", "audit.unanchored_leaves",
            json_pack("{s:I, s:I, s:s}", "from", (json_int_t)a->ckpt_size, "to",
                      (json_int_t)a->tree.size, "message",
                      "the previous run did not stop cleanly: these events "
                      "were not signed; the next checkpoint signs them"));
    if (other_key)
        store_anchor_log(
            an, "warning", "audit.anchor_key_changed",
            json_pack("{s:s, s:s}", "anchor", an->path, "message",
                      "the anchor was signed by another key of this log "
                      "(a rotation): re-signed with the audit key"));
    if (a->ckpt_size > cp->size)
        return catch_up(an, other_key, err);
    if (other_key)
        return put_anchor(an, cp->size, cp->root, err);
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
warn_if_beside(struct store_anchor_state *an)
{
    struct stat a, d;

    if (an->env.db_path != NULL && stat_dir(an->path, &a) == 0 &&
        stat_dir(an->env.db_path, &d) == 0 && a.st_dev == d.st_dev &&
        a.st_ino == d.st_ino)
        store_anchor_log(
            an, "warning", "audit.anchor_beside_database",
            json_pack("{s:s, s:s}", "anchor", an->path, "message",
                      "the anchor is in the database's directory: keep it "
                      "where those who can write the database cannot "
                      "([audit] anchor)"));
}

/* Read and open the anchor file into cp: IG_OK, IG_ERR_NOTFOUND (none),
   IG_ERR_IO or IG_ERR_CRYPTO with err. */
static enum ig_status
read_anchor(struct store_anchor_state *an, struct audit_checkpoint *cp,
            int *other, struct ig_err *err)
{
    char *buf = malloc(AUDIT_NOTE_MAX + 1);
    size_t len = 0;
    enum ig_status rc;

    if (buf == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    rc = store_anchor_read(an->path, buf, AUDIT_NOTE_MAX + 1, &len, err);
    if (rc == IG_OK)
        rc = store_anchor_parse(an, buf, len, cp, other, err);
    free(buf);
    return rc;
}

enum ig_status
store_anchor_open(struct store_anchor_state *an, struct ig_err *err)
{
    const struct store_opts *o = an->env.opts;
    struct audit_checkpoint cp;
    struct ig_err e;
    struct stat sb;
    int other = 0, running;
    enum ig_status rc;

    if (o->audit_anchor == NULL || o->audit_key == NULL)
        return IG_OK;
    if ((rc = set_paths(an, err)) != IG_OK)
        return rc;
    running = lstat(an->marker, &sb) == 0;
    rc = read_anchor(an, &cp, &other, err);
    if (rc == IG_OK)
        rc = check_present(an, &cp, other, running, err);
    else if (rc == IG_ERR_NOTFOUND && an->env.audit->ckpt_size == 0)
        rc = IG_OK; /* nothing signed yet */
    else if (rc == IG_ERR_NOTFOUND && o->anchor_adopt != 0)
        rc = adopt(an, "missing", NULL, err);
    else if (rc == IG_ERR_NOTFOUND)
        rc = refuse(an, "missing", NULL, err);
    free(an->newest);
    an->newest = NULL;
    /* The marker: this PDP has the log open (and the directory is
       writable). */
    if (rc == IG_OK &&
        (ig_file_write(an->marker, "running\n", 8, 0600, 0, &e) != IG_OK ||
         ig_file_sync_parent(an->marker, &e) != IG_OK))
        rc = ig_err_set(err, IG_ERR_IO,
                        "cannot write beside the audit anchor %s (%s): set "
                        "[audit] anchor to a file in a directory the PDP "
                        "can write, apart from the database",
                        an->path, e.msg);
    if (rc == IG_OK)
        warn_if_beside(an);
    return rc == IG_OK ? IG_OK : IG_ERR_IO;
}

enum ig_status
store_anchor_takeover(struct store_anchor_state *an, struct ig_err *err)
{
    struct audit_checkpoint cp, mine;
    const char *why = NULL;
    int other = 0;
    enum ig_status rc;

    if (an->path == NULL)
        return IG_OK;
    /* What this replica anchored before, and what the file holds now:
       both must be prefixes of the tree. */
    memset(&mine, 0, sizeof(mine));
    mine.size = an->size;
    memcpy(mine.root, an->root, AUDIT_HASH_BYTES);
    rc = read_anchor(an, &cp, &other, err);
    if (rc == IG_ERR_NOTFOUND && an->size > 0)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "the audit anchor %s (size %llu) was removed",
                          an->path, (unsigned long long)an->size);
    if (rc != IG_OK && rc != IG_ERR_NOTFOUND)
        return rc == IG_ERR_CRYPTO ? IG_ERR_CRYPTO : IG_ERR_IO;
    if (rc == IG_OK)
        why = mismatch(an, &cp);
    if (why == NULL)
        why = mismatch(an, &mine);
    if (why != NULL)
        return ig_err_set(
            err, IG_ERR_CRYPTO, "the audit log is %s its anchor %s (size %llu)",
            strcmp(why, "shorter") == 0 ? "shorter than"
                                        : "not an extension of",
            an->path, (unsigned long long)(rc == IG_OK ? cp.size : mine.size));
    if (rc == IG_OK && cp.size > an->size) {
        an->size = cp.size;
        memcpy(an->root, cp.root, AUDIT_HASH_BYTES);
    }
    if (an->env.audit->ckpt_size > an->size)
        return catch_up(an, other, err);
    return IG_OK;
}
