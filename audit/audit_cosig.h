/*
 * audit_cosig.h - witness cosignatures (c2sp.org/tlog-cosignature,
 * cosignature/v1 with Ed25519, type 0x04) and the body of a tlog-witness
 * add-checkpoint request (c2sp.org/tlog-witness).
 *
 * A cosignature is one more signature line on a checkpoint note:
 *
 *   — <witness name> <base64(key id[4] || timestamp u64 BE[8] || sig[64])>
 *
 * The key id is SHA-256(name || 0x0A || 0x04 || public key)[:4] (0x04, not
 * the log's 0x01: one key has two ids). The signature is Ed25519 over
 *
 *   "cosignature/v1\ntime <timestamp, decimal>\n" || the note's text
 *
 * where the text is the checkpoint (origin, size, root, with its final
 * newline) and no signature line. A witness's verifier key is a vkey
 * "<name>+<hex key id>+<base64(0x04 || public key)>".
 *
 * The request a log sends a witness (POST <prefix>/add-checkpoint):
 *
 *   old <size the witness last cosigned, decimal; 0 when none>\n
 *   <base64 hash>\n  ... 0 to AUDIT_WITNESS_PROOF_MAX lines: the RFC 6962
 *                        consistency proof from old to the new size
 *   \n
 *   <the signed checkpoint note>
 *
 * A 409 answer's body (Content-Type text/x.tlog.size) is "<size>\n": the
 * size the witness has, to resend from.
 */
#ifndef AUDIT_COSIG_H
#define AUDIT_COSIG_H

#include <stddef.h>
#include <stdint.h>

#include "audit_note.h"
#include "audit_tree.h"
#include "ig_buf.h"
#include "ig_error.h"
#include "ig_key.h"

#define AUDIT_COSIG_TYPE 0x04
#define AUDIT_COSIG_BYTES (4 + 8 + 64) /* key id, timestamp, signature */
#define AUDIT_COSIG_TS_MAX INT64_MAX   /* 2^63 - 1, the spec's limit */
/* One cosignature line with its newline: "— " (4 bytes), the name, a
   space, 104 base64 characters, "\n". */
#define AUDIT_COSIG_LINE_MAX (4 + AUDIT_NAME_MAX + 1 + 104 + 1)
/* Proof lines in a request: the spec's 63 (a consistency proof between
   trees below 2^63 leaves never needs more). */
#define AUDIT_WITNESS_PROOF_MAX 63
/* A whole add-checkpoint body: the old line, the proof, a note. */
#define AUDIT_WITNESS_REQ_MAX                                                  \
    (32 + AUDIT_WITNESS_PROOF_MAX * 45 + 1 + AUDIT_NOTE_MAX)

/* A witness's public key, as a verifier of its cosignatures. */
struct audit_witness_key {
    char name[AUDIT_NAME_MAX + 1];
    uint32_t key_id; /* SHA-256(name || "\n" || 0x04 || pk)[:4] */
    unsigned char pk[32];
};

uint32_t audit_cosig_key_id(const char *name, const unsigned char pk[32]);

/* Fill w from a name and a raw Ed25519 public key. IG_ERR_INVALID for a
   bad name (audit_name_valid). */
enum ig_status audit_witness_key_init(struct audit_witness_key *w,
                                      const char *name,
                                      const unsigned char pk[32]) IG_WUR;

/* "<name>+<hex key id>+<base64(0x04 || pk)>" into out (NUL-terminated).
   IG_ERR_INVALID for a bad name or too small a buffer. */
enum ig_status audit_witness_key_format(const char *name,
                                        const unsigned char pk[32], char *out,
                                        size_t cap) IG_WUR;

/* Parse a witness vkey (surrounding white space ignored): the type byte
   must be 0x04 and the key id must match the name and key. IG_ERR_INVALID
   with err naming what is wrong; *out zeroed. */
enum ig_status audit_witness_key_parse(const char *text, size_t len,
                                       struct audit_witness_key *out,
                                       struct ig_err *err) IG_WUR;

/* Cosign checkpoint text (text[0..len), no signature lines, ending in a
   newline) as name with k at time ts (1 <= ts <= AUDIT_COSIG_TS_MAX):
   appends the line "— <name> <base64>\n" to out. IG_ERR_INVALID for a bad
   text, name or ts; ig_buf's errors (out unchanged). Thread safe. */
enum ig_status audit_cosig_sign(const char *text, size_t len, const char *name,
                                const struct ig_signing_key *k, uint64_t ts,
                                struct ig_buf *out) IG_WUR;

