/*
 * exec_git_ff.c - a repository's fast_forward_only check: is every update
 * of a push a fast-forward of the upstream's ref?
 *
 * `--force` is invisible on the wire: a forced update is a command like any
 * other. What tells them apart is history: the update is a fast-forward
 * when the old id is an ancestor of the new one. The new commits are in the
 * pushed pack, the old ones upstream, so git itself is asked, with a
 * private cache repository per alias (under the spool directory, one check
 * at a time):
 *   1. git fetch the updated refs from the upstream into the cache (the
 *      credential in that git's environment only, never its arguments;
 *      http(s) only, no redirects): the cache holds upstream objects only;
 *   2. git index-pack --fix-thin the pushed pack into a scratch repository
 *      that borrows the cache's objects (alternates), removed after the
 *      check: a refused pack leaves nothing behind (git's own hardened
 *      reader of untrusted packs, capped at max_push_bytes);
 *   3. git merge-base --is-ancestor OLD NEW there, for each update.
 * Anything that cannot be checked (git missing, the upstream unreachable,
 * an old id the upstream no longer has) refuses the push: fail closed.
 * Each git run has the repository's timeout; its output is discarded.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "exec_git_ff.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_git_up.h"
#include "ig_file.h"
#include "ig_log.h"
#include "ig_secmem.h"

/* A string literal as execve's argv wants it (git never writes it). */
static char *
arg(const char *s)
{
    return (char *)(uintptr_t)s;
}

#define CANNOT "intentgate: the fast-forward check cannot run"

/* One check at a time: the cache repositories are shared. */
static pthread_mutex_t ff_lock = PTHREAD_MUTEX_INITIALIZER;

/* Limits for a git run on the agent's bytes (index-pack, merge-base): a
   delta chain of a few kilobytes can expand to gigabytes. 0: none. */
struct limits {
    rlim_t as, cpu, fsize;
};

/* The limits of a git run on the agent's pack: 2 GiB of address space
   (git's pack windows are kept small by git_env), the repository's
   timeout in CPU seconds, files of twice the largest push. */
static void
agent_limits(const struct exec_git_repo *repo, struct limits *lim)
{
    lim->as = (rlim_t)2 << 30;
    lim->cpu = (rlim_t)(repo->timeout_ms / 1000 + 1);
    lim->fsize = (rlim_t)(2 * repo->max_push_bytes) + ((rlim_t)64 << 20);
}

/* git's path from PATH, found once (under ff_lock); NULL when absent. */
static const char *
git_path(void)
{
    static char found[4096];
    const char *path = getenv("PATH"), *p, *end;
    int n;

    if (found[0] != '\0')
        return found;
    for (p = path != NULL ? path : "/usr/bin:/bin"; *p != '\0'; p = end) {
        end = strchr(p, ':');
        if (end == NULL)
            end = p + strlen(p);
        n = snprintf(found, sizeof(found), "%.*s/git", (int)(end - p), p);
        if (n > 5 && (size_t)n < sizeof(found) && found[0] == '/' &&
            access(found, X_OK) == 0)
            return found;
        if (*end == ':')
            end++;
    }
    found[0] = '\0';
    return NULL;
}

/* In the child: fds, limits, exec. Async-signal-safe calls only. */
static void
child(const char *git, char *const argv[], int in_fd, char *const env[],
      const struct limits *lim)
{
    struct rlimit r;
    int fd = open("/dev/null", O_RDWR);

    if (fd < 0 || dup2(in_fd >= 0 ? in_fd : fd, 0) < 0 || dup2(fd, 1) < 0 ||
        dup2(fd, 2) < 0)
        _exit(127);
    if (lim != NULL) {
        r.rlim_cur = r.rlim_max = lim->as;
        if (setrlimit(RLIMIT_AS, &r) != 0)
            _exit(127);
        r.rlim_cur = r.rlim_max = lim->cpu;
        if (setrlimit(RLIMIT_CPU, &r) != 0)
            _exit(127);
        r.rlim_cur = r.rlim_max = lim->fsize;
        if (setrlimit(RLIMIT_FSIZE, &r) != 0)
            _exit(127);
    }
    (void)execve(git, argv, env);
    _exit(127);
}

