/*
 * loadgen.h - what the load generator's two halves share: the latency
 * histogram, the read-only run plan, and the per-thread worker and its
 * counters. loadgen.c parses options and reports; loadgen_run.c drives the
 * connections. Not a library: a benchmark program's private header.
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
    double rate;          /* requests/s over all connections; 0: closed loop */
    _Atomic uint64_t *seq; /* next {{SEQ}} value, shared by all threads */
    uint64_t t0;           /* run start (lg_now clock) */
    uint64_t warm_end;     /* responses count from here ... */
    uint64_t end;          /* ... to here, when every worker stops */
};

/* Counters of responses and errors that completed inside the window. */
struct lg_stats {
    uint64_t ok;         /* status == expect, or 2xx without one */
    uint64_t unexpected; /* status != expect (only with one) */
    uint64_t errors;     /* connect, read, write and protocol errors */
    uint64_t reconnects; /* connections opened after the first */
    uint64_t retries;    /* requests resent after a keep-alive close */
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
