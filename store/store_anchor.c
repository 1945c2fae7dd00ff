/*
 * store_anchor.c - the audit log's anchor: the latest signed
 * checkpoint kept in a file outside the database ([audit] anchor, by
 * default beside the audit key), so that whoever can write the database
 * but not that file cannot get a rewritten history signed.
 *
 * DESIGN
 * The file holds one C2SP signed checkpoint, exactly the note the PDP
 * stored (or one it signed for the same size and root), mode 0600. It is
 * replaced atomically - a temporary file beside it, fsync, rename, fsync
 * of the directory - after the transaction holding each new checkpoint
 * committed (run_batch calls store_anchor_after_commit), so the file never
 * names a checkpoint the database does not durably hold. A write that
 * fails is retried before the next checkpoint, which is refused until it
 * succeeds: the anchor never falls more than one checkpoint behind.
 *
 * Before signing, the new tree must extend the anchor (a consistency
 * proof from the stored nodes, verified against the anchor's root). At
 * open (after store_audit_check.c has checked the database against
 * itself) the tree must extend the anchor; a database that does not - or
 * is shorter (restored from an older backup), or holds signed checkpoints
 * while the anchor is missing - is refused unless the operator adopts its
 * state (STORE_ANCHOR_ADOPT, `serve --adopt-audit-anchor`; a dev-mode start
 * adopts a missing anchor only), which is logged. An anchor signed by
 * another key (after a key rotation) is accepted with a warning and
 * re-signed: its protection is where it is kept, not its signature.
 *
 * The marker file <anchor>.running exists while a PDP has the log open;
 * a clean stop removes it once the final checkpoint is anchored. So at
 * open, leaves beyond the anchor with no marker were added while no PDP
 * ran (refused, like a rewrite); with the marker they are the unsigned
 * tail of a PDP that crashed (a warning; the next checkpoint signs them).
 * Writing the marker at open also proves the directory writable. A
 * checkpoint refused because the stored tree is not the one the PDP wrote
 * (someone edited the unsigned tail behind it) rewrites the marker to
 * "refused", so that neither the clean stop (which keeps the marker, the
 * tail being unsigned) nor a crash after it makes that tail look like a
 * crash's: the next start refuses it like a rewrite.
 *
 * This file has the file itself and what happens around each checkpoint;
 * store_anchor_open.c the checks at open.
 */
#include "store_anchor.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_note.h"
#include "ig_file.h"

static void
note_free(struct store_anchor_note *n)
{
    free(n->text);
    memset(n, 0, sizeof(*n));
}

void
store_anchor_log(const struct store_anchor_state *an, const char *level,
                 const char *event, json_t *fields)
{
    const struct store_opts *o = an->env.opts;

    if (o != NULL && o->log != NULL)
        o->log(level, event, fields);
    else
        json_decref(fields);
}

/* ---- checkpoints ---- */

enum ig_status
store_anchor_sign(const struct store_opts *opts, uint64_t size,
                  const unsigned char root[AUDIT_HASH_BYTES],
                  struct ig_buf *out)
{
    struct ig_buf text;
    enum ig_status rc;

    ig_buf_init(&text, AUDIT_NOTE_MAX);
    rc = audit_checkpoint_text(opts->audit_name, size, root, &text);
    if (rc == IG_OK)
        rc = audit_note_sign(text.data, text.len, opts->audit_name,
                             opts->audit_key, out);
    ig_buf_release(&text);
    return rc;
}

