/*
 * cmd_mcp_tools.c - `intentgate mcp tools pending|accept --pins FILE`:
 * the admin's side of pinned MCP tool definitions (core/ig_pins.h).
 *
 * The MCP gateway pins the first definition it sees of each upstream tool
 * and hides a tool whose definition later changes. `pending` shows each
 * change in full - the definition is what the model will read, so it is
 * printed whole, every non-ASCII or invisible character escaped (\uXXXX)
 * so that nothing in it can hide from the admin's terminal. `accept`
 * trusts one change of one tool (by its hash, as `pending` printed it);
 * the gateway serves it from its next check, without a restart. The
 * accept is recorded with the admin's login name (getpwuid of the real
 * uid).
 *
 * The pin file must exist (the gateway creates it): a mistyped path is an
 * error here, not a new empty file.
 */
#include "cli.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_pins.h"

static const char tools_usage[] =
    "usage: intentgate mcp tools pending --pins FILE [--json]\n"
    "       intentgate mcp tools accept --pins FILE KEY HASH\n"
    "\n"
    "The MCP gateway pins the first definition it sees of each upstream\n"
    "tool and hides a tool whose definition changes until an admin accepts\n"
    "the change.\n"
    "\n"
    "  pending  print each pending change: the tool's key (ALIAS/TOOL), the\n"
    "           pinned hash, the new hash and the new definition in full\n"
    "           (JSON; non-ASCII and invisible characters as \\uXXXX);\n"
    "           --json prints them as one JSON array instead\n"
    "  accept   trust the definition HASH of the tool KEY (both as pending\n"
    "           printed them); recorded with your login name\n"
    "\n"
    "  --pins FILE  the gateway's pin file (it must exist)\n"
    "\n"
    "Exit status: 0 ok, 1 failure (such as HASH not pending for KEY), 2 bad\n"
    "arguments.\n";

struct tools_args {
    const char *verb;
    const char *pins;
    const char *pos[2];
    int npos;
    int json;
};

