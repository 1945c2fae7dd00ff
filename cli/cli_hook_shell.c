/*
 * cli_hook_shell.c - a Bash tool call as the argv a policy can judge
 * (cli_hook.h).
 *
 * A policy that reads params.argv must see what will run. For a simple
 * command - words, quotes, backslashes - the words after quote removal are
 * exactly the argv the shell passes to exec, so they are given as such.
 * Anything more (pipes, lists, redirections, substitutions, expansions,
 * globs, assignments, reserved words, comments, unterminated quotes) makes
 * the command a shell program whose argv this reader cannot know; it is
 * given honestly as ["sh", "-c", COMMAND], which policies inspect as a
 * script (policies/bundle/shell.lua looks inside `sh -c` strings). The
 * reader errs towards the program form: a false "program" costs an
 * escalation, a false "argv" would hide what runs.
 *
 * One pass over the bytes; words are built in one buffer the size of the
 * input (a word is never longer than the command).
 */
#include "cli_hook.h"

#include <stdlib.h>
#include <string.h>

/* The scanner's state for one command. */
struct split {
    const char *s;
    size_t len, i;
    char *word; /* the word being built, len + 1 bytes */
    size_t wlen;
    int in_word; /* a word started (maybe empty: '') */
    size_t nwords;
    json_t *argv;
};

enum scan { SCAN_OK, SCAN_PROGRAM, SCAN_NUL, SCAN_NOMEM, SCAN_UTF8 };

/* Bytes that are shell syntax wherever they stand unquoted. */
static int
is_special(unsigned char c)
{
    return strchr(";&|<>()$`*?[]{}!\n", c) != NULL && c != '\0';
}

/* First words that are shell syntax, or builtins that run other code or
   change the shell the later commands run in (Claude Code keeps one shell
   for a session): quoting does not make those safe, so it is ignored. */
static int
is_shell_word(const char *w, size_t n)
{
    static const char *const words[] = {
        "if",     "then",    "else",    "elif",    "fi",       "case",
        "esac",   "for",     "while",   "until",   "do",       "done",
        "in",     "time",    "select",  "coproc",  "function", ".",
        "source", "eval",    "exec",    "command", "builtin",  "trap",
        "alias",  "unalias", "set",     "unset",   "shopt",    "enable",
        "export", "declare", "typeset", "local",   "readonly", "hash",
        "cd",     "pushd",   "popd",    "ulimit",  "umask"};
    size_t i;

    for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strlen(words[i]) == n && memcmp(words[i], w, n) == 0)
            return 1;
    return 0;
}

/* 1 when w (n bytes) is a shell NAME: [A-Za-z_][A-Za-z0-9_]*. */
static int
is_name(const char *w, size_t n)
{
    size_t i;

    if (n == 0)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        int alpha =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';

        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return 0;
    }
    return 1;
}

static enum scan
end_word(struct split *p)
{
    json_t *w;

    if (!p->in_word)
        return SCAN_OK;
    if (p->nwords == 0 && is_shell_word(p->word, p->wlen))
        return SCAN_PROGRAM;
    w = json_stringn(p->word, p->wlen);
    if (w == NULL)
        return SCAN_UTF8; /* or out of memory; both refuse */
    if (json_array_append_new(p->argv, w) != 0)
        return SCAN_NOMEM;
    p->nwords++;
    p->wlen = 0;
    p->in_word = 0;
    return SCAN_OK;
}

static void
put(struct split *p, char c)
{
    p->word[p->wlen++] = c;
    p->in_word = 1;
}

/* '...' starting at p->i: everything up to the next quote, literally. */
static enum scan
single_quoted(struct split *p)
{
    const char *end = memchr(p->s + p->i + 1, '\'', p->len - p->i - 1);
    size_t j;

    if (end == NULL)
        return SCAN_PROGRAM; /* unterminated */
    for (j = p->i + 1; p->s + j < end; j++)
        put(p, p->s[j]);
    p->in_word = 1;
    p->i = (size_t)(end - p->s) + 1;
    return SCAN_OK;
}

/* "..." starting at p->i: $ and ` still expand (a program); a backslash
   escapes only $ ` " \ (before a newline it joins lines: a program). */