/* Run git with argv (argv[0] is "git"), stdin from in_fd (-1: none),
   env the environment, under lim (NULL: none); its exit status, or -1
   when it could not run, died of a signal (a limit) or ran past
   timeout_ms (then killed). */
static int
run_git(char *const argv[], int in_fd, char *const env[], long timeout_ms,
        const struct limits *lim)
{
    struct timespec tick = {0, 5 * 1000 * 1000};
    const char *git = git_path();
    long waited = 0;
    int st = 0, rc = -1;
    pid_t pid, w;

    if (git == NULL || (pid = fork()) < 0)
        return -1;
    if (pid == 0)
        child(git, argv, in_fd, env, lim);
    for (;;) { /* the child's own timeout: poll, kill past it */
        w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        if (waited >= timeout_ms) {
            (void)kill(pid, SIGKILL);
            (void)waitpid(pid, &st, 0);
            break;
        }
        (void)nanosleep(&tick, NULL);
        waited += 5;
    }
    return rc;
}

/* The environment git runs with: a private HOME and config, no prompts,
   http(s) only, and with cred_line the upstream's credential header. */
static char **
git_env(const char *home, const char *cred_line)
{
    static const char *const fixed[] = {"GIT_TERMINAL_PROMPT=0",
                                        "GIT_CONFIG_NOSYSTEM=1",
                                        "GIT_CONFIG_GLOBAL=/dev/null",
                                        "GIT_ALLOW_PROTOCOL=http:https",
                                        "LC_ALL=C",
                                        "PATH=/usr/local/bin:/usr/bin:/bin"};
    size_t n = sizeof(fixed) / sizeof(fixed[0]), i, len;
    char **env = calloc(n + 9, sizeof(*env));

    if (env == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        if ((env[i] = strdup(fixed[i])) == NULL)
            goto fail;
    len = strlen(home) + 6;
    if ((env[n] = malloc(len)) == NULL)
        goto fail;
    (void)snprintf(env[n++], len, "HOME=%s", home);
    if (cred_line == NULL) { /* runs on the agent's pack: small windows */
        if ((env[n++] = strdup("GIT_CONFIG_COUNT=3")) == NULL ||
            (env[n++] = strdup("GIT_CONFIG_KEY_0=core.packedGitLimit")) ==
                NULL ||
            (env[n++] = strdup("GIT_CONFIG_VALUE_0=256m")) == NULL ||
            (env[n++] = strdup("GIT_CONFIG_KEY_1=core.packedGitWindowSize")) ==
                NULL ||
            (env[n++] = strdup("GIT_CONFIG_VALUE_1=32m")) == NULL ||
            (env[n++] = strdup("GIT_CONFIG_KEY_2=core.deltaBaseCacheLimit")) ==
                NULL ||
            (env[n++] = strdup("GIT_CONFIG_VALUE_2=64m")) == NULL)
            goto fail;
    }
    if (cred_line != NULL) { /* never followed to another place */
        len = strlen(cred_line) + sizeof("GIT_CONFIG_VALUE_1=");
        if ((env[n++] = strdup("GIT_CONFIG_COUNT=2")) == NULL ||
            (env[n++] = strdup("GIT_CONFIG_KEY_0=http.followRedirects")) ==
                NULL ||
            (env[n++] = strdup("GIT_CONFIG_VALUE_0=false")) == NULL ||
            (env[n++] = strdup("GIT_CONFIG_KEY_1=http.extraHeader")) == NULL ||
            (env[n] = ig_secmem_get(len)) == NULL)
            goto fail;
        (void)snprintf(env[n], len, "GIT_CONFIG_VALUE_1=%s", cred_line);
    }
    return env;
fail:
    for (i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
    return NULL;
}

static void
env_free(char **env, int has_cred)
{
    size_t i;

    for (i = 0; env != NULL && env[i] != NULL; i++) {
        if (has_cred && env[i + 1] == NULL)
            ig_secmem_put(env[i]); /* the credential's line: wiped */
        else
            free(env[i]);
    }
    free(env);
}

/* The cache repository of the alias (created once), in dir (cap). */
static int
cache_repo(const char *spool, const char *alias, char **env, long ms, char *dir,
           size_t cap)
{
    char *init[] = {arg("git"),    arg("init"), arg("-q"),
                    arg("--bare"), dir,         NULL};
    char top[4096];
    int n;

    n = snprintf(top, sizeof(top), "%s/git-ff", spool);
    if (n < 0 || (size_t)n >= sizeof(top) ||
        (mkdir(top, 0700) != 0 && errno != EEXIST))
        return -1;
    n = snprintf(dir, cap, "%s/%s.git", top, alias);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    if (access(dir, F_OK) == 0)
        return 0;
    return run_git(init, -1, env, ms, NULL) == 0 ? 0 : -1;
}

/* Fetch each updated ref from the upstream into refs/up/<n>. */
static int
fetch_refs(const char *dir, const struct exec_git_repo *repo,
           const struct exec_git_push *p, char **env)
{
    char **argv = calloc(p->ncmds + 12, sizeof(*argv));
    size_t i, n = 0, k = 0;
    int rc = -1;

    if (argv == NULL)
        return -1;
    argv[n++] = arg("git");
    argv[n++] = arg("--git-dir");
    argv[n++] = arg(dir);
    argv[n++] = arg("fetch");
    argv[n++] = arg("-q");
    argv[n++] = arg("--no-tags");
    argv[n++] = arg("--no-write-fetch-head");
    argv[n++] = arg("--end-of-options");
    argv[n++] = arg(repo->url);
    for (i = 0; i < p->ncmds; i++) {
        if (p->cmds[i].kind != EXEC_GIT_UPDATE)
            continue;
        /* "+ref:refs/up/<i>": the ref is the push's own (checked by the
           parser: no spaces or controls), an exact name, no glob. */
        if ((argv[n] = malloc(strlen(p->cmds[i].ref) + 32)) == NULL)
            goto out;
        (void)snprintf(argv[n], strlen(p->cmds[i].ref) + 32, "+%s:refs/up/%zu",
                       p->cmds[i].ref, i);
        n++, k++;
    }
    rc = k == 0 ? 0 : run_git(argv, -1, env, repo->timeout_ms, NULL);
out:
    for (i = 9; argv[i] != NULL; i++)
        free(argv[i]);
    free(argv);
    return rc;
}

/* The pushed pack (from pack_offset) into the cache repository. */
static int
index_pack(const char *dir, const struct exec_git_repo *repo, int body_fd,
           uint64_t body_len, size_t pack_offset, char **env)
{
    char cap[48];
    char *argv[] = {arg("git"),
                    arg("--git-dir"),
                    arg(dir),
                    arg("index-pack"),
                    arg("--stdin"),
                    arg("--fix-thin"),
                    arg("--threads=2"),
                    cap,
                    NULL};

    struct limits lim;

    if (pack_offset >= body_len)
        return 0; /* no pack: nothing new */
    agent_limits(repo, &lim);
    (void)snprintf(cap, sizeof(cap), "--max-input-size=%.0f",
                   repo->max_push_bytes);
    if (lseek(body_fd, (off_t)pack_offset, SEEK_SET) < 0)
        return -1;
    return run_git(argv, body_fd, env, repo->timeout_ms, &lim);
}

/* Remove one entry of a scratch repository (nftw, depth first). */
static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) != 0 ? -1 : 0;
}

