/*
 * loadgen.c - a small HTTP/1.1 load generator for benchmarking the PDP over
 * loopback, in the manner of wrk/wrk2, with nothing but libc.
 *
 *   loadgen --url http://127.0.0.1:PORT/v1/intents --connections 64
 *           --duration 10 [--rate R] [--method POST] [--header 'K: V']...
 *           [--body-file F | --body STRING] [--expect-status 201]
 *           [--warmup 1] [--threads 1] [--seq-start 1] [--json]
 *
 * Only IPv4 loopback (127.0.0.0/8, or "localhost") is accepted as a target,
 * parsed without any name lookup, so this program cannot send load anywhere
 * else. The connections are split among --threads workers (loadgen_run.c),
 * each an epoll loop over keep-alive sockets with one request in flight per
 * connection. Without --rate they run a closed loop; with it, requests are
 * scheduled at R/s overall and latency counts from the scheduled time.
 * Every {{SEQ}} in the body becomes a per-request increasing integer.
 *
 * Responses completing in the first --warmup seconds are not counted; the
 * run ends by itself after warmup + duration (duration <= 300 s). Latencies
 * go into a log-linear histogram (below); the report gives requests/s,
 * p50/p90/p99/p99.9/max, counts by status and errors, as text or one JSON
 * line. Exit 0 on success, 1 if nothing succeeded or socket errors exceeded
 * 1% of requests, 2 on a usage error (one line on stderr).
 */
#include "loadgen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#define MAX_CONNS 10000
#define MAX_THREADS 64
#define MAX_HEADERS 32
#define MAX_DURATION 300
#define MAX_WARMUP 60
#define MAX_BODY (1024 * 1024)
#define MAX_HEAD 8192
#define MAX_BUFFERS (1024UL * 1024 * 1024) /* request buffers, all conns */

struct opts {
    const char *url, *method, *body, *body_file;
    const char *headers[MAX_HEADERS];
    unsigned nheaders;
    long conns, duration, warmup, threads, expect;
    double rate;
    uint64_t seq_start;
    int json;
};

static const char usage_text[] =
    "usage: loadgen --url http://127.0.0.1:PORT/PATH [--connections N]\n"
    "         [--duration S] [--rate R] [--method M] [--header 'K: V']...\n"
    "         [--body-file F | --body STRING] [--expect-status CODE]\n"
    "         [--warmup S] [--threads T] [--seq-start N] [--json]\n"
    "Targets must be IPv4 loopback. {{SEQ}} in the body becomes a\n"
    "per-request increasing integer. Defaults: 64 connections, 10 s,\n"
    "1 s warm-up, 1 thread, closed loop, GET.\n";

static void
usage_exit(const char *what, const char *arg)
{
    fprintf(stderr, "loadgen: %s%s%s%s (try --help)\n", what, arg ? " '" : "",
            arg ? arg : "", arg ? "'" : "");
    exit(2);
}

/* ---- histogram ---------------------------------------------------------- */

static unsigned
hist_index(uint64_t v)
{
    unsigned msb, shift;

    if (v < (1ULL << LG_HIST_SUB_BITS))
        return (unsigned)v;
    if (v >> (LG_HIST_MAX_MSB + 1))
        v = (1ULL << (LG_HIST_MAX_MSB + 1)) - 1;
    for (msb = LG_HIST_SUB_BITS; v >> (msb + 1); msb++)
        ;
    shift = msb - LG_HIST_SUB_BITS + 1;
    return shift * LG_HIST_HALF + (unsigned)(v >> shift);
}

/* Midpoint of bucket i. */
static uint64_t
hist_value(unsigned i)
{
    unsigned shift;
    uint64_t mant;

    if (i < (1U << LG_HIST_SUB_BITS))
        return i;
    shift = i / LG_HIST_HALF - 1;
    mant = i % LG_HIST_HALF + LG_HIST_HALF;
    return (mant << shift) + (1ULL << shift) / 2;
}

