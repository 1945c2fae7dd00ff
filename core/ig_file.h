/*
 * ig_file.h - small files, read and written the one careful way.
 *
 * Writes (key files, secrets, the dev-mode data directories): every byte
 * written or an error, the mode exactly as asked (the umask cannot widen
 * or narrow it), fsync before success, and fsync of the directory when a
 * new name must survive a crash.
 *
 * Reads: whatever sits at the path is opened without blocking (a FIFO
 * planted there cannot hang us), checked with fstat on the descriptor
 * that is then read (no check-then-open race), read to a cap with an
 * error past it (never a silent truncation). Every secret file of the
 * project (signing and audit keys, the executor's secrets key and PDP
 * token, the Slack bot token and signing secret) goes through
 * ig_file_read_secret.
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

/*
 * Read the secret file at path into a new sodium_malloc'd, NUL-terminated
 * buffer (*out, *len bytes before the NUL; free it with
 * ig_file_free_secret). What a secret file must be:
 *   - the path's last component is not a symbolic link (O_NOFOLLOW);
 *   - a regular file (not a FIFO, directory or device);
 *   - not accessible to group or others at all (mode & 077 == 0);
 *   - at most max bytes of content, plus one optional trailing newline,
 *     which is dropped; a longer file is IG_ERR_LIMIT, never truncated;
 *   - one line of text: not empty, no control character (no NUL, CR,
 *     second newline or tab), since every secret here is printable text
 *     that may end up in an HTTP header.
 * IG_ERR_IO (cannot open, not regular, symlink, mode), IG_ERR_LIMIT,
 * IG_ERR_INVALID (empty, control character) or IG_ERR_NOMEM, the message
 * naming path; *out is NULL on every error and nothing read is left in
 * memory. Thread safe.
 */
enum ig_status ig_file_read_secret(const char *path, size_t max, char **out,
                                   size_t *len, struct ig_err *err) IG_WUR;

/* Wipe and free a buffer from ig_file_read_secret (NULL is fine). */
void ig_file_free_secret(char *s);

/*
 * Read the non-secret file at path (a public key, the sealed secrets file)
 * into a new malloc'd, NUL-terminated buffer the caller frees: a regular
 * file of at most max bytes (IG_ERR_LIMIT past it). The content is not
 * checked. IG_ERR_NOTFOUND when nothing is at path, IG_ERR_IO when it
 * cannot be opened or is not a regular file, IG_ERR_NOMEM; *out is NULL
 * on every error. Thread safe.
 */
enum ig_status ig_file_read(const char *path, size_t max, char **out,
                            size_t *len, struct ig_err *err) IG_WUR;

#endif
