/*
 * cmd_serve.c - `intentgate serve`: run the policy decision point.
 *
 *   intentgate serve --config FILE [--listen ADDR] [--database DB]
 *                    [--adopt-audit-anchor]
 *   intentgate serve --dev --data DIR [--listen ADDR] [--database DB]
 *                    [--adopt-audit-anchor]
 *
 * Signals are handled here, synchronously: they are blocked before any
 * thread starts (so every thread inherits the mask) and taken with
 * sigwait(): SIGHUP reloads the policy bundle (kept if the new one fails to
 * load or its tests fail), SIGINT/SIGTERM stop gracefully.
 */
#include "cli.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_text.h"
#include "pdp.h"
#include "pdp_dev.h"
#include "store.h"
#include "store_log.h"

static const char serve_usage[] =
    "usage: intentgate serve --config FILE [--listen ADDR] [--database DB]\n"
    "                        [--adopt-audit-anchor]\n"
    "       intentgate serve --dev --data DIR [--listen ADDR] [--database DB]\n"
    "                        [--adopt-audit-anchor]\n"
    "\n"
    "Run the policy decision point: the HTTP API agents submit intents to\n"
    "(docs/api.md). --listen HOST:PORT overrides the configured address\n"
    "(port 0 picks a free port). Loopback only by default.\n"
    "\n"
    "--database overrides the configured database (with --dev too): a\n"
    "SQLite file (a relative path is taken from the current directory) or\n"
    "a postgresql://USER@HOST:PORT/DBNAME URL. A URL holding a password is\n"
    "refused (every local user can read a command line): libpq reads it\n"
    "from ~/.pgpass or the file PGPASSFILE names.\n"
    "\n"
    "--dev creates DIR on first run with a signing key, the example\n"
    "policies, one agent, one executor and one admin token, and writes\n"
    "DIR/dev.env (shell lines with the URL and tokens), which it prints.\n"
    "Restarting with the same DIR keeps everything.\n"
    "\n"
    "At start the audit log is recomputed from its events and must extend\n"
    "the signed checkpoint kept in its anchor file ([audit] anchor, by\n"
    "default the audit key's path + .checkpoint; docs/audit.md). A database\n"
    "that does not (rewritten, restored from an older backup, events added\n"
    "while the PDP was stopped, or the anchor missing) is refused.\n"
    "--adopt-audit-anchor, once, after checking the log with `intentgate\n"
    "audit verify`, takes the database as it is and rewrites the anchor\n"
    "(logged as audit.anchor_adopted). --dev adopts a missing anchor.\n"
    "\n"
    "Signals: SIGHUP reloads the policy bundle (a bundle that fails to load\n"
    "or whose *_test.lua cases fail is refused and the old one stays);\n"
    "SIGINT or SIGTERM stops after answering requests in flight.\n";

struct serve_args {
    const char *config, *data, *listen, *database;
    int dev, adopt;
};

static int
parse_args(int argc, char **argv, struct serve_args *a)
{
    int i;

    memset(a, 0, sizeof(*a));
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(arg, "--dev") == 0)
            a->dev = 1;
        else if (strcmp(arg, "--adopt-audit-anchor") == 0)
            a->adopt = 1;
        else if (strcmp(arg, "--config") == 0 && has_value)
            a->config = argv[++i];
        else if (strcmp(arg, "--data") == 0 && has_value)
            a->data = argv[++i];
        else if (strcmp(arg, "--listen") == 0 && has_value)
            a->listen = argv[++i];
        else if (strcmp(arg, "--database") == 0 && has_value)
            a->database = argv[++i];
        else {
            cli_error(argv[0], "unexpected argument %s (see --help)", arg);
            return -1;
        }
    }
    if (a->dev && (a->data == NULL || a->config != NULL)) {
        cli_error(argv[0], "--dev needs --data DIR (and no --config)");
        return -1;
    }
    if (!a->dev && (a->config == NULL || a->data != NULL)) {
        cli_error(argv[0], "need --config FILE, or --dev --data DIR");
        return -1;
    }
    return 0;
}

