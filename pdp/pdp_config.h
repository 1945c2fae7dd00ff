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
 *   shadow_policy_dir = policies-next  (optional: evaluated after each
 *                                      live decision, never deciding)
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
 *   [approvals]                       (escalations; all optional)
 *   quorum = 1                        (default when a policy names none)
 *   session_idle = 900                (seconds)
 *   session_max = 28800
 *   login_max_failures = 5            (per approver and per client address
 *   login_window = 300                 in this many seconds)
 *   secure_cookies = false            (true behind TLS)
 *   [approver alice]
 *   name = Alice Example
 *   groups = finance, dba
 *   password_hash = $argon2id$...     (`intentgate approver add`)
 *   slack_user = U012ABC              (optional)
 *   agents = release-bot              (optional: the agent principals this
 *                                      person runs; they may not approve
 *                                      those agents' intents)
 *   [slack]                           (optional: notify and take clicks)
 *   api_url = https://slack.com/api
 *   channel = C012ABC
 *   bot_token_file = slack/bot-token  (0600; xoxb-...)
 *   signing_secret_file = slack/signing-secret (0600)
 *   ui_url = https://pdp.example.com  (optional: messages link the web
 *                                      page /ui/approvals/ID under it)
 *   [auditor compliance]              (reads the audit log, nothing else)
 *   token_sha256 = <64 hex digits>
 *   [audit]                           (the signed audit log; all optional)
 *   name = intentgate.local/audit     (log origin and checkpoint key name)
 *   key = keys/audit.key              (k4.secret, 0600; none: no checkpoints)
 *   checkpoint_every = 1000           (leaves)
 *   checkpoint_interval = 60          (seconds, when the log grew)
 *   hmac_key = keys/audit-hmac.key    (32 random bytes, base64url, 0600)
 *   redact = /card_number, /account/iban  (JSON pointers into params)
 *   anchor = /var/lib/intentgate-anchor/audit.checkpoint
 *                                     (the latest signed checkpoint, 0600,
 *                                     outside the database; default: key's
 *                                     path + ".checkpoint")
 *   [witness w1]                      (a witness that cosigns checkpoints;
 *                                      up to IG_WITNESS_MAX sections)
 *   url = https://w1.example/wit      (submission prefix: POST
 *                                      <url>/add-checkpoint)
 *   key = w1.example+1234abcd+BA...   (the witness's vkey, type 04, or a
 *                                      file holding it)
 *   timeout_ms = 10000                (whole request)
 *   retry_ms = 30000                  (between attempts while failing)
 *
 * and at the top, for refused requests and client addresses:
 *
 *   refusal_log_interval = 60         (seconds between *.refused events)
 *   trusted_proxies = 10.0.0.0/8, ::1 (whose X-Forwarded-For is believed)
 *
 * Tokens are never stored, only their SHA-256; a presented token is hashed
 * and compared in constant time. The syntax is core/ig_ini.h's (strict:
 * malformed lines, NUL bytes, overlong lines are errors). Everything is
 * validated at load; an error names the file and line. A loaded config is
 * immutable and may be read from any thread.
 */
#ifndef PDP_CONFIG_H
#define PDP_CONFIG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "audit_cosig.h"
#include "ig_error.h"
#include "pdp_addr.h"

/* A witness vkey: "<name>+<8 hex>+<base64 of 33 bytes>" and a NUL. */
#define PDP_WITNESS_VKEY_MAX (AUDIT_NAME_MAX + 1 + 8 + 1 + 44 + 1)

/* [witness ID] (pdp_config_witness.c): where to submit checkpoints and
   the key that must cosign them. */
struct pdp_witness_cfg {
    char *id;  /* the section's ID (metrics and log lines name it) */
    char *url; /* submission prefix, http(s), without a final '/' */
    struct audit_witness_key key;
    char vkey[PDP_WITNESS_VKEY_MAX]; /* key as text, for log lines */
    int64_t timeout_ms;              /* whole request */
    int64_t retry_ms;                /* between attempts while failing */
};

enum pdp_role {
    PDP_ROLE_NONE = 0,
    PDP_ROLE_AGENT,
    PDP_ROLE_EXECUTOR,
    PDP_ROLE_ADMIN,
    PDP_ROLE_AUDITOR /* reads the audit log: /v1/audit/..., /ui/audit */
};

