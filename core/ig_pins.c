/*
 * ig_pins.c - the pin file (format and rules in ig_pins.h): opening it,
 * keeping up with what other processes append, and appending.
 *
 * DESIGN. The handle keeps the fold of every complete line read so far
 * (ig_pins_log.c), read_off (the bytes folded: up to the last newline)
 * and seen_size (the file's size when last read). Every call first
 * compares fstat's size with seen_size; only when it moved is the tail
 * from read_off read and folded, under flock(LOCK_SH) so that it never
 * meets a writer's truncation half way. A call that may write takes
 * LOCK_EX instead, reads the tail, decides on the state it now has (a
 * second gateway or the CLI may have written the same thing meanwhile),
 * cuts a torn tail (bytes after the last newline: only a crashed writer
 * leaves them, since writers hold LOCK_EX), appends the line with one
 * write on an O_APPEND descriptor, fsyncs, and folds the line back in by
 * reading the tail again: the state is only ever what the file says. A
 * line is parsed with the reader's own rules before it is written, so a
 * definition the reader would refuse (too deep, too large) is refused up
 * front instead of making the file unreadable. A bad line appended by
 * someone else leaves the handle broken (its state holds part of a tail):
 * every later call fails until the file is fixed and reopened.
 */
#include "ig_pins.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_file.h"
#include "ig_json.h"
#include "ig_pins_int.h"
#include "ig_time.h"

struct ig_pins {
    pthread_mutex_t mu;
    int fd;
    char *path;
    struct ig_pins_state st;
    off_t read_off;  /* bytes folded, through the last newline */
    off_t seen_size; /* the file's size when last read */
    int broken;      /* a bad line came in after open */
};

static enum ig_status
pins_flock(struct ig_pins *p, int op, struct ig_err *err)
{
    while (flock(p->fd, op) != 0)
        if (errno != EINTR)
            return ig_err_set(err, IG_ERR_IO, "cannot lock %s: %s", p->path,
                              strerror(errno));
    return IG_OK;
}

static void
pins_unlock(struct ig_pins *p)
{
    (void)flock(p->fd, LOCK_UN);
}

/* Read bytes [off, off + n) of the file into b. */
static enum ig_status
pins_pread(struct ig_pins *p, off_t off, size_t n, struct ig_buf *b,
           struct ig_err *err)
{
    char chunk[65536];
    size_t want;
    ssize_t r;

    while (n > 0) {
        want = n < sizeof(chunk) ? n : sizeof(chunk);
        r = pread(p->fd, chunk, want, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return ig_err_set(err, IG_ERR_IO, "cannot read %s: %s", p->path,
                              strerror(errno));
        if (r == 0)
            return ig_err_set(err, IG_ERR_IO, "%s shrank while read", p->path);
        if (ig_buf_add(b, chunk, (size_t)r) != IG_OK)
            return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        off += r;
        n -= (size_t)r;
    }
    return IG_OK;
}

/* Fold what was appended since the last read (a lock is held). */
static enum ig_status
pins_read_tail(struct ig_pins *p, struct ig_err *err)
{
    struct ig_err e;
    struct ig_buf b;
    struct stat sb;
    enum ig_status st;
    size_t used;

    if (p->broken)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s had a bad line appended; fix it and reopen",
                          p->path);
    if (fstat(p->fd, &sb) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot stat %s: %s", p->path,
                          strerror(errno));
    if (sb.st_size == p->seen_size)
        return IG_OK;
    if (sb.st_size < p->read_off)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s shrank below what was read: it was edited",
                          p->path);
    if (sb.st_size > IG_PIN_FILE_MAX)
        return ig_err_set(err, IG_ERR_LIMIT, "%s is over %d bytes", p->path,
                          IG_PIN_FILE_MAX);
    ig_buf_init(&b, IG_PIN_FILE_MAX);
    st =
        pins_pread(p, p->read_off, (size_t)(sb.st_size - p->read_off), &b, err);
    if (st != IG_OK)
        goto out;
    ig_err_clear(&e);
    st = ig_pins_state_feed(&p->st, b.data, b.len, &used, &e);
    if (st != IG_OK) {
        p->broken = 1;
        (void)ig_err_set(err, st, "%s: %s", p->path, e.msg);
        goto out;
    }
    p->read_off += (off_t)used;
    p->seen_size = sb.st_size;
out:
    ig_buf_release(&b);
    return st;
}

