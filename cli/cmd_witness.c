/*
 * cmd_witness.c - `intentgate witness`: run a C2SP tlog-witness of our
 * own (witness/, docs/witness.md).
 *
 *   intentgate witness serve --config FILE [--listen ADDR]
 *   intentgate witness vkey --config FILE
 *   intentgate witness show --config FILE
 *
 * serve blocks SIGINT and SIGTERM before any thread starts and waits for
 * them with sigwait(), then stops (answering requests in flight). show
 * opens the state read-only and prints one JSON object a line: each
 * configured log ("kind":"log") with what the witness cosigned last, each
 * evidence row ("kind":"evidence"), and each origin's count of evidence
 * over the cap ("kind":"evidence_dropped").
 */
#include "cli.h"

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_log.h"
#include "ig_text.h"
#include "ig_time.h"
#include "witness.h"
#include "witness_state.h"

static const char witness_usage[] =
    "usage: intentgate witness serve --config FILE [--listen HOST:PORT]\n"
    "       intentgate witness vkey --config FILE\n"
    "       intentgate witness show --config FILE\n"
    "\n"
    "A witness for transparency logs (C2SP tlog-witness): it cosigns a\n"
    "log's checkpoint only when it is a consistent extension of the last\n"
    "one it cosigned for that log, and keeps the evidence of the forks and\n"
    "rollbacks it refused (docs/witness.md).\n"
    "\n"
    "serve   run it: POST /add-checkpoint, GET /<sha256(origin)>/checkpoint,\n"
    "        GET /healthz. --listen overrides the configured address (port\n"
    "        0: any free port; the start line says which). SIGINT or\n"
    "        SIGTERM stops it.\n"
    "vkey    print the witness's verifier key (give it to the logs and to\n"
    "        whoever verifies their cosignatures)\n"
    "show    print each log's state and each evidence row, as JSON lines\n";

struct witness_args {
    const char *config, *listen;
};

static int
parse_args(const char *cmd, int argc, char **argv, int serve,
           struct witness_args *a)
{
    int i;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            a->config = argv[++i];
        else if (serve && strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
            a->listen = argv[++i];
        else {
            cli_error(cmd, "unexpected argument %s (see --help)", argv[i]);
            return -1;
        }
    }
    if (a->config == NULL) {
        cli_error(cmd, "need --config FILE");
        return -1;
    }
    return 0;
}

static struct witness_config *
load(const char *cmd, const struct witness_args *a)
{
    struct witness_config *c = NULL;
    struct ig_err err;

    ig_err_clear(&err);
    if (witness_config_load(a->config, &c, &err) != IG_OK) {
        cli_error(cmd, "%s", err.msg);
        return NULL;
    }
    if (a->listen != NULL &&
        ig_listen_set(a->listen, &c->listen_host, &c->listen_port) != IG_OK) {
        cli_error(cmd, "--listen must be HOST:PORT, e.g. 127.0.0.1:8801");
        witness_config_free(c);
        return NULL;
    }
    return c;
}

