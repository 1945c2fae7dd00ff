/*
 * ig_text.c - text helpers (see ig_text.h).
 */
#include "ig_text.h"
#include "ig_limits.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t
ig_utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
    uint32_t c = s[0], min;
    size_t n, i;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        c &= 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        c &= 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        c &= 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

int
ig_utf8_valid(const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t i = 0, n;
    uint32_t c;

    while (i < len) {
        if ((n = ig_utf8_next(p + i, len - i, &c)) == 0)
            return 0;
        i += n;
    }
    return 1;
}

int
ig_utf8_hidden(uint32_t cp)
{
    static const uint32_t ranges[][2] = {
        {0x00, 0x1f},       {0x7f, 0x9f},       {0xad, 0xad},
        {0x34f, 0x34f},     {0x600, 0x605},     {0x61c, 0x61c},
        {0x6dd, 0x6dd},     {0x70f, 0x70f},     {0x890, 0x891},
        {0x8e2, 0x8e2},     {0x115f, 0x1160},   {0x17b4, 0x17b5},
        {0x180b, 0x180f},   {0x200b, 0x200f},   {0x2028, 0x202e},
        {0x2060, 0x206f},   {0x2800, 0x2800},   {0x3164, 0x3164},
        {0xfe00, 0xfe0f},   {0xfeff, 0xfeff},   {0xffa0, 0xffa0},
        {0xfff0, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
        {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a},
        {0xe0000, 0xe0fff},
    };
    size_t i;

    for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        if (cp >= ranges[i][0] && cp <= ranges[i][1])
            return 1;
    return 0;
}

int
ig_action_valid(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > IG_ACTION_MAX || s[0] < 'a' || s[0] > 'z')
        return 0;
    for (i = 1; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              strchr("._:-", s[i]) != NULL))
            return 0;
    return 1;
}

int
ig_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void
ig_strip_comment(char *line)
{
    char *p;

    for (p = line; *p != '\0'; p++)
        if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            return;
        }
}

void
ig_str_list_free(char **list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

char *
ig_trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

enum ig_status
ig_listen_parse(const char *s, char **host, unsigned short *port)
{
    const char *colon = strrchr(s, ':');
    char *end;
    size_t n;
    long p;

    *host = NULL;
    if (colon == NULL || colon == s ||
        (n = (size_t)(colon - s)) > IG_LISTEN_HOST_MAX)
        return IG_ERR_INVALID;
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0' || p < 0 || p > 65535)
        return IG_ERR_INVALID;
    if (n == 9 && strncmp(s, "localhost", 9) == 0)
        *host = strdup("127.0.0.1");
    else
        *host = strndup(s, n);
    if (*host == NULL)
        return IG_ERR_NOMEM;
    *port = (unsigned short)p;
    return IG_OK;
}

enum ig_status
ig_listen_set(const char *s, char **host, unsigned short *port)
{
    char *h = NULL;
    unsigned short p = 0;
    enum ig_status st = ig_listen_parse(s, &h, &p);

    if (st != IG_OK)
        return st;
    free(*host);
    *host = h;
    *port = p;
    return IG_OK;
}
