/*
 * ig_time.c - whole-second UTC timestamps in the one RFC 3339 form
 * intentgate writes ("YYYY-MM-DDTHH:MM:SSZ"), and random UUIDv4s.
 *
 * Formatting goes through gmtime_r. Parsing is by hand and strict: exactly
 * 20 characters, every digit checked, month/day/hour/minute/second ranges
 * (days per month, Gregorian leap years, no leap second 60), then the
 * epoch seconds come from Howard Hinnant's days-from-civil formula, so no
 * time zone, locale or the non-POSIX timegm() is involved.
 */
#include "ig_time.h"

#include <sodium.h>
#include <stdio.h>
#include <time.h>

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define TIME_MIN INT64_C(-62167219200)
#define TIME_MAX INT64_C(253402300799)

int64_t
ig_time_now(void)
{
    return (int64_t)time(NULL);
}

enum ig_status
ig_time_format(int64_t t, char out[IG_TIME_STRLEN + 1])
{
    time_t tt = (time_t)t;
    struct tm tm;
    int n;

    out[0] = '\0';
    if (t < TIME_MIN || t > TIME_MAX || (int64_t)tt != t)
        return IG_ERR_INVALID;
    if (gmtime_r(&tt, &tm) == NULL)
        return IG_ERR_INVALID;
    n = snprintf(out, IG_TIME_STRLEN + 1, "%04d-%02d-%02dT%02d:%02d:%02dZ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec);
    if (n != IG_TIME_STRLEN) {
        out[0] = '\0';
        return IG_ERR_INVALID;
    }
    return IG_OK;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (m 1-12, d 1-31). */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int
days_in_month(int64_t y, int64_t m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30,
                                 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m - 1] + (m == 2 && leap);
}

/* The n decimal digits at s as a number, or -1 if one is not a digit. */
static int64_t
digits(const char *s, int n)
{
    int64_t v = 0;
    int i;

    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

enum ig_status
ig_time_parse(const char *s, size_t len, int64_t *out)
{
    int64_t y, mo, d, h, mi, sec;

    *out = 0;
    if (len != IG_TIME_STRLEN || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
        s[13] != ':' || s[16] != ':' || s[19] != 'Z')
        return IG_ERR_INVALID;
    y = digits(s, 4);
    mo = digits(s + 5, 2);
    d = digits(s + 8, 2);
    h = digits(s + 11, 2);
    mi = digits(s + 14, 2);
    sec = digits(s + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 ||
        mi > 59 || sec < 0 || sec > 59)
        return IG_ERR_INVALID;
    if (d > days_in_month(y, mo))
        return IG_ERR_INVALID;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    return IG_OK;
}

void
ig_uuid4(char out[IG_UUID_STRLEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    size_t i, o = 0;

    randombytes_buf(b, sizeof(b));
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    for (i = 0; i < sizeof(b); i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 0x0f];
    }
    out[o] = '\0';
}
