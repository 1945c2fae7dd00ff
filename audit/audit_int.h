/*
 * audit_int.h - text helpers shared by the audit module's parsers (notes,
 * checkpoints, tlog-proofs). Private to audit/.
 */
#ifndef AUDIT_INT_H
#define AUDIT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

/* Characters of standard, padded base64 for n bytes. */
#define AUDIT_B64_LEN(n) ((((n) + 2) / 3) * 4)

/*
 * Decode exactly len characters of standard padded base64 (RFC 4648
 * section 4) into out (at most cap bytes). Refuses anything outside the
 * alphabet, misplaced padding, non-zero unused bits, and output over cap.
 * IG_OK or IG_ERR_INVALID.
 */
enum ig_status audit_b64_decode(const char *s, size_t len, unsigned char *out,
                                size_t cap, size_t *outlen) IG_WUR;

/* The same checks without keeping the bytes: IG_OK and the decoded length
   for valid base64 of any length. */
enum ig_status audit_b64_check(const char *s, size_t len,
                               size_t *outlen) IG_WUR;

/* Encode n bytes into out (cap >= AUDIT_B64_LEN(n) + 1), NUL-terminated. */
void audit_b64_encode(const void *in, size_t n, char *out, size_t cap);

/* A decimal without sign or leading zeros ("0" alone is fine) that fits in
   64 bits. IG_OK or IG_ERR_INVALID. */
enum ig_status audit_parse_u64(const char *s, size_t len, uint64_t *out) IG_WUR;

/*
 * 1 when s[0..len) is valid UTF-8 (no overlongs, surrogates or code points
 * above U+10FFFF) with no ASCII control character other than newline (and
 * none at all when allow_nl is 0).
 */
int audit_text_valid(const char *s, size_t len, int allow_nl);

/* The line at *pos in s (len bytes) without its newline, into *line and
 *n; advances *pos past it. 0 when no whole line is left. */
int audit_next_line(const char *s, size_t len, size_t *pos, const char **line,
                    size_t *n);

/* Signed-note verifier keys of any type (audit_note.c): the key id
   SHA-256(name || "\n" || type || pk)[:4]; the vkey
   "<name>+<hex id>+<base64(type || pk)>" written and parsed. The parser
   ignores surrounding white space, wants exactly `type` and the id that
   matches; its messages start with `what`. IG_ERR_INVALID (name and pk
   zeroed). */
uint32_t audit_vkey_id(const char *name, unsigned char type,
                       const unsigned char pk[32]);
enum ig_status audit_vkey_format(const char *name, unsigned char type,
                                 const unsigned char pk[32], char *out,
                                 size_t cap) IG_WUR;
enum ig_status audit_vkey_parse(const char *text, size_t len,
                                unsigned char type, const char *what,
                                char *name, unsigned char pk[32],
                                struct ig_err *err) IG_WUR;

/*
 * Split a signed note (audit_note.c): the text is note[0 .. *text_len)
 * (with its final newline), the signature lines sigs[0 .. *sigs_len)
 * (each ending in a newline; at least one). Checks the size (at most
 * AUDIT_NOTE_MAX), UTF-8 without control characters but newline, and the
 * blank line. IG_ERR_INVALID with err.
 */
enum ig_status audit_note_split(const char *note, size_t len, size_t *text_len,
                                const char **sigs, size_t *sigs_len,
                                struct ig_err *err) IG_WUR;

/*
 * One signature line "— <name> <base64>" (without its newline): *name and
 * *b64 point into line; *raw_len is the base64's decoded length (at least
 * 5: a key id and something). IG_ERR_INVALID with err when malformed.
 */
enum ig_status audit_sig_line_split(const char *line, size_t len,
                                    const char **name, size_t *name_len,
                                    const char **b64, size_t *b64_len,
                                    size_t *raw_len, struct ig_err *err) IG_WUR;

#endif
