/*
 * audit_note.h - C2SP signed notes and tlog checkpoints, with Ed25519.
 *
 * A checkpoint (c2sp.org/tlog-checkpoint) is the text
 *
 *   <origin>\n<tree size, decimal>\n<base64 root hash>\n
 *
 * signed as a signed note (c2sp.org/signed-note): the text, a blank line,
 * then "— <key name> <base64(4-byte key id || 64-byte signature)>\n" (an
 * em dash, U+2014). The key id is the first 4 bytes of
 * SHA-256(key name || 0x0A || 0x01 || public key). A verifier key is
 * published in the Go sumdb/note form
 *   <name>+<8 hex digits key id>+<base64(0x01 || public key)>.
 * The origin and the key name are the same configured log name.
 */
#ifndef AUDIT_NOTE_H
#define AUDIT_NOTE_H

#include <stddef.h>
#include <stdint.h>

#include "audit_tree.h"
#include "ig_buf.h"
#include "ig_error.h"
#include "ig_key.h"
#include "ig_limits.h"

#define AUDIT_NAME_MAX IG_AUDIT_NAME_MAX /* log name / key name, bytes */
#define AUDIT_NOTE_MAX IG_AUDIT_NOTE_MAX /* a whole signed note, bytes */

struct audit_verifier {
    char name[AUDIT_NAME_MAX + 1];
    uint32_t key_id;
    unsigned char pk[32];
};

/* 1 when name is a valid key name (non-empty UTF-8, no spaces, no '+',
   no control characters, at most AUDIT_NAME_MAX bytes). */
int audit_name_valid(const char *name);

uint32_t audit_key_id(const char *name, const unsigned char pk[32]);

/* Fill v from a key name and a raw Ed25519 public key (the key id is
   computed). IG_ERR_INVALID for a bad name. */
enum ig_status audit_verifier_init(struct audit_verifier *v, const char *name,
                                   const unsigned char pk[32]) IG_WUR;

/* "<name>+<hex id>+<base64(0x01||pk)>" into out. IG_ERR_INVALID. */
enum ig_status audit_verifier_format(const char *name,
                                     const unsigned char pk[32], char *out,
                                     size_t cap) IG_WUR;
/* Parse a verifier key (surrounding white space ignored; the key id's hex
   in either case); checks the key id matches the name and key, and the
   type byte is 0x01 (Ed25519). IG_ERR_INVALID with err; *out zeroed. */
enum ig_status audit_verifier_parse(const char *text, size_t len,
                                    struct audit_verifier *out,
                                    struct ig_err *err) IG_WUR;

/* Append the checkpoint text for (origin, size, root) to out.
   IG_ERR_INVALID for an empty origin, over AUDIT_NAME_MAX bytes, not
   UTF-8 or with a control character; ig_buf's errors (out unchanged). */
enum ig_status audit_checkpoint_text(const char *origin, uint64_t size,
                                     const unsigned char root[32],
                                     struct ig_buf *out) IG_WUR;

/* Sign text (a checkpoint) as name with k: appends the whole signed note
   to out. IG_ERR_INVALID for text that is empty, does not end in a
   newline, is not UTF-8 or has a control character other than newline,
   or a bad name; ig_buf's errors (out unchanged). Thread safe. */
enum ig_status audit_note_sign(const char *text, size_t len, const char *name,
                               const struct ig_signing_key *k,
                               struct ig_buf *out) IG_WUR;

struct audit_checkpoint {
    char origin[AUDIT_NAME_MAX + 1];
    uint64_t size;
    unsigned char root[32];
};

/*
 * Open any signed note (not only a checkpoint) with v: on IG_OK the signed
 * text is note[0 .. *text_len) (ending in its newline). The whole note is
 * checked: at most AUDIT_NOTE_MAX bytes, UTF-8 with no control character
 * but newline, a blank line, then at most IG_AUDIT_NOTE_MAX_SIGS
 * well-formed "— name base64" lines. Lines of other keys (another name or
 * key id) are ignored; every line of v's must verify, and there must be
 * one. IG_ERR_INVALID (malformed), IG_ERR_CRYPTO (none by v, or a bad
 * one), with err. Thread safe.
 */
enum ig_status audit_note_open(const char *note, size_t len,
                               const struct audit_verifier *v, size_t *text_len,
                               struct ig_err *err) IG_WUR;

/*
 * Parse checkpoint text (no signatures; the text a note signs) without
 * verifying anything: exactly "<origin>\n<size>\n<base64 root>\n", the
 * size without leading zeros, the root 32 bytes; extension lines are
 * refused. IG_ERR_INVALID with err; *out is zeroed on failure.
 */
enum ig_status audit_checkpoint_parse(const char *text, size_t len,
                                      struct audit_checkpoint *out,
                                      struct ig_err *err) IG_WUR;

/*
 * Open a signed checkpoint: the note must carry a valid signature by v (a
 * line with v's name and key id whose signature verifies over the text);
 * lines by other keys are ignored; then the text is parsed and its origin
 * must equal v's name. IG_ERR_CRYPTO (no or bad signature),
 * IG_ERR_INVALID (malformed) with err naming what.
 */
enum ig_status audit_checkpoint_open(const char *note, size_t len,
                                     const struct audit_verifier *v,
                                     struct audit_checkpoint *out,
                                     struct ig_err *err) IG_WUR;

/*
 * C2SP tlog-proof text for an inclusion proof:
 *   c2sp.org/tlog-proof@v1\nindex <n>\n<base64 hash>\n...\n\n<checkpoint>
 * (the signed checkpoint of the tree the proof is for follows the blank
 * line). audit_proof_parse reads it back: the hashes, the index and the
 * checkpoint note text (pointing into text). It verifies nothing (open
 * the note with audit_checkpoint_open, then audit_verify_inclusion), is
 * strict (no leading zeros, 44-character hashes, at most AUDIT_PROOF_MAX
 * of them, a non-empty note), skips a valid "extra <base64>" line, and
 * on IG_ERR_INVALID leaves the outputs zero/NULL. proof has room for
 * AUDIT_PROOF_MAX hashes. audit_proof_format: IG_ERR_INVALID for n over
 * AUDIT_PROOF_MAX or an empty note; ig_buf's errors (out unchanged).
 */
enum ig_status audit_proof_format(uint64_t index,
                                  const unsigned char proof[][32], size_t n,
                                  const char *checkpoint_note,
                                  struct ig_buf *out) IG_WUR;
enum ig_status audit_proof_parse(const char *text, size_t len, uint64_t *index,
                                 unsigned char proof[][32], size_t *n,
                                 const char **note, size_t *note_len,
                                 struct ig_err *err) IG_WUR;

#endif
