/*
 * cmd_approver.c - `intentgate approver add ID --groups a,b [--name NAME]
 * [--slack-user UXXXX]`: the config section for a new approver.
 *
 * Checks every argument first, then reads the password: from a terminal
 * twice with echo off (termios; a signal restores the terminal before the
 * process dies of it), otherwise one line from standard input, for
 * scripts. It is read with read(2), a byte at a time, into sodium_malloc'd
 * memory, so no stdio buffer keeps a copy, and wiped when done. The
 * argon2id hash (appr_password_hash) goes into the printed section; the
 * password itself never leaves the process.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "appr_password.h"
#include "ig_key.h"

#define CMD "approver"
#define PW_BUF (APPR_PASSWORD_MAX + 2) /* one byte more shows "too long" */

static const char approver_usage[] =
    "usage: intentgate approver add ID --groups GROUP[,GROUP...] "
    "[--name NAME]\n"
    "                               [--slack-user UXXXX]\n"
    "\n"
    "Print the configuration section for an approver, to add to the PDP's\n"
    "intentgate.conf:\n"
    "  [approver ID]\n"
    "  name = NAME\n"
    "  groups = GROUP, GROUP\n"
    "  password_hash = $argon2id$...\n"
    "  slack_user = UXXXX\n"
    "The password is asked twice without echo on a terminal, or read as one\n"
    "line from standard input otherwise (" IG_STR(
        IG_PASSWORD_MIN) " to " IG_STR(IG_PASSWORD_MAX) " bytes). Only its "
                                                        "argon2id\n"
                                                        "hash is printed.\n"
                                                        "  ID      letters, "
                                                        "digits and . _ : @ -, "
                                                        "starting with a "
                                                        "letter or\n"
                                                        "          digit, at "
                                                        "most " IG_STR(
                                                            IG_ID_MAX) " charac"
                                                                       "ters\n"
                                                                       "  "
                                                                       "GROUP  "
                                                                       " letter"
                                                                       "s, "
                                                                       "digits "
                                                                       "and . "
                                                                       "_ : @ "
                                                                       "-, "
                                                                       "startin"
                                                                       "g with "
                                                                       "a "
                                                                       "letter "
                                                                       "or "
                                                                       "digit\n"
                                                                       "  NAME "
                                                                       "   the "
                                                                       "name "
                                                                       "shown "
                                                                       "with "
                                                                       "the "
                                                                       "approve"
                                                                       "r's "
                                                                       "votes "
                                                                       "(defaul"
                                                                       "t: "
                                                                       "ID)\n"
                                                                       "  "
                                                                       "UXXXX  "
                                                                       " the "
                                                                       "approve"
                                                                       "r's "
                                                                       "Slack "
                                                                       "user "
                                                                       "id, "
                                                                       "for "
                                                                       "voting "
                                                                       "from "
                                                                       "Slack"
                                                                       "\n";

struct group {
    const char *name;
    size_t len;
};

struct approver_cmd {
    const char *id, *name, *slack_user;
    struct group groups[IG_APPROVER_GROUPS_MAX];
    size_t ngroups;
};

/* ---- arguments ---- */

static int
alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9');
}

/* [A-Za-z0-9][A-Za-z0-9._:@-]* of len bytes, 1..max. */
static int
valid_word(const char *s, size_t len, size_t max)
{
    size_t i;

    if (len == 0 || len > max || !alnum(s[0]))
        return 0;
    for (i = 1; i < len; i++)
        if (!alnum(s[i]) && strchr("._:@-", s[i]) == NULL)
            return 0;
    return 1;
}

/* Split --groups at commas (spaces around names allowed) into c->groups;
   0, or -1 after one line saying why. */
