/*
 * pdp_login.c - approver logins for the web page and the API.
 *
 * A login is refused before any hashing when the approver id has had
 * login_max_failures failures in the window or the client address ten
 * times that (many people may share an address behind a proxy), and when
 * more than LOGIN_HASHING password checks are already running (argon2id with
 * libsodium's interactive limits costs tens of milliseconds and 64 MiB,
 * so the HTTP threads are never all tied up by it). An unknown id is
 * checked against a dummy hash, so a wrong id and a wrong password cost
 * the same and read the same. Every failure is an audit event.
 */
#include "pdp_approval.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "appr_password.h"
#include "appr_session.h"
#include "ig_limits.h"
#include "pdp_approval_int.h"
#include "pdp_int.h"

#define LOGIN_HASHING IG_LOGIN_HASHING_MAX

static char dummy[APPR_HASH_MAX];
static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;

static void
make_dummy(void)
{
    char pw[33];
    unsigned char raw[16];

    randombytes_buf(raw, sizeof(raw));
    sodium_bin2hex(pw, sizeof(pw), raw, sizeof(raw));
    if (appr_password_hash(pw, strlen(pw), dummy) != 0)
        dummy[0] = '\0'; /* verify then fails closed */
    sodium_memzero(pw, sizeof(pw));
}

/* A valid argon2id hash of a random password nobody knows. */
static const char *
dummy_hash(void)
{
    (void)pthread_once(&dummy_once, make_dummy);
    return dummy;
}

static void
audit_failure(struct pdp_server *s, const char *id, const char *client,
              const char *code)
{
    char when[IG_TIME_STRLEN + 1];

    if (ig_time_format(ig_time_now(), when) != IG_OK)
        when[0] = '\0';
    pdp_approval_audit(s, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type",
                                    "approver.login_failed", "time", when,
                                    "approver", id, "client", client, "code",
                                    code));
}

static void
fail(struct pdp_login *out, const char *code, unsigned int status)
{
    out->code = code;
    out->http_status = status;
    out->approver = NULL;
}

void
pdp_approver_login(struct pdp_server *s, const char *id, const char *password,
                   const char *client, struct pdp_login *out)
{
    struct pdp_approvals *a = s->approvals;
    const struct pdp_approver *who;
    char key[80];
    int64_t now = ig_time_now();
    size_t plen;
    int ok;

    memset(out, 0, sizeof(*out));
    if (id == NULL || password == NULL || id[0] == '\0' ||
        strlen(id) > APPR_APPROVER_MAX) {
        fail(out, "LOGIN_FAILED", 401);
        audit_failure(s, id != NULL ? id : "", client ? client : "",
                      "LOGIN_FAILED");
        return;
    }
    (void)snprintf(key, sizeof(key), "ip:%s", client != NULL ? client : "");
    if (!appr_limiter_allow(a->limiter, id, now) ||
        !appr_limiter_allow(a->ip_limiter, key, now)) {
        fail(out, "LOGIN_RATE_LIMITED", 429);
        audit_failure(s, id, client ? client : "", "LOGIN_RATE_LIMITED");
        return;
    }
    if (atomic_fetch_add(&a->hashing, 1) >= LOGIN_HASHING) {
        atomic_fetch_sub(&a->hashing, 1);
        fail(out, "LOGIN_RATE_LIMITED", 429);
        audit_failure(s, id, client ? client : "", "LOGIN_BUSY");
        return;
    }
    who = pdp_config_approver(s->cfg, id);
    plen = strnlen(password, APPR_PASSWORD_MAX + 1);
    ok = appr_password_verify(who != NULL ? who->password_hash : dummy_hash(),
                              password, plen) &&
         who != NULL;
    atomic_fetch_sub(&a->hashing, 1);
    if (!ok) {
        appr_limiter_fail(a->limiter, id, now);
        appr_limiter_fail(a->ip_limiter, key, now);
        fail(out, "LOGIN_FAILED", 401);
        audit_failure(s, id, client ? client : "", "LOGIN_FAILED");
        return;
    }
    appr_limiter_clear(a->limiter, id);
    if (appr_session_create(a->sessions, who->id, now, out->session, out->csrf,
                            &out->expires_at) != IG_OK) {
        fail(out, "INTERNAL", 500);
        return;
    }
    out->http_status = 200;
    out->approver = who;
}

const struct pdp_approver *
pdp_approver_session(struct pdp_server *s, const char *session,
                     char csrf[PDP_CSRF_LEN + 1])
{
    char id[APPR_APPROVER_MAX + 1];

    if (session == NULL ||
        appr_session_lookup(s->approvals->sessions, session, ig_time_now(), id,
                            csrf) != IG_OK)
        return NULL;
    /* An approver removed from the config loses its sessions at restart;
       this lookup also refuses one that is no longer configured. */
    return pdp_config_approver(s->cfg, id);
}

void
pdp_approver_logout(struct pdp_server *s, const char *session)
{
    appr_session_end(s->approvals->sessions, session);
}
