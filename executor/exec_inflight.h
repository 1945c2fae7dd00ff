/*
 * exec_inflight.h - executions in flight: the execution slots (the total
 * max_concurrent and each action's max_concurrent) and the registry of
 * running exec actions that POST .../cancel and shutdown reach. Private
 * to exec_execute.c and exec_inflight.c.
 */
#ifndef EXEC_INFLIGHT_H
#define EXEC_INFLIGHT_H

#include "exec_execute.h"
#include "ig_limits.h"

struct exec_running {
    char intent_id[IG_INTENT_ID_MAX + 1];
    unsigned char grant_hash[32];
    struct exec_run *run;
    struct exec_running *next;
};

/* One run's registration and output forwarding. */
struct exec_inflight_run {
    struct exec_ctx *x;
    struct exec_running entry;
    void (*on_output)(void *ctx, const char *stream, const char *data,
                      size_t len);
    void *out_ctx;
};

/* Take a slot for act: 0, or -1 with *reply (429) and *status set. */
int exec_slot_take(struct exec_ctx *x, const struct exec_action *act,
                   unsigned int *status, json_t **reply);

/* Give act's slot back. */
void exec_slot_give(struct exec_ctx *x, const struct exec_action *act);

/* Fill rc for one run of intent_id under grant, forwarding output to
   on_output(out_ctx, ...) when not NULL. */
void exec_inflight_init(struct exec_inflight_run *rc, struct exec_ctx *x,
                        const char *intent_id, const char *grant,
                        void (*on_output)(void *ctx, const char *stream,
                                          const char *data, size_t len),
                        void *out_ctx);

/* Runner hooks that register the run for cancel while it lives. */
void exec_inflight_hooks(struct exec_inflight_run *rc,
                         struct exec_runner_hooks *hooks);

#endif
