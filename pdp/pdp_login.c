/*
 * pdp_login.c - approver logins for the web page and the API.
 *
 * The rules, in the order they are applied:
 *
 *  1. An approver id backs off after login_max_failures failures of its
 *     own (store.h store_login_*: 5 s, doubling, at most login_window;
 *     counted in the store, shared by every replica, on the wall clock in
 *     milliseconds): a try
 *     during the wait is answered 429 with Retry-After before any
 *     password hashing. Unknown ids are counted the same way, as a kind
 *     of key of their own, so they read the same as real ones and a spray
 *     of made-up ids cannot push a real id's count out.
 *  2. A client holding a device token for that id - handed out at its
 *     last successful sign-in as that id (appr_device.h) - is counted
 *     apart, under its device: someone who knows an approver's id can
 *     keep that id backing off for everyone else, but not for the
 *     browser the approver signed in with before. A stolen device token
 *     is no password; it gets its own login_max_failures and backoff. It
 *     is counted under a hash of the device's id, never the id.
 *  3. A client address (an IPv6 /64; behind trusted_proxies the
 *     forwarded client) with IG_LOGIN_ADDR_FACTOR x login_max_failures
 *     failures is slowed, never refused: each login from it waits
 *     IG_LOGIN_ADDR_DELAY_STEP_MS per failure past that, at most
 *     IG_LOGIN_ADDR_DELAY_MAX_MS, in a suspended connection
 *     (pdp_delay.c), then goes on. So a correct password for an id with
 *     no failures of its own is never refused for other ids' failures
 *     from the same address. Logins with a device token are not slowed.
 *  4. At most IG_LOGIN_HASHING_MAX password checks run at once (argon2id
 *     with libsodium's interactive limits costs tens of milliseconds and
 *     64 MiB): a login finding them all taken waits in a suspended
 *     connection and retries, and only after IG_LOGIN_BUSY_WAIT_MAX_MS
 *     gets 429 with Retry-After.
 *  5. An unknown id is checked against a dummy hash, so a wrong id and a
 *     wrong password cost the same and read the same.
 *
 * A failure counts against the key of rule 1 or 2 and the address; a
 * success clears only its own key (a device's success leaves the id's
 * backoff to whoever caused it). Every refusal is counted for an
 * aggregated login.refused audit event (pdp_refusals.h): never a write
 * on an HTTP thread, never one leaf per failure.
 *
 * Counts and sessions live in the store: a store that cannot be read or
 * written refuses the login (503 STORE_UNAVAILABLE), never lets it past
 * an uncounted limit.
 */
#include "pdp_approval.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_device.h"
#include "appr_password.h"
#include "appr_session.h"
#include "ig_hash.h"
#include "ig_limits.h"
#include "pdp_approval_int.h"
#include "pdp_int.h"

_Static_assert(PDP_DEVICE_LEN == APPR_DEVICE_LEN, "device token length");

/* One login in progress (r->op), across its delays. */
struct login_op {
    char id[APPR_APPROVER_MAX + 1];
    char *password; /* sodium_malloc'd (IG_PASSWORD_MAX + 2), wiped */
    size_t plen;
    char device[PDP_DEVICE_LEN + 1]; /* the token the client sent, or "" */
    char client[PDP_ADDR_STRLEN];    /* for the audit */
    char addr_key[PDP_ADDR_STRLEN];  /* for the address limiter */
    int slowed;                      /* the address delay was served */
    double busy_since; /* monotonic: first found no check slot; 0: never */
    pdp_login_done_fn done;
};

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
op_free(void *p)
{
    struct login_op *op = p;

    if (op == NULL)
        return;
    sodium_free(op->password); /* wipes it */
    sodium_memzero(op, sizeof(*op));
    free(op);
}

/* Hand the outcome to the endpoint, then wipe it. */
static void
finish(struct pdp_req *r, struct pdp_login *out)
{
    struct login_op *op = r->op;

    out->id = op->id;
    op->done(r, out);
    sodium_memzero(out, sizeof(*out));
}

/* A refused login: counted for login.refused under reason, answered
   with code and status (and Retry-After when retry_after > 0). */
static void
refuse(struct pdp_req *r, const struct pdp_approver *who, const char *code,
       unsigned int status, int64_t retry_after, const char *reason)
{
    struct login_op *op = r->op;
    struct pdp_login out;

    memset(&out, 0, sizeof(out));
    out.code = code;
    out.http_status = status;
    out.retry_after = retry_after;
    pdp_refusals_note(r->srv->refusals, PDP_REFUSED_LOGIN, op->client,
                      who != NULL ? who->id : NULL,
                      who != NULL ? "approver" : NULL, reason);
    finish(r, &out);
}

