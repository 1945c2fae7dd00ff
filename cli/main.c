/*
 * main.c - `intentgate`, the small front binary that every command starts
 * in.
 *
 * Claude Code starts `intentgate hook claude-code` before each tool call,
 * so its start-up is on the agent's path; loading the libraries the PDP
 * needs (libcurl and its TLS stack, Lua, SQLite, libmicrohttpd) cost more
 * than the rest of a hook call. So this binary links only what the hook
 * uses over http:// (libc, jansson, libsodium) and runs it itself; every
 * other command, and a hook whose INTENTGATE_URL is https://, is handed
 * with execv(2) to the full binary (main_full.c): same process, same
 * arguments, same environment. The full binary's path is fixed at build
 * time relative to this one's (/proc/self/exe), never searched for.
 *
 * If the hand-over fails, a hook still answers (its https call then fails
 * and it denies, cli_http_notls.c); any other command fails with status 1.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The full binary, relative to this one's directory (cli/CMakeLists.txt). */
#ifndef IG_CLI_FULL_REL
#error "IG_CLI_FULL_REL must name the full binary relative to this one"
#endif

/* The full binary's path into out (PATH_MAX bytes); 0, or -1. */
static int
full_path(char *out)
{
    char self[PATH_MAX], *slash;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    int w;

    if (n <= 0 || (size_t)n >= sizeof(self) - 1)
        return -1;
    self[n] = '\0';
    if ((slash = strrchr(self, '/')) == NULL)
        return -1;
    *slash = '\0';
    w = snprintf(out, PATH_MAX, "%s/%s", self, IG_CLI_FULL_REL);
    return w > 0 && w < PATH_MAX ? 0 : -1;
}

/* Whether this run is a hook the small binary can answer itself. */
static int
small_hook(int argc, char **argv)
{
    const char *url = getenv("INTENTGATE_URL");

    return argc >= 2 && strcmp(argv[1], "hook") == 0 &&
           (url == NULL || strncmp(url, "https://", 8) != 0);
}

int
main(int argc, char **argv)
{
    char path[PATH_MAX];
    int err = ENOENT;

    if (small_hook(argc, argv))
        return cli_hook(argc - 1, argv + 1);
    if (full_path(path) == 0) {
        (void)execv(path, argv);
        err = errno;
    } else {
        (void)snprintf(path, sizeof(path), "%s", IG_CLI_FULL_REL);
    }
    if (argc >= 2 && strcmp(argv[1], "hook") == 0)
        return cli_hook(argc - 1, argv + 1); /* denies: see the top */
    (void)fprintf(stderr, "intentgate: cannot start %s: %s\n", path,
                  strerror(err));
    return CLI_EXIT_FAIL;
}
