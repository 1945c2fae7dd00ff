/*
 * cmd_policy.c - `intentgate policy SUBCOMMAND`: the policy author's
 * tools. This file only dispatches; each subcommand lives in its own file
 * (cmd_policy_int.h).
 */
#include "cmd_policy_int.h"

#include <stdio.h>
#include <string.h>

struct policy_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *what;
};

static const struct policy_cmd policy_cmds[] = {
    {"test", cli_policy_test, "run a bundle's test cases (policy test DIR)"},
    {"eval", cli_policy_eval, "decide one intent offline and say why"},
    {"replay", cli_policy_replay,
     "re-evaluate a database's recorded decisions under a new bundle"},
    {NULL, NULL, NULL},
};

static void
policy_usage(FILE *f)
{
    const struct policy_cmd *c;

    (void)fputs("usage: intentgate policy SUBCOMMAND ...\n\n", f);
    for (c = policy_cmds; c->name != NULL; c++)
        (void)fprintf(f, "  %-8s %s\n", c->name, c->what);
    (void)fputs("\nintentgate policy SUBCOMMAND --help tells more.\n", f);
}

int
cli_policy(int argc, char **argv)
{
    const struct policy_cmd *c;

    if (argc >= 2 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
         strcmp(argv[1], "help") == 0)) {
        policy_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2) {
        cli_error(argv[0], "expected a subcommand: policy test|... "
                           "(see policy --help)");
        return CLI_EXIT_USAGE;
    }
    for (c = policy_cmds; c->name != NULL; c++)
        if (strcmp(argv[1], c->name) == 0)
            return c->fn(argc - 1, argv + 1);
    cli_error(argv[0], "unknown subcommand `policy %s` (see policy --help)",
              argv[1]);
    return CLI_EXIT_USAGE;
}
