/*
 * test_git_refspec.c - the rules `intentgate git` applies before it runs
 * anything (cli/cli_git_refspec.c): gateway URLs, ref names and push
 * refspecs, fed what a compromised agent would type: forced updates,
 * globs, revisions, options disguised as refs, escapes out of
 * refs/heads/agent/, control bytes, URLs that carry a user or point
 * elsewhere. Each refusal must also say why (a non-empty line).
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "cli_git_refspec.h"

static void
url_good(const char *url, const char *alias)
{
    char got[CLI_GIT_ALIAS_MAX + 1], why[256];

    if (cli_git_url_parse(url, got, sizeof(got), why, sizeof(why)) != 0)
        fail_msg("url %s refused: %s", url, why);
    assert_string_equal(got, alias);
}

static void
url_bad(const char *url)
{
    char got[CLI_GIT_ALIAS_MAX + 1] = "", why[256] = "";

    if (cli_git_url_parse(url, got, sizeof(got), why, sizeof(why)) == 0)
        fail_msg("url %s accepted (alias %s)", url, got);
    assert_true(why[0] != '\0');
}

static void
test_url_hostile(void **state)
{
    char longer[CLI_GIT_URL_MAX + 64];
    int n;

    (void)state;
    url_bad("http://x-access-token:secret@127.0.0.1:8701/git/demo");
    url_bad("http://user@127.0.0.1/git/demo");
    url_bad("http://127.0.0.1@evil.example/git/demo");
    url_bad("http://127.0.0.1:8701/git/demo?x=1");
    url_bad("http://127.0.0.1:8701/git/demo#frag");
    url_bad("http://127.0.0.1:8701/git/demo/");
    url_bad("http://127.0.0.1:8701/git/demo/../other");
    url_bad("http://127.0.0.1:8701/git/../demo");
    url_bad("http://127.0.0.1:8701/git/");
    url_bad("http://127.0.0.1:8701/git");
    url_bad("http://127.0.0.1:8701/demo.git");
    url_bad("http://127.0.0.1:8701/api/git/demo");
    url_bad("http://127.0.0.1:8701//git/demo");
    url_bad("http://127.0.0.1:8701/git//demo");
    url_bad("http://127.0.0.1:8701/git/Demo");
    url_bad("http://127.0.0.1:8701/git/.demo");
    url_bad("http://127.0.0.1:8701/git/-demo");
    url_bad("http://127.0.0.1:8701/git/de%6do");
    url_bad("http://127.0.0.1:8701/git/de mo");
    url_bad("http://127.0.0.1:8701/git/demo\n");
    url_bad("http://127.0.0.1:0/git/demo");
    url_bad("http://127.0.0.1:65536/git/demo");
    url_bad("http://127.0.0.1:08701/git/demo");
    url_bad("http://127.0.0.1:/git/demo");
    url_bad("http://127.0.0.1:87a1/git/demo");
    url_bad("http://:8701/git/demo");
    url_bad("http:///git/demo");
    url_bad("http://[::1/git/demo");
    url_bad("http://[]/git/demo");
    url_bad("http://ho\\st/git/demo");
    url_bad("http://h%6fst/git/demo");
    url_bad("HTTP://127.0.0.1/git/demo");
    url_bad("ftp://127.0.0.1/git/demo");
    url_bad("file:///srv/git/demo");
    url_bad("ext::sh -c touch% /tmp/pwned");
    url_bad("/srv/git/demo");
    url_bad("git@github.com:acme/app.git");
    url_bad("--upload-pack=touch /tmp/x");
    url_bad("");
    n = snprintf(longer, sizeof(longer), "http://%0*d/git/demo",
                 CLI_GIT_URL_MAX, 1);
    assert_true(n > CLI_GIT_URL_MAX);
    url_bad(longer);
}

/* The longest alias passes, one more character does not. */
static void
test_url_alias_length(void **state)
{
    char alias[CLI_GIT_ALIAS_MAX + 2], url[CLI_GIT_ALIAS_MAX + 32];

    (void)state;
    memset(alias, 'a', sizeof(alias));
    alias[CLI_GIT_ALIAS_MAX] = '\0';
    (void)snprintf(url, sizeof(url), "http://h/git/%s", alias);
    url_good(url, alias);
    alias[CLI_GIT_ALIAS_MAX] = 'b';
    alias[CLI_GIT_ALIAS_MAX + 1] = '\0';
    (void)snprintf(url, sizeof(url), "http://h/git/%s", alias);
    url_bad(url);
}