/* Apply --listen HOST:PORT to the loaded config. */
static int
override_listen(const char *cmd, struct pdp_config *c, const char *listen)
{
    if (ig_listen_set(listen, &c->listen_host, &c->listen_port) != IG_OK) {
        cli_error(cmd, "--listen must be HOST:PORT, e.g. 127.0.0.1:8700");
        return -1;
    }
    return 0;
}

/* Apply --database FILE|URL to the loaded config. */
static int
override_database(const char *cmd, struct pdp_config *c, const char *db)
{
    char *copy;

    if (db[0] == '\0') {
        cli_error(cmd, "--database needs a SQLite file or a postgresql:// "
                       "URL");
        return -1;
    }
    if (store_url_has_password(db)) {
        cli_error(cmd, "--database must not hold a password (any local user "
                       "can read it in the process list): put it in "
                       "~/.pgpass or a PGPASSFILE");
        return -1;
    }
    copy = strdup(db);
    if (copy == NULL) {
        cli_error(cmd, "out of memory");
        return -1;
    }
    free(c->database);
    c->database = copy;
    return 0;
}

static int
announce_dev(const char *cmd, const char *dir, const struct pdp_config *c,
             unsigned short port)
{
    char url[128], env[8192];
    struct ig_err err;

    (void)snprintf(url, sizeof(url), "http://%s:%u", c->listen_host, port);
    if (pdp_dev_write_env(dir, url, env, sizeof(env), &err) != IG_OK) {
        cli_error(cmd, "%s", err.msg);
        return -1;
    }
    (void)printf("# intentgate dev mode: %s/dev.env holds these lines.\n"
                 "# Load them with: set -a; . %s/dev.env; set +a\n%s",
                 dir, dir, env);
    (void)fflush(stdout);
    return 0;
}

static void
wait_for_signals(struct pdp_server *srv, const sigset_t *set)
{
    struct ig_err err;
    int sig;

    for (;;) {
        if (sigwait(set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            ig_err_clear(&err);
            /* A refused bundle is logged there; the old one stays. */
            if (pdp_server_reload_policies(srv, &err) != IG_OK)
                ig_err_clear(&err);
            continue;
        }
        pdp_log(
            "info", "server.stopping",
            json_pack("{s:s}", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM"));
        return;
    }
}

int
cli_serve(int argc, char **argv)
{
    struct serve_args a;
    struct pdp_config *cfg = NULL;
    struct pdp_server *srv = NULL;
    struct ig_err err;
    char confpath[4096];
    sigset_t set;
    int rc = CLI_EXIT_FAIL;

    if (cli_wants_help(argc, argv)) {
        (void)fputs(serve_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (parse_args(argc, argv, &a) != 0)
        return CLI_EXIT_USAGE;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL);
    (void)signal(SIGPIPE, SIG_IGN);
    ig_err_clear(&err);
    if (a.dev &&
        pdp_dev_prepare(a.data, a.listen != NULL ? a.listen : "127.0.0.1:8700",
                        confpath, sizeof(confpath), &err) != IG_OK) {
        cli_error(argv[0], "%s", err.msg);
        return CLI_EXIT_FAIL;
    }
    if (pdp_config_load(a.dev ? confpath : a.config, &cfg, &err) != IG_OK) {
        cli_error(argv[0], "%s", err.msg);
        return CLI_EXIT_USAGE;
    }
    cfg->audit_anchor_adopt = a.adopt ? STORE_ANCHOR_ADOPT
                              : a.dev ? STORE_ANCHOR_ADOPT_MISSING
                                      : STORE_ANCHOR_STRICT;
    if (a.listen != NULL && override_listen(argv[0], cfg, a.listen) != 0) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    if (a.database != NULL &&
        override_database(argv[0], cfg, a.database) != 0) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    if (pdp_server_start(cfg, &srv, &err) != IG_OK) {
        cli_error(argv[0], "%s", err.msg);
        goto out;
    }
    if (a.dev && announce_dev(argv[0], a.data, cfg, pdp_server_port(srv)) != 0)
        goto out;
    wait_for_signals(srv, &set);
    rc = CLI_EXIT_OK;
out:
    pdp_server_stop(srv);
    pdp_config_free(cfg);
    return rc;
}
