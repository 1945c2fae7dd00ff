/*
 * ig_file.c - durable small-file writes (see ig_file.h).
 */
#include "ig_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_limits.h"

#define DIR_MAX IG_PATH_MAX

int
ig_file_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    ssize_t w;

    while (n > 0) {
        w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

enum ig_status
ig_file_write(const char *path, const void *data, size_t len, mode_t mode,
              int excl, struct ig_err *err)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, fd, e;

    flags |= excl ? O_EXCL : O_TRUNC;
    fd = open(path, flags, mode);
    if (fd < 0 && excl && errno == EEXIST)
        return ig_err_set(err, IG_ERR_IO,
                          "%s already exists; refusing to overwrite it", path);
    if (fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot create %s: %s", path,
                          strerror(errno));
    /* The umask may have cleared bits; an old file may have had others. */
    if (fchmod(fd, mode) != 0 || ig_file_write_all(fd, data, len) != 0 ||
        fsync(fd) != 0) {
        e = errno;
        (void)close(fd);
        if (excl)
            (void)unlink(path);
        return ig_err_set(err, IG_ERR_IO, "cannot write %s: %s", path,
                          strerror(e));
    }
    if (close(fd) != 0) {
        e = errno;
        if (excl)
            (void)unlink(path);
        return ig_err_set(err, IG_ERR_IO, "cannot write %s: %s", path,
                          strerror(e));
    }
    return IG_OK;
}

enum ig_status
ig_file_sync_dir(const char *dir, struct ig_err *err)
{
    int fd = open(dir, O_RDONLY | O_CLOEXEC | O_NOCTTY), rc;

    if (fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", dir,
                          strerror(errno));
    rc = fsync(fd);
    (void)close(fd);
    if (rc != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot sync %s: %s", dir,
                          strerror(errno));
    return IG_OK;
}

enum ig_status
ig_file_sync_parent(const char *path, struct ig_err *err)
{
    char dir[DIR_MAX];
    const char *slash = strrchr(path, '/');
    size_t n;

    if (slash == NULL)
        return ig_file_sync_dir(".", err);
    n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof(dir))
        return ig_err_set(err, IG_ERR_INVALID, "path too long: %s", path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    return ig_file_sync_dir(dir, err);
}
