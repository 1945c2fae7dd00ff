/*
 * exec_cli_secret.c - `intentgate-executor secret`: make a secrets key,
 * set a secret from standard input, list the names in a secrets file.
 *
 * The value read for `set` lives only in a sodium_malloc'd buffer that is
 * wiped; it is read with read(2) rather than stdio so no library buffer
 * keeps a copy, and terminal echo is off while it is typed.
 */
#include "exec_cli.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "exec_secrets.h"
#include "ig_key.h"

#define PROG "intentgate-executor"
#define USAGE                                                                  \
    "usage: " PROG " secret keygen --out KEYFILE | set NAME --file SECRETS "   \
    "[--key KEYFILE] | list --file SECRETS [--key KEYFILE]\n"
/* Room for the largest value, its newline and one byte to see more. */
#define VALUE_CAP (EXEC_SECRET_MAX_BYTES + 2)

struct opts {
    const char *name, *file, *key, *out;
};

/* Parse argv[2..]: options and at most one positional (NAME). 0 or -1. */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
    const char **slot;
    int i;

    memset(o, 0, sizeof(*o));
    for (i = 2; i < argc; i++) {
        slot = NULL;
        if (strcmp(argv[i], "--file") == 0)
            slot = &o->file;
        else if (strcmp(argv[i], "--key") == 0)
            slot = &o->key;
        else if (strcmp(argv[i], "--out") == 0)
            slot = &o->out;
        if (slot != NULL) {
            if (i + 1 >= argc || *slot != NULL)
                return -1;
            *slot = argv[++i];
        } else if (argv[i][0] == '-' || o->name != NULL) {
            return -1;
        } else {
            o->name = argv[i];
        }
    }
    return 0;
}

static int
fail(const char *what, const struct ig_err *err)
{
    (void)fprintf(stderr, PROG ": secret %s: %s\n", what, err->msg);
    return 1;
}

/* Read fd 0 into buf (VALUE_CAP); on a terminal, one line with no echo. */
static int
read_value(unsigned char *buf, size_t *len)
{
    struct termios old, quiet;
    int tty = isatty(STDIN_FILENO), restore = 0, rc = 0;
    size_t n = 0;
    ssize_t got;

    if (tty) {
        (void)fputs("value (not echoed): ", stderr);
        if (tcgetattr(STDIN_FILENO, &old) == 0) {
            quiet = old;
            quiet.c_lflag &= ~(tcflag_t)ECHO;
            restore = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
        }
    }
    while (n < VALUE_CAP) {
        got = read(STDIN_FILENO, buf + n, VALUE_CAP - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            rc = got < 0 ? -1 : 0;
            break;
        }
        n += (size_t)got;
        if (tty && buf[n - 1] == '\n')
            break;
    }
    if (restore)
        (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
    if (tty)
        (void)fputc('\n', stderr);
    *len = n;
    return rc;
}

static int
cmd_set(const struct opts *o)
{
    struct exec_secrets *s = NULL;
    struct ig_err err;
    unsigned char *buf;
    size_t len = 0;
    int rc = 1;

    if (!exec_secret_name_valid(o->name)) {
        (void)fprintf(stderr, PROG ": secret set: a name must match "
                                   "^[a-z0-9][a-z0-9._-]{0,63}$\n");
        return 1;
    }
    buf = sodium_malloc(VALUE_CAP);
    if (buf == NULL) {
        (void)fputs(PROG ": out of memory\n", stderr);
        return 1;
    }
    if (exec_secrets_open(o->file, o->key, &s, &err) != IG_OK) {
        rc = fail("set", &err);
        goto out;
    }
    if (read_value(buf, &len) != 0) {
        (void)fprintf(stderr, PROG ": secret set: cannot read stdin: %s\n",
                      strerror(errno));
        goto out;
    }
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len > EXEC_SECRET_MAX_BYTES) {
        (void)fprintf(stderr, PROG ": secret set: value over %d bytes\n",
                      EXEC_SECRET_MAX_BYTES);
        goto out;
    }
    if (exec_secrets_set(s, o->name, buf, len, &err) != IG_OK) {
        rc = fail("set", &err);
        goto out;
    }
    (void)printf("set %s in %s\n", o->name, o->file);
    rc = 0;
out:
    sodium_free(buf); /* wipes */
    exec_secrets_free(s);
    return rc;
}

static int
cmd_list(const struct opts *o)
{
    struct exec_secrets *s;
    struct ig_err err;
    size_t i;

    if (exec_secrets_open(o->file, o->key, &s, &err) != IG_OK)
        return fail("list", &err);
    for (i = 0; i < exec_secrets_count(s); i++)
        (void)printf("%s\n", exec_secrets_name(s, i));
    exec_secrets_free(s);
    return fflush(stdout) == 0 ? 0 : 1;
}

int
exec_cli_secret(int argc, char **argv)
{
    struct ig_err err;
    struct opts o;
    const char *sub = argc >= 2 ? argv[1] : "";

    if (parse_opts(argc, argv, &o) != 0)
        goto usage;
    if (strcmp(sub, "keygen") == 0) {
        if (o.out == NULL || o.name || o.file || o.key)
            goto usage;
    } else if (strcmp(sub, "set") == 0) {
        if (o.name == NULL || o.file == NULL || o.out)
            goto usage;
    } else if (strcmp(sub, "list") == 0) {
        if (o.file == NULL || o.name || o.out)
            goto usage;
    } else {
        goto usage;
    }
    if (ig_crypto_init() != IG_OK) {
        (void)fputs(PROG ": cannot initialise libsodium\n", stderr);
        return 1;
    }
    if (strcmp(sub, "set") == 0)
        return cmd_set(&o);
    if (strcmp(sub, "list") == 0)
        return cmd_list(&o);
    if (exec_secrets_keygen(o.out, &err) != IG_OK)
        return fail("keygen", &err);
    return 0;
usage:
    (void)fputs(USAGE, stderr);
    return 2;
}
