/*
 * witness_add.c - one add-checkpoint request, from body to answer
 * (witness_add.h).
 *
 * The order is the spec's: the body must parse (400: audit_witness_req_parse
 * is strict), its note's first line must be a configured origin (404), and
 * the note must carry a valid signature by that log's key (403; a line
 * with the key's name and id that fails to verify is 403 as well); a note
 * that is not a well-formed checkpoint (extension lines included) is 400.
 * Only then is the stored state looked at. What the witness keeps and
 * later serves is the checkpoint text and the log's own signature lines -
 * never other lines the client put on the note, such as a forged line in
 * the witness's own name.
 */
#include "witness_add.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "ig_log.h"

static const char dash[] = "\xe2\x80\x94 "; /* "— " */

void
witness_answer_init(struct witness_answer *a)
{
    memset(a, 0, sizeof(*a));
    a->type = WITNESS_TYPE_TEXT;
    ig_buf_init(&a->body, AUDIT_NOTE_MAX + AUDIT_COSIG_LINE_MAX + 1);
}

void
witness_answer_text(struct witness_answer *a, unsigned int status,
                    const char *problem)
{
    ig_buf_reset(&a->body);
    a->status = status;
    a->type = WITNESS_TYPE_TEXT;
    if (ig_buf_adds(&a->body, problem) != IG_OK ||
        ig_buf_addc(&a->body, '\n') != IG_OK)
        ig_buf_reset(&a->body); /* the status still says it */
}

/* 1 when the signature line l[0..n) (no newline) is v's: its name and
   key id (the first 8 base64 characters: 6 bytes, of which the id is
   the first 4, whatever the length of the rest). */
static int
is_log_line(const char *l, size_t n, const struct audit_verifier *v)
{
    size_t dl = sizeof(dash) - 1, nl = strlen(v->name), sl;
    unsigned char sig[6];
    uint32_t id;

    if (n < dl + nl + 1 + 8 || memcmp(l, dash, dl) != 0 ||
        memcmp(l + dl, v->name, nl) != 0 || l[dl + nl] != ' ')
        return 0;
    if (sodium_base642bin(sig, sizeof(sig), l + dl + nl + 1, 8, NULL, &sl, NULL,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        sl < 4)
        return 0;
    id = (uint32_t)sig[0] << 24 | (uint32_t)sig[1] << 16 |
         (uint32_t)sig[2] << 8 | (uint32_t)sig[3];
    return id == v->key_id;
}

/* The signature lines: after the note's last blank line. */
static const char *
sig_lines(const char *note, size_t len)
{
    size_t i;

    for (i = len; i >= 2; i--)
        if (note[i - 2] == '\n' && note[i - 1] == '\n')
            return note + i;
    return note + len;
}

/* 1 when a signature line of note is k's. */
static int
has_line(const char *note, size_t len, const struct audit_verifier *k)
{
    const char *p = sig_lines(note, len), *end = note + len, *nl;

    for (; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
         p = nl + 1)
        if (is_log_line(p, (size_t)(nl - p), k))
            return 1;
    return 0;
}

/*
 * The log's signature on the note: every key of l with a line on it must
 * verify (a bad line by a trusted key is a bad note), and one must.
 * *signed_by gets the keys that did (a bit each), *text_len the text's
 * length. IG_ERR_INVALID (malformed), IG_ERR_CRYPTO, with err.
 */
static enum ig_status
open_note(const struct witness_log *l, const char *note, size_t len,
          size_t *text_len, unsigned *signed_by, struct ig_err *err)
{
    enum ig_status s;
    size_t i, tl = 0;

    *signed_by = 0;
    for (i = 0; i < l->nkeys; i++) {
        s = audit_note_open(note, len, &l->keys[i], &tl, err);
        if (s == IG_OK) {
            *signed_by |= 1u << i;
            *text_len = tl;
        } else if (s != IG_ERR_CRYPTO || has_line(note, len, &l->keys[i])) {
            return s;
        }
    }
    if (*signed_by == 0)
        return ig_err_set(err, IG_ERR_CRYPTO, "no signature by %s",
                          l->nkeys == 1 ? "its key" : "any of its keys");
    return IG_OK;
}

/* The note to keep: the text, the blank line, and the lines of the keys
   in signed_by (every one of which audit_note_open verified). */
static enum ig_status
kept_note(const char *note, size_t len, size_t text_len,
          const struct witness_log *l, unsigned signed_by, struct ig_buf *out)
{
    const char *p = note + text_len + 1, *end = note + len, *nl;
    size_t i;

    if (ig_buf_add(out, note, text_len + 1) != IG_OK)
        return IG_ERR_NOMEM;
    /* One line per key: the same checkpoint with a line repeated is the
       same checkpoint (and must not be kept twice as evidence). */
    for (; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
         p = nl + 1)
        for (i = 0; i < l->nkeys; i++)
            if ((signed_by & (1u << i)) &&
                is_log_line(p, (size_t)(nl - p), &l->keys[i])) {
                if (ig_buf_add(out, p, (size_t)(nl - p) + 1) != IG_OK)
                    return IG_ERR_NOMEM;
                signed_by &= ~(1u << i);
                break;
            }
    return IG_OK;
}

static void
log_outcome(const struct witness_submit *in, const struct witness_result *r)
{
    /* Only a fork proves misbehaviour by itself; a replayed old
       checkpoint or a bad proof may be anyone's doing. */
    if (r->reason != WITNESS_REASON_NONE)
        ig_log(r->reason == WITNESS_REASON_FORK ? "error" : "warning",
               "witness.evidence",
               json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:s}", "origin",
                         in->origin, "reason", witness_reason_name(r->reason),
                         "size", (json_int_t)in->size, "old",
                         (json_int_t)in->old, "cosigned_size",
                         (json_int_t)r->size, "kept",
                         r->evidence > 0    ? "new"
                         : r->evidence == 0 ? "already kept"
                                            : "over the cap: counted",
                         "problem", r->problem));
    else if (r->status == 200)
        ig_log("info", "witness.cosigned",
               json_pack("{s:s, s:I, s:I}", "origin", in->origin, "size",
                         (json_int_t)in->size, "old", (json_int_t)in->old));
}

