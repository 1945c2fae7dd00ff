/*
 * exec_schema.c - an action's parameter schema: loading the specs from the
 * registry and checking an intent's params against them.
 *
 * A spec is {"type": T, "required": B, ...} with the rules its type allows:
 * string (pattern, max_length, enum), number and integer (min, max),
 * boolean, array (items, max_items, plus the string or number rules applied
 * to each element), object (max_keys). A rule its type does not allow is a
 * load error, so a spec never silently means less than it says.
 *
 * exec_params_check fails closed: params must be an object, every key must
 * be declared, every required parameter present, every value of its type
 * and within its rules. Strings holding a NUL byte are refused (regexec
 * would see only the part before it). Messages name the parameter and the
 * rule, never the value.
 */
#include "exec_registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_registry_int.h"
#include "ig_json.h"
#include "ig_limits.h"

#define INTEGER_LIMIT 9007199254740992.0 /* 2^53 */

static const char *const type_names[] = {
    NULL, "string", "number", "integer", "boolean", "array", "object"};

static enum exec_ptype
type_from_name(const json_t *v, int scalar_only)
{
    int t, last = scalar_only ? EXEC_PT_BOOLEAN : EXEC_PT_OBJECT;

    if (!json_is_string(v))
        return EXEC_PT_NONE;
    for (t = EXEC_PT_STRING; t <= last; t++)
        if (strcmp(json_string_value(v), type_names[t]) == 0)
            return (enum exec_ptype)t;
    return EXEC_PT_NONE;
}

/* ^[A-Za-z_][A-Za-z0-9_-]{0,63}$: usable inside {name} placeholders. */
static int
param_name_valid(const char *s)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (i >= IG_EXEC_PARAM_NAME_MAX ||
            !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              s[i] == '_' || (i > 0 && s[i] >= '0' && s[i] <= '9') ||
              (i > 0 && s[i] == '-')))
            return 0;
    return i > 0;
}

/* Which rule keys a spec of type t (items it for arrays) may carry. */
static int
rule_allowed(const char *key, enum exec_ptype t, enum exec_ptype it)
{
    enum exec_ptype scalar = t == EXEC_PT_ARRAY ? it : t;

    if (strcmp(key, "type") == 0 || strcmp(key, "required") == 0)
        return 1;
    if (strcmp(key, "pattern") == 0 || strcmp(key, "max_length") == 0 ||
        strcmp(key, "enum") == 0)
        return scalar == EXEC_PT_STRING;
    if (strcmp(key, "min") == 0 || strcmp(key, "max") == 0)
        return scalar == EXEC_PT_NUMBER || scalar == EXEC_PT_INTEGER;
    if (strcmp(key, "items") == 0 || strcmp(key, "max_items") == 0)
        return t == EXEC_PT_ARRAY;
    if (strcmp(key, "max_keys") == 0)
        return t == EXEC_PT_OBJECT;
    return -1;
}

static enum ig_status
load_pattern(const struct exec_reg_ctx *c, const char *key, const json_t *v,
             struct exec_param *p)
{
    char msg[128];
    int rc;

    if (!json_is_string(v) ||
        exec_reg_has_nul(json_string_value(v), json_string_length(v)))
        return exec_reg_fail(c, key, "must be a string");
    rc = regcomp(&p->re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        (void)regerror(rc, &p->re, msg, sizeof(msg));
        return exec_reg_fail(c, key, "does not compile: %s", msg);
    }
    p->has_re = 1;
    return IG_OK;
}

static enum ig_status
load_enum(const struct exec_reg_ctx *c, const char *key, const json_t *v,
          struct exec_param *p)
{
    const json_t *e;
    size_t i;

    if (!json_is_array(v) || json_array_size(v) == 0)
        return exec_reg_fail(c, key, "must be a non-empty array of strings");
    json_array_foreach(v, i, e) if (!json_is_string(e)) return exec_reg_fail(
        c, key, "must be a non-empty array of strings");
    p->enumv = v;
    return IG_OK;
}