static enum scan
double_quoted(struct split *p)
{
    size_t j = p->i + 1;
    char c;

    for (;;) {
        if (j >= p->len)
            return SCAN_PROGRAM; /* unterminated */
        c = p->s[j];
        if (c == '"')
            break;
        if (c == '$' || c == '`')
            return SCAN_PROGRAM;
        if (c == '\\' && j + 1 < p->len && strchr("$`\"\\\n", p->s[j + 1])) {
            if (p->s[j + 1] == '\n')
                return SCAN_PROGRAM;
            put(p, p->s[j + 1]);
            j += 2;
            continue;
        }
        put(p, c);
        j++;
    }
    p->in_word = 1;
    p->i = j + 1;
    return SCAN_OK;
}

/* One unquoted byte at p->i. */
static enum scan
unquoted(struct split *p)
{
    unsigned char c = (unsigned char)p->s[p->i];

    if (c == ' ' || c == '\t') {
        p->i++;
        return end_word(p);
    }
    if (is_special(c) || c < 0x20 || c == 0x7f)
        return SCAN_PROGRAM;
    if (!p->in_word && (c == '#' || c == '~'))
        return SCAN_PROGRAM; /* a comment; a home directory */
    if (c == '=' && p->nwords == 0 && is_name(p->word, p->wlen))
        return SCAN_PROGRAM; /* NAME=value before the command */
    if (c == '\\') {
        if (p->i + 1 >= p->len || p->s[p->i + 1] == '\n')
            return SCAN_PROGRAM; /* dangling, or a line continuation */
        put(p, p->s[p->i + 1]);
        p->i += 2;
        return SCAN_OK;
    }
    if (c == '\'')
        return single_quoted(p);
    if (c == '"')
        return double_quoted(p);
    put(p, (char)c);
    p->i++;
    return SCAN_OK;
}

static enum scan
scan(struct split *p)
{
    enum scan r = SCAN_OK;

    if (memchr(p->s, '\0', p->len) != NULL)
        return SCAN_NUL;
    while (r == SCAN_OK && p->i < p->len)
        r = unquoted(p);
    if (r == SCAN_OK)
        r = end_word(p);
    return r;
}

/* ["sh", "-c", cmd], or NULL (bad UTF-8 or out of memory). */
static json_t *
program_form(const char *cmd, size_t len)
{
    json_t *raw = json_stringn(cmd, len);

    if (raw == NULL)
        return NULL;
    /* "o" steals raw */
    return json_pack("[s, s, o]", "sh", "-c", raw);
}

enum ig_status
cli_hook_shell_split(const char *cmd, size_t len, json_t **argv, int *program,
                     struct ig_err *err)
{
    struct split p;
    enum ig_status st = IG_OK;
    enum scan r;

    *argv = NULL;
    *program = 0;
    memset(&p, 0, sizeof(p));
    p.s = cmd;
    p.len = len;
    p.word = malloc(len + 1);
    p.argv = json_array();
    if (p.word == NULL || p.argv == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    r = scan(&p);
    if (r == SCAN_NUL) {
        st = ig_err_set(err, IG_ERR_INVALID, "the command holds a NUL byte");
    } else if (r == SCAN_NOMEM) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    } else if (r == SCAN_UTF8) {
        st = ig_err_set(err, IG_ERR_INVALID,
                        "the command is not UTF-8 (or out of memory)");
    } else if (r == SCAN_PROGRAM) {
        *program = 1;
        if ((*argv = program_form(cmd, len)) == NULL)
            st = ig_err_set(err, IG_ERR_INVALID,
                            "the command is not UTF-8 (or out of memory)");
    } else {
        *argv = p.argv;
        p.argv = NULL;
    }
out:
    json_decref(p.argv);
    free(p.word);
    return st;
}

enum ig_status
cli_hook_map_bash(json_t *body, const char *tool, const json_t *input,
                  const char *cwd, struct ig_err *err)
{
    const json_t *cmd = json_object_get(input, "command");
    json_t *argv = NULL, *params;
    enum ig_status st;
    int program;

    (void)tool;
    if (!json_is_string(cmd))
        return ig_err_set(err, IG_ERR_INVALID,
                          "Bash: tool_input.command is not a string");
    st = cli_hook_shell_split(json_string_value(cmd), json_string_length(cmd),
                              &argv, &program, err);
    if (st != IG_OK)
        return st;
    if (json_array_size(argv) == 0) {
        json_decref(argv);
        return ig_err_set(err, IG_ERR_INVALID, "Bash: the command is empty");
    }
    /* "o" steals argv; "O" takes a new reference to the command */
    params = json_pack("{s:o, s:O}", "argv", argv, "command", cmd);
    return cli_hook_set_intent(
        body, "shell.exec",
        json_string(cwd != NULL && cwd[0] != '\0' ? cwd : "shell"), params,
        err);
}
