/*
 * exec_git_run.c - the git gateway's worker: everything between a whole
 * request and its answer (see exec_git.h).
 *
 * In order: the PDP gives the binding of the intent the grant names (its
 * claims were verified on the HTTP thread, action and alias included:
 * exec_git.c); the grant is verified offline against that binding
 * (exec_verify.c: the recorded intent hashes to what the grant was signed
 * for, and names the same intent, action and resource). Then:
 *   - info/refs: a push grant is not spent (the push itself decides); a
 *     fetch grant is redeemed on its first request (a fetch session);
 *   - receive-pack: the commands are parsed and compared with the intent's
 *     params.refs and params.delete; a mismatch is refused as git shows it
 *     (report-status ng lines), nothing sent upstream, the grant unspent;
 *     a match redeems, forwards and reports the outcome from the
 *     upstream's ok/ng lines;
 *   - upload-pack: redeemed on first use, then forwarded.
 * A refusal before the commands are known is an ERR pkt-line, which git
 * prints as "fatal: remote error: intentgate: ...".
 */
#include "exec_git_int.h"

#include <stdio.h>
#include <string.h>

#include "exec_verify.h"
#include "ig_json.h"
#include "ig_time.h"

/* Fetch sessions: fetch grants already redeemed here, until they expire.
   Process-wide: a grant belongs to one executor (its audience). */
#define SESSIONS 1024
static pthread_mutex_t sessions_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char id[IG_INTENT_ID_MAX + 1];
    int64_t until;
} sessions[SESSIONS];

/* 1 when intent_id has a live fetch session; else 0. */
static int
session_live(const char *intent_id, int64_t now)
{
    int i, live = 0;

    pthread_mutex_lock(&sessions_mu);
    for (i = 0; i < SESSIONS && !live; i++)
        live =
            sessions[i].until > now && strcmp(sessions[i].id, intent_id) == 0;
    pthread_mutex_unlock(&sessions_mu);
    return live;
}

static void
session_add(const char *intent_id, int64_t until, int64_t now)
{
    int i, slot = 0;

    pthread_mutex_lock(&sessions_mu);
    for (i = 0; i < SESSIONS; i++) {
        if (sessions[i].until <= now) {
            slot = i;
            break;
        }
        if (sessions[i].until < sessions[slot].until)
            slot = i;
    }
    (void)snprintf(sessions[slot].id, sizeof(sessions[slot].id), "%s",
                   intent_id);
    sessions[slot].until = until;
    pthread_mutex_unlock(&sessions_mu);
}

/* Binding and verified claims, or a refusal (answered). */
static int
check_grant(struct exec_git_req *g, json_t **binding, json_t **claims)
{
    char hash[IG_HASH_STRLEN + 1], why[300], state[32];
    struct ig_err err;
    enum exec_refusal r;

    ig_err_clear(&err);
    if (exec_pdp_intent(g->x->pdp, g->intent_id, binding, state, sizeof(state),
                        &err) != IG_OK) {
        (void)snprintf(why, sizeof(why),
                       "the grant's intent cannot be read "
                       "from the PDP (%.200s)",
                       err.msg);
        exec_git_refuse(g, why);
        return -1;
    }
    /* The action and alias were checked on the token's claims
       (exec_git.c); this checks the recorded intent is the one they
       name. */
    r = exec_verify_grant(g->x->keys, *binding, g->grant, g->x->cfg->id,
                          ig_time_now(), claims, hash, &err);
    if (r != EXEC_ACCEPT) {
        (void)snprintf(why, sizeof(why), "grant refused: %s (%.200s)",
                       exec_refusal_code(r), err.msg);
        exec_git_refuse(g, why);
        return -1;
    }
    /* A push grant shows the advertisement only while it can push. */
    if (g->svc == EXEC_GIT_RECEIVE && g->route == EXEC_GIT_REFS &&
        strcmp(state, "ALLOWED") != 0) {
        exec_git_refuse(g, "grant already used");
        return -1;
    }
    return 0;
}

/* A fetch: redeemed on the first request, then a session. */
static void
fetch(struct exec_git_req *g, const json_t *binding, const json_t *claims)
{
    const char *id = json_string_value(json_object_get(binding, "intent_id"));
    int64_t now = ig_time_now(), until = 0;
    struct exec_git_up up;
    uint64_t ticket = 0;
    const char *exp;
    char why[200];
    int first = 0;

    memset(&up, 0, sizeof(up));
    if (!session_live(id, now)) {
        if (exec_git_redeem(g, id, &ticket, why, sizeof(why)) != 0) {
            exec_git_refuse(g, why);
            return;
        }
        exp = json_string_value(json_object_get(claims, "exp"));
        if (exp == NULL || ig_time_parse(exp, strlen(exp), &until) != IG_OK)
            until = now;
        session_add(id, until, now);
        first = 1;
    }
    if (exec_git_forward(g, &up) != 0 && !first)
        return;
    if (first)
        exec_git_record(g, id,
                        g->status == 200 ? EXEC_OUTCOME_COMPLETED
                        : up.sent        ? EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH
                                         : EXEC_OUTCOME_DEFINITELY_NOT_EXECUTED,
                        json_pack("{s:s, s:I}", "service",
                                  exec_git_service_name(g->svc), "status",
                                  (json_int_t)up.status));
}

void
exec_git_work(struct exec_git_req *g)
{
    json_t *binding = NULL, *claims = NULL;
    struct exec_git_up up;

    if (g->too_large) {
        exec_git_push_too_large(g);
        return;
    }
    if (g->route == EXEC_GIT_RPC && g->body_fd < 0) {
        exec_git_refuse(g, "the request has no body");
        return;
    }
    if (check_grant(g, &binding, &claims) != 0)
        goto out;
    if (g->svc == EXEC_GIT_UPLOAD)
        fetch(g, binding, claims);
    else if (g->route == EXEC_GIT_REFS)
        (void)exec_git_forward(g, &up); /* a push grant is spent by the push */
    else
        exec_git_push_run(g, binding);
out:
    json_decref(binding);
    json_decref(claims);
}
