/*
 * pdp_util.c - the PDP's bottom layer: what every other file uses and
 * which itself uses nothing of the PDP: the log line, the monotonic
 * clock, the canonical JSON text of everything the PDP writes, and the
 * names of principal roles. Keeping these here (and not in the server or
 * the HTTP layer) is what lets the files above depend only downward
 * (pdp_int.h lists the layers).
 */
#include "pdp_int.h"

#include <time.h>

#include "ig_canon.h"
#include "ig_limits.h"
#include "ig_log.h"

void
pdp_log(const char *level, const char *event, json_t *fields)
{
    ig_log(level, event, fields);
}

double
pdp_mono_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *
pdp_json_text(const json_t *v)
{
    struct ig_buf b;

    ig_buf_init(&b, IG_CANON_MAX_BYTES);
    if (v == NULL || ig_canon_write(v, &b, NULL) != IG_OK) {
        ig_buf_release(&b);
        return NULL;
    }
    return ig_buf_take(&b, NULL);
}

json_t *
pdp_json_push(json_t *a, const char *v)
{
    /* json_array_append_new steals the string, NULL included. */
    if (a != NULL && json_array_append_new(a, json_string(v)) != 0) {
        json_decref(a);
        a = NULL;
    }
    return a;
}

const char *
pdp_role_name(enum pdp_role r)
{
    switch (r) {
    case PDP_ROLE_AGENT:
        return "agent";
    case PDP_ROLE_EXECUTOR:
        return "executor";
    case PDP_ROLE_ADMIN:
        return "admin";
    case PDP_ROLE_AUDITOR:
        return "auditor";
    case PDP_ROLE_NONE:
        break;
    }
    return "none";
}
