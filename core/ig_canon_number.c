/*
 * ig_canon_number.c - ECMAScript Number::toString for IEEE doubles, the
 * number form RFC 8785 requires.
 *
 * How it works. An integer below 2^53 in magnitude is written digit by
 * digit. Any other finite value needs the shortest decimal that reads back
 * as the same double. The C library supplies the candidates:
 * snprintf("%.*e", p - 1, d) is the correctly rounded p-digit decimal, and
 * strtod() on "<digits>e<exponent>" (no radix character, so the locale does
 * not matter) says whether it round-trips.
 *
 * When the doubles next to d are equally far away on both sides, the
 * nearest p-digit decimal is the best p-digit candidate and round-tripping
 * is monotonic in p, so a binary search over p in 1..17 finds the shortest.
 * A power of two (mantissa bits zero) has a neighbour below twice as close
 * as the one above; there the nearest decimal can fall out of range while
 * the one on the far side still reads back, so we scan p upward and try
 * both neighbours. The digits and the decimal exponent are then laid out as
 * ECMA-262 Number::toString says.
 */
#include "ig_canon.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal m * 10^x, m having exactly p digits (or fewer after trimming). */
struct dec {
    uint64_t m;
    int x;
};

/* 10^p for 0 <= p <= 19. */
static uint64_t
pow10u(int p)
{
    uint64_t r = 1;

    while (p-- > 0)
        r *= 10;
    return r;
}

/*
 * The nearest p-digit decimal to a (> 0), from snprintf. The radix
 * character is skipped whatever the locale makes it. 0 on success.
 */
static int
nearest(double a, int p, struct dec *out)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.*e", p - 1, a);
    int i, digits = 0, e = 0, neg = 0;
    uint64_t m = 0;

    if (n < 0 || (size_t)n >= sizeof(buf))
        return -1;
    for (i = 0; buf[i] != '\0' && buf[i] != 'e'; i++) {
        if (buf[i] >= '0' && buf[i] <= '9') {
            m = m * 10 + (uint64_t)(buf[i] - '0');
            digits++;
        }
    }
    if (buf[i] != 'e' || digits != p)
        return -1;
    i++;
    if (buf[i] == '-' || buf[i] == '+')
        neg = buf[i++] == '-';
    for (; buf[i] >= '0' && buf[i] <= '9' && e < 10000; i++)
        e = e * 10 + (buf[i] - '0');
    if (buf[i] != '\0')
        return -1;
    out->m = m;
    out->x = (neg ? -e : e) - (p - 1);
    return 0;
}

/* The double nearest to c, as strtod reads it. */
static double
value_of(const struct dec *c)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%" PRIu64 "e%d", c->m, c->x);

    if (n < 0 || (size_t)n >= sizeof(buf))
        return NAN;
    return strtod(buf, NULL);
}

/* Shortest round-trip decimal when a's neighbours are equally far. */
static int
shortest_symmetric(double a, struct dec *out)
{
    int lo = 1, hi = 17, mid;
    struct dec c;

    while (lo < hi) {
        mid = (lo + hi) / 2;
        if (nearest(a, mid, &c) != 0)
            return -1;
        if (value_of(&c) == a)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (nearest(a, lo, out) != 0 || value_of(out) != a)
        return -1;
    return 0;
}

/* The p-digit decimal next to c on the other side of a from c. */
static struct dec
other_side(const struct dec *c, double cv, double a, int p)
{
    struct dec o = *c;

    if (cv < a) {
        o.m++;
        if (o.m == pow10u(p)) {
            o.m = pow10u(p - 1);
            o.x++;
        }
    } else {
        o.m--;
        if (o.m < pow10u(p - 1)) {
            o.m = pow10u(p) - 1;
            o.x--;
        }
    }
    return o;
}

/* Shortest round-trip decimal for a power of two (uneven neighbours). */
static int
shortest_power_of_two(double a, struct dec *out)
{
    int p;
    struct dec c, o;
    double cv;

    for (p = 1; p <= 17; p++) {
        if (nearest(a, p, &c) != 0)
            return -1;
        cv = value_of(&c);
        if (cv == a) {
            *out = c;
            return 0;
        }
        o = other_side(&c, cv, a, p);
        if (value_of(&o) == a) {
            *out = o;
            return 0;
        }
    }
    return -1;
}

/* Write the decimal digits of m (> 0) at s; returns how many. */
static size_t
put_digits(char *s, uint64_t m)
{
    char tmp[24];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m != 0);
    for (i = 0; i < n; i++)
        s[i] = tmp[n - 1 - i];
    return n;
}

