/*
 * cli_git_run.c - how `intentgate git` runs git (cli_git_refspec.h): an
 * argv builder, a capture of a short answer (`git rev-parse`, `git remote
 * get-url`), and the run that hands git its grant.
 *
 * git is started with posix_spawnp from PATH, never through a shell; the
 * arguments are the ones cmd_git.c built. The grant goes only into the
 * environment of that one git process (and the helpers git starts):
 * GIT_CONFIG_COUNT is raised by two past what is already set and
 *   GIT_CONFIG_KEY_k   = http.<url>/.extraHeader
 *   GIT_CONFIG_VALUE_k = Authorization: Bearer <grant>
 *   GIT_CONFIG_KEY_k+1 = http.<url>/.followRedirects, VALUE false
 * so git sends the header only to URLs under the gateway URL (a
 * url.<base>.insteadOf rewrite to another host does not match the
 * scope) and follows no redirect; GIT_TERMINAL_PROMPT=0 keeps git from
 * asking for a password on a terminal. Any variable of those names
 * already in the environment is replaced, not duplicated. The string
 * holding the grant is sodium_malloc'd and wiped once git has exited.
 */
#include "cli_git_refspec.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "ig_limits.h"

extern char **environ;

#define CMD "git"
#define CONFIG_COUNT_MAX 10000 /* a GIT_CONFIG_COUNT already set */

int
cli_git_args_add(struct cli_git_args *a, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (a->n >= CLI_GIT_ARGS_MAX) {
        cli_error(CMD, "too many arguments for git");
        return -1;
    }
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (a->v[a->n] = malloc((size_t)n + 1)) == NULL) {
        cli_error(CMD, "out of memory");
        return -1;
    }
    va_start(ap, fmt);
    (void)vsnprintf(a->v[a->n], (size_t)n + 1, fmt, ap); /* sized above */
    va_end(ap);
    a->v[++a->n] = NULL;
    return 0;
}

void
cli_git_args_free(struct cli_git_args *a)
{
    while (a->n > 0)
        free(a->v[--a->n]);
    a->v[0] = NULL;
}

/* ---- running git ---- */

/* Start git from PATH with argv and envp; stdout to out_fd when >= 0
   (other_fd, the pipe's read end, closed in the child), stderr to
   /dev/null when quiet. 0, or -1 after one line. */
static int
spawn_git(char *const *argv, char *const *envp, int out_fd, int other_fd,
          int quiet, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    int rc;

    rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0 && out_fd >= 0)
        rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    if (rc == 0 && out_fd >= 0)
        rc = posix_spawn_file_actions_addclose(&fa, out_fd);
    if (rc == 0 && other_fd >= 0)
        rc = posix_spawn_file_actions_addclose(&fa, other_fd);
    if (rc == 0 && quiet)
        rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (rc == 0)
        rc = posix_spawnp(pid, "git", &fa, NULL, argv, envp);
    (void)posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        cli_error(CMD, "cannot run git: %s", strerror(rc));
        return -1;
    }
    return 0;
}

/* git's exit status, 256 + the signal that killed it, or -1. */
static int
wait_git(pid_t pid)
{
    int st;

    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 256 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int
cli_git_capture(char *const *argv, int quiet, char *out, size_t cap)
{
    size_t len = 0;
    int fd[2], over = 0, status;
    char sink[512];
    ssize_t n;
    pid_t pid;

    if (pipe(fd) != 0) {
        cli_error(CMD, "cannot run git: %s", strerror(errno));
        return -1;
    }
    if (spawn_git(argv, environ, fd[1], fd[0], quiet, &pid) != 0) {
        (void)close(fd[0]);
        (void)close(fd[1]);
        return -1;
    }
    (void)close(fd[1]);
    for (;;) {
        if (len + 1 < cap)
            n = read(fd[0], out + len, cap - 1 - len);
        else
            n = read(fd[0], sink, sizeof(sink));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (len + 1 < cap)
            len += (size_t)n;
        else
            over = 1;
    }
    (void)close(fd[0]);
    out[len] = '\0';
    status = wait_git(pid);
    if (over || strlen(out) != len) {
        cli_error(CMD, "git %s printed more than a line", argv[1]);
        return -1;
    }
    if (len > 0 && out[len - 1] == '\n')
        out[len - 1] = '\0';
    return status;
}

/* ---- the environment that carries the grant ---- */

struct genv {
    char **v;     /* environ's strings (not owned), then own and secret */
    char *own[5]; /* malloc'd */
    char *secret; /* sodium_malloc'd: the header value with the grant */
    size_t secret_size;
};

/* 1 when the two "NAME=value" strings have the same NAME. */
static int
same_name(const char *a, const char *b)
{
    size_t n = strcspn(b, "=");

    return strncmp(a, b, n) == 0 && a[n] == '=';
}

long long
cli_git_config_base(void)
{
    const char *s = getenv("GIT_CONFIG_COUNT");
    long long n;
    char *end;

    if (s == NULL || s[0] == '\0')
        return 0;
    errno = 0;
    n = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || n < 0 || n > CONFIG_COUNT_MAX ||
        s[0] < '0' || s[0] > '9') {
        cli_error(CMD,
                  "GIT_CONFIG_COUNT is set to something other than a "
                  "count of 0 to %d",
                  CONFIG_COUNT_MAX);
        return -1;
    }
    return n;
}