static enum ig_status
load_bound(const struct exec_reg_ctx *c, const char *key, const json_t *v,
           int *has, double *out)
{
    if (v == NULL)
        return IG_OK;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return exec_reg_fail(c, key, "must be a number");
    *has = 1;
    *out = json_number_value(v);
    return IG_OK;
}

/* The size-like rules: max_length, max_items, max_keys. */
static enum ig_status
load_limits(const struct exec_reg_ctx *c, const char *prefix, json_t *spec,
            struct exec_param *p)
{
    enum exec_ptype scalar = p->type == EXEC_PT_ARRAY ? p->items : p->type;
    enum ig_status st = IG_OK;
    double d;

    p->max_length = IG_EXEC_PARAM_MAX_LENGTH_DEFAULT;
    p->max_items = IG_EXEC_PARAM_MAX_ITEMS_DEFAULT;
    p->max_keys = IG_EXEC_PARAM_MAX_KEYS_DEFAULT;
    if (scalar == EXEC_PT_STRING &&
        (st = exec_reg_get_int(c, spec, prefix, "max_length", 1,
                               IG_EXEC_MAX_STRING_CHARS,
                               IG_EXEC_PARAM_MAX_LENGTH_DEFAULT, &d)) == IG_OK)
        p->max_length = (size_t)d;
    if (st == IG_OK && p->type == EXEC_PT_ARRAY &&
        (st = exec_reg_get_int(c, spec, prefix, "max_items", 1,
                               IG_JSON_MAX_ARRAY_LENGTH,
                               IG_EXEC_PARAM_MAX_ITEMS_DEFAULT, &d)) == IG_OK)
        p->max_items = (size_t)d;
    if (st == IG_OK && p->type == EXEC_PT_OBJECT &&
        (st = exec_reg_get_int(c, spec, prefix, "max_keys", 1,
                               IG_JSON_MAX_OBJECT_MEMBERS,
                               IG_EXEC_PARAM_MAX_KEYS_DEFAULT, &d)) == IG_OK)
        p->max_keys = (size_t)d;
    return st;
}

/* Type, required and the keys each type allows. */
static enum ig_status
load_shape(const struct exec_reg_ctx *c, const char *prefix, const json_t *spec,
           struct exec_param *p)
{
    const json_t *req = json_object_get(spec, "required"), *v;
    char key[200];
    const char *k;
    int ok;

    (void)snprintf(key, sizeof(key), "%s.type", prefix);
    p->type = type_from_name(json_object_get(spec, "type"), 0);
    if (p->type == EXEC_PT_NONE)
        return exec_reg_fail(c, key,
                             "must be one of string, number, integer, "
                             "boolean, array, object");
    (void)snprintf(key, sizeof(key), "%s.items", prefix);
    if (p->type == EXEC_PT_ARRAY) {
        p->items = type_from_name(json_object_get(spec, "items"), 1);
        if (p->items == EXEC_PT_NONE)
            return exec_reg_fail(c, key,
                                 "must be one of string, number, "
                                 "integer, boolean");
    }
    (void)snprintf(key, sizeof(key), "%s.required", prefix);
    if (req != NULL && !json_is_boolean(req))
        return exec_reg_fail(c, key, "must be true or false");
    p->required = json_is_true(req);
    json_object_foreach(ig_json_unconst(spec), k, v)
    {
        ok = rule_allowed(k, p->type, p->items);
        if (ok < 0) {
            (void)snprintf(key, sizeof(key), "%s.%.64s", prefix, k);
            return exec_reg_fail(c, key, "unknown key");
        }
        if (ok == 0)
            return exec_reg_fail(c, prefix, "\"%s\" is not allowed for type %s",
                                 k, type_names[p->type]);
    }
    return IG_OK;
}

static enum ig_status
load_param(const struct exec_reg_ctx *c, const char *name, json_t *spec,
           struct exec_param *p)
{
    char prefix[96], key[160];
    enum ig_status st;
    json_t *v;

