/*
 * cmd_audit.c - `intentgate audit SUBCOMMAND`: a compliance reviewer's
 * tools for the PDP's audit log.
 *
 * verify lives in cmd_audit_verify.c (with cmd_audit_leaves.c, which
 * reads the leaves, and cmd_audit_times.c, their times); show in
 * cmd_audit_show.c, export in cmd_audit_export.c, proofs and hash-value in
 * cmd_audit_proof.c and cmd_audit_redact.c; cmd_audit_db.c has the readers
 * they share. The database is read only through store/store_log.h.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "cmd_audit_int.h"

static const char audit_usage[] =
    "usage: intentgate audit SUBCOMMAND [ARGS]\n"
    "\n"
    "Verify, read and export the PDP's audit log (docs/audit.md).\n"
    "\n"
    "Subcommands:\n"
    "  verify         check every leaf and signed checkpoint\n"
    "  show           the timeline of one intent\n"
    "  export         the leaves as JSONL or CSV, and the checkpoints\n"
    "  proof          the inclusion proof (C2SP tlog-proof) of one leaf\n"
    "  consistency    the consistency proof between two checkpoints\n"
    "  verify-proof   check one tlog-proof offline\n"
    "  hash-value     the HMAC the log stores for a redacted value\n"
    "\n"
    "Run `intentgate audit SUBCOMMAND --help` for its options.\n"
    "Exit status: 0 ok, 1 verification failed (or I/O), 2 bad arguments or "
    "input;\n"
    "verify also 3: everything verifies, but a leaf was left unsigned longer\n"
    "than the PDP's checkpoint_interval + " ACLI_STR(
        IG_AUDIT_UNSIGNED_MARGIN) " s; 4: it verifies, but fewer than\n"
                                  "--witness-quorum of the named witnesses "
                                  "cosigned its latest checkpoint\n"
                                  "(see `audit verify --help`).\n";

/* ---- dispatch ---- */

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} subcommands[] = {
    {"verify", cli_audit_verify},
    {"show", cli_audit_show},
    {"export", cli_audit_export},
    {"proof", cli_audit_proof},
    {"consistency", cli_audit_consistency},
    {"verify-proof", cli_audit_verify_proof},
    {"hash-value", cli_audit_hash_value},
};

int
cli_audit(int argc, char **argv)
{
    char name[64];
    size_t i;

    if (argc < 2) {
        (void)fputs(audit_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        (void)fputs(audit_usage, stdout);
        return CLI_EXIT_OK;
    }
    for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
        if (strcmp(argv[1], subcommands[i].name) != 0)
            continue;
        /* Error lines read "intentgate audit verify: ...". */
        (void)snprintf(name, sizeof(name), "audit %s", argv[1]);
        argv[1] = name;
        return subcommands[i].run(argc - 1, argv + 1);
    }
    cli_error(argv[0],
              "unknown subcommand '%s' (run `intentgate audit --help`)",
              argv[1]);
    return CLI_EXIT_USAGE;
}
