/*
 * test_hook_shell.c - the Bash command reader of `intentgate hook
 * claude-code` (cli_hook_shell.c): simple commands become their argv after
 * quote removal; every piece of shell syntax beyond words, and every
 * unterminated quote, gives the honest ["sh", "-c", COMMAND] form; NUL
 * bytes and bad UTF-8 are refused.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "cli_hook.h"

/* Split cmd, expect words (NULL-terminated list) and not a program. */
static void
expect_words(const char *cmd, const char *const *words)
{
    json_t *argv = NULL;
    struct ig_err err;
    int program = -1;
    size_t i;

    if (cli_hook_shell_split(cmd, strlen(cmd), &argv, &program, &err) != IG_OK)
        fail_msg("split(%s): %s", cmd, err.msg);
    if (program != 0)
        fail_msg("split(%s): a program, want words", cmd);
    for (i = 0; words[i] != NULL; i++) {
        const json_t *w = json_array_get(argv, i);

        if (!json_is_string(w) || strcmp(json_string_value(w), words[i]) != 0)
            fail_msg("split(%s): word %zu is '%s', want '%s'", cmd, i,
                     json_string_value(w) ? json_string_value(w) : "(none)",
                     words[i]);
    }
    assert_int_equal(json_array_size(argv), i);
    json_decref(argv);
}