    (void)snprintf(prefix, sizeof(prefix), "params.%.64s", name);
    if (!param_name_valid(name))
        return exec_reg_fail(
            c, prefix, "invalid name: want ^[A-Za-z_][A-Za-z0-9_-]{0,63}$");
    if (!json_is_object(spec))
        return exec_reg_fail(c, prefix, "must be an object");
    if ((p->name = strdup(name)) == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    if ((st = load_shape(c, prefix, spec, p)) != IG_OK)
        return st;
    (void)snprintf(key, sizeof(key), "%s.pattern", prefix);
    if ((v = json_object_get(spec, "pattern")) != NULL &&
        (st = load_pattern(c, key, v, p)) != IG_OK)
        return st;
    (void)snprintf(key, sizeof(key), "%s.enum", prefix);
    if ((v = json_object_get(spec, "enum")) != NULL &&
        (st = load_enum(c, key, v, p)) != IG_OK)
        return st;
    (void)snprintf(key, sizeof(key), "%s.min", prefix);
    if ((st = load_bound(c, key, json_object_get(spec, "min"), &p->has_min,
                         &p->min)) != IG_OK)
        return st;
    (void)snprintf(key, sizeof(key), "%s.max", prefix);
    if ((st = load_bound(c, key, json_object_get(spec, "max"), &p->has_max,
                         &p->max)) != IG_OK)
        return st;
    if (p->has_min && p->has_max && p->min > p->max)
        return exec_reg_fail(c, key, "must not be less than min");
    return load_limits(c, prefix, spec, p);
}

enum ig_status
exec_schema_load(const struct exec_reg_ctx *c, const json_t *params,
                 struct exec_action *a)
{
    enum ig_status st;
    const char *name;
    json_t *spec;

    if (params == NULL)
        return IG_OK;
    if (json_object_size(params) > IG_EXEC_MAX_PARAMS)
        return exec_reg_fail(c, "params", "more than %d parameters",
                             IG_EXEC_MAX_PARAMS);
    a->params = calloc(json_object_size(params) + 1, sizeof(*a->params));
    if (a->params == NULL)
        return ig_err_set(c->err, IG_ERR_NOMEM, "out of memory");
    json_object_foreach(ig_json_unconst(params), name, spec)
    {
        st = load_param(c, name, spec, &a->params[a->nparams]);
        a->nparams++; /* counted even on failure, so it is released */
        if (st != IG_OK)
            return st;
    }
    return IG_OK;
}

void
exec_param_release(struct exec_param *p)
{
    free(p->name);
    if (p->has_re)
        regfree(&p->re);
    p->has_re = 0;
}

const struct exec_param *
exec_param_find(const struct exec_action *a, const char *name)
{
    size_t i;

    for (i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].name, name) == 0)
            return &a->params[i];
    return NULL;
}

/* ---- checking ---- */

/* Characters in valid UTF-8: bytes that do not continue a sequence. */
static size_t
utf8_chars(const char *s, size_t len)
{
    size_t i, n = 0;

    for (i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            n++;
    return n;
}

static int
in_enum(const json_t *enumv, const char *s, size_t len)
{
    const json_t *e;
    size_t i;

    json_array_foreach(enumv, i, e) if (json_string_length(e) == len &&
                                        memcmp(json_string_value(e), s, len) ==
                                            0) return 1;
    return 0;
}

static enum ig_status
check_string(const struct exec_param *p, const char *where, const json_t *v,
             struct ig_err *err)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);

    if (!json_is_string(v))
        return ig_err_set(err, IG_ERR_INVALID, "%s: must be a string", where);
    if (exec_reg_has_nul(s, len))
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: must not contain a NUL character", where);
    if (utf8_chars(s, len) > p->max_length)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: longer than max_length %zu characters", where,
                          p->max_length);
    if (p->enumv != NULL && !in_enum(p->enumv, s, len))
        return ig_err_set(err, IG_ERR_INVALID, "%s: not one of the enum values",
                          where);
    if (p->has_re && regexec(&p->re, s, 0, NULL, 0) != 0)
        return ig_err_set(err, IG_ERR_INVALID, "%s: does not match pattern",
                          where);
    return IG_OK;
}

