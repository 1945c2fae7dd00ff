/*
 * exec_secrets_file.c - the secrets module's files: the key (generated,
 * read from a file or the environment) and the secrets file (read with a
 * cap, replaced atomically).
 *
 * Both are read through core (ig_file_read_secret for the key file: a
 * private regular file, not a symlink, one line, wiped; ig_file_read for
 * the sealed secrets file: a regular file under its cap). The key itself
 * ends up in a read-only sodium_malloc'd buffer. A new key file is created
 * exclusively (never replacing one) and fsync'ed. The secrets file is rewritten
 * through a temporary file in the same directory and rename(2), so a reader
 * sees the old file or the new one, never half of either.
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
#include "ig_limits.h"

#define PATH_BYTES IG_PATH_MAX
/* A key file's text: longer than a key, so a wrong one is refused as "not a
   secrets key" rather than as too long. */
#define KEYTEXT_MAX IG_EXEC_SECRETS_KEY_TEXT_MAX

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
    enum ig_status st;
    size_t n = 0;
    char *text;

    st = ig_file_read_secret(path, KEYTEXT_MAX, &text, &n, err);
    if (st == IG_ERR_INVALID) /* empty, or more than one line */
        st = ig_err_set(err, st,
                        "%s: not a secrets key (%d base64url characters)", path,
                        (int)EXEC_SECRETS_KEY_STRLEN);
    if (st == IG_OK)
        st = decode_key(text, n, path, key, err);
    ig_file_free_secret(text); /* wipes; NULL after an error */
    return st;
}

enum ig_status
exec_sfile_load_key(const char *key_path, unsigned char **key,
                    struct ig_err *err)
{
    char env[KEYTEXT_MAX + 2];
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
    enum ig_status st =
        ig_file_read(path, EXEC_SECRETS_FILE_MAX, text, len, err);

    return st == IG_ERR_NOTFOUND ? IG_OK : st; /* no file yet: no secrets */
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
