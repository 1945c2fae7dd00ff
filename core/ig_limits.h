/*
 * ig_limits.h - every size, count and time limit of intentgate in one place.
 *
 * Untrusted input is bounded before it is trusted: a request body, a JSON
 * document, a token. Later modules (PDP, policies, approvals) add their
 * limits here too, so an operator reading this file sees all of them.
 */
#ifndef IG_LIMITS_H
#define IG_LIMITS_H

/* ---- JSON input (core/ig_json.c) ---- */

/* Largest JSON text accepted, in bytes. */
#define IG_JSON_MAX_BYTES (1024 * 1024)
/* Deepest nesting of arrays and objects; the top-level value is depth 1. */
#define IG_JSON_MAX_DEPTH 32
/* Most members in one object. */
#define IG_JSON_MAX_OBJECT_MEMBERS 1024
/* Most elements in one array. */
#define IG_JSON_MAX_ARRAY_LENGTH 4096
/* Most values (scalars, arrays, objects) in one document. */
#define IG_JSON_MAX_VALUES 65536

/* ---- Canonical output (core/ig_canon.c) ---- */

/* Largest canonical form produced, in bytes. */
#define IG_CANON_MAX_BYTES (2 * 1024 * 1024)

/* ---- Tokens and keys (core/ig_paseto.c, core/ig_key.c) ---- */

/* Largest PASETO token accepted or produced, in bytes. */
#define IG_TOKEN_MAX_BYTES 8192
/* Largest key file read, in bytes. */
#define IG_KEYFILE_MAX_BYTES 4096

/* ---- Policies (policies/) ---- */

/* Lua heap per evaluating engine (all compiled policies + one evaluation). */
#define IG_POLICY_MEMORY_BYTES (16 * 1024 * 1024)
/* Lua VM instructions per evaluation, all policy files together. */
#define IG_POLICY_INSTRUCTIONS 1000000
/* Wall-clock budget per evaluation, in microseconds. */
#define IG_POLICY_WALL_US 50000
/* Longest string a policy may build or search (string.rep, concat, find). */
#define IG_POLICY_STRING_MAX (64 * 1024)
/* Most policy files in a bundle, and largest policy file. */
#define IG_POLICY_MAX_FILES 256
#define IG_POLICY_FILE_MAX_BYTES (256 * 1024)

/* ---- Executor action registry (executor/exec_registry.c) ---- */

/* Largest registry file, in bytes. */
#define IG_EXEC_REGISTRY_MAX_BYTES (1024 * 1024)
/* Most parameters one action declares. */
#define IG_EXEC_MAX_PARAMS 256
/* Largest max_length a string parameter may declare, in characters. */
#define IG_EXEC_MAX_STRING_CHARS (1024 * 1024)
/* Largest max_response_bytes / max_output_bytes a handler may declare. */
#define IG_EXEC_MAX_OUTPUT_BYTES (16 * 1024 * 1024)
/* Most elements in an exec handler's argv template. */
#define IG_EXEC_MAX_ARGV 256
/* Most extra binds one exec action's sandbox may declare. */
#define IG_EXEC_MAX_BINDS 16
/* Size of the sandbox's /scratch and /tmp (each a tmpfs): the default and
   the largest scratch_bytes an action may declare. */
#define IG_EXEC_SCRATCH_DEFAULT (64ULL * 1024 * 1024)
#define IG_EXEC_SCRATCH_MAX (4ULL * 1024 * 1024 * 1024)

/* ---- Executor outcomes and responses (executor/exec_response.c,
   exec_spool.c; the PDP's POST /v1/executions/{id}/outcome) ---- */

/* Largest outcome detail, canonical JSON bytes: the executor shrinks its
   details to fit (digests and capped excerpts) and the PDP stores a larger
   one as a digest stub. */
#define IG_OUTCOME_DETAIL_MAX_BYTES (16 * 1024)
/* Most response_fields one http action returns, and the largest value of
   one field (canonical JSON bytes; larger ones are omitted). */
#define IG_EXEC_RESPONSE_FIELDS_MAX 32
#define IG_EXEC_RESPONSE_FIELD_MAX_BYTES 1024
/* A response field name: 1 to this many of [A-Za-z0-9_.-]; the longest
   content_type reported, in bytes. */
#define IG_EXEC_RESPONSE_NAME_MAX 64
#define IG_EXEC_RESPONSE_CONTENT_TYPE_MAX 256
/* Longest credential prefix + credential the response scrubber accepts
   (executor/exec_scrub.c), in bytes: a secret is at most
   EXEC_SECRET_MAX_BYTES (executor/exec_secrets.h), the prefix a short
   word. */
#define IG_EXEC_SCRUB_VALUE_MAX 16384
/* Longest intent id and outcome name, in bytes (ids are UUIDs; room to
   spare). */
#define IG_INTENT_ID_MAX 64
/* Longest id of any other kind accepted or printed (approval, principal,
   approver, executor, Slack action ids): UUIDs and config names. Every
   file uses this one; none defines its own ID_MAX. */
