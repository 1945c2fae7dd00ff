/*
 * cmd_audit_db.c - what every `intentgate audit` subcommand reads: its
 * options, the verifier key, checkpoint notes (from the database or an
 * exported JSONL file), and the events of the PDP's database, read
 * through store/store_log.h (one read-only snapshot; see
 * cmd_audit_int.h).
 */
#include "cmd_audit_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_buf.h"
#include "ig_json.h"

int
cli_audit_exit(enum ig_status st)
{
    if (st == IG_OK)
        return CLI_EXIT_OK;
    if (st == IG_ERR_INVALID || st == IG_ERR_LIMIT || st == IG_ERR_NOTFOUND)
        return CLI_EXIT_USAGE;
    return CLI_EXIT_FAIL;
}

int
cli_audit_help(int argc, char **argv, const char *usage)
{
    if (!cli_wants_help(argc, argv))
        return 0;
    (void)fputs(usage, stdout);
    return 1;
}

int
cli_audit_opt(const char *cmd, int argc, char **argv, int *i, const char *name,
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
cli_audit_u64(const char *s, uint64_t *out)
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
cli_audit_write(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1;
}

/* ---- the verifier key ---- */

enum ig_status
cli_audit_key_load(const char *arg, struct audit_verifier *out,
                   struct ig_err *err)
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
cli_audit_notes_init(struct cli_audit_notes *ns)
{
    memset(ns, 0, sizeof(*ns));
}

void
cli_audit_notes_release(struct cli_audit_notes *ns)
{
    size_t i;

    for (i = 0; i < ns->n; i++)
        free(ns->note[i]);
    free(ns->note);
    free(ns->len);
    free(ns->size);
    free(ns->at);
    cli_audit_notes_init(ns);
}

static int
notes_grow(struct cli_audit_notes *ns)
{
    size_t cap = ns->cap != 0 ? ns->cap * 2 : 16;
    char **note;
    size_t *len;
    uint64_t *size;
    int64_t *at;

    if (ns->cap >= IG_AUDIT_CLI_CHECKPOINTS_MAX)
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
    if ((at = realloc(ns->at, cap * sizeof(*at))) == NULL)
        return -1;
    ns->at = at;
    ns->cap = cap;
    return 0;
}

enum ig_status
cli_audit_notes_add(struct cli_audit_notes *ns, uint64_t size, int64_t at,
                    const char *note, size_t len)
{
    char *copy;

    if (ns->n == ns->cap && notes_grow(ns) != 0)
        return ns->cap >= IG_AUDIT_CLI_CHECKPOINTS_MAX ? IG_ERR_LIMIT
                                                       : IG_ERR_NOMEM;
    if ((copy = malloc(len + 1)) == NULL)
        return IG_ERR_NOMEM;
    memcpy(copy, note, len);
    copy[len] = '\0';
    ns->note[ns->n] = copy;
    ns->len[ns->n] = len;
    ns->size[ns->n] = size;
    ns->at[ns->n] = at;
    ns->n++;
    return IG_OK;
}

int
cli_audit_note_size(const char *note, size_t len, uint64_t *size)
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
    return cli_audit_u64(digits, size);
}

/* One JSONL line {"size":N,"note":"..."}. */
static enum ig_status
note_line(struct cli_audit_notes *ns, const char *line, size_t n,
          const char *path, long lineno, struct ig_err *err)
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
    st = cli_audit_notes_add(ns, (uint64_t)d, 0, json_string_value(note),
                             json_string_length(note));
    if (st != IG_OK)
        (void)ig_err_set(err, st, "%s: too many checkpoints or out of memory",
                         path);
out:
    json_decref(v);
    return st;
}

enum ig_status
cli_audit_notes_read_file(struct cli_audit_notes *ns, const char *path,
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
cli_audit_notes_read_db(struct cli_audit_notes *ns, struct store_log *db,
                        struct ig_err *err)
{
    struct store_log_cursor *c;
    struct store_log_row row;
    enum ig_status st;

    if ((st = store_log_scan(db, STORE_LOG_CHECKPOINTS, NULL, &c, err)) !=
        IG_OK)
        return st;
    while ((st = store_log_next(c, &row, err)) == IG_OK) {
        st =
            cli_audit_notes_add(ns, row.key > 0 ? (uint64_t)row.key : 0, row.at,
                                row.data != NULL ? row.data : "", row.len);
        if (st != IG_OK) {
            (void)ig_err_set(err, st, "reading checkpoints: %s",
                             ig_strerror(st));
            break;
        }
    }
    store_log_cursor_free(c);
    if (st != IG_ERR_NOTFOUND)
        return st;
    ns->ndb = ns->n;
    return IG_OK;
}

/* ---- the database ---- */

enum ig_status
cli_audit_db_checkpoint(struct store_log *db, uint64_t size, char **note,
                        size_t *len, uint64_t *got, struct ig_err *err)
{
    enum ig_status st = store_log_checkpoint(db, size, note, len, got, err);

    if (st == IG_ERR_NOTFOUND && size > 0)
        (void)ig_err_set(err, st,
                         "no checkpoint of size %llu (see the checkpoints "
                         "table or `audit export --checkpoints-out`)",
                         (unsigned long long)size);
    return st;
}

enum ig_status
cli_audit_db_events(struct store_log *db, const char *key, const char *value,
                    cli_audit_event_fn fn, void *ctx, struct ig_err *err)
{
    char needle[IG_AUDIT_CLI_NEEDLE_MAX];
    struct store_log_cursor *c;
    struct store_log_row row;
    json_t *ev;
    enum ig_status st;
    const char *got;
    int n;

    n = snprintf(needle, sizeof(needle), "\"%s\":\"%s\"", key, value);
    if (n < 0 || (size_t)n >= sizeof(needle))
        return ig_err_set(err, IG_ERR_INVALID, "%s is too long", key);
    if ((st = store_log_scan(db, STORE_LOG_EVENTS, needle, &c, err)) != IG_OK)
        return st;
    for (;;) {
        if ((st = store_log_next(c, &row, err)) != IG_OK) {
            if (st == IG_ERR_NOTFOUND)
                st = IG_OK; /* the last one */
            break;
        }
        if (row.data == NULL ||
            ig_json_parse(row.data, row.len, &ev, NULL) != IG_OK)
            continue; /* not an event: `audit verify` says more */
        got = json_string_value(json_object_get(ev, key));
        if (got != NULL && strcmp(got, value) == 0)
            st = fn(ctx, (uint64_t)row.key - 1, ev, err);
        json_decref(ev);
        if (st != IG_OK)
            break;
    }
    store_log_cursor_free(c);
    return st;
}
