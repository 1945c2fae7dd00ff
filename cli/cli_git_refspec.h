/*
 * cli_git_refspec.h - what the files of `intentgate git` share.
 *
 * cli_git_refspec.c: the rules applied to what the agent typed before
 * anything runs: gateway URLs, ref names and push refspecs. Pure functions
 * on strings (no git, no I/O), so the unit test
 * (tests/unit/test_git_refspec.c) can feed them hostile input. Each
 * returns 0, or -1 after writing one line saying what is wrong to why
 * (why_size bytes, truncated to fit, always terminated). All are
 * thread-safe and never allocate.
 *
 * cli_git_run.c: running git (an argv builder, a short capture, the run
 * with the grant in git's environment). Not thread-safe (they read the
 * process's environment); errors print one line on stderr.
 * cmd_git.c: the command itself.
 */
#ifndef CLI_GIT_REFSPEC_H
#define CLI_GIT_REFSPEC_H

#include <stddef.h>

/* Longest ref name accepted, bytes. */
#define CLI_GIT_REF_MAX 1024
/* Longest gateway URL, bytes. */
#define CLI_GIT_URL_MAX 2048
/* Longest repository alias (the executor's [a-z0-9][a-z0-9._-]{0,63}). */
#define CLI_GIT_ALIAS_MAX 64
/* Most refspecs in one `intentgate git push` (git.lua's MAX_REFS). */
#define CLI_GIT_REFSPECS_MAX 256

/*
 * Check that url is a gateway URL: `http://` or `https://` (lower case),
 * a host name, IPv4 address or [IPv6] literal, an optional :port (1 to
 * 65535), and the path `/git/<alias>` with nothing after it: no userinfo,
 * query, fragment or trailing slash. On success the alias is copied into
 * alias (alias_size at least CLI_GIT_ALIAS_MAX + 1).
 */
int cli_git_url_parse(const char *url, char *alias, size_t alias_size,
                      char *why, size_t why_size);

/*
 * Check that name is a plain ref name: the ten rules of `git
 * check-ref-format` (one-level names like "main" only when onelevel is
 * non-zero), no '+' (a forced update), no component starting with '-'
 * (an option), at most CLI_GIT_REF_MAX bytes.
 */
int cli_git_name_check(const char *name, int onelevel, char *why,
                       size_t why_size);

/*
 * Check that ref is a full destination a push may name: `refs/heads/X`
 * or `refs/tags/X` that passes cli_git_name_check.
 */
int cli_git_dst_check(const char *ref, char *why, size_t why_size);

/* A push refspec as typed, split (cli_git_spec_parse). */
struct cli_git_spec {
    char src[CLI_GIT_REF_MAX + 1]; /* "" for a deletion */
    char dst[CLI_GIT_REF_MAX + 1]; /* "" when only SRC was given */
    int del;                       /* 1: delete dst */
};

/*
 * Split spec, a push refspec: `SRC`, `SRC:DST`, or `:DST` (a deletion);
 * with delete_all (--delete) a bare `DST` to delete. Refuses a '+'
 * (force), '*' (a glob), '^' (a negative refspec or a parent), '~' (an
 * ancestor), '@{' (a reflog entry), a component starting with '-', more
 * than one ':', an empty side, and a SRC or DST that is not a plain ref
 * name (one-level names allowed: a short DST is expanded later; a full
 * DST, starting "refs/", must pass cli_git_dst_check).
 */
int cli_git_spec_parse(const char *spec, int delete_all,
                       struct cli_git_spec *out, char *why, size_t why_size);

/* `intentgate git` (cmd_git.c), a subcommand as cli.h describes them. */
int cli_git(int argc, char **argv);

/* ---- running git (cli_git_run.c) ---- */

/* Most arguments of one git command. */
#define CLI_GIT_ARGS_MAX (CLI_GIT_REFSPECS_MAX + 16)

/* An argv for git: strings owned, NULL-terminated. Zero it to start. */
struct cli_git_args {
    char *v[CLI_GIT_ARGS_MAX + 1];
    size_t n;
};

/* Append a formatted argument (a copy); 0, or -1 after one line (too many,
   out of memory). */
int cli_git_args_add(struct cli_git_args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Free the arguments; a is empty after (and may be reused). */
void cli_git_args_free(struct cli_git_args *a);

/*
 * Run git (from PATH, argv[0] "git", argv[1] its command) in this
 * process's environment and read its standard output into out (cap bytes
 * with the terminating NUL; one trailing newline dropped); its standard
 * error goes to /dev/null when quiet, else passes through. Returns git's
 * exit status (0..255, or 256 + a signal), or -1 after one line when it
 * could not run or printed more than fits or a NUL byte.
 */
int cli_git_capture(char *const *argv, int quiet, char *out, size_t cap);

/*
 * The index cli_git_run_granted appends its settings at: GIT_CONFIG_COUNT
 * as set in the environment (0 when unset), or -1 after one line when it
 * is not a count of 0 to 10000. Call it before asking for a grant.
 */
long long cli_git_config_base(void);

/*
 * Run git with argv, its output passed through, with grant (a "v4.public."
 * token, else refused) as the Authorization header for requests under url
 * (a gateway URL checked by cli_git_url_parse), in git's environment only
 * (see cli_git_run.c). The grant's copy is wiped before returning.
 * Returns git's exit status (0..255, or 256 + a signal), or -1 after one
 * line (refused grant, bad GIT_CONFIG_COUNT, out of memory, no git).
 */
int cli_git_run_granted(char *const *argv, const char *url, const char *grant);

#endif
