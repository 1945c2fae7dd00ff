/*
 * secrets_util.c - fixtures for test_secrets.c: a temporary directory per
 * test with a key and a secrets file path, file helpers, assertions on
 * opening and reading a set, and running the `secret` CLI with its
 * standard streams redirected to files.
 */
#include "testutil.h"

#include "secrets_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_cli.h"
#include "ig_key.h"
int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    memcpy(f->dir, "/tmp/ig-secrets-XXXXXX", 23);
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->key, sizeof(f->key), "%s/secrets.key", f->dir);
    (void)snprintf(f->file, sizeof(f->file), "%s/secrets", f->dir);
    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)unsetenv(EXEC_SECRETS_KEY_ENV);
    *state = f;
    return 0;
}

int
teardown(void **state)
{
    struct fx *f = *state;
    char path[512];
    struct dirent *de;
    DIR *d = opendir(f->dir);

    while (d != NULL && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        (void)snprintf(path, sizeof(path), "%s/%s", f->dir, de->d_name);
        (void)unlink(path);
    }
    if (d != NULL)
        (void)closedir(d);
    (void)rmdir(f->dir);
    (void)unsetenv(EXEC_SECRETS_KEY_ENV);
    free(f);
    return 0;
}

void
write_file(const char *path, const void *p, size_t n, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    assert_int_equal(fchmod(fd, mode), 0);
    assert_int_equal(close(fd), 0);
}

/* 1 when needle occurs in hay (memmem is not POSIX). */
int
contains(const char *hay, size_t n, const char *needle, size_t m)
{
    size_t i;

    for (i = 0; m <= n && i <= n - m; i++)
        if (memcmp(hay + i, needle, m) == 0)
            return 1;
    return 0;
}

/* Names in dir other than . and .. */
int
dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    (void)closedir(d);
    return n;
}

unsigned
file_mode(const char *path)
{
    struct stat sb;

    assert_int_equal(stat(path, &sb), 0);
    return (unsigned)(sb.st_mode & 07777);
}

/* A key at f->key and a set opened with it. */
struct exec_secrets *
open_new(struct fx *f)
{
    struct exec_secrets *s = NULL;
    struct ig_err err;

    assert_int_equal(exec_secrets_keygen(f->key, &err), IG_OK);
    assert_int_equal(exec_secrets_open(f->file, f->key, &s, &err), IG_OK);
    return s;
}

void
set_str(struct exec_secrets *s, const char *name, const char *v)
{
    struct ig_err err;

    assert_int_equal(
        exec_secrets_set(s, name, (const unsigned char *)v, strlen(v), &err),
        IG_OK);
}

void
assert_value(const struct exec_secrets *s, const char *name, const void *want,
             size_t wlen)
{
    unsigned char *v = NULL;
    struct ig_err err;
    size_t len = 0;

    assert_int_equal(exec_secrets_get(s, name, &v, &len, &err), IG_OK);
    assert_int_equal(len, wlen);
    assert_memory_equal(v, want, wlen);
    assert_int_equal(v[len], '\0');
    exec_secret_free(v, len);
}

/* Open f->file with f->key; want st and, when not NULL, text in the msg. */
void
expect_open(struct fx *f, enum ig_status want, const char *text)
{
    struct exec_secrets *s = (struct exec_secrets *)1;
    struct ig_err err;

    memset(&err, 0, sizeof(err));
    assert_int_equal(exec_secrets_open(f->file, f->key, &s, &err), want);
    if (want != IG_OK) {
        assert_null(s);
        if (text != NULL && strstr(err.msg, text) == NULL)
            fail_msg("error \"%s\" lacks \"%s\"", err.msg, text);
    }
    exec_secrets_free(s);
}

/* Opening f->file fails somehow, leaving nothing behind. */
void
expect_failure(struct fx *f)
{
    struct exec_secrets *s = NULL;
    struct ig_err err;

    assert_int_not_equal(exec_secrets_open(f->file, f->key, &s, &err), IG_OK);
    assert_null(s);
}

/* Redirect fd to path (created or truncated); returns the saved fd. */
static int
redirect(int fd, const char *path, int flags)
{
    int saved = dup(fd), nfd = open(path, flags, 0600);

    assert_true(saved >= 0 && nfd >= 0);
    assert_int_equal(dup2(nfd, fd), fd);
    assert_int_equal(close(nfd), 0);
    return saved;
}

static void
restore(int fd, int saved)
{
    assert_int_equal(dup2(saved, fd), fd);
    assert_int_equal(close(saved), 0);
}

/*
 * Run exec_cli_secret with args (NULL-terminated, "secret" first) and in
 * (n bytes) on stdin. Stdout and stderr go to files f->dir/out and err.
 */
int
run_cli(struct fx *f, const char *in, size_t n, const char **args)
{
    char inp[160], outp[160], errp[160], *av[16];
    int argc, rc, s0, s1, s2;

    (void)snprintf(inp, sizeof(inp), "%s/in", f->dir);
    (void)snprintf(outp, sizeof(outp), "%s/out", f->dir);
    (void)snprintf(errp, sizeof(errp), "%s/err", f->dir);
    write_file(inp, in, n, 0600);
    for (argc = 0; args[argc] != NULL; argc++) {
        assert_true(argc < 15);
        av[argc] = strdup(args[argc]);
    }
    av[argc] = NULL;
    (void)fflush(stdout);
    (void)fflush(stderr);
    s0 = redirect(0, inp, O_RDONLY);
    s1 = redirect(1, outp, O_WRONLY | O_CREAT | O_TRUNC);
    s2 = redirect(2, errp, O_WRONLY | O_CREAT | O_TRUNC);
    rc = exec_cli_secret(argc, av);
    (void)fflush(stdout);
    (void)fflush(stderr);
    restore(0, s0);
    restore(1, s1);
    restore(2, s2);
    while (argc-- > 0)
        free(av[argc]);
    (void)unlink(inp);
    return rc;
}

/* The text of f->dir/name (out or err); the caller frees it. */
char *
cli_output(struct fx *f, const char *name, size_t *len)
{
    char p[160];

    (void)snprintf(p, sizeof(p), "%s/%s", f->dir, name);
    return tu_read_file(p, len);
}