#define IG_ID_MAX 64
#define IG_OUTCOME_NAME_MAX 31
/* The executor's outcome spool (executor/exec_spool*.c): the longest line
   read back (a full-size detail and room for the checksum, the id, the
   name and the keys); the size past which the file is rewritten with only
   its live records (when also over twice their size); the most executions
   held at once (running, or their outcome pending) - past it no new one
   runs, rather than the spool growing without end; the default first
   retry delay and the most it doubles to, and the largest either may be
   set to (ms). */
#define IG_EXEC_SPOOL_LINE_MAX (IG_OUTCOME_DETAIL_MAX_BYTES + 1024)
#define IG_EXEC_SPOOL_COMPACT_BYTES (1024 * 1024)
#define IG_EXEC_SPOOL_PENDING_MAX 4096
#define IG_EXEC_SPOOL_RETRY_INITIAL_MS 500
#define IG_EXEC_SPOOL_RETRY_MAX_MS 60000
#define IG_EXEC_SPOOL_RETRY_CEILING_MS (24L * 3600 * 1000)
/* The excerpt of an exec action's stdout and of its stderr kept in the
   outcome detail (with the stream's size and SHA-256), in bytes. */
#define IG_OUTCOME_EXCERPT_BYTES 2048

/* ---- Approvals (approval/, pdp/pdp_approval*.c, pdp_ui.c, pdp_slack*.c) */

/* Longest an approval request may stay open, in seconds (7 days). */
#define IG_APPROVAL_TTL_MAX (7 * 86400)
/* Longest vote comment, in bytes. */
#define IG_APPROVAL_COMMENT_MAX 500
/* Approver passwords, in bytes. */
#define IG_PASSWORD_MIN 8
#define IG_PASSWORD_MAX 256
/* Password checks (argon2id, 64 MiB each) running at once. */
#define IG_LOGIN_HASHING_MAX 2
/* Approver sessions, and keys tracked by the failed-login limiter (per
   kind of key: approver ids and devices, unknown ids, addresses). Both
   are kept in the store (store.h), shared by the PDP replicas. */
#define IG_SESSIONS_MAX 4096
#define IG_LOGIN_LIMITER_KEYS 4096
/* A session's idle timer is written back at most once per
   IG_SESSION_TOUCH_S seconds (or a quarter of session_idle when that is
   shorter), so a session may idle out that much early; its CSRF token is
   at most IG_SESSION_CSRF_MAX bytes. */
#define IG_SESSION_TOUCH_S 60
#define IG_SESSION_CSRF_MAX 64
/* A web form body (/ui), its fields, a field name's length. */
#define IG_FORM_MAX_BYTES (64 * 1024)
#define IG_FORM_MAX_FIELDS 16
#define IG_FORM_MAX_NAME 64
/* Largest HTML page rendered. */
#define IG_HTML_MAX_BYTES (16 * 1024 * 1024)
/* A Slack click body, and the clock skew its signature may have (s). */
#define IG_SLACK_BODY_MAX (256 * 1024)
#define IG_SLACK_MAX_SKEW 300
/* Slack notifications waiting, and messages remembered for updates. */
#define IG_SLACK_QUEUE 256
#define IG_SLACK_MESSAGES_MAX 4096
/* Slack's own limits for one message (Block Kit): a section's text, in
   characters (counted here in bytes, never fewer), and blocks per
   message. An approval whose intent does not fit them whole is posted
   without an Approve button. */
#define IG_SLACK_SECTION_MAX 3000
#define IG_SLACK_BLOCKS_MAX 50

/* ---- Refusals and failed logins (pdp/pdp_refusals.c, pdp/pdp_login.c,
   pdp/pdp_addr.c, store/store_shared.c, approval/appr_device.c) ---- */

/* Refused requests (bad tokens, failed logins, refused redemptions and
   outcomes, bad Slack signatures) are counted in memory per (client
   address, principal, reason) and written as one aggregated `*.refused`
   audit event per key every refusal_log_interval seconds (the default;
   1 to IG_REFUSAL_LOG_INTERVAL_MAX) and at shutdown. At most
   IG_REFUSAL_KEYS_MAX keys are held between two writes; past them a
   refusal is counted in one overflow key per kind. */
#define IG_REFUSAL_LOG_INTERVAL_DEFAULT 60
#define IG_REFUSAL_LOG_INTERVAL_MAX 86400
#define IG_REFUSAL_KEYS_MAX 256
/* trusted_proxies: most address blocks; X-Forwarded-For hops read (from
   the right) at most. */
#define IG_TRUSTED_PROXIES_MAX 256
#define IG_XFF_MAX_HOPS 32
/* An approver id (or one device) with login_max_failures failures waits
   IG_LOGIN_BACKOFF_FIRST_MS before its next try, twice as long after
   each further failure, at most login_window (429 with Retry-After); its
   failures are forgotten login_window after its last failure and wait. */
#define IG_LOGIN_BACKOFF_FIRST_MS 5000
/* A client address (an IPv6 /64) with IG_LOGIN_ADDR_FACTOR x
   login_max_failures failures is slowed, never refused: each login from
   it (but one with a device token) waits IG_LOGIN_ADDR_DELAY_STEP_MS per
   failure past that, at most IG_LOGIN_ADDR_DELAY_MAX_MS, in a suspended
   connection. */
