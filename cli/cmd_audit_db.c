/*
 * cmd_audit_db.c - what every `intentgate audit` subcommand reads: its
 * options, the verifier key, checkpoint notes (from the database or an
 * exported JSONL file), and the PDP's database opened read-only (see
 * cmd_audit_int.h).
 *
 * The database is opened with SQLITE_OPEN_READONLY and query_only on, so
 * no statement here can change it, and read in one transaction: a PDP
 * still appending is seen at one instant. Reads are sequential scans of
 * B-trees in key order; a memory map makes them cheap.
 */
#include "cmd_audit_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_buf.h"
#include "ig_json.h"

int
acli_exit(enum ig_status st)
{
    if (st == IG_OK)
        return CLI_EXIT_OK;
    if (st == IG_ERR_INVALID || st == IG_ERR_LIMIT || st == IG_ERR_NOTFOUND)
        return CLI_EXIT_USAGE;
    return CLI_EXIT_FAIL;
}

int
acli_help(int argc, char **argv, const char *usage)
{
    if (!cli_wants_help(argc, argv))
        return 0;
    (void)fputs(usage, stdout);
    return 1;
}

int
acli_opt(const char *cmd, int argc, char **argv, int *i, const char *name,
         const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);

    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    if (*value != NULL) {
        cli_error(cmd, "%s given twice", name);
        return -1;
    }
    if (a[n] == '=') {
        *value = a + n + 1;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        cli_error(cmd, "%s needs a value (see --help)", name);
        return -1;
    }
    return 1;
}

