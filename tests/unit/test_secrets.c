/*
 * test_secrets.c - the executor's secrets store: key files (mode, no
 * overwrite, the environment), set/get round trips with binary values,
 * atomic rewrites at mode 0600 that never hold plaintext, and the
 * refusals: a wrong key, a flipped byte, a line moved to another name,
 * repeated names, a wrong header, garbage. Then the `secret` CLI, driven
 * through exec_cli_secret with stdin and stdout redirected to files.
 */
#include "testutil.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_secrets.h"
#include "exec_secrets_int.h"
#include "ig_b64.h"
#include "secrets_util.h"

/* ---- keys ---- */

static void
test_keygen_mode_and_no_overwrite(void **state)
{
    struct fx *f = *state;
    struct ig_err err;
    char *a, *b;
    size_t alen, blen;

    assert_int_equal(exec_secrets_keygen(f->key, &err), IG_OK);
    assert_int_equal(file_mode(f->key), 0600);
    a = tu_read_file(f->key, &alen);
    assert_int_equal(alen, 44); /* 43 base64url characters and '\n' */
    assert_int_equal(exec_secrets_keygen(f->key, &err), IG_ERR_EXISTS);
    assert_non_null(strstr(err.msg, "refusing to overwrite"));
    b = tu_read_file(f->key, &blen);
    assert_int_equal(alen, blen);
    assert_memory_equal(a, b, alen);
    free(a);
    free(b);
}

static void
test_key_file_refusals(void **state)
{
    struct fx *f = *state;
    struct exec_secrets *s = NULL;
    struct ig_err err;

    assert_int_equal(exec_secrets_keygen(f->key, &err), IG_OK);
    assert_int_equal(chmod(f->key, 0644), 0);
    expect_open(f, IG_ERR_IO, "chmod 600");
    assert_int_equal(chmod(f->key, 0640), 0);
    expect_open(f, IG_ERR_IO, "group or others");
    /* Not a key: too short, too long, not base64url, missing. */
    write_file(f->key, "abc\n", 4, 0600);
    expect_open(f, IG_ERR_INVALID, "not a secrets key");
    write_file(f->key, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\n", 45,
               0600);
    expect_open(f, IG_ERR_INVALID, "not a secrets key");
    write_file(f->key, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+\n", 44,
               0600);
    expect_open(f, IG_ERR_INVALID, "not a secrets key");
    assert_int_equal(unlink(f->key), 0);
    expect_open(f, IG_ERR_IO, "cannot open");
    /* A FIFO must be refused, not waited on. */
    assert_int_equal(mkfifo(f->key, 0600), 0);
    expect_open(f, IG_ERR_IO, "not a regular file");
    /* A 43-character key with no newline is fine. */
    assert_int_equal(unlink(f->key), 0);
    write_file(f->key, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 43, 0600);
    assert_int_equal(exec_secrets_open(f->file, f->key, &s, &err), IG_OK);
    exec_secrets_free(s);
}

static void
test_key_from_environment(void **state)
{
    struct fx *f = *state;
    struct exec_secrets *s = open_new(f), *t = NULL;
    struct ig_err err;
    char *text;

    set_str(s, "api", "token-1");
    exec_secrets_free(s);
    /* Neither a key file nor the variable: refused. */
    assert_int_equal(exec_secrets_open(f->file, NULL, &t, &err),
                     IG_ERR_NOTFOUND);
    assert_null(t);
    assert_non_null(strstr(err.msg, EXEC_SECRETS_KEY_ENV));
    assert_int_equal(setenv(EXEC_SECRETS_KEY_ENV, "", 1), 0);
    assert_int_equal(exec_secrets_open(f->file, NULL, &t, &err),
                     IG_ERR_NOTFOUND);
    assert_int_equal(setenv(EXEC_SECRETS_KEY_ENV, "not-a-key", 1), 0);
    assert_int_equal(exec_secrets_open(f->file, NULL, &t, &err),
                     IG_ERR_INVALID);
    /* The key file's text, newline and all, works from the environment. */
    text = tu_read_file(f->key, NULL);
    assert_int_equal(setenv(EXEC_SECRETS_KEY_ENV, text, 1), 0);
    text[43] = '\0';
    sodium_memzero(text, 43);
    free(text);
    assert_int_equal(exec_secrets_open(f->file, NULL, &t, &err), IG_OK);
    assert_value(t, "api", "token-1", 7);
    exec_secrets_free(t);
}

/* ---- values ---- */

