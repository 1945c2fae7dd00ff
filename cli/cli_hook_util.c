/*
 * cli_hook_util.c - the two helpers every hook mapping uses: reading a
 * string of the event safely and filling an intent body.
 *
 * They live apart so that the mapping files depend downward only:
 * cli_hook_shell.c and cli_hook_tools.c build intents with these,
 * cli_hook_tools.c's table names the Bash mapping, and cli_hook_map.c
 * (the mapping file and the dispatch) sits above them all.
 */
#include "cli_hook.h"

#include <string.h>

const char *
cli_hook_string(const json_t *v)
{
    const char *s = json_string_value(v);

    if (s == NULL || strlen(s) != json_string_length(v))
        return NULL;
    return s;
}

enum ig_status
cli_hook_set_intent(json_t *body, const char *action, json_t *resource,
                    json_t *params, struct ig_err *err)
{
    enum ig_status st = IG_ERR_NOMEM;

    if (resource != NULL && params != NULL &&
        json_object_set(body, "resource", resource) == 0 &&
        json_object_set(body, "params", params) == 0 &&
        json_object_set_new(body, "action", json_string(action)) == 0)
        st = IG_OK;
    json_decref(resource);
    json_decref(params);
    if (st != IG_OK)
        return ig_err_set(err, st, "out of memory");
    return st;
}