static int
serve(int argc, char **argv)
{
    static const char cmd[] = "witness serve";
    struct witness_config *c;
    struct witness_args a;
    struct witness *w = NULL;
    struct ig_err err;
    sigset_t set;
    int sig = 0;

    if (parse_args(cmd, argc, argv, 1, &a) != 0)
        return CLI_EXIT_USAGE;
    if ((c = load(cmd, &a)) == NULL)
        return CLI_EXIT_USAGE;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL);
    (void)signal(SIGPIPE, SIG_IGN);
    ig_err_clear(&err);
    if (witness_start(c, &w, &err) != IG_OK) {
        cli_error(cmd, "%s", err.msg);
        witness_config_free(c);
        return CLI_EXIT_FAIL;
    }
    while (sigwait(&set, &sig) != 0)
        ;
    ig_log("info", "witness.stopping",
           json_pack("{s:s}", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM"));
    witness_stop(w);
    witness_config_free(c);
    return CLI_EXIT_OK;
}

static int
vkey(int argc, char **argv)
{
    static const char cmd[] = "witness vkey";
    char out[WITNESS_OWN_VKEY_MAX + 1];
    struct witness_config *c;
    struct witness_args a;
    struct ig_err err;
    int rc = CLI_EXIT_OK;

    if (parse_args(cmd, argc, argv, 0, &a) != 0)
        return CLI_EXIT_USAGE;
    if ((c = load(cmd, &a)) == NULL)
        return CLI_EXIT_USAGE;
    ig_err_clear(&err);
    if (witness_vkey(c, out, sizeof(out), &err) != IG_OK) {
        cli_error(cmd, "%s", err.msg);
        rc = CLI_EXIT_FAIL;
    } else if (printf("%s\n", out) < 0 || fflush(stdout) != 0) {
        rc = CLI_EXIT_FAIL;
    }
    witness_config_free(c);
    return rc;
}

/* ---- show ---- */

/* Print v as one line (v is stolen). -1 when it cannot. */
static int
print_line(json_t *v)
{
    char *s = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    int rc = s != NULL && printf("%s\n", s) >= 0 ? 0 : -1;

    free(s);
    json_decref(v);
    return rc;
}

static json_t *
time_json(int64_t t)
{
    char s[IG_TIME_STRLEN + 1];

    return ig_time_format(t, s) == IG_OK ? json_string(s) : json_null();
}

struct show {
    const struct witness_config *c;
    int failed;
};

static int
show_log(void *ctx, const struct witness_log_row *r)
{
    struct show *sh = ctx;
    char root[48];

    (void)sodium_bin2base64(root, sizeof(root), r->root, 32,
                            sodium_base64_VARIANT_ORIGINAL);
    if (print_line(json_pack(
            "{s:s, s:s, s:I, s:s, s:o, s:s, s:b}", "kind", "log", "origin",
            r->origin, "size", (json_int_t)r->size, "root", root, "updated_at",
            time_json(r->updated_at), "checkpoint", r->note, "configured",
            witness_config_log(sh->c, r->origin, strlen(r->origin)) != NULL)) !=
        0)
        sh->failed = 1;
    return sh->failed;
}

static int
show_evidence(void *ctx, const struct witness_evidence_row *r)
{
    struct show *sh = ctx;

    if (print_line(json_pack("{s:s, s:I, s:s, s:s, s:I, s:s, s:s, s:s, s:o}",
                             "kind", "evidence", "id", (json_int_t)r->id,
                             "origin", r->origin, "reason", r->reason, "old",
                             (json_int_t)r->old, "proof", r->proof, "note",
                             r->note, "cosigned", r->stored, "received_at",
                             time_json(r->received_at))) != 0)
        sh->failed = 1;
    return sh->failed;
}

static int
show_dropped(void *ctx, const char *origin, uint64_t count)
{
    struct show *sh = ctx;

    if (print_line(json_pack("{s:s, s:s, s:I}", "kind", "evidence_dropped",
                             "origin", origin, "count", (json_int_t)count)) !=
        0)
        sh->failed = 1;
    return sh->failed;
}

/* The configured logs the witness never cosigned. */
static int
show_never(struct show *sh, struct witness_state *st)
{
    const struct witness_config *c = sh->c;
    char *note = NULL;
    size_t i, len;
    uint64_t size;
    enum ig_status s;

    for (i = 0; i < c->nlogs; i++) {
        s = witness_state_latest(st, c->logs[i].origin, &note, &len, &size);
        free(note);
        note = NULL;
        if (s == IG_ERR_NOTFOUND &&
            print_line(json_pack("{s:s, s:s, s:n, s:b}", "kind", "log",
                                 "origin", c->logs[i].origin, "size",
                                 "configured", 1)) != 0)
            return -1;
        if (s != IG_OK && s != IG_ERR_NOTFOUND)
            return -1;
    }
    return 0;
}

static int
show(int argc, char **argv)
{
    static const char cmd[] = "witness show";
    struct witness_state_opts o;
    struct witness_state *st = NULL;
    struct witness_config *c;
    struct witness_args a;
    struct show sh;
    struct ig_err err;
    int rc = CLI_EXIT_FAIL;

    if (parse_args(cmd, argc, argv, 0, &a) != 0)
        return CLI_EXIT_USAGE;
    if ((c = load(cmd, &a)) == NULL)
        return CLI_EXIT_USAGE;
    memset(&o, 0, sizeof(o));
    o.path = c->database;
    o.read_only = 1;
    ig_err_clear(&err);
    if (witness_state_open(&o, &st, &err) != IG_OK) {
        cli_error(cmd, "%s", err.msg);
        goto out;
    }
    sh.c = c;
    sh.failed = 0;
    if (witness_state_each_log(st, show_log, &sh) != IG_OK ||
        show_never(&sh, st) != 0 ||
        witness_state_each_evidence(st, show_evidence, &sh) != IG_OK ||
        witness_state_each_dropped(st, show_dropped, &sh) != IG_OK ||
        sh.failed || fflush(stdout) != 0) {
        cli_error(cmd, "cannot read the witness database %s", c->database);
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    witness_state_close(st);
    witness_config_free(c);
    return rc;
}

int
cli_witness(int argc, char **argv)
{
    if (argc < 2) {
        cli_error("witness", "need serve, vkey or show (see --help)");
        return CLI_EXIT_USAGE;
    }
    if (cli_wants_help(argc, argv)) {
        (void)fputs(witness_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "serve") == 0)
        return serve(argc - 1, argv + 1);
    if (strcmp(argv[1], "vkey") == 0)
        return vkey(argc - 1, argv + 1);
    if (strcmp(argv[1], "show") == 0)
        return show(argc - 1, argv + 1);
    cli_error("witness", "unknown subcommand %s (serve, vkey or show)",
              argv[1]);
    return CLI_EXIT_USAGE;
}
