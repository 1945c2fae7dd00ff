/*
 * exec_config.h - the executor's configuration file: flat "key = value"
 * lines, "#" comments; relative paths are relative to the file. Checked
 * completely at load; an error names the file and line.
 *
 *   id = payments-executor              # the grants' aud it accepts
 *   listen = 127.0.0.1:8701
 *   pdp_url = http://127.0.0.1:8700
 *   pdp_token_file = pdp.token          # 0600; else INTENTGATE_EXECUTOR_TOKEN
 *   pdp_public_keys = keys/pdp.pub, keys/pdp-old.pub
 *   registry = registry.json
 *   secrets = secrets.enc
 *   secrets_key = secrets.key           # 0600; else the environment
 *   work_dir = work                     # scratch dirs for exec actions
 *   max_concurrent = 32                 # executions at once (429 above)
 *   pdp_timeout_ms = 5000
 */
#ifndef EXEC_CONFIG_H
#define EXEC_CONFIG_H

#include <stddef.h>

#include "ig_error.h"

struct exec_config {
    char *path, *id, *listen_host, *pdp_url, *pdp_token_file;
    unsigned short listen_port;
    char **public_keys;
    size_t npublic_keys;
    char *registry, *secrets, *secrets_key, *work_dir;
    long max_concurrent, pdp_timeout_ms;
};

enum ig_status exec_config_load(const char *path, struct exec_config **out,
                                struct ig_err *err) IG_WUR;
void exec_config_free(struct exec_config *c);

#endif
