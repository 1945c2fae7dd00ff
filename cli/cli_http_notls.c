/*
 * cli_http_notls.c - the https transport of the small `intentgate` binary
 * (cli_http_int.h): there is none.
 *
 * The small binary runs only `hook` over http:// (and --help, --version);
 * cli/main.c hands anything else, an https:// INTENTGATE_URL included, to
 * the full binary before it reads a byte. Should that hand-over fail, the
 * hook still runs here, and its https call fails with this error: a deny
 * that says why, never a call made without TLS.
 */
#include "cli_http_int.h"

enum ig_status
cli_http_tls_call(struct cli_http_tls **tls, struct cli_http_xfer *x,
                  struct ig_err *err)
{
    (void)tls;
    return ig_err_set(err, IG_ERR_INVALID,
                      "https to %s needs the full intentgate binary, which "
                      "could not be started",
                      x->base);
}

void
cli_http_tls_free(struct cli_http_tls *tls)
{
    (void)tls;
}