void
lg_hist_add(struct lg_hist *h, uint64_t ns)
{
    h->buckets[hist_index(ns)]++;
    h->count++;
    h->sum_ns += ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

void
lg_hist_merge(struct lg_hist *dst, const struct lg_hist *src)
{
    unsigned i;

    for (i = 0; i < LG_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

uint64_t
lg_hist_quantile(const struct lg_hist *h, double q)
{
    uint64_t rank, seen = 0, v;
    unsigned i;

    if (h->count == 0)
        return 0;
    rank = (uint64_t)(q * (double)h->count + 0.5);
    rank = rank < 1 ? 1 : rank > h->count ? h->count : rank;
    for (i = 0; i < LG_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            v = hist_value(i);
            return v < h->max_ns ? v : h->max_ns;
        }
    }
    return h->max_ns;
}

/* ---- options ------------------------------------------------------------ */

static long
num_arg(const char *name, const char *s, long lo, long hi)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        char what[96];
        snprintf(what, sizeof what, "%s wants an integer in %ld..%ld, not",
                 name, lo, hi);
        usage_exit(what, s);
    }
    return v;
}

static void
header_arg(struct opts *o, const char *h)
{
    const char *colon = strchr(h, ':');

    if (colon == NULL || colon == h || strpbrk(h, "\r\n") != NULL)
        usage_exit("--header wants 'Name: value', not", h);
    if (strncasecmp(h, "content-length:", 15) == 0 ||
        strncasecmp(h, "transfer-encoding:", 18) == 0)
        usage_exit("loadgen sets this header itself:", h);
    if (o->nheaders == MAX_HEADERS)
        usage_exit("too many --header options", NULL);
    o->headers[o->nheaders++] = h;
}

/* Options that take a value; returns 0 if name is not one of them. */
static int
value_opt(struct opts *o, const char *name, const char *v)
{
    char *end;

    if (strcmp(name, "--url") == 0)
        o->url = v;
    else if (strcmp(name, "--connections") == 0)
        o->conns = num_arg(name, v, 1, MAX_CONNS);
    else if (strcmp(name, "--duration") == 0)
        o->duration = num_arg(name, v, 1, LONG_MAX);
    else if (strcmp(name, "--warmup") == 0)
        o->warmup = num_arg(name, v, 0, MAX_WARMUP);
    else if (strcmp(name, "--threads") == 0)
        o->threads = num_arg(name, v, 1, MAX_THREADS);
    else if (strcmp(name, "--expect-status") == 0)
        o->expect = num_arg(name, v, 100, 599);
    else if (strcmp(name, "--seq-start") == 0)
        o->seq_start = (uint64_t)num_arg(name, v, 0, LONG_MAX);
    else if (strcmp(name, "--method") == 0)
        o->method = v;
    else if (strcmp(name, "--header") == 0)
        header_arg(o, v);
    else if (strcmp(name, "--body") == 0)
        o->body = v;
    else if (strcmp(name, "--body-file") == 0)
        o->body_file = v;
    else if (strcmp(name, "--rate") == 0) {
        errno = 0;
        o->rate = strtod(v, &end);
        if (errno != 0 || end == v || *end != '\0' || !(o->rate > 0) ||
            o->rate > 1e7)
            usage_exit("--rate wants a number in (0, 1e7], not", v);
    } else
        return 0;
    return 1;
}

static void
parse_opts(struct opts *o, int argc, char **argv)
{
    int i;

    memset(o, 0, sizeof *o);
    o->method = "GET";
    o->conns = 64;
    o->duration = 10;
    o->warmup = 1;
    o->threads = 1;
    o->seq_start = 1;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (i + 1 < argc && value_opt(o, argv[i], argv[i + 1])) {
            i++;
        } else {
            usage_exit("unknown option or missing value:", argv[i]);
        }
    }
    if (o->url == NULL)
        usage_exit("--url is required", NULL);
    if (o->body && o->body_file)
        usage_exit("--body and --body-file exclude each other", NULL);
    if (o->threads > o->conns)
        usage_exit("--threads must not exceed --connections", NULL);
    if (strspn(o->method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(o->method) ||
        strlen(o->method) == 0 || strlen(o->method) > 16)
        usage_exit("--method wants an upper-case token, not", o->method);
    if (o->duration > MAX_DURATION) {
        fprintf(stderr, "loadgen: --duration capped at %d s\n", MAX_DURATION);
        o->duration = MAX_DURATION;
    }
}

