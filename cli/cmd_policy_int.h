/*
 * cmd_policy_int.h - the `intentgate policy` subcommands, each in its own
 * file; cmd_policy.c dispatches argv[1] to them. Each gets argc/argv from
 * its own name on (argv[0] "test", "eval", ...) and returns a CLI_EXIT_*.
 */
#ifndef CMD_POLICY_INT_H
#define CMD_POLICY_INT_H

#include <jansson.h>

#include "cli.h"

int cli_policy_test(int argc, char **argv);
int cli_policy_eval(int argc, char **argv);
int cli_policy_replay(int argc, char **argv);

/*
 * The settings a bundle sees as `config`, as the server gives them: the
 * JSON object in the file settings (or "-", standard input), or the
 * [policy] section of the server's config file config, read as the
 * server reads it. Neither given: *out NULL (no settings). Both given, or
 * a file that cannot be read, is not JSON or not an object: one line on
 * stderr naming cmd and the problem, -1. cli_policy_settings.c.
 */
int cli_policy_settings(const char *cmd, const char *settings,
                        const char *config, json_t **out);

#endif
