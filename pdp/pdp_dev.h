/*
 * pdp_dev.h - `intentgate serve --dev --data DIR`: a ready-to-use PDP for
 * trying intentgate, in the spirit of `vault server -dev`.
 *
 * The first run creates DIR (0700) with a signing key, the example policy
 * bundle, one agent, one executor, one admin and one auditor with fresh
 * random tokens, an approver, the audit log's checkpoint key and HMAC key
 * (keys/audit.key, keys/audit-hmac.key; params /card_number redacted),
 * intentgate.conf (token hashes only) and dev.env (the tokens and the
 * audit verifier key, mode 0600; INTENTGATE_PUBLIC_KEY always last).
 * Later runs keep all of it. dev.env is rewritten at each start with the
 * URL actually listened on.
 */
#ifndef PDP_DEV_H
#define PDP_DEV_H

#include <stddef.h>

#include "ig_embed.h"
#include "ig_error.h"

extern const struct ig_embedded_file pdp_example_policies[];

#define PDP_DEV_AGENT "dev-agent"
#define PDP_DEV_EXECUTOR "dev-executor"
#define PDP_DEV_ADMIN "dev-admin"
#define PDP_DEV_AUDITOR "dev-auditor"
#define PDP_DEV_AUDIT_NAME "intentgate.local/audit"
#define PDP_DEV_APPROVER "dev-approver" /* finance, dba, security, auditors */
#define PDP_DEV_SLACK_USER "UDEVAPPROVER"

/*
 * Create DIR on first run (listen is written into the new config). Fills
 * config_path (cap bytes) with DIR/intentgate.conf.
 */
enum ig_status pdp_dev_prepare(const char *dir, const char *listen,
                               char *config_path, size_t cap,
                               struct ig_err *err) IG_WUR;

/*
 * Rewrite DIR/dev.env with url as INTENTGATE_URL (tokens kept), and copy
 * its text into out (cap bytes) for printing.
 */
enum ig_status pdp_dev_write_env(const char *dir, const char *url, char *out,
                                 size_t cap, struct ig_err *err) IG_WUR;

/* Write the example bundle's files into dir (created 0755 if missing);
   existing files are not overwritten. */
enum ig_status pdp_dev_write_policies(const char *dir,
                                      struct ig_err *err) IG_WUR;

#endif