static int
parse_groups(const char *list, struct approver_cmd *c)
{
    const char *p = list, *end, *a, *b;
    size_t i, n;

    for (;;) {
        end = p + strcspn(p, ",");
        for (a = p; a < end && *a == ' '; a++)
            ;
        for (b = end; b > a && b[-1] == ' '; b--)
            ;
        n = (size_t)(b - a);
        if (!valid_word(a, n, IG_APPROVER_GROUP_MAX)) {
            cli_error(CMD,
                      "add: --groups: '%.*s' is not a group name (letters, "
                      "digits, . _ : @ -, at most %d)",
                      (int)(end - p), p, IG_APPROVER_GROUP_MAX);
            return -1;
        }
        for (i = 0; i < c->ngroups; i++)
            if (c->groups[i].len == n && memcmp(c->groups[i].name, a, n) == 0) {
                cli_error(CMD, "add: --groups names %.*s twice", (int)n, a);
                return -1;
            }
        if (c->ngroups == IG_APPROVER_GROUPS_MAX) {
            cli_error(CMD, "add: more than %d groups", IG_APPROVER_GROUPS_MAX);
            return -1;
        }
        c->groups[c->ngroups].name = a;
        c->groups[c->ngroups++].len = n;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

/* A display name: 1..IG_APPROVER_NAME_MAX bytes of UTF-8 on one line, no
   control characters, no spaces at either end (the config reader trims them).
 */
static int
valid_name(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > IG_APPROVER_NAME_MAX || s[0] == ' ' || s[n - 1] == ' ')
        return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}

/* A Slack user id: U or W, then upper-case letters and digits. */
static int
valid_slack_user(const char *s)
{
    size_t i, n = strlen(s);

    if (n < 3 || n > IG_SLACK_USER_ID_MAX || (s[0] != 'U' && s[0] != 'W'))
        return 0;
    for (i = 1; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

/* An option's value: "--opt VALUE" or "--opt=VALUE"; NULL when argv[*i]
   is not opt. */
static const char *
option(int argc, char **argv, int *i, const char *opt)
{
    size_t n = strlen(opt);

    if (strcmp(argv[*i], opt) == 0 && *i + 1 < argc)
        return argv[++*i];
    if (strncmp(argv[*i], opt, n) == 0 && argv[*i][n] == '=')
        return argv[*i] + n + 1;
    return NULL;
}

static int
parse_args(int argc, char **argv, struct approver_cmd *c)
{
    const char *groups = NULL, *v;
    int i;

    if (argc < 2 || strcmp(argv[1], "add") != 0) {
        cli_error(CMD, "expected `approver add ID --groups ...` (see --help)");
        return -1;
    }
    for (i = 2; i < argc; i++) {
        if ((v = option(argc, argv, &i, "--groups")) != NULL && !groups)
            groups = v;
        else if ((v = option(argc, argv, &i, "--name")) != NULL && !c->name)
            c->name = v;
        else if ((v = option(argc, argv, &i, "--slack-user")) != NULL &&
                 !c->slack_user)
            c->slack_user = v;
        else if (argv[i][0] != '-' && c->id == NULL)
            c->id = argv[i];
        else {
            cli_error(CMD, "add: unexpected argument %s (see --help)", argv[i]);
            return -1;
        }
    }
    if (c->id == NULL || groups == NULL) {
        cli_error(CMD, "add: needs an ID and --groups (see --help)");
        return -1;
    }
    if (!valid_word(c->id, strlen(c->id), IG_ID_MAX)) {
        cli_error(CMD,
                  "add: the ID must be letters, digits and . _ : @ -, "
                  "starting with a letter or digit, at most %d",
                  IG_ID_MAX);
        return -1;
    }
    if (c->name != NULL && !valid_name(c->name)) {
        cli_error(CMD,
                  "add: --name must be 1 to %d bytes on one line, "
                  "without control characters or spaces at the ends",
                  IG_APPROVER_NAME_MAX);
        return -1;
    }
    if (c->slack_user != NULL && !valid_slack_user(c->slack_user)) {
        cli_error(CMD, "add: --slack-user must be a Slack user id (U or W "
                       "and capital letters or digits)");
        return -1;
    }
    return parse_groups(groups, c);
}

/* ---- the password ---- */

static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
    got_signal = sig;
}

enum line_status { LINE_OK, LINE_LONG, LINE_EOF, LINE_ERROR };

/*
 * Read one line from fd into buf (PW_BUF bytes) without its newline (nor a
 * CR before it); bytes past the buffer are read and dropped (LINE_LONG).
 * LINE_EOF when the input ended before any byte, LINE_ERROR on a read
 * error or a signal.
 */
static enum line_status
read_line(int fd, char *buf, size_t *len)
{
    size_t n = 0;
    int over = 0, any = 0;
    ssize_t r;
    char ch;

    for (;;) {
        r = read(fd, &ch, 1);
        if (r < 0 && errno == EINTR && !got_signal)
            continue;
        if (r < 0)
            return LINE_ERROR;
        if (r == 0 || ch == '\n')
            break;
        any = 1;
        if (n + 1 < PW_BUF)
            buf[n++] = ch;
        else
            over = 1;
    }
    if (r == 0 && !any)
        return LINE_EOF;
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    *len = n;
    sodium_memzero(&ch, sizeof(ch));
    return over ? LINE_LONG : LINE_OK;
}

/* Prompt on stderr and read a line from the terminal on fd with echo
   off; the terminal is restored whatever happens. */
static enum line_status
read_quiet(int fd, const char *prompt, char *buf, size_t *len)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa, old[sizeof(sigs) / sizeof(sigs[0])];
    struct termios saved, quiet;
    enum line_status ls;
    size_t i;

    if (tcgetattr(fd, &saved) != 0)
        return LINE_ERROR;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: read() returns EINTR */
    (void)sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        (void)sigaction(sigs[i], &sa, &old[i]);
    quiet = saved;
    quiet.c_lflag &= ~(tcflag_t)ECHO;
    quiet.c_lflag |= ECHONL;
    (void)fputs(prompt, stderr);
    (void)fflush(stderr);
    if (tcsetattr(fd, TCSAFLUSH, &quiet) != 0)
        ls = LINE_ERROR;
    else
        ls = read_line(fd, buf, len);
    (void)tcsetattr(fd, TCSAFLUSH, &saved);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        (void)sigaction(sigs[i], &old[i], NULL);
    return ls;
}

/* Read the password into pw (PW_BUF bytes, sodium_malloc'd by the
   caller); 0, or an exit status after one line saying why. */
static int
read_password(const struct approver_cmd *c, char *pw, size_t *len)
{
    int tty = isatty(STDIN_FILENO), rc = CLI_EXIT_USAGE;
    char *again = NULL;
    enum line_status ls;
    char prompt[128];
    size_t len2 = 0;

    if (!tty) {
        ls = read_line(STDIN_FILENO, pw, len);
    } else {
        (void)snprintf(prompt, sizeof(prompt), "Password for %s: ", c->id);
        ls = read_quiet(STDIN_FILENO, prompt, pw, len);
    }
    if (ls == LINE_OK && tty) {
        if ((again = sodium_malloc(PW_BUF)) == NULL) {
            cli_error(CMD, "out of memory");
            return CLI_EXIT_FAIL;
        }
        ls = read_quiet(STDIN_FILENO, "Repeat the password: ", again, &len2);
    }
    if (got_signal) {
        rc = -1; /* the caller wipes, then dies of the signal */
    } else if (ls == LINE_EOF) {
        cli_error(CMD, "add: no password on standard input");
    } else if (ls == LINE_ERROR) {
        cli_error(CMD, "add: cannot read the password: %s", strerror(errno));
        rc = CLI_EXIT_FAIL;
    } else if (ls == LINE_LONG || *len > APPR_PASSWORD_MAX) {
        cli_error(CMD, "add: the password is longer than %d bytes",
                  APPR_PASSWORD_MAX);
    } else if (*len < APPR_PASSWORD_MIN) {
        cli_error(CMD, "add: the password is shorter than %d bytes",
                  APPR_PASSWORD_MIN);
    } else if (again != NULL &&
               (len2 != *len || sodium_memcmp(pw, again, *len) != 0)) {
        cli_error(CMD, "add: the passwords do not match");
    } else {
        rc = 0;
    }
    if (again != NULL)
        sodium_free(again);
    return rc;
}

/* ---- the section ---- */

static int
print_section(const struct approver_cmd *c, const char *hash)
{
    size_t i;
    int bad = 0;

    bad |= printf("[approver %s]\nname = %s\ngroups = ", c->id,
                  c->name ? c->name : c->id) < 0;
    for (i = 0; i < c->ngroups; i++)
        bad |= printf("%s%.*s", i ? ", " : "", (int)c->groups[i].len,
                      c->groups[i].name) < 0;
    bad |= printf("\npassword_hash = %s\n", hash) < 0;
    if (c->slack_user != NULL)
        bad |= printf("slack_user = %s\n", c->slack_user) < 0;
    if (bad || fflush(stdout) != 0) {
        cli_error(CMD, "cannot write to standard output");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int
cli_approver(int argc, char **argv)
{
    struct approver_cmd c;
    char hash[APPR_HASH_MAX], *pw = NULL;
    size_t len = 0;
    int rc;

    memset(&c, 0, sizeof(c));
    if (cli_wants_help(argc, argv)) {
        (void)fputs(approver_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (parse_args(argc, argv, &c) != 0)
        return CLI_EXIT_USAGE;
    if (ig_crypto_init() != IG_OK) {
        cli_error(CMD, "cannot initialize libsodium");
        return CLI_EXIT_FAIL;
    }
    if ((pw = sodium_malloc(PW_BUF)) == NULL) {
        cli_error(CMD, "out of memory");
        return CLI_EXIT_FAIL;
    }
    rc = read_password(&c, pw, &len);
    if (rc == 0) {
        if (appr_password_hash(pw, len, hash) != 0) {
            cli_error(CMD, "add: cannot hash the password: out of memory");
            rc = CLI_EXIT_FAIL;
        } else {
            rc = print_section(&c, hash);
        }
    }
    sodium_free(pw); /* wipes */
    if (got_signal) {
        (void)signal(got_signal, SIG_DFL);
        (void)raise(got_signal);
        rc = CLI_EXIT_FAIL;
    }
    return rc;
}
