/*
 * fuzz_params.c - libFuzzer target for the executor's parameter check:
 * arbitrary bytes -> the strict JSON reader -> exec_params_check against
 * one action of a fixed registry (tests/fuzz/registry_params.json, every
 * parameter type and rule).
 *
 * Properties: nothing crashes or leaks; the check returns IG_OK or
 * IG_ERR_INVALID, a refusal always has a message, and anything that is
 * not an object is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_registry.h"
#include "ig_json.h"

static struct exec_registry *reg;
static const struct exec_action *action;

static void
setup(void)
{
    struct ig_err err;

    if (exec_registry_load(IG_FUZZ_REGISTRY, &reg, &err) != IG_OK)
        abort();
    action = exec_registry_find(reg, "payments.refund");
    if (action == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct ig_err err;
    enum ig_status st;
    json_t *params = NULL;

    if (reg == NULL)
        setup();
    if (ig_json_parse((const char *)data, size, &params, NULL) != IG_OK)
        return 0;
    memset(&err, 0, sizeof(err));
    st = exec_params_check(action, params, &err);
    if (st != IG_OK && (st != IG_ERR_INVALID || err.msg[0] == '\0'))
        abort();
    if (st == IG_OK && !json_is_object(params))
        abort();
    json_decref(params);
    return 0;
}
