/*
 * exec_scrub.h - remove a credential from upstream bytes before they leave
 * the executor (reply, NDJSON stream, outcome, log line).
 *
 * A struct exec_scrub holds every spelling of one credential C and of the
 * header value P+C (P = the credential prefix, e.g. "Bearer "):
 *   - raw;
 *   - base64, standard and URL alphabets, in each of the three alignments
 *     (skip 0, 1 or 2 leading bytes to reach a 3-byte group boundary; the
 *     stable core is the encoding of the whole groups from there), and
 *     where the value ends the encoded data also the full tail, with and
 *     without '=' padding;
 *   - percent-encoded, upper and lower hex, RFC 3986 unreserved kept, and
 *     every byte encoded;
 *   - JSON-escaped: minimal escapes (controls as \b \f \n \r \t or
 *     \u00XX), and ASCII-only (non-ASCII as \uXXXX, UTF-16 with surrogate
 *     pairs; a byte that is not UTF-8 as \u00XX), each with lower and
 *     upper hex, with and without "\/";
 *   - hex, lower and upper.
 * Duplicates and empty spellings are dropped. Besides matching these
 * literally, exec_scrub_bytes decodes three escape languages in the text
 * (JSON backslash escapes, %XX, HTML character references) into views and
 * matches every spelling there too, so mixed forms ("\u0073ecret",
 * "%2b" next to "%2F", "&quot;") are caught; a match in a view removes the
 * source bytes it came from. A fourth view decodes every run of base64 or
 * base64url characters (from each of its first four characters) and
 * matches there, through the escape views too, so base64 of the
 * credential as JSON ("\/", "\u00e9"), percent- or HTML-escaped, or after
 * another prefix (a JWT or cookie payload) is caught: the whole run is
 * removed. One level only: base64 inside base64 is not decoded.
 *
 * Every occurrence becomes EXEC_SCRUB_MARKER; overlapping and adjacent
 * occurrences become one marker. The result is scanned again (a marker
 * next to a fragment can complete a spelling) up to EXEC_SCRUB_PASSES
 * times; text that is still not clean, whose markers would not fit the
 * output's cap, or whose matching exceeds the work bound (a periodic
 * credential in periodic text) is replaced whole by EXEC_SCRUB_WITHHELD
 * (or by nothing, when even that holds a spelling).
 *
 * Limits (say so to operators): a secret the upstream transforms - hashes,
 * encrypts, splits, re-encodes in a way not listed (base32, base64 with
 * line breaks, mixed-case hex, base64 of base64 and other nestings deeper
 * than one view inside another) - is not caught. (P+C
 * form-encoded, '+' for its space, is caught as C alone.) A credential
 * shorter than 16 bytes has base64 cores shorter than itself, so
 * unrelated text matches (and is removed) more often - in the base64
 * view, a whole run of base64 data.
 *
 * Matching cost does not depend on the credential except where the text
 * really holds a spelling's last EXEC_SCRUB_WINDOW bytes: each position's
 * last bytes are hashed with a random per-scrubber multiplier and looked
 * up in a small table; only a hit on a spelling's own ending is compared
 * (sodium_memcmp) against the whole spelling. So timing tells an agent
 * nothing about a guess short of a spelling's whole last 8 bytes, and the
 * work is linear in the text (see exec_scrub_find.c).
 */
#ifndef EXEC_SCRUB_H
#define EXEC_SCRUB_H

#include <jansson.h>
#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_limits.h"

/* What replaces each occurrence, and a whole value that cannot be made
   clean. */
#define EXEC_SCRUB_MARKER "[credential removed]"
#define EXEC_SCRUB_WITHHELD "[withheld: the credential could not be removed]"

/* Scans of one text before it is withheld. */
#define EXEC_SCRUB_PASSES 4
/* Bytes of a position hashed to find candidate matches (at most 8). */
#define EXEC_SCRUB_WINDOW 8

/* exec_scrub_bytes flags. */
/* The text was cut after its last byte (a response kept only up to its
   cap): a spelling may start in its tail and be completed by bytes we
   never saw. The last exec_scrub_reach() bytes are dropped first, always,
   so what remains tells nothing about the credential. */
#define EXEC_SCRUB_CUT 1u
/* Match the listed spellings only, without the decoded views: each layer
   can then be tested alone. Not for production use. */
#define EXEC_SCRUB_LITERAL 2u

struct exec_scrub;

/*
 * Build the spellings of cred (len bytes, 1..IG_EXEC_SCRUB_VALUE_MAX with
 * the prefix) and of prefix + cred (prefix may be NULL or ""; not
 * secret). Everything derived from the credential lives in one ig_secmem
 * block, wiped by exec_scrub_free. The caller keeps cred. *out gets a new
 * scrubber (NULL on failure). IG_ERR_INVALID for an empty credential,
 * IG_ERR_LIMIT past IG_EXEC_SCRUB_VALUE_MAX, IG_ERR_NOMEM. Needs
 * sodium_init. Thread safe; the result is read-only and may be shared by
 * threads.
 */
enum ig_status exec_scrub_new(const unsigned char *cred, size_t len,
                              const char *prefix, struct exec_scrub **out,
                              struct ig_err *err) IG_WUR;

/* Wipe and free s. NULL is fine. */
void exec_scrub_free(struct exec_scrub *s);

/* Number of distinct spellings, and bytes EXEC_SCRUB_CUT drops (a multiple
   of 64 covering the longest spelling in its most stretched form: base64
   read through an escape view). */
size_t exec_scrub_count(const struct exec_scrub *s);
size_t exec_scrub_reach(const struct exec_scrub *s);

/*
 * Append to out the len bytes at in with every spelling replaced (see
 * above). flags: 0, or EXEC_SCRUB_CUT (tests may add EXEC_SCRUB_LITERAL).
 * *found is 1 when anything was removed or the text was withheld, else 0,
 * and then exactly in (less the EXEC_SCRUB_CUT tail) was appended. s may
 * be NULL: in is appended unchanged. in may hold any bytes, NUL included
 * (and may be NULL when len is 0). Errors: IG_ERR_LIMIT when nothing was
 * removed but the text does not fit out's cap, or the withheld marker
 * does not; IG_ERR_NOMEM; out is then as it was. The scrubber's scratch
 * copies are wiped before they are freed. Thread safe for distinct out
 * buffers.
 */
enum ig_status exec_scrub_bytes(const struct exec_scrub *s, const char *in,
                                size_t len, unsigned flags, struct ig_buf *out,
                                int *found) IG_WUR;

/*
 * Scrub a JSON value after decoding: every string value and object key
 * goes through exec_scrub_bytes (so "\u0041"-style escapes in the source
 * text cannot hide a spelling); a number whose canonical text holds a
 * spelling becomes the string EXEC_SCRUB_MARKER; a string that would stop
 * being UTF-8 becomes EXEC_SCRUB_WITHHELD. A key that scrubs to an
 * existing key gets " (2)", " (3)"... appended; if no such name works the
 * member is dropped. Changed strings, numbers and objects are replaced by
 * new values, arrays are changed in place; *v itself may be replaced (the
 * old reference is released), so pass the only handle the caller uses.
 * *found is set as above. s may be NULL (nothing changes). IG_ERR_LIMIT
 * for nesting deeper than IG_JSON_MAX_DEPTH (ig_json_parse never returns
 * that), IG_ERR_NOMEM; after an error the value may be partly scrubbed:
 * do not use it. Not thread safe for one value.
 */
enum ig_status exec_scrub_json(const struct exec_scrub *s, json_t **v,
                               int *found) IG_WUR;

#endif
