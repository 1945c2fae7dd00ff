/*
 * cmd_canon.c - `intentgate canon [FILE]` and `intentgate hash [FILE]`.
 *
 * Both read one JSON text (FILE, or stdin when FILE is absent or "-"),
 * parse it strictly (core/ig_json.h), and write either its RFC 8785
 * canonical form (no trailing newline) or its intent hash (one line).
 * Malformed input exits 2 with "FILE:LINE:COLUMN: what is wrong".
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_hash.h"
#include "ig_json.h"
#include "ig_limits.h"

static const char canon_usage[] =
    "usage: intentgate canon [FILE]\n"
    "\n"
    "Print the RFC 8785 canonical form of the JSON text in FILE (or standard\n"
    "input when FILE is absent or \"-\"), without a trailing newline.\n"
    "\n"
    "Input is read strictly: duplicate keys, invalid UTF-8, lone surrogate\n"
    "escapes, NaN/Infinity and numbers beyond a double are refused, as is\n"
    "input over the limits in core/ig_limits.h. Bad input exits with status\n"
    "2 and one line naming the problem and its line and column.\n";

static const char hash_usage[] =
    "usage: intentgate hash [FILE]\n"
    "\n"
    "Print the intent hash of the JSON text in FILE (or standard input):\n"
    "\"sha256:\" and the lowercase hex SHA-256 of its RFC 8785 canonical\n"
    "form. Input rules and exit statuses as for `intentgate canon`.\n";

/* Parse argv into at most one FILE operand. */
static int
one_file_arg(int argc, char **argv, const char **path)
{
    int i;

    *path = NULL;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0 && i + 1 < argc && *path == NULL) {
            *path = argv[++i];
            continue;
        }
        if (a[0] == '-' && a[1] != '\0') {
            cli_error(argv[0], "unknown option %s (see --help)", a);
            return -1;
        }
        if (*path != NULL) {
            cli_error(argv[0], "expected at most one FILE, got %s too", a);
            return -1;
        }
        *path = a;
    }
    return 0;
}

/* Read and canonicalize; on failure prints the error and returns status. */
static int
read_canonical(const char *cmd, const char *path, struct ig_buf *canon)
{
    struct ig_buf in;
    struct ig_err err;
    enum ig_status st;
    int rc = CLI_EXIT_OK;

    ig_err_clear(&err);
    ig_buf_init(&in, IG_JSON_MAX_BYTES);
    st = cli_read_input(path, &in, &err);
    if (st != IG_OK) {
        cli_error(cmd, "%s", err.msg);
        rc = st == IG_ERR_LIMIT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
        goto out;
    }
    st = ig_canon_text(in.data != NULL ? in.data : "", in.len, canon, &err);
    if (st == IG_ERR_NOMEM) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAIL;
    } else if (st != IG_OK && err.line > 0) {
        cli_error(cmd, "%s:%d:%d: %s", cli_input_name(path), err.line,
                  err.column, err.msg);
        rc = CLI_EXIT_USAGE;
    } else if (st != IG_OK) {
        cli_error(cmd, "%s: %s", cli_input_name(path), err.msg);
        rc = CLI_EXIT_USAGE;
    }
out:
    ig_buf_release(&in);
    return rc;
}

static int
write_stdout(const char *cmd, const char *p, size_t n)
{
    if (fwrite(p, 1, n, stdout) != n || fflush(stdout) != 0) {
        cli_error(cmd, "cannot write to standard output");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int
cli_canon(int argc, char **argv)
{
    struct ig_buf canon;
    const char *path;
    int rc;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(canon_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (one_file_arg(argc, argv, &path) != 0)
        return CLI_EXIT_USAGE;
    ig_buf_init(&canon, IG_CANON_MAX_BYTES);
    rc = read_canonical(argv[0], path, &canon);
    if (rc == CLI_EXIT_OK)
        rc = write_stdout(argv[0], canon.data, canon.len);
    ig_buf_release(&canon);
    return rc;
}

int
cli_hash(int argc, char **argv)
{
    char hash[IG_HASH_STRLEN + 2];
    struct ig_buf canon;
    const char *path;
    int rc;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(hash_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (one_file_arg(argc, argv, &path) != 0)
        return CLI_EXIT_USAGE;
    ig_buf_init(&canon, IG_CANON_MAX_BYTES);
    rc = read_canonical(argv[0], path, &canon);
    if (rc == CLI_EXIT_OK) {
        ig_hash_bytes(canon.data, canon.len, hash);
        hash[IG_HASH_STRLEN] = '\n';
        rc = write_stdout(argv[0], hash, IG_HASH_STRLEN + 1);
    }
    ig_buf_release(&canon);
    return rc;
}
