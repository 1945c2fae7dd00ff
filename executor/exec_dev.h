/*
 * exec_dev.h - `intentgate-executor serve --dev --pdp-env DIR/dev.env`:
 * an executor wired to a dev-mode PDP, for trying the whole flow.
 *
 * Reads the PDP's dev.env (URL, this executor's id and token, the PDP's
 * public key) and, on first run, creates DIR/executor/ with the token
 * (0600), the PDP public key, a secrets key and an encrypted secrets file
 * holding a random dev credential named refund-api, and a demo registry:
 * payments.refund -> http POST $INTENTGATE_DEV_UPSTREAM/refunds (default
 * http://127.0.0.1:8702) with that credential as a bearer token. The
 * config is rewritten at every start (it holds no secret). Once listening,
 * DIR/executor.env gets INTENTGATE_EXECUTOR_URL.
 */
#ifndef EXEC_DEV_H
#define EXEC_DEV_H

#include <stddef.h>

#include "ig_error.h"

enum ig_status exec_dev_prepare(const char *pdp_env, const char *listen,
                                char *config_path, size_t cap,
                                struct ig_err *err) IG_WUR;
enum ig_status exec_dev_announce(const char *pdp_env, const char *url,
                                 struct ig_err *err) IG_WUR;

#endif
