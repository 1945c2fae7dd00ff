/*
 * exec_spool_file.c - the outcome spool on disk (the format is in
 * exec_spool.h): writing and checking one line, reading the file back,
 * the directory's owner/mode checks and lock, and the atomic rewrite.
 *
 * Reading never trusts a line it cannot check: the file is read in
 * chunks into a buffer of IG_EXEC_SPOOL_LINE_MAX bytes; a line that does not
 * fit is skipped up to its newline, the bytes after the last newline are
 * a torn write, and a line whose checksum or shape is wrong is skipped.
 * Each of these counts one damaged line. The rewrite writes the live
 * records to EXEC_SPOOL_FILE ".tmp" (created 0600, O_EXCL), syncs it,
 * renames it over the spool and syncs the directory: after a crash the
 * directory holds the old file or the new one, never a mix.
 */
#include "exec_spool_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_file.h"
#include "ig_hash.h"
#include "ig_json.h"

#define SPOOL_TMP EXEC_SPOOL_FILE ".tmp"
#define SUM_HEX 8 /* checksum digits; then one space */

int
exec_spool_id_valid(const char *id)
{
    size_t i;

    for (i = 0; id[i] != '\0'; i++)
        if (i >= IG_INTENT_ID_MAX ||
            !((id[i] >= 'A' && id[i] <= 'Z') ||
              (id[i] >= 'a' && id[i] <= 'z') ||
              (id[i] >= '0' && id[i] <= '9') || id[i] == '-'))
            return 0;
    return i > 0;
}

int
exec_spool_name_valid(const char *name)
{
    size_t i;

    for (i = 0; name[i] != '\0'; i++)
        if (i >= IG_OUTCOME_NAME_MAX ||
            !((name[i] >= 'A' && name[i] <= 'Z') || name[i] == '_'))
            return 0;
    return i > 0;
}

enum ig_status
exec_spool_detail_check(const json_t *detail, struct ig_err *err)
{
    struct ig_buf b;
    enum ig_status st;

    if (!json_is_object(detail))
        return ig_err_set(err, IG_ERR_INVALID, "detail must be an object");
    ig_buf_init(&b, IG_OUTCOME_DETAIL_MAX_BYTES);
    st = ig_canon_write(detail, &b, err);
    ig_buf_release(&b);
    if (st == IG_ERR_LIMIT)
        return ig_err_set(err, IG_ERR_LIMIT, "detail over %d canonical bytes",
                          IG_OUTCOME_DETAIL_MAX_BYTES);
    return st;
}

/* The checksum of a line: the first 4 bytes of SHA-256(json), hex. */
static void
line_sum(const char *json, size_t n, char out[SUM_HEX])
{
    char hex[IG_SHA256_HEXLEN + 1];

    ig_sha256_hex(json, n, hex);
    memcpy(out, hex, SUM_HEX);
}

