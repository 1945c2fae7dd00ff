/*
 * witness.h - `intentgate witness serve`: a C2SP tlog-witness over HTTP
 * (docs/witness.md).
 *
 *   POST /add-checkpoint            a log's new checkpoint (witness_add.h)
 *   GET  /<hex SHA-256(origin)>/checkpoint   the latest one cosigned
 *   GET  /healthz                   "ok"
 *
 * witness_start loads the witness's key, opens its state and listens;
 * witness_stop stops listening (requests in flight are answered), then
 * closes the state. The start is logged as one JSON line,
 * witness.started, with the port bound and the witness's vkey.
 */
#ifndef WITNESS_H
#define WITNESS_H

#include "audit_cosig.h"
#include "ig_error.h"
#include "witness_config.h"

/* A witness vkey: name, '+', 8 hex digits, '+', base64 of 33 bytes. */
#define WITNESS_OWN_VKEY_MAX (AUDIT_NAME_MAX + 64)

struct witness;

/* Start the witness c describes (c must outlive it). IG_ERR_IO (key,
   database, cannot listen), IG_ERR_INVALID, IG_ERR_NOMEM, err naming
   what. */
enum ig_status witness_start(const struct witness_config *c,
                             struct witness **out, struct ig_err *err) IG_WUR;

/* The port bound. */
unsigned short witness_port(const struct witness *w);

/* Stop and free. NULL is fine. */
void witness_stop(struct witness *w);

/* The vkey of the witness c describes, read from its key file, into out
   (cap >= WITNESS_OWN_VKEY_MAX + 1). IG_ERR_IO (the key file: missing,
   not private, not a k4.secret), IG_ERR_INVALID. */
enum ig_status witness_vkey(const struct witness_config *c, char *out,
                            size_t cap, struct ig_err *err) IG_WUR;

#endif
