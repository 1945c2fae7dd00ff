/*
 * ig_time.c - the clocks (wall seconds and monotonic seconds), whole-second
 * UTC timestamps in the one RFC 3339 form intentgate writes
 * ("YYYY-MM-DDTHH:MM:SSZ"), and UUIDs (version 4 random, version 7 time
 * ordered).
 *
 * Formatting goes through gmtime_r. Parsing is by hand and strict: exactly
 * 20 characters, every digit checked, month/day/hour/minute/second ranges
 * (days per month, Gregorian leap years, no leap second 60), then the
 * epoch seconds come from Howard Hinnant's days-from-civil formula, so no
 * time zone, locale or the non-POSIX timegm() is involved.
 *
 * THE TEST CLOCK exists only in builds configured with -DIG_TEST_CLOCK=ON
 * (scripts/test.sh's): in others none of its code or text is compiled. If
 * IG_TEST_CLOCK_FILE names a file when the process starts, every
 * ig_time_now and ig_time_mono adds the offset that file holds: whole
 * seconds, in decimal, 0 to 100 years, never smaller than before (the
 * monotonic clock must not go back). A test moves time on by writing a
 * temporary file and renaming it over the clock file.
 *
 * Each read stats the path and reads the file again only when its inode,
 * size, mtime or ctime changed, so a request sent after the rename sees
 * the new time: there is no window in which it could see the old one.
 * Measured on the CI machine, a stat costs about 3 us, reading the file
 * each time (open, read, close) about 7 us, the bare clock 0.05 us - paid
 * by test builds only. A mutex keeps the cached offset whole across
 * threads. The file is first read by a constructor, before main, which
 * also logs the warning "test_clock.active": a process that reads no clock
 * until later (the executor reads one per grant) still says so at
 * start-up. Anything wrong with the file (gone, unreadable, not a number,
 * smaller than before) ends the process with a "test_clock.broken" line: a
 * test clock that silently stopped could let a test pass that should fail.
 *
 * Sleeps until a deadline take their end from ig_time_wait_until, which
 * cuts them to a tick (TEST_CLOCK_TICK) while the test clock is active: the
 * approval sweeper, the audit checkpoint timer and the refusal flusher
 * notice a jump within a tick. Waking each sleeper with a signal would be
 * quicker, but every sleeper would have to register with the clock.
 */
#include "ig_time.h"

#include <sodium.h>
#include <stdio.h>

#ifdef IG_TEST_CLOCK
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define TIME_MIN INT64_C(-62167219200)
#define TIME_MAX INT64_C(253402300799)

#ifdef IG_TEST_CLOCK
#define TEST_CLOCK_TICK 0.1 /* seconds: the longest deadline sleep */
static int64_t test_clock_offset(void);
static int test_clock_active(void);
#define CLOCK_OFFSET() test_clock_offset()
#else
#define CLOCK_OFFSET() INT64_C(0)
#endif

int64_t
ig_time_now(void)
{
    return (int64_t)time(NULL) + CLOCK_OFFSET();
}

int64_t
ig_time_now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return ((int64_t)ts.tv_sec + CLOCK_OFFSET()) * 1000 +
           (int64_t)ts.tv_nsec / 1000000;
}

