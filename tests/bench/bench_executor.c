/*
 * bench_executor.c - execute round trips per second and latency of
 * intentgate-executor (verify + redeem at the PDP + http handler + outcome
 * report), beside calling the same upstream directly.
 *
 *   bench_executor --pdp URL --agent-token T --executor URL
 *                  --upstream-port P [--n N] [--threads 32]
 *                  [--reply-bytes B]
 *
 * It serves the upstream itself (libmicrohttpd on 127.0.0.1:P, answering
 * 201 at once: the no-op handler; with --reply-bytes a body of B bytes of
 * text, which the executor's scrubber reads through), then: 1. submits N
 * payments.refund intents to the PDP and keeps their grants (every execute
 * needs a fresh, single-use grant); 2. executes them all from `threads` threads
 * with keep-alive; 3. sends the same number of requests straight to the
 * upstream. Prints requests/s and p50/p99 of 2 and 3 and the difference,
 * and the full cycles per second (intent -> grant -> execute -> outcome,
 * each cycle's two steps taken in turn: 1 / (1/intents + 1/executes)).
 * tests/bench/bench_executor.sh starts the PDP and executor for it.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ig_buf.h"
#include "ig_canon.h"
#include "ig_json.h"

struct bench {
    const char *pdp, *token, *executor;
    char upstream[64];
    int n, threads;
    char **bodies; /* execute bodies */
    double *lat;   /* seconds per request */
    atomic_int next, failures;
    int phase; /* 1 submit, 2 execute, 3 direct */
};

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t
collect(char *p, size_t size, size_t n, void *ud)
{
    return ig_buf_add(ud, p, size * n) == IG_OK ? size * n : 0;
}

/* The upstream's answer: {"refund":"ok"}, or padded to --reply-bytes
   with text the scrubber has to read through. */
static char *reply;
static size_t reply_len;

static int
make_reply(long bytes)
{
    static const char small[] = "{\"refund\":\"ok\"}";
    static const char head[] = "{\"refund\":\"ok\",\"note\":\"";
    size_t n = bytes > (long)sizeof(head) + 2 ? (size_t)bytes : 0, i;

    if (n == 0) {
        reply_len = sizeof(small) - 1;
        reply = strdup(small);
        return reply != NULL ? 0 : -1;
    }
    if ((reply = malloc(n)) == NULL)
        return -1;
    memcpy(reply, head, sizeof(head) - 1);
    for (i = sizeof(head) - 1; i < n - 2; i++) /* words, like a real body */
        reply[i] = "the quick brown fox jumps over the lazy dog "[i % 44];
    reply[n - 2] = '"';
    reply[n - 1] = '}';
    reply_len = n;
    return 0;
}

static enum MHD_Result
upstream(void *cls, struct MHD_Connection *c, const char *url,
         const char *method, const char *version, const char *upload,
         size_t *upload_size, void **con_cls)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)upload;

    if (*con_cls == NULL) {
        *con_cls = c;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        *upload_size = 0;
        return MHD_YES;
    }
    r = MHD_create_response_from_buffer(reply_len, reply,
                                        MHD_RESPMEM_PERSISTENT);
    ret = MHD_queue_response(c, 201, r);
    MHD_destroy_response(r);
    return ret;
}

/* POST body to url; returns the status, fills out. */
static long
post(CURL *c, const char *url, const char *auth, const char *body,
     struct ig_buf *out)
{
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: "
                                                   "application/json");
    long status = 0;

    if (auth != NULL)
        h = curl_slist_append(h, auth);
    ig_buf_reset(out);
    (void)curl_easy_setopt(c, CURLOPT_URL, url);
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    (void)curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    if (curl_easy_perform(c) == CURLE_OK)
        (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    return status;
}

