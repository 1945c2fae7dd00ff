/*
 * cli_git_refspec.c - gateway URLs, ref names and push refspecs, checked
 * before `intentgate git` runs anything (cli_git_refspec.h).
 *
 * How it works: every check walks the bytes once and refuses at the first
 * thing it does not take, naming it. Ref names follow `git
 * check-ref-format` (git 2.39.5's ten rules, written here from its
 * documentation) plus the gateway's own: a valid ref may still start a
 * component with '-' (an option to git) or hold a '+' (a forced update),
 * so both are refused. Refspecs are refused before they are split when
 * they hold syntax git would read as more than "this name to that name":
 * '+', '*', '^', '~', '@{'. Nothing is unescaped, normalized or trimmed:
 * what is checked is what is used.
 */
#include "cli_git_refspec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ig_error.h"

static int refuse(char *why, size_t why_size, const char *fmt, ...)
    IG_PRINTF(3, 4);

static int
refuse(char *why, size_t why_size, const char *fmt, ...)
{
    va_list ap;

    if (why_size > 0) {
        va_start(ap, fmt);
        (void)vsnprintf(why, why_size, fmt, ap); /* truncated to fit */
        va_end(ap);
    }
    return -1;
}

static int
starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- URLs ---- */

static int
alias_ok(const char *a, size_t n)
{
    size_t i;

    if (n == 0 || n > CLI_GIT_ALIAS_MAX)
        return 0;
    if (!((a[0] >= 'a' && a[0] <= 'z') || (a[0] >= '0' && a[0] <= '9')))
        return 0;
    for (i = 1; i < n; i++)
        if (strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", a[i]) == NULL ||
            a[i] == '\0')
            return 0;
    return 1;
}

/* The authority part [h, end): a host or [v6] literal, then :port. */
static int
authority_ok(const char *h, const char *end, char *why, size_t why_size)
{
    const char *p = h, *colon;
    long port = 0;

    if (memchr(h, '@', (size_t)(end - h)) != NULL)
        return refuse(why, why_size,
                      "the URL holds a user name ('@'): give "
                      "the gateway's URL, the grant is the "
                      "credential");
    if (*p == '[') {
        while (++p < end && strchr("0123456789abcdefABCDEF:.", *p) != NULL &&
               *p != '\0')
            ;
        if (p >= end || *p != ']' || p == h + 1)
            return refuse(why, why_size, "the URL's [IPv6] host is malformed");
        p++;
    } else {
        while (p < end && *p != ':' &&
               strchr("abcdefghijklmnopqrstuvwxyz"
                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-",
                      *p) != NULL &&
               *p != '\0')
            p++;
        if (p == h)
            return refuse(why, why_size, "the URL has no host");
    }
    if (p == end)
        return 0;
    colon = p;
    if (*colon != ':' || colon + 1 == end || end - colon > 6)
        return refuse(why, why_size, "the URL's host or port is malformed");
    for (p = colon + 1; p < end; p++) {
        if (*p < '0' || *p > '9')
            return refuse(why, why_size, "the URL's port is not a number");
        port = port * 10 + (*p - '0');
    }
    if (port < 1 || port > 65535 || colon[1] == '0')
        return refuse(why, why_size, "the URL's port is not 1 to 65535");
    return 0;
}

int
cli_git_url_parse(const char *url, char *alias, size_t alias_size, char *why,
                  size_t why_size)
{
    const char *h, *slash, *a;
    size_t n = strlen(url);

    if (n > CLI_GIT_URL_MAX)
        return refuse(why, why_size, "the URL is longer than %d bytes",
                      CLI_GIT_URL_MAX);
    if (starts_with(url, "http://"))
        h = url + 7;
    else if (starts_with(url, "https://"))
        h = url + 8;
    else
        return refuse(why, why_size, "not an http:// or https:// URL");
    slash = strchr(h, '/');
    if (slash == NULL)
        return refuse(why, why_size, "the URL has no /git/<alias> path");
    if (authority_ok(h, slash, why, why_size) != 0)
        return -1;
    if (!starts_with(slash, "/git/"))
        return refuse(why, why_size, "the URL's path is not /git/<alias>");
    a = slash + 5;
    if (!alias_ok(a, strlen(a)))
        return refuse(why, why_size,
                      "the URL's path is not /git/<alias> with an alias of "
                      "1 to %d characters [a-z0-9._-], starting with a "
                      "letter or digit, and nothing after",
                      CLI_GIT_ALIAS_MAX);
    if (alias_size <= strlen(a))
        return refuse(why, why_size, "the alias does not fit");
    memcpy(alias, a, strlen(a) + 1);
    return 0;
}

/* ---- ref names ---- */

/* The component [c, end) of a ref name, by git's rules 1 and 7. */
static int
component_ok(const char *c, size_t len, char *why, size_t why_size)
{
    if (len == 0)
        return refuse(why, why_size,
                      "an empty component ('//', or a "
                      "leading or trailing '/')");
    if (c[0] == '.')
        return refuse(why, why_size, "a component starting with '.'");
    if (c[0] == '-')
        return refuse(why, why_size,
                      "a component starting with '-' (an "
                      "option to git)");
    if (len >= 5 && memcmp(c + len - 5, ".lock", 5) == 0)
        return refuse(why, why_size, "a component ending with '.lock'");
    return 0;
}

