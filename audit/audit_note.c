/*
 * audit_note.c - C2SP signed notes (c2sp.org/signed-note) with Ed25519
 * keys, Go sumdb/note verifier keys, and tlog checkpoints
 * (c2sp.org/tlog-checkpoint).
 *
 * How it works. A note is split at its last blank line: the text before
 * (with its final newline) is what every signature signs; each line after
 * is "— <name> <base64(key id || signature)>". Opening a note checks the
 * whole of it (UTF-8, no control characters but newline, every signature
 * line well formed, at most IG_AUDIT_NOTE_MAX_SIGS of them), then verifies
 * every line whose name and key id are the verifier's - all must verify,
 * and at least one must be there. Lines of other keys are ignored, as the
 * spec asks (witness cosignatures, rotated keys). A checkpoint is then
 * exactly three lines: origin, decimal size, base64 root; extension lines
 * are refused (this log never writes them, and the spec advises against
 * them). Parsing is strict so that one checkpoint has one spelling.
 */
#include "audit_note.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "audit_int.h"
#include "ig_hash.h"
#include "ig_limits.h"
#include "ig_text.h"

#define EM_DASH_SP "\xe2\x80\x94 " /* U+2014 and a space */
#define EM_DASH_SP_LEN 4
#define SIG_ALG_ED25519 0x01
#define SIG_BYTES (4 + crypto_sign_BYTES)

/* Unicode white space (Go's unicode.IsSpace) or a control character. */
static int
name_char_bad(uint32_t c)
{
    if (c <= 0x20 || (c >= 0x7f && c <= 0xa0) || c == '+')
        return 1;
    return c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
           c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

static int
name_valid_n(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, n;
    uint32_t c;

    if (len == 0 || len > AUDIT_NAME_MAX)
        return 0;
    while (i < len) {
        n = ig_utf8_next(p + i, len - i, &c);
        if (n == 0 || name_char_bad(c))
            return 0;
        i += n;
    }
    return 1;
}

int
audit_name_valid(const char *name)
{
    return name != NULL &&
           name_valid_n(name, strnlen(name, AUDIT_NAME_MAX + 1));
}

/* ---- keys ---- */

uint32_t
audit_vkey_id(const char *name, unsigned char type, const unsigned char pk[32])
{
    unsigned char tail[2 + 32], h[IG_SHA256_BYTES];

    tail[0] = '\n';
    tail[1] = type;
    memcpy(tail + 2, pk, 32);
    ig_sha256_2(name, strlen(name), tail, sizeof(tail), h);
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 |
           (uint32_t)h[3];
}

uint32_t
audit_key_id(const char *name, const unsigned char pk[32])
{
    return audit_vkey_id(name, SIG_ALG_ED25519, pk);
}

enum ig_status
audit_verifier_init(struct audit_verifier *v, const char *name,
                    const unsigned char pk[32])
{
    if (!audit_name_valid(name))
        return IG_ERR_INVALID;
    memset(v, 0, sizeof(*v));
    memcpy(v->name, name, strlen(name));
    memcpy(v->pk, pk, 32);
    v->key_id = audit_key_id(name, pk);
    return IG_OK;
}

enum ig_status
audit_vkey_format(const char *name, unsigned char type,
                  const unsigned char pk[32], char *out, size_t cap)
{
    unsigned char raw[33];
    char b64[AUDIT_B64_LEN(33) + 1];
    int n;

    if (!audit_name_valid(name))
        return IG_ERR_INVALID;
    raw[0] = type;
    memcpy(raw + 1, pk, 32);
    audit_b64_encode(raw, sizeof(raw), b64, sizeof(b64));
    n = snprintf(out, cap, "%s+%08" PRIx32 "+%s", name,
                 audit_vkey_id(name, type, pk), b64);
    if (n < 0 || (size_t)n >= cap)
        return IG_ERR_INVALID;
    return IG_OK;
}

enum ig_status
audit_verifier_format(const char *name, const unsigned char pk[32], char *out,
                      size_t cap)
{
    return audit_vkey_format(name, SIG_ALG_ED25519, pk, out, cap);
}

static int
is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

enum ig_status
audit_vkey_parse(const char *text, size_t len, unsigned char type,
                 const char *what, char *name, unsigned char pk[32],
                 struct ig_err *err)
{
    const char *p1, *p2, *end;
    unsigned char raw[33];
    uint32_t id = 0;
    size_t name_len, n;
    int i, d;

    memset(name, 0, AUDIT_NAME_MAX + 1);
    memset(pk, 0, 32);
    while (len > 0 && is_ws(text[0])) {
        text++;
        len--;
    }
    while (len > 0 && is_ws(text[len - 1]))
        len--;
    end = text + len;
    p1 = memchr(text, '+', len);
    p2 = p1 ? memchr(p1 + 1, '+', (size_t)(end - p1 - 1)) : NULL;
    if (p2 == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "%s: want <name>+<key id>+<key>",
                          what);
    name_len = (size_t)(p1 - text);
    if (!name_valid_n(text, name_len))
        return ig_err_set(err, IG_ERR_INVALID, "%s: bad key name", what);
    if (p2 - p1 - 1 != 8)
        return ig_err_set(err, IG_ERR_INVALID, "%s: key id is not 8 hex digits",
                          what);
    for (i = 0; i < 8; i++) {
        d = ig_hex_digit(p1[1 + i]);
        if (d < 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "%s: key id is not 8 hex digits", what);
        id = id << 4 | (uint32_t)d;
    }
    if (audit_b64_decode(p2 + 1, (size_t)(end - p2 - 1), raw, sizeof(raw),
                         &n) != IG_OK ||
        n != sizeof(raw))
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: key is not base64 of 33 bytes", what);
    if (raw[0] != type)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: not an Ed25519 %s key (type %u, want %u)", what,
                          type == SIG_ALG_ED25519 ? "note" : "cosignature",
                          (unsigned)raw[0], (unsigned)type);
    memcpy(name, text, name_len);
    if (audit_vkey_id(name, type, raw + 1) != id) {
        memset(name, 0, AUDIT_NAME_MAX + 1);
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: key id does not match name and key", what);
    }
    memcpy(pk, raw + 1, 32);
    return IG_OK;
}

