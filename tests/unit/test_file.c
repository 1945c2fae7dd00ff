/*
 * test_file.c - the one secret-file reader, attacked: whatever an attacker
 * can plant at a secret's path (a FIFO, a symlink, a directory, a device,
 * a huge or a crafted file, wider permissions) must be refused with an
 * error naming the path - quickly, without truncating, without hanging.
 * Every case runs twice: in a directory under /tmp and in one under the
 * test's working directory (inside the build tree, like a clone).
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_file.h"

#define MAX 16 /* the maximum the cases pass */

struct fx {
    char dir[PATH_MAX];
    char path[PATH_MAX + 32];
};

static void
put(const char *path, const char *data, size_t n, mode_t mode)
{
    int fd;

    (void)unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    assert_int_equal(fchmod(fd, mode), 0);
    assert_int_equal(close(fd), 0);
}

/* The secret at f->path is refused with st, and the message names the
   path and says why. */
static void
refused(struct fx *f, enum ig_status st, const char *why)
{
    struct ig_err err;
    char *s = (char *)1;
    size_t n = 99;

    assert_int_equal(ig_file_read_secret(f->path, MAX, &s, &n, &err), st);
    assert_null(s);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.msg, f->path));
    if (strstr(err.msg, why) == NULL)
        fail_msg("\"%s\" lacks \"%s\"", err.msg, why);
}

/* The secret at f->path reads as want. */
static void
reads(struct fx *f, const char *want)
{
    struct ig_err err;
    char *s = NULL;
    size_t n = 0;

    if (ig_file_read_secret(f->path, MAX, &s, &n, &err) != IG_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n, strlen(want));
    assert_string_equal(s, want);
    ig_file_free_secret(s);
}

static void
in_dir(struct fx *f, const char *base)
{
    int n = snprintf(f->dir, sizeof(f->dir), "%s/ig_test_file_XXXXXX", base);

    assert_true(n > 0 && (size_t)n < sizeof(f->dir));
    assert_non_null(mkdtemp(f->dir));
    n = snprintf(f->path, sizeof(f->path), "%s/secret", f->dir);
    assert_true(n > 0 && (size_t)n < sizeof(f->path));
}

static void
rm_dir(struct fx *f)
{
    char p[PATH_MAX + 32];
    static const char *const names[] = {"secret", "target", "link", "fifo"};
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        (void)snprintf(p, sizeof(p), "%s/%s", f->dir, names[i]);
        (void)unlink(p);
        (void)rmdir(p);
    }
    assert_int_equal(rmdir(f->dir), 0);
}

/* Run one case in a directory under /tmp, then under the working
   directory. */
static void
both(void (*fn)(struct fx *))
{
    char cwd[PATH_MAX];
    struct fx f;

    assert_true(sodium_init() >= 0);
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    in_dir(&f, "/tmp");
    fn(&f);
    rm_dir(&f);
    in_dir(&f, cwd);
    fn(&f);
    rm_dir(&f);
}

static void
case_fifo(struct fx *f)
{
    /* No writer: a blocking open would hang this test forever. */
    assert_int_equal(mkfifo(f->path, 0600), 0);
    refused(f, IG_ERR_IO, "not a regular file");
}

static void
case_symlink(struct fx *f)
{
    char target[PATH_MAX + 32];

    (void)snprintf(target, sizeof(target), "%s/target", f->dir);
    put(target, "s3cret\n", 7, 0600);
    assert_int_equal(symlink(target, f->path), 0);
    refused(f, IG_ERR_IO, "symbolic link");
    /* A dangling one too (it must not be created through). */
    assert_int_equal(unlink(target), 0);
    refused(f, IG_ERR_IO, "symbolic link");
}

static void
case_symlinked_dir(struct fx *f)
{
    char link[PATH_MAX + 32];

    /* Only the last component is refused as a link: a directory on the
       way may be one (mounted secrets are laid out that way). */
    put(f->path, "s3cret\n", 7, 0600);
    (void)snprintf(link, sizeof(link), "%s/link", f->dir);
    assert_int_equal(symlink(f->dir, link), 0);
    (void)snprintf(f->path, sizeof(f->path), "%s/link/secret", f->dir);
    reads(f, "s3cret");
    (void)snprintf(f->path, sizeof(f->path), "%s/secret", f->dir);
}

static void
case_directory(struct fx *f)
{
    assert_int_equal(mkdir(f->path, 0700), 0);
    refused(f, IG_ERR_IO, "not a regular file");
}

static void
case_device(struct fx *f)
{
    /* Endless bytes: refused before any is read. */
    (void)snprintf(f->path, sizeof(f->path), "/dev/zero");
    refused(f, IG_ERR_IO, "not a regular file");
    (void)snprintf(f->path, sizeof(f->path), "/dev/null");
    refused(f, IG_ERR_IO, "not a regular file");
    (void)snprintf(f->path, sizeof(f->path), "%s/secret", f->dir);
}

static void
case_missing(struct fx *f)
{
    refused(f, IG_ERR_IO, "cannot open");
}

