/*
 * fuzz_ini.c - libFuzzer target for the INI reader (core/ig_ini.c) both
 * config files go through.
 *
 * The input is a config file. Checked: every callback sees a line number
 * that grows and stays within the input's lines; a key is non-empty and
 * holds no space; no string handed over holds a control character but
 * tab, or starts or ends with blanks; a section's kind is non-empty and
 * its id, when there is one, non-empty; a key "stop" makes the reader
 * return the callback's own status; an error names the input and a line
 * within it. Any broken property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_ini.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    int last, lines;
};

static void
check(int ok, const char *what)
{
    if (ok)
        return;
    (void)fprintf(stderr, "fuzz_ini: %s\n", what);
    abort();
}

static void
check_text(const char *s, int may_be_empty)
{
    size_t i, n = strlen(s);

    check(may_be_empty || n > 0, "an empty string handed over");
    for (i = 0; i < n; i++)
        check((unsigned char)s[i] >= 0x20 || s[i] == '\t',
              "a control character handed over");
    check(n == 0 || (s[0] != ' ' && s[0] != '\t' && s[n - 1] != ' ' &&
                     s[n - 1] != '\t'),
          "an untrimmed string handed over");
}

static void
check_line(struct seen *s, int line)
{
    check(line > s->last && line <= s->lines, "a line number out of order");
    s->last = line;
}

static enum ig_status
on_section(void *ctx, int line, const char *kind, const char *id)
{
    check_line(ctx, line);
    check_text(kind, 0);
    if (id != NULL)
        check_text(id, 0);
    return IG_OK;
}

static enum ig_status
on_key(void *ctx, int line, const char *key, const char *value)
{
    check_line(ctx, line);
    check_text(key, 0);
    check(strpbrk(key, " \t") == NULL, "a key with a space");
    check_text(value, 1);
    return strcmp(key, "stop") == 0 ? IG_ERR_NOTFOUND : IG_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct ig_ini_handler h = {on_section, on_key};
    static const struct ig_ini_handler flat = {NULL, on_key};
    struct seen s = {0, 1};
    struct ig_err err;
    enum ig_status st;
    size_t i;

    for (i = 0; i < size; i++)
        s.lines += data[i] == '\n';
    memset(&err, 0, sizeof(err));
    st = ig_ini_parse("fuzz", (const char *)data, size,
                      size > 0 && data[0] == 'F' ? &flat : &h, &s, &err);
    if (st == IG_ERR_NOTFOUND)
        return 0; /* a "stop" key: the callback's own status came back */
    check(st == IG_OK || st == IG_ERR_INVALID || st == IG_ERR_LIMIT,
          "an unexpected status");
    if (st != IG_OK) {
        check(strncmp(err.msg, "fuzz:", 5) == 0, "an error without the name");
        check(err.line > s.last && err.line <= s.lines,
              "an error on a line out of order");
    }
    return 0;
}
