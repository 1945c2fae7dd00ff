/*
 * exec_secrets_file.c - the secrets module's files: the key (generated,
 * read from a file or the environment) and the secrets file (read with a
 * cap, replaced atomically).
 *
 * Files are opened O_NONBLOCK (a FIFO planted at the path must not hang us)
 * and checked with fstat to be regular before anything is read; every read
 * is capped. A key file is refused when group or others may access it, is
 * read into sodium_malloc'd memory and wiped; the key itself ends up in a
 * read-only sodium_malloc'd buffer. A new key file is created exclusively
 * (never replacing one) and fsync'ed. The secrets file is rewritten through
 * a temporary file in the same directory and rename(2), so a reader sees
 * the old file or the new one, never half of either.
 */
#include "exec_secrets_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_env.h"
#include "ig_file.h"

#define PATH_BYTES 4096
/* A key file's text: the key, an optional newline, and room to see more. */
#define KEYTEXT_CAP 128

/*
 * Open path read-only and check it is a regular file (and, when secret,
 * that only its owner may access it). *fd is -1 when the file is missing
 * and missing_ok.
 */
static enum ig_status
open_regular(const char *path, int secret, int missing_ok, int *fd,
             struct ig_err *err)
{
    struct stat sb;

    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (*fd < 0 && errno == ENOENT && missing_ok)
        return IG_OK;
    if (*fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", path,
                          strerror(errno));
    if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        (void)close(*fd);
        *fd = -1;
        return ig_err_set(err, IG_ERR_IO, "%s is not a regular file", path);
    }
    if (secret && (sb.st_mode & 077) != 0) {
        (void)close(*fd);
        *fd = -1;
        return ig_err_set(err, IG_ERR_IO,
                          "%s may be read by group or others (mode %03o): "
                          "chmod 600 it",
                          path, (unsigned)(sb.st_mode & 0777));
    }
    return IG_OK;
}

/*
 * Read fd into buf (cap bytes). IG_ERR_LIMIT when the file has cap bytes
 * or more: callers pass one more than the largest size they accept.
 */
static enum ig_status
read_capped(int fd, const char *path, unsigned char *buf, size_t cap,
            size_t *len, struct ig_err *err)
{
    size_t n = 0;
    ssize_t got;

    while (n < cap) {
        got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return ig_err_set(err, IG_ERR_IO, "cannot read %s: %s", path,
                              strerror(errno));
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *len = n;
    if (n >= cap)
        return ig_err_set(err, IG_ERR_LIMIT, "%s is over %zu bytes", path,
                          cap - 1);
    return IG_OK;
}

/* Decode a key's text (one optional trailing newline) into key. */
static enum ig_status
decode_key(const char *text, size_t n, const char *where, unsigned char *key,
           struct ig_err *err)
{
    size_t got = 0;

    if (n > 0 && text[n - 1] == '\n')
        n--;
    if (n != EXEC_SECRETS_KEY_STRLEN ||
        ig_b64_decode(text, n, key, EXEC_SECRETS_KEY_BYTES, &got) != IG_OK ||
        got != EXEC_SECRETS_KEY_BYTES)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s: not a secrets key (%d base64url characters)",
                          where, (int)EXEC_SECRETS_KEY_STRLEN);
    return IG_OK;
}