#define IG_LOGIN_ADDR_FACTOR 10
#define IG_LOGIN_ADDR_DELAY_STEP_MS 250
#define IG_LOGIN_ADDR_DELAY_MAX_MS 3000
/* A login finding every password check slot taken waits and retries
   every IG_LOGIN_BUSY_RETRY_MS, for at most IG_LOGIN_BUSY_WAIT_MAX_MS,
   then gets 429 with Retry-After. */
#define IG_LOGIN_BUSY_RETRY_MS 50
#define IG_LOGIN_BUSY_WAIT_MAX_MS 2000
/* How long a device token (set at a successful sign-in; it lets that
   browser past its approver id's backoff) stays valid, seconds. */
#define IG_LOGIN_DEVICE_TTL (30 * 86400)

/* ---- Audit log (audit/, store/store_audit*.c, pdp/pdp_audit*.c) ---- */

/* Leaves one GET /v1/audit/leaves returns at most, and its largest body
   (a page stops early past it; one leaf is always sent). */
#define IG_AUDIT_LEAVES_MAX 1000
#define IG_AUDIT_LEAVES_MAX_BYTES (16 * 1024 * 1024)
/* checkpoint_every (leaves) and checkpoint_interval (seconds) at most. */
#define IG_AUDIT_CHECKPOINT_EVERY_MAX 1000000
#define IG_AUDIT_CHECKPOINT_INTERVAL_MAX 86400
/* `audit verify`: a leaf left unsigned longer than the PDP's
   checkpoint_interval plus this margin (seconds) fails with status 3
   (the PDP signs every leaf within the interval while it runs, and all at
   a clean stop); a checkpoint signed later than that after a leaf it
   covers is reported as late; times going back by more are reported.
   And the checkpoint_interval it assumes when not told (the PDP's
   default), and the gap between events it reports beyond. */
#define IG_AUDIT_UNSIGNED_MARGIN 60
#define IG_AUDIT_VERIFY_INTERVAL 60
#define IG_AUDIT_VERIFY_MAX_GAP 86400
/* Redacted JSON pointers (redact = ...), and the longest one in bytes. */
#define IG_AUDIT_REDACT_MAX 64
#define IG_AUDIT_POINTER_MAX 256
/* Events re-hashed per transaction while backfilling an older database. */
#define IG_AUDIT_BACKFILL_CHUNK 10000
/* Most signature lines in one signed note (the C2SP spec asks for >= 16). */
#define IG_AUDIT_NOTE_MAX_SIGS 100
/* Leaves an in-memory audit tree may hold (tests/support/audit_mem.h:
   tests and benchmarks only). */
#define IG_AUDIT_MEM_MAX_LEAVES (UINT64_C(1) << 32)
/* The auditors' pages (/ui/audit): events per page, rows scanned for one
   filtered page, and the largest log a browser downloads (beyond it:
   `intentgate audit export`). */
#define IG_AUDIT_UI_PAGE 50
#define IG_AUDIT_UI_SCAN_MAX 200000
#define IG_AUDIT_UI_EXPORT_MAX_BYTES (64 * 1024 * 1024)

/* Longest action name ("payments.refund"), in bytes. */
#define IG_ACTION_MAX 120

/* ---- The PDP's HTTP server ([limits], pdp/pdp_config_limits.c) ---- */

/* Open connections in all, and from one client address (the socket's
   peer: behind a proxy, the proxy). The descriptor limit may lower the
   first (net/ig_conns.h). */
#define IG_PDP_MAX_CONNECTIONS 4096
#define IG_PDP_MAX_PER_ADDRESS 2048
/* A request's headers and body must have arrived this long after the
   connection opened or its previous reply went out (slowloris), ms. */
#define IG_PDP_REQUEST_TIMEOUT_MS 10000
/* Parked long polls (GET /v1/intents/{id}?wait=N) in all and per
   principal; over either, the poll answers at once with the state. */
#define IG_PDP_MAX_WAITERS 1024
#define IG_PDP_MAX_WAITERS_PER_PRINCIPAL 64
/* Store writes queued for the writer; over it a new intent gets 503
   OVERLOADED (nothing of it recorded) with Retry-After. */
#define IG_PDP_WRITE_QUEUE 4096
/* Descriptors kept back from connections: the database, policies, Slack,
   log files. */
#define IG_PDP_FD_RESERVE 256

/* ---- Agent side: `intentgate hook claude-code` (cli/cli_hook*.c) ---- */

/* Largest hook mapping file, in bytes. */
#define IG_HOOK_MAPPINGS_MAX (256 * 1024)
/* Longest an escalation may be waited for (escalate_wait), seconds. */
#define IG_HOOK_WAIT_MAX 3600

/* ---- config ---- */

/* The INI-style config files (core/ig_ini.c): the longest line, in bytes
   without its newline, and the largest file. */
#define IG_INI_LINE_MAX 4096
#define IG_INI_FILE_MAX (8 * 1024 * 1024)