enum ig_status
audit_verifier_parse(const char *text, size_t len, struct audit_verifier *out,
                     struct ig_err *err)
{
    memset(out, 0, sizeof(*out));
    if (audit_vkey_parse(text, len, SIG_ALG_ED25519, "verifier key", out->name,
                         out->pk, err) != IG_OK)
        return IG_ERR_INVALID;
    out->key_id = audit_key_id(out->name, out->pk);
    return IG_OK;
}

/* ---- signing ---- */

/* Appends the n strings of parts to out unless st already failed; on any
   failure out is cut back to start (its length then), so a caller's
   buffer never holds half a note. */
static enum ig_status
add_parts(struct ig_buf *out, size_t start, enum ig_status st,
          const char *const parts[], size_t n)
{
    size_t i;

    for (i = 0; st == IG_OK && i < n; i++)
        st = ig_buf_adds(out, parts[i]);
    if (st != IG_OK) {
        out->len = start;
        if (out->data != NULL)
            out->data[start] = '\0';
    }
    return st;
}

enum ig_status
audit_checkpoint_text(const char *origin, uint64_t size,
                      const unsigned char root[32], struct ig_buf *out)
{
    char b64[AUDIT_B64_LEN(32) + 1], num[24];
    const char *const parts[] = {origin, "\n", num, "\n", b64, "\n"};
    size_t olen = strlen(origin);

    if (olen == 0 || olen > AUDIT_NAME_MAX ||
        !audit_text_valid(origin, olen, 0))
        return IG_ERR_INVALID;
    audit_b64_encode(root, 32, b64, sizeof(b64));
    (void)snprintf(num, sizeof(num), "%" PRIu64, size);
    return add_parts(out, out->len, IG_OK, parts,
                     sizeof(parts) / sizeof(parts[0]));
}