/* ---- target and request ------------------------------------------------- */

/*
 * http://HOST[:PORT][/PATH]: HOST is a dotted IPv4 address in 127.0.0.0/8
 * or "localhost"; nothing is ever resolved. Sets addr, hostport and path.
 */
static void
parse_url(const char *url, struct sockaddr_in *addr, char *hostport,
          size_t hpsize, const char **path)
{
    char host[64], port[8] = "80";
    const char *p, *h = url + 7;
    size_t hl, pl = 0;
    long portnum;

    if (strncmp(url, "http://", 7) != 0)
        usage_exit("--url must start with http://, not", url);
    if (*h == '[')
        usage_exit("refusing IPv6 target: only IPv4 loopback is allowed:", url);
    hl = strcspn(h, ":/?#");
    p = h + hl;
    if (*p == ':') {
        pl = strcspn(p + 1, "/?#");
        if (pl == 0 || pl >= sizeof port)
            usage_exit("bad port in --url", url);
        memcpy(port, p + 1, pl);
        port[pl] = '\0';
        p += pl + 1;
    }
    *path = *p == '\0' ? "/" : p;
    if (**path != '/' || strpbrk(*path, " \t\r\n#") != NULL)
        usage_exit("bad path in --url", url);
    if (hl == 0 || hl >= sizeof host)
        usage_exit("bad host in --url", url);
    memcpy(host, h, hl);
    host[hl] = '\0';
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    if (strcmp(host, "localhost") == 0)
        addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &addr->sin_addr) != 1 ||
             (ntohl(addr->sin_addr.s_addr) >> 24) != 127)
        usage_exit("refusing target: only IPv4 loopback 127.0.0.0/8 is "
                   "allowed, not",
                   host);
    portnum = num_arg("port", port, 1, 65535);
    addr->sin_port = htons((uint16_t)portnum);
    if (snprintf(hostport, hpsize, "%s:%ld", host, portnum) >= (int)hpsize)
        usage_exit("bad host in --url", url);
}

static char *
read_body_file(const char *name, size_t *len)
{
    FILE *f = fopen(name, "rb");
    char *buf;

    if (f == NULL) {
        fprintf(stderr, "loadgen: --body-file '%s': %s\n", name,
                strerror(errno));
        exit(2);
    }
    if ((buf = malloc(MAX_BODY + 1)) == NULL)
        usage_exit("out of memory for --body-file", NULL);
    *len = fread(buf, 1, MAX_BODY + 1, f);
    if (ferror(f) || *len > MAX_BODY) {
        free(buf);
        usage_exit("--body-file unreadable or over 1 MiB:", name);
    }
    fclose(f);
    return buf;
}

static void
append(char *buf, size_t *off, const char *s1, const char *s2)
{
    int n = snprintf(buf + *off, MAX_HEAD - *off, "%s%s", s1, s2);

    if (n < 0 || (size_t)n >= MAX_HEAD - *off)
        usage_exit("request head over 8 KiB", NULL);
    *off += (size_t)n;
}

/* Fills plan's target, head, body and buffer size from the options.
 * Returns the body read from --body-file, for the caller to free. */