static void
genv_free(struct genv *e)
{
    size_t i;

    for (i = 0; i < sizeof(e->own) / sizeof(e->own[0]); i++)
        free(e->own[i]);
    if (e->secret != NULL) {
        sodium_memzero(e->secret, e->secret_size);
        sodium_free(e->secret);
    }
    free(e->v);
    memset(e, 0, sizeof(*e));
}

/* Build git's environment; 0, or -1 after one line (e freed). */
static int
genv_build(struct genv *e, const char *url, const char *grant)
{
    struct cli_git_args own = {{NULL}, 0};
    long long k = cli_git_config_base();
    size_t n = 0, i, j, m = 0;
    int w;

    memset(e, 0, sizeof(*e));
    if (k < 0)
        return -1;
    if (cli_git_args_add(&own, "GIT_CONFIG_COUNT=%lld", k + 2) != 0 ||
        cli_git_args_add(&own, "GIT_CONFIG_KEY_%lld=http.%s/.extraHeader", k,
                         url) != 0 ||
        cli_git_args_add(&own, "GIT_CONFIG_KEY_%lld=http.%s/.followRedirects",
                         k + 1, url) != 0 ||
        cli_git_args_add(&own, "GIT_CONFIG_VALUE_%lld=false", k + 1) != 0 ||
        cli_git_args_add(&own, "GIT_TERMINAL_PROMPT=0") != 0)
        goto fail;
    memcpy(e->own, own.v, sizeof(e->own));
    own.n = 0; /* moved into e */
    e->secret_size = strlen(grant) + 64;
    e->secret = sodium_malloc(e->secret_size);
    while (environ[n] != NULL)
        n++;
    e->v = calloc(n + 7, sizeof(*e->v));
    if (e->secret == NULL || e->v == NULL) {
        cli_error(CMD, "out of memory");
        goto fail;
    }
    w = snprintf(e->secret, e->secret_size,
                 "GIT_CONFIG_VALUE_%lld=Authorization: Bearer %s", k, grant);
    IG_ASSERT(w > 0 && (size_t)w < e->secret_size); /* k < 10^5 */
    for (i = 0; i < n; i++) {
        for (j = 0; j < 5 && !same_name(environ[i], e->own[j]); j++)
            ;
        if (j == 5 && !same_name(environ[i], e->secret))
            e->v[m++] = environ[i];
    }
    for (j = 0; j < 5; j++)
        e->v[m++] = e->own[j];
    e->v[m] = e->secret;
    return 0;
fail:
    cli_git_args_free(&own);
    genv_free(e);
    return -1;
}

/* A grant git may carry in a header: "v4.public." and base64url. */
static int
grant_ok(const char *g)
{
    size_t n = g != NULL ? strlen(g) : 0;

    return n > 10 && n <= IG_TOKEN_MAX_BYTES &&
           strncmp(g, "v4.public.", 10) == 0 &&
           strspn(g, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789-_.") == n;
}

int
cli_git_run_granted(char *const *argv, const char *url, const char *grant)
{
    struct genv e;
    int status = -1;
    pid_t pid;

    if (!grant_ok(grant)) {
        cli_error(CMD, "the PDP's grant is not one git can carry");
        return -1;
    }
    if (genv_build(&e, url, grant) != 0)
        return -1;
    if (spawn_git(argv, e.v, -1, -1, 0, &pid) == 0)
        status = wait_git(pid);
    genv_free(&e);
    if (status < 0)
        cli_error(CMD, "git %s: cannot wait for it", argv[1]);
    return status;
}