enum ig_status
audit_note_sign(const char *text, size_t len, const char *name,
                const struct ig_signing_key *k, struct ig_buf *out)
{
    unsigned char sig[SIG_BYTES];
    char b64[AUDIT_B64_LEN(SIG_BYTES) + 1];
    const char *const parts[] = {"\n", EM_DASH_SP, name, " ", b64, "\n"};
    struct ig_public_key pub;
    size_t start = out->len;
    uint32_t id;

    if (len == 0 || text[len - 1] != '\n' || !audit_text_valid(text, len, 1) ||
        !audit_name_valid(name))
        return IG_ERR_INVALID;
    ig_signing_key_public(k, &pub);
    id = audit_key_id(name, pub.pk);
    sig[0] = (unsigned char)(id >> 24);
    sig[1] = (unsigned char)(id >> 16);
    sig[2] = (unsigned char)(id >> 8);
    sig[3] = (unsigned char)id;
    ig_signing_key_sign(k, sig + 4, (const unsigned char *)text, len);
    audit_b64_encode(sig, sizeof(sig), b64, sizeof(b64));
    return add_parts(out, start, ig_buf_add(out, text, len), parts,
                     sizeof(parts) / sizeof(parts[0]));
}

/* ---- opening ---- */

enum ig_status
audit_sig_line_split(const char *line, size_t len, const char **name,
                     size_t *name_len, const char **b64, size_t *b64_len,
                     size_t *raw_len, struct ig_err *err)
{
    const char *sp;

    if (len < EM_DASH_SP_LEN || memcmp(line, EM_DASH_SP, EM_DASH_SP_LEN) != 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "note: a signature line must start with an em dash");
    line += EM_DASH_SP_LEN;
    len -= EM_DASH_SP_LEN;
    sp = memchr(line, ' ', len);
    if (sp == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "note: malformed signature");
    *name = line;
    *name_len = (size_t)(sp - line);
    *b64 = sp + 1;
    *b64_len = len - *name_len - 1;
    if (!name_valid_n(line, *name_len) ||
        audit_b64_check(*b64, *b64_len, raw_len) != IG_OK || *raw_len < 5)
        return ig_err_set(err, IG_ERR_INVALID, "note: malformed signature");
    return IG_OK;
}

/*
 * One signature line (without its newline). Returns IG_OK and sets
 * *verified when it is v's and verifies; IG_OK for another key's line;
 * IG_ERR_INVALID when malformed, IG_ERR_CRYPTO when v's and bad.
 */
static enum ig_status
check_sig_line(const char *line, size_t len, const char *text, size_t text_len,
               const struct audit_verifier *v, int *verified,
               struct ig_err *err)
{
    unsigned char sig[SIG_BYTES];
    /* Set by the split; initialised for gcc -O3, which cannot see that
       ig_err_set never returns IG_OK (-Wmaybe-uninitialized). */
    const char *name = NULL, *b64 = NULL;
    size_t name_len = 0, b64_len = 0, n;
    uint32_t id;

    if (audit_sig_line_split(line, len, &name, &name_len, &b64, &b64_len, &n,
                             err) != IG_OK)
        return IG_ERR_INVALID;
    if (name_len != strlen(v->name) || memcmp(name, v->name, name_len) != 0)
        return IG_OK;
    if (audit_b64_decode(b64, 8, sig, sizeof(sig), &n) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "note: malformed signature");
    id = (uint32_t)sig[0] << 24 | (uint32_t)sig[1] << 16 |
         (uint32_t)sig[2] << 8 | (uint32_t)sig[3];
    if (id != v->key_id)
        return IG_OK; /* same name, another key: not ours */
    if (audit_b64_decode(b64, b64_len, sig, sizeof(sig), &n) != IG_OK ||
        n != SIG_BYTES ||
        crypto_sign_verify_detached(sig + 4, (const unsigned char *)text,
                                    text_len, v->pk) != 0)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "note: invalid signature for key %s+%08" PRIx32,
                          v->name, v->key_id);
    *verified = 1;
    return IG_OK;
}