static void
test_url_good(void **state)
{
    (void)state;
    url_good("http://127.0.0.1:8701/git/demo", "demo");
    url_good("https://gateway.example/git/acme-app", "acme-app");
    url_good("http://[::1]:8701/git/a.b_c-d", "a.b_c-d");
    url_good("http://localhost:65535/git/0", "0");
}

static void
name_bad(const char *name, int onelevel)
{
    char why[256] = "";

    if (cli_git_name_check(name, onelevel, why, sizeof(why)) == 0)
        fail_msg("name '%s' accepted", name);
    assert_true(why[0] != '\0');
}

static void
dst_bad(const char *ref)
{
    char why[256] = "";

    if (cli_git_dst_check(ref, why, sizeof(why)) == 0)
        fail_msg("destination '%s' accepted", ref);
    assert_true(why[0] != '\0');
}

static void
dst_good(const char *ref)
{
    char why[256];

    if (cli_git_dst_check(ref, why, sizeof(why)) != 0)
        fail_msg("destination '%s' refused: %s", ref, why);
}

static void
test_names_hostile(void **state)
{
    static const char *const bad[] = {"refs/heads/agent/../main",
                                      "refs/heads/agent/..",
                                      "refs/heads/agent/x:refs/heads/main",
                                      "refs/heads/agent/*",
                                      "refs/heads/agent/a?",
                                      "refs/heads/agent/[ab]",
                                      "refs/heads/agent//main",
                                      "refs/heads/agent/x/",
                                      "/refs/heads/agent/x",
                                      "refs/heads/agent/x.",
                                      "refs/heads/agent/.x",
                                      "refs/heads/agent/x.lock",
                                      "refs/heads/agent/x.lock/y",
                                      "refs/heads/agent/x@{1}",
                                      "refs/heads/agent/x@{-1}",
                                      "refs/heads/agent/x~1",
                                      "refs/heads/agent/x^",
                                      "refs/heads/agent/a b",
                                      "refs/heads/agent/a\tb",
                                      "refs/heads/agent/a\nrefs/heads/main",
                                      "refs/heads/agent/a\x7f",
                                      "refs/heads/agent/a\\b",
                                      "+refs/heads/agent/x",
                                      "refs/heads/agent/a+b",
                                      "refs/heads/agent/--delete",
                                      "refs/heads/agent/-x",
                                      "-x/y",
                                      "@",
                                      "",
                                      "refs/heads/agent/x.lock.",
                                      NULL};
    char longer[CLI_GIT_REF_MAX + 32];
    size_t i;

    (void)state;
    for (i = 0; bad[i] != NULL; i++) {
        name_bad(bad[i], 1);
        dst_bad(bad[i]);
    }
    memset(longer, 'a', sizeof(longer) - 1);
    memcpy(longer, "refs/heads/agent/", 17);
    longer[sizeof(longer) - 1] = '\0';
    dst_bad(longer);
    name_bad("main", 0);
    name_bad("-main", 1);
    name_bad("--force", 1);
}

static void
test_dst_scope(void **state)
{
    (void)state;
    dst_bad("refs/heads/");
    dst_bad("refs/tags/");
    dst_bad("refs/heads");
    dst_bad("refs/remotes/origin/main");
    dst_bad("refs/notes/commits");
    dst_bad("refs/meta/config");
    dst_bad("refs/for/main");
    dst_bad("HEAD");
    dst_bad("main");
    dst_bad("heads/main");
    dst_bad("refs/heads/../tags/v1");
    dst_bad("refs/tags/../heads/main");
    dst_good("refs/heads/agent/fix-1");
    dst_good("refs/heads/main"); /* the policy judges it, not the syntax */
    dst_good("refs/tags/v1.2.3");
    dst_good("refs/heads/agent/a@b");
    dst_good("refs/heads/agent/a.lockx");
    dst_good("refs/heads/agent/caf\xc3\xa9");
}