static void
case_sizes(struct fx *f)
{
    char big[4 * MAX];

    memset(big, 'a', sizeof(big));
    put(f->path, big, MAX, 0600); /* exactly the maximum */
    big[MAX] = '\0';
    reads(f, big);
    big[MAX] = '\n'; /* the maximum and its newline */
    put(f->path, big, MAX + 1, 0600);
    big[MAX] = '\0';
    reads(f, big);
    big[MAX] = 'a'; /* one byte more: an error, not the first MAX */
    put(f->path, big, MAX + 1, 0600);
    refused(f, IG_ERR_LIMIT, "is over 16 bytes");
    put(f->path, big, sizeof(big), 0600);
    refused(f, IG_ERR_LIMIT, "is over 16 bytes");
    big[MAX] = '\n';
    big[MAX + 1] = '\n'; /* the maximum and two newlines */
    put(f->path, big, MAX + 2, 0600);
    refused(f, IG_ERR_LIMIT, "is over");
}

static void
case_empty(struct fx *f)
{
    put(f->path, "", 0, 0600);
    refused(f, IG_ERR_INVALID, "is empty");
    put(f->path, "\n", 1, 0600);
    refused(f, IG_ERR_INVALID, "is empty");
}

static void
case_newlines(struct fx *f)
{
    put(f->path, "tok", 3, 0600);
    reads(f, "tok");
    put(f->path, "tok\n", 4, 0600);
    reads(f, "tok");
    /* Only one newline goes; anything else is not one line of text. */
    put(f->path, "tok\n\n", 5, 0600);
    refused(f, IG_ERR_INVALID, "control character");
    put(f->path, "tok\r\n", 5, 0600);
    refused(f, IG_ERR_INVALID, "control character (0x0d)");
    put(f->path, "tok\nen", 6, 0600);
    refused(f, IG_ERR_INVALID, "byte 4");
    put(f->path, "\ttok", 4, 0600);
    refused(f, IG_ERR_INVALID, "byte 1");
    put(f->path, " tok ", 5, 0600); /* spaces are the caller's business */
    reads(f, " tok ");
}

static void
case_nul(struct fx *f)
{
    /* A NUL would cut the secret short for every string function. */
    put(f->path, "to\0k\n", 5, 0600);
    refused(f, IG_ERR_INVALID, "byte 3 is a control character (0x00)");
    put(f->path, "tok\0", 4, 0600);
    refused(f, IG_ERR_INVALID, "byte 4");
}

static void
case_permissions(struct fx *f)
{
    static const mode_t bad[] = {0644, 0640, 0604, 0620, 0602,
                                 0610, 0601, 0660, 0666, 0777};
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        put(f->path, "tok\n", 4, bad[i]);
        refused(f, IG_ERR_IO, "chmod 600");
    }
    put(f->path, "tok\n", 4, 0400);
    reads(f, "tok");
    put(f->path, "tok\n", 4, 0600);
    reads(f, "tok");
}

static void
case_plain_read(struct fx *f)
{
    struct ig_err err;
    char *s = NULL, big[MAX + 1];
    size_t n = 0;

    /* The non-secret reader: any content, wider modes, same refusals of
       what is not a regular file or is too long. */
    put(f->path, "a\0b\n", 4, 0644);
    assert_int_equal(ig_file_read(f->path, MAX, &s, &n, &err), IG_OK);
    assert_int_equal(n, 4);
    assert_memory_equal(s, "a\0b\n\0", 5);
    free(s);
    memset(big, 'a', sizeof(big));
    put(f->path, big, sizeof(big), 0644);
    assert_int_equal(ig_file_read(f->path, MAX, &s, &n, &err), IG_ERR_LIMIT);
    assert_null(s);
    assert_int_equal(unlink(f->path), 0);
    assert_int_equal(ig_file_read(f->path, MAX, &s, &n, &err), IG_ERR_NOTFOUND);
    assert_int_equal(mkfifo(f->path, 0600), 0);
    assert_int_equal(ig_file_read(f->path, MAX, &s, &n, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_int_equal(ig_file_read("/dev/zero", MAX, &s, &n, &err), IG_ERR_IO);
    assert_null(s);
}

#define CASE(name)                                                             \
    static void test_##name(void **state)                                      \
    {                                                                          \
        (void)state;                                                           \
        both(case_##name);                                                     \
    }

CASE(fifo)
CASE(symlink)
CASE(symlinked_dir)
CASE(directory)
CASE(device)
CASE(missing)
CASE(sizes)
CASE(empty)
CASE(newlines)
CASE(nul)
CASE(permissions)
CASE(plain_read)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo),          cmocka_unit_test(test_symlink),
        cmocka_unit_test(test_symlinked_dir), cmocka_unit_test(test_directory),
        cmocka_unit_test(test_device),        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_sizes),         cmocka_unit_test(test_empty),
        cmocka_unit_test(test_newlines),      cmocka_unit_test(test_nul),
        cmocka_unit_test(test_permissions),   cmocka_unit_test(test_plain_read),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
