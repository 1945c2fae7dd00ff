/*
 * pol_text.c - text helpers given to policies as globals:
 *   clean_text(s)          true, or false, code, detail
 *   resource_canonical(s)  s, or nil, code, detail
 *   git_ref_valid(ref)     true, or false, why
 *
 * Why: a policy compares text ("prod/" is a prefix of the resource, a ref
 * is under refs/heads/agent/), but the system that acts reads it another
 * way: a database or proxy trims " prod/", a file system drops U+200C
 * (HFS+ took ".g\u200cit" for ".git"), a resolver collapses "./prod/",
 * git reads "agent/x:refs/heads/main" as a refspec and C code stops at a
 * NUL. These helpers refuse every such spelling, so what the policy
 * decided on is all there is. They read the whole Lua string (NUL bytes
 * included) and never change it: the caller gets the same string or a
 * refusal, never a repaired guess.
 *
 * clean_text: valid UTF-8 (no overlong forms, surrogates or code points
 * above U+10FFFF); no control character (C0, DEL, C1, U+2028, U+2029); no
 * invisible character: general category Cf (Unicode 15) or
 * Default_Ignorable_Code_Point, the table below.
 * resource_canonical: clean_text, then split at '/': no empty segment (so
 * no leading, trailing or double '/'), no "." or ".." segment, and no
 * White_Space character starting or ending a segment. "%2e" (any case)
 * counts as a dot in a segment of dots only: WHATWG URL resolvers read
 * "%2e%2e", ".%2e" and "%2e." as "..". Character faults are reported
 * before segment faults.
 * git_ref_valid: the rules of `git check-ref-format` without options
 * (NOTES-2 section 6): no control byte, space, ~ ^ : ? * [ or \, no "..",
 * no "@{", not "@", no empty component, none starting with '.' or ending
 * in ".lock", no trailing '.', and at least two components.
 *
 * Cost: one pass over the bytes; ASCII takes a fast path. Inputs longer
 * than IG_POLICY_STRING_MAX are refused (TOO_LONG) without being read.
 */
#include "pol_int.h"

#include <stdio.h>
#include <string.h>

/* A closed range of code points. */
struct pol_range {
    uint32_t lo, hi;
};

/*
 * Invisible characters: Cf of Unicode 15.0 (UnicodeData.txt) merged with
 * Default_Ignorable_Code_Point (DerivedCoreProperties.txt), sorted.
 */