static void
test_missing_file_is_empty(void **state)
{
    struct fx *f = *state;
    struct exec_secrets *s = open_new(f);
    unsigned char *v = (unsigned char *)1;
    struct ig_err err;
    size_t len = 7;

    assert_int_equal(exec_secrets_count(s), 0);
    assert_null(exec_secrets_name(s, 0));
    assert_int_equal(exec_secrets_get(s, "api", &v, &len, &err),
                     IG_ERR_NOTFOUND);
    assert_null(v);
    assert_int_equal(len, 0);
    assert_int_equal(access(f->file, F_OK), -1); /* not created by open */
    exec_secrets_free(s);
    exec_secrets_free(NULL);
    exec_secret_free(NULL, 0);
}

static void
test_binary_round_trip(void **state)
{
    struct fx *f = *state;
    struct exec_secrets *s = open_new(f), *t = NULL;
    static const unsigned char bin[] = {0, 'a', 0, 0xff, '\n', 0x80, 0};
    unsigned char *big = malloc(EXEC_SECRET_MAX_BYTES + 1);
    struct ig_err err;

    assert_non_null(big);
    randombytes_buf(big, EXEC_SECRET_MAX_BYTES + 1);
    assert_int_equal(exec_secrets_set(s, "bin", bin, sizeof(bin), &err), IG_OK);
    assert_int_equal(
        exec_secrets_set(s, "big", big, EXEC_SECRET_MAX_BYTES, &err), IG_OK);
    assert_int_equal(
        exec_secrets_set(s, "big2", big, EXEC_SECRET_MAX_BYTES + 1, &err),
        IG_ERR_LIMIT);
    /* An empty value is refused: no credential is empty. */
    assert_int_equal(exec_secrets_set(s, "empty", bin, 0, &err),
                     IG_ERR_INVALID);
    assert_int_equal(exec_secrets_set(s, "empty", NULL, 0, &err),
                     IG_ERR_INVALID);
    assert_value(s, "bin", bin, sizeof(bin));
    assert_value(s, "big", big, EXEC_SECRET_MAX_BYTES);
    assert_int_equal(exec_secrets_count(s), 2);
    exec_secrets_free(s);
    assert_int_equal(exec_secrets_open(f->file, f->key, &t, &err), IG_OK);
    assert_value(t, "bin", bin, sizeof(bin));
    assert_value(t, "big", big, EXEC_SECRET_MAX_BYTES);
    exec_secrets_free(t);
    free(big);
}

static void
test_replace_and_reopen(void **state)
{
    struct fx *f = *state;
    struct exec_secrets *s = open_new(f), *t = NULL;
    struct ig_err err;

    set_str(s, "refund-api", "first");
    set_str(s, "mail.smtp", "second");
    set_str(s, "refund-api", "third, longer than the first");
    assert_value(s, "refund-api", "third, longer than the first", 28);
    exec_secrets_free(s);
    assert_int_equal(exec_secrets_open(f->file, f->key, &t, &err), IG_OK);
    assert_int_equal(exec_secrets_count(t), 2);
    assert_string_equal(exec_secrets_name(t, 0), "refund-api");
    assert_string_equal(exec_secrets_name(t, 1), "mail.smtp");
    assert_value(t, "refund-api", "third, longer than the first", 28);
    assert_value(t, "mail.smtp", "second", 6);
    exec_secrets_free(t);
}

static void
test_file_mode_and_no_plaintext(void **state)
{
    struct fx *f = *state;
    struct exec_secrets *s = open_new(f);
    const char *v = "sk_live_VERY-SECRET-credential";
    mode_t old = umask(0);
    char *text;
    size_t len;

    set_str(s, "api", v);
    (void)umask(old);
    assert_int_equal(file_mode(f->file), 0600);
    text = tu_read_file(f->file, &len);
    assert_false(contains(text, len, v, strlen(v)));
    assert_false(contains(text, len, "VERY-SECRET", 11));
    assert_int_equal(strncmp(text, "intentgate-secrets/1\napi ", 25), 0);
    assert_int_equal(text[len - 1], '\n');
    free(text);
    exec_secrets_free(s);
}