int
acli_u64(const char *s, uint64_t *out)
{
    unsigned long long v;
    char *end;

    if (s == NULL || s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int
acli_write(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1;
}

/* ---- the verifier key ---- */

enum ig_status
acli_key_load(const char *arg, struct audit_verifier *out, struct ig_err *err)
{
    struct ig_buf file;
    struct ig_err ferr;
    enum ig_status st;

    if (arg == NULL)
        arg = getenv("INTENTGATE_AUDIT_KEY");
    if (arg == NULL || arg[0] == '\0')
        return ig_err_set(err, IG_ERR_INVALID,
                          "missing --key (the log's verifier key, or a file "
                          "holding it; see --help)");
    if (audit_verifier_parse(arg, strlen(arg), out, NULL) == IG_OK)
        return IG_OK;
    if (access(arg, F_OK) != 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "--key %s is neither a verifier key "
                          "(NAME+ID+KEY) nor a file",
                          arg);
    ig_buf_init(&file, IG_KEYFILE_MAX_BYTES);
    st = cli_read_input(arg, &file, &ferr);
    if (st != IG_OK) {
        (void)ig_err_set(err, st == IG_ERR_LIMIT ? st : IG_ERR_INVALID, "%s",
                         ferr.msg);
        goto out;
    }
    st = audit_verifier_parse(file.data != NULL ? file.data : "", file.len, out,
                              &ferr);
    if (st != IG_OK)
        st = ig_err_set(err, IG_ERR_INVALID, "--key %s: %s", arg, ferr.msg);
out:
    ig_buf_release(&file);
    return st;
}

/* ---- checkpoint notes ---- */

void
acli_notes_init(struct acli_notes *ns)
{
    memset(ns, 0, sizeof(*ns));
}

void
acli_notes_release(struct acli_notes *ns)
{
    size_t i;

    for (i = 0; i < ns->n; i++)
        free(ns->note[i]);
    free(ns->note);
    free(ns->len);
    free(ns->size);
    acli_notes_init(ns);
}

static int
notes_grow(struct acli_notes *ns)
{
    size_t cap = ns->cap != 0 ? ns->cap * 2 : 16;
    char **note;
    size_t *len;
    uint64_t *size;

    if (ns->cap >= ACLI_CHECKPOINTS_MAX)
        return -1;
    if ((note = realloc(ns->note, cap * sizeof(*note))) == NULL)
        return -1;
    ns->note = note;
    if ((len = realloc(ns->len, cap * sizeof(*len))) == NULL)
        return -1;
    ns->len = len;
    if ((size = realloc(ns->size, cap * sizeof(*size))) == NULL)
        return -1;
    ns->size = size;
    ns->cap = cap;
    return 0;
}

enum ig_status
acli_notes_add(struct acli_notes *ns, uint64_t size, const char *note,
               size_t len)
{
    char *copy;

    if (ns->n == ns->cap && notes_grow(ns) != 0)
        return ns->cap >= ACLI_CHECKPOINTS_MAX ? IG_ERR_LIMIT : IG_ERR_NOMEM;
    if ((copy = malloc(len + 1)) == NULL)
        return IG_ERR_NOMEM;
    memcpy(copy, note, len);
    copy[len] = '\0';
    ns->note[ns->n] = copy;
    ns->len[ns->n] = len;
    ns->size[ns->n] = size;
    ns->n++;
    return IG_OK;
}

int
acli_note_size(const char *note, size_t len, uint64_t *size)
{
    const char *a = memchr(note, '\n', len), *b;
    char digits[24];
    size_t n;

    if (a == NULL)
        return -1;
    a++;
    b = memchr(a, '\n', len - (size_t)(a - note));
    if (b == NULL || (n = (size_t)(b - a)) == 0 || n >= sizeof(digits) ||
        (n > 1 && a[0] == '0'))
        return -1;
    memcpy(digits, a, n);
    digits[n] = '\0';
    return acli_u64(digits, size);
}

/* One JSONL line {"size":N,"note":"..."}. */
static enum ig_status
note_line(struct acli_notes *ns, const char *line, size_t n, const char *path,
          long lineno, struct ig_err *err)
{
    json_t *v = NULL, *size, *note;
    struct ig_err jerr;
    enum ig_status st;
    double d;

    st = ig_json_parse(line, n, &v, &jerr);
    if (st != IG_OK)
        return ig_err_set(err, st == IG_ERR_NOMEM ? st : IG_ERR_INVALID,
                          "%s:%ld: %s", path, lineno, jerr.msg);
    size = json_object_get(v, "size");
    note = json_object_get(v, "note");
    d = json_is_number(size) ? json_number_value(size) : -1;
    if (!json_is_object(v) || json_object_size(v) != 2 ||
        !json_is_string(note) || d < 0 || d > 9007199254740992.0 ||
        d != (double)(uint64_t)d) {
        st = ig_err_set(err, IG_ERR_INVALID,
                        "%s:%ld: expected {\"size\":N,\"note\":\"...\"}", path,
                        lineno);
        goto out;
    }
    st = acli_notes_add(ns, (uint64_t)d, json_string_value(note),
                        json_string_length(note));
    if (st != IG_OK)
        (void)ig_err_set(err, st, "%s: too many checkpoints or out of memory",
                         path);
out:
    json_decref(v);
    return st;
}

enum ig_status
acli_notes_read_file(struct acli_notes *ns, const char *path,
                     struct ig_err *err)
{
    FILE *f = fopen(path, "rb");
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    enum ig_status st = IG_OK;

    if (f == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "cannot open %s: %s", path,
                          strerror(errno));
    while (st == IG_OK && (got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (got > 0 && line[got - 1] == '\n')
            got--;
        if (got == 0)
            continue;
        if ((size_t)got > 4 * (size_t)AUDIT_NOTE_MAX)
            st = ig_err_set(err, IG_ERR_LIMIT, "%s:%ld: line too long", path,
                            lineno);
        else
            st = note_line(ns, line, (size_t)got, path, lineno, err);
    }
    if (st == IG_OK && ferror(f))
        st = ig_err_set(err, IG_ERR_IO, "cannot read %s", path);
    free(line);
    (void)fclose(f);
    return st;
}

enum ig_status
acli_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **out,
             struct ig_err *err)
{
    if (sqlite3_prepare_v2(db, sql, -1, out, NULL) == SQLITE_OK)
        return IG_OK;
    *out = NULL;
    return ig_err_set(err, IG_ERR_IO, "database: %s", sqlite3_errmsg(db));
}

enum ig_status
acli_notes_read_db(struct acli_notes *ns, sqlite3 *db, struct ig_err *err)
{
    sqlite3_stmt *q;
    enum ig_status st;
    int rc;

    st = acli_prepare(db, "SELECT size, note FROM checkpoints ORDER BY size",
                      &q, err);
    if (st != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the database has no readable checkpoints table: "
                          "%s",
                          sqlite3_errmsg(db));
    while (st == IG_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *note = (const char *)sqlite3_column_text(q, 1);
        sqlite3_int64 size = sqlite3_column_int64(q, 0);

        st = acli_notes_add(ns, size > 0 ? (uint64_t)size : 0,
                            note != NULL ? note : "",
                            (size_t)sqlite3_column_bytes(q, 1));
        if (st != IG_OK)
            (void)ig_err_set(err, st, "reading checkpoints: %s",
                             ig_strerror(st));
    }
    if (st == IG_OK && rc != SQLITE_DONE)
        st = ig_err_set(err, IG_ERR_IO, "reading checkpoints: %s",
                        sqlite3_errmsg(db));
    sqlite3_finalize(q);
    return st;
}

/* ---- the database ---- */

/* A SQLite URI for path opened immutable: no locks, no -shm, no -wal. */
static int
immutable_uri(const char *path, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    const unsigned char *p;

    if (cap < 32)
        return -1;
    memcpy(out, "file:", 5);
    n = 5;
    for (p = (const unsigned char *)path; *p != '\0'; p++) {
        if (n + 4 + 12 >= cap)
            return -1;
        if (strchr("?#%", *p) != NULL || *p < 0x20 || *p >= 0x7f) {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        } else {
            out[n++] = (char)*p;
        }
    }
    memcpy(out + n, "?immutable=1", 13);
    return 0;
}

/* 1 when path has no write-ahead log with content beside it: then its main
   file alone is the whole database, and immutable mode reads it right. */
static int
no_wal(const char *path)
{
    char wal[4096];
    struct stat sb;
    int n = snprintf(wal, sizeof(wal), "%s-wal", path);

    return n > 0 && (size_t)n < sizeof(wal) &&
           (stat(wal, &sb) != 0 || sb.st_size == 0);
}

/* Open read-only and start a read transaction on a table we need. */
static int
try_open(const char *name, int flags, sqlite3 **db)
{
    sqlite3_stmt *q = NULL;
    int ok;

    if (sqlite3_open_v2(name, db,
                        flags | SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        return -1;
    (void)sqlite3_busy_timeout(*db, 5000);
    (void)sqlite3_exec(*db,
                       "PRAGMA query_only = 1; PRAGMA mmap_size = 1073741824;"
                       " PRAGMA cache_size = -65536",
                       NULL, NULL, NULL);
    ok = sqlite3_exec(*db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
         sqlite3_prepare_v2(*db, "SELECT seq, event FROM audit_events LIMIT 0",
                            -1, &q, NULL) == SQLITE_OK &&
         sqlite3_step(q) == SQLITE_DONE;
    sqlite3_finalize(q);
    return ok ? 0 : -1;
}

enum ig_status
acli_db_open(const char *path, sqlite3 **out, struct ig_err *err)
{
    char uri[4200];
    sqlite3 *db = NULL;
    enum ig_status st = IG_OK;

    *out = NULL;
    if (access(path, R_OK) != 0)
        return ig_err_set(err, IG_ERR_INVALID, "cannot open %s: %s", path,
                          strerror(errno));
    if (try_open(path, 0, &db) == 0) {
        *out = db;
        return IG_OK;
    }
    /* A copy in a directory this user cannot write: SQLite cannot make
       the shared-memory file a WAL database needs. Read it immutable. */
    if (sqlite3_errcode(db) != SQLITE_NOTADB && no_wal(path) &&
        immutable_uri(path, uri, sizeof(uri)) == 0) {
        sqlite3_close(db);
        db = NULL;
        if (try_open(uri, SQLITE_OPEN_URI, &db) == 0) {
            *out = db;
            return IG_OK;
        }
    }
    st = ig_err_set(err, IG_ERR_INVALID, "%s is not an intentgate database: %s",
                    path, db != NULL ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return st;
}

void
acli_db_close(sqlite3 *db)
{
    if (db == NULL)
        return;
    (void)sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
}

enum ig_status
acli_nodes_open(struct acli_nodes *nodes, sqlite3 *db, struct ig_err *err)
{
    if (sqlite3_prepare_v2(db,
                           "SELECT hash FROM audit_nodes WHERE level = ?1 "
                           "AND idx = ?2",
                           -1, &nodes->st, NULL) == SQLITE_OK)
        return IG_OK;
    nodes->st = NULL;
    return ig_err_set(err, IG_ERR_INVALID,
                      "the database has no readable audit_nodes table: %s",
                      sqlite3_errmsg(db));
}

void
acli_nodes_close(struct acli_nodes *nodes)
{
    sqlite3_finalize(nodes->st);
    nodes->st = NULL;
}

enum ig_status
acli_nodes_fetch(void *ctx, unsigned level, uint64_t index,
                 unsigned char out[AUDIT_HASH_BYTES])
{
    struct acli_nodes *nodes = ctx;
    enum ig_status st = IG_ERR_NOTFOUND;
    int rc;

    if (index > (uint64_t)INT64_MAX)
        return IG_ERR_NOTFOUND;
    (void)sqlite3_bind_int(nodes->st, 1, (int)level);
    (void)sqlite3_bind_int64(nodes->st, 2, (sqlite3_int64)index);
    rc = sqlite3_step(nodes->st);
    if (rc == SQLITE_ROW &&
        sqlite3_column_bytes(nodes->st, 0) == AUDIT_HASH_BYTES) {
        memcpy(out, sqlite3_column_blob(nodes->st, 0), AUDIT_HASH_BYTES);
        st = IG_OK;
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        st = IG_ERR_IO;
    }
    (void)sqlite3_reset(nodes->st);
    return st;
}

/* Copy column i of q into a malloc'd, NUL-terminated string. */
static enum ig_status
col_dup(sqlite3_stmt *q, int i, char **out, size_t *len)
{
    const unsigned char *p = sqlite3_column_text(q, i);
    size_t n = (size_t)sqlite3_column_bytes(q, i);

    if ((*out = malloc(n + 1)) == NULL)
        return IG_ERR_NOMEM;
    if (n > 0)
        memcpy(*out, p, n);
    (*out)[n] = '\0';
    *len = n;
    return IG_OK;
}

enum ig_status
acli_db_checkpoint(sqlite3 *db, uint64_t size, char **note, size_t *len,
                   uint64_t *got, struct ig_err *err)
{
    sqlite3_stmt *q;
    enum ig_status st;
    int rc;

    *note = NULL;
    st = acli_prepare(db,
                      size == 0 ? "SELECT size, note FROM checkpoints "
                                  "ORDER BY size DESC LIMIT 1"
                                : "SELECT size, note FROM checkpoints "
                                  "WHERE size = ?1",
                      &q, err);
    if (st != IG_OK)
        return ig_err_set(err, IG_ERR_INVALID,
                          "the database has no readable checkpoints table");
    if (size > 0)
        (void)sqlite3_bind_int64(q, 1, (sqlite3_int64)size);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        *got = (uint64_t)sqlite3_column_int64(q, 0);
        st = col_dup(q, 1, note, len);
    } else if (rc == SQLITE_DONE && size == 0) {
        st = ig_err_set(err, IG_ERR_NOTFOUND, "the log has no checkpoint yet");
    } else if (rc == SQLITE_DONE) {
        st = ig_err_set(err, IG_ERR_NOTFOUND,
                        "no checkpoint of size %llu (see the checkpoints "
                        "table or `audit export --checkpoints-out`)",
                        (unsigned long long)size);
    } else {
        st = ig_err_set(err, IG_ERR_IO, "reading checkpoints: %s",
                        sqlite3_errmsg(db));
    }
    sqlite3_finalize(q);
    return st;
}

enum ig_status
acli_db_leaf(sqlite3 *db, uint64_t index, char **leaf, size_t *len,
             struct ig_err *err)
{
    sqlite3_stmt *q;
    enum ig_status st;
    int rc;

    *leaf = NULL;
    if (index >= (uint64_t)INT64_MAX)
        return ig_err_set(err, IG_ERR_NOTFOUND, "no leaf %llu",
                          (unsigned long long)index);
    st = acli_prepare(db, "SELECT event FROM audit_events WHERE seq = ?1", &q,
                      err);
    if (st != IG_OK)
        return st;
    (void)sqlite3_bind_int64(q, 1, (sqlite3_int64)index + 1);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        st = col_dup(q, 0, leaf, len);
    else if (rc == SQLITE_DONE)
        st = ig_err_set(err, IG_ERR_NOTFOUND, "no leaf %llu in the log",
                        (unsigned long long)index);
    else
        st = ig_err_set(err, IG_ERR_IO, "reading leaf %llu: %s",
                        (unsigned long long)index, sqlite3_errmsg(db));
    sqlite3_finalize(q);
    return st;
}

enum ig_status
acli_db_events(sqlite3 *db, const char *key, const char *value,
               acli_event_fn fn, void *ctx, struct ig_err *err)
{
    char needle[ACLI_NEEDLE_MAX];
    sqlite3_stmt *q;
    json_t *ev;
    enum ig_status st;
    const char *got;
    int rc, n;

    n = snprintf(needle, sizeof(needle), "\"%s\":\"%s\"", key, value);
    if (n < 0 || (size_t)n >= sizeof(needle))
        return ig_err_set(err, IG_ERR_INVALID, "%s is too long", key);
    st = acli_prepare(db,
                      "SELECT seq, event FROM audit_events WHERE "
                      "instr(event, ?1) > 0 ORDER BY seq",
                      &q, err);
    if (st != IG_OK)
        return st;
    (void)sqlite3_bind_text(q, 1, needle, -1, SQLITE_STATIC);
    while (st == IG_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (ig_json_parse((const char *)sqlite3_column_text(q, 1),
                          (size_t)sqlite3_column_bytes(q, 1), &ev,
                          NULL) != IG_OK)
            continue; /* not an event: `audit verify` says more */
        got = json_string_value(json_object_get(ev, key));
        if (got != NULL && strcmp(got, value) == 0)
            st = fn(ctx, (uint64_t)sqlite3_column_int64(q, 0) - 1, ev, err);
        json_decref(ev);
    }
    if (st == IG_OK && rc != SQLITE_DONE)
        st = ig_err_set(err, IG_ERR_IO, "reading audit_events: %s",
                        sqlite3_errmsg(db));
    sqlite3_finalize(q);
    return st;
}
