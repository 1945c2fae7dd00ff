/*
 * cmd_audit_redact.c - `intentgate audit hash-value --hmac-key FILE
 * VALUE_JSON`: the placeholder the log stores instead of a redacted value
 * ("hmac-sha256:<hex>", audit/audit_redact.h), so a reviewer who holds a
 * value and the log's HMAC key can confirm that the logged placeholder is
 * that value without the log ever holding it.
 *
 * The key file is the PDP's [audit] hmac_key: 32 random bytes as
 * base64url, one optional trailing newline, readable by its owner only.
 * The key lives in sodium_malloc'd memory and every copy is wiped.
 */
#include "cli.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "audit_redact.h"
#include "cmd_audit_int.h"
#include "ig_b64.h"
#include "ig_file.h"
#include "ig_limits.h"

/* The key file's text: 43 base64url characters, with room to refuse a
   wrong one as such rather than as too long. */
#define KEY_TEXT_MAX IG_AUDIT_HMAC_KEY_TEXT_MAX

static const char hash_value_usage[] =
    "usage: intentgate audit hash-value --hmac-key FILE VALUE_JSON\n"
    "\n"
    "Print the placeholder the audit log stores for a redacted value:\n"
    "  hmac-sha256:<hex HMAC-SHA256(key, RFC 8785 canonical JSON of the "
    "value)>\n"
    "VALUE_JSON is the value as JSON text: a string needs its quotes\n"
    "('\"4111 1111 1111 1111\"'); numbers and objects compare by value (1.0\n"
    "is 1). \"-\" reads the value from standard input.\n"
    "  --hmac-key FILE   the PDP's [audit] hmac_key file (32 bytes,\n"
    "                    base64url, mode 0600)\n";

/* Read the key file into key (sodium_malloc'd by the caller), through
   ig_file_read_secret (a private regular file, one line). Every failure
   is IG_ERR_INVALID: a usage error of this command. */
static enum ig_status
load_key(const char *path, unsigned char *key, struct ig_err *err)
{
    size_t n = 0, got = 0;
    enum ig_status st;
    char *text;

    st = ig_file_read_secret(path, KEY_TEXT_MAX, &text, &n, err);
    if (st == IG_OK &&
        (ig_b64_decode(text, n, key, AUDIT_REDACT_KEY_BYTES, &got) != IG_OK ||
         got != AUDIT_REDACT_KEY_BYTES))
        st = ig_err_set(err, IG_ERR_INVALID,
                        "%s must hold 32 bytes as base64url", path);
    ig_file_free_secret(text); /* wipes; NULL after an error */
    return st == IG_OK ? IG_OK : IG_ERR_INVALID;
}

static int
hash_value_args(int argc, char **argv, const char **key, const char **value)
{
    int i, r;

    *key = *value = NULL;
    for (i = 1; i < argc; i++) {
        if ((r = cli_audit_opt(argv[0], argc, argv, &i, "--hmac-key", key)) < 0)
            return -1;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--") == 0 && i + 1 < argc && *value == NULL) {
            *value = argv[++i];
            continue;
        }
        if ((argv[i][0] == '-' && strcmp(argv[i], "-") != 0 &&
             (argv[i][1] < '0' || argv[i][1] > '9')) ||
            *value != NULL) {
            cli_error(argv[0], "unexpected argument %s (see --help)", argv[i]);
            return -1;
        }
        *value = argv[i];
    }
    if (*key == NULL || *value == NULL) {
        cli_error(argv[0], "usage: audit hash-value --hmac-key FILE "
                           "VALUE_JSON");
        return -1;
    }
    return 0;
}

int
cli_audit_hash_value(int argc, char **argv)
{
    char out[AUDIT_REDACT_STRLEN + 1];
    const char *key_path, *value;
    unsigned char *key = NULL;
    struct ig_buf in;
    size_t len;
    struct ig_err err;
    enum ig_status st;
    int rc = CLI_EXIT_FAIL;

    if (cli_audit_help(argc, argv, hash_value_usage))
        return CLI_EXIT_OK;
    if (hash_value_args(argc, argv, &key_path, &value) != 0)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    ig_buf_init(&in, IG_JSON_MAX_BYTES);
    if (ig_crypto_init() != IG_OK ||
        (key = sodium_malloc(AUDIT_REDACT_KEY_BYTES)) == NULL) {
        cli_error(argv[0], "cannot initialize libsodium");
        goto out;
    }
    if ((st = load_key(key_path, key, &err)) != IG_OK ||
        (strcmp(value, "-") == 0 &&
         (st = cli_read_input(NULL, &in, &err)) != IG_OK)) {
        cli_error(argv[0], "%s", err.msg);
        rc = cli_audit_exit(st == IG_ERR_IO ? IG_ERR_INVALID : st);
        goto out;
    }
    len = strlen(value);
    if (strcmp(value, "-") == 0) {
        value = in.data != NULL ? in.data : "";
        len = in.len;
    }
    st = audit_redact_text(value, len, key, out, &err);
    if (st != IG_OK) {
        cli_error(argv[0], "VALUE_JSON: %s", err.msg);
        rc = st == IG_ERR_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
        goto out;
    }
    if (printf("%s\n", out) < 0 || fflush(stdout) != 0) {
        cli_error(argv[0], "cannot write to standard output");
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    sodium_free(key); /* wipes it */
    ig_buf_release_secret(&in);
    return rc;
}