struct pdp_principal {
    enum pdp_role role;
    char *id;
    char *tenant; /* agents only */
    unsigned char token_hash[32];
    char **actions; /* executors only: action prefixes handled */
    size_t nactions;
};

/* A human who may vote on escalations. Not a bearer-token principal: an
   approver logs in with a password (argon2id hash from crypto_pwhash_str)
   and gets a session. */
struct pdp_approver {
    char *id, *name;
    char **groups;
    size_t ngroups;
    char *password_hash;
    char *slack_user; /* NULL when none */
    /* [approver] agents: the agent principals this person runs (config,
       checked at load to name [agent] sections). Their intents are this
       person's own requests: self-approval is refused. */
    char **agents;
    size_t nagents;
};

struct pdp_config {
    char *path;
    char *listen_host;
    unsigned short listen_port;
    char *database, *signing_key, *policy_dir, *issuer;
    char *shadow_policy_dir; /* NULL: no shadow bundle (pdp_shadow.h) */
    char **public_keys;      /* extra verification keys (rotation) */
    size_t npublic_keys;
    int64_t intent_ttl, intent_ttl_max, grant_ttl, approval_ttl;
    int threads;
    int synchronous_full;
    size_t max_body_bytes;
    json_t *policy_settings; /* object */
    struct pdp_principal *principals;
    size_t nprincipals;

    struct pdp_approver *approvers;
    size_t napprovers;
    int approval_quorum;               /* [approvals] quorum, default 1 */
    int64_t session_idle, session_max; /* seconds: 900, 28800 */
    int login_max_failures;            /* 5 */
    int64_t login_window;              /* 300 s */
    int secure_cookies;                /* 0 */

    /* [slack]: all NULL when the section is absent. Paths are resolved
       against the config file's directory; the files are read at start. */
    char *slack_api_url; /* default https://slack.com/api */
    char *slack_channel;
    char *slack_bot_token_file;
    char *slack_signing_secret_file;
    char *slack_ui_url; /* NULL, or https://host[/path] without a final / */

    /* [audit] (pdp_config_audit.c). Paths resolved like the others; the
       key files are read by the server at start. */
    char *audit_name;            /* default intentgate.local/audit */
    char *audit_key;             /* NULL: no checkpoints are signed */
    int64_t checkpoint_every;    /* leaves, default 1000 */
    int64_t checkpoint_interval; /* seconds, default 60 */
    char *audit_hmac_key;        /* NULL: none (then no redact either) */
    char **redact;               /* JSON pointers into an intent's params */
    size_t nredact;
    char *audit_anchor; /* NULL iff no key; default key + ".checkpoint" */
    /* Not from the file: set by `serve` (--adopt-audit-anchor, --dev):
       what may replace an anchor the database disagrees with
       (enum store_anchor_adopt, store.h). */
    int audit_anchor_adopt;

    /* [witness ID] sections, in file order (at most IG_WITNESS_MAX; key
       names distinct). */
    struct pdp_witness_cfg *witnesses;
    size_t nwitnesses;

    /* [limits] (pdp_config_limits.c); defaults in ig_limits.h. */
    int64_t max_connections, max_per_address, request_timeout_ms;
    int64_t max_waiters, max_waiters_per_principal; /* 0: no long polls */
    int64_t max_write_queue;

    /* Refused requests and client addresses (pdp_config_keys.c). */
    int64_t refusal_log_interval; /* seconds, IG_REFUSAL_LOG_INTERVAL_DEFAULT */
    struct pdp_net *trusted_proxies; /* X-Forwarded-For believed from */
    size_t ntrusted_proxies;
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

/* The approver with this id / this Slack user id, or NULL. */
const struct pdp_approver *pdp_config_approver(const struct pdp_config *c,
                                               const char *id);
const struct pdp_approver *
pdp_config_approver_by_slack(const struct pdp_config *c, const char *user);
/* 1 when a is in group. */
int pdp_approver_in_group(const struct pdp_approver *a, const char *group);
/* 1 when the config says a runs the agent principal (a's agents =). */
int pdp_approver_runs(const struct pdp_approver *a, const char *principal);

/* The executor whose action prefixes match action (longest match), or
   NULL. */
const struct pdp_principal *pdp_config_executor_for(const struct pdp_config *c,
                                                    const char *action);

/* A new random token "igt_" + base64url(32 bytes) and its SHA-256 hex, for
   dev mode and `intentgate token`. out >= 48 bytes, hex >= 65. */
void pdp_token_new(char out[48], char hex[65]);

#endif