static const struct pol_range pol_invisible[] = {
    {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x0600, 0x0605},
    {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
    {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x115F, 0x1160},
    {0x17B4, 0x17B5},   {0x180B, 0x180F},   {0x200B, 0x200F},
    {0x202A, 0x202E},   {0x2060, 0x206F},   {0x3164, 0x3164},
    {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0},
    {0xFFF0, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
    {0xE0000, 0xE0FFF},
};

/* White_Space characters other than the controls (PropList.txt). */
static const struct pol_range pol_space[] = {
    {0x0020, 0x0020}, {0x00A0, 0x00A0}, {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
};

#define POL_NRANGES(a) (sizeof(a) / sizeof((a)[0]))

static int
pol_in_ranges(uint32_t cp, const struct pol_range *r, size_t n)
{
    size_t lo = 0, hi = n, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int
pol_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 ||
           cp == 0x2029;
}

/* Decode the valid UTF-8 character at s into *cp; its length, 0 if bad. */
static size_t
pol_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len = pol_utf8_char(s, n), i;
    uint32_t v;

    if (len <= 1) {
        *cp = s[0];
        return len;
    }
    v = s[0] & (0xFFu >> (len + 1));
    for (i = 1; i < len; i++)
        v = (v << 6) | (s[i] & 0x3Fu);
    *cp = v;
    return len;
}

static int
pol_fault(struct pol_fault *f, const char *code, size_t at, uint32_t cp)
{
    f->code = code;
    f->at = at;
    f->cp = cp;
    f->detail[0] = '\0';
    return 0;
}

static int
pol_too_long(struct pol_fault *f)
{
    pol_fault(f, "TOO_LONG", 0, 0);
    (void)snprintf(f->detail, sizeof(f->detail), "longer than %d bytes",
                   IG_POLICY_STRING_MAX);
    return 0;
}

int
pol_text_clean(const char *str, size_t n, struct pol_fault *f)
{
    const unsigned char *s = (const unsigned char *)str;
    const char *what;
    size_t i = 0, len;
    uint32_t cp;

    if (n > IG_POLICY_STRING_MAX)
        return pol_too_long(f);
    while (i < n) {
        if (s[i] >= 0x20 && s[i] < 0x7F) {
            i++;
            continue;
        }
        len = pol_utf8_decode(s + i, n - i, &cp);
        if (len == 0) {
            pol_fault(f, "INVALID_UTF8", i, s[i]);
            (void)snprintf(f->detail, sizeof(f->detail),
                           "invalid UTF-8 at byte %zu", i + 1);
            return 0;
        }
        what = pol_is_control(cp) ? "CONTROL_CHARACTER"
               : pol_in_ranges(cp, pol_invisible, POL_NRANGES(pol_invisible))
                   ? "FORMAT_CHARACTER"
                   : NULL;
        if (what != NULL) {
            pol_fault(f, what, i, cp);
            (void)snprintf(f->detail, sizeof(f->detail),
                           "%s U+%04X at byte %zu",
                           what[0] == 'C' ? "a control character"
                                          : "an invisible format character",
                           (unsigned)cp, i + 1);
            return 0;
        }
        i += len;
    }
    return 1;
}

/* The character ending at s + end (valid UTF-8 before it). */
static uint32_t
pol_last_char(const unsigned char *s, size_t start, size_t end)
{
    size_t i = end - 1;
    uint32_t cp;

    while (i > start && (s[i] & 0xC0) == 0x80)
        i--;
    (void)pol_utf8_decode(s + i, end - i, &cp);
    return cp;
}

/* Does s[0, n) read "%2e" (any case) at i? */
static int
pol_pct_dot(const unsigned char *s, size_t n, size_t i)
{
    return i + 3 <= n && s[i] == '%' && s[i + 1] == '2' &&
           (s[i + 2] == 'e' || s[i + 2] == 'E');
}

/*
 * A "." or ".." segment, or one URL resolvers read so (WHATWG URL: "%2e",
 * ".%2e", "%2e." and "%2e%2e", any case).
 */
static int
pol_dot_segment(const unsigned char *s, size_t n)
{
    size_t i = 0, dots = 0;

    while (i < n && dots < 3) {
        if (s[i] == '.')
            i++;
        else if (pol_pct_dot(s, n, i))
            i += 3;
        else
            return 0;
        dots++;
    }
    return i == n && dots > 0 && dots <= 2;
}

/* Check the segment s[start, end), number seg. */
static int
pol_segment_ok(const unsigned char *s, size_t start, size_t end, size_t seg,
               struct pol_fault *f)
{
    size_t len = end - start;
    uint32_t first, last;

    if (len == 0) {
        pol_fault(f, "EMPTY_SEGMENT", start, 0);
        (void)snprintf(f->detail, sizeof(f->detail),
                       "segment %zu is empty (byte %zu: a leading, trailing "
                       "or double '/')",
                       seg, start + 1);
        return 0;
    }
    if (pol_dot_segment(s + start, len)) {
        pol_fault(f, "DOT_SEGMENT", start, 0);
        (void)snprintf(f->detail, sizeof(f->detail),
                       "segment %zu is '.' or '..'%s (byte %zu)", seg,
                       s[start] == '.' && len <= 2 ? "" : " percent-encoded",
                       start + 1);
        return 0;
    }
    (void)pol_utf8_decode(s + start, len, &first);
    last = pol_last_char(s, start, end);
    if (pol_in_ranges(first, pol_space, POL_NRANGES(pol_space)) ||
        pol_in_ranges(last, pol_space, POL_NRANGES(pol_space))) {
        pol_fault(f, "EDGE_WHITESPACE", start,
                  pol_in_ranges(first, pol_space, POL_NRANGES(pol_space))
                      ? first
                      : last);
        (void)snprintf(f->detail, sizeof(f->detail),
                       "whitespace U+%04X at the edge of segment %zu "
                       "(byte %zu)",
                       (unsigned)f->cp, seg, start + 1);
        return 0;
    }
    return 1;
}

int
pol_resource_canonical(const char *str, size_t n, struct pol_fault *f)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i, start = 0, seg = 1;

    if (!pol_text_clean(str, n, f))
        return 0;
    for (i = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        if (!pol_segment_ok(s, start, i, seg, f))
            return 0;
        start = i + 1;
        seg++;
    }
    return 1;
}

/* Bytes git refuses anywhere in a ref (besides controls). */
static int
pol_git_forbidden(unsigned char c)
{
    return c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' ||
           c == '*' || c == '[' || c == '\\';
}

/* Check the component s[start, end), number comp. */
static int
pol_git_component_ok(const char *s, size_t start, size_t end, size_t comp,
                     struct pol_fault *f)
{
    if (end == start) {
        pol_fault(f, "EMPTY_COMPONENT", start, 0);
        (void)snprintf(f->detail, sizeof(f->detail),
                       "an empty component at byte %zu (a leading, trailing "
                       "or double '/')",
                       start + 1);
        return 0;
    }
    if (s[start] == '.') {
        pol_fault(f, "DOT_COMPONENT", start, 0);
        (void)snprintf(f->detail, sizeof(f->detail),
                       "component %zu starts with '.'", comp);
        return 0;
    }
    if (end - start >= 5 && memcmp(s + end - 5, ".lock", 5) == 0) {
        pol_fault(f, "LOCK_COMPONENT", start, 0);
        (void)snprintf(f->detail, sizeof(f->detail),
                       "component %zu ends with '.lock'", comp);
        return 0;
    }
    return 1;
}

/* The byte rules: controls, forbidden characters, "..", "@{". */
static int
pol_git_bytes_ok(const char *str, size_t n, struct pol_fault *f)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i;

    for (i = 0; i < n; i++) {
        if (s[i] < 0x20 || s[i] == 0x7F) {
            pol_fault(f, "CONTROL_CHARACTER", i, s[i]);
            (void)snprintf(f->detail, sizeof(f->detail),
                           "a control character U+%04X at byte %zu",
                           (unsigned)s[i], i + 1);
            return 0;
        }
        if (pol_git_forbidden(s[i])) {
            pol_fault(f, "FORBIDDEN_CHARACTER", i, s[i]);
            (void)snprintf(f->detail, sizeof(f->detail),
                           "a forbidden character '%c' at byte %zu", s[i],
                           i + 1);
            return 0;
        }
        if (i > 0 && ((s[i - 1] == '.' && s[i] == '.') ||
                      (s[i - 1] == '@' && s[i] == '{'))) {
            pol_fault(f, s[i] == '.' ? "DOT_DOT" : "AT_BRACE", i - 1, 0);
            (void)snprintf(f->detail, sizeof(f->detail), "'%s' at byte %zu",
                           s[i] == '.' ? ".." : "@{", i);
            return 0;
        }
    }
    return 1;
}

