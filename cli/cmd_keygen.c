/*
 * cmd_keygen.c - `intentgate keygen --out DIR`: create a grant signing key.
 *
 * Writes DIR/signing.key (k4.secret PASERK, mode 0600, never overwriting an
 * existing key) and DIR/signing.pub (k4.public PASERK), then prints the
 * key's k4.pid - the kid that grant footers carry - on standard output.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "ig_key.h"

static const char keygen_usage[] =
    "usage: intentgate keygen --out DIR\n"
    "\n"
    "Create an Ed25519 grant signing key in DIR (created with mode 0700 if\n"
    "missing):\n"
    "  DIR/signing.key  the secret key as a PASERK k4.secret string, mode "
    "0600\n"
    "  DIR/signing.pub  the public key as a PASERK k4.public string\n"
    "and print the key id (PASERK k4.pid) on standard output. An existing\n"
    "signing.key is never overwritten.\n";

int
cli_keygen(int argc, char **argv)
{
    struct ig_signing_key *key = NULL;
    struct ig_public_key pub;
    const char *dir = NULL;
    struct ig_err err;
    int i, rc = CLI_EXIT_FAIL;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(keygen_usage, stdout);
        return CLI_EXIT_OK;
    }
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc && dir == NULL) {
            dir = argv[++i];
        } else if (strncmp(argv[i], "--out=", 6) == 0 && dir == NULL) {
            dir = argv[i] + 6;
        } else {
            cli_error(argv[0], "unexpected argument %s (see --help)", argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (dir == NULL || dir[0] == '\0') {
        cli_error(argv[0], "missing --out DIR (see --help)");
        return CLI_EXIT_USAGE;
    }
    ig_err_clear(&err);
    if (ig_crypto_init() != IG_OK) {
        cli_error(argv[0], "cannot initialize libsodium");
        goto out;
    }
    if (ig_signing_key_generate(&key) != IG_OK) {
        cli_error(argv[0], "cannot generate a key: out of memory");
        goto out;
    }
    if (ig_key_write_dir(key, dir, &err) != IG_OK) {
        cli_error(argv[0], "%s", err.msg);
        goto out;
    }
    ig_signing_key_public(key, &pub);
    if (printf("%s\n", pub.kid) < 0 || fflush(stdout) != 0) {
        cli_error(argv[0], "cannot write to standard output");
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    ig_signing_key_free(key);
    return rc;
}
