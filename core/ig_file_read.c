/*
 * ig_file_read.c - reading small files (see ig_file.h).
 *
 * One path for every file: open O_NONBLOCK (a FIFO with no writer opens
 * at once instead of hanging), fstat the descriptor just opened - never
 * the path, which could be swapped between a check and the open - and
 * refuse anything but a regular file before reading a byte. Reads are
 * bounded by the caller's maximum; one byte more than the maximum is
 * asked for, so a longer file is seen and refused instead of cut.
 *
 * A secret file also refuses a symbolic link as its last component
 * (O_NOFOLLOW: whoever may replace a link in a shared directory would
 * choose our secret) and any group or other permission bit, and lands in
 * sodium_malloc'd memory that is wiped on every path.
 */
#include "ig_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Open path read-only without blocking; *fd is a regular file (and, when
   secret, a private one that was not reached through a final symlink). */
static enum ig_status
open_checked(const char *path, int secret, int *fd, struct stat *sb,
             struct ig_err *err)
{
    int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    enum ig_status st = IG_OK;

    *fd = open(path, secret ? flags | O_NOFOLLOW : flags);
    if (*fd < 0 && secret && errno == ELOOP)
        return ig_err_set(err, IG_ERR_IO,
                          "%s is a symbolic link: name the file itself", path);
    if (*fd < 0)
        return ig_err_set(
            err, errno == ENOENT && !secret ? IG_ERR_NOTFOUND : IG_ERR_IO,
            "cannot open %s: %s", path, strerror(errno));
    if (fstat(*fd, sb) != 0)
        st = ig_err_set(err, IG_ERR_IO, "cannot stat %s: %s", path,
                        strerror(errno));
    else if (!S_ISREG(sb->st_mode))
        st = ig_err_set(err, IG_ERR_IO, "%s is not a regular file", path);
    else if (secret && (sb->st_mode & 077) != 0)
        st = ig_err_set(err, IG_ERR_IO,
                        "%s may be read by group or others (mode %03o): "
                        "chmod 600 it",
                        path, (unsigned)(sb->st_mode & 0777));
    if (st != IG_OK) {
        (void)close(*fd);
        *fd = -1;
    }
    return st;
}

/* Read fd into buf until end of file or cap bytes; *n bytes read. */
static enum ig_status
read_upto(int fd, const char *path, char *buf, size_t cap, size_t *n,
          struct ig_err *err)
{
    ssize_t got;

    *n = 0;
    while (*n < cap) {
        got = read(fd, buf + *n, cap - *n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return ig_err_set(err, IG_ERR_IO, "cannot read %s: %s", path,
                              strerror(errno));
        if (got == 0)
            break;
        *n += (size_t)got;
    }
    return IG_OK;
}

/* One line of text: not empty, no control character. */
static enum ig_status
check_line(const char *path, const char *s, size_t n, struct ig_err *err)
{
    size_t i;
    unsigned char c;

    if (n == 0)
        return ig_err_set(err, IG_ERR_INVALID, "%s is empty", path);
    for (i = 0; i < n; i++) {
        c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return ig_err_set(err, IG_ERR_INVALID,
                              "%s: byte %zu is a control character (0x%02x); "
                              "a secret file holds one line of text",
                              path, i + 1, (unsigned)c);
    }
    return IG_OK;
}

enum ig_status
ig_file_read_secret(const char *path, size_t max, char **out, size_t *len,
                    struct ig_err *err)
{
    enum ig_status st;
    struct stat sb;
    size_t n = 0, cap;
    char *buf = NULL;
    int fd;

    *out = NULL;
    *len = 0;
    if (max == 0 || max > SIZE_MAX / 2)
        return ig_err_set(err, IG_ERR_INVALID, "%s: bad maximum size", path);
    if (sodium_init() < 0)
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize libsodium");
    if ((st = open_checked(path, 1, &fd, &sb, err)) != IG_OK)
        return st;
    cap = max + 2; /* the content, its newline, and one byte to see more */
    if ((buf = sodium_malloc(cap)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory reading %s", path);
        goto out;
    }
    if ((st = read_upto(fd, path, buf, cap, &n, err)) != IG_OK)
        goto out;
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n > max)
        st = ig_err_set(err, IG_ERR_LIMIT, "%s is over %zu bytes", path, max);
    else
        st = check_line(path, buf, n, err);
out:
    (void)close(fd);
    if (st != IG_OK) {
        sodium_free(buf); /* wipes; NULL is fine */
        return st;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return IG_OK;
}

void
ig_file_free_secret(char *s)
{
    sodium_free(s); /* wipes; NULL is fine */
}

enum ig_status
ig_file_read(const char *path, size_t max, char **out, size_t *len,
             struct ig_err *err)
{
    enum ig_status st;
    struct stat sb;
    size_t n = 0, cap = max + 1;
    char *buf;
    int fd;

    *out = NULL;
    *len = 0;
    if (max == 0 || max > SIZE_MAX / 2)
        return ig_err_set(err, IG_ERR_INVALID, "%s: bad maximum size", path);
    if ((st = open_checked(path, 0, &fd, &sb, err)) != IG_OK)
        return st;
    /* Size the buffer from fstat, but let the capped read have the say. */
    if (sb.st_size >= 0 && (uintmax_t)sb.st_size < (uintmax_t)cap)
        cap = (size_t)sb.st_size + 1;
    if ((buf = malloc(cap + 1)) == NULL) {
        (void)close(fd);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory reading %s", path);
    }
    st = read_upto(fd, path, buf, cap, &n, err);
    (void)close(fd);
    if (st == IG_OK && n == cap && n <= max)
        st = ig_err_set(err, IG_ERR_IO, "%s changed while being read", path);
    else if (st == IG_OK && n > max)
        st = ig_err_set(err, IG_ERR_LIMIT, "%s is over %zu bytes", path, max);
    if (st != IG_OK) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return IG_OK;
}