/* Milliseconds a login from an address with these failures waits. */
static long
address_delay(const struct pdp_server *s, int failures)
{
    long over = (long)failures -
                (long)s->cfg->login_max_failures * IG_LOGIN_ADDR_FACTOR;
    long ms;

    if (over < 0)
        return 0;
    ms = (over + 1) * IG_LOGIN_ADDR_DELAY_STEP_MS;
    return ms < IG_LOGIN_ADDR_DELAY_MAX_MS ? ms : IG_LOGIN_ADDR_DELAY_MAX_MS;
}

static void attempt(struct pdp_req *r);

/* The kinds of key failures are counted under (store_login_*):
   configured approver ids and devices, unknown ids, client addresses. */
#define KIND_ID "id"
#define KIND_UNKNOWN "unknown"
#define KIND_ADDR "addr"

/* The rule of a kind: an address may fail IG_LOGIN_ADDR_FACTOR times
   more often before it is slowed. */
static struct store_login_rule
rule_of(const struct pdp_server *s, const char *kind)
{
    struct store_login_rule r;

    r.max_failures = s->cfg->login_max_failures;
    if (strcmp(kind, KIND_ADDR) == 0)
        r.max_failures *= IG_LOGIN_ADDR_FACTOR;
    r.window_ms = s->cfg->login_window * 1000;
    r.max_keys = IG_LOGIN_LIMITER_KEYS;
    return r;
}

/* One more failure of (kind, key); a store failure is logged (the login
   is refused anyway). */
static void
count_failure(struct pdp_server *s, const char *kind, const char *key,
              int64_t now_ms)
{
    struct store_login_rule rule = rule_of(s, kind);

    if (store_login_fail(s->store, kind, key, now_ms, &rule, NULL) != IG_OK)
        pdp_log("error", "login.count_failed",
                json_pack("{s:s, s:s}", "kind", kind, "reason",
                          "the store could not count a failed login"));
}

static void
refuse_unavailable(struct pdp_req *r, const struct pdp_approver *who)
{
    refuse(r, who, "STORE_UNAVAILABLE", 503, 0, "STORE_UNAVAILABLE");
}

/* Suspend r for ms and run attempt again; 0, or -1 (answer now). */
static int
later(struct pdp_req *r, long ms)
{
    return pdp_delays_add(r->srv->delays, r,
                          pdp_mono_seconds() + (double)ms / 1000.0, attempt);
}

/* Record a new session for who at now in out (id, CSRF token, expiry).
   IG_ERR_IO. */
/* What a session remembers of the credential it was made with: the hex
   SHA-256 of the approver's configured password hash. A new password
   (a new hash, with a new salt) gives another fingerprint, and every
   session made with the old one is refused on every replica - they live
   in the store now, and outlive restarts. */
static void
cred_fingerprint(const struct pdp_approver *who, char out[IG_SHA256_HEXLEN + 1])
{
    const char *h = who->password_hash != NULL ? who->password_hash : "";

    ig_sha256_hex(h, strlen(h), out);
}

static enum ig_status
new_session(struct pdp_server *s, const struct pdp_approver *who, int64_t now,
            struct pdp_login *out)
{
    unsigned char hash[APPR_SESSION_HASH_BYTES];
    char cred[IG_SHA256_HEXLEN + 1];
    struct store_session_rec rec;
    enum ig_status st;

    _Static_assert(PDP_SESSION_ID_LEN == APPR_SESSION_ID_LEN, "session length");
    _Static_assert(PDP_CSRF_LEN == APPR_CSRF_LEN, "CSRF length");
    appr_session_new(out->session, out->csrf, hash);
    memset(&rec, 0, sizeof(rec));
    rec.id_hash = hash;
    rec.approver = who->id;
    rec.csrf = out->csrf;
    cred_fingerprint(who, cred);
    rec.cred = cred;
    rec.created_at = now;
    rec.expires_at = now + s->cfg->session_max;
    st = store_session_create(s->store, &rec, s->cfg->session_idle,
                              APPR_SESSIONS_MAX);
    sodium_memzero(hash, sizeof(hash));
    out->expires_at = rec.expires_at;
    return st;
}

/* The password check and what follows from it: the caller holds one
   hashing slot, released here. */