static void
test_names(void **state)
{
    static const char *good[] = {"a", "0", "refund-api", "a.b_c-d", "9z"};
    static const char *bad[] = {"",    "A", "-a",  ".a", "_a", "a b",
                                "a/b", "é", "a\n", "aB", "a:b"};
    struct fx *f = *state;
    struct exec_secrets *s = open_new(f);
    char n64[66];
    struct ig_err err;
    size_t i;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_true(exec_secret_name_valid(good[i]));
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(exec_secret_name_valid(bad[i]));
        assert_int_equal(
            exec_secrets_set(s, bad[i], (const unsigned char *)"v", 1, &err),
            IG_ERR_INVALID);
    }
    assert_false(exec_secret_name_valid(NULL));
    memset(n64, 'a', 64);
    n64[64] = '\0';
    assert_true(exec_secret_name_valid(n64));
    n64[64] = 'a';
    n64[65] = '\0';
    assert_false(exec_secret_name_valid(n64));
    assert_int_equal(exec_secrets_count(s), 0);
    exec_secrets_free(s);
}

/* ---- refusals ---- */

/* A file with two entries, "a" = "alpha" and "b" = "bravo"; its text. */
static char *
two_entries(struct fx *f, size_t *len)
{
    struct exec_secrets *s = open_new(f);

    set_str(s, "a", "alpha");
    set_str(s, "b", "bravo");
    exec_secrets_free(s);
    return tu_read_file(f->file, len);
}

static void
test_wrong_key(void **state)
{
    struct fx *f = *state;
    struct ig_err err;
    char *text = two_entries(f, NULL);

    assert_int_equal(unlink(f->key), 0);
    assert_int_equal(exec_secrets_keygen(f->key, &err), IG_OK);
    expect_open(f, IG_ERR_CRYPTO, "line 2: a does not decrypt");
    free(text);
}

/* Change the base64url character at offset off (a tampered byte). */
static void
flip_at(struct fx *f, const char *text, size_t len, size_t off)
{
    char *t = malloc(len);

    assert_non_null(t);
    memcpy(t, text, len);
    t[off] = t[off] == 'A' ? 'B' : 'A';
    write_file(f->file, t, len, 0600);
    free(t);
}

static void
test_tampered(void **state)
{
    struct fx *f = *state;
    size_t len, l3;
    char *text = two_entries(f, &len), *swapped;
    const char *line3 = strstr(text, "\nb ") + 1;

    l3 = (size_t)(line3 - text);
    expect_open(f, IG_OK, NULL);
    flip_at(f, text, len, l3 + 2 + 10); /* in the nonce */
    expect_open(f, IG_ERR_CRYPTO, "line 3: b does not decrypt");
    flip_at(f, text, len, l3 + 2 + 40); /* in the MAC */
    expect_open(f, IG_ERR_CRYPTO, "line 3");
    flip_at(f, text, len, l3 + 2 + 60); /* in the ciphertext */
    expect_open(f, IG_ERR_CRYPTO, "line 3");
    /* Truncated: the last entry loses its tail. */
    write_file(f->file, text, len - 5, 0600);
    expect_failure(f);
    /* The two lines' names swapped: each box is bound to its name. */
    swapped = malloc(len);
    assert_non_null(swapped);
    memcpy(swapped, text, len);
    swapped[strchr(text, '\n') + 1 - text] = 'b';
    swapped[l3] = 'a';
    write_file(f->file, swapped, len, 0600);
    expect_open(f, IG_ERR_CRYPTO, "line 2: b does not decrypt");
    free(swapped);
    free(text);
}

static void
test_duplicates_and_header(void **state)
{
    struct fx *f = *state;
    size_t len, l2, n2;
    char *text = two_entries(f, &len), *dup;
    const char *line2 = strchr(text, '\n') + 1;

    l2 = (size_t)(line2 - text);
    n2 = (size_t)(strchr(line2, '\n') + 1 - line2);
    dup = malloc(len + n2);
    assert_non_null(dup);
    memcpy(dup, text, len);
    memcpy(dup + len, text + l2, n2); /* line 2 again, as line 4 */
    write_file(f->file, dup, len + n2, 0600);
    expect_open(f, IG_ERR_INVALID, "line 4: a repeated");
    dup[19] = '2'; /* intentgate-secrets/2 */
    write_file(f->file, dup, len, 0600);
    expect_open(f, IG_ERR_INVALID, "line 1: not a secrets file");
    write_file(f->file, "", 0, 0600);
    expect_open(f, IG_ERR_INVALID, "line 1");
    write_file(f->file, "intentgate-secrets/1", 20, 0600);
    expect_open(f, IG_OK, NULL);
    free(dup);
    free(text);
}