enum ig_status
exec_spool_format(const char *type, const char *id, const char *outcome,
                  const json_t *detail, const char *result, char **line,
                  size_t *len, struct ig_err *err)
{
    struct ig_buf b;
    json_t *v;
    enum ig_status st;

    *line = NULL;
    if (outcome != NULL) /* "O" adds a reference to detail */
        v = json_pack("{s:s, s:s, s:s, s:O}", "type", type, "intent_id", id,
                      "outcome", outcome, "detail", ig_json_unconst(detail));
    else if (result != NULL)
        v = json_pack("{s:s, s:s, s:s}", "type", type, "intent_id", id,
                      "result", result);
    else
        v = json_pack("{s:s, s:s}", "type", type, "intent_id", id);
    if (v == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    ig_buf_init(&b, IG_EXEC_SPOOL_LINE_MAX);
    st = ig_buf_adds(&b, "00000000 ");
    if (st == IG_OK)
        st = ig_canon_write(v, &b, err);
    if (st == IG_OK)
        st = ig_buf_addc(&b, '\n');
    json_decref(v);
    if (st != IG_OK) {
        ig_buf_release(&b);
        return ig_err_set(err, st, "cannot write a spool record: %s",
                          ig_strerror(st));
    }
    line_sum(b.data + SUM_HEX + 1, b.len - SUM_HEX - 2, b.data);
    *line = ig_buf_take(&b, len);
    return *line != NULL ? IG_OK
                         : ig_err_set(err, IG_ERR_NOMEM, "out of memory");
}

/* The string member key of v when it is a string without a NUL. */
static const char *
str_member(const json_t *v, const char *key)
{
    const json_t *s = json_object_get(v, key);

    if (!json_is_string(s) ||
        strlen(json_string_value(s)) != json_string_length(s))
        return NULL;
    return json_string_value(s);
}

/* Parse a checked line's JSON into r: exactly one record's shape. */
static int
parse_rec(const json_t *v, struct spool_rec *r)
{
    const char *t = str_member(v, "type");

    r->id = str_member(v, "intent_id");
    if (t == NULL || r->id == NULL || !exec_spool_id_valid(r->id))
        return -1;
    if (strcmp(t, "run") == 0 && json_object_size(v) == 2) {
        r->type = SPOOL_RUN;
        return 0;
    }
    if (strcmp(t, "done") == 0 && json_object_size(v) == 3) {
        r->type = SPOOL_DONE;
        r->result = str_member(v, "result");
        return r->result != NULL && (strcmp(r->result, "delivered") == 0 ||
                                     strcmp(r->result, "undeliverable") == 0 ||
                                     strcmp(r->result, "not-run") == 0)
                   ? 0
                   : -1;
    }
    if (strcmp(t, "outcome") != 0 || json_object_size(v) != 4)
        return -1;
    r->type = SPOOL_OUTCOME;
    r->outcome = str_member(v, "outcome");
    r->detail = json_object_get(v, "detail");
    if (r->outcome == NULL || !exec_spool_name_valid(r->outcome) ||
        exec_spool_detail_check(r->detail, NULL) != IG_OK)
        return -1;
    return 0;
}

/* Check one line (n bytes, without its newline) into r (r->doc: a new
   reference). IG_ERR_INVALID when it is damaged. */
static enum ig_status
parse_line(const char *p, size_t n, struct spool_rec *r)
{
    char sum[SUM_HEX];
    int i;

    memset(r, 0, sizeof(*r));
    if (n < SUM_HEX + 3 || p[SUM_HEX] != ' ')
        return IG_ERR_INVALID;
    for (i = 0; i < SUM_HEX; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return IG_ERR_INVALID;
    line_sum(p + SUM_HEX + 1, n - SUM_HEX - 1, sum);
    if (memcmp(sum, p, SUM_HEX) != 0 ||
        ig_json_parse(p + SUM_HEX + 1, n - SUM_HEX - 1, &r->doc, NULL) != IG_OK)
        return IG_ERR_INVALID;
    if (!json_is_object(r->doc) || parse_rec(r->doc, r) != 0) {
        json_decref(r->doc);
        r->doc = NULL;
        return IG_ERR_INVALID;
    }
    return IG_OK;
}

json_t *
exec_spool_line_detail(const char *line, size_t len)
{
    struct spool_rec r;
    json_t *d = NULL;

    if (len > 0 && parse_line(line, len - 1, &r) == IG_OK &&
        r.type == SPOOL_OUTCOME)
        d = json_incref(ig_json_unconst(r.detail));
    json_decref(r.doc);
    return d;
}

/* fd (named what, in the spool dir) must be ours and closed to others. */
static enum ig_status
check_mode(int fd, const char *what, int dir, struct ig_err *err)
{
    struct stat sb;

    if (fstat(fd, &sb) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot stat %s: %s", what,
                          strerror(errno));
    if (dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode))
        return ig_err_set(err, IG_ERR_IO, "%s is not a %s", what,
                          dir ? "directory" : "regular file");
    if (sb.st_uid != geteuid())
        return ig_err_set(err, IG_ERR_IO,
                          "%s belongs to uid %lu, not to the executor's "
                          "uid %lu",
                          what, (unsigned long)sb.st_uid,
                          (unsigned long)geteuid());
    if ((sb.st_mode & 077) != 0)
        return ig_err_set(err, IG_ERR_IO,
                          "%s may be read by group or others (mode %03o): "
                          "chmod %s it",
                          what, (unsigned)(sb.st_mode & 0777),
                          dir ? "700" : "600");
    return IG_OK;
}

enum ig_status
exec_spool_dir_open(struct exec_spool *s, const char *dir, struct ig_err *err)
{
    enum ig_status st;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return ig_err_set(err, IG_ERR_IO,
                          "cannot create spool directory "
                          "%s: %s",
                          dir, strerror(errno));
    s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
    if (s->dirfd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot open spool directory %s: %s",
                          dir, strerror(errno));
    if ((st = check_mode(s->dirfd, dir, 1, err)) != IG_OK)
        return st;
    if (flock(s->dirfd, LOCK_EX | LOCK_NB) != 0)
        return ig_err_set(err, IG_ERR_IO, "spool directory %s: %s", dir,
                          errno == EWOULDBLOCK ? "in use by another executor"
                                               : strerror(errno));
    return IG_OK;
}

/* One line read back: apply it, or count it as damaged. */
static enum ig_status
take_line(struct exec_spool *s, spool_apply_fn apply, const char *p, size_t n,
          struct ig_err *err)
{
    struct spool_rec r;
    enum ig_status st;

    if (parse_line(p, n, &r) != IG_OK) {
        s->st.corrupt_lines++;
        return IG_OK;
    }
    st = apply(s, &r, err);
    json_decref(r.doc);
    return st;
}

/* Read fd line by line (see the top of the file). */
static enum ig_status
read_lines(struct exec_spool *s, spool_apply_fn apply, int fd, char *buf,
           struct ig_err *err)
{
    size_t start = 0, end = 0, n;
    int skipping = 0;
    enum ig_status st;
    const char *lf;
    ssize_t got;

    for (;;) {
        lf = memchr(buf + start, '\n', end - start);
        if (lf != NULL) {
            n = (size_t)(lf - (buf + start));
            if (!skipping &&
                (st = take_line(s, apply, buf + start, n, err)) != IG_OK)
                return st;
            skipping = 0;
            start += n + 1;
            continue;
        }
        if (end - start == IG_EXEC_SPOOL_LINE_MAX) { /* a line too long */
            s->st.corrupt_lines += skipping ? 0u : 1u;
            skipping = 1;
            start = end = 0;
        }
        memmove(buf, buf + start, end - start);
        end -= start;
        start = 0;
        got = read(fd, buf + end, IG_EXEC_SPOOL_LINE_MAX - end);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return ig_err_set(err, IG_ERR_IO, "cannot read %s/%s: %s", s->dir,
                              EXEC_SPOOL_FILE, strerror(errno));
        if (got == 0) {
            s->st.corrupt_lines += end > 0 && !skipping ? 1u : 0u; /* torn */
            return IG_OK;
        }
        end += (size_t)got;
    }
}

enum ig_status
exec_spool_load(struct exec_spool *s, spool_apply_fn apply, struct ig_err *err)
{
    char what[512];
    char *buf = NULL;
    enum ig_status st;
    int fd;

    (void)snprintf(what, sizeof(what), "%s/%s", s->dir, EXEC_SPOOL_FILE);
    fd = openat(s->dirfd, EXEC_SPOOL_FILE,
                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT)
        return IG_OK;
    if (fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", what,
                          strerror(errno));
    st = check_mode(fd, what, 0, err);
    if (st == IG_OK && (buf = malloc(IG_EXEC_SPOOL_LINE_MAX)) == NULL)
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (st == IG_OK)
        st = read_lines(s, apply, fd, buf, err);
    free(buf);
    (void)close(fd);
    return st;
}

/* Write every entry's line to fd; the bytes written in *size. */
static int
write_entries(const struct exec_spool *s, int fd, off_t *size)
{
    const struct spool_entry *e;

    *size = 0;
    for (e = s->oldest; e != NULL; e = e->newer) {
        if (ig_file_write_all(fd, e->line, e->len) != 0)
            return -1;
        *size += (off_t)e->len;
    }
    return 0;
}

enum ig_status
exec_spool_rewrite(struct exec_spool *s, struct ig_err *err)
{
    off_t size = 0;
    int fd, rc;

    if (unlinkat(s->dirfd, SPOOL_TMP, 0) != 0 && errno != ENOENT)
        return ig_err_set(err, IG_ERR_IO, "cannot remove %s/%s: %s", s->dir,
                          SPOOL_TMP, strerror(errno));
    fd = openat(s->dirfd, SPOOL_TMP,
                O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC |
                    O_NOCTTY,
                0600);
    if (fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot create %s/%s: %s", s->dir,
                          SPOOL_TMP, strerror(errno));
    rc = fchmod(fd, 0600) != 0 || write_entries(s, fd, &size) != 0 ? -1 : 0;
    if (rc == 0) {
        s->st.syncs_total++;
        rc = s->o.sync(s->o.ctx, fd);
    }
    if (rc != 0 ||
        renameat(s->dirfd, SPOOL_TMP, s->dirfd, EXEC_SPOOL_FILE) != 0) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot rewrite %s/%s: %s", s->dir,
                         EXEC_SPOOL_FILE, strerror(errno));
        (void)unlinkat(s->dirfd, SPOOL_TMP, 0);
        (void)close(fd);
        return IG_ERR_IO;
    }
    if (s->fd >= 0)
        (void)close(s->fd);
    s->fd = fd;
    s->size = size;
    s->live = (size_t)size;
    s->need_lf = 0;
    s->st.compactions_total++;
    if (fsync(s->dirfd) != 0) { /* the new name may not survive a crash */
        s->broken = 1;
        return ig_err_set(err, IG_ERR_IO, "cannot sync %s: %s", s->dir,
                          strerror(errno));
    }
    s->broken = 0;
    s->synced = s->written;
    return IG_OK;
}
