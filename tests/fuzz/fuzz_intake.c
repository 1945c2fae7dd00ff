/*
 * fuzz_intake.c - libFuzzer target for what the PDP does with an agent's
 * untrusted POST /v1/intents body after the JSON reader: the strict field
 * validation (pdp_intake_validate), and the policy engine evaluating an intent
 * built from it with the example bundle (JSON -> read-only Lua tables ->
 * six policies -> a verdict).
 *
 * Properties: nothing crashes or leaks; a refused body always carries an
 * error reply; an accepted one has a valid action and a params object; the
 * engine's verdict is one of the three with at least one reason for BLOCK.
 */
#include <stdlib.h>
#include <string.h>

#include "ig_json.h"
#include "pdp_intake_int.h"

static struct pol_engine *engine;

static int64_t
count_one(void *ctx, const char *key, int64_t window)
{
    (void)ctx;
    (void)key;
    (void)window;
    return 1;
}

static void
setup(void)
{
    struct pol_bundle *b = NULL;
    struct ig_err err;

    if (pol_bundle_load(IG_POLICY_BUNDLE_DIR, NULL, &b, &err) != IG_OK ||
        pol_engine_new(b, NULL, count_one, NULL, &engine, &err) != IG_OK)
        abort();
    pol_bundle_unref(b);
}

static void
evaluate(const struct pdp_intake_body *in)
{
    struct pol_decision d;
    json_t *ctx =
        in->context != NULL ? json_incref(in->context) : json_object();
    /* "O" adds a reference to params; "o" steals ctx. */
    json_t *binding = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:o, s:s, s:s}", "version",
        "intentgate.intent/1", "intent_id",
        "00000000-0000-4000-8000-000000000000", "principal", "fuzz", "tenant",
        "fuzz", "action", in->action, "resource", in->resource, "params",
        in->params, "context", ctx, "created_at", "2026-01-01T00:00:00Z",
        "expires_at", "2026-01-01T00:01:00Z");

    if (binding == NULL)
        return;
    pol_engine_eval(engine, binding, &d);
    if (d.verdict != POL_ALLOW && d.verdict != POL_ESCALATE &&
        d.verdict != POL_BLOCK)
        abort();
    if (d.verdict == POL_BLOCK && d.nreasons == 0)
        abort();
    json_decref(binding);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static struct pdp_server srv;
    struct pdp_req r;
    struct pdp_intake_body in;
    json_t *body = NULL;

    if (engine == NULL)
        setup();
    if (ig_json_parse((const char *)data, size, &body, NULL) != IG_OK)
        return 0;
    memset(&r, 0, sizeof(r));
    r.srv = &srv;
    if (json_is_object(body)) {
        if (pdp_intake_validate(&r, body, &in) == 0) {
            if (r.reply.body != NULL || in.action == NULL ||
                !json_is_object(in.params) || in.resource == NULL)
                abort();
            evaluate(&in);
        } else if (r.reply.body == NULL || r.reply.status != 400) {
            abort();
        }
    }
    free(r.reply.body);
    json_decref(body);
    return 0;
}