static void
check(struct pdp_req *r, const struct pdp_approver *who, const char *kind,
      const char *key, int64_t now_ms)
{
    struct login_op *op = r->op;
    struct pdp_approvals *a = r->srv->approvals;
    struct pdp_login out;
    int64_t now;
    int ok;

    ok = appr_password_verify(who != NULL ? who->password_hash : dummy_hash(),
                              op->password, op->plen) &&
         who != NULL;
    atomic_fetch_sub(&a->hashing, 1);
    if (!ok) {
        count_failure(r->srv, kind, key, now_ms);
        count_failure(r->srv, KIND_ADDR, op->addr_key, now_ms);
        refuse(r, who, "LOGIN_FAILED", 401, 0,
               who != NULL ? "LOGIN_FAILED" : "UNKNOWN_APPROVER");
        return;
    }
    if (store_login_clear(r->srv->store, kind, key) != IG_OK)
        pdp_log("error", "login.count_failed",
                json_pack("{s:s, s:s}", "kind", kind, "reason",
                          "the store could not clear the failed logins"));
    memset(&out, 0, sizeof(out));
    now = ig_time_now();
    if (new_session(r->srv, who, now, &out) != IG_OK) {
        sodium_memzero(&out, sizeof(out));
        refuse_unavailable(r, who);
        return;
    }
    appr_device_issue(a->device_key, who->id, now, IG_LOGIN_DEVICE_TTL,
                      out.device);
    out.http_status = 200;
    out.approver = who;
    finish(r, &out);
}

/* Apply the rules (see the top of the file) now; run again by the delay
   registry when r was suspended. Fills r's reply or suspends r. */
static void
attempt(struct pdp_req *r)
{
    struct login_op *op = r->op;
    struct pdp_approvals *a = r->srv->approvals;
    const struct pdp_approver *who = pdp_config_approver(r->srv->cfg, op->id);
    const char *kind = who != NULL ? KIND_ID : KIND_UNKNOWN;
    struct store_login_rule rule = rule_of(r->srv, kind);
    char dev[APPR_DEVICE_ID_LEN + 1], key[IG_LOGIN_LIMITER_KEY_MAX + 1];
    char dev_hash[IG_SHA256_HEXLEN + 1];
    int64_t now = ig_time_now_ms(), wait;
    int device = who != NULL && op->device[0] != '\0' &&
                 appr_device_check(a->device_key, op->device, who->id,
                                   ig_time_now(), dev);
    int failures;
    long ms;

    if (device) { /* "dev:" and 160 bits of the hash of its id */
        ig_sha256_hex(dev, strlen(dev), dev_hash);
        (void)snprintf(key, sizeof(key), "dev:%.40s", dev_hash);
    } else {
        (void)snprintf(key, sizeof(key), "%s", op->id);
    }
    if (store_login_check(r->srv->store, kind, key, now, &rule, &failures,
                          &wait) != IG_OK) {
        refuse_unavailable(r, who);
        return;
    }
    if (wait > 0) { /* Retry-After: whole seconds, rounded up */
        refuse(r, who, "LOGIN_RATE_LIMITED", 429, (wait + 999) / 1000,
               "LOGIN_RATE_LIMITED");
        return;
    }
    if (!device && !op->slowed) {
        op->slowed = 1;
        rule = rule_of(r->srv, KIND_ADDR);
        if (store_login_check(r->srv->store, KIND_ADDR, op->addr_key, now,
                              &rule, &failures, &wait) != IG_OK) {
            refuse_unavailable(r, who);
            return;
        }
        ms = address_delay(r->srv, failures);
        if (ms > 0) {
            pdp_refusals_throttled(r->srv->refusals, PDP_THROTTLE_DELAYED);
            if (later(r, ms) == 0)
                return;
        }
    }
    if (atomic_fetch_add(&a->hashing, 1) >= IG_LOGIN_HASHING_MAX) {
        atomic_fetch_sub(&a->hashing, 1);
        if (op->busy_since == 0)
            op->busy_since = pdp_mono_seconds();
        if ((pdp_mono_seconds() - op->busy_since) * 1000.0 <
                IG_LOGIN_BUSY_WAIT_MAX_MS &&
            later(r, IG_LOGIN_BUSY_RETRY_MS) == 0)
            return;
        refuse(r, who, "LOGIN_RATE_LIMITED", 429, 1, "LOGIN_BUSY");
        return;
    }
    rule = rule_of(r->srv, kind);
    if (device &&
        store_login_check(r->srv->store, kind, op->id, now, &rule, &failures,
                          &wait) == IG_OK &&
        wait > 0)
        pdp_refusals_throttled(r->srv->refusals, PDP_THROTTLE_DEVICE);
    check(r, who, kind, key, now);
}