static void
spec_bad(const char *spec, int delete_all)
{
    struct cli_git_spec s;
    char why[256] = "";

    if (cli_git_spec_parse(spec, delete_all, &s, why, sizeof(why)) == 0)
        fail_msg("refspec '%s' accepted (src '%s' dst '%s' del %d)", spec,
                 s.src, s.dst, s.del);
    assert_true(why[0] != '\0');
}

static void
spec_good(const char *spec, int delete_all, const char *src, const char *dst,
          int del)
{
    struct cli_git_spec s;
    char why[256];

    if (cli_git_spec_parse(spec, delete_all, &s, why, sizeof(why)) != 0)
        fail_msg("refspec '%s' refused: %s", spec, why);
    assert_string_equal(s.src, src);
    assert_string_equal(s.dst, dst);
    assert_int_equal(s.del, del);
}

static void
test_spec_hostile(void **state)
{
    (void)state;
    spec_bad("+agent/x", 0);
    spec_bad("+agent/x:refs/heads/main", 0);
    spec_bad("agent/x:+refs/heads/main", 0);
    spec_bad("refs/heads/*:refs/heads/copy/*", 0);
    spec_bad("agent/*", 0);
    spec_bad("^refs/heads/main", 0);
    spec_bad("main^:refs/heads/agent/x", 0);
    spec_bad("main~1:refs/heads/agent/x", 0);
    spec_bad("main@{1}:refs/heads/agent/old", 0);
    spec_bad("@{-1}", 0);
    spec_bad("--delete", 0);
    spec_bad("-d", 0);
    spec_bad("agent/x:-refs/heads/y", 0);
    spec_bad("agent/-x", 0);
    spec_bad("a:b:c", 0);
    spec_bad("agent/x:refs/heads/main:refs/heads/y", 0);
    spec_bad("agent/x:", 0);
    spec_bad(":", 0);
    spec_bad("", 0);
    spec_bad("agent/x:refs/heads/agent/../main", 0);
    spec_bad("agent/x:refs/remotes/origin/main", 0);
    spec_bad("agent/x:refs/notes/x", 0);
    spec_bad("agent/x:refs/heads/", 0);
    spec_bad("agent/x:refs/heads/a b", 0);
    spec_bad("agent/x:refs/heads/agent/x\n", 0);
    spec_bad("agent/../main", 0);
    spec_bad(":refs/heads/agent/../main", 0);
    spec_bad(":+refs/heads/x", 0);
    spec_bad("+refs/heads/x", 1);
    spec_bad("refs/heads/agent/x:refs/heads/agent/y", 1);
    spec_bad(":refs/heads/agent/x", 1);
    spec_bad("-refs/heads/x", 1);
    spec_bad("refs/heads/agent/*", 1);
    spec_bad("refs/remotes/origin/x", 1);
}

static void
test_spec_good(void **state)
{
    (void)state;
    spec_good("agent/x", 0, "agent/x", "", 0);
    spec_good("main", 0, "main", "", 0);
    spec_good("HEAD:refs/heads/agent/x", 0, "HEAD", "refs/heads/agent/x", 0);
    spec_good("agent/x:agent/y", 0, "agent/x", "agent/y", 0);
    spec_good("refs/heads/agent/x:refs/heads/agent/x", 0, "refs/heads/agent/x",
              "refs/heads/agent/x", 0);
    spec_good("v1.0", 0, "v1.0", "", 0);
    spec_good(":refs/heads/agent/old", 0, "", "refs/heads/agent/old", 1);
    spec_good(":agent/old", 0, "", "agent/old", 1);
    spec_good("refs/tags/v1", 1, "", "refs/tags/v1", 1);
    spec_good("agent/old", 1, "", "agent/old", 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_hostile),
        cmocka_unit_test(test_url_alias_length),
        cmocka_unit_test(test_url_good),
        cmocka_unit_test(test_names_hostile),
        cmocka_unit_test(test_dst_scope),
        cmocka_unit_test(test_spec_hostile),
        cmocka_unit_test(test_spec_good),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
