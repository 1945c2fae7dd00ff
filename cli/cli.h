/*
 * cli.h - the `intentgate` command's subcommands and their shared helpers.
 *
 * Each subcommand is `int cli_NAME(int argc, char **argv)` with argv[0] the
 * subcommand name, returning the process exit status:
 *   CLI_EXIT_OK 0, CLI_EXIT_FAIL 1 (could not do it: I/O, keys), and
 *   CLI_EXIT_USAGE 2 (bad arguments or bad input - one line on stderr says
 *   what and where).
 */
#ifndef IG_CLI_H
#define IG_CLI_H

#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

int cli_approvals(int argc, char **argv);
int cli_approver(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_canon(int argc, char **argv);
int cli_hash(int argc, char **argv);
int cli_hook(int argc, char **argv);
int cli_keygen(int argc, char **argv);
/* `mcp tools pending|accept` (cmd_mcp_tools.c), argv[0] "tools": the
   `mcp` command hands it `tools` and what follows. */
int cmd_mcp_tools(int argc, char **argv);
int cli_policy(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_store(int argc, char **argv);
int cli_submit(int argc, char **argv);
int cli_witness(int argc, char **argv);

/*
 * Print "intentgate CMD: message" and a newline on stderr. The message must
 * not contain secrets.
 */
void cli_error(const char *cmd, const char *fmt, ...) IG_PRINTF(2, 3);

/* 1 when argv[1..] holds -h or --help. */
int cli_wants_help(int argc, char **argv);

/* Read the n environment variables names[] into vals[]; when any is unset
   or empty, print one line naming them all (for subcommand cmd) and
   return -1; else 0. */
int cli_require_env(const char *cmd, const char *const *names,
                    const char **vals, size_t n);

/*
 * Read FILE (or stdin when path is NULL or "-") into out, which caps the
 * size; IG_ERR_LIMIT when the input is larger, IG_ERR_IO when it cannot be
 * read (err names the path and the reason).
 */
enum ig_status cli_read_input(const char *path, struct ig_buf *out,
                              struct ig_err *err) IG_WUR;

/* The name to show for an input: its path, or "<stdin>". */
const char *cli_input_name(const char *path);

#endif
