/*
 * cli_submit_exec.c - `intentgate submit --execute`: hand the granted
 * intent to the executor and judge what it says (cli_submit.h).
 *
 * The body is exactly {"intent": <binding as the PDP returned it>,
 * "grant": "v4.public..."}; the executor recomputes the intent hash from
 * the binding and verifies the grant against it, so the binding is sent
 * back unchanged (numbers re-serialized with 17 significant digits, which
 * round-trips every double). No bearer token goes to the executor.
 *
 * Only a 200 whose outcome is COMPLETED is success. Everything else -
 * a refusal before redemption (the grant stays unspent), an outcome of
 * FAILED_BEFORE_DISPATCH, UNKNOWN_AFTER_DISPATCH or DEFINITELY_NOT_EXECUTED,
 * an executor that cannot be reached or times out - is SUBMIT_EXIT_NOT_RUN.
 * When there is no answer at all, one GET of the intent at the PDP tells
 * the agent whether the grant was spent (ALLOWED: nothing ran).
 */
#include "cli_submit.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_show.h"

int
cli_submit_print(const json_t *v)
{
    struct ig_buf b;
    int rc = CLI_EXIT_OK;

    ig_buf_init(&b, IG_CLI_PRINT_MAX_BYTES);
    if (cli_json_pretty(&b, v, 0) != IG_OK || ig_buf_addc(&b, '\n') != IG_OK ||
        fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
        cli_error(SUBMIT_CMD, "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    }
    ig_buf_release_secret(&b);
    return rc;
}

/* One line naming an error body's code and message, made safe. */
static void
report_refusal(const char *who, const struct cli_http_reply *r)
{
    const char *code, *msg;
    struct ig_buf b;

    code = cli_http_error_code(r->body, &msg);
    ig_buf_init(&b, IG_CLI_MESSAGE_MAX);
    if (code == NULL || cli_text_safe(&b, code, strlen(code)) != IG_OK ||
        ig_buf_adds(&b, ": ") != IG_OK ||
        cli_text_safe(&b, msg, strlen(msg)) != IG_OK)
        cli_error(SUBMIT_CMD, "%s answered HTTP %ld without an outcome", who,
                  r->status);
    else
        cli_error(SUBMIT_CMD, "%s refused: %s; the action did not run", who,
                  b.data);
    ig_buf_release(&b);
}

/* After no answer from the executor: what the PDP has recorded. */
static void
report_no_answer(struct cli_http *pdp, const char *intent_id,
                 const struct ig_err *err)
{
    struct cli_http_reply r = {0, NULL};
    const char *state = NULL;
    struct ig_err perr;
    char path[128];
    int n;

    cli_error(SUBMIT_CMD, "execute: %s", err->msg);
    n = snprintf(path, sizeof(path), "/v1/intents/%s", intent_id);
    IG_ASSERT(n > 0 && (size_t)n < sizeof(path)); /* checked by the caller */
    if (cli_http_call(pdp, "GET", path, NULL, 0, &r, &perr) == IG_OK &&
        r.status == 200)
        state = json_string_value(json_object_get(r.body, "state"));
    if (state == NULL)
        cli_error(SUBMIT_CMD,
                  "the action may or may not have run: check GET "
                  "/v1/intents/%s",
                  intent_id);
    else if (strcmp(state, "ALLOWED") == 0)
        cli_error(SUBMIT_CMD, "the grant is unspent: nothing ran");
    else if (strcmp(state, "REDEEMED") == 0)
        cli_error(SUBMIT_CMD,
                  "the grant was redeemed and no outcome is recorded yet: "
                  "the action may have run (GET /v1/intents/%s?wait=60)",
                  intent_id);
    else if (strspn(state, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(state))
        cli_error(SUBMIT_CMD, "the PDP records the intent as %s", state);
    cli_http_reply_release(&r);
}

int
cli_submit_execute(struct cli_http *exec, struct cli_http *pdp,
                   const char *intent_id, const json_t *intent,
                   const char *grant)
{
    struct cli_http_reply r = {0, NULL};
    const char *outcome;
    struct ig_err err;
    enum ig_status st;
    json_t *body;
    int rc = SUBMIT_EXIT_NOT_RUN;

    /* "O" takes a new reference to intent; body owns everything. */
    body = json_pack("{s:O, s:s}", "intent", intent, "grant", grant);
    if (body == NULL) {
        cli_error(SUBMIT_CMD, "out of memory");
        return CLI_EXIT_FAIL;
    }
    st = cli_http_call_json(exec, "POST", "/v1/execute", body, &r, &err);
    json_decref(body);
    if (st == IG_ERR_IO) {
        report_no_answer(pdp, intent_id, &err);
        goto out;
    }
    if (st != IG_OK) {
        cli_error(SUBMIT_CMD, "execute: %s", err.msg);
        cli_error(SUBMIT_CMD,
                  "the action may or may not have run: check GET "
                  "/v1/intents/%s",
                  intent_id);
        goto out;
    }
    if (json_is_object(r.body) && cli_submit_print(r.body) != CLI_EXIT_OK) {
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    outcome = json_string_value(json_object_get(r.body, "outcome"));
    if (r.status != 200 || outcome == NULL) {
        report_refusal("the executor", &r);
    } else if (strcmp(outcome, "COMPLETED") == 0) {
        rc = CLI_EXIT_OK;
    } else if (strspn(outcome, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
               strlen(outcome)) {
        cli_error(SUBMIT_CMD, "the executor reports the outcome %s", outcome);
    } else {
        cli_error(SUBMIT_CMD, "the executor's answer has no valid outcome");
    }
out:
    cli_http_reply_release(&r);
    return rc;
}
