/*
 * main.c - `intentgate-executor`: the process that alone holds the
 * credentials.
 *
 *   intentgate-executor serve --config FILE [--listen HOST:PORT]
 *   intentgate-executor serve --dev --pdp-env DIR/dev.env [--listen ...]
 *   intentgate-executor secret keygen|set|list ...
 *   intentgate-executor --version
 *
 * Signals are blocked before any thread starts and taken with sigwait:
 * SIGINT/SIGTERM stop. Serving makes the process non-dumpable (no core
 * files, no ptrace or /proc/<pid>/mem by the same user). A hidden verb
 * runs the sandbox self-check's probe (exec_selfcheck.c).
 */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "exec_cli.h"
#include "exec_config.h"
#include "exec_dev.h"
#include "exec_selfcheck.h"
#include "exec_server.h"
#include "ig_secmem.h"
#include "ig_text.h"
#include "ig_version.h"

static const char usage[] =
    "usage: intentgate-executor [serve] --config FILE [--listen HOST:PORT]\n"
    "       intentgate-executor [serve] --dev --pdp-env DIR/dev.env "
    "[--listen HOST:PORT]\n"
    "       intentgate-executor secret keygen|set|list ... (secret --help)\n"
    "       intentgate-executor --version\n"
    "\n"
    "Redeems single-use grants from the intentgate PDP and runs the action\n"
    "they allow, with credentials the agent never sees (docs/executor.md).\n";

/* serve's command line; NULL: not given. */
struct serve_args {
    const char *config, *pdp_env, *listen;
    int dev;
};

/* Parse serve's arguments (argv[0] is the verb) into *a (zeroed by the
   caller): 0, or the exit status 2 once the problem is on stderr. */
static int
serve_parse(int argc, char **argv, struct serve_args *a)
{
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dev") == 0)
            a->dev = 1;
        else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            a->config = argv[++i];
        else if (strcmp(argv[i], "--pdp-env") == 0 && i + 1 < argc)
            a->pdp_env = argv[++i];
        else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
            a->listen = argv[++i];
        else {
            (void)fprintf(stderr,
                          "intentgate-executor serve: unexpected "
                          "argument %s (see --help)\n",
                          argv[i]);
            return 2;
        }
    }
    if (a->dev ? a->pdp_env == NULL || a->config != NULL : a->config == NULL) {
        (void)fputs("intentgate-executor serve: need --config FILE, or "
                    "--dev --pdp-env DIR/dev.env\n",
                    stderr);
        return 2;
    }
    return 0;
}

/* Load the configuration (in dev mode, prepared first), start the
   server, announce it and wait in sigwait on set until a stop signal.
   The exit status: 0 stopped, 1 failed, 2 a bad --listen. */
static int
serve_run(const struct serve_args *a, const sigset_t *set)
{
    char confpath[4096], url[128];
    struct exec_config *cfg = NULL;
    struct exec_server *srv = NULL;
    struct ig_err err;
    int sig, rc = 1;

    ig_err_clear(&err);
    if (a->dev && exec_dev_prepare(a->pdp_env, a->listen, confpath,
                                   sizeof(confpath), &err) != IG_OK)
        goto fail;
    if (exec_config_load(a->dev ? confpath : a->config, &cfg, &err) != IG_OK)
        goto fail;
    if (a->listen != NULL && ig_listen_set(a->listen, &cfg->listen_host,
                                           &cfg->listen_port) != IG_OK) {
        (void)fputs("intentgate-executor serve: --listen must be "
                    "HOST:PORT\n",
                    stderr);
        rc = 2;
        goto out;
    }
    if (exec_server_start(cfg, &srv, &err) != IG_OK)
        goto fail;
    (void)snprintf(url, sizeof(url), "http://%s:%u", cfg->listen_host,
                   exec_server_port(srv));
    (void)fprintf(stderr,
                  "{\"event\":\"executor.started\",\"id\":\"%s\","
                  "\"url\":\"%s\"}\n",
                  cfg->id, url);
    if (a->dev && exec_dev_announce(a->pdp_env, url, &err) != IG_OK)
        goto fail;
    while (sigwait(set, &sig) != 0)
        ;
    rc = 0;
    goto out;
fail:
    (void)fprintf(stderr, "intentgate-executor: %s\n", err.msg);
out:
    exec_server_stop(srv);
    exec_config_free(cfg);
    return rc;
}

static int
serve(int argc, char **argv)
{
    struct serve_args a = {NULL, NULL, NULL, 0};
    sigset_t set;
    int rc;

    if ((rc = serve_parse(argc, argv, &a)) != 0)
        return rc;
    /* This process holds credentials: no core dumps, no ptrace by the same
       user, /proc/self/{mem,environ,...} owned by root. */
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL);
    (void)signal(SIGPIPE, SIG_IGN);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        (void)fputs("intentgate-executor: cannot initialize libcurl\n", stderr);
        return 1;
    }
    rc = serve_run(&a, &set);
    ig_secmem_drain();
    curl_global_cleanup();
    return rc;
}

int
main(int argc, char **argv)
{
    /* Inside a sandbox, for the start-up self-check (exec_selfcheck.c). */
    if (argc >= 2 && exec_probe_verb(argv[1]))
        exec_probe_main(argc, argv);
    if (argc < 2) {
        (void)fputs(usage, stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        (void)fputs(usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        /* The package's version (cmake/version.cmake), as the CLI's. */
        if (puts(IG_VERSION_TEXT) == EOF || fflush(stdout) != 0)
            return 1;
        return 0;
    }
    if (strcmp(argv[1], "serve") == 0)
        return serve(argc - 1, argv + 1);
    if (strcmp(argv[1], "--dev") == 0 || strcmp(argv[1], "--config") == 0)
        return serve(argc, argv); /* `intentgate-executor --dev ...` */
    if (strcmp(argv[1], "secret") == 0)
        return exec_cli_secret(argc - 1, argv + 1);
    (void)fprintf(stderr,
                  "intentgate-executor: unknown command '%s' (see --help)\n",
                  argv[1]);
    return 2;
}