/* The PDP's config (pdp/pdp_config*.c): principal and approver sections
   at most; the longest intent, grant and approval TTL, in seconds; HTTP
   threads; the smallest max_body_bytes; approvals a quorum may ask for;
   the longest approver group name and Slack ui_url, in bytes. */
#define IG_CFG_PRINCIPALS_MAX 10000
#define IG_CFG_APPROVERS_MAX 10000
#define IG_CFG_TTL_MAX 86400
#define IG_CFG_THREADS_MAX 64
#define IG_CFG_BODY_MIN 1024
#define IG_CFG_UI_URL_MAX 512
/* [approvals]: an approver session's idle and total lifetime (smallest,
   largest), seconds; failed logins counted per approver and address, and
   the window they are counted in (largest), seconds. */
#define IG_CFG_SESSION_MIN 60
#define IG_CFG_SESSION_IDLE_MAX 86400
#define IG_CFG_SESSION_MAX (7 * 86400)
#define IG_CFG_LOGIN_FAILURES_MAX 1000
#define IG_CFG_LOGIN_WINDOW_MAX 86400
/* What the PDP's [limits] and the executor's config may set: open
   connections (smallest, largest; per address up to the largest), the
   request deadline (ms), parked long polls, the store's write queue. */
#define IG_CFG_CONNECTIONS_MIN 16
#define IG_CFG_CONNECTIONS_MAX 1000000
#define IG_CFG_REQUEST_TIMEOUT_MIN_MS 100
#define IG_CFG_REQUEST_TIMEOUT_MAX_MS 600000
#define IG_CFG_WAITERS_MAX 1000000
#define IG_CFG_WRITE_QUEUE_MIN 16
#define IG_CFG_WRITE_QUEUE_MAX 10000000

/* The executor's config (executor/exec_config.c): the most paths
   `protect` and keys `pdp_public_keys` may list. */
#define IG_EXEC_PROTECT_MAX 32
#define IG_EXEC_PUBLIC_KEYS_MAX 64
/* ... and its defaults: executions at once (and the most settable), the
   PDP call's timeout (and the longest, ms), open connections in all and
   per address, the request deadline (ms). */
#define IG_EXEC_MAX_CONCURRENT 32
#define IG_EXEC_CONCURRENT_MAX 4096
#define IG_EXEC_PDP_TIMEOUT_MS 5000
#define IG_EXEC_PDP_TIMEOUT_MAX_MS 60000
#define IG_EXEC_MAX_CONNECTIONS 4096
#define IG_EXEC_MAX_PER_ADDRESS 2048
#define IG_EXEC_REQUEST_TIMEOUT_MS 10000

/* The registry's handler settings and parameter specs
   (executor/exec_settings.c, exec_schema.c): an http action's timeout_ms
   (largest, default), an exec action's; max_response_bytes and
   max_output_bytes by default; an action's max_concurrent (largest, and
   the http and exec defaults); a string parameter's max_length, an
   array's max_items and an object's max_keys by default; the longest
   parameter name, ${NAME} / env variable name and credential header
   name, in bytes. */
#define IG_EXEC_HTTP_TIMEOUT_MAX_MS 60000
#define IG_EXEC_HTTP_TIMEOUT_DEFAULT_MS 5000
#define IG_EXEC_TIMEOUT_MAX_MS 600000
#define IG_EXEC_TIMEOUT_DEFAULT_MS 10000
#define IG_EXEC_OUTPUT_DEFAULT_BYTES 65536
#define IG_EXEC_ACTION_CONCURRENT_MAX 4096
#define IG_EXEC_HTTP_CONCURRENT_DEFAULT 64
#define IG_EXEC_EXEC_CONCURRENT_DEFAULT 8
#define IG_EXEC_PARAM_MAX_LENGTH_DEFAULT 4096
#define IG_EXEC_PARAM_MAX_ITEMS_DEFAULT 64
#define IG_EXEC_PARAM_MAX_KEYS_DEFAULT 64
#define IG_EXEC_PARAM_NAME_MAX 64
#define IG_EXEC_ENV_NAME_MAX 128
#define IG_EXEC_HEADER_NAME_MAX 128

/* The registry's "git" repositories (executor/exec_git_repos.c and the
   gateway, exec_git.c): how many, the largest push body (default and
   most), the largest upstream reply (default and most), the upstream
   call's timeout (default and most), and how long the longest alias is. */
#define IG_EXEC_GIT_REPOS_MAX 256
#define IG_EXEC_GIT_PUSH_DEFAULT_BYTES (100.0 * 1024 * 1024)
#define IG_EXEC_GIT_PUSH_MAX_BYTES (8.0 * 1024 * 1024 * 1024)
#define IG_EXEC_GIT_REPLY_DEFAULT_BYTES (1024.0 * 1024 * 1024)
#define IG_EXEC_GIT_REPLY_MAX_BYTES (64.0 * 1024 * 1024 * 1024)
#define IG_EXEC_GIT_TIMEOUT_DEFAULT_MS 300000
#define IG_EXEC_GIT_TIMEOUT_MAX_MS 3600000
#define IG_EXEC_GIT_ALIAS_MAX 64

