/*
 * cli_util.c - helpers every subcommand uses: error lines, --help
 * detection, and reading a capped input from a file or stdin.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    (void)fprintf(stderr, "intentgate %s: ", cmd);
    va_start(ap, fmt);
    (void)vfprintf(stderr, fmt, ap);
    va_end(ap);
    (void)fputc('\n', stderr);
}

int
cli_wants_help(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

const char *
cli_input_name(const char *path)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return "<stdin>";
    return path;
}

enum ig_status
cli_read_input(const char *path, struct ig_buf *out, struct ig_err *err)
{
    int use_stdin = path == NULL || strcmp(path, "-") == 0;
    FILE *f = use_stdin ? stdin : fopen(path, "rb");
    enum ig_status st = IG_OK;
    char chunk[8192];
    size_t n;

    if (f == NULL)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", path,
                          strerror(errno));
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        st = ig_buf_add(out, chunk, n);
        if (st == IG_ERR_LIMIT) {
            ig_err_set(err, st, "%s is larger than %zu bytes",
                       cli_input_name(path), out->max);
            goto out;
        }
        if (st != IG_OK) {
            ig_err_set(err, st, "reading %s: %s", cli_input_name(path),
                       ig_strerror(st));
            goto out;
        }
    }
    if (ferror(f))
        st = ig_err_set(err, IG_ERR_IO, "cannot read %s: %s",
                        cli_input_name(path), strerror(errno));
out:
    if (!use_stdin)
        (void)fclose(f);
    return st;
}

int
cli_require_env(const char *cmd, const char *const *names, const char **vals,
                size_t n)
{
    char missing[256] = "";
    size_t i, used = 0;
    int w;

    for (i = 0; i < n; i++) {
        vals[i] = getenv(names[i]);
        if (vals[i] != NULL && vals[i][0] != '\0')
            continue;
        w = snprintf(missing + used, sizeof(missing) - used, "%s%s",
                     used ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= sizeof(missing) - used)
            break; /* enough names to say what is wrong */
        used += (size_t)w;
    }
    if (used == 0)
        return 0;
    cli_error(cmd, "%s not set (see `intentgate %s --help`)", missing, cmd);
    return -1;
}
