/*
 * appr_session.h - approver sessions, in memory.
 *
 * A session id is "igs_" + base64url(32 random bytes); only its SHA-256 is
 * kept, so a memory dump does not hand out live sessions. Each session has
 * a CSRF token (base64url(32 random bytes)), an idle timeout and an
 * absolute lifetime; both are enforced on every lookup. Sessions do not
 * survive a restart (approvers log in again).
 *
 * Failed sign-ins are counted by appr_limiter.h.
 *
 * Thread safe. Capacity is bounded (APPR_SESSIONS_MAX): when full, the
 * least recently used session is dropped.
 */
#ifndef APPR_SESSION_H
#define APPR_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"
#include "ig_limits.h"

#define APPR_SESSION_ID_LEN 47 /* "igs_" + 43 */
#define APPR_CSRF_LEN 43
#define APPR_APPROVER_MAX IG_ID_MAX /* an approver id, bytes */
#define APPR_SESSIONS_MAX IG_SESSIONS_MAX

struct appr_sessions;

/* idle and max in seconds. NULL on out of memory. */
struct appr_sessions *appr_sessions_new(int64_t idle, int64_t max);
void appr_sessions_free(struct appr_sessions *s);

/* A new session for approver at now: id and csrf written NUL-terminated.
   IG_ERR_NOMEM. */
enum ig_status appr_session_create(struct appr_sessions *s,
                                   const char *approver, int64_t now,
                                   char id[APPR_SESSION_ID_LEN + 1],
                                   char csrf[APPR_CSRF_LEN + 1],
                                   int64_t *expires_at) IG_WUR;

/* The approver of live session id at now (its idle timer restarts), copied
   into approver; csrf (may be NULL) gets its token. IG_ERR_NOTFOUND for an
   unknown, idle or expired session (which is then forgotten). */
enum ig_status appr_session_lookup(struct appr_sessions *s, const char *id,
                                   int64_t now,
                                   char approver[APPR_APPROVER_MAX + 1],
                                   char csrf[APPR_CSRF_LEN + 1]) IG_WUR;

/* Forget session id (logout). Unknown ids are fine. */
void appr_session_end(struct appr_sessions *s, const char *id);

/* Forget every session of approver (e.g. removed from config). */
void appr_session_end_all(struct appr_sessions *s, const char *approver);

#endif