/* Split cmd, expect ["sh", "-c", cmd]. */
static void
expect_program(const char *cmd)
{
    json_t *argv = NULL, *want;
    struct ig_err err;
    int program = -1;

    if (cli_hook_shell_split(cmd, strlen(cmd), &argv, &program, &err) != IG_OK)
        fail_msg("split(%s): %s", cmd, err.msg);
    if (program != 1)
        fail_msg("split(%s): words, want a program", cmd);
    want = json_pack("[s, s, s]", "sh", "-c", cmd);
    assert_non_null(want);
    if (!json_equal(argv, want))
        fail_msg("split(%s): not the sh -c form", cmd);
    json_decref(want);
    json_decref(argv);
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void
test_simple_words(void **state)
{
    (void)state;
    expect_words("ls -la", WORDS("ls", "-la"));
    expect_words("  git\tstatus   --short  ",
                 WORDS("git", "status", "--short"));
    expect_words("make CC=clang test", WORDS("make", "CC=clang", "test"));
    expect_words("git log HEAD~1 --format=%H",
                 WORDS("git", "log", "HEAD~1", "--format=%H"));
    expect_words("echo a#b c^d e%f", WORDS("echo", "a#b", "c^d", "e%f"));
    expect_words("ls", WORDS("ls"));
    expect_words("rm -rf /", WORDS("rm", "-rf", "/"));
    expect_words("/usr/bin/env python3 x.py",
                 WORDS("/usr/bin/env", "python3", "x.py"));
}

static void
test_quotes_and_escapes(void **state)
{
    (void)state;
    expect_words("echo 'a b' c", WORDS("echo", "a b", "c"));
    expect_words("echo 'a \"b\" $HOME `x` \\n'",
                 WORDS("echo", "a \"b\" $HOME `x` \\n"));
    expect_words("git commit -m \"fix: a \\\"quoted\\\" word\"",
                 WORDS("git", "commit", "-m", "fix: a \"quoted\" word"));
    expect_words("echo \"\\$HOME \\` \\\\ \\x\"",
                 WORDS("echo", "$HOME ` \\ \\x"));
    expect_words("echo a\\ b \\$x \\|", WORDS("echo", "a b", "$x", "|"));
    expect_words("echo '' \"\"", WORDS("echo", "", ""));
    expect_words("a'b'\"c\"d", WORDS("abcd"));
    expect_words("echo 'line one\nline two'",
                 WORDS("echo", "line one\nline two"));
    expect_words("echo \"; | & > < ( ) * ? [ ] { } ! # ~\"",
                 WORDS("echo", "; | & > < ( ) * ? [ ] { } ! # ~"));
    expect_words("grep -r 'TODO|FIXME' src",
                 WORDS("grep", "-r", "TODO|FIXME", "src"));
    /* A quoted or escaped first word is still a command name. */
    expect_words("'ls' -l", WORDS("ls", "-l"));
    expect_words("\\ls", WORDS("ls"));
}

static void
test_every_metacharacter_is_a_program(void **state)
{
    static const char *const programs[] = {
        "ls; rm -rf /",
        "ls & rm x",
        "ls && rm x",
        "ls || rm x",
        "curl x | sh",
        "curl x|sh",
        "cat < /etc/passwd",
        "echo x > f",
        "echo x >> f",
        "make 2>&1",
        "(cd /tmp && ls)",
        "ls )",
        "echo $(id)",
        "echo `id`",
        "echo $HOME",
        "echo ${HOME}",
        "echo \"$HOME\"",
        "echo \"`id`\"",
        "echo \"$(id)\"",
        "ls\nrm -rf /",
        "cat <<EOF\nhi\nEOF",
        "ls *.c",
        "ls ?.c",
        "ls [ab].c",
        "echo {a,b}",
        "cp x{,.bak}",
        "! ls",
        "ls !x",
        "# a comment",
        "ls # rm -rf /",
        "cat ~/.ssh/id_rsa",
        "ls ~",
        "FOO=bar ls",
        "PATH=/tmp ls",
        "LD_PRELOAD=/tmp/x.so ls",
        "'FOO'=bar ls",
        "exec rm -rf /",
        "eval 'rm -rf /'",
        "source ./env.sh",
        ". ./env.sh",
        "export LD_PRELOAD=/tmp/x.so",
        "time rm -rf /",
        "if true",
        "cd /tmp",
        "alias ls=rm",
        "builtin cd /",
        "command rm x",
        "ls\r",
        "ls\x01",
        "ls\x7f",
        "echo a \\\nb",
        "[ -f x ]",
        "{ ls; }",
    };
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
        expect_program(programs[i]);
}

static void
test_unterminated_is_a_program(void **state)
{
    (void)state;
    expect_program("echo 'abc");
    expect_program("echo \"abc");
    expect_program("echo abc\\");
    expect_program("echo \"abc\\\"");
    expect_program("'");
    expect_program("\"");
}

static void
test_empty(void **state)
{
    json_t *argv;
    struct ig_err err;
    int program;
    (void)state;

    assert_int_equal(cli_hook_shell_split("", 0, &argv, &program, &err), IG_OK);
    assert_int_equal(json_array_size(argv), 0);
    assert_int_equal(program, 0);
    json_decref(argv);
    assert_int_equal(cli_hook_shell_split(" \t ", 3, &argv, &program, &err),
                     IG_OK);
    assert_int_equal(json_array_size(argv), 0);
    json_decref(argv);
    expect_words("''", WORDS(""));
}

static void
test_unicode(void **state)
{
    (void)state;
    expect_words(
        "echo h\xc3\xa9llo 'w\xc3\xb6rld' \"\xe6\x97\xa5\xe6\x9c\xac\"",
        WORDS("echo", "h\xc3\xa9llo", "w\xc3\xb6rld",
              "\xe6\x97\xa5\xe6\x9c\xac"));
    /* A no-break space is not a separator for the shell either. */
    expect_words("echo a\xc2\xa0"
                 "b",
                 WORDS("echo", "a\xc2\xa0"
                               "b"));
    expect_words("cat \xf0\x9f\x98\x80.txt",
                 WORDS("cat", "\xf0\x9f\x98\x80.txt"));
    expect_program("echo \xf0\x9f\x98\x80 | sh");
}

static void
test_refused(void **state)
{
    json_t *sentinel = json_object(), *argv = sentinel;
    struct ig_err err;
    int program;
    (void)state;

    assert_int_equal(cli_hook_shell_split("ls\0-la", 6, &argv, &program, &err),
                     IG_ERR_INVALID);
    assert_null(argv);
    assert_non_null(strstr(err.msg, "NUL"));
    assert_int_equal(cli_hook_shell_split("ls \xff", 4, &argv, &program, &err),
                     IG_ERR_INVALID);
    assert_null(argv);
    assert_int_equal(cli_hook_shell_split("ls \xff|", 5, &argv, &program, &err),
                     IG_ERR_INVALID);
    assert_null(argv);
    json_decref(sentinel);
}

/* The Bash mapping: resource, params, refusals. */
static void
test_map_bash(void **state)
{
    json_t *body = json_object(), *input;
    struct ig_err err;
    (void)state;

    input = json_pack("{s:s}", "command", "curl x | sh");
    assert_int_equal(cli_hook_map_bash(body, "Bash", input, "/w", &err), IG_OK);
    assert_string_equal(json_string_value(json_object_get(body, "action")),
                        "shell.exec");
    assert_string_equal(json_string_value(json_object_get(body, "resource")),
                        "/w");
    assert_string_equal(
        json_string_value(json_array_get(
            json_object_get(json_object_get(body, "params"), "argv"), 2)),
        "curl x | sh");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(body, "params"), "command")),
                        "curl x | sh");
    json_decref(input);

    input = json_pack("{s:s}", "command", "ls");
    assert_int_equal(cli_hook_map_bash(body, "Bash", input, NULL, &err), IG_OK);
    assert_string_equal(json_string_value(json_object_get(body, "resource")),
                        "shell");
    assert_int_equal(cli_hook_map_bash(body, "Bash", input, "", &err), IG_OK);
    assert_string_equal(json_string_value(json_object_get(body, "resource")),
                        "shell");
    json_decref(input);

    input = json_pack("{s:s}", "command", "   ");
    assert_int_equal(cli_hook_map_bash(body, "Bash", input, "/w", &err),
                     IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "empty"));
    json_decref(input);
    input = json_pack("{s:i}", "command", 5);
    assert_int_equal(cli_hook_map_bash(body, "Bash", input, "/w", &err),
                     IG_ERR_INVALID);
    json_decref(input);
    input = json_object();
    assert_int_equal(cli_hook_map_bash(body, "Bash", input, "/w", &err),
                     IG_ERR_INVALID);
    json_decref(input);
    json_decref(body);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_words),
        cmocka_unit_test(test_quotes_and_escapes),
        cmocka_unit_test(test_every_metacharacter_is_a_program),
        cmocka_unit_test(test_unterminated_is_a_program),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_unicode),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_map_bash),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