/* Rules 3, 4, 5, 8, 10 and the '+': one byte at a time. */
static int
bytes_ok(const char *name, char *why, size_t why_size)
{
    const unsigned char *p;

    for (p = (const unsigned char *)name; *p != '\0'; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return refuse(why, why_size, "a control character (0x%02x)", *p);
        if (*p == ' ')
            return refuse(why, why_size, "a space");
        if (strchr("~^:?*[\\", *p) != NULL)
            return refuse(why, why_size,
                          "a '%c', which git reads as more "
                          "than a name",
                          *p);
        if (*p == '+')
            return refuse(why, why_size, "a '+' (a forced update)");
        if (p[0] == '.' && p[1] == '.')
            return refuse(why, why_size, "'..'");
        if (p[0] == '@' && p[1] == '{')
            return refuse(why, why_size, "'@{' (a reflog entry)");
    }
    return 0;
}

int
cli_git_name_check(const char *name, int onelevel, char *why, size_t why_size)
{
    const char *c, *slash;
    size_t n = strlen(name);

    if (n == 0)
        return refuse(why, why_size, "an empty ref name");
    if (n > CLI_GIT_REF_MAX)
        return refuse(why, why_size, "a ref name longer than %d bytes",
                      CLI_GIT_REF_MAX);
    if (bytes_ok(name, why, why_size) != 0)
        return -1;
    if (strcmp(name, "@") == 0)
        return refuse(why, why_size, "the name '@' (HEAD)");
    if (name[n - 1] == '.')
        return refuse(why, why_size, "a trailing '.'");
    if (!onelevel && strchr(name, '/') == NULL)
        return refuse(why, why_size, "a one-level name (no '/')");
    for (c = name;; c = slash + 1) {
        slash = strchr(c, '/');
        if (component_ok(c, slash != NULL ? (size_t)(slash - c) : strlen(c),
                         why, why_size) != 0)
            return -1;
        if (slash == NULL)
            break;
    }
    return 0;
}

int
cli_git_dst_check(const char *ref, char *why, size_t why_size)
{
    const char *rest;

    if (starts_with(ref, "refs/heads/"))
        rest = ref + 11;
    else if (starts_with(ref, "refs/tags/"))
        rest = ref + 10;
    else
        return refuse(why, why_size, "not under refs/heads/ or refs/tags/");
    if (*rest == '\0')
        return refuse(why, why_size,
                      "no name after refs/heads/ or "
                      "refs/tags/");
    return cli_git_name_check(ref, 0, why, why_size);
}

/* ---- refspecs ---- */

/* What a refspec may not hold anywhere, before it is split. */
static int
spec_syntax_ok(const char *spec, char *why, size_t why_size)
{
    const char *colon = strchr(spec, ':');

    if (strchr(spec, '+') != NULL)
        return refuse(why, why_size,
                      "a '+' (a forced update): the gateway "
                      "does not force-push");
    if (strchr(spec, '*') != NULL)
        return refuse(why, why_size, "a '*' (a glob): name each ref");
    if (strchr(spec, '^') != NULL)
        return refuse(why, why_size,
                      "a '^' (a negative refspec or a "
                      "parent): name a branch or tag");
    if (strchr(spec, '~') != NULL)
        return refuse(why, why_size,
                      "a '~' (an ancestor): name a branch "
                      "or tag");
    if (strstr(spec, "@{") != NULL)
        return refuse(why, why_size,
                      "an '@{' (a reflog entry): name a "
                      "branch or tag");
    if (spec[0] == '-' || strstr(spec, "/-") != NULL ||
        strstr(spec, ":-") != NULL)
        return refuse(why, why_size,
                      "a component starting with '-' (an "
                      "option to git)");
    if (colon != NULL && strchr(colon + 1, ':') != NULL)
        return refuse(why, why_size, "more than one ':'");
    return 0;
}

/* Copy [s, s + n) into dst (CLI_GIT_REF_MAX + 1 bytes) and check it. */
static int
take_side(char *dst, const char *s, size_t n, const char *what, char *why,
          size_t why_size)
{
    char inner[256];

    if (n == 0)
        return refuse(why, why_size, "an empty %s", what);
    if (n > CLI_GIT_REF_MAX)
        return refuse(why, why_size, "a %s longer than %d bytes", what,
                      CLI_GIT_REF_MAX);
    memcpy(dst, s, n);
    dst[n] = '\0';
    if (starts_with(dst, "refs/") && strcmp(what, "destination") == 0) {
        if (cli_git_dst_check(dst, inner, sizeof(inner)) != 0)
            return refuse(why, why_size, "the %s: %s", what, inner);
    } else if (cli_git_name_check(dst, 1, inner, sizeof(inner)) != 0) {
        return refuse(why, why_size, "the %s: %s", what, inner);
    }
    return 0;
}

int
cli_git_spec_parse(const char *spec, int delete_all, struct cli_git_spec *out,
                   char *why, size_t why_size)
{
    const char *colon, *d;

    memset(out, 0, sizeof(*out));
    if (spec[0] == '\0')
        return refuse(why, why_size, "an empty refspec");
    if (spec_syntax_ok(spec, why, why_size) != 0)
        return -1;
    colon = strchr(spec, ':');
    if (delete_all && colon != NULL)
        return refuse(why, why_size,
                      "--delete takes ref names, not "
                      "SRC:DST");
    out->del = delete_all || colon == spec;
    if (out->del) {
        d = colon == spec ? spec + 1 : spec;
        return take_side(out->dst, d, strlen(d), "destination", why, why_size);
    }
    if (take_side(out->src, spec,
                  colon != NULL ? (size_t)(colon - spec) : strlen(spec),
                  "source", why, why_size) != 0)
        return -1;
    if (colon == NULL)
        return 0;
    return take_side(out->dst, colon + 1, strlen(colon + 1), "destination", why,
                     why_size);
}
