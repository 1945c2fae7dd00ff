/*
 * cli_policy_settings.c - the `config` a bundle sees, for the policy
 * author's commands (test, eval, replay): a JSON file given with
 * --settings, or the [policy] section of the server's own config file
 * given with --config, read by pdp_config_load as the server reads it -
 * so a test, an explanation or a replay sees what production sees.
 */
#include "cmd_policy_int.h"

#include "ig_buf.h"
#include "ig_json.h"
#include "ig_limits.h"
#include "pdp_config.h"

/* The --settings object, or NULL after an error line. */
static json_t *
from_file(const char *cmd, const char *path)
{
    struct ig_buf in;
    struct ig_err err;
    json_t *v = NULL;

    ig_buf_init(&in, IG_JSON_MAX_BYTES);
    ig_err_clear(&err);
    if (cli_read_input(path, &in, &err) != IG_OK)
        cli_error(cmd, "--settings %s: %s", cli_input_name(path), err.msg);
    else if (ig_json_parse(in.data != NULL ? in.data : "", in.len, &v, &err) !=
             IG_OK)
        cli_error(cmd, "--settings %s: not JSON: %s", cli_input_name(path),
                  err.msg);
    else if (!json_is_object(v)) {
        cli_error(cmd, "--settings %s: must be a JSON object",
                  cli_input_name(path));
        json_decref(v);
        v = NULL;
    }
    ig_buf_release(&in);
    return v;
}

/* The [policy] settings of the server's config file, or NULL after an
   error line. */
static json_t *
from_config(const char *cmd, const char *path)
{
    struct pdp_config *c = NULL;
    struct ig_err err;
    json_t *v;

    ig_err_clear(&err);
    if (pdp_config_load(path, &c, &err) != IG_OK) {
        cli_error(cmd, "--config: %s", err.msg);
        return NULL;
    }
    v = c->policy_settings != NULL ? json_incref(c->policy_settings)
                                   : json_object();
    pdp_config_free(c);
    if (v == NULL)
        cli_error(cmd, "out of memory");
    return v;
}

int
cli_policy_settings(const char *cmd, const char *settings, const char *config,
                    json_t **out)
{
    *out = NULL;
    if (settings != NULL && config != NULL) {
        cli_error(cmd, "--settings and --config both give the settings: "
                       "use one");
        return -1;
    }
    if (settings != NULL)
        *out = from_file(cmd, settings);
    else if (config != NULL)
        *out = from_config(cmd, config);
    else
        return 0;
    return *out != NULL ? 0 : -1;
}