/* A scratch repository for one check (tmp, cap bytes) that reads the
   cache's objects through objects/info/alternates: the pushed pack goes
   there and is gone with it. */
static int
scratch_repo(const char *cache, char **env, long ms, char *tmp, size_t cap)
{
    char *init[] = {arg("git"),    arg("init"), arg("-q"),
                    arg("--bare"), tmp,         NULL};
    char alt[4200];
    int n, fd;

    n = snprintf(tmp, cap, "%s.check-XXXXXX", cache);
    if (n < 0 || (size_t)n >= cap || mkdtemp(tmp) == NULL)
        return -1;
    n = snprintf(alt, sizeof(alt), "%s/objects/info/alternates", tmp);
    if (run_git(init, -1, env, ms, NULL) != 0 || n < 0 ||
        (size_t)n >= sizeof(alt) ||
        (fd = open(alt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
        return -1;
    n = snprintf(alt, sizeof(alt), "%s/objects\n", cache);
    if (n < 0 || (size_t)n >= sizeof(alt) ||
        ig_file_write_all(fd, alt, (size_t)n) != 0) {
        (void)close(fd);
        return -1;
    }
    return close(fd);
}

/* Each update: is its old id an ancestor of its new one, in tmp? */
static const char *
ancestors(const char *tmp, const struct exec_git_ff_in *in, char **env)
{
    const struct exec_git_push *p = in->push;
    struct limits lim;
    char *anc[] = {arg("git"),
                   arg("--git-dir"),
                   arg(tmp),
                   arg("merge-base"),
                   arg("--is-ancestor"),
                   NULL,
                   NULL,
                   NULL};
    size_t i;
    int rc;

    agent_limits(in->repo, &lim);
    for (i = 0; i < p->ncmds; i++) {
        if (p->cmds[i].kind != EXEC_GIT_UPDATE)
            continue;
        anc[5] = arg(p->cmds[i].old_id);
        anc[6] = arg(p->cmds[i].new_id);
        rc = run_git(anc, -1, env, in->repo->timeout_ms, &lim);
        if (rc == 1)
            return "intentgate: not a fast-forward (this repository "
                   "takes fast-forwards only)";
        if (rc != 0)
            return CANNOT;
    }
    return NULL;
}

const char *
exec_git_ff_check(const struct exec_git_ff_in *in)
{
    const struct exec_git_push *p = in->push;
    char dir[4096], tmp[4200], *line = NULL, **env = NULL, **plain = NULL;
    const char *why = CANNOT, *step = NULL;
    struct ig_err err;
    size_t i;

    for (i = 0; i < p->ncmds && p->cmds[i].kind != EXEC_GIT_UPDATE; i++)
        ;
    if (i == p->ncmds)
        return NULL; /* creations and deletions only */
    tmp[0] = '\0';
    /* The credential only in the fetch's environment: index-pack and
       merge-base read the agent's bytes and need none. */
    if (exec_git_up_credential(in->repo, in->secrets, &line, &err) != IG_OK ||
        (env = git_env(in->spool_dir, line)) == NULL ||
        (plain = git_env(in->spool_dir, NULL)) == NULL)
        goto done;
    pthread_mutex_lock(&ff_lock);
    if (cache_repo(in->spool_dir, in->repo->alias, plain, in->repo->timeout_ms,
                   dir, sizeof(dir)) != 0)
        step = "the cache repository";
    else if (fetch_refs(dir, in->repo, p, env) != 0)
        step = "git fetch";
    else if (scratch_repo(dir, plain, in->repo->timeout_ms, tmp, sizeof(tmp)) !=
             0)
        step = "the scratch repository";
    else if (index_pack(tmp, in->repo, in->body_fd, in->body_len,
                        p->pack_offset, plain) != 0)
        step = "git index-pack";
    else if ((why = ancestors(tmp, in, plain)) != NULL &&
             strcmp(why, CANNOT) == 0)
        step = "git merge-base";
    if (tmp[0] != '\0' && nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        why = CANNOT, step = "removing the scratch repository";
    pthread_mutex_unlock(&ff_lock);
    if (step != NULL) /* why the push was refused, for the operator */
        ig_log("warn", "git.ff_check_failed",
               json_pack("{s:s, s:s}", "repo", in->repo->alias, "step", step));
done:
    env_free(env, line != NULL);
    env_free(plain, 0);
    ig_secmem_put(line);
    return why;
}