/* The message a cosignature at time ts signs: "cosignature/v1\ntime
   <ts>\n" and the text, appended to out. ig_buf's errors. */
enum ig_status audit_cosig_message(uint64_t ts, const char *text, size_t len,
                                   struct ig_buf *out) IG_WUR;

/*
 * What a cosignature line (without its newline) says, before any key is
 * trusted: its name (pointing into line), key id and timestamp. IG_OK for
 * a well-formed line of 76 bytes; IG_ERR_INVALID otherwise (another
 * length: not a cosignature/v1 Ed25519 line).
 */
enum ig_status audit_cosig_line_info(const char *line, size_t len,
                                     const char **name, size_t *name_len,
                                     uint32_t *key_id, uint64_t *ts) IG_WUR;

/*
 * Check one signature line (line[0..len), without its newline) as w's
 * cosignature of text[0..text_len). IG_OK with *ts its timestamp: it is
 * w's (name and key id) and verifies. IG_ERR_NOTFOUND: a well-formed line
 * of another key. IG_ERR_CRYPTO: w's name and key id but not a valid
 * cosignature (wrong length, timestamp 0 - tlog-witness forbids it - or
 * over 2^63 - 1, bad signature).
 * IG_ERR_INVALID: not a signature line. err says which.
 */
enum ig_status audit_cosig_verify_line(const char *line, size_t len,
                                       const char *text, size_t text_len,
                                       const struct audit_witness_key *w,
                                       uint64_t *ts, struct ig_err *err) IG_WUR;

/*
 * w's cosignature in a whole signed note (text, blank line, signature
 * lines - the log's and any witnesses'). IG_OK with *ts: every line by w
 * verifies and there is at least one (with several, *ts is the latest).
 * IG_ERR_NOTFOUND: no line by w. IG_ERR_CRYPTO: a line by w does not
 * verify. IG_ERR_INVALID: not a well-formed note (as audit_note_open).
 */
enum ig_status audit_cosig_find(const char *note, size_t len,
                                const struct audit_witness_key *w, uint64_t *ts,
                                struct ig_err *err) IG_WUR;

/*
 * A witness's 200 answer (body[0..len): one or more signature lines) to a
 * request for text[0..text_len): copies into line (cap bytes; at least
 * AUDIT_COSIG_LINE_MAX) the first line that is w's valid cosignature,
 * with its newline, NUL-terminated, and sets *ts. Lines of other keys are
 * skipped. IG_ERR_NOTFOUND: no line by w. IG_ERR_CRYPTO: w's line fails.
 * IG_ERR_INVALID: over AUDIT_NOTE_MAX bytes, not lines of "— name b64",
 * or not ending in a newline.
 */
enum ig_status audit_cosig_pick(const char *body, size_t len, const char *text,
                                size_t text_len,
                                const struct audit_witness_key *w, char *line,
                                size_t cap, uint64_t *ts,
                                struct ig_err *err) IG_WUR;

/* An add-checkpoint request, parsed. note points into the body. */
struct audit_witness_req {
    uint64_t old;
    unsigned char proof[AUDIT_WITNESS_PROOF_MAX][AUDIT_HASH_BYTES];
    size_t nproof;
    const char *note;
    size_t note_len;
};

/* Append the request body to out. IG_ERR_INVALID for n over
   AUDIT_WITNESS_PROOF_MAX or an empty note; ig_buf's errors (out
   unchanged). */
enum ig_status audit_witness_req_format(uint64_t old,
                                        const unsigned char proof[][32],
                                        size_t n, const char *note,
                                        size_t note_len,
                                        struct ig_buf *out) IG_WUR;

/*
 * Parse a request body strictly: "old N\n" (no leading zeros), then up to
 * AUDIT_WITNESS_PROOF_MAX lines of exactly 44 base64 characters (32
 * bytes), a blank line, and a non-empty note (not checked here: open it
 * with the log's key). Nothing may come before "old". IG_ERR_INVALID with
 * err; *out zeroed.
 */
enum ig_status audit_witness_req_parse(const char *body, size_t len,
                                       struct audit_witness_req *out,
                                       struct ig_err *err) IG_WUR;

/* "<size>\n" into out (cap >= 22). */
void audit_witness_size_format(uint64_t size, char *out, size_t cap);

/* A 409 answer's body: exactly "<size>\n" (no leading zeros).
   IG_ERR_INVALID otherwise. */
enum ig_status audit_witness_size_parse(const char *body, size_t len,
                                        uint64_t *size) IG_WUR;

#endif
