/*
 * fuzz_polhelpers.c - libFuzzer target for the policy helpers that read an
 * agent's strings: parse_url, ip_is_private, clean_text,
 * resource_canonical and git_ref_valid (their C entry points, pol_int.h).
 *
 * Each input goes to every helper whole (NUL bytes included). Beyond not
 * crashing, each answer is checked against a naive oracle written here:
 *   - git_ref_valid must agree exactly with a literal reading of the
 *     check-ref-format rules;
 *   - clean_text may pass only valid UTF-8 without control characters or
 *     the best-known invisible ones, and must agree with the character
 *     faults resource_canonical reports;
 *   - resource_canonical may pass only clean text without empty, "." or
 *     ".." segments (nor "%2e", ".%2e", "%2e.", "%2e%2e", any case) or a
 *     space at a segment's edge;
 *   - ip_is_private must call private any input that holds a byte outside
 *     the host alphabet, and every 127.x.y.z dotted quad;
 *   - parse_url may accept only printable ASCII without backslashes, and
 *     its host only [a-z0-9._:-] (with its port in 0..65535).
 * A broken property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int ok, const char *what)
{
    if (ok)
        return;
    (void)fprintf(stderr, "fuzz_polhelpers: %s\n", what);
    abort();
}

static int
has(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle), i;

    for (i = 0; i + m <= n; i++)
        if (memcmp(s + i, needle, m) == 0)
            return 1;
    return 0;
}

/* The check-ref-format rules, read literally. */
static int
oracle_git_ref(const char *s, size_t n)
{
    size_t i, start = 0;

    if (n == 0 || (n == 1 && s[0] == '@') || s[n - 1] == '.' ||
        s[n - 1] == '/' || s[0] == '/' || memchr(s, '/', n) == NULL)
        return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f ||
            strchr(" ~^:?*[\\", s[i]) != NULL)
            return 0;
    if (has(s, n, "..") || has(s, n, "@{") || has(s, n, "//"))
        return 0;
    for (i = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        if (s[start] == '.' ||
            (i - start >= 5 && memcmp(s + i - 5, ".lock", 5) == 0))
            return 0;
        start = i + 1;
    }
    return 1;
}

/* Valid UTF-8 without controls or the best-known invisible characters. */
static void
oracle_clean(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, len, k;
    unsigned long cp;

    while (i < n) {
        len = pol_utf8_char(u + i, n - i);
        check(len > 0, "clean_text passed invalid UTF-8");
        cp = len == 1 ? u[i] : u[i] & (0xFFu >> (len + 1));
        for (k = 1; k < len; k++)
            cp = (cp << 6) | (u[i + k] & 0x3Fu);
        check(cp >= 0x20 && !(cp >= 0x7F && cp <= 0x9F) && cp != 0x2028 &&
                  cp != 0x2029,
              "clean_text passed a control character");
        check(!(cp >= 0x200B && cp <= 0x200F) && cp != 0xFEFF &&
                  !(cp >= 0x202A && cp <= 0x202E) && cp != 0xAD &&
                  !(cp >= 0x2060 && cp <= 0x2064),
              "clean_text passed an invisible character");
        i += len;
    }
}

/* Is some '/'-separated segment one WHATWG URL reads as "." or ".."? */
static int
oracle_encoded_dot(const char *s, size_t n)
{
    static const char *const dots[] = {"%2e", ".%2e", "%2e.", "%2e%2e"};
    char seg[8];
    size_t i, start = 0, len, k, d;

    for (i = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        len = i - start;
        if (len < sizeof(seg)) {
            for (k = 0; k < len; k++)
                seg[k] = s[start + k] == 'E' ? 'e' : s[start + k];
            seg[len] = '\0';
            for (d = 0; d < sizeof(dots) / sizeof(dots[0]); d++)
                if (strcmp(seg, dots[d]) == 0)
                    return 1;
        }
        start = i + 1;
    }
    return 0;
}

static void
fuzz_text(const char *s, size_t n)
{
    struct pol_fault f, g;
    int clean = pol_text_clean(s, n, &f);
    int canon = pol_resource_canonical(s, n, &g);

    if (clean)
        oracle_clean(s, n);
    if (canon) {
        check(clean, "resource_canonical passed unclean text");
        check(n > 0 && s[0] != '/' && s[n - 1] != '/' && !has(s, n, "//"),
              "resource_canonical passed an empty segment");
        check(!has(s, n, "/./") && !has(s, n, "/../") &&
                  !(n >= 2 && memcmp(s, "./", 2) == 0) &&
                  !(n >= 2 && memcmp(s + n - 2, "/.", 2) == 0) &&
                  !(n >= 3 && memcmp(s, "../", 3) == 0) &&
                  !(n >= 3 && memcmp(s + n - 3, "/..", 3) == 0) &&
                  !(n == 1 && s[0] == '.') &&
                  !(n == 2 && s[0] == '.' && s[1] == '.'),
              "resource_canonical passed a dot segment");
        check(!oracle_encoded_dot(s, n),
              "resource_canonical passed a percent-encoded dot segment");
        check(s[0] != ' ' && s[n - 1] != ' ' && !has(s, n, " /") &&
                  !has(s, n, "/ "),
              "resource_canonical passed edge whitespace");
    } else if (!clean) {
        check(strcmp(f.code, g.code) == 0 && f.at == g.at,
              "clean_text and resource_canonical disagree on a character");
    }
    check(pol_git_ref_valid(s, n, &f) == oracle_git_ref(s, n),
          "git_ref_valid disagrees with the check-ref-format rules");
}

static void
fuzz_host(const char *s, size_t n)
{
    size_t i;
    int priv = pol_host_private(s, n);

    for (i = 0; i < n && !priv; i++)
        check(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789.-_:[]",
                     s[i]) != NULL &&
                  s[i] != '\0',
              "ip_is_private passed a byte outside the host alphabet");
    if (n >= 7 && n <= 15 && memcmp(s, "127.", 4) == 0) {
        struct pol_ip ip;

        if (pol_ip_parse(s, n, &ip) && !ip.v6)
            check(priv, "ip_is_private passed a loopback address");
    }
}

static void
fuzz_url(const char *s, size_t n)
{
    char host[300];
    long port;
    size_t i;

    if (!pol_url_valid(s, n, host, sizeof(host), &port))
        return;
    for (i = 0; i < n; i++)
        check((unsigned char)s[i] > 0x20 && (unsigned char)s[i] < 0x7f &&
                  s[i] != '\\',
              "parse_url accepted a byte it must refuse");
    check(host[0] != '\0', "parse_url accepted an empty host");
    for (i = 0; host[i] != '\0'; i++)
        check(strchr("abcdefghijklmnopqrstuvwxyz0123456789._:-", host[i]) !=
                  NULL,
              "parse_url returned a host with a foreign byte");
    check(port >= 0 && port <= 65535, "parse_url returned a bad port");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;

    fuzz_text(s, size);
    fuzz_host(s, size);
    fuzz_url(s, size);
    return 0;
}
