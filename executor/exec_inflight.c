/*
 * exec_inflight.c - execution slots and the cancel registry (see
 * exec_inflight.h). One mutex (exec_ctx.mu) guards both lists; the total
 * count is an atomic.
 */
#include "exec_inflight.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_sandbox.h"
#include "ig_hash.h"

struct exec_slots {
    const struct exec_action *act;
    long running;
    struct exec_slots *next;
};

/* Take one of act's slots (its settings' max_concurrent); 0 when full. */
static int
action_slot(struct exec_ctx *x, const struct exec_action *act)
{
    long limit = (long)json_number_value(
        json_object_get(exec_action_settings(act), "max_concurrent"));
    struct exec_slots *s;
    int ok = 0;

    pthread_mutex_lock(&x->mu);
    for (s = x->per_action; s != NULL && s->act != act; s = s->next)
        ;
    if (s == NULL && (s = calloc(1, sizeof(*s))) != NULL) {
        s->act = act;
        s->next = x->per_action;
        x->per_action = s;
    }
    if (s != NULL && (limit <= 0 || s->running < limit)) {
        s->running++;
        ok = 1;
    }
    pthread_mutex_unlock(&x->mu);
    return ok;
}

int
exec_slot_take(struct exec_ctx *x, const struct exec_action *act,
               unsigned int *status, json_t **reply)
{
    if (atomic_fetch_add(&x->running, 1) >= x->cfg->max_concurrent) {
        atomic_fetch_sub(&x->running, 1);
        *status = 429;
        *reply = exec_error("TOO_MANY_EXECUTIONS",
                            "too many executions at once; the grant was not "
                            "spent, try again");
        return -1;
    }
    if (!action_slot(x, act)) {
        atomic_fetch_sub(&x->running, 1);
        *status = 429;
        *reply = exec_error("TOO_MANY_EXECUTIONS",
                            "too many executions of this action at once; the "
                            "grant was not spent, try again");
        return -1;
    }
    return 0;
}

void
exec_slot_give(struct exec_ctx *x, const struct exec_action *act)
{
    struct exec_slots *s;

    pthread_mutex_lock(&x->mu);
    for (s = x->per_action; s != NULL && s->act != act; s = s->next)
        ;
    if (s != NULL && s->running > 0)
        s->running--;
    pthread_mutex_unlock(&x->mu);
    atomic_fetch_sub(&x->running, 1);
}

void
exec_slots_free(struct exec_ctx *x)
{
    struct exec_slots *s, *next;

    for (s = x->per_action; s != NULL; s = next) {
        next = s->next;
        free(s);
    }
    x->per_action = NULL;
}

/* ---- cancel registry ---- */

static void
on_started(void *p, struct exec_run *run)
{
    struct exec_inflight_run *rc = p;

    rc->entry.run = run;
    pthread_mutex_lock(&rc->x->mu);
    rc->entry.next = rc->x->inflight;
    rc->x->inflight = &rc->entry;
    pthread_mutex_unlock(&rc->x->mu);
}

static void
on_finished(void *p, struct exec_run *run)
{
    struct exec_inflight_run *rc = p;
    struct exec_running **pp;
    (void)run;

    pthread_mutex_lock(&rc->x->mu);
    for (pp = &rc->x->inflight; *pp != NULL; pp = &(*pp)->next)
        if (*pp == &rc->entry) {
            *pp = rc->entry.next;
            break;
        }
    pthread_mutex_unlock(&rc->x->mu);
}

static void
on_output(void *p, const char *stream, const char *data, size_t len)
{
    struct exec_inflight_run *rc = p;

    if (rc->on_output != NULL)
        rc->on_output(rc->out_ctx, stream, data, len);
}

void
exec_inflight_init(struct exec_inflight_run *rc, struct exec_ctx *x,
                   const char *intent_id, const char *grant,
                   void (*out_fn)(void *ctx, const char *stream,
                                  const char *data, size_t len),
                   void *out_ctx)
{
    memset(rc, 0, sizeof(*rc));
    rc->x = x;
    rc->on_output = out_fn;
    rc->out_ctx = out_ctx;
    (void)snprintf(rc->entry.intent_id, sizeof(rc->entry.intent_id), "%s",
                   intent_id);
    ig_sha256(grant, strlen(grant), rc->entry.grant_hash);
}

void
exec_inflight_hooks(struct exec_inflight_run *rc,
                    struct exec_runner_hooks *hooks)
{
    hooks->on_output = on_output;
    hooks->on_started = on_started;
    hooks->on_finished = on_finished;
    hooks->ctx = rc;
}

json_t *
exec_cancel(struct exec_ctx *x, const char *intent_id, const json_t *body,
            unsigned int *status)
{
    const json_t *g = json_object_get(body, "grant");
    const char *grant = json_string_value(g);
    unsigned char h[32];
    struct exec_running *e;
    int found = 0;

    if (grant == NULL || strlen(grant) != json_string_length(g)) {
        *status = 400;
        return exec_error("NO_GRANT", "send the grant of the execution");
    }
    ig_sha256(grant, strlen(grant), h);
    pthread_mutex_lock(&x->mu);
    for (e = x->inflight; e != NULL; e = e->next)
        if (strcmp(e->intent_id, intent_id) == 0 &&
            sodium_memcmp(e->grant_hash, h, sizeof(h)) == 0) {
            exec_run_cancel(e->run);
            found = 1;
        }
    pthread_mutex_unlock(&x->mu);
    if (!found) {
        *status = 404;
        return exec_error("NOT_RUNNING",
                          "no running execution of this intent and grant");
    }
    *status = 200;
    return json_pack("{s:s, s:b}", "intent_id", intent_id, "cancelled", 1);
}

void
exec_cancel_all(struct exec_ctx *x)
{
    struct exec_running *e;

    pthread_mutex_lock(&x->mu);
    for (e = x->inflight; e != NULL; e = e->next)
        exec_run_cancel(e->run);
    pthread_mutex_unlock(&x->mu);
}
