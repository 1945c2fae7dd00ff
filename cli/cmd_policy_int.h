/*
 * cmd_policy_int.h - the `intentgate policy` subcommands, each in its own
 * file; cmd_policy.c dispatches argv[1] to them. Each gets argc/argv from
 * its own name on (argv[0] "test", "eval", ...) and returns a CLI_EXIT_*.
 */
#ifndef CMD_POLICY_INT_H
#define CMD_POLICY_INT_H

#include "cli.h"

int cli_policy_test(int argc, char **argv);
int cli_policy_eval(int argc, char **argv);
int cli_policy_replay(int argc, char **argv);

#endif
