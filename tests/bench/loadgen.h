/*
 * loadgen.h - what the load generator's parts share: the latency histogram,
 * the read-only run plan, the HTTP wire format, and the per-thread worker
 * and its counters. loadgen.c parses options and reports, loadgen_http.c
 * builds requests and parses responses, loadgen_run.c drives connections.
 * Not a library: a benchmark program's private header.
 */
#ifndef LOADGEN_H
#define LOADGEN_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LG_NS_PER_S 1000000000ULL
#define LG_SEQ_MARK "{{SEQ}}"
#define LG_SEQ_MARK_LEN 7
#define LG_STATUS_SLOTS 600 /* status codes 100..599; slot 0 counts others */

/*
 * Log-linear histogram of nanoseconds, HdrHistogram-like: values below
 * 2^SUB_BITS have their own bucket; above, each power of two is split into
 * 2^(SUB_BITS-1) equal buckets, so a bucket's width is under 1/128 of its
 * values (< 0.8% error). Values above 2^(MAX_MSB+1) ns (~34 s) are clamped.
 */
#define LG_HIST_SUB_BITS 8
#define LG_HIST_MAX_MSB 34
#define LG_HIST_HALF (1U << (LG_HIST_SUB_BITS - 1))
#define LG_HIST_BUCKETS                                                        \
    ((LG_HIST_MAX_MSB - LG_HIST_SUB_BITS + 3) * LG_HIST_HALF)

struct lg_hist {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t max_ns;
    uint64_t buckets[LG_HIST_BUCKETS];
};

/* Not thread-safe: each worker owns one; main merges them after the join. */
void lg_hist_add(struct lg_hist *h, uint64_t ns);
void lg_hist_merge(struct lg_hist *dst, const struct lg_hist *src);
/* Value at quantile q in [0, 1] (a bucket's midpoint); 0 when empty. */
uint64_t lg_hist_quantile(const struct lg_hist *h, double q);

/* The run, as decided by main before any thread starts; then read-only. */
struct lg_plan {
    struct sockaddr_in addr; /* always 127.0.0.0/8 */
    const char *head;        /* request line and headers, no blank line */
    size_t head_len;
    const char *body; /* may hold LG_SEQ_MARK placeholders */
    size_t body_len;
    size_t nseq;       /* placeholders in body */
    size_t req_cap;    /* bytes a fully built request can need */
    int send_length;   /* add Content-Length */
    int head_method;   /* HEAD: responses carry no body */
    int expect_status; /* 0: any 2xx counts as a success */
    unsigned conns_total;
    double rate;           /* requests/s over all connections; 0: closed loop */
    _Atomic uint64_t *seq; /* next {{SEQ}} value, shared by all threads */
    uint64_t t0;           /* run start (lg_now clock) */
    uint64_t warm_end;     /* responses count from here ... */
    uint64_t end;          /* ... to here, when every worker stops */
};

/* Response parser state; zero it (memset) before each response. */
enum lg_resp_state {
    LG_R_HEAD,
    LG_R_BODY,
    LG_R_CHUNK_SIZE,
    LG_R_CHUNK_DATA,
    LG_R_CHUNK_CRLF,
    LG_R_TRAILER,
    LG_R_UNTIL_EOF, /* no length: the body ends when the server closes */
    LG_R_DONE
};

struct lg_resp {
    enum lg_resp_state state;
    int status;
    int close;   /* the server closes after this response */
    int chunked; /* Transfer-Encoding: chunked */
    int has_length;
    uint64_t length; /* Content-Length */
    uint64_t remain; /* of the body or the current chunk */
    size_t nread;    /* bytes of this response received so far (caller's) */
};

/*
 * Consumes what it can of buf[0..*len) and moves the rest to the front,
 * updating *len. Returns 1 when the response is complete (exactly: bytes
 * beyond it are an error, we never pipeline), 0 when it needs more, -1 on a
 * protocol error or a head/line that fills all cap bytes. head_method: the
 * request was HEAD, so no body follows.
 */
int lg_resp_feed(struct lg_resp *r, char *buf, size_t *len, size_t cap,
                 int head_method);
/* Writes the next request (taking a {{SEQ}} value if the body has any) to
 * out, which holds p->req_cap bytes; returns its length. Thread-safe. */
size_t lg_request_build(const struct lg_plan *p, char *out);

/* Counters of responses and errors that completed inside the window. */
struct lg_stats {
    uint64_t ok;         /* status == expect, or 2xx without one */
    uint64_t unexpected; /* status != expect (only with one) */
    uint64_t errors;     /* connect, read, write and protocol errors */
    uint64_t reconnects; /* connections opened after the first */
    uint64_t retries;    /* requests resent after a keep-alive close */
    uint64_t in_flight;  /* requests unanswered when the run ended */
    uint64_t status[LG_STATUS_SLOTS];
    struct lg_hist hist; /* latency of every complete response */
};

struct lg_worker {
    const struct lg_plan *plan;
    unsigned first; /* global index of this worker's first connection */
    unsigned nconn;
    int failed; /* could not set up epoll: see stderr */
    pthread_t tid;
    struct lg_stats stats;
};

/* Monotonic clock in ns. */
uint64_t lg_now(void);
/* First index >= from of pat in b[0..len), or SIZE_MAX. */
size_t lg_find(const char *b, size_t from, size_t len, const char *pat,
               size_t plen);
/* Thread body: runs w's connections until plan->end; fills w->stats. */
void *lg_worker_run(void *arg);

#endif