/*
 * Lay out k digits with decimal exponent n (value 0.d1d2...dk * 10^n) as
 * ECMA-262 Number::toString, steps 6 to 10. Returns the length written.
 */
static size_t
layout(char *s, const char *d, int k, int n)
{
    size_t o = 0;
    int i, e;

    if (k <= n && n <= 21) {
        memcpy(s, d, (size_t)k);
        o = (size_t)k;
        for (i = k; i < n; i++)
            s[o++] = '0';
    } else if (0 < n && n <= 21) {
        memcpy(s, d, (size_t)n);
        o = (size_t)n;
        s[o++] = '.';
        memcpy(s + o, d + n, (size_t)(k - n));
        o += (size_t)(k - n);
    } else if (-6 < n && n <= 0) {
        s[o++] = '0';
        s[o++] = '.';
        for (i = n; i < 0; i++)
            s[o++] = '0';
        memcpy(s + o, d, (size_t)k);
        o += (size_t)k;
    } else {
        s[o++] = d[0];
        if (k > 1) {
            s[o++] = '.';
            memcpy(s + o, d + 1, (size_t)(k - 1));
            o += (size_t)(k - 1);
        }
        s[o++] = 'e';
        e = n - 1;
        s[o++] = e < 0 ? '-' : '+';
        o += put_digits(s + o, (uint64_t)(e < 0 ? -e : e));
    }
    return o;
}

/*
 * Fast path for short decimals such as prices and rates: the smallest f
 * (fractional digits) with m = round(a * 10^f) and m / 10^f == a. Both m
 * (below 2^50) and 10^f (f <= 22) are exact doubles and IEEE division
 * rounds correctly, so equality means the decimal m * 10^-f reads back as
 * a; with a's neighbours equally far, the nearest decimal with f digits is
 * the best one, so the smallest such f gives the shortest digits. The bound
 * on m keeps a * 10^f within 1/8 of the exact product, so round() finds
 * the nearest m. 0 on success, -1 to fall back to the general path.
 */
static int
shortest_fraction(double a, struct dec *out)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,
                                 1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
    double m;
    int f;

    for (f = 1; f < (int)(sizeof(p10) / sizeof(p10[0])); f++) {
        m = round(a * p10[f]);
        if (m >= 1125899906842624.0) /* 2^50 */
            return -1;
        if (m / p10[f] == a) {
            out->m = (uint64_t)m;
            out->x = -f;
            return 0;
        }
    }
    return -1;
}

/* 1 when a (> 0, finite) is a normal power of two with uneven neighbours. */
static int
is_power_of_two(double a)
{
    uint64_t bits;

    memcpy(&bits, &a, sizeof(bits));
    return (bits & 0xFFFFFFFFFFFFFULL) == 0 && (bits >> 52) > 1;
}

enum ig_status
ig_canon_number(double d, char out[IG_NUMBER_STRMAX], size_t *len)
{
    char digits[24];
    double a = fabs(d);
    size_t o = 0;
    struct dec c;
    int k;

    if (isnan(d) || isinf(d)) {
        out[0] = '\0';
        if (len != NULL)
            *len = 0;
        return IG_ERR_INVALID;
    }
    if (d < 0)
        out[o++] = '-';
    if (a == 0) {
        o = 0; /* -0 is written as 0 */
        out[o++] = '0';
    } else if (a < 9007199254740992.0 && a == floor(a)) {
        o += put_digits(out + o, (uint64_t)a);
    } else {
        if (is_power_of_two(a))
            k = shortest_power_of_two(a, &c);
        else if ((k = shortest_fraction(a, &c)) != 0)
            k = shortest_symmetric(a, &c);
        IG_ASSERT(k == 0); /* %.17e always reads back */
        while (c.m % 10 == 0) {
            c.m /= 10;
            c.x++;
        }
        k = (int)put_digits(digits, c.m);
        o += layout(out + o, digits, k, c.x + k);
    }
    IG_ASSERT(o < IG_NUMBER_STRMAX);
    out[o] = '\0';
    if (len != NULL)
        *len = o;
    return IG_OK;
}