/* Phase 1: one intent; keep {"intent","grant"} as the execute body. */
static void
submit_one(struct bench *b, CURL *c, struct ig_buf *out, int i)
{
    char url[512], auth[512], body[512];
    json_t *v = NULL, *eb;
    struct ig_buf t;

    (void)snprintf(url, sizeof(url), "%s/v1/intents", b->pdp);
    (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", b->token);
    (void)snprintf(body, sizeof(body),
                   "{\"action\":\"payments.refund\",\"resource\":\"orders/"
                   "%d\",\"params\":{\"amount\":42,\"currency\":\"EUR\","
                   "\"order_id\":\"o-%d\"}}",
                   i, i);
    if (post(c, url, auth, body, out) != 201 ||
        ig_json_parse(out->data, out->len, &v, NULL) != IG_OK) {
        atomic_fetch_add(&b->failures, 1);
        json_decref(v);
        return;
    }
    /* "O" adds references. */
    eb = json_pack("{s:O, s:O}", "intent", json_object_get(v, "intent"),
                   "grant", json_object_get(v, "grant"));
    ig_buf_init(&t, 1 << 20);
    if (eb != NULL && ig_canon_write(eb, &t, NULL) == IG_OK)
        b->bodies[i] = ig_buf_take(&t, NULL);
    else
        atomic_fetch_add(&b->failures, 1);
    ig_buf_release(&t);
    json_decref(eb);
    json_decref(v);
}

static void *
run_thread(void *p)
{
    struct bench *b = p;
    CURL *c = curl_easy_init();
    struct ig_buf out;
    char url[512];
    int i;
    long st;
    double t0;

    ig_buf_init(&out, 1 << 20);
    (void)snprintf(url, sizeof(url), "%s%s",
                   b->phase == 2 ? b->executor : b->upstream,
                   b->phase == 2 ? "/v1/execute" : "/refunds");
    while (c != NULL && (i = atomic_fetch_add(&b->next, 1)) < b->n) {
        if (b->phase == 1) {
            submit_one(b, c, &out, i);
            continue;
        }
        if (b->bodies[i] == NULL)
            continue;
        t0 = now();
        st = post(c, url, b->phase == 3 ? "Authorization: Bearer x" : NULL,
                  b->phase == 2 ? b->bodies[i]
                                : "{\"amount\":42,\"currency\":\"EUR\","
                                  "\"order_id\":\"o-1\"}",
                  &out);
        if (st != (b->phase == 2 ? 200 : 201) &&
            atomic_fetch_add(&b->failures, 1) == 0) /* say why, once */
            (void)fprintf(stderr, "first failure: %s answered %ld: %.300s\n",
                          url, st, out.data != NULL ? out.data : "");
        b->lat[i] = now() - t0;
    }
    ig_buf_release(&out);
    curl_easy_cleanup(c);
    return NULL;
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Run a phase; print rate and percentiles; return p50 and p99, and the
   rate (per second). */
static double
phase(struct bench *b, int which, const char *name, double *p50, double *p99)
{
    pthread_t th[256];
    double t0, el;
    int i, k = 0;

    b->phase = which;
    atomic_store(&b->next, 0);
    atomic_store(&b->failures, 0);
    memset(b->lat, 0, (size_t)b->n * sizeof(double));
    t0 = now();
    for (i = 0; i < b->threads; i++)
        (void)pthread_create(&th[i], NULL, run_thread, b);
    for (i = 0; i < b->threads; i++)
        (void)pthread_join(th[i], NULL);
    el = now() - t0;
    for (i = 0; i < b->n; i++)
        if (b->lat[i] > 0)
            b->lat[k++] = b->lat[i];
    qsort(b->lat, (size_t)k, sizeof(double), cmp);
    *p50 = k ? b->lat[k / 2] * 1e3 : 0;
    *p99 = k ? b->lat[(size_t)((double)k * 0.99)] * 1e3 : 0;
    printf("%-34s %6d in %6.2f s = %8.0f/s  p50 %6.3f ms  p99 %6.3f ms  "
           "failures %d\n",
           name, which == 1 ? b->n : k, el, (which == 1 ? b->n : k) / el, *p50,
           *p99, atomic_load(&b->failures));
    return (which == 1 ? b->n : k) / el;
}

int
main(int argc, char **argv)
{
    struct bench b;
    struct MHD_Daemon *d;
    struct sockaddr_in sa;
    double e50, e99, d50, d99, x, intents, executes;
    long port = 0, reply_bytes = 0;
    int i;

    memset(&b, 0, sizeof(b));
    b.n = 20000;
    b.threads = 32;
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--pdp") == 0)
            b.pdp = argv[i + 1];
        else if (strcmp(argv[i], "--agent-token") == 0)
            b.token = argv[i + 1];
        else if (strcmp(argv[i], "--executor") == 0)
            b.executor = argv[i + 1];
        else if (strcmp(argv[i], "--upstream-port") == 0)
            port = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--n") == 0)
            b.n = (int)strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0)
            b.threads = (int)strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--reply-bytes") == 0)
            reply_bytes = strtol(argv[i + 1], NULL, 10);
    }
    if (b.pdp == NULL || b.token == NULL || b.executor == NULL || port <= 0 ||
        port > 65535 || b.n < 1 || b.threads < 1 || b.threads > 256 ||
        reply_bytes < 0 || reply_bytes > 16 * 1024 * 1024 ||
        make_reply(reply_bytes) != 0) {
        (void)fputs("usage: bench_executor --pdp URL --agent-token T "
                    "--executor URL --upstream-port P [--n N] "
                    "[--threads 1-256] [--reply-bytes 0-16777216]\n",
                    stderr);
        return 2;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((unsigned short)port);
    sa.sin_addr.s_addr = htonl(0x7f000001);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0,
                         NULL, NULL, upstream, NULL, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE,
                         (unsigned int)2, MHD_OPTION_END);
    if (d == NULL || curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        (void)fputs("bench_executor: cannot start the upstream\n", stderr);
        return 1;
    }
    (void)snprintf(b.upstream, sizeof(b.upstream), "http://127.0.0.1:%ld",
                   port);
    b.bodies = calloc((size_t)b.n, sizeof(char *));
    b.lat = calloc((size_t)b.n, sizeof(double));
    if (b.bodies == NULL || b.lat == NULL)
        return 1;
    intents = phase(&b, 1, "PDP: intents submitted (grants)", &x, &x);
    executes = phase(&b, 2, "executor: execute round trips", &e50, &e99);
    (void)phase(&b, 3, "upstream called directly", &d50, &d99);
    printf("%-34s p50 %+6.3f ms  p99 %+6.3f ms\n", "added by the executor",
           e50 - d50, e99 - d99);
    /* One cycle is an intent then its execute, one after the other. */
    printf("%-34s %8.0f/s\n", "full cycles (intent, then execute)",
           intents > 0 && executes > 0 ? 1 / (1 / intents + 1 / executes)
                                       : 0.0);
    for (i = 0; i < b.n; i++)
        free(b.bodies[i]);
    free(b.bodies);
    free(b.lat);
    MHD_stop_daemon(d);
    free(reply);
    curl_global_cleanup();
    return 0;
}
