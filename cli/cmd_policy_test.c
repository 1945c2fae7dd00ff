/*
 * cmd_policy_test.c - `intentgate policy test DIR [--coverage]`: run a
 * policy bundle's tests, optionally with line and branch coverage.
 *
 * Loads DIR as a bundle (pol_bundle_load: every policy must compile and
 * return a function), prints its revision, then runs every *_test.lua case
 * against it (pol_bundle_test_cover), one line per case on standard
 * output. With --coverage the same cases decide the same way, then a
 * coverage report follows (text), or - with --coverage-format json - the
 * case lines go to standard error and standard output holds one JSON
 * document. Exit status: 0 all passed, 1 a case failed, 2 bad usage or a
 * bundle that does not load (one line on stderr says why, with file and
 * line). Coverage never changes the exit status.
 */
#include "cmd_policy_int.h"

#include <stdio.h>
#include <string.h>

#include "pol.h"

static const char policy_usage[] =
    "usage: intentgate policy test DIR [--coverage]\n"
    "                              [--coverage-format text|json]\n"
    "                              [--settings FILE | --config FILE]\n"
    "\n"
    "Load the policy bundle in DIR (its *.lua files) and run the cases its\n"
    "*_test.lua files return, printing one line per case and a summary.\n"
    "Each test file returns an array of cases:\n"
    "  { name = \"...\", intent = { action = \"git.push\", ... },\n"
    "    expect = \"ALLOW\" | \"ESCALATE\" | \"BLOCK\",\n"
    "    reasons = { \"CODE\", ... },   -- optional, compared as a set\n"
    "    counts = { [\"key\"] = n } }    -- optional, what count(key) returns\n"
    "\n"
    "--coverage            then report, per policy file, the lines and the\n"
    "                      if/elseif branches no case ran\n"
    "--coverage-format F   text (the default) or json: one JSON document on\n"
    "                      standard output, the case lines on standard error\n"
    "                      (implies --coverage)\n"
    "--settings FILE       a JSON object the policies see as `config`, as the\n"
    "                      server's [policy] section gives them (the server\n"
    "                      runs the tests with its own settings)\n"
    "--config FILE         or: the server's config file, its [policy]\n"
    "                      settings read as the server reads them\n"
    "\n"
    "Exit status: 0 all cases passed, 1 a case failed, 2 bad arguments or a\n"
    "bundle that does not load.\n";

struct policy_test_args {
    const char *dir, *settings, *config;
    int coverage;
    int json;
};

static int
policy_test_parse(int argc, char **argv, struct policy_test_args *a)
{
    int i;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--coverage") == 0) {
            a->coverage = 1;
        } else if (strcmp(argv[i], "--coverage-format") == 0) {
            if (i + 1 == argc || (strcmp(argv[i + 1], "text") != 0 &&
                                  strcmp(argv[i + 1], "json") != 0)) {
                cli_error("policy test",
                          "--coverage-format takes `text` or `json`");
                return -1;
            }
            a->coverage = 1;
            a->json = strcmp(argv[++i], "json") == 0;
        } else if (strcmp(argv[i], "--settings") == 0 ||
                   strcmp(argv[i], "--config") == 0) {
            if (i + 1 == argc) {
                cli_error("policy test", "%s needs a FILE", argv[i]);
                return -1;
            }
            if (argv[i][2] == 's')
                a->settings = argv[++i];
            else
                a->config = argv[++i];
        } else if (argv[i][0] == '-' || a->dir != NULL) {
            cli_error("policy test",
                      "unexpected argument `%s` (expected `policy test DIR "
                      "[--coverage] [--coverage-format text|json]`)",
                      argv[i]);
            return -1;
        } else {
            a->dir = argv[i];
        }
    }
    if (a->dir == NULL) {
        cli_error("policy test", "expected `policy test DIR` (see --help)");
        return -1;
    }
    return 0;
}

/* The JSON report on standard output; 0, or -1 out of memory. */
static int
policy_test_json(const struct policy_test_args *a, struct pol_bundle *b,
                 int failed, const struct pol_coverage *cov)
{
    json_t *c = pol_coverage_json(cov), *doc;
    int rc;

    /* "o" steals c */
    doc = json_pack("{s:s, s:s, s:i, s:o}", "bundle", a->dir, "revision",
                    pol_bundle_revision(b), "failed", failed, "coverage", c);
    if (doc == NULL)
        return -1;
    rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) == 0 &&
                 fputc('\n', stdout) != EOF
             ? 0
             : -1;
    json_decref(doc);
    return rc;
}

int
cli_policy_test(int argc, char **argv)
{
    struct policy_test_args a;
    struct pol_bundle *b = NULL;
    struct pol_coverage *cov = NULL;
    struct ig_err err;
    enum ig_status st;
    json_t *settings = NULL;
    FILE *lines;
    int failed, rc = CLI_EXIT_USAGE;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(policy_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (policy_test_parse(argc, argv, &a) != 0)
        return CLI_EXIT_USAGE;
    if (cli_policy_settings("policy test", a.settings, a.config, &settings) !=
        0)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    st = pol_bundle_load(a.dir, settings, &b, &err);
    json_decref(settings);
    if (st != IG_OK) {
        cli_error("policy test", "%s", err.msg);
        return CLI_EXIT_USAGE;
    }
    lines = a.json ? stderr : stdout;
    (void)fprintf(lines, "bundle %s revision %s\n", a.dir,
                  pol_bundle_revision(b));
    failed = pol_bundle_test_cover(b, lines, a.coverage ? &cov : NULL, &err);
    if (failed >= 0 && cov != NULL) {
        if (a.json && policy_test_json(&a, b, failed, cov) != 0)
            failed = -2;
        else if (!a.json)
            pol_coverage_print(cov, stdout);
    }
    if (fflush(stdout) != 0 || failed == -2) {
        cli_error("policy test", "cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    } else if (failed < 0) {
        cli_error("policy test", "%s", err.msg);
    } else {
        rc = failed == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    pol_coverage_free(cov);
    pol_bundle_unref(b);
    return rc;
}