/* The MCP gateway (executor/exec_mcp*.c, docs/mcp.md): how long an
   escalated tools/call is held (default and most), sessions (default and
   most), upstream servers, a request body, an upstream message (stdio
   line or HTTP reply) by default and at most (every message is read with
   the strict JSON reader, so its cap), an upstream call's timeout
   (default and most), tools of one upstream, the longest alias, calls in
   flight at once, and how long a whoami answer is trusted. */
#define IG_EXEC_MCP_WAIT_MS 60000
#define IG_EXEC_MCP_WAIT_MAX_MS 3600000
#define IG_EXEC_MCP_SESSIONS 1024
#define IG_EXEC_MCP_SESSIONS_MAX 65536
#define IG_EXEC_MCP_SERVERS_MAX 64
#define IG_EXEC_MCP_BODY_MAX_BYTES (4 * 1024 * 1024)
#define IG_EXEC_MCP_REPLY_DEFAULT_BYTES ((double)IG_JSON_MAX_BYTES)
#define IG_EXEC_MCP_REPLY_MAX_BYTES ((double)IG_JSON_MAX_BYTES)
#define IG_EXEC_MCP_TIMEOUT_DEFAULT_MS 60000
#define IG_EXEC_MCP_TIMEOUT_MAX_MS 3600000
#define IG_EXEC_MCP_TOOLS_MAX 1024
#define IG_EXEC_MCP_ALIAS_MAX 32
#define IG_EXEC_MCP_CALLS_MAX 256
#define IG_EXEC_MCP_WHOAMI_TTL_MS 30000
/* An upstream's event stream that ends before its answer is resumed (GET,
   Last-Event-ID) this many times at most, waiting its retry delay capped
   at this (ms). */
#define IG_EXEC_MCP_RESUMES 5
#define IG_EXEC_MCP_RESUME_WAIT_MAX_MS 5000

/* ---- store ---- */

/* How long a database connection waits for a lock before it fails, ms
   (the PDP's connections and `intentgate audit`'s read-only one). */
#define IG_STORE_BUSY_TIMEOUT_MS 5000
/* Bytes of a database file a sequential reader maps into memory (the
   audit log's check at open, `intentgate audit`). */
#define IG_STORE_MMAP_BYTES 1073741824
/* WAL pages a commit leaves before the checkpointer thread copies them
   into the database file (SQLite's own default, moved off the writer). */
#define IG_STORE_WAL_CHECKPOINT_PAGES 1000
/* Read connections in the PDP's pool; a reader past it waits for one. */
#define IG_STORE_MAX_READERS 32
/* Quota counters (store_count): the longest window, seconds; distinct
   keys kept (idle ones are evicted first); the longest key, bytes. */
#define IG_STORE_COUNT_WINDOW_MAX 86400
#define IG_STORE_COUNT_KEYS_MAX 100000
#define IG_STORE_COUNT_KEY_MAX 256
/* Events of one intent an auditor's page shows (/ui/audit). */
#define IG_STORE_INTENT_EVENTS_MAX 10000
/* `intentgate audit`: the longest leaf read from an export line or the
   database (an event holding a whole intent binding and its own fields),
   the most checkpoints one verification reads, the most --key options
   (a log's keys over its rotations), the most witnesses one verification
   names (--witness; c2sp.org/tlog-policy recommends supporting 32), the
   longest `"key":"value"` text an event is looked up by, and one CSV
   reasons cell of `audit export`. */
#define IG_AUDIT_CLI_LEAF_MAX (IG_CANON_MAX_BYTES + 64 * 1024)
#define IG_AUDIT_CLI_CHECKPOINTS_MAX (1u << 20)
#define IG_AUDIT_CLI_KEYS_MAX 8
#define IG_AUDIT_CLI_WITNESSES_MAX 32
#define IG_AUDIT_CLI_NEEDLE_MAX 128
#define IG_AUDIT_CLI_REASONS_MAX 4096
/* `intentgate audit show`: the text of one event's block, and the events
   of one intent. */
#define IG_AUDIT_CLI_SHOW_EVENT_MAX (8 * 1024 * 1024)
#define IG_AUDIT_CLI_SHOW_EVENTS_MAX 100000
/* ---- executor ---- */

/* Largest PDP bearer token the executor reads (pdp_token_file or
   INTENTGATE_EXECUTOR_TOKEN), bytes. */
#define IG_EXEC_PDP_TOKEN_MAX_BYTES 512
/* Largest answer read from the PDP (redeem, outcome), bytes. */
#define IG_EXEC_PDP_REPLY_MAX_BYTES (256 * 1024)
/* Longest URL the executor calls (the PDP's, an http action's), bytes. */
#define IG_EXEC_URL_MAX 4096
/* An http action's timeout and response cap when the registry gives none
   (the registry's own checks normally require both). */
#define IG_EXEC_HTTP_TIMEOUT_MS 5000L
#define IG_EXEC_HTTP_RESPONSE_DEFAULT_BYTES 65536
/* The bubblewrap probe's run (bwrap around /usr/bin/true), ms. */
#define IG_EXEC_PROBE_TIMEOUT_MS 10000
/* Longest timeout_ms an exec run plan accepts (a day), ms: the last
   check before a run; the registry's own cap, IG_EXEC_TIMEOUT_MAX_MS, is
   lower. */