static void
test_garbage_files(void **state)
{
    static const char *bad[] = {
        "intentgate-secrets/1\n\n",
        "intentgate-secrets/1\nnoseparator\n",
        "intentgate-secrets/1\na \n",
        "intentgate-secrets/1\na !!!!\n",
        "intentgate-secrets/1\na AAAA\r\n",
        "intentgate-secrets/1\nA AAAA\n",
        "intentgate-secrets/1\na AAAA==\n",
        "intentgate-secrets/1\na  AAAA\n",
        "intentgate-secrets/1\r\n",
        " intentgate-secrets/1\n",
        "\n",
    };
    struct fx *f = *state;
    struct ig_err err;
    size_t i, n, cap = EXEC_SECRETS_LINE_MAX + 64;
    char *buf = malloc(cap);

    assert_non_null(buf);
    assert_int_equal(exec_secrets_keygen(f->key, &err), IG_OK);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file(f->file, bad[i], strlen(bad[i]), 0600);
        expect_open(f, i == 2 ? IG_ERR_CRYPTO : IG_ERR_INVALID, NULL);
    }
    write_file(f->file, "intentgate-secrets/1\n\0\0 \0\n", 26, 0600);
    expect_open(f, IG_ERR_INVALID, "line 2");
    /* A line over the cap, and a sealed value over its cap. */
    memcpy(buf, "intentgate-secrets/1\na ", 23);
    memset(buf + 23, 'A', cap - 23);
    write_file(f->file, buf, cap, 0600);
    expect_open(f, IG_ERR_LIMIT, "line 2: over");
    n = 23 + IG_B64_ENCODED_LEN(EXEC_SEALED_MAX) + 40;
    write_file(f->file, buf, n, 0600);
    expect_open(f, IG_ERR_INVALID, "base64url");
    /* Random bytes after the header never open and never crash. */
    for (i = 0; i < 300; i++) {
        n = 21 + 1 + randombytes_uniform(2000);
        randombytes_buf(buf + 21, n - 21);
        memcpy(buf, "intentgate-secrets/1\n", 21);
        write_file(f->file, buf, n, 0600);
        expect_failure(f);
    }
    /* Not a regular file. */
    assert_int_equal(unlink(f->file), 0);
    assert_int_equal(mkdir(f->file, 0700), 0);
    expect_open(f, IG_ERR_IO, "not a regular file");
    assert_int_equal(rmdir(f->file), 0);
    free(buf);
}

static void
test_failed_set_changes_nothing(void **state)
{
    struct fx *f = *state;
    struct exec_secrets *s = open_new(f);
    struct ig_err err;

    set_str(s, "a", "alpha");
    /* A directory where the file was: the rename over it fails. */
    assert_int_equal(unlink(f->file), 0);
    assert_int_equal(mkdir(f->file, 0700), 0);
    assert_int_equal(
        exec_secrets_set(s, "a", (const unsigned char *)"new", 3, &err),
        IG_ERR_IO);
    assert_int_equal(
        exec_secrets_set(s, "b", (const unsigned char *)"new", 3, &err),
        IG_ERR_IO);
    assert_int_equal(rmdir(f->file), 0);
    assert_int_equal(exec_secrets_count(s), 1);
    assert_value(s, "a", "alpha", 5);
    /* The temporary files are gone: only the key is left. */
    assert_int_equal(dir_entries(f->dir), 1);
    exec_secrets_free(s);
}

/* ---- the CLI ---- */

static void
test_cli_keygen_set_list(void **state)
{
    struct fx *f = *state;
    const char *keygen[] = {"secret", "keygen", "--out", f->key, NULL};
    const char *set[] = {"secret", "set",   "api",  "--file",
                         f->file,  "--key", f->key, NULL};
    const char *set2[] = {"secret", "set",   "two.lines", "--file",
                          f->file,  "--key", f->key,      NULL};
    const char *list[] = {"secret", "list", "--file", f->file,
                          "--key",  f->key, NULL};
    struct exec_secrets *s = NULL;
    struct ig_err err;
    size_t n;
    char *out, *errs;

    assert_int_equal(run_cli(f, "", 0, keygen), 0);
    assert_int_equal(file_mode(f->key), 0600);
    assert_int_equal(run_cli(f, "", 0, keygen), 1); /* never overwrites */
    assert_int_equal(run_cli(f, "hunter2-secret\n", 15, set), 0);
    out = cli_output(f, "out", &n);
    errs = cli_output(f, "err", NULL);
    assert_false(contains(out, n, "hunter2", 7));
    assert_null(strstr(errs, "hunter2"));
    free(out);
    free(errs);
    /* Only one trailing newline is stripped. */
    assert_int_equal(run_cli(f, "two\n\n", 5, set2), 0);
    assert_int_equal(run_cli(f, "", 0, list), 0);
    out = cli_output(f, "out", NULL);
    assert_string_equal(out, "api\ntwo.lines\n");
    free(out);
    assert_int_equal(exec_secrets_open(f->file, f->key, &s, &err), IG_OK);
    assert_value(s, "api", "hunter2-secret", 14);
    assert_value(s, "two.lines", "two\n", 4);
    exec_secrets_free(s);
    assert_int_equal(file_mode(f->file), 0600);
}

