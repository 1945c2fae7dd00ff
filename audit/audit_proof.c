/*
 * audit_proof.c - the C2SP tlog-proof text format (c2sp.org/tlog-proof):
 * an inclusion proof and the signed checkpoint it is for, in one file.
 *
 *   c2sp.org/tlog-proof@v1
 *   [extra <base64>]          optional, unauthenticated; checked, skipped
 *   index <decimal>
 *   <base64 hash>             zero or more, the leaf's sibling first
 *   <empty line>
 *   <signed checkpoint note>  verbatim, to the end
 *
 * Parsing is strict (no leading zeros, exactly 44 base64 characters per
 * hash, at most AUDIT_PROOF_MAX hashes) and verifies nothing: the caller
 * opens the checkpoint with audit_checkpoint_open and checks the proof
 * with audit_verify_inclusion against it.
 */
#include "audit_note.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "audit_int.h"

#define PROOF_HEADER "c2sp.org/tlog-proof@v1"

enum ig_status
audit_proof_format(uint64_t index, const unsigned char proof[][32], size_t n,
                   const char *checkpoint_note, struct ig_buf *out)
{
    char line[AUDIT_B64_LEN(32) + 2];
    char head[sizeof(PROOF_HEADER) + 32];
    size_t start = out->len, i;
    enum ig_status st;

    if (n > AUDIT_PROOF_MAX || checkpoint_note[0] == '\0')
        return IG_ERR_INVALID;
    (void)snprintf(head, sizeof(head), PROOF_HEADER "\nindex %" PRIu64 "\n",
                   index);
    st = ig_buf_adds(out, head);
    for (i = 0; i < n && st == IG_OK; i++) {
        audit_b64_encode(proof[i], 32, line, sizeof(line) - 1);
        st = ig_buf_adds(out, line);
        if (st == IG_OK)
            st = ig_buf_addc(out, '\n');
    }
    if (st == IG_OK)
        st = ig_buf_addc(out, '\n');
    if (st == IG_OK)
        st = ig_buf_adds(out, checkpoint_note);
    if (st != IG_OK) {
        out->len = start;
        if (out->data != NULL)
            out->data[start] = '\0';
    }
    return st;
}

static int
has_prefix(const char *line, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);

    return n >= p && memcmp(line, prefix, p) == 0;
}

/* The header, optional extra line and index line; NULL or what is wrong. */
static const char *
parse_head(const char *text, size_t len, size_t *pos, uint64_t *index)
{
    const char *line;
    size_t ln, got;

    if (!audit_next_line(text, len, pos, &line, &ln) ||
        ln != strlen(PROOF_HEADER) || memcmp(line, PROOF_HEADER, ln) != 0)
        return "first line is not " PROOF_HEADER;
    if (!audit_next_line(text, len, pos, &line, &ln))
        return "no index line";
    if (has_prefix(line, ln, "extra ")) {
        if (audit_b64_check(line + 6, ln - 6, &got) != IG_OK)
            return "extra data is not base64";
        if (!audit_next_line(text, len, pos, &line, &ln))
            return "no index line";
    }
    if (!has_prefix(line, ln, "index ") ||
        audit_parse_u64(line + 6, ln - 6, index) != IG_OK)
        return "bad index line";
    return NULL;
}

enum ig_status
audit_proof_parse(const char *text, size_t len, uint64_t *index,
                  unsigned char proof[][32], size_t *n, const char **note,
                  size_t *note_len, struct ig_err *err)
{
    const char *line, *what;
    size_t pos = 0, ln, got, count = 0;

    *index = 0;
    *n = 0;
    *note = NULL;
    *note_len = 0;
    if (len > AUDIT_NOTE_MAX + 8192)
        return ig_err_set(err, IG_ERR_INVALID, "tlog-proof: too large");
    what = parse_head(text, len, &pos, index);
    while (what == NULL) {
        if (!audit_next_line(text, len, &pos, &line, &ln))
            what = "no blank line before the checkpoint";
        else if (ln == 0)
            break;
        else if (count == AUDIT_PROOF_MAX)
            what = "too many hashes";
        else if (ln != AUDIT_B64_LEN(32) ||
                 audit_b64_decode(line, ln, proof[count], 32, &got) != IG_OK ||
                 got != 32)
            what = "a hash line is not base64 of 32 bytes";
        else
            count++;
    }
    if (what == NULL && pos == len)
        what = "no checkpoint";
    if (what != NULL) {
        *index = 0;
        return ig_err_set(err, IG_ERR_INVALID, "tlog-proof: %s", what);
    }
    *n = count;
    *note = text + pos;
    *note_len = len - pos;
    return IG_OK;
}
