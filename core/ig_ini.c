/*
 * ig_ini.c - the INI-style config reader (see ig_ini.h).
 *
 * The file is read whole (capped), then cut at each '\n'. Each line is
 * checked as raw bytes first (length, NUL, controls, UTF-8), so nothing
 * after a bad byte is ever looked at, then copied into a line buffer where
 * the comment is cut and the parts trimmed in place before the callbacks
 * see them.
 */
#include "ig_ini.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_file.h"
#include "ig_limits.h"
#include "ig_text.h"

struct ini_reader {
    const char *name;
    const struct ig_ini_handler *h;
    void *ctx;
    struct ig_err *err;
    int line;
};

/* err = "NAME:LINE: message", err->line = LINE; returns st. */
static enum ig_status fail(const struct ini_reader *r, enum ig_status st,
                           const char *fmt, ...) IG_PRINTF(3, 4);

static enum ig_status
fail(const struct ini_reader *r, enum ig_status st, const char *fmt, ...)
{
    char msg[IG_ERR_MSGMAX];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    (void)ig_err_set(r->err, st, "%s:%d: %s", r->name, r->line, msg);
    if (r->err != NULL)
        r->err->line = r->line;
    return st;
}

/* The raw bytes of one line (without its '\n'): no NUL, no control but
   tab, well-formed UTF-8. */
static enum ig_status
check_bytes(const struct ini_reader *r, const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\0')
            return fail(r, IG_ERR_INVALID, "NUL byte in the line");
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return fail(r, IG_ERR_INVALID,
                        "control character 0x%02x in the line", ch);
    }
    if (!ig_utf8_valid(s, n))
        return fail(r, IG_ERR_INVALID, "the line is not valid UTF-8");
    return IG_OK;
}

/* "[kind]" or "[kind id]" (s starts with '['). */
static enum ig_status
header(const struct ini_reader *r, char *s)
{
    char *end = strchr(s, ']'), *kind, *id;

    if (r->h->section == NULL)
        return fail(r, IG_ERR_INVALID,
                    "unexpected section header (this file has no sections)");
    if (end == NULL || ig_trim(end + 1)[0] != '\0')
        return fail(r, IG_ERR_INVALID,
                    "malformed section header (want [kind] or [kind id])");
    *end = '\0';
    kind = ig_trim(s + 1);
    if (kind[0] == '\0')
        return fail(r, IG_ERR_INVALID, "empty section header []");
    id = kind + strcspn(kind, " \t");
    if (*id != '\0') {
        *id++ = '\0';
        id = ig_trim(id);
    } else {
        id = NULL;
    }
    return r->h->section(r->ctx, r->line, kind, id);
}

/* "key = value". */
static enum ig_status
key_value(const struct ini_reader *r, char *s)
{
    char *eq = strchr(s, '='), *key;

    if (eq == NULL)
        return fail(r, IG_ERR_INVALID, "expected key = value");
    *eq = '\0';
    key = ig_trim(s);
    if (key[0] == '\0')
        return fail(r, IG_ERR_INVALID, "missing key before '='");
    if (strpbrk(key, " \t") != NULL)
        return fail(r, IG_ERR_INVALID, "key \"%.64s\" contains a space", key);
    return r->h->key(r->ctx, r->line, key, ig_trim(eq + 1));
}

static enum ig_status
one_line(const struct ini_reader *r, const char *raw, size_t n)
{
    char buf[IG_INI_LINE_MAX + 1], *s;
    enum ig_status st;

    if (n > 0 && raw[n - 1] == '\r')
        n--; /* CRLF */
    if (n > IG_INI_LINE_MAX)
        return fail(r, IG_ERR_LIMIT, "line longer than %d bytes",
                    IG_INI_LINE_MAX);
    if ((st = check_bytes(r, raw, n)) != IG_OK)
        return st;
    memcpy(buf, raw, n);
    buf[n] = '\0';
    ig_strip_comment(buf);
    s = ig_trim(buf);
    if (s[0] == '\0')
        return IG_OK;
    if (s[0] == '[')
        return header(r, s);
    return key_value(r, s);
}

enum ig_status
ig_ini_parse(const char *name, const char *text, size_t len,
             const struct ig_ini_handler *h, void *ctx, struct ig_err *err)
{
    struct ini_reader r = {name, h, ctx, err, 0};
    const char *nl;
    enum ig_status st;
    size_t pos = 0, n;

    while (pos < len) {
        nl = memchr(text + pos, '\n', len - pos);
        n = nl != NULL ? (size_t)(nl - (text + pos)) : len - pos;
        r.line++;
        if ((st = one_line(&r, text + pos, n)) != IG_OK)
            return st;
        pos += n + 1;
    }
    return IG_OK;
}

enum ig_status
ig_ini_read(const char *path, const struct ig_ini_handler *h, void *ctx,
            struct ig_err *err)
{
    enum ig_status st;
    char *text = NULL;
    size_t len = 0;

    /* ig_ini.h promises IG_ERR_IO for a file that cannot be opened, a
       missing one included. */
    st = ig_file_read(path, IG_INI_FILE_MAX, &text, &len, err);
    if (st == IG_ERR_NOTFOUND)
        st = IG_ERR_IO;
    if (st != IG_OK)
        return st;
    st = ig_ini_parse(path, text, len, h, ctx, err);
    free(text);
    return st;
}

int
ig_ini_verror(struct ig_err *err, const char *path, int line, const char *fmt,
              va_list ap)
{
    char msg[IG_ERR_MSGMAX];

    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    if (line > 0)
        (void)ig_err_set(err, IG_ERR_INVALID, "%s:%d: %s", path, line, msg);
    else
        (void)ig_err_set(err, IG_ERR_INVALID, "%s: %s", path, msg);
    return -1;
}
