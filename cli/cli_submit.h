/*
 * cli_submit.h - what the two files of `intentgate submit` share:
 * cmd_submit.c (arguments, the intent, the long poll) and
 * cli_submit_exec.c (the executor call and printing answers); `intentgate
 * git` (cmd_git.c) submits its intents through cli_submit_intent.
 *
 * The exit statuses are the agent's contract (docs/integrations.md):
 *   0 ALLOW (with --execute: it ran and the outcome is COMPLETED),
 *   2 bad arguments or input, a variable not set, a PDP that cannot be
 *     reached or answers something unexpected,
 *   3 ESCALATE and still pending, 4 BLOCK (or the escalation ended BLOCKED
 *   or EXPIRED), 5 with --execute: allowed, but it did not run to
 *   COMPLETED (the executor refused, failed or could not be reached).
 * Nothing but a well-formed ALLOW (and a COMPLETED execution) is 0.
 */
#ifndef CLI_SUBMIT_H
#define CLI_SUBMIT_H

#include <jansson.h>

#include "cli_http.h"

#define SUBMIT_CMD "submit"

enum {
    SUBMIT_EXIT_PENDING = 3,
    SUBMIT_EXIT_BLOCKED = 4,
    SUBMIT_EXIT_NOT_RUN = 5
};

/* One intent to submit (cli_submit_intent); the caller owns every field. */
struct cli_submit_req {
    const char *cmd;       /* the subcommand its error lines name */
    const char *action;    /* not NULL */
    const char *resource;  /* not NULL */
    const json_t *params;  /* an object, not NULL */
    const json_t *context; /* an object, or NULL: none */
    const char *idem;      /* an idempotency key, or NULL: none */
    long long wait;        /* seconds to wait on ESCALATE; 0: do not */
};

/*
 * Read INTENTGATE_URL and INTENTGATE_TOKEN and open the agent's client to
 * the PDP in *pdp (the caller frees it with cli_http_free, also after a
 * failure). 0, or -1 after one line naming the variable missing or wrong
 * (errors name cmd). Sends nothing.
 */
int cli_submit_open_pdp(const char *cmd, struct cli_http **pdp);

/*
 * Submit q to the PDP's POST /v1/intents as `intentgate submit` does and
 * check the answer (a known decision, the binding for what was asked, and
 * for ALLOW a grant and a binding that hashes to its intent_hash); on
 * ESCALATE with q->wait > 0, long-poll the intent until it is decided or
 * q->wait seconds pass. Returns CLI_EXIT_OK (allowed: *answer holds
 * intent_id, intent and grant), SUBMIT_EXIT_PENDING, SUBMIT_EXIT_BLOCKED,
 * CLI_EXIT_USAGE (unreachable, refused or malformed answer) or
 * CLI_EXIT_FAIL (out of memory), after one line on stderr for the last two.
 * *answer is the last answer or state received (NULL when none), owned by
 * the caller; it holds a grant when allowed, a secret not to be printed
 * in logs. Not thread-safe on one client.
 */
int cli_submit_intent(struct cli_http *pdp, const struct cli_submit_req *q,
                      json_t **answer);

/*
 * Print v as indented JSON and a newline on stdout (strings escaped as
 * cli_json_quote does; the copy is wiped after, since it may hold a
 * grant). CLI_EXIT_OK, or CLI_EXIT_FAIL after one line on stderr.
 */
int cli_submit_print(const json_t *v);

/*
 * Send {"intent": intent, "grant": grant} to POST /v1/execute on exec (a
 * client with no bearer token: the grant is the credential), print the
 * executor's JSON reply and return 0 when the outcome is COMPLETED, else
 * SUBMIT_EXIT_NOT_RUN after one line on stderr saying why. When the
 * executor cannot be reached or gives no answer, pdp (the agent's client)
 * is asked once for the intent's state so the line can say whether the
 * grant was spent. intent_id must be URL-safe (checked by the caller).
 */
int cli_submit_execute(struct cli_http *exec, struct cli_http *pdp,
                       const char *intent_id, const json_t *intent,
                       const char *grant);

#endif