static char *
build_plan(struct lg_plan *p, const struct opts *o, char *head)
{
    char *file_body = NULL;
    char hostport[80];
    const char *path;
    size_t off = 0, at, pos;
    int has_host = 0;
    unsigned i;

    parse_url(o->url, &p->addr, hostport, sizeof hostport, &path);
    append(head, &off, o->method, " ");
    append(head, &off, path, " HTTP/1.1\r\n");
    for (i = 0; i < o->nheaders; i++) {
        has_host |= strncasecmp(o->headers[i], "host:", 5) == 0;
        append(head, &off, o->headers[i], "\r\n");
    }
    if (!has_host) {
        append(head, &off, "Host: ", hostport);
        append(head, &off, "\r\n", "");
    }
    p->head = head;
    p->head_len = off;
    if (o->body_file)
        p->body = file_body = read_body_file(o->body_file, &p->body_len);
    else
        p->body = o->body ? o->body : "";
    if (o->body)
        p->body_len = strlen(o->body);
    for (pos = 0; (at = lg_find(p->body, pos, p->body_len, LG_SEQ_MARK,
                                LG_SEQ_MARK_LEN)) != SIZE_MAX;
         pos = at + LG_SEQ_MARK_LEN)
        p->nseq++;
    p->send_length = p->body_len > 0 || strcmp(o->method, "POST") == 0 ||
                     strcmp(o->method, "PUT") == 0 ||
                     strcmp(o->method, "PATCH") == 0;
    p->head_method = strcmp(o->method, "HEAD") == 0;
    p->req_cap = p->head_len + 48 + 2 + p->body_len + p->nseq * 24;
    if (p->req_cap > MAX_BUFFERS / (size_t)o->conns)
        usage_exit("body size times connections is over 1 GiB", NULL);
    p->expect_status = (int)o->expect;
    p->conns_total = (unsigned)o->conns;
    p->rate = o->rate;
    return file_body;
}

/* ---- run and report ----------------------------------------------------- */

static void
raise_fd_limit(long conns)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)conns + 64;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
        return;
    rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need)
        usage_exit("--connections exceeds the open-file limit", NULL);
}

/* Starts the workers, waits for them, merges their stats into *total. */
static int
run(const struct lg_plan *p, const struct opts *o, struct lg_stats *total)
{
    unsigned n = (unsigned)o->threads, per = p->conns_total / n, i, s;
    struct lg_worker *w = calloc(n, sizeof *w);
    int failed = 0;

    if (w == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        w[i].plan = p;
        w[i].first =
            i * per + (i < p->conns_total % n ? i : p->conns_total % n);
        w[i].nconn = per + (i < p->conns_total % n ? 1U : 0U);
        if (pthread_create(&w[i].tid, NULL, lg_worker_run, &w[i]) != 0) {
            fprintf(stderr, "loadgen: cannot start thread\n");
            exit(1);
        }
    }
    memset(total, 0, sizeof *total);
    for (i = 0; i < n; i++) {
        pthread_join(w[i].tid, NULL);
        failed |= w[i].failed;
        total->ok += w[i].stats.ok;
        total->unexpected += w[i].stats.unexpected;
        total->errors += w[i].stats.errors;
        total->reconnects += w[i].stats.reconnects;
        total->retries += w[i].stats.retries;
        total->in_flight += w[i].stats.in_flight;
        for (s = 0; s < LG_STATUS_SLOTS; s++)
            total->status[s] += w[i].stats.status[s];
        lg_hist_merge(&total->hist, &w[i].stats.hist);
    }
    free(w);
    return failed ? -1 : 0;
}

static void
json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void
report_json(const struct opts *o, const struct lg_stats *t, double rps,
            const double *ms)
{
    unsigned s;
    const char *sep = "";

    printf("{\"url\":");
    json_string(o->url);
    printf(",\"connections\":%ld,\"threads\":%ld,\"duration_s\":%ld,"
           "\"warmup_s\":%ld,\"rate\":%.3f,\"requests\":%" PRIu64
           ",\"rps\":%.1f,\"latency_ms\":{\"mean\":%.3f,\"p50\":%.3f,"
           "\"p90\":%.3f,\"p99\":%.3f,\"p99_9\":%.3f,\"max\":%.3f},"
           "\"status\":{",
           o->conns, o->threads, o->duration, o->warmup, o->rate, t->hist.count,
           rps, ms[0], ms[1], ms[2], ms[3], ms[4], ms[5]);
    for (s = 0; s < LG_STATUS_SLOTS; s++) {
        if (t->status[s] == 0)
            continue;
        if (s == 0)
            printf("%s\"other\":%" PRIu64, sep, t->status[s]);
        else
            printf("%s\"%u\":%" PRIu64, sep, s, t->status[s]);
        sep = ",";
    }
    printf("},\"ok\":%" PRIu64 ",\"unexpected\":%" PRIu64 ",\"errors\":%" PRIu64
           ",\"reconnects\":%" PRIu64 ",\"retries\":%" PRIu64
           ",\"in_flight_at_end\":%" PRIu64 "}\n",
           t->ok, t->unexpected, t->errors, t->reconnects, t->retries,
           t->in_flight);
}

