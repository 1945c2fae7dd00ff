/*
 * appr_session.c - sessions: one small array under one mutex. Lookups
 * are linear; it is capped at a few thousand entries, far above the
 * number of humans who approve escalations, and a lookup costs a SHA-256
 * and a scan of 32-byte hashes. (Failed sign-ins: appr_limiter.c.)
 */
#include "appr_session.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_hash.h"

struct session {
    unsigned char hash[32]; /* SHA-256 of the id */
    char approver[APPR_APPROVER_MAX + 1];
    char csrf[APPR_CSRF_LEN + 1];
    int64_t created, last_seen;
    int used;
};

struct appr_sessions {
    pthread_mutex_t mu;
    int64_t idle, max;
    struct session *v;
    size_t n;
};

struct appr_sessions *
appr_sessions_new(int64_t idle, int64_t max)
{
    struct appr_sessions *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->v = calloc(APPR_SESSIONS_MAX, sizeof(*s->v));
    if (s->v == NULL) {
        free(s);
        return NULL;
    }
    (void)pthread_mutex_init(&s->mu, NULL);
    s->idle = idle;
    s->max = max;
    s->n = APPR_SESSIONS_MAX;
    return s;
}

void
appr_sessions_free(struct appr_sessions *s)
{
    if (s == NULL)
        return;
    sodium_memzero(s->v, s->n * sizeof(*s->v));
    free(s->v);
    (void)pthread_mutex_destroy(&s->mu);
    free(s);
}

static void
random_text(char *out, size_t cap)
{
    unsigned char raw[32];
    size_t n;

    randombytes_buf(raw, sizeof(raw));
    n = ig_b64_encode(raw, sizeof(raw), out, cap);
    out[n] = '\0';
    sodium_memzero(raw, sizeof(raw));
}

static int
live(const struct appr_sessions *s, const struct session *e, int64_t now)
{
    return e->used && now - e->last_seen < s->idle && now - e->created < s->max;
}

enum ig_status
appr_session_create(struct appr_sessions *s, const char *approver, int64_t now,
                    char id[APPR_SESSION_ID_LEN + 1],
                    char csrf[APPR_CSRF_LEN + 1], int64_t *expires_at)
{
    struct session *slot = NULL;
    size_t i;

    if (strlen(approver) > APPR_APPROVER_MAX)
        return IG_ERR_INVALID;
    memcpy(id, "igs_", 4);
    random_text(id + 4, APPR_SESSION_ID_LEN - 4 + 1);
    random_text(csrf, APPR_CSRF_LEN + 1);
    (void)pthread_mutex_lock(&s->mu);
    /* A free or dead slot, else the least recently used one. */
    for (i = 0; i < s->n; i++) {
        struct session *e = &s->v[i];
        if (!live(s, e, now)) {
            slot = e;
            break;
        }
        if (slot == NULL || e->last_seen < slot->last_seen)
            slot = e;
    }
    if (slot == NULL) { /* no slots at all */
        (void)pthread_mutex_unlock(&s->mu);
        return IG_ERR_NOMEM;
    }
    memset(slot, 0, sizeof(*slot));
    ig_sha256(id, strlen(id), slot->hash);
    (void)snprintf(slot->approver, sizeof(slot->approver), "%s", approver);
    memcpy(slot->csrf, csrf, APPR_CSRF_LEN + 1);
    slot->created = slot->last_seen = now;
    slot->used = 1;
    (void)pthread_mutex_unlock(&s->mu);
    *expires_at = now + s->max;
    return IG_OK;
}

/* The live entry for id, or NULL; forgets a dead one. Under s->mu. */
static struct session *
find(struct appr_sessions *s, const char *id, int64_t now)
{
    unsigned char h[32];
    struct session *found = NULL;
    size_t i;

    if (strlen(id) != APPR_SESSION_ID_LEN || strncmp(id, "igs_", 4) != 0)
        return NULL;
    ig_sha256(id, strlen(id), h);
    for (i = 0; i < s->n; i++)
        if (s->v[i].used && sodium_memcmp(s->v[i].hash, h, sizeof(h)) == 0)
            found = &s->v[i];
    if (found != NULL && !live(s, found, now)) {
        sodium_memzero(found, sizeof(*found));
        return NULL;
    }
    return found;
}

enum ig_status
appr_session_lookup(struct appr_sessions *s, const char *id, int64_t now,
                    char approver[APPR_APPROVER_MAX + 1],
                    char csrf[APPR_CSRF_LEN + 1])
{
    struct session *e;

    if (id == NULL)
        return IG_ERR_NOTFOUND;
    (void)pthread_mutex_lock(&s->mu);
    e = find(s, id, now);
    if (e != NULL) {
        e->last_seen = now;
        memcpy(approver, e->approver, sizeof(e->approver));
        if (csrf != NULL)
            memcpy(csrf, e->csrf, sizeof(e->csrf));
    }
    (void)pthread_mutex_unlock(&s->mu);
    return e != NULL ? IG_OK : IG_ERR_NOTFOUND;
}

void
appr_session_end(struct appr_sessions *s, const char *id)
{
    unsigned char h[32];
    size_t i;

    if (id == NULL || strlen(id) != APPR_SESSION_ID_LEN)
        return;
    ig_sha256(id, strlen(id), h);
    (void)pthread_mutex_lock(&s->mu);
    for (i = 0; i < s->n; i++)
        if (s->v[i].used && sodium_memcmp(s->v[i].hash, h, sizeof(h)) == 0)
            sodium_memzero(&s->v[i], sizeof(s->v[i]));
    (void)pthread_mutex_unlock(&s->mu);
}

void
appr_session_end_all(struct appr_sessions *s, const char *approver)
{
    size_t i;

    (void)pthread_mutex_lock(&s->mu);
    for (i = 0; i < s->n; i++)
        if (s->v[i].used && strcmp(s->v[i].approver, approver) == 0)
            sodium_memzero(&s->v[i], sizeof(s->v[i]));
    (void)pthread_mutex_unlock(&s->mu);
}