static void
test_cli_values_and_keys(void **state)
{
    struct fx *f = *state;
    const char *set[] = {"secret", "set", "big", "--file", f->file, NULL};
    const char *bad[] = {"secret", "set", "Bad", "--file", f->file, NULL};
    char *buf = malloc(EXEC_SECRET_MAX_BYTES + 2), *key;
    struct exec_secrets *s = NULL;
    struct ig_err err;

    assert_non_null(buf);
    memset(buf, 'v', EXEC_SECRET_MAX_BYTES + 2);
    /* No --key and no variable. */
    assert_int_equal(run_cli(f, "x", 1, set), 1);
    assert_int_equal(exec_secrets_keygen(f->key, &err), IG_OK);
    key = tu_read_file(f->key, NULL);
    /* The key is taken out of the environment by each use (and wiped):
       set it again before each. */
#define KEY_ENV() assert_int_equal(setenv(EXEC_SECRETS_KEY_ENV, key, 1), 0)
    KEY_ENV();
    assert_int_equal(run_cli(f, "", 0, set), 1); /* empty */
    KEY_ENV();
    assert_int_equal(run_cli(f, "\n", 1, set), 1); /* empty once stripped */
    KEY_ENV();
    assert_int_equal(run_cli(f, buf, EXEC_SECRET_MAX_BYTES + 1, set), 1);
    buf[EXEC_SECRET_MAX_BYTES] = '\n';
    KEY_ENV();
    assert_int_equal(run_cli(f, buf, EXEC_SECRET_MAX_BYTES + 2, set), 1);
    KEY_ENV();
    assert_int_equal(run_cli(f, buf, EXEC_SECRET_MAX_BYTES + 1, set), 0);
    assert_null(getenv(EXEC_SECRETS_KEY_ENV)); /* used, so gone */
    KEY_ENV();
    assert_int_equal(run_cli(f, "x", 1, bad), 1);
    KEY_ENV();
    assert_int_equal(exec_secrets_open(f->file, NULL, &s, &err), IG_OK);
#undef KEY_ENV
    free(key);
    assert_int_equal(exec_secrets_count(s), 1);
    assert_value(s, "big", buf, EXEC_SECRET_MAX_BYTES);
    exec_secrets_free(s);
    free(buf);
}

static void
test_cli_usage(void **state)
{
    struct fx *f = *state;
    const char *cases[][8] = {
        {"secret", NULL},
        {"secret", "bogus", NULL},
        {"secret", "keygen", NULL},
        {"secret", "keygen", "--out", NULL},
        {"secret", "keygen", "--out", "k", "extra", NULL},
        {"secret", "set", "--file", "x", NULL},
        {"secret", "set", "a", "b", "--file", "x", NULL},
        {"secret", "set", "a", "--file", "x", "--file", "y", NULL},
        {"secret", "set", "a", "--file", "x", "--bogus", NULL},
        {"secret", "list", NULL},
        {"secret", "list", "--file", "x", "--out", "y", NULL},
    };
    size_t i, n;
    char *errs;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(run_cli(f, "", 0, cases[i]), 2);
        errs = cli_output(f, "err", &n);
        assert_true(n > 0 && errs[n - 1] == '\n');
        assert_ptr_equal(strchr(errs, '\n'), errs + n - 1); /* one line */
        free(errs);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_keygen_mode_and_no_overwrite),
        T(test_key_file_refusals),
        T(test_key_from_environment),
        T(test_missing_file_is_empty),
        T(test_binary_round_trip),
        T(test_replace_and_reopen),
        T(test_file_mode_and_no_plaintext),
        T(test_names),
        T(test_wrong_key),
        T(test_tampered),
        T(test_duplicates_and_header),
        T(test_garbage_files),
        T(test_failed_set_changes_nothing),
        T(test_cli_keygen_set_list),
        T(test_cli_values_and_keys),
        T(test_cli_usage),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
