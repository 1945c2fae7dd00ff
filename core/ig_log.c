/*
 * ig_log.c - JSON log lines on stderr (see ig_log.h).
 */
#include "ig_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ig_time.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

void
ig_log(const char *level, const char *event, json_t *fields)
{
    char when[IG_TIME_STRLEN + 1] = "";
    json_t *line = fields != NULL ? fields : json_object();
    char *s;

    if (line == NULL)
        return;
    if (ig_time_format(ig_time_now(), when) != IG_OK)
        when[0] = '\0';
    /* json_object_set_new steals each new string. */
    (void)json_object_set_new(line, "time", json_string(when));
    (void)json_object_set_new(line, "level", json_string(level));
    (void)json_object_set_new(line, "event", json_string(event));
    s = json_dumps(line, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(line);
    if (s == NULL)
        return;
    pthread_mutex_lock(&log_mu);
    (void)fprintf(stderr, "%s\n", s);
    (void)fflush(stderr);
    pthread_mutex_unlock(&log_mu);
    free(s);
}