static enum ig_status
check_number(const struct exec_param *p, enum exec_ptype t, const char *where,
             const json_t *v, struct ig_err *err)
{
    double d;

    if (!json_is_number(v))
        return ig_err_set(err, IG_ERR_INVALID, "%s: must be %s", where,
                          t == EXEC_PT_INTEGER ? "an integer" : "a number");
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i > (json_int_t)INTEGER_LIMIT || i < -(json_int_t)INTEGER_LIMIT)
            return ig_err_set(err, IG_ERR_INVALID, "%s: magnitude over 2^53",
                              where);
    }
    d = json_number_value(v);
    if (!isfinite(d))
        return ig_err_set(err, IG_ERR_INVALID, "%s: must be finite", where);
    if (t == EXEC_PT_INTEGER && (trunc(d) != d || fabs(d) > INTEGER_LIMIT))
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: must be an integer of magnitude at most 2^53",
                          where);
    if (p->has_min && !(d >= p->min))
        return ig_err_set(err, IG_ERR_INVALID, "%s: less than min %.17g", where,
                          p->min);
    if (p->has_max && !(d <= p->max))
        return ig_err_set(err, IG_ERR_INVALID, "%s: more than max %.17g", where,
                          p->max);
    return IG_OK;
}

/* One value of scalar type t (a parameter, or an array element). */
static enum ig_status
check_scalar(const struct exec_param *p, enum exec_ptype t, const char *where,
             const json_t *v, struct ig_err *err)
{
    switch (t) {
    case EXEC_PT_STRING:
        return check_string(p, where, v, err);
    case EXEC_PT_NUMBER:
    case EXEC_PT_INTEGER:
        return check_number(p, t, where, v, err);
    case EXEC_PT_BOOLEAN:
        if (json_is_boolean(v))
            return IG_OK;
        return ig_err_set(err, IG_ERR_INVALID, "%s: must be a boolean", where);
    default:
        break;
    }
    return ig_err_set(err, IG_ERR_INVALID, "%s: not a checkable type", where);
}

static enum ig_status
check_value(const struct exec_param *p, const json_t *v, struct ig_err *err)
{
    char where[112];
    enum ig_status st;
    const json_t *e;
    size_t i;

    (void)snprintf(where, sizeof(where), "parameter \"%s\"", p->name);
    if (p->type == EXEC_PT_OBJECT) {
        if (!json_is_object(v))
            return ig_err_set(err, IG_ERR_INVALID, "%s: must be an object",
                              where);
        if (json_object_size(v) > p->max_keys)
            return ig_err_set(err, IG_ERR_INVALID,
                              "%s: more than max_keys %zu keys", where,
                              p->max_keys);
        return IG_OK;
    }
    if (p->type != EXEC_PT_ARRAY)
        return check_scalar(p, p->type, where, v, err);
    if (!json_is_array(v))
        return ig_err_set(err, IG_ERR_INVALID, "%s: must be an array", where);
    if (json_array_size(v) > p->max_items)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: more than max_items %zu items", where,
                          p->max_items);
    json_array_foreach(v, i, e)
    {
        (void)snprintf(where, sizeof(where), "parameter \"%s\"[%zu]", p->name,
                       i);
        if ((st = check_scalar(p, p->items, where, e, err)) != IG_OK)
            return st;
    }
    return IG_OK;
}

enum ig_status
exec_params_check(const struct exec_action *a, const json_t *params,
                  struct ig_err *err)
{
    const struct exec_param *p;
    enum ig_status st;
    const char *k;
    json_t *v;
    size_t i;

    if (a == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "unknown action");
    if (!json_is_object(params))
        return ig_err_set(err, IG_ERR_INVALID, "params: must be an object");
    json_object_foreach(ig_json_unconst(params), k, v)
    {
        p = exec_param_find(a, k);
        if (p == NULL)
            return ig_err_set(err, IG_ERR_INVALID,
                              "unknown parameter \"%.64s\"", k);
        if ((st = check_value(p, v, err)) != IG_OK)
            return st;
    }
    for (i = 0; i < a->nparams; i++)
        if (a->params[i].required &&
            json_object_get(params, a->params[i].name) == NULL)
            return ig_err_set(err, IG_ERR_INVALID,
                              "missing required parameter \"%s\"",
                              a->params[i].name);
    return IG_OK;
}
