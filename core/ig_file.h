/*
 * ig_file.h - durable small-file writes, shared by key files, secrets and
 * the dev-mode data directories: every byte written or an error, the mode
 * exactly as asked (the umask cannot widen or narrow it), fsync before
 * success, and fsync of the directory when a new name must survive a
 * crash.
 */
#ifndef IG_FILE_H
#define IG_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "ig_error.h"

/* Write all n bytes to fd, retrying short writes and EINTR. 0, or -1 with
   errno set. */
int ig_file_write_all(int fd, const void *p, size_t n);

/*
 * Create path with exactly mode, write len bytes of data, fsync, close.
 * excl: refuse an existing file ("already exists; refusing to overwrite
 * it", IG_ERR_IO) and remove the new file if writing fails; else replace
 * the contents of an existing one. IG_ERR_IO naming the path.
 */
enum ig_status ig_file_write(const char *path, const void *data, size_t len,
                             mode_t mode, int excl, struct ig_err *err) IG_WUR;

/* fsync the directory dir / the directory holding path. */
enum ig_status ig_file_sync_dir(const char *dir, struct ig_err *err) IG_WUR;
enum ig_status ig_file_sync_parent(const char *path, struct ig_err *err) IG_WUR;

#endif
