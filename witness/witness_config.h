/*
 * witness_config.h - the config of `intentgate witness serve`, a C2SP
 * tlog-witness (docs/witness.md):
 *
 *   [witness]
 *   name = witness.example.org/w1     the cosignature key name
 *   key = /etc/intentgate-witness/witness.key    k4.secret, mode 0600
 *   listen = 127.0.0.1:8801           (port 0: any free port)
 *   database = /var/lib/intentgate-witness/state.db
 *   rate = 10                         add-checkpoint requests a second per
 *                                     client address (burst: twice that)
 *   threads = 2                       HTTP threads
 *
 *   [limits]                          optional, as the PDP's [limits]
 *   max_connections = 256
 *   max_connections_per_address = 64
 *   request_timeout_ms = 10000
 *
 *   [log intentgate.example/audit]    one per log; the id is its origin
 *   key = <the log's vkey (type 01), named as the origin> or a file
 *         holding it; several, separated by spaces, while the log
 *         rotates its key
 *
 * Relative paths are taken from the config file's directory. Errors name
 * the file and line. The witness's own key is read by the server, not
 * here: the config holds no secret.
 */
#ifndef WITNESS_CONFIG_H
#define WITNESS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "audit_note.h"
#include "ig_error.h"

/* The witness's limits (not in ig_limits.h, which is shared: the witness
   is a module of its own). */
#define WITNESS_LOGS_MAX 1000 /* [log] sections */
#define WITNESS_RATE_MAX 100000
#define WITNESS_RATE_DEFAULT 10
#define WITNESS_THREADS_MAX 64
#define WITNESS_MAX_CONNECTIONS 256
#define WITNESS_MAX_PER_ADDRESS 64
#define WITNESS_REQUEST_TIMEOUT_MS 10000
/* Evidence rows kept per origin; later ones are only counted. */
#define WITNESS_EVIDENCE_MAX 1000
/* Client addresses the rate limiter remembers. */
#define WITNESS_RATE_CLIENTS 4096
/* A file holding a log's vkey, bytes. */
#define WITNESS_VKEY_FILE_MAX 4096
/* Keys one log may have at once (while it rotates its key). */
#define WITNESS_LOG_KEYS_MAX 4
#define WITNESS_DEFAULT_LISTEN "127.0.0.1:8801"

struct witness_log {
    char origin[AUDIT_NAME_MAX + 1];
    /* its keys, each named as the origin (several while it rotates) */
    struct audit_verifier keys[WITNESS_LOG_KEYS_MAX];
    size_t nkeys;
    char origin_hex[65]; /* lowercase hex SHA-256(origin) */
};

struct witness_config {
    char *path;
    char *name;     /* the cosignature key name */
    char *key_path; /* the k4.secret file */
    char *listen_host;
    unsigned short listen_port;
    char *database;
    int64_t rate; /* add-checkpoint requests a second per address */
    int64_t threads;
    int64_t max_connections, max_per_address, request_timeout_ms;
    struct witness_log *logs;
    size_t nlogs;
};

/* Read and check the config at path. IG_ERR_INVALID with err naming the
   file and line, IG_ERR_IO (cannot read it or a key file), IG_ERR_NOMEM. */
enum ig_status witness_config_load(const char *path,
                                   struct witness_config **out,
                                   struct ig_err *err) IG_WUR;

/* NULL is fine. */
void witness_config_free(struct witness_config *c);

/* The [log] whose origin is origin[0..len), or NULL. */
const struct witness_log *witness_config_log(const struct witness_config *c,
                                             const char *origin, size_t len);

/* The [log] whose origin hashes to hex (64 lowercase hex digits), or
   NULL. */
const struct witness_log *
witness_config_log_by_hash(const struct witness_config *c, const char *hex,
                           size_t len);

#endif
