/*
 * ig_text.c - text helpers (see ig_text.h).
 */
#include "ig_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOST_MAX 255

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
    if (colon == NULL || colon == s || (n = (size_t)(colon - s)) > HOST_MAX)
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
