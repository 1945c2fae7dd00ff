/*
 * pdp_config.h - the PDP's configuration file.
 *
 * An INI-style text file (docs/operations.md has the reference):
 *
 *   # comment
 *   listen = 127.0.0.1:8700
 *   database = intentgate.db          (relative paths: to the file's dir)
 *   signing_key = keys/signing.key
 *   policy_dir = policies
 *   [policy]                          (settings visible to policies)
 *   quota_per_minute = 600
 *   [agent release-bot]
 *   tenant = acme
 *   token_sha256 = <64 hex digits>
 *   [executor executor-1]
 *   token_sha256 = <64 hex digits>
 *   actions = payments., shell.exec
 *   [admin ops]
 *   token_sha256 = <64 hex digits>
 *
 * Tokens are never stored, only their SHA-256; a presented token is hashed
 * and compared in constant time. Everything is validated at load; an error
 * names the file and line. A loaded config is immutable and may be read
 * from any thread.
 */
#ifndef PDP_CONFIG_H
#define PDP_CONFIG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"

enum pdp_role {
    PDP_ROLE_NONE = 0,
    PDP_ROLE_AGENT,
    PDP_ROLE_EXECUTOR,
    PDP_ROLE_ADMIN
};

struct pdp_principal {
    enum pdp_role role;
    char *id;
    char *tenant; /* agents only */
    unsigned char token_hash[32];
    char **actions; /* executors only: action prefixes handled */
    size_t nactions;
};

struct pdp_config {
    char *path;
    char *listen_host;
    unsigned short listen_port;
    char *database, *signing_key, *policy_dir, *issuer;
    char **public_keys; /* extra verification keys (rotation) */
    size_t npublic_keys;
    int64_t intent_ttl, intent_ttl_max, grant_ttl, approval_ttl;
    int threads;
    int synchronous_full;
    size_t max_body_bytes;
    json_t *policy_settings; /* object */
    struct pdp_principal *principals;
    size_t nprincipals;
};

/* Load and validate. IG_ERR_INVALID / IG_ERR_IO with "FILE:LINE: …". */
enum ig_status pdp_config_load(const char *path, struct pdp_config **out,
                               struct ig_err *err) IG_WUR;

void pdp_config_free(struct pdp_config *c);

/*
 * The principal whose token this is, or NULL. Hashes the token and compares
 * it with every configured hash in constant time.
 */
const struct pdp_principal *pdp_config_authenticate(const struct pdp_config *c,
                                                    const char *token,
                                                    size_t len);

/* The executor whose action prefixes match action (longest match), or
   NULL. */
const struct pdp_principal *pdp_config_executor_for(const struct pdp_config *c,
                                                    const char *action);

/* A new random token "igt_" + base64url(32 bytes) and its SHA-256 hex, for
   dev mode and `intentgate token`. out >= 48 bytes, hex >= 65. */
void pdp_token_new(char out[48], char hex[65]);

#endif
