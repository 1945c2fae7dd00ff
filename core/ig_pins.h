/*
 * ig_pins.h - pinned MCP tool definitions: the first definition seen of a
 * tool is trusted and pinned; a different one later is hidden from the
 * agents until an admin has read it and accepted it.
 *
 * The state lives in a pin file, an append-only JSON Lines log (mode
 * 0600, created when missing) of events, each one line of RFC 8785
 * canonical JSON:
 *   {"at":T,"event":"pinned","hash":H,"key":K}              first seen
 *   {"at":T,"definition":D,"event":"changed","hash":H,"key":K}
 *                                       a new definition seen, not trusted
 *   {"at":T,"by":WHO,"event":"accepted","hash":H,"key":K}   an admin's yes
 * K is "<alias>/<tool>": 1 to IG_PIN_KEY_MAX bytes of printable ASCII
 * without space (0x21-0x7E), with a '/' neither first nor last. H is
 * "sha256:" and 64 lowercase hex digits: the hash of D (ig_pins_hash).
 * T is RFC 3339 UTC (core/ig_time.h). WHO is 1 to IG_PIN_BY_MAX bytes
 * of the same characters as a key. D is the tool object as the upstream
 * gave it.
 *
 * The state is the fold of the log: per key, the pinned hash (its
 * "pinned" event or its latest "accepted" one) and the pending hashes
 * ("changed", not yet accepted; at most IG_PIN_PENDING_MAX per key), each
 * with its definition and the time it was first seen. Opening the file
 * folds every line and refuses (IG_ERR_INVALID, the message naming the
 * line number) anything that is not exactly such a line or that does not
 * follow from the lines before it: a "changed" whose hash is not that of
 * its definition, or is already pinned or pending; an "accepted" whose
 * hash is not pending for its key (a hand edit); a second "pinned". The
 * one exception: bytes after the last newline are a write torn by a
 * crash; they are ignored, and the next writer truncates them away.
 *
 * Several processes may hold the same file (the executor's gateway
 * checks, `intentgate mcp tools accept` accepts): a writer takes
 * flock(LOCK_EX), reads what others appended, decides, appends one line
 * (O_APPEND), fsyncs and unlocks; a reader takes LOCK_SH. Each call first
 * compares the file's size with what it has read, so an accept made by
 * another process counts at the next call.
 */
#ifndef IG_PINS_H
#define IG_PINS_H

#include <jansson.h>

#include "ig_error.h"
#include "ig_hash.h"
#include "ig_limits.h"

/* Room for a pin hash and its NUL: 72 bytes. */
#define IG_PIN_HASH_SIZE (IG_HASH_STRLEN + 1)

enum ig_pin_state { IG_PIN_NEW = 1, IG_PIN_SAME, IG_PIN_CHANGED };

struct ig_pins;

/*
 * Open (creating with mode 0600 when missing) and fold the pin file at
 * path into *out (free with ig_pins_free). The path's last component must
 * not be a symbolic link; the file must be a regular file that neither
 * group nor others may write (IG_ERR_IO). IG_ERR_INVALID naming the line
 * for a bad line, IG_ERR_LIMIT past IG_PIN_FILE_MAX, IG_ERR_NOMEM. *out
 * is NULL on every error.
 */
enum ig_status ig_pins_open(const char *path, struct ig_pins **out,
                            struct ig_err *err) IG_WUR;

/* Close and free; NULL is fine. No call may be running on p. */
void ig_pins_free(struct ig_pins *p);

/*
 * Hash a tool definition: "sha256:" and the lowercase hex SHA-256 of its
 * RFC 8785 text, into out. Errors as ig_hash_json (IG_ERR_INVALID for a
 * value with no canonical form). Thread safe.
 */
enum ig_status ig_pins_hash(const json_t *def, char out[IG_PIN_HASH_SIZE],
                            struct ig_err *err) IG_WUR;

/*
 * The gateway's check of the definition def (whose ig_pins_hash is hash)
 * of the tool key, in *state:
 *   - key never seen: append "pinned", IG_PIN_NEW;
 *   - hash is key's pinned hash: IG_PIN_SAME, nothing written;
 *   - else IG_PIN_CHANGED: "changed" is appended the first time this
 *     (key, hash) is seen and not again while it is pending; a key that
 *     already has IG_PIN_PENDING_MAX pending changes gets no more (the
 *     tool stays hidden all the same).
 * def may be NULL only when no "changed" is to be written; when one is,
 * def must be an object whose hash is hash, at most
 * IG_PIN_DEFINITION_MAX_BYTES of canonical JSON (IG_ERR_LIMIT), and
 * readable back by ig_json_parse (depth). IG_ERR_INVALID for a bad key,
 * hash or def, IG_ERR_IO when the file cannot be read or written,
 * IG_ERR_INVALID when another process appended a bad line (p is then
 * unusable). On any error *state is 0: the caller hides the tool. Thread
 * safe (a mutex).
 */
enum ig_status ig_pins_check(struct ig_pins *p, const char *key,
                             const char *hash, const json_t *def,
                             enum ig_pin_state *state,
                             struct ig_err *err) IG_WUR;

/*
 * The pending changes, as a new array (json_decref it) in *out of
 * {"key", "pinned", "hash", "definition", "seen_at"} objects, by key
 * (byte order), then in the order they were seen. Reads what other
 * processes appended first. Errors as ig_pins_check; *out is NULL then.
 * Thread safe.
 */
enum ig_status ig_pins_pending(struct ig_pins *p, json_t **out,
                               struct ig_err *err) IG_WUR;

/*
 * Accept hash for key on behalf of by (an admin's login name): hash must
 * be pending for key, else IG_ERR_NOTFOUND with err naming what is
 * pending for key (or that nothing is). Appends "accepted": hash becomes
 * key's pinned hash; the key's other pending changes stay pending.
 * IG_ERR_INVALID for a bad key, hash or by; I/O errors as ig_pins_check.
 * Thread safe.
 */
enum ig_status ig_pins_accept(struct ig_pins *p, const char *key,
                              const char *hash, const char *by,
                              struct ig_err *err) IG_WUR;

/* 1 when key is a valid pin key (see the top of this file), else 0. */
int ig_pins_key_valid(const char *key);

#endif