enum ig_status
audit_note_split(const char *note, size_t len, size_t *text_len,
                 const char **sigs, size_t *sigs_len, struct ig_err *err)
{
    size_t split;

    *text_len = 0;
    *sigs = NULL;
    *sigs_len = 0;
    if (len > AUDIT_NOTE_MAX)
        return ig_err_set(err, IG_ERR_INVALID, "note: over %d bytes",
                          AUDIT_NOTE_MAX);
    if (!audit_text_valid(note, len, 1))
        return ig_err_set(err, IG_ERR_INVALID,
                          "note: not UTF-8, or a control character");
    for (split = len; split >= 2; split--)
        if (note[split - 1] == '\n' && note[split - 2] == '\n')
            break;
    if (split < 2)
        return ig_err_set(err, IG_ERR_INVALID,
                          "note: no blank line before the signatures");
    split -= 2; /* the first newline of the blank line pair */
    *sigs = note + split + 2;
    *sigs_len = len - split - 2;
    if (*sigs_len == 0 || (*sigs)[*sigs_len - 1] != '\n')
        return ig_err_set(err, IG_ERR_INVALID,
                          "note: signatures must end with a newline");
    *text_len = split + 1;
    return IG_OK;
}

enum ig_status
audit_note_open(const char *note, size_t len, const struct audit_verifier *v,
                size_t *text_len, struct ig_err *err)
{
    const char *sigs, *nl;
    size_t sigs_len, tlen, count = 0;
    enum ig_status st;
    int verified = 0;

    *text_len = 0;
    st = audit_note_split(note, len, &tlen, &sigs, &sigs_len, err);
    if (st != IG_OK)
        return st;
    while (sigs_len > 0) {
        if (++count > IG_AUDIT_NOTE_MAX_SIGS)
            return ig_err_set(err, IG_ERR_INVALID, "note: over %d signatures",
                              IG_AUDIT_NOTE_MAX_SIGS);
        nl = memchr(sigs, '\n', sigs_len);
        st = check_sig_line(sigs, (size_t)(nl - sigs), note, tlen, v, &verified,
                            err);
        if (st != IG_OK)
            return st;
        sigs_len -= (size_t)(nl - sigs) + 1;
        sigs = nl + 1;
    }
    if (!verified)
        return ig_err_set(err, IG_ERR_CRYPTO,
                          "note: no signature by key %s+%08" PRIx32, v->name,
                          v->key_id);
    *text_len = tlen;
    return IG_OK;
}

enum ig_status
audit_checkpoint_parse(const char *text, size_t len,
                       struct audit_checkpoint *out, struct ig_err *err)
{
    const char *line, *what = NULL;
    size_t pos = 0, n, got;

    memset(out, 0, sizeof(*out));
    if (!audit_next_line(text, len, &pos, &line, &n) || n == 0 ||
        n > AUDIT_NAME_MAX || !audit_text_valid(line, n, 0)) {
        what = "bad origin line";
        goto out;
    }
    memcpy(out->origin, line, n);
    if (!audit_next_line(text, len, &pos, &line, &n) ||
        audit_parse_u64(line, n, &out->size) != IG_OK) {
        what = "bad tree size line";
        goto out;
    }
    if (!audit_next_line(text, len, &pos, &line, &n) ||
        n != AUDIT_B64_LEN(32) ||
        audit_b64_decode(line, n, out->root, sizeof(out->root), &got) !=
            IG_OK ||
        got != 32) {
        what = "bad root hash line";
        goto out;
    }
    if (pos != len)
        what = "extension lines are not accepted";
out:
    if (what == NULL)
        return IG_OK;
    memset(out, 0, sizeof(*out));
    return ig_err_set(err, IG_ERR_INVALID, "checkpoint: %s", what);
}

enum ig_status
audit_checkpoint_open(const char *note, size_t len,
                      const struct audit_verifier *v,
                      struct audit_checkpoint *out, struct ig_err *err)
{
    enum ig_status st;
    size_t text_len;

    memset(out, 0, sizeof(*out));
    st = audit_note_open(note, len, v, &text_len, err);
    if (st != IG_OK)
        return st;
    st = audit_checkpoint_parse(note, text_len, out, err);
    if (st != IG_OK)
        return st;
    if (strcmp(out->origin, v->name) != 0) {
        memset(out, 0, sizeof(*out));
        return ig_err_set(err, IG_ERR_INVALID,
                          "checkpoint: origin is not the log name %s", v->name);
    }
    return IG_OK;
}
