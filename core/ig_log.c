/*
 * ig_log.c - JSON log lines on stderr (see ig_log.h).
 */
#include "ig_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ig_time.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void
log_write(const char *s)
{
    pthread_mutex_lock(&log_mu);
    (void)fprintf(stderr, "%s\n", s);
    (void)fflush(stderr);
    pthread_mutex_unlock(&log_mu);
}

/* 1 when s may be printed inside a JSON string as it is. */
static int
log_plain(const char *s)
{
    for (; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.' || *s == '-'))
            return 0;
    return 1;
}

/* Out of memory: say a line was lost (and which event) rather than write
   it without the fields it lost, or not at all. Allocates nothing. */
static void
log_lost(const char *event)
{
    char line[160];
    int n = snprintf(line, sizeof(line),
                     "{\"event\":\"log_lost\",\"level\":\"error\","
                     "\"lost_event\":\"%.64s\",\"reason\":\"out of memory\"}",
                     log_plain(event) ? event : "?");

    if (n > 0 && (size_t)n < sizeof(line))
        log_write(line);
}

void
ig_log(const char *level, const char *event, json_t *fields)
{
    char when[IG_TIME_STRLEN + 1] = "";
    json_t *line = fields != NULL ? fields : json_object();
    char *s = NULL;

    if (ig_time_format(ig_time_now(), when) != IG_OK)
        when[0] = '\0';
    /* json_object_set_new steals each new string, even on failure (a
       NULL string from json_string makes it fail). */
    if (line != NULL &&
        json_object_set_new(line, "time", json_string(when)) == 0 &&
        json_object_set_new(line, "level", json_string(level)) == 0 &&
        json_object_set_new(line, "event", json_string(event)) == 0)
        s = json_dumps(line, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(line);
    if (s == NULL) {
        log_lost(event);
        return;
    }
    log_write(s);
    free(s);
}