static void
report_text(const struct opts *o, const struct lg_stats *t, double rps,
            const double *ms)
{
    unsigned s;

    printf("loadgen %s: %ld connections, %ld thread(s), %ld s after %ld s "
           "warm-up, ",
           o->url, o->conns, o->threads, o->duration, o->warmup);
    if (o->rate > 0)
        printf("rate %.1f/s\n", o->rate);
    else
        printf("closed loop\n");
    printf("  requests    %" PRIu64 " (%.1f/s), %" PRIu64 " ok\n",
           t->hist.count, rps, t->ok);
    printf("  latency ms  mean %.3f  p50 %.3f  p90 %.3f  p99 %.3f  "
           "p99.9 %.3f  max %.3f\n",
           ms[0], ms[1], ms[2], ms[3], ms[4], ms[5]);
    printf("  status     ");
    for (s = 1; s < LG_STATUS_SLOTS; s++)
        if (t->status[s])
            printf(" %u: %" PRIu64, s, t->status[s]);
    if (t->status[0])
        printf(" other: %" PRIu64, t->status[0]);
    if (t->hist.count == 0)
        printf(" none");
    printf("\n");
    if (o->expect)
        printf("  unexpected  %" PRIu64 " (status != %ld)\n", t->unexpected,
               o->expect);
    printf("  errors      %" PRIu64 " socket; %" PRIu64 " reconnects, %" PRIu64
           " retries, %" PRIu64 " in flight at the end\n",
           t->errors, t->reconnects, t->retries, t->in_flight);
}

int
main(int argc, char **argv)
{
    static struct lg_stats total;
    static char head[MAX_HEAD];
    char *file_body;
    int rc = 0;
    _Atomic uint64_t seq;
    struct lg_plan plan;
    struct opts o;
    double ms[6], rps;

    parse_opts(&o, argc, argv);
    memset(&plan, 0, sizeof plan);
    file_body = build_plan(&plan, &o, head);
    raise_fd_limit(o.conns);
    atomic_init(&seq, o.seq_start);
    plan.seq = &seq;
    signal(SIGPIPE, SIG_IGN);
    plan.t0 = lg_now();
    plan.warm_end = plan.t0 + (uint64_t)o.warmup * LG_NS_PER_S;
    plan.end = plan.warm_end + (uint64_t)o.duration * LG_NS_PER_S;
    if (run(&plan, &o, &total) < 0) {
        rc = 1;
        goto out;
    }
    rps = (double)total.hist.count / (double)o.duration;
    ms[0] = total.hist.count
                ? (double)total.hist.sum_ns / (double)total.hist.count / 1e6
                : 0;
    ms[1] = (double)lg_hist_quantile(&total.hist, 0.50) / 1e6;
    ms[2] = (double)lg_hist_quantile(&total.hist, 0.90) / 1e6;
    ms[3] = (double)lg_hist_quantile(&total.hist, 0.99) / 1e6;
    ms[4] = (double)lg_hist_quantile(&total.hist, 0.999) / 1e6;
    ms[5] = (double)total.hist.max_ns / 1e6;
    if (o.json)
        report_json(&o, &total, rps, ms);
    else
        report_text(&o, &total, rps, ms);
    if (total.ok == 0 || total.errors * 100 > total.hist.count + total.errors)
        rc = 1;
out:
    free(file_body);
    return rc;
}
