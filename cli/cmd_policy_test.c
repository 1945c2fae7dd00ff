/*
 * cmd_policy_test.c - `intentgate policy test DIR`: run a policy bundle's
 * tests.
 *
 * Loads DIR as a bundle (pol_bundle_load: every policy must compile and
 * return a function), prints its revision, then runs every *_test.lua case
 * against it (pol_bundle_test), one line per case on standard output.
 * Exit status: 0 all passed, 1 a case failed, 2 bad usage or a bundle that
 * does not load (one line on stderr says why, with file and line).
 */
#include "cmd_policy_int.h"

#include <stdio.h>
#include <string.h>

#include "pol.h"

static const char policy_usage[] =
    "usage: intentgate policy test DIR\n"
    "\n"
    "Load the policy bundle in DIR (its *.lua files) and run the cases its\n"
    "*_test.lua files return, printing one line per case and a summary.\n"
    "Each test file returns an array of cases:\n"
    "  { name = \"...\", intent = { action = \"git.push\", ... },\n"
    "    expect = \"ALLOW\" | \"ESCALATE\" | \"BLOCK\",\n"
    "    reasons = { \"CODE\", ... },   -- optional, compared as a set\n"
    "    counts = { [\"key\"] = n } }    -- optional, what count(key) returns\n"
    "\n"
    "Exit status: 0 all cases passed, 1 a case failed, 2 bad arguments or a\n"
    "bundle that does not load.\n";

int
cli_policy_test(int argc, char **argv)
{
    struct pol_bundle *b = NULL;
    struct ig_err err;
    int failed, rc = CLI_EXIT_USAGE;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(policy_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (argc != 2) {
        cli_error("policy test", "expected `policy test DIR` (see --help)");
        return CLI_EXIT_USAGE;
    }
    ig_err_clear(&err);
    if (pol_bundle_load(argv[1], NULL, &b, &err) != IG_OK) {
        cli_error("policy test", "%s", err.msg);
        return CLI_EXIT_USAGE;
    }
    (void)printf("bundle %s revision %s\n", argv[1], pol_bundle_revision(b));
    failed = pol_bundle_test(b, stdout, &err);
    if (fflush(stdout) != 0) {
        cli_error("policy test", "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    } else if (failed < 0) {
        cli_error("policy test", "%s", err.msg);
    } else {
        rc = failed == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    pol_bundle_unref(b);
    return rc;
}