#define IG_EXEC_RUN_TIMEOUT_MAX_MS (24.0 * 3600 * 1000)
/* How long a run's pipes are still drained after its child was reaped,
   and the longest single wait for output, ms. */
#define IG_EXEC_DRAIN_GRACE_MS 1000.0
#define IG_EXEC_POLL_SLICE_MS 50.0
/* NDJSON lines waiting for a slow streaming client, bytes: output lines
   past half of it are dropped, the final line always fits. */
#define IG_EXEC_STREAM_PENDING_MAX_BYTES (1024 * 1024)
/* Descriptors kept free of connections: exec pipes, curl, the spool. */
#define IG_EXEC_FD_RESERVE 256
/* The PDP's dev.env the executor's dev mode reads, bytes. */
#define IG_EXEC_DEV_ENV_MAX_BYTES (64 * 1024)
/* policies, cli, approval, audit */

/* A limit's number as a string literal, for usage texts and HTML
   attributes that are constant strings (only for limits written as one
   decimal number, as those it is used on). */
#define IG_STR_(x) #x
#define IG_STR(x) IG_STR_(x)

/* ---- Policies (policies/): the verdicts policies return ---- */

/* Reasons one decision carries and approver groups one ESCALATE names. */
#define IG_POLICY_REASONS_MAX 8
#define IG_POLICY_GROUPS_MAX 8
/* Buffers, in bytes with the NUL: a reason code (so at most 63 bytes), a
   decision's message, an approver group name (at most 63 bytes). */
#define IG_POLICY_REASON_MAX 64
#define IG_POLICY_MESSAGE_MAX 256
#define IG_POLICY_GROUP_MAX 64
/* Largest quorum an ESCALATE may ask for (its longest ttl is
   IG_APPROVAL_TTL_MAX). */
#define IG_POLICY_QUORUM_MAX 16

/* ---- Policies (policies/): the sandbox and its helpers ---- */

/* Smallest Lua heap cap an engine accepts, in bytes. */
#define IG_POLICY_MEMORY_MIN (256 * 1024)
/* Nesting of the intent and config tables a policy sees. */
#define IG_POLICY_DEPTH_MAX 64
/* Longest glob() pattern and parse_url() input, in bytes. */
#define IG_POLICY_GLOB_PATTERN_MAX 1024
#define IG_POLICY_URL_MAX 8192
/* A DNS name as parse_url and ip_is_private accept it: at most this many
   bytes without a final dot, labels of at most IG_DNS_LABEL_MAX. */
#define IG_DNS_NAME_MAX 253
#define IG_DNS_LABEL_MAX 63
/* count(key, window) takes the store's limits, IG_STORE_COUNT_KEY_MAX and
   IG_STORE_COUNT_WINDOW_MAX: a longer key would pass here and fail there. */
/* `intentgate policy test`: cases one *_test.lua returns, and the buffer
   of one case's name, in bytes with the NUL. */
#define IG_POLICY_TEST_CASES_MAX 10000
#define IG_POLICY_CASE_NAME_MAX 128

/* ---- The CLI (cli/): the hook, submit, approvals, approver ---- */

/* `hook claude-code`: escalate_wait's default (s); the hard timeout is
   escalate_wait plus IG_HOOK_TIMEOUT_SLACK by default and at most
   IG_HOOK_TIMEOUT_MAX (s); the longest tool name a mapping file names;
   the seconds one long poll asks for (under the CLI's HTTP timeout); the
   longest reason kept from the PDP, and one decision line on stdout
   (that reason escaped, and more), in bytes. */
#define IG_HOOK_WAIT_DEFAULT 55
#define IG_HOOK_TIMEOUT_SLACK 3
#define IG_HOOK_TIMEOUT_MAX (IG_HOOK_WAIT_MAX + 60)
#define IG_HOOK_TOOL_NAME_MAX 128
#define IG_HOOK_POLL_MAX 25
#define IG_HOOK_REASON_MAX 1024
#define IG_HOOK_OUTPUT_MAX 8192
/* An idempotency key (`submit --idempotency-key`, POST /v1/intents),
   in bytes. */
#define IG_IDEMPOTENCY_KEY_MAX 200
/* The CLI's printed output: one list or approval (`approvals`), the
   pretty-printed answer of `submit` (a 1 MiB answer, indented). */
#define IG_CLI_SHOW_MAX_BYTES (8 * 1024 * 1024)
#define IG_CLI_PRINT_MAX_BYTES (8 * 1024 * 1024)
/* One line the CLI prints about an answer (a refusal's code: message, a
   vote's result), bytes. */
#define IG_CLI_MESSAGE_MAX 4096
/* `approvals`: the login request body, password included, in bytes. */
#define IG_CLI_LOGIN_BODY_MAX 16384
/* `approver add`: the longest group name (what a verdict's group buffer
   holds, as the PDP's config requires) and the most groups, the longest
   display name (bytes), the longest Slack user id. */