void
pdp_login_retry_after(struct pdp_req *r, const struct pdp_login *out)
{
    char retry[24];

    if (out->retry_after <= 0)
        return;
    (void)snprintf(retry, sizeof(retry), "%lld", (long long)out->retry_after);
    (void)pdp_reply_header(r, "Retry-After", retry);
}

void
pdp_approver_login(struct pdp_req *r, const char *id, const char *password,
                   const char *device, pdp_login_done_fn done)
{
    struct login_op *op = calloc(1, sizeof(*op));
    struct pdp_login out;
    struct pdp_addr addr;

    memset(&out, 0, sizeof(out));
    out.id = "";
    if (op == NULL || r->op != NULL ||
        (op->password = sodium_malloc(IG_PASSWORD_MAX + 2)) == NULL) {
        op_free(op);
        out.code = "INTERNAL";
        out.http_status = 500;
        done(r, &out);
        return;
    }
    r->op = op;
    r->op_free = op_free;
    op->done = done;
    pdp_req_client(r, op->client);
    if (pdp_req_client_addr(r, &addr) == 0)
        pdp_addr_key(&addr, op->addr_key);
    else
        (void)snprintf(op->addr_key, sizeof(op->addr_key), "unknown");
    if (id == NULL || password == NULL || id[0] == '\0' ||
        strlen(id) > APPR_APPROVER_MAX) {
        refuse(r, NULL, "LOGIN_FAILED", 401, 0, "LOGIN_INVALID");
        return;
    }
    (void)snprintf(op->id, sizeof(op->id), "%s", id);
    /* One byte more than the longest password: a longer one fails. */
    op->plen = strnlen(password, IG_PASSWORD_MAX + 1);
    memcpy(op->password, password, op->plen);
    op->password[op->plen] = '\0';
    if (device != NULL && strlen(device) == PDP_DEVICE_LEN)
        memcpy(op->device, device, PDP_DEVICE_LEN + 1);
    attempt(r);
}

const struct pdp_approver *
pdp_approver_session(struct pdp_server *s, const char *session,
                     char csrf[PDP_CSRF_LEN + 1], int *unavailable)
{
    unsigned char hash[APPR_SESSION_HASH_BYTES];
    char id[APPR_APPROVER_MAX + 1], token[IG_SESSION_CSRF_MAX + 1];
    char cred[STORE_SESSION_CRED_MAX + 1], want[IG_SHA256_HEXLEN + 1];
    const struct pdp_approver *who;
    enum ig_status st;

    _Static_assert(IG_SHA256_HEXLEN <= STORE_SESSION_CRED_MAX, "cred");
    if (appr_session_hash(session, hash) != 0)
        return NULL;
    st = store_session_get(s->store, hash, ig_time_now(), s->cfg->session_idle,
                           id, cred, token);
    if (st == IG_OK && strlen(token) != PDP_CSRF_LEN)
        st = IG_ERR_NOTFOUND; /* not a token this PDP made */
    if (st == IG_OK && csrf != NULL)
        memcpy(csrf, token, PDP_CSRF_LEN + 1);
    sodium_memzero(token, sizeof(token));
    if (unavailable != NULL)
        *unavailable = st == IG_ERR_IO;
    if (st == IG_ERR_IO)
        pdp_log("error", "session.lookup_failed",
                json_pack("{s:s}", "reason",
                          "the store could not be read: no session"));
    if (st != IG_OK)
        return NULL;
    /* A session outlives neither its approver's removal from the config
       nor a change of their password: this lookup refuses one that is no
       longer configured, or was made with another password hash. */
    who = pdp_config_approver(s->cfg, id);
    if (who == NULL)
        return NULL;
    cred_fingerprint(who, want);
    if (strlen(cred) != IG_SHA256_HEXLEN ||
        sodium_memcmp(cred, want, IG_SHA256_HEXLEN) != 0)
        return NULL;
    return who;
}

void
pdp_approver_logout(struct pdp_server *s, const char *session)
{
    unsigned char hash[APPR_SESSION_HASH_BYTES];

    if (appr_session_hash(session, hash) == 0 &&
        store_session_end(s->store, hash) != IG_OK)
        pdp_log("error", "session.logout_failed",
                json_pack("{s:s}", "reason",
                          "the store could not forget the session"));
}