static enum ig_status
key_from_file(const char *path, unsigned char *key, struct ig_err *err)
{
    unsigned char *buf;
    enum ig_status st;
    size_t n = 0;
    int fd = -1;

    buf = sodium_malloc(KEYTEXT_CAP);
    if (buf == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    st = open_regular(path, 1, 0, &fd, err);
    if (st == IG_OK)
        st = read_capped(fd, path, buf, KEYTEXT_CAP, &n, err);
    if (st == IG_OK)
        st = decode_key((const char *)buf, n, path, key, err);
    if (fd >= 0)
        (void)close(fd);
    sodium_free(buf); /* wipes */
    return st;
}

enum ig_status
exec_sfile_load_key(const char *key_path, unsigned char **key,
                    struct ig_err *err)
{
    char env[KEYTEXT_CAP + 1];
    enum ig_status st;

    *key = sodium_malloc(EXEC_SECRETS_KEY_BYTES);
    if (*key == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (key_path != NULL) {
        st = key_from_file(key_path, *key, err);
    } else {
        /* Taken out of the environment for good (and of
           /proc/self/environ): nothing else may read it later. */
        st = ig_env_take(EXEC_SECRETS_KEY_ENV, env, sizeof(env));
        if (st == IG_ERR_NOTFOUND)
            st = ig_err_set(err, IG_ERR_NOTFOUND,
                            "no secrets key: give a key file or set %s",
                            EXEC_SECRETS_KEY_ENV);
        else if (st != IG_OK)
            st = ig_err_set(err, st, "%s: not a secrets key",
                            EXEC_SECRETS_KEY_ENV);
        else
            st = decode_key(env, strlen(env), EXEC_SECRETS_KEY_ENV, *key, err);
        sodium_memzero(env, sizeof(env));
    }
    if (st != IG_OK) {
        sodium_free(*key);
        *key = NULL;
        return st;
    }
    (void)sodium_mprotect_readonly(*key);
    return IG_OK;
}

enum ig_status
exec_sfile_read(const char *path, char **text, size_t *len, struct ig_err *err)
{
    const size_t cap = EXEC_SECRETS_FILE_MAX + 1;
    enum ig_status st;
    struct stat sb;
    size_t alloc;
    char *buf;
    int fd;

    *text = NULL;
    *len = 0;
    st = open_regular(path, 0, 1, &fd, err);
    if (st != IG_OK || fd < 0)
        return st;
    /* Size the buffer from fstat, but let the capped read have the say. */
    alloc = cap;
    if (fstat(fd, &sb) == 0 && sb.st_size >= 0 && (size_t)sb.st_size < cap)
        alloc = (size_t)sb.st_size + 1;
    buf = malloc(alloc + 1);
    if (buf == NULL) {
        (void)close(fd);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    st = read_capped(fd, path, (unsigned char *)buf, alloc, len, err);
    if (st == IG_ERR_LIMIT && alloc < cap)
        st = ig_err_set(err, IG_ERR_IO, "%s changed while being read", path);
    (void)close(fd);
    if (st != IG_OK) {
        free(buf);
        return st;
    }
    buf[*len] = '\0';
    *text = buf;
    return IG_OK;
}

/* fchmod 0600, write, fsync and close fd. Closes fd on every path. */
static int
finish_file(int fd, const char *text, size_t len)
{
    int e;

    if (fchmod(fd, 0600) != 0 || ig_file_write_all(fd, text, len) != 0 ||
        fsync(fd) != 0) {
        e = errno;
        (void)close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

enum ig_status
exec_sfile_write(const char *path, const char *text, size_t len,
                 struct ig_err *err)
{
    char tmp[PATH_BYTES];
    int n, fd;

    n = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return ig_err_set(err, IG_ERR_INVALID, "path too long: %s", path);
    fd = mkstemp(tmp); /* mode 0600 */
    if (fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot create %s: %s", tmp,
                          strerror(errno));
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (finish_file(fd, text, len) != 0 || rename(tmp, path) != 0) {
        n = errno;
        (void)unlink(tmp);
        return ig_err_set(err, IG_ERR_IO, "cannot write %s: %s", path,
                          strerror(n));
    }
    return ig_file_sync_parent(path, err);
}

enum ig_status
exec_secrets_keygen(const char *key_path, struct ig_err *err)
{
    const size_t cap = EXEC_SECRETS_KEY_STRLEN + 2;
    unsigned char *key;
    enum ig_status st = IG_OK;
    char *text;
    int fd;

    key = sodium_malloc(EXEC_SECRETS_KEY_BYTES);
    text = sodium_malloc(cap);
    if (key == NULL || text == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    crypto_secretbox_keygen(key);
    (void)ig_b64_encode(key, EXEC_SECRETS_KEY_BYTES, text, cap);
    text[EXEC_SECRETS_KEY_STRLEN] = '\n';
    fd = open(key_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
              0600);
    if (fd < 0 && errno == EEXIST) {
        st =
            ig_err_set(err, IG_ERR_EXISTS,
                       "%s already exists; refusing to overwrite it", key_path);
        goto out;
    }
    if (fd < 0) {
        st = ig_err_set(err, IG_ERR_IO, "cannot create %s: %s", key_path,
                        strerror(errno));
        goto out;
    }
    if (finish_file(fd, text, EXEC_SECRETS_KEY_STRLEN + 1) != 0) {
        st = ig_err_set(err, IG_ERR_IO, "cannot write %s: %s", key_path,
                        strerror(errno));
        (void)unlink(key_path); /* ours: created exclusively above */
        goto out;
    }
    st = ig_file_sync_parent(key_path, err);
out:
    sodium_free(text); /* wipes; NULL is fine */
    sodium_free(key);
    return st;
}
