/*
 * secrets_util.h - fixtures and helpers for the secrets store tests
 * (test_secrets.c). Failures fail the running cmocka test.
 */
#ifndef SECRETS_UTIL_H
#define SECRETS_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "exec_secrets.h"

/* A test's temporary directory, its key path and secrets file path. */
struct fx {
    char dir[64];
    char key[128];
    char file[128];
};

/* cmocka setup/teardown: make the directory; remove it and its files. */
int setup(void **state);
int teardown(void **state);

/* Write n bytes to path (created or truncated) with mode. */
void write_file(const char *path, const void *p, size_t n, mode_t mode);

/* 1 when needle (m bytes) occurs in hay (n bytes); memmem is not POSIX. */
int contains(const char *hay, size_t n, const char *needle, size_t m);

/* Names in dir other than . and .. */
int dir_entries(const char *dir);

/* Permission bits of path. */
unsigned file_mode(const char *path);

/* A new key at f->key and the set at f->file opened with it. */
struct exec_secrets *open_new(struct fx *f);

/* Set name to the string v. */
void set_str(struct exec_secrets *s, const char *name, const char *v);

/* name's value is want (wlen bytes), NUL-terminated. */
void assert_value(const struct exec_secrets *s, const char *name,
                  const void *want, size_t wlen);

/* Opening f->file with f->key gives want; on failure the message holds
 * text (when not NULL) and nothing is returned. */
void expect_open(struct fx *f, enum ig_status want, const char *text);

/* Opening f->file with f->key fails somehow. */
void expect_failure(struct fx *f);

/*
 * Run exec_cli_secret with args (NULL-terminated, "secret" first) and in
 * (n bytes) on stdin; stdout and stderr go to f->dir/out and f->dir/err.
 */
int run_cli(struct fx *f, const char *in, size_t n, const char **args);

/* The text of f->dir/name ("out" or "err"), malloc'd. */
char *cli_output(struct fx *f, const char *name, size_t *len);

#endif
