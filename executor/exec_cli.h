/*
 * exec_cli.h - the intentgate-executor subcommands other than serving.
 */
#ifndef EXEC_CLI_H
#define EXEC_CLI_H

/*
 * `intentgate-executor secret ...`; argv[0] is "secret":
 *
 *   secret keygen --out KEYFILE
 *   secret set NAME --file SECRETS [--key KEYFILE]
 *   secret list --file SECRETS [--key KEYFILE]
 *
 * set reads the value from standard input (at most EXEC_SECRET_MAX_BYTES,
 * one trailing newline stripped; echo is turned off on a terminal) and
 * never prints it. Without --key the key comes from
 * INTENTGATE_EXECUTOR_SECRETS_KEY. list prints the names, one a line.
 * Returns the exit status: 0 done, 1 failed (a line on stderr), 2 usage.
 * Calls ig_crypto_init itself.
 */
int exec_cli_secret(int argc, char **argv);

#endif