static double
mono_real(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
ig_time_mono(void)
{
    return mono_real() + (double)CLOCK_OFFSET();
}

void
ig_time_wait_until(double due, struct timespec *out)
{
    double real = mono_real();
    double left = due - (real + (double)CLOCK_OFFSET());

    if (left < 0)
        left = 0;
    if (left > 86400.0 * 365) /* keeps tv_sec far from overflow */
        left = 86400.0 * 365;
#ifdef IG_TEST_CLOCK
    if (test_clock_active() && left > TEST_CLOCK_TICK)
        left = TEST_CLOCK_TICK;
#endif
    real += left;
    out->tv_sec = (time_t)real;
    out->tv_nsec = (long)((real - (double)out->tv_sec) * 1e9);
    if (out->tv_nsec >= 1000000000L) {
        out->tv_sec++;
        out->tv_nsec -= 1000000000L;
    }
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

/* Write the 16 bytes of b as a UUID, setting its version and variant. */
static void
uuid_text(unsigned char b[16], int version, char out[IG_UUID_STRLEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    size_t i, o = 0;

    b[6] = (unsigned char)((b[6] & 0x0f) | (version << 4));
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 9562 variant */
    for (i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 0x0f];
    }
    out[o] = '\0';
}

void
ig_uuid4(char out[IG_UUID_STRLEN + 1])
{
    unsigned char b[16];

    randombytes_buf(b, sizeof(b));
    uuid_text(b, 4, out);
}

void
ig_uuid7(char out[IG_UUID_STRLEN + 1])
{
    struct timespec ts;
    uint64_t ms;
    unsigned char b[16];
    int i;

    randombytes_buf(b, sizeof(b));
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    for (i = 5; i >= 0; i--, ms >>= 8)
        b[i] = (unsigned char)(ms & 0xff);
    uuid_text(b, 7, out);
}

#ifdef IG_TEST_CLOCK
/* ---- the test clock (see the top of the file) ---- */

#define TEST_CLOCK_MAX INT64_C(3155760000) /* 100 years of seconds */

static struct {
    pthread_once_t once;
    pthread_mutex_t mu;
    const char *path; /* the environment's; NULL: inactive */
    struct stat seen; /* of the file offset was read from */
    int64_t offset;
    atomic_int announce; /* the warning is still to be logged */
} tc = {.once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER};

/* One log line in ig_log's format, written here (ig_log reads this clock),
   for the test clock at offset. */
static void
test_clock_log(const char *level, const char *event, const char *detail,
               int64_t offset)
{
    char when[IG_TIME_STRLEN + 1];
    json_t *line;
    char *s = NULL;

    if (ig_time_format((int64_t)time(NULL) + offset, when) != IG_OK)
        when[0] = '\0';
    /* json_pack copies the strings. */
    line = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "time", when, "level",
                     level, "event", event, "file", tc.path, "detail", detail,
                     "offset", (json_int_t)offset);
    if (line != NULL)
        s = json_dumps(line, JSON_COMPACT | JSON_SORT_KEYS);
    (void)fprintf(stderr, "%s\n", s != NULL ? s : event);
    (void)fflush(stderr);
    free(s);
    json_decref(line);
}

/* Under tc.mu (or once). */
static _Noreturn void
test_clock_die(const char *why)
{
    char detail[256];

    (void)snprintf(detail, sizeof(detail), "%s%s%s", why,
                   errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : "");
    test_clock_log("error", "test_clock.broken", detail, tc.offset);
    abort();
}

/* Read the offset from the file now at tc.path; under tc.mu (or once). */
static void
test_clock_load(void)
{
    char text[32], *end;
    struct stat st;
    long long v;
    ssize_t n;
    int fd;

    errno = 0;
    fd = open(tc.path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        test_clock_die("cannot open the clock file as a regular file");
    n = read(fd, text, sizeof(text) - 1);
    (void)close(fd);
    if (n <= 0 || (size_t)n >= sizeof(text) - 1)
        test_clock_die("the clock file must hold a short decimal number");
    text[n] = '\0';
    errno = 0;
    v = strtoll(text, &end, 10);
    if (end == text || (*end != '\0' && strcmp(end, "\n") != 0) || errno != 0 ||
        v < 0 || v > TEST_CLOCK_MAX)
        test_clock_die("the clock file must hold whole seconds, "
                       "0 to 100 years");
    if (v < tc.offset) {
        errno = 0;
        test_clock_die("the test clock may not go back");
    }
    tc.offset = v;
    tc.seen = st;
}

static void
test_clock_init(void)
{
    const char *p = getenv("IG_TEST_CLOCK_FILE");

    if (p == NULL || p[0] == '\0')
        return;
    tc.path = p;
    test_clock_load();
    atomic_store(&tc.announce, 1);
}

static int
test_clock_active(void)
{
    (void)pthread_once(&tc.once, test_clock_init);
    return tc.path != NULL;
}

static int
same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
           a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static int64_t
test_clock_offset(void)
{
    struct stat st;
    int64_t off;

    if (!test_clock_active())
        return 0;
    (void)pthread_mutex_lock(&tc.mu);
    errno = 0;
    if (stat(tc.path, &st) != 0)
        test_clock_die("cannot stat the clock file");
    if (!same_file(&st, &tc.seen))
        test_clock_load();
    off = tc.offset;
    (void)pthread_mutex_unlock(&tc.mu);
    if (atomic_exchange(&tc.announce, 0))
        test_clock_log("warn", "test_clock.active",
                       "this build has a test clock and IG_TEST_CLOCK_FILE "
                       "is set: time is what the file says; never run "
                       "this in production",
                       off);
    return off;
}
/* Before main: the warning goes out at start-up even from a process that
   reads no clock until later (the executor reads one per grant). */
__attribute__((constructor)) static void
test_clock_start(void)
{
    (void)test_clock_offset();
}
#endif