#define IG_APPROVER_GROUP_MAX (IG_POLICY_GROUP_MAX - 1)
#define IG_APPROVER_GROUPS_MAX 32
#define IG_APPROVER_NAME_MAX 128
#define IG_SLACK_USER_ID_MAX 32

/* ---- Approvals (approval/) ---- */

/* The failed-login limiter's key (an approver id or an address), bytes. */
#define IG_LOGIN_LIMITER_KEY_MAX 64
/* Slack: a message ts and a response_url kept from a click, the longest
   text outside the intent a message shows (bytes), and the digits of a
   request timestamp. */
#define IG_SLACK_TS_MAX 32
#define IG_SLACK_RESPONSE_URL_MAX 1024
#define IG_SLACK_VALUE_MAX 200
#define IG_SLACK_TS_DIGITS_MAX 12

/* ---- Audit (audit/) ---- */

/* A signed note's log or key name, and a whole signed note, bytes. */
#define IG_AUDIT_NAME_MAX 256
#define IG_AUDIT_NOTE_MAX 65536

/* ---- Core (core/) ---- */

/* An error's detail text (struct ig_err), bytes with the NUL. */
#define IG_ERR_TEXT_MAX 256
/* A path built from a directory and a file name (policy files), bytes. */
#define IG_PATH_MAX 4096
/* The host of a listen address, HOST:PORT (ig_listen_parse), bytes. */
#define IG_LISTEN_HOST_MAX 255
/* ---- pdp (pdp/): the PDP's own limits beyond [limits] ---- */

/* POST /v1/intents: the longest resource, in characters (code points);
   its idempotency_key takes IG_IDEMPOTENCY_KEY_MAX. */
#define IG_RESOURCE_MAX_CHARS 500
/* The longest long poll, GET /v1/intents/{id}?wait=N, in seconds, and
   how late past its deadline a parked poll may be answered (ms). */
#define IG_PDP_WAIT_MAX 60
#define IG_PDP_WAIT_TICK_MS 50
/* An id taken from a path (/v1/intents/{id}, /v1/executions/{id}/outcome):
   a longer one is no such path (404), in bytes. */
#define IG_PATH_ID_MAX 127
/* The longest error code of a reply (also the reason a refusal is
   counted under), role name and error message (longer ones are cut), in
   bytes. */
#define IG_ERROR_CODE_MAX 47
#define IG_ROLE_NAME_MAX 15
#define IG_ERROR_MESSAGE_MAX 511
/* Largest /metrics page, in bytes. */
#define IG_PDP_METRICS_MAX_BYTES (1024 * 1024)
/* The listen socket's backlog; how long a connection may sit idle
   between requests (s); the memory libmicrohttpd gives one connection
   for its request line and headers (bytes: it clears that memory for
   every request, so more than the headers need costs on every one). */
#define IG_PDP_LISTEN_BACKLOG 1024
#define IG_PDP_IDLE_TIMEOUT 120
#define IG_PDP_CONNECTION_MEMORY (16 * 1024)
/* Stopping: how often the server looks whether every routed request was
   answered, and how often it logs that it still waits (ms). */
#define IG_PDP_STOP_POLL_MS 5
#define IG_PDP_STOP_LOG_MS 5000
/* How often the approval sweeper resolves expired requests (s). */
#define IG_APPROVAL_SWEEP_INTERVAL 1
/* The login form's CSRF cookie lifetime (s). */
#define IG_LOGIN_CSRF_MAX_AGE 3600
/* Largest config file hashed into the config.loaded audit event (a
   larger one is recorded without its hash), in bytes. */
/* The audit HMAC key file's text: 43 base64url characters, with room to
   refuse a wrong one as such rather than as too long. */
#define IG_AUDIT_HMAC_KEY_TEXT_MAX 128
#define IG_PDP_CONFIG_HASH_MAX_BYTES (16 * 1024 * 1024)
/* Slack Web API calls: connect and whole-request timeouts (ms), the
   largest answer read and the longest URL (api_url and the method), in
   bytes. */
#define IG_SLACK_CONNECT_MS 5000L
#define IG_SLACK_TOTAL_MS 10000L
#define IG_SLACK_REPLY_MAX (64 * 1024)
#define IG_SLACK_URL_MAX 2048
/* The PDP's witness client (pdp/pdp_witness.c, [witness ID] sections):
   witnesses configured at most; a witness's whole-request timeout and the
   wait between attempts while it fails, default, least and most (ms);
   the connect timeout (ms, or the whole-request one when shorter); the
   largest answer read (beyond it the answer is refused as bad); the
   longest submission URL with "/add-checkpoint"; the largest file a
   witness vkey is read from; a repeat of the same failure is logged at
   most once per this many seconds (it is always counted); the recent
   checkpoints whose signing time is kept for the lag in seconds. */
