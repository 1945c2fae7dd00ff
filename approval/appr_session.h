/*
 * appr_session.h - approver session ids and CSRF tokens.
 *
 * A session id is "igs_" + base64url(32 random bytes); each session has a
 * CSRF token (base64url(32 random bytes)). The sessions themselves are
 * kept by the store (store.h: store_session_*), shared by every PDP
 * replica on one database, with their idle and absolute timeouts; the
 * store keeps only the SHA-256 of an id (appr_session_hash), so a copy
 * of the database hands out no live session.
 *
 * Failed sign-ins are counted by the store too (store_login_*).
 *
 * Pure functions (randomness from libsodium); thread safe.
 */
#ifndef APPR_SESSION_H
#define APPR_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"
#include "ig_limits.h"

#define APPR_SESSION_ID_LEN 47 /* "igs_" + 43 */
#define APPR_CSRF_LEN 43
#define APPR_SESSION_HASH_BYTES 32
#define APPR_APPROVER_MAX IG_ID_MAX /* an approver id, bytes */
#define APPR_SESSIONS_MAX IG_SESSIONS_MAX

_Static_assert(APPR_CSRF_LEN <= IG_SESSION_CSRF_MAX, "CSRF token length");

/* A new session id and CSRF token, NUL-terminated, and the SHA-256 of
   the id (what the store keeps). */
void appr_session_new(char id[APPR_SESSION_ID_LEN + 1],
                      char csrf[APPR_CSRF_LEN + 1],
                      unsigned char hash[APPR_SESSION_HASH_BYTES]);

/* The SHA-256 of a session id: 0, or -1 when id is NULL or not shaped
   as one (then hash is untouched). */
int appr_session_hash(const char *id,
                      unsigned char hash[APPR_SESSION_HASH_BYTES]);

#endif
