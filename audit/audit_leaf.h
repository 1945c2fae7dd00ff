/*
 * audit_leaf.h - reading one field of an audit leaf without parsing it:
 * the event's top-level "time", which `intentgate audit verify` needs for
 * every leaf (unsigned leaves' age, gaps, late checkpoints) at the speed
 * it hashes them.
 *
 * A leaf is an event's canonical JSON object (RFC 8785), but a leaf read
 * from a database or an export is untrusted: the scan is depth-aware (a
 * "time" inside params is not the event's), bounded by len, allocates
 * nothing and never recurses. Thread safe.
 */
#ifndef AUDIT_LEAF_H
#define AUDIT_LEAF_H

#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

/*
 * The value of the first top-level member "time" of the JSON object in
 * leaf[0..len), as seconds since the epoch (the value must be a string in
 * ig_time_format's form, "YYYY-MM-DDTHH:MM:SSZ", with no escapes).
 * IG_OK with *t; IG_ERR_NOTFOUND when the object has no such member or
 * its value is not such a string; IG_ERR_INVALID when the text is not a
 * JSON object as far as the scan reads (it stops at the member). *t is
 * left alone unless IG_OK.
 */
enum ig_status audit_leaf_time(const char *leaf, size_t len, int64_t *t) IG_WUR;

#endif