#define IG_WITNESS_MAX 32
#define IG_WITNESS_TIMEOUT_MS_DEFAULT 10000
#define IG_WITNESS_TIMEOUT_MS_MIN 10
#define IG_WITNESS_TIMEOUT_MS_MAX 600000
#define IG_WITNESS_RETRY_MS_DEFAULT 30000
#define IG_WITNESS_RETRY_MS_MIN 10
#define IG_WITNESS_RETRY_MS_MAX 86400000
#define IG_WITNESS_CONNECT_MS 5000
#define IG_WITNESS_ANSWER_MAX (64 * 1024)
#define IG_WITNESS_URL_MAX 2048
#define IG_WITNESS_VKEY_FILE_MAX 4096
#define IG_WITNESS_LOG_REPEAT_S 60
#define IG_WITNESS_SEEN_MAX 64
/* At a clean stop, how long the PDP waits for its witnesses to cosign the
   last checkpoint (pdp_witness_flush); a witness that is down is not
   waited for. */
#define IG_WITNESS_STOP_FLUSH_MS 1500
/* `serve --dev`: the longest path it writes, its config file and its
   dev.env, in bytes. */
#define IG_DEV_PATH_MAX 4095
#define IG_DEV_CONFIG_MAX 8191
#define IG_DEV_ENV_MAX 8191

/* ---- the last stragglers ---- */
/* The CLI's HTTP calls to the PDP: connect and total timeout (ms; a long
   poll asks for its own), the longest Authorization header line, the
   largest status line plus header block of an answer over plain http. */
#define IG_CLI_HTTP_CONNECT_TIMEOUT_MS 5000L
#define IG_CLI_HTTP_TIMEOUT_MS 30000L
#define IG_CLI_AUTH_HEADER_MAX 512
#define IG_CLI_HTTP_HEADER_MAX (16 * 1024)
/* The executor's sealed secrets: the largest value (bytes), the most
   names in one file, the longest name, the secrets key file's text. */
#define IG_EXEC_SECRET_MAX_BYTES 8192
#define IG_EXEC_SECRETS_MAX 1024
#define IG_EXEC_SECRET_NAME_MAX 64
#define IG_EXEC_SECRETS_KEY_TEXT_MAX 128
/* One argv element of a sandboxed run, bytes. */
#define IG_EXEC_ARGV_ELEM_MAX 4096

/* ---- MCP tool pins (core/ig_pins*.c) ---- */

/* A pin key "<alias>/<tool>", bytes; the canonical JSON of one pinned
   definition (a tool object as an upstream MCP server gave it), bytes;
   the pin file's longest line (a "changed" event: the definition and
   room for the other members); distinct changes of one tool pending at
   once (past it a new change is refused without being recorded: the tool
   stays hidden); the largest pin file; an accepting admin's name. */
#define IG_PIN_KEY_MAX 300
#define IG_PIN_DEFINITION_MAX_BYTES (256 * 1024)
#define IG_PIN_LINE_MAX (IG_PIN_DEFINITION_MAX_BYTES + 1024)
#define IG_PIN_PENDING_MAX 16
#define IG_PIN_FILE_MAX (64 * 1024 * 1024)
#define IG_PIN_BY_MAX 64

/* ---- `intentgate mcp connect` (cli/cmd_mcp.c, cli/cli_mcp*.c) ---- */
/* The stdio bridge to an MCP Streamable HTTP server: one JSON-RPC line
   read from stdin (longer: answered -32700 and skipped), bytes; POSTs in
   flight at once (past it a request is answered -32000); how long the end
   of stdin waits for them (ms); one message from the server (a JSON body
   or one event's data; the event-stream parser's cap adds a line's
   framing), bytes; the longest session id and protocol version kept; the
   bytes of an error answer read for its JSON-RPC message, and the longest
   such message repeated; the whole-request timeout of a POST (an
   escalated tools/call may be held for as long as a hook waits), of the
   GET stream, of the final DELETE (ms). */
#define IG_MCP_LINE_MAX (4 * 1024 * 1024)
#define IG_MCP_INFLIGHT_MAX 32
#define IG_MCP_DRAIN_MS 5000
#define IG_MCP_MESSAGE_MAX IG_JSON_MAX_BYTES
#define IG_MCP_SSE_EVENT_MAX (IG_MCP_MESSAGE_MAX + 1024)
#define IG_MCP_SESSION_ID_MAX 256
#define IG_MCP_VERSION_MAX 32
#define IG_MCP_ERROR_BODY_MAX (64 * 1024)
#define IG_MCP_ERROR_MESSAGE_MAX 200
#define IG_MCP_POST_TIMEOUT_MS (IG_HOOK_TIMEOUT_MAX * 1000L)
#define IG_MCP_STREAM_TIMEOUT_MS (24L * 3600 * 1000)
#define IG_MCP_DELETE_TIMEOUT_MS 5000L

/* ---- shadow bundles (pdp/pdp_shadow*.c) ---- */
/* Decisions waiting for the shadow bundle (past it a decision is not
   shadowed and counted as dropped); distinct action label values in
   /metrics (the rest are counted as action="other"); the newest
   disagreements GET /v1/policy/shadow lists; disagreement events written
   to the audit log in one store write. */
#define IG_SHADOW_QUEUE_MAX 4096
#define IG_SHADOW_ACTIONS_MAX 64
#define IG_SHADOW_RECENT_MAX 50
#define IG_SHADOW_EVENTS_BATCH 64

#endif