int
store_audit_note_root(const char *note, uint64_t size,
                      unsigned char root[AUDIT_HASH_BYTES])
{
    const char *l2 = note != NULL ? strchr(note, '\n') : NULL, *l3, *e;
    char *end;
    size_t len = 0;

    if (l2 == NULL || *++l2 < '0' || *l2 > '9' ||
        strtoull(l2, &end, 10) != size || *end != '\n')
        return -1;
    l3 = end + 1;
    e = strchr(l3, '\n');
    if (e == NULL ||
        sodium_base642bin(root, AUDIT_HASH_BYTES, l3, (size_t)(e - l3), NULL,
                          &len, NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
        len != AUDIT_HASH_BYTES)
        return -1;
    return 0;
}

enum ig_status
store_anchor_check_stored(struct store_anchor_state *an, uint64_t size,
                          const char *note, struct ig_err *err)
{
    struct store_audit_state *a = an->env.audit;
    unsigned char root[AUDIT_HASH_BYTES], want[AUDIT_HASH_BYTES];

    if (size == 0 || size > a->tree.size)
        return ig_err_set(err, IG_ERR_IO,
                          "checkpoint of %llu leaves but the audit log holds "
                          "%llu: the log was truncated",
                          (unsigned long long)size,
                          (unsigned long long)a->tree.size);
    if (store_audit_note_root(note, size, root) != 0)
        return ig_err_set(err, IG_ERR_IO, "checkpoint %llu is malformed",
                          (unsigned long long)size);
    if (audit_root_at(size, an->env.fetch, an->env.ctx, want) != IG_OK ||
        sodium_memcmp(root, want, sizeof(root)) != 0)
        return ig_err_set(err, IG_ERR_IO,
                          "audit log check: the signed checkpoint of size "
                          "%llu is not the root of the first %llu events: "
                          "the log or its checkpoints were rewritten; "
                          "refusing to start",
                          (unsigned long long)size, (unsigned long long)size);
    a->ckpt_size = size;
    memcpy(a->ckpt_root, root, sizeof(root));
    free(an->newest);
    if ((an->newest = strdup(note)) == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

enum ig_status
store_anchor_check_next(struct store_anchor_state *an, uint64_t size,
                        const unsigned char root[AUDIT_HASH_BYTES])
{
    const struct store_audit_state *a = an->env.audit;
    unsigned char stored[AUDIT_HASH_BYTES];
    unsigned char proof[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    audit_fetch_fn fetch = an->env.fetch;
    void *ctx = an->env.ctx;
    const char *why = NULL;
    size_t n = 0;

    if (audit_root_at(size, fetch, ctx, stored) != IG_OK)
        why = "the stored tiles are incomplete";
    else if (memcmp(stored, root, sizeof(stored)) != 0)
        why = "the stored tiles do not hash to the tree's root";
    else if (a->ckpt_size > 0 &&
             audit_consistency_proof(a->ckpt_size, size, fetch, ctx, proof,
                                     &n) != IG_OK)
        why = "no consistency proof can be built from the stored tiles";
    else if (a->ckpt_size > 0 &&
             audit_verify_consistency(a->ckpt_size, size, a->ckpt_root, root,
                                      (const unsigned char(*)[32])proof,
                                      n) != IG_OK)
        why = "the tree is not consistent with the previous checkpoint";
    else
        why = store_anchor_extends(an, size, root);
    if (why == NULL)
        return IG_OK;
    /* The marker first: once the refusal is logged, no restart signs. */
    store_anchor_mark_refused(an);
    store_anchor_log(an, "error", "audit.checkpoint_refused",
                     json_pack("{s:I, s:I, s:I, s:s}", "size", (json_int_t)size,
                               "previous_size", (json_int_t)a->ckpt_size,
                               "anchor_size", (json_int_t)an->size, "reason",
                               why));
    return IG_ERR_CRYPTO;
}

/* ---- the file ---- */

enum ig_status
store_anchor_write(struct store_anchor_state *an, const char *note, size_t len,
                   struct ig_err *err)
{

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

enum ig_status
store_anchor_read(const char *path, char *buf, size_t cap, size_t *len,
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

enum ig_status
store_anchor_parse(struct store_anchor_state *an, const char *note, size_t len,
                   struct audit_checkpoint *cp, int *other_key,
                   struct ig_err *err)
{
    const struct store_opts *o = an->env.opts;
    const char *path = an->path, *blank;
    struct audit_verifier v;
    struct ig_public_key pub;
    struct ig_err e;
    int ours = 0, named = 0;

    *other_key = 0;
    ig_signing_key_public(o->audit_key, &pub);
    if (audit_verifier_init(&v, o->audit_name, pub.pk) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "bad audit log name");
    if (audit_checkpoint_open(note, len, &v, cp, &e) == IG_OK)
        return IG_OK;
    count_sigs(note, len, &v, &ours, &named);
    blank = find_blank(note, len);
    if (ours > 0 || named == 0 || blank == NULL ||
        audit_checkpoint_parse(note, (size_t)(blank - note) + 1, cp, &e) !=
            IG_OK ||
        strcmp(cp->origin, o->audit_name) != 0)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "the audit anchor %s is not a checkpoint of %s "
                          "signed by its key (%s): it was edited or belongs "
                          "to another log",
                          path, o->audit_name, e.msg);
    *other_key = 1;
    return IG_OK;
}

/* ---- before and after each checkpoint ---- */

const char *
store_anchor_extends(struct store_anchor_state *an, uint64_t size,
                     const unsigned char root[AUDIT_HASH_BYTES])
{
    unsigned char proof[AUDIT_CPROOF_MAX][AUDIT_HASH_BYTES];
    size_t n = 0;

    if (an->path == NULL || an->size == 0)
        return NULL;
    if (size < an->size)
        return "the tree is shorter than the anchored checkpoint";
    if (audit_consistency_proof(an->size, size, an->env.fetch, an->env.ctx,
                                proof, &n) != IG_OK)
        return "no consistency proof from the anchor can be built from the "
               "stored nodes";
    if (audit_verify_consistency(an->size, size, an->root, root,
                                 (const unsigned char(*)[32])proof, n) != IG_OK)
        return "the tree is not a consistent extension of the anchor";
    return NULL;
}

static void
write_failed(struct store_anchor_state *an, const struct ig_err *err)
{
    store_anchor_log(
        an, "error", "audit.anchor_write_failed",
        json_pack("{s:s, s:I, s:s, s:s}", "anchor", an->path, "size",
                  (json_int_t)an->unwritten.size, "error", err->msg, "message",
                  "no further checkpoint is signed until the anchor is "
                  "written"));
}

/* Write the committed checkpoint the file misses; IG_OK when none. */
static enum ig_status
flush(struct store_anchor_state *an)
{
    struct ig_err err;

    if (an->unwritten.text == NULL)
        return IG_OK;
    ig_err_clear(&err);
    if (store_anchor_write(an, an->unwritten.text, an->unwritten.len, &err) !=
        IG_OK) {
        write_failed(an, &err);
        return IG_ERR_IO;
    }
    an->size = an->unwritten.size;
    memcpy(an->root, an->unwritten.root, AUDIT_HASH_BYTES);
    note_free(&an->unwritten);
    return IG_OK;
}

enum ig_status
store_anchor_ready(struct store_anchor_state *an)
{
    return an->path != NULL ? flush(an) : IG_OK;
}

enum ig_status
store_anchor_stage(struct store_anchor_state *an, const char *note, size_t len,
                   uint64_t size, const unsigned char root[AUDIT_HASH_BYTES])
{
    struct store_anchor_note *n = &an->staged;

    if (an->path == NULL)
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
store_anchor_after_commit(struct store_anchor_state *an, int committed)
{

    if (an->staged.text == NULL)
        return;
    if (!committed) {
        note_free(&an->staged);
        return;
    }
    note_free(&an->unwritten);
    an->unwritten = an->staged;
    memset(&an->staged, 0, sizeof(an->staged));
    (void)flush(an);
}

#define MARK_REFUSED "refused\n"

void
store_anchor_mark_refused(struct store_anchor_state *an)
{
    struct ig_err err;

    if (an->path == NULL || an->marked_refused)
        return;
    ig_err_clear(&err);
    if (ig_file_write(an->marker, MARK_REFUSED, sizeof(MARK_REFUSED) - 1, 0600,
                      0, &err) != IG_OK ||
        ig_file_sync_parent(an->marker, &err) != IG_OK) {
        store_anchor_log(
            an, "error", "audit.anchor_write_failed",
            json_pack("{s:s, s:s, s:s}", "anchor", an->marker, "error", err.msg,
                      "message",
                      "cannot record the refused checkpoint in the "
                      "running marker"));
        return;
    }
    an->marked_refused = 1;
}

int
store_anchor_marker_refused(const char *marker)
{
    char buf[sizeof(MARK_REFUSED)];
    ssize_t n;
    int fd = open(marker, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf));
    (void)close(fd);
    return n == (ssize_t)sizeof(MARK_REFUSED) - 1 &&
           memcmp(buf, MARK_REFUSED, sizeof(MARK_REFUSED) - 1) == 0;
}

void
store_anchor_close(struct store_anchor_state *an, int clean)
{
    struct ig_err err;

    if (clean && an->path != NULL && an->unwritten.text == NULL &&
        an->env.audit != NULL && an->size == an->env.audit->tree.size &&
        unlink(an->marker) == 0 &&
        ig_file_sync_parent(an->marker, &err) != IG_OK)
        store_anchor_log(an, "warning", "audit.anchor_sync_failed",
                         json_pack("{s:s}", "error", err.msg));
    note_free(&an->staged);
    note_free(&an->unwritten);
    free(an->newest);
    free(an->path);
    free(an->tmp);
    free(an->marker);
    memset(an, 0, sizeof(*an));
}