/* Append line (newline included) under LOCK_EX, after pins_read_tail. */
static enum ig_status
pins_append(struct ig_pins *p, const struct ig_buf *line, struct ig_err *err)
{
    if (p->seen_size > p->read_off) { /* a torn line: a crashed writer */
        if (ftruncate(p->fd, p->read_off) != 0)
            return ig_err_set(err, IG_ERR_IO, "cannot truncate %s: %s", p->path,
                              strerror(errno));
        p->seen_size = p->read_off;
    }
    if (p->read_off + (off_t)line->len > IG_PIN_FILE_MAX)
        return ig_err_set(err, IG_ERR_LIMIT, "%s would be over %d bytes",
                          p->path, IG_PIN_FILE_MAX);
    if (ig_file_write_all(p->fd, line->data, line->len) != 0 ||
        fsync(p->fd) != 0) {
        (void)ig_err_set(err, IG_ERR_IO, "cannot append to %s: %s", p->path,
                         strerror(errno));
        /* Cut the torn line now; if even that fails, the next writer
           cuts it under the lock (a last line without '\n' is ignored). */
        if (ftruncate(p->fd, p->read_off) != 0)
            return IG_ERR_IO;
        return IG_ERR_IO;
    }
    return pins_read_tail(p, err);
}

/* Canonical JSON of ev + a newline into line, checked to read back. */
static enum ig_status
pins_line(json_t *ev, struct ig_buf *line, struct ig_err *err)
{
    struct ig_pin_line pl;
    enum ig_status st;

    if (ev == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    st = ig_canon_write(ev, line, err);
    if (st == IG_OK)
        st = ig_pins_line_parse(line->data, line->len, &pl, err);
    if (st == IG_OK) {
        json_decref(pl.doc);
        if (ig_buf_addc(line, '\n') != IG_OK)
            st = ig_err_set(err, IG_ERR_LIMIT, "line over %d bytes",
                            IG_PIN_LINE_MAX);
    }
    json_decref(ev);
    return st;
}

static enum ig_status
pins_now(char at[IG_TIME_STRLEN + 1], struct ig_err *err)
{
    if (ig_time_format(ig_time_now(), at) != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID, "the clock is out of range");
    return IG_OK;
}

/* def is an object whose canonical form fits and hashes to hash. */
static enum ig_status
pins_def_check(const json_t *def, const char *hash, struct ig_err *err)
{
    char h[IG_PIN_HASH_SIZE];
    struct ig_buf b;
    enum ig_status st;

    if (def == NULL || !json_is_object(def))
        return ig_err_set(err, IG_ERR_INVALID,
                          "a changed definition must be a JSON object");
    ig_buf_init(&b, IG_PIN_DEFINITION_MAX_BYTES);
    st = ig_canon_write(def, &b, err);
    if (st == IG_ERR_LIMIT)
        (void)ig_err_set(err, st, "definition over %d bytes",
                         IG_PIN_DEFINITION_MAX_BYTES);
    if (st == IG_OK) {
        ig_hash_bytes(b.data, b.len, h);
        if (strcmp(h, hash) != 0)
            st = ig_err_set(err, IG_ERR_INVALID,
                            "hash is not the definition's (%s)", h);
    }
    ig_buf_release(&b);
    return st;
}

/* The answer that needs no write, or 0 when one is needed. */
static enum ig_pin_state
pins_decide(const struct ig_pins *p, const char *key, const char *hash)
{
    const struct ig_pin_entry *e = ig_pins_state_find(&p->st, key);

    if (e == NULL)
        return 0;
    if (strcmp(e->pinned, hash) == 0)
        return IG_PIN_SAME;
    if (ig_pins_entry_pending(e, hash) >= 0 ||
        e->npending == IG_PIN_PENDING_MAX)
        return IG_PIN_CHANGED;
    return 0;
}

/* The write of a check, under LOCK_EX with the tail read. */
static enum ig_status
pins_check_write(struct ig_pins *p, const char *key, const char *hash,
                 const json_t *def, enum ig_pin_state *state,
                 struct ig_err *err)
{
    char at[IG_TIME_STRLEN + 1];
    struct ig_buf line;
    enum ig_pin_state s = pins_decide(p, key, hash);
    int known = ig_pins_state_find(&p->st, key) != NULL;
    enum ig_status st;

    if (s != 0) {
        *state = s;
        return IG_OK;
    }
    st = pins_now(at, err);
    if (st == IG_OK && known)
        st = pins_def_check(def, hash, err);
    if (st != IG_OK)
        return st;
    ig_buf_init(&line, IG_PIN_LINE_MAX + 1);
    if (known) /* json_pack "O": a new reference to def */
        st = pins_line(json_pack("{s:s, s:O, s:s, s:s, s:s}", "at", at,
                                 "definition", ig_json_unconst(def), "event",
                                 "changed", "hash", hash, "key", key),
                       &line, err);
    else
        st = pins_line(json_pack("{s:s, s:s, s:s, s:s}", "at", at, "event",
                                 "pinned", "hash", hash, "key", key),
                       &line, err);
    if (st == IG_OK)
        st = pins_append(p, &line, err);
    if (st == IG_OK)
        *state = known ? IG_PIN_CHANGED : IG_PIN_NEW;
    ig_buf_release(&line);
    return st;
}

static enum ig_status
pins_args(const char *key, const char *hash, struct ig_err *err)
{
    if (!ig_pins_key_valid(key))
        return ig_err_set(err, IG_ERR_INVALID,
                          "bad pin key (want ALIAS/TOOL, printable ASCII "
                          "without spaces, at most %d bytes)",
                          IG_PIN_KEY_MAX);
    if (hash == NULL || !ig_hash_is_valid(hash))
        return ig_err_set(err, IG_ERR_INVALID,
                          "bad hash (want sha256: and 64 lowercase hex "
                          "digits)");
    return IG_OK;
}

enum ig_status
ig_pins_check(struct ig_pins *p, const char *key, const char *hash,
              const json_t *def, enum ig_pin_state *state, struct ig_err *err)
{
    enum ig_status st;

    *state = 0;
    st = pins_args(key, hash, err);
    if (st != IG_OK)
        return st;
    pthread_mutex_lock(&p->mu);
    st = pins_flock(p, LOCK_SH, err);
    if (st != IG_OK)
        goto out;
    st = pins_read_tail(p, err);
    pins_unlock(p);
    if (st != IG_OK)
        goto out;
    *state = pins_decide(p, key, hash);
    if (*state != 0)
        goto out;
    st = pins_flock(p, LOCK_EX, err);
    if (st != IG_OK)
        goto out;
    st = pins_read_tail(p, err);
    if (st == IG_OK)
        st = pins_check_write(p, key, hash, def, state, err);
    pins_unlock(p);
out:
    pthread_mutex_unlock(&p->mu);
    if (st != IG_OK)
        *state = 0;
    return st;
}

/* {"key","pinned","hash","definition","seen_at"} per pending change. */
static enum ig_status
pins_pending_list(const struct ig_pins *p, json_t *arr, struct ig_err *err)
{
    const struct ig_pin_entry *e;
    const struct ig_pin_pending *pp;
    size_t i, j;

    for (i = 0; i < p->st.n; i++) {
        e = p->st.v[i];
        for (j = 0; j < e->npending; j++) {
            pp = &e->pending[j];
            /* json_array_append_new steals the packed object; "O" takes
               a new reference to the definition */
            if (json_array_append_new(
                    arr, json_pack("{s:s, s:s, s:s, s:O, s:s}", "key", e->key,
                                   "pinned", e->pinned, "hash", pp->hash,
                                   "definition", pp->def, "seen_at", pp->at)) !=
                0)
                return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        }
    }
    return IG_OK;
}

enum ig_status
ig_pins_pending(struct ig_pins *p, json_t **out, struct ig_err *err)
{
    json_t *arr;
    enum ig_status st;

    *out = NULL;
    arr = json_array();
    if (arr == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    pthread_mutex_lock(&p->mu);
    st = pins_flock(p, LOCK_SH, err);
    if (st == IG_OK) {
        st = pins_read_tail(p, err);
        pins_unlock(p);
    }
    if (st == IG_OK)
        st = pins_pending_list(p, arr, err);
    pthread_mutex_unlock(&p->mu);
    if (st != IG_OK) {
        json_decref(arr);
        return st;
    }
    *out = arr;
    return IG_OK;
}

/* IG_ERR_NOTFOUND naming what is pending for key instead of hash. */
static enum ig_status
pins_not_pending(const struct ig_pins *p, const char *key, const char *hash,
                 struct ig_err *err)
{
    const struct ig_pin_entry *e = ig_pins_state_find(&p->st, key);
    char list[IG_ERR_MSGMAX];
    size_t i, len = 0;
    int n;

    if (e == NULL)
        return ig_err_set(err, IG_ERR_NOTFOUND, "no tool %s is pinned", key);
    if (e->npending == 0)
        return ig_err_set(err, IG_ERR_NOTFOUND,
                          "nothing is pending for %s (pinned: %s)", key,
                          e->pinned);
    list[0] = '\0';
    for (i = 0; i < e->npending && len < sizeof(list); i++) {
        n = snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
                     e->pending[i].hash);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return ig_err_set(err, IG_ERR_NOTFOUND,
                      "%s is not pending for %s; pending: %s", hash, key, list);
}

enum ig_status
ig_pins_accept(struct ig_pins *p, const char *key, const char *hash,
               const char *by, struct ig_err *err)
{
    char at[IG_TIME_STRLEN + 1];
    const struct ig_pin_entry *e;
    struct ig_buf line;
    enum ig_status st;

    st = pins_args(key, hash, err);
    if (st != IG_OK)
        return st;
    if (by == NULL || !ig_pins_word_valid(by, IG_PIN_BY_MAX))
        return ig_err_set(err, IG_ERR_INVALID,
                          "bad accepting name (printable ASCII without "
                          "spaces, at most %d bytes)",
                          IG_PIN_BY_MAX);
    st = pins_now(at, err);
    if (st != IG_OK)
        return st;
    ig_buf_init(&line, IG_PIN_LINE_MAX + 1);
    pthread_mutex_lock(&p->mu);
    st = pins_flock(p, LOCK_EX, err);
    if (st != IG_OK)
        goto out;
    st = pins_read_tail(p, err);
    e = ig_pins_state_find(&p->st, key);
    if (st == IG_OK && (e == NULL || ig_pins_entry_pending(e, hash) < 0))
        st = pins_not_pending(p, key, hash, err);
    if (st == IG_OK)
        st =
            pins_line(json_pack("{s:s, s:s, s:s, s:s, s:s}", "at", at, "by", by,
                                "event", "accepted", "hash", hash, "key", key),
                      &line, err);
    if (st == IG_OK)
        st = pins_append(p, &line, err);
    pins_unlock(p);
out:
    pthread_mutex_unlock(&p->mu);
    ig_buf_release(&line);
    return st;
}

/* Open path (creating it 0600) and check what it is. */
static enum ig_status
pins_open_fd(struct ig_pins *p, struct ig_err *err)
{
    struct stat sb;
    int created = 0;

    p->fd = open(p->path,
                 O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600);
    if (p->fd >= 0)
        created = 1;
    else if (errno == EEXIST)
        p->fd = open(p->path,
                     O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (p->fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", p->path,
                          strerror(errno));
    if (fstat(p->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return ig_err_set(err, IG_ERR_IO, "%s is not a regular file", p->path);
    if (created) /* exactly 0600, whatever the umask */
        return fchmod(p->fd, 0600) == 0
                   ? ig_file_sync_parent(p->path, err)
                   : ig_err_set(err, IG_ERR_IO, "cannot chmod %s: %s", p->path,
                                strerror(errno));
    if ((sb.st_mode & 022) != 0)
        return ig_err_set(err, IG_ERR_IO,
                          "%s may be written by group or others (mode %03o); "
                          "chmod 600 it",
                          p->path, (unsigned)(sb.st_mode & 0777));
    return IG_OK;
}

enum ig_status
ig_pins_open(const char *path, struct ig_pins **out, struct ig_err *err)
{
    struct ig_pins *p;
    enum ig_status st;

    *out = NULL;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    p->fd = -1;
    p->seen_size = -1;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return ig_err_set(err, IG_ERR_NOMEM, "cannot create a mutex");
    }
    p->path = strdup(path);
    if (p->path == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = pins_open_fd(p, err);
    if (st == IG_OK)
        st = pins_flock(p, LOCK_SH, err);
    if (st == IG_OK) {
        st = pins_read_tail(p, err);
        pins_unlock(p);
    }
out:
    if (st != IG_OK) {
        ig_pins_free(p);
        return st;
    }
    *out = p;
    return IG_OK;
}

void
ig_pins_free(struct ig_pins *p)
{
    if (p == NULL)
        return;
    if (p->fd >= 0)
        (void)close(p->fd);
    ig_pins_state_release(&p->st);
    free(p->path);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
