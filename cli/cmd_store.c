/*
 * cmd_store.c - `intentgate store copy --from FILE.db --to URL`: move a
 * PDP's SQLite store into an empty PostgreSQL database (store/store_copy.h
 * does the copy and says what it promises). Prints one line per table
 * copied, then what to do next; a refusal is one line on stderr.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "store_copy.h"

static const char store_usage[] =
    "usage: intentgate store copy --from FILE.db --to "
    "postgresql://USER@HOST:PORT/DBNAME\n"
    "\n"
    "Copy a PDP's SQLite store (schema 5 to 7) into an empty PostgreSQL\n"
    "database (PostgreSQL 15 or newer): every table, rows exactly as\n"
    "stored, in one transaction. The database is created in the PDP's\n"
    "schema first; one that holds any rows is refused, and so is one a PDP\n"
    "is running on. The SQLite file is read under its exclusive lock, held\n"
    "for the whole copy: it is refused while a PDP has it open (stop the\n"
    "PDP first), no PDP can open it meanwhile, and nothing in it changes.\n"
    "The URL must not hold a password (any local user can read a command\n"
    "line): libpq reads PGPASSWORD or ~/.pgpass.\n"
    "\n"
    "Afterwards start the PDP with `database = URL` and the same audit key\n"
    "and anchor file: `intentgate audit verify --db URL` accepts the\n"
    "copied log with the same checkpoints.\n"
    "\n"
    "Exit status: 0 copied, 1 the copy failed (nothing was copied),\n"
    "2 bad arguments, or a source or target refused.\n";

struct tally {
    unsigned long long rows;
    unsigned tables;
};

static void
copied(void *ctx, const char *table, uint64_t rows)
{
    struct tally *t = ctx;

    (void)printf("%-18s %llu rows\n", table, (unsigned long long)rows);
    t->rows += rows;
    t->tables++;
}

static int
store_copy_cmd(int argc, char **argv)
{
    const char *from = NULL, *to = NULL, **v;
    struct tally t = {0, 0};
    struct ig_err err;
    enum ig_status st;
    int i;

    for (i = 1; i < argc; i++) {
        v = strcmp(argv[i], "--from") == 0 ? &from
            : strcmp(argv[i], "--to") == 0 ? &to
                                           : NULL;
        if (v == NULL || *v != NULL || i + 1 >= argc) {
            cli_error(argv[0], "%s: %s (see --help)", argv[i],
                      v == NULL    ? "unexpected argument"
                      : *v != NULL ? "given twice"
                                   : "needs a value");
            return CLI_EXIT_USAGE;
        }
        *v = argv[++i];
    }
    if (from == NULL || to == NULL) {
        cli_error(argv[0], "give --from FILE.db and --to URL (see --help)");
        return CLI_EXIT_USAGE;
    }
    ig_err_clear(&err);
    st = store_copy(from, to, copied, &t, &err);
    if (st != IG_OK) {
        cli_error(argv[0], "%s", err.msg);
        return st == IG_ERR_INVALID || st == IG_ERR_EXISTS ? CLI_EXIT_USAGE
                                                           : CLI_EXIT_FAIL;
    }
    (void)printf("copied %llu rows in %u tables from %s (read under its "
                 "exclusive lock)\n",
                 t.rows, t.tables, from);
    if (fflush(stdout) != 0) {
        cli_error(argv[0], "cannot write to standard output");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int
cli_store(int argc, char **argv)
{
    static char name[] = "store copy"; /* error lines' prefix */

    if (argc < 2 || cli_wants_help(argc, argv)) {
        (void)fputs(store_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "copy") == 0) {
        argv[1] = name;
        return store_copy_cmd(argc - 1, argv + 1);
    }
    cli_error(argv[0],
              "unknown subcommand '%s' (run `intentgate store --help`)",
              argv[1]);
    return CLI_EXIT_USAGE;
}