int
pol_git_ref_valid(const char *s, size_t n, struct pol_fault *f)
{
    size_t i, start = 0, comp = 1;

    if (n > IG_POLICY_STRING_MAX)
        return pol_too_long(f);
    if (n == 1 && s[0] == '@') {
        pol_fault(f, "AT_ALONE", 0, 0);
        (void)snprintf(f->detail, sizeof(f->detail), "the ref is '@'");
        return 0;
    }
    if (!pol_git_bytes_ok(s, n, f))
        return 0;
    for (i = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        if (!pol_git_component_ok(s, start, i, comp, f))
            return 0;
        start = i + 1;
        comp++;
    }
    if (s[n - 1] == '.') {
        pol_fault(f, "TRAILING_DOT", n - 1, 0);
        (void)snprintf(f->detail, sizeof(f->detail), "the ref ends with '.'");
        return 0;
    }
    if (comp < 3) {
        pol_fault(f, "ONE_LEVEL", 0, 0);
        (void)snprintf(f->detail, sizeof(f->detail),
                       "one level only: a ref needs a '/' (refs/heads/...)");
        return 0;
    }
    return 1;
}

/* Push false/nil, code, detail for a non-string subject. */
static int
pol_not_a_string(lua_State *L, int as_nil, int with_code)
{
    if (as_nil)
        lua_pushnil(L);
    else
        lua_pushboolean(L, 0);
    if (with_code)
        lua_pushliteral(L, "NOT_A_STRING");
    lua_pushliteral(L, "not a string");
    return with_code ? 3 : 2;
}

static int
pol_push_fault(lua_State *L, const struct pol_fault *f, int as_nil)
{
    if (as_nil)
        lua_pushnil(L);
    else
        lua_pushboolean(L, 0);
    lua_pushstring(L, f->code);
    lua_pushstring(L, f->detail);
    return 3;
}

static int
pol_clean_text(lua_State *L)
{
    struct pol_fault f;
    const char *s;
    size_t n;

    if (lua_type(L, 1) != LUA_TSTRING)
        return pol_not_a_string(L, 0, 1);
    s = lua_tolstring(L, 1, &n);
    if (!pol_text_clean(s, n, &f))
        return pol_push_fault(L, &f, 0);
    lua_pushboolean(L, 1);
    return 1;
}

static int
pol_resource_canonical_lua(lua_State *L)
{
    struct pol_fault f;
    const char *s;
    size_t n;

    if (lua_type(L, 1) != LUA_TSTRING)
        return pol_not_a_string(L, 1, 1);
    s = lua_tolstring(L, 1, &n);
    if (!pol_resource_canonical(s, n, &f))
        return pol_push_fault(L, &f, 1);
    lua_settop(L, 1);
    return 1;
}

static int
pol_git_ref_valid_lua(lua_State *L)
{
    struct pol_fault f;
    const char *s;
    size_t n;

    if (lua_type(L, 1) != LUA_TSTRING)
        return pol_not_a_string(L, 0, 0);
    s = lua_tolstring(L, 1, &n);
    if (n == 0) {
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "an empty ref");
        return 2;
    }
    if (!pol_git_ref_valid(s, n, &f)) {
        lua_pushboolean(L, 0);
        lua_pushstring(L, f.detail);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg pol_text_funcs[] = {
    {"clean_text", pol_clean_text},
    {"resource_canonical", pol_resource_canonical_lua},
    {"git_ref_valid", pol_git_ref_valid_lua},
    {NULL, NULL}};

void
pol_open_text(lua_State *L, int idx)
{
    const luaL_Reg *r;

    for (r = pol_text_funcs; r->name != NULL; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, idx, r->name);
    }
}