/* The state's decision on a checkpoint the log signed. */
static void
decide(struct witness_state *st, const struct witness_signer *sg,
       const struct witness_submit *in, struct witness_answer *a)
{
    struct witness_result r;
    struct ig_err err;
    char size[24];

    ig_err_clear(&err);
    if (witness_state_submit(st, in, sg, &r, &err) != IG_OK) {
        ig_log("error", "witness.db_error",
               json_pack("{s:s, s:s}", "origin", in->origin, "error", err.msg));
        witness_answer_text(a, 500, "the witness cannot update its state");
        return;
    }
    log_outcome(in, &r);
    if (r.status == 200) {
        ig_buf_reset(&a->body);
        a->status = 200;
        if (ig_buf_adds(&a->body, r.line) != IG_OK)
            witness_answer_text(a, 500, "out of memory");
    } else if (r.status == 409) {
        ig_buf_reset(&a->body);
        a->status = 409;
        a->type = WITNESS_TYPE_SIZE;
        audit_witness_size_format(r.size, size, sizeof(size));
        if (ig_buf_adds(&a->body, size) != IG_OK)
            witness_answer_text(a, 500, "out of memory");
    } else {
        witness_answer_text(a, r.status, r.problem);
    }
}

/* The signed checkpoint in req, for log l: 400/403, or the decision. */
static void
open_checkpoint(const struct witness_log *l, struct witness_state *st,
                const struct witness_signer *sg,
                const struct audit_witness_req *req, int64_t now,
                struct witness_answer *a)
{
    struct audit_checkpoint cp;
    struct witness_submit in;
    struct ig_buf kept;
    struct ig_err err;
    char msg[IG_ERR_MSGMAX + 32];
    size_t text_len = 0;
    unsigned signed_by = 0;
    enum ig_status s;

    s = open_note(l, req->note, req->note_len, &text_len, &signed_by, &err);
    if (s == IG_OK)
        s = audit_checkpoint_parse(req->note, text_len, &cp, &err);
    if (s != IG_OK) {
        (void)snprintf(msg, sizeof(msg), "%s: %s",
                       s == IG_ERR_CRYPTO ? "no valid signature by the log"
                                          : "not a checkpoint",
                       err.msg);
        witness_answer_text(a, s == IG_ERR_CRYPTO ? 403 : 400, msg);
        return;
    }
    ig_buf_init(&kept, AUDIT_NOTE_MAX + 1);
    if (kept_note(req->note, req->note_len, text_len, l, signed_by, &kept) !=
        IG_OK) {
        ig_buf_release(&kept);
        witness_answer_text(a, 500, "out of memory");
        return;
    }
    memset(&in, 0, sizeof(in));
    in.origin = l->origin;
    in.old = req->old;
    in.size = cp.size;
    in.root = cp.root;
    in.proof = (const unsigned char(*)[AUDIT_HASH_BYTES])req->proof;
    in.nproof = req->nproof;
    in.text = req->note;
    in.text_len = text_len;
    in.kept = kept.data;
    in.kept_len = kept.len;
    in.now = now;
    decide(st, sg, &in, a);
    ig_buf_release(&kept);
}

void
witness_add_checkpoint(const struct witness_config *c, struct witness_state *st,
                       const struct witness_signer *sg, const char *body,
                       size_t len, int64_t now, struct witness_answer *a)
{
    struct audit_witness_req r; /* 2 KiB: 63 hashes */
    const struct witness_log *l;
    struct ig_err err;
    char msg[IG_ERR_MSGMAX + 32];
    const char *nl;

    if (audit_witness_req_parse(body, len, &r, &err) != IG_OK) {
        (void)snprintf(msg, sizeof(msg), "bad request: %s", err.msg);
        witness_answer_text(a, 400, msg);
        return;
    }
    nl = memchr(r.note, '\n', r.note_len);
    l = nl != NULL ? witness_config_log(c, r.note, (size_t)(nl - r.note))
                   : NULL;
    if (l == NULL)
        witness_answer_text(a, 404,
                            "unknown log: this witness is not "
                            "configured for the checkpoint's origin");
    else
        open_checkpoint(l, st, sg, &r, now, a);
}
