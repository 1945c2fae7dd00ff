/*
 * exec_registry_util.c - what every part of the registry loader shares:
 * errors naming the file, the action and the key; unknown-key refusal;
 * integer settings with their defaults. The leaf of exec_registry.c,
 * exec_schema.c, exec_settings.c and exec_binds.c: it calls none of them,
 * so those files depend downward only.
 */
#include "exec_registry_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ig_json.h"

enum ig_status
exec_reg_fail(const struct exec_reg_ctx *c, const char *key, const char *fmt,
              ...)
{
    char msg[IG_ERR_MSGMAX];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->action != NULL && key != NULL)
        return ig_err_set(c->err, IG_ERR_INVALID,
                          "%s: action \"%.64s\": %s: %s", c->file, c->action,
                          key, msg);
    if (c->action != NULL)
        return ig_err_set(c->err, IG_ERR_INVALID, "%s: action \"%.64s\": %s",
                          c->file, c->action, msg);
    if (key != NULL)
        return ig_err_set(c->err, IG_ERR_INVALID, "%s: %s: %s", c->file, key,
                          msg);
    return ig_err_set(c->err, IG_ERR_INVALID, "%s: %s", c->file, msg);
}

int
exec_reg_has_nul(const char *s, size_t len)
{
    return memchr(s, '\0', len) != NULL;
}

enum ig_status
exec_reg_check_keys(const struct exec_reg_ctx *c, const json_t *obj,
                    const char *prefix, const char *const *allowed)
{
    char key[160];
    const char *k;
    json_t *v;
    size_t i;

    json_object_foreach(ig_json_unconst(obj), k, v)
    {
        for (i = 0; allowed[i] != NULL; i++)
            if (strcmp(k, allowed[i]) == 0)
                break;
        if (allowed[i] == NULL) {
            (void)snprintf(key, sizeof(key), "%s%s%.64s", prefix,
                           prefix[0] != '\0' ? "." : "", k);
            return exec_reg_fail(c, key, "unknown key");
        }
    }
    return IG_OK;
}

enum ig_status
exec_reg_get_int(const struct exec_reg_ctx *c, json_t *obj, const char *prefix,
                 const char *name, double lo, double hi, double def,
                 double *out)
{
    char key[160];
    json_t *v = json_object_get(obj, name);
    double d;

    (void)snprintf(key, sizeof(key), "%s.%s", prefix, name);
    if (v == NULL) {
        /* json_object_set_new steals the new real. */
        if (json_object_set_new(obj, name, json_real(def)) != 0)
            return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
        *out = def;
        return IG_OK;
    }
    if (!json_is_number(v))
        return exec_reg_fail(c, key, "must be an integer");
    d = json_number_value(v);
    if (!isfinite(d) || trunc(d) != d)
        return exec_reg_fail(c, key, "must be an integer");
    if (d < lo || d > hi)
        return exec_reg_fail(c, key, "must be between %.0f and %.0f", lo, hi);
    *out = d;
    return IG_OK;
}