/* Parse argv (argv[0] "tools"); CLI_EXIT_OK or CLI_EXIT_USAGE. */
static int
tools_parse(int argc, char **argv, struct tools_args *a)
{
    int i, opts = 1;

    memset(a, 0, sizeof(*a));
    if (argc < 2) {
        cli_error("mcp tools", "missing pending or accept (see --help)");
        return CLI_EXIT_USAGE;
    }
    a->verb = argv[1];
    if (strcmp(a->verb, "pending") != 0 && strcmp(a->verb, "accept") != 0) {
        cli_error("mcp tools", "unknown command '%s' (see --help)", a->verb);
        return CLI_EXIT_USAGE;
    }
    for (i = 2; i < argc; i++) {
        if (opts && strcmp(argv[i], "--") == 0) {
            opts = 0;
        } else if (opts && strcmp(argv[i], "--pins") == 0 && i + 1 < argc &&
                   a->pins == NULL) {
            a->pins = argv[++i];
        } else if (opts && strncmp(argv[i], "--pins=", 7) == 0 &&
                   a->pins == NULL) {
            a->pins = argv[i] + 7;
        } else if (opts && strcmp(argv[i], "--json") == 0 &&
                   strcmp(a->verb, "pending") == 0) {
            a->json = 1;
        } else if ((!opts || argv[i][0] != '-') && a->npos < 2 &&
                   strcmp(a->verb, "accept") == 0) {
            a->pos[a->npos++] = argv[i];
        } else {
            cli_error("mcp tools", "unexpected argument %s (see --help)",
                      argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (a->pins == NULL || a->pins[0] == '\0') {
        cli_error("mcp tools", "missing --pins FILE (see --help)");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(a->verb, "accept") == 0 && a->npos != 2) {
        cli_error("mcp tools", "accept needs KEY and HASH (see --help)");
        return CLI_EXIT_USAGE;
    }
    if (a->npos == 2 && !ig_pins_key_valid(a->pos[0])) {
        cli_error("mcp tools", "%s is not a tool key ALIAS/TOOL", a->pos[0]);
        return CLI_EXIT_USAGE;
    }
    if (a->npos == 2 && !ig_hash_is_valid(a->pos[1])) {
        cli_error("mcp tools",
                  "%s is not a hash sha256:HEX (copy it from "
                  "`mcp tools pending`)",
                  a->pos[1]);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* Open the pin file, which must exist already. */
static int
tools_open(const char *path, struct ig_pins **p)
{
    struct ig_err err;
    struct stat sb;

    if (stat(path, &sb) != 0) {
        cli_error("mcp tools", "no pin file at %s: %s", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (ig_pins_open(path, p, &err) != IG_OK) {
        cli_error("mcp tools", "%s", err.msg);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Print v as JSON with every non-ASCII character and DEL escaped, each
   line after indent. */
static int
tools_print_json(const json_t *v, size_t flags, const char *indent)
{
    char *s = json_dumps(v, flags | JSON_ENSURE_ASCII | JSON_SORT_KEYS);
    size_t i;
    int rc;

    if (s == NULL)
        return -1;
    rc = fputs(indent, stdout);
    for (i = 0; s[i] != '\0' && rc >= 0; i++) {
        rc = s[i] == 0x7f ? fputs("\\u007f", stdout) : putchar(s[i]);
        if (s[i] == '\n' && rc >= 0)
            rc = fputs(indent, stdout);
    }
    free(s);
    return rc < 0 || putchar('\n') == EOF ? -1 : 0;
}

static int
tools_print_change(const json_t *c)
{
    if (printf("%s\n  pinned: %s\n  new:    %s (first seen %s)\n"
               "  definition:\n",
               json_string_value(json_object_get(c, "key")),
               json_string_value(json_object_get(c, "pinned")),
               json_string_value(json_object_get(c, "hash")),
               json_string_value(json_object_get(c, "seen_at"))) < 0)
        return -1;
    return tools_print_json(json_object_get(c, "definition"), JSON_INDENT(2),
                            "    ");
}

static int
tools_pending(const struct tools_args *a, struct ig_pins *p)
{
    struct ig_err err;
    json_t *arr = NULL;
    size_t i;
    int bad = 0;

    if (ig_pins_pending(p, &arr, &err) != IG_OK) {
        cli_error("mcp tools pending", "%s", err.msg);
        return CLI_EXIT_FAIL;
    }
    if (a->json)
        bad = tools_print_json(arr, JSON_COMPACT, "") != 0;
    else if (json_array_size(arr) == 0)
        bad = puts("no pending changes") == EOF;
    for (i = 0; !a->json && !bad && i < json_array_size(arr); i++)
        bad = (i > 0 && putchar('\n') == EOF) ||
              tools_print_change(json_array_get(arr, i)) != 0;
    json_decref(arr);
    if (bad || fflush(stdout) != 0) {
        cli_error("mcp tools pending", "cannot write to standard output");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int
tools_accept(const struct tools_args *a, struct ig_pins *p)
{
    const char *key = a->pos[0], *hash = a->pos[1];
    struct passwd *pw;
    struct ig_err err;

    pw = getpwuid(getuid());
    if (pw == NULL || pw->pw_name == NULL) {
        cli_error("mcp tools accept", "cannot find your login name");
        return CLI_EXIT_FAIL;
    }
    if (ig_pins_accept(p, key, hash, pw->pw_name, &err) != IG_OK) {
        cli_error("mcp tools accept", "%s", err.msg);
        return CLI_EXIT_FAIL;
    }
    if (printf("accepted %s for %s (by %s)\n", hash, key, pw->pw_name) < 0 ||
        fflush(stdout) != 0) {
        cli_error("mcp tools accept", "cannot write to standard output");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int
cmd_mcp_tools(int argc, char **argv)
{
    struct tools_args a;
    struct ig_pins *p = NULL;
    int rc;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(tools_usage, stdout);
        return CLI_EXIT_OK;
    }
    rc = tools_parse(argc, argv, &a);
    if (rc == CLI_EXIT_OK)
        rc = tools_open(a.pins, &p);
    if (rc == CLI_EXIT_OK)
        rc = strcmp(a.verb, "pending") == 0 ? tools_pending(&a, p)
                                            : tools_accept(&a, p);
    ig_pins_free(p);
    return rc;
}
