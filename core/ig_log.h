/*
 * ig_log.h - one JSON object per line on stderr: the log format of the
 * PDP and the executor, so a log shipper reads each line on its own.
 */
#ifndef IG_LOG_H
#define IG_LOG_H

#include <jansson.h>

/*
 * Write {"time","level","event", ...fields} as one line on stderr, keys
 * sorted. fields (may be NULL) is stolen. Thread safe: lines never
 * interleave. Never pass a secret or an upstream body in fields. Out of
 * memory, the line is replaced by {"event":"log_lost", "lost_event":
 * event, ...}: never written without some of its fields.
 */
void ig_log(const char *level, const char *event, json_t *fields);

#endif
