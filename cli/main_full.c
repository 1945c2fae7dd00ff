/*
 * main_full.c - the full `intentgate` binary: dispatch to a subcommand
 * (cli/cli.h). Installed beside the small front binary (main.c), which
 * hands it every command but an http:// hook; it runs the hook too, for
 * https:// PDPs.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_git_refspec.h"
#include "cli_mcp.h"
#include "ig_version.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"approvals", cli_approvals, "list, show, approve or deny escalations"},
    {"approver", cli_approver, "print an approver's config section (add)"},
    {"audit", cli_audit, "verify, show, export and prove the audit log"},
    {"canon", cli_canon, "print the RFC 8785 canonical form of a JSON text"},
    {"git", cli_git, "push or fetch through the git gateway with a grant"},
    {"hash", cli_hash, "print the intent hash (sha256:...) of a JSON text"},
    {"hook", cli_hook, "answer an agent's tool hook (hook claude-code)"},
    {"keygen", cli_keygen, "create a grant signing key pair"},
    {"mcp", cli_mcp,
     "MCP: bridge a stdio client to the gateway (connect), pinned tools"},
    {"policy", cli_policy, "test a policy bundle (policy test DIR)"},
    {"serve", cli_serve, "run the policy decision point (HTTP API)"},
    {"store", cli_store, "copy a SQLite store into PostgreSQL (store copy)"},
    {"submit", cli_submit, "submit an intent as an agent (and wait/execute)"},
    {"witness", cli_witness, "run a transparency log witness (serve, vkey)"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *f)
{
    size_t i;

    (void)fputs("usage: intentgate COMMAND [ARGS]\n\n"
                "intentgate is the gate an AI agent must pass before it "
                "acts.\n\nCommands:\n",
                f);
    for (i = 0; i < NCOMMANDS; i++)
        (void)fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    (void)fputs("\nRun `intentgate COMMAND --help` for a command's options.\n"
                "`intentgate --version` prints the version.\n"
                "Exit status: 0 ok, 1 failure, 2 bad arguments or input.\n",
                f);
}

int
main(int argc, char **argv)
{
    size_t i;

    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        /* "intentgate 0.1.0 (git describe)": generated at build time,
           cmake/version.cmake. */
        if (puts(IG_VERSION_TEXT) == EOF || fflush(stdout) != 0)
            return CLI_EXIT_FAIL;
        return CLI_EXIT_OK;
    }
    for (i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    (void)fprintf(stderr,
                  "intentgate: unknown command '%s' (run `intentgate "
                  "--help`)\n",
                  argv[1]);
    return CLI_EXIT_USAGE;
}
