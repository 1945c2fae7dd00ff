/*
 * exec_config.h - the executor's configuration file: flat "key = value"
 * lines, "#" comments, no sections (read by core/ig_ini.c); relative
 * paths are relative to the file. Checked completely at load: unknown or
 * repeated keys (but protect and pdp_public_keys, which add to their
 * lists) and bad values are errors naming the file and line.
 *
 *   id = payments-executor              # the grants' aud it accepts
 *   listen = 127.0.0.1:8701
 *   pdp_url = http://127.0.0.1:8700
 *   pdp_token_file = pdp.token          # 0600; else INTENTGATE_EXECUTOR_TOKEN
 *   pdp_public_keys = keys/pdp.pub, keys/pdp-old.pub
 *   registry = registry.json
 *   secrets = secrets.enc
 *   secrets_key = secrets.key           # 0600; else the environment
 *   work_dir = work                     # scratch dirs (sandbox = none)
 *   spool_dir = spool                   # outcomes not yet acknowledged
 *   sandbox_user = nobody               # or self, NAME, UID:GID
 *   protect = /var/lib/intentgate       # more paths the sandbox must not see
 *   max_concurrent = 32                 # executions at once (429 above)
 *   pdp_timeout_ms = 5000
 *   threads = 2                         # HTTP polling threads
 *   max_connections = 4096              # open connections in all
 *   max_connections_per_address = 2048
 *   request_timeout_ms = 10000          # a request's headers and body
 *   outcome_retry_ms = 500              # first retry; doubles up to 60 s
 *   mcp_pins = mcp-pins.jsonl           # the MCP gateway's pinned tools
 *   mcp_escalation_wait_ms = 60000      # hold an escalated tools/call
 *   mcp_approval_url = https://pdp.example/ui/approvals/  # + approval id
 *   mcp_max_sessions = 1024
 */
#ifndef EXEC_CONFIG_H
#define EXEC_CONFIG_H

#include <stddef.h>
#include <sys/types.h>

#include "ig_error.h"
#include "ig_limits.h"

/* The most paths `protect` may list (the limit lives in ig_limits.h). */
#define EXEC_PROTECT_MAX IG_EXEC_PROTECT_MAX

struct exec_config {
    char *path, *id, *listen_host, *pdp_url, *pdp_token_file;
    unsigned short listen_port;
    char **public_keys;
    size_t npublic_keys;
    char *registry, *secrets, *secrets_key, *work_dir, *spool_dir;
    char **protect; /* absolute paths the sandbox must never see */
    size_t nprotect;
    /* sandbox_user: self (no switch), or the host uid/gid to run as. */
    int sandbox_self;
    uid_t sandbox_uid;
    gid_t sandbox_gid;
    char *sandbox_user; /* as written, for messages */
    long max_concurrent, pdp_timeout_ms, threads, max_connections,
        max_per_address, request_timeout_ms, outcome_retry_ms;
    /* The MCP gateway (docs/mcp.md). */
    char *mcp_pins, *mcp_approval_url; /* approval URL: NULL when unset */
    long mcp_wait_ms, mcp_max_sessions;
};

enum ig_status exec_config_load(const char *path, struct exec_config **out,
                                struct ig_err *err) IG_WUR;
void exec_config_free(struct exec_config *c);

#endif
